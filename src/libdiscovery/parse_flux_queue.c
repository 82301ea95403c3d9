/*
 * parse_flux_queue.c - `flux queue list -n -o FLUX_QUEUE_LIST_FORMAT`
 * (flux-queue(1) list; the fields are attributes of flux-core's
 * QueueInfo, flux-queue.py in flux-core), read for the probe (probe.h
 * parse_flux_queue_list): a Flux queue is a set of nodes, as a Slurm
 * partition (flux-config-queues(5)), so each becomes a partition_info.
 * Checked against flux-core 0.88 captures (99p to 99s in
 * tests/fixtures/flux-real).
 */
#include "libdiscovery/probe.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libutil/duration.h"
#include "libutil/error.h"
#include "libutil/parse.h"
#include "libutil/xalloc.h"

#define NFIELDS 8
#define FS '\x1f'

int flux_queue_name_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == 0x7f || c == '*')
            return 0;
    }
    return 1;
}

/* submission (enabled|disabled) x scheduling (started|stopped) as
 * Slurm's partition states (slurm.conf(5) State): UP takes and runs jobs,
 * DOWN takes but does not start them, DRAIN runs but takes none,
 * INACTIVE neither. NULL for a word flux does not print. */
static const char *state_of(const char *sub, size_t sl, const char *sch,
                            size_t cl)
{
    int en = sl == 7 && !memcmp(sub, "enabled", 7);
    int dis = sl == 8 && !memcmp(sub, "disabled", 8);
    int st = cl == 7 && !memcmp(sch, "started", 7);
    int sp = cl == 7 && !memcmp(sch, "stopped", 7);
    if (!(en || dis) || !(st || sp))
        return NULL;
    return en ? (st ? "UP" : "DOWN") : (st ? "DRAIN" : "INACTIVE");
}

/* A count cell ("4"), or -1 for "inf" or anything else. */
static long long count_of(const char *s, size_t n)
{
    char buf[32];
    int64_t v;
    if (!n || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return parse_count_str(buf, &v) == 0 ? (long long)v : -1;
}

/* The time limit cell: "inf" (none) or seconds ("3600.0"), as Slurm
 * prints MaxTime ("UNLIMITED", "01:00:00"); 0 is no limit too (a queue's
 * policy.limits.duration = "0", flux-config-policy(5); flux-core's
 * limit-duration.c DURATION_UNLIMITED). NULL for anything else. */
static char *max_time_of(const char *s, size_t n)
{
    char buf[64], *end;
    double d;
    if (n == 3 && !memcmp(s, "inf", 3))
        return xstrdup("UNLIMITED");
    if (!n || n >= sizeof(buf) || s[0] < '0' || s[0] > '9')
        return NULL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    d = strtod(buf, &end);
    if (*end || !isfinite(d) || d < 0 || d > 1e10)
        return NULL;
    if (d == 0)
        return xstrdup("UNLIMITED");
    slurm_duration_format((long long)ceil(d), buf, sizeof(buf));
    return xstrdup(buf);
}

int parse_flux_queue_list(const char *buf, size_t len,
                          struct partition_info **out, size_t *n,
                          exa_error_t *err)
{
    struct partition_info *v = NULL;
    size_t nr = 0, alloc = 0, i = 0, rows = 0;
    *out = NULL;
    *n = 0;
    while (i < len) {
        const char *s = buf + i, *nl = memchr(s, '\n', len - i);
        size_t l = nl ? (size_t)(nl - s) : len - i;
        const char *f[NFIELDS];
        size_t fl[NFIELDS], k = 0, name_len;
        struct partition_info *p;
        const char *state;
        i += l + 1;
        if (!l)
            continue;
        rows++;
        f[0] = s;
        for (size_t j = 0; j < l && k < NFIELDS; j++)
            if (s[j] == FS) {
                fl[k] = (size_t)(s + j - f[k]);
                if (++k < NFIELDS)
                    f[k] = s + j + 1;
            }
        if (k != NFIELDS - 1) /* not this format's row */
            goto bad;
        fl[k] = (size_t)(s + l - f[k]);
        name_len = fl[0];
        if (!name_len) /* no queues configured: the anonymous one */
            continue;
        state = state_of(f[1], fl[1], f[2], fl[2]);
        if (f[0][name_len - 1] == '*')
            name_len--;
        if (!name_len || !flux_queue_name_ok(f[0], name_len) || !state)
            goto bad;
        ALLOC_GROW(v, nr + 1, alloc);
        p = &v[nr++];
        memset(p, 0, sizeof(*p));
        p->name = xstrndup(f[0], name_len);
        p->is_default = name_len < fl[0];
        p->state = xstrdup(state);
        p->max_time = max_time_of(f[3], fl[3]);
        p->max_nodes = count_of(f[4], fl[4]);
        p->total_nodes = count_of(f[5], fl[5]);
        p->total_cpus = count_of(f[6], fl[6]);
    }
    *out = v;
    *n = nr;
    return 0;
bad:
    partition_infos_free(v, nr);
    return exa_err(err, EXA_EPARSE,
                   "flux queue list: row %zu is not the %d fields asked "
                   "(queue, submission, scheduling, time limit, max nodes, "
                   "nodes, cores, GPUs)",
                   rows, NFIELDS);
}
