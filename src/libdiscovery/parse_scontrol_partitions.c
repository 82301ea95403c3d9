/*
 * parse_scontrol_partitions.c - `scontrol show partition -o`: one line of
 * "Key=Value" words per partition (scontrol(1) show partition), read for
 * the probe (probe.h parse_scontrol_partitions); and one value of
 * `scontrol show config` ("Key = value" lines; slurm_config_value),
 * and `printenv SBATCH_PARTITION` (slurm_partition_env_value), read by
 * preflight. Moved out of
 * probe_slurm.c so that the probe only runs commands and this parser file
 * splits their output (scripts/check-sched-lines.sh); counts go through
 * libutil/parse.h.
 */
#include "libdiscovery/probe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/error.h"
#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static char *kv_dup(const char *line, const char *key)
{
    const char *p = line;
    size_t kl = strlen(key);
    while ((p = strstr(p, key))) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1, *e = v;
            while (*e && *e != ' ' && *e != '\n')
                e++;
            return xstrndup(v, (size_t)(e - v));
        }
        p += kl;
    }
    return NULL;
}

/* A count value, or -1 (absent, UNLIMITED, not a count: parse.h). */
static long long kv_int(const char *line, const char *key)
{
    char *v = kv_dup(line, key);
    int64_t r;
    long long out = v && parse_count_str(v, &r) == 0 ? (long long)r : -1;
    free(v);
    return out;
}

int parse_scontrol_partitions(const char *buf, size_t len,
                              struct partition_info **out, size_t *n,
                              exa_error_t *err)
{
    struct partition_info *v = NULL;
    size_t nr = 0, alloc = 0, i = 0;
    while (i < len) {
        size_t j = i;
        char *line, *name;
        while (j < len && buf[j] != '\n')
            j++;
        line = xstrndup(buf + i, j - i);
        i = j + 1;
        name = kv_dup(line, "PartitionName");
        if (name) {
            struct partition_info *p;
            char *def = kv_dup(line, "Default");
            ALLOC_GROW(v, nr + 1, alloc);
            p = &v[nr++];
            p->name = name;
            p->state = kv_dup(line, "State");
            p->max_time = kv_dup(line, "MaxTime");
            p->max_nodes = kv_int(line, "MaxNodes");
            p->total_nodes = kv_int(line, "TotalNodes");
            p->total_cpus = kv_int(line, "TotalCPUs");
            p->is_default = def && !strcmp(def, "YES");
            free(def);
        }
        free(line);
    }
    if (!nr && len && !memchr(buf, '=', len)) {
        free(v);
        return exa_err(err, EXA_EPARSE,
                       "scontrol show partition printed no partitions");
    }
    *out = v;
    *n = nr;
    return 0;
}

char *slurm_config_value(const char *buf, size_t len, const char *key)
{
    size_t kl = strlen(key), i = 0;
    if (!kl)
        return NULL;
    while (i < len) {
        const char *s = buf + i, *nl = memchr(s, '\n', len - i);
        size_t l = nl ? (size_t)(nl - s) : len - i, k = kl;
        i += l + 1;
        if (l <= kl || memcmp(s, key, kl) || (s[k] != ' ' && s[k] != '='))
            continue;
        while (k < l && s[k] == ' ')
            k++;
        if (k == l || s[k] != '=')
            continue;
        k++;
        while (k < l && (s[k] == ' ' || s[k] == '\t'))
            k++;
        while (l > k &&
               (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
            l--;
        if (memchr(s + k, '\0', l - k))
            return NULL;
        return xstrndup(s + k, l - k);
    }
    return NULL;
}

char *slurm_partition_env_value(const char *buf, size_t len)
{
    struct strbuf v = STRBUF_INIT;
    const char *line = buf, *end = buf + len;
    size_t n;
    /* the last line that holds more than blanks */
    while (end > buf && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' ||
                         end[-1] == '\t'))
        end--;
    for (const char *p = buf; p < end; p++)
        if (*p == '\n')
            line = p + 1;
    n = (size_t)(end - line);
    if (memchr(line, '\0', n))
        return NULL;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && line[j] != ',')
            j++;
        if (j > i) {
            if (v.len)
                strbuf_addch(&v, ',');
            strbuf_add(&v, line + i, j - i);
        }
        i = j + 1;
    }
    return v.len ? strbuf_detach(&v, NULL) : NULL;
}
