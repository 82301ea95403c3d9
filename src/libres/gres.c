/*
 * gres.c - GPU counts from GRES and TRES strings (gres.h).
 *
 * Both are comma lists, but GRES may hold commas inside parentheses
 * ("gpu:l4:4(S:1,3,5,7)") so it is split with a depth counter, never with
 * a plain split. Non-GPU resources (shard, mps, mig, ssd, tmp:844G) are
 * recognized as entries but never counted. Counts are read with
 * libutil/parse.h and summed with count_add, so a string claiming 2^62
 * GPUs twice is an unknown count, not a negative one.
 */
#include "libres/gres.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static void add_type(struct gres_info *out, const char *t, size_t n)
{
    struct strbuf sb = STRBUF_INIT;
    const char *p = out->types;

    if (!n)
        return; /* "gpu::4": no type named */

    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !memcmp(p, t, n))
            return;
        p += len + (c ? 1 : 0);
    }
    if (out->types) {
        strbuf_addstr(&sb, out->types);
        strbuf_addch(&sb, ',');
    }
    strbuf_add(&sb, t, n);
    free(out->types);
    out->types = strbuf_detach(&sb, NULL);
}

/* Blanks around e[0..*n) trimmed and a leading "gres/" or "gres:"
 * dropped, in place. */
static void entry_trim(const char **e, size_t *n)
{
    while (*n && isspace((unsigned char)**e)) {
        ++*e;
        --*n;
    }
    while (*n && isspace((unsigned char)(*e)[*n - 1]))
        --*n;
    if (*n >= 5 && (!strncmp(*e, "gres/", 5) || !strncmp(*e, "gres:", 5))) {
        *e += 5;
        *n -= 5;
    }
}

/* e[0..n) split on ':' into at most 8 fields f[k] of fl[k] bytes (the
 * rest, past the eighth, is not read); their count. */
static size_t entry_split(const char *e, size_t n, const char *f[8],
                          size_t fl[8])
{
    size_t nf = 0, i = 0;
    while (i <= n && nf < 8) {
        size_t j = i;
        while (j < n && e[j] != ':')
            j++;
        f[nf] = e + i;
        fl[nf++] = j - i;
        i = j + 1;
    }
    return nf;
}

/* Where the entry of s[0..len) that starts at i ends: the next ',' outside
 * parentheses ("gpu:l4:4(S:1,3,5,7)" is one entry), or len. */
static size_t entry_end(const char *s, size_t len, size_t i)
{
    int depth = 0;
    while (i < len && (depth || s[i] != ',')) {
        if (s[i] == '(')
            depth++;
        else if (s[i] == ')' && depth)
            depth--;
        i++;
    }
    return i;
}

static void one_entry(const char *e, size_t n, struct gres_info *out)
{
    const char *f[8];
    size_t fl[8], nf;
    int64_t count;

    while (n && isspace((unsigned char)e[n - 1]))
        n--;
    /* drop the trailing "(...)" group only: "gpu:(null):2(IDX:0-1)" */
    if (n && e[n - 1] == ')') {
        size_t k = n - 1;
        int depth = 0;
        for (;;) {
            if (e[k] == ')')
                depth++;
            else if (e[k] == '(' && --depth == 0)
                break;
            if (!k)
                break;
            k--;
        }
        if (!depth)
            n = k;
    } else {
        /* a column cut inside the group: "gpu:a100:4(S:0-" */
        const char *open = NULL;
        for (size_t k = 0; k < n; k++)
            if (e[k] == '(')
                open = e + k;
            else if (e[k] == ')')
                open = NULL;
        if (open && open > e && isdigit((unsigned char)open[-1]))
            n = (size_t)(open - e);
    }
    entry_trim(&e, &n);
    if (!n)
        return;
    nf = entry_split(e, n, f, fl);
    if (nf < 2 || parse_count_span(f[nf - 1], fl[nf - 1], &count) < 0)
        return;
    out->entries++;
    if (fl[0] != 3 || strncmp(f[0], "gpu", 3))
        return;
    if (out->gpus >= 0) {
        int64_t sum = out->gpus;
        out->gpus = count_add(&sum, count) < 0 ? -1 : (long long)sum;
    }
    if (nf >= 3 && !(fl[1] == 10 && !strncmp(f[1], "no_consume", 10)) &&
        !(fl[1] == 6 && !strncmp(f[1], "(null)", 6)))
        add_type(out, f[1], fl[1]);
}

void gres_parse(const char *s, struct gres_info *out)
{
    size_t i = 0, len;

    memset(out, 0, sizeof(*out));
    if (!s)
        return;
    len = strlen(s);
    while (i < len) {
        size_t j = entry_end(s, len, i);
        one_entry(s + i, j - i, out);
        i = j + 1;
    }
}

/* The decimal number at s[0..n) below 64 (at most two digits), or -1. */
static int idx_num(const char *s, size_t n)
{
    if (!n || n > 2 || !isdigit((unsigned char)s[0]) ||
        (n == 2 && !isdigit((unsigned char)s[1])))
        return -1;
    return n == 1 ? s[0] - '0' : (s[0] - '0') * 10 + (s[1] - '0');
}

/* One GresUsed entry e[0..n) into *mask (gres_used_gpu_mask): 1 when
 * it says what it holds, 0 when not; *gpu_seen set for a gpu entry. */
static int idx_entry(const char *e, size_t n, unsigned long long *mask,
                     int *gpu_seen)
{
    const char *grp = NULL, *f[8];
    size_t gl = 0, fl[8], nf;
    int64_t count;
    int set = 0;
    entry_trim(&e, &n);
    /* the trailing "(...)" group (a type may be "(null)": the last '(') */
    if (n && e[n - 1] == ')') {
        const char *open = memrchr(e, '(', n);
        if (!open)
            return 0;
        grp = open + 1;
        gl = (size_t)(e + n - 1 - grp);
        n = (size_t)(open - e);
    } else if (n) {
        const char *o = memrchr(e, '(', n), *c = memrchr(e, ')', n);
        if (o && (!c || c < o))
            return 0; /* a column cut inside the group */
    }
    if (!n)
        return 1; /* nothing named */
    nf = entry_split(e, n, f, fl);
    if (nf < 2 || parse_count_span(f[nf - 1], fl[nf - 1], &count) < 0)
        return 0;
    if ((fl[0] == 5 && !strncmp(f[0], "shard", 5)) ||
        (fl[0] == 3 && !strncmp(f[0], "mps", 3)))
        return count == 0;
    if (fl[0] != 3 || strncmp(f[0], "gpu", 3))
        return 1; /* another resource: not a GPU */
    *gpu_seen = 1;
    for (size_t k = 1; k + 1 < nf; k++)
        if (fl[k] == 10 && !strncmp(f[k], "no_consume", 10))
            return 0;
    /* no IDX list: an old Slurm, or no_consume GPUs, which Slurm prints
     * "gpu:0" / "gpu:TYPE:0" whatever holds them (the flag is in Gres
     * only) */
    if (!grp || gl < 4 || strncmp(grp, "IDX:", 4))
        return 0;
    grp += 4;
    gl -= 4;
    /* Slurm writes the list into 64 bytes (bit_fmt): 63 bytes since
     * 22.05, 62 before (it wrote "N," and dropped the last byte), so a
     * list that long may have been cut inside its last index */
    if (gl >= 62)
        return 0;
    if (gl == 3 && !strncmp(grp, "N/A", 3))
        return count == 0;
    for (size_t k = 0; k < gl;) {
        size_t j = k, d;
        int a, b;
        while (j < gl && grp[j] != ',')
            j++;
        d = k;
        while (d < j && grp[d] != '-')
            d++;
        a = idx_num(grp + k, d - k);
        b = d < j ? idx_num(grp + d + 1, j - d - 1) : a;
        if (a < 0 || b < a || b > 63)
            return 0;
        for (int x = a; x <= b; x++) {
            if (*mask & (1ULL << x))
                return 0; /* an index twice */
            *mask |= 1ULL << x;
            set++;
        }
        k = j + 1;
        if (j + 1 == gl)
            return 0; /* a trailing ',' */
    }
    return set == count;
}

int gres_used_gpu_mask(const char *s, unsigned long long *mask)
{
    size_t i = 0, len;
    int gpu_seen = 0;
    *mask = 0;
    if (!s || !*s)
        return 0;
    len = strlen(s);
    if (s[len - 1] == ',')
        return 0; /* a column cut after an entry: more followed */
    while (i < len) {
        size_t j = entry_end(s, len, i);
        if (!idx_entry(s + i, j - i, mask, &gpu_seen)) {
            *mask = 0;
            return 0;
        }
        i = j + 1;
    }
    if (!gpu_seen)
        *mask = 0;
    return gpu_seen;
}

void gres_info_release(struct gres_info *out)
{
    if (!out)
        return;
    free(out->types);
    memset(out, 0, sizeof(*out));
}

static int key_is(const char *k, size_t kl, const char *name)
{
    return kl == strlen(name) && !memcmp(k, name, kl);
}

/* tres_parse; all 0: only the GPU count is wanted (cpu, node and mem,
 * which never make a string invalid, are not parsed). */
static int tres_walk(const char *s, struct tres_info *out, int all)
{
    struct tres_info t;
    int64_t untyped = -1, typed = 0;
    size_t i = 0, len;

    memset(out, 0, sizeof(*out));
    memset(&t, 0, sizeof(t));
    if (!s)
        return 0;
    while (*s == ' ')
        s++;
    len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (!len || (len == 3 && !strncmp(s, "N/A", 3)) ||
        (len == 6 && !strncmp(s, "(null)", 6)))
        return 0;
    if (s[len - 1] == '+')
        return 0;
    while (i < len) {
        size_t j = i, kl, vl;
        const char *eq, *v;
        int64_t n;
        while (j < len && s[j] != ',')
            j++;
        eq = memchr(s + i, '=', j - i);
        if (!eq)
            return 0;
        kl = (size_t)(eq - (s + i));
        v = eq + 1;
        vl = (size_t)(s + j - v);
        if (!vl)
            return 0; /* "node=": the column was cut */
        if (key_is(s + i, kl, "gres/gpu")) {
            if (parse_count_span(v, vl, &n) < 0)
                return 0;
            untyped = n;
        } else if (kl > 9 && !strncmp(s + i, "gres/gpu:", 9)) {
            if (parse_count_span(v, vl, &n) < 0 || count_add(&typed, n) < 0)
                return 0;
        } else if (!all) {
            /* cpu, node, mem: no effect on the GPU count */
        } else if (key_is(s + i, kl, "cpu")) {
            if (parse_count_span(v, vl, &n) == 0) {
                t.has_cpus = 1;
                t.cpus = n;
            }
        } else if (key_is(s + i, kl, "node")) {
            if (parse_count_span(v, vl, &n) == 0) {
                t.has_nodes = 1;
                t.nodes = n;
            }
        } else if (key_is(s + i, kl, "mem")) {
            const char *p = v;
            uint64_t b;
            if (parse_size(&p, v + vl, (uint64_t)1 << 20, &b) == 0 &&
                p == v + vl) {
                t.has_mem = 1;
                t.mem_bytes = b;
            }
        }
        i = j + 1;
    }
    t.has_gpus = 1;
    t.gpus = untyped >= 0 ? untyped : typed;
    *out = t;
    return 1;
}

int tres_parse(const char *s, struct tres_info *out)
{
    return tres_walk(s, out, 1);
}

int tres_gpus(const char *s, long long *gpus)
{
    struct tres_info t;

    if (!tres_walk(s, &t, 0))
        return 0;
    *gpus = t.gpus;
    return 1;
}
