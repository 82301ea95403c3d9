/*
 * hostlist.c - expand and compress Slurm hostlist expressions.
 *
 * Expansion is done in two passes per top-level expression: first the
 * expression is parsed into literal pieces and bracket groups (each a list
 * of numeric ranges) and the product of the group sizes is checked
 * against the cap, then the names are generated odometer-style. Checking
 * the size before generating anything keeps "n[0-999999999]" from eating
 * memory, which matters because the input comes from scheduler output.
 */
#include "libhostlist/hostlist.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/arena.h"
#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

struct hl_range {
    unsigned long long lo, hi;
    int width;
};

struct hl_piece {
    const char *text; /* literal text (tlen bytes of the
                       * expression), or NULL for a group */
    size_t tlen;
    /* group ranges: while parsing, NULL for a group of one range (in
     * one, the usual "[1-4]"), else malloc'ed; once the pieces are all
     * parsed (and the piece array no longer moves), &one */
    struct hl_range *ranges;
    struct hl_range one;
    size_t nranges, alloc;
    unsigned long long count; /* hosts in the group */
};

/* Free n pieces p and their ranges; p itself unless it is on_stack. */
static void pieces_free(struct hl_piece *p, size_t n,
                        const struct hl_piece *on_stack)
{
    for (size_t i = 0; i < n; i++)
        if (p[i].ranges != &p[i].one)
            free(p[i].ranges);
    if (p != on_stack)
        free(p);
}

static int parse_uint(const char *s, size_t len, unsigned long long *v)
{
    uint64_t x;
    /* at most 18 digits (libutil/parse.h checks the digits) */
    if (len > 18 || parse_u64_span(s, len, &x) < 0)
        return -1;
    *v = x;
    return 0;
}

/* Parse the inside of one [...] (s, len) into piece; -1 with err. */
static int parse_group(const char *s, size_t len, struct hl_piece *pc,
                       exa_error_t *err)
{
    size_t i = 0;
    if (!len)
        return exa_err(err, EXA_EPARSE, "empty range '[]'");
    while (i <= len) {
        size_t j = i, dash = (size_t)-1;
        struct hl_range r;
        while (j < len && s[j] != ',') {
            if (s[j] == '-' && dash == (size_t)-1)
                dash = j;
            j++;
        }
        if (j == i)
            return exa_err(err, EXA_EPARSE, "empty range in '[%.*s]'", (int)len,
                           s);
        if (dash == (size_t)-1) {
            if (parse_uint(s + i, j - i, &r.lo) < 0)
                return exa_err(err, EXA_EPARSE, "non-numeric range '%.*s'",
                               (int)(j - i), s + i);
            r.hi = r.lo;
        } else if (parse_uint(s + i, dash - i, &r.lo) < 0 ||
                   parse_uint(s + dash + 1, j - dash - 1, &r.hi) < 0) {
            return exa_err(err, EXA_EPARSE, "non-numeric range '%.*s'",
                           (int)(j - i), s + i);
        }
        if (r.lo > r.hi)
            return exa_err(err, EXA_EPARSE,
                           "range low bound greater than high bound in '%.*s'",
                           (int)(j - i), s + i);
        r.width = (int)((dash == (size_t)-1 ? j : dash) - i);
        if (!pc->nranges) {
            pc->one = r; /* no malloc for a group of one range */
            pc->nranges = 1;
        } else {
            if (!pc->ranges) {
                pc->ranges = xmalloc(8 * sizeof(*pc->ranges));
                pc->alloc = 8;
                pc->ranges[0] = pc->one;
            }
            ALLOC_GROW(pc->ranges, pc->nranges + 1, pc->alloc);
            pc->ranges[pc->nranges++] = r;
        }
        pc->count += r.hi - r.lo + 1;
        if (pc->count > (1ULL << 40))
            return exa_err(err, EXA_EPARSE, "hostlist range too large");
        i = j + 1;
    }
    return 0;
}

/* v in decimal, zero-padded to width digits (printf's "%0*llu" for a
 * width >= 0, without a printf per host name), written at o (room for
 * max(width, 20) bytes); returns the end. */
static char *put_padded(char *o, unsigned long long v, int width)
{
    char d[24];
    size_t k = sizeof(d);
    do {
        d[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int z = (int)(sizeof(d) - k); z < width; z++)
        *o++ = '0';
    memcpy(o, d + k, sizeof(d) - k);
    return o + (sizeof(d) - k);
}

/* Where the names go: pushed on sv, or (sv NULL) copied into a with
 * their pointers collected in v (v_s for the first 16, then malloc'ed
 * until the end). */
struct hl_out {
    struct strvec *sv;
    struct arena *a;
    const char **v;
    size_t nr, alloc;
    const char *v_s[16];
};

static void out_push(struct hl_out *o, const char *name, size_t n)
{
    if (o->sv) {
        strvec_push(o->sv, name);
        return;
    }
    if (o->nr + 2 > o->alloc && o->v == o->v_s) {
        const char **h = xmalloc(2 * o->alloc * sizeof(*h));
        memcpy(h, o->v_s, o->nr * sizeof(*h));
        o->v = h;
        o->alloc *= 2;
    }
    ALLOC_GROW(o->v, o->nr + 2, o->alloc);
    o->v[o->nr++] = arena_strndup(o->a, name, n);
}

/* Expand one top-level expression (no top-level commas) into out. */
static int expand_one(const char *s, size_t len, struct hl_out *out,
                      size_t *total, size_t cap, exa_error_t *err)
{
    /* the pieces: on the stack for up to 8 (most expressions have 2 or 3) */
    struct hl_piece pc_s[8], *pc = pc_s;
    size_t npc = 0, alloc = 8, i = 0;
    unsigned long long product = 1;
    /* current range index and value per piece; the name being built:
     * on the stack for the usual few pieces and short names */
    size_t idx_s[16], *idx = idx_s, need = 1;
    unsigned long long val_s[16], *val = val_s;
    char name_s[512], *name = name_s;
    int rc = -1;

    while (i < len) {
        if (npc + 1 > alloc && pc == pc_s) {
            /* moved as they are: no piece points into itself yet */
            struct hl_piece *h = xmalloc(2 * alloc * sizeof(*h));
            memcpy(h, pc_s, npc * sizeof(*h));
            pc = h;
            alloc *= 2;
        }
        ALLOC_GROW(pc, npc + 1, alloc);
        memset(&pc[npc], 0, sizeof(pc[npc]));
        if (s[i] == '[') {
            size_t j = i + 1;
            while (j < len && s[j] != ']' && s[j] != '[')
                j++;
            if (j >= len || s[j] != ']') {
                npc++;
                exa_err(err, EXA_EPARSE, "unbalanced brackets in '%.*s'",
                        (int)len, s);
                goto out;
            }
            npc++;
            if (parse_group(s + i + 1, j - i - 1, &pc[npc - 1], err) < 0)
                goto out;
            product *= pc[npc - 1].count;
            if (product > cap) {
                exa_err(err, EXA_EPARSE,
                        "hostlist '%.*s' expands to more than %zu hosts",
                        (int)len, s, cap);
                goto out;
            }
            i = j + 1;
        } else if (s[i] == ']') {
            npc++;
            exa_err(err, EXA_EPARSE, "unbalanced brackets in '%.*s'", (int)len,
                    s);
            goto out;
        } else {
            size_t j = i;
            while (j < len && s[j] != '[' && s[j] != ']')
                j++;
            pc[npc].text = s + i;
            pc[npc].tlen = j - i;
            npc++;
            i = j;
        }
    }
    for (size_t k = 0; k < npc; k++)
        if (!pc[k].text && !pc[k].ranges)
            pc[k].ranges = &pc[k].one; /* pc no longer moves */
    if (*total + product > cap) {
        exa_err(err, EXA_EPARSE, "hostlist expands to more than %zu hosts",
                cap);
        goto out;
    }
    if (npc > 16) {
        idx = xcalloc(npc, sizeof(*idx));
        val = xcalloc(npc, sizeof(*val));
    }
    for (size_t k = 0; k < npc; k++) {
        idx[k] = 0;
        if (pc[k].text) {
            need += pc[k].tlen;
            continue;
        }
        val[k] = pc[k].ranges[0].lo;
        /* the widest number of the group: 20 digits, or its width */
        {
            size_t w = 20;
            for (size_t r = 0; r < pc[k].nranges; r++)
                if ((size_t)pc[k].ranges[r].width > w)
                    w = (size_t)pc[k].ranges[r].width;
            need += w;
        }
    }
    if (need > sizeof(name_s))
        name = xmalloc(need);
    for (;;) {
        ssize_t k;
        char *o = name;
        for (size_t m = 0; m < npc; m++) {
            if (pc[m].text) {
                memcpy(o, pc[m].text, pc[m].tlen);
                o += pc[m].tlen;
            } else {
                o = put_padded(o, val[m], pc[m].ranges[idx[m]].width);
            }
        }
        *o = '\0';
        out_push(out, name, (size_t)(o - name));
        (*total)++;
        /* odometer: the last group turns fastest */
        for (k = (ssize_t)npc - 1; k >= 0; k--) {
            struct hl_piece *p = &pc[k];
            if (p->text)
                continue;
            if (val[k] < p->ranges[idx[k]].hi) {
                val[k]++;
                break;
            }
            if (idx[k] + 1 < p->nranges) {
                idx[k]++;
                val[k] = p->ranges[idx[k]].lo;
                break;
            }
            idx[k] = 0;
            val[k] = p->ranges[0].lo;
        }
        if (k < 0)
            break;
    }
    rc = 0;
out:
    if (idx != idx_s) {
        free(idx);
        free(val);
    }
    if (name != name_s)
        free(name);
    pieces_free(pc, npc, pc_s);
    return rc;
}

/* hostlist_expand into o: the count, or -1 with err (what o collected
 * is then the caller's to drop). */
static long expand_into(const char *expr, struct hl_out *o, size_t max_hosts,
                        exa_error_t *err)
{
    size_t total = 0, i = 0, len;
    const char *s = expr ? expr : "";

    if (!max_hosts)
        max_hosts = HOSTLIST_MAX_HOSTS;
    while (*s && isspace((unsigned char)*s))
        s++;
    len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    while (i < len) {
        size_t j = i;
        int depth = 0;
        while (j < len &&
               (depth || (s[j] != ',' && !isspace((unsigned char)s[j])))) {
            if (s[j] == '[')
                depth++;
            else if (s[j] == ']' && depth)
                depth--;
            j++;
        }
        if (j > i && !memchr(s + i, '[', j - i) && !memchr(s + i, ']', j - i)) {
            /* a plain name (most -N rows, sacct step lines): itself, as
             * expand_one would give it, without its piece tables */
            char buf[256], *name = j - i < sizeof(buf) ? buf : NULL;
            if (total + 1 > max_hosts) {
                exa_err(err, EXA_EPARSE,
                        "hostlist expands to more than %zu hosts", max_hosts);
                return -1;
            }
            if (name) {
                memcpy(buf, s + i, j - i);
                buf[j - i] = '\0';
            } else {
                name = xstrndup(s + i, j - i);
            }
            out_push(o, name, j - i);
            if (name != buf)
                free(name);
            total++;
        } else if (j > i &&
                   expand_one(s + i, j - i, o, &total, max_hosts, err) < 0) {
            return -1;
        }
        i = j + 1;
    }
    return (long)total;
}

long hostlist_expand(const char *expr, struct strvec *out, size_t max_hosts,
                     exa_error_t *err)
{
    struct strvec tmp = STRVEC_INIT;
    /* out is unchanged on error: an empty one is filled directly (and
     * emptied again on error), else through tmp */
    struct hl_out o = {out->nr ? &tmp : out, NULL, NULL, 0, 0, {NULL}};
    long n = expand_into(expr, &o, max_hosts, err);

    if (n < 0) {
        strvec_clear(o.sv);
        return -1;
    }
    if (o.sv == &tmp) {
        for (size_t k = 0; k < tmp.nr; k++)
            strvec_push(out, tmp.v[k]);
        strvec_clear(&tmp);
    }
    return n;
}

/* plain_byte's answers, one load a byte (GNU range designators): 0x21
 * to 0x7e but ',' (0x2c), '[' (0x5b) and ']' (0x5d) */
static const unsigned char plain_bytes[256] = {
    [0x21 ... 0x2b] = 1, [0x2d ... 0x5a] = 1, [0x5c] = 1, [0x5e ... 0x7e] = 1};

/* A byte of a name's literal text in the fast path: printable ASCII
 * other than a bracket or a comma (never a blank, whatever the locale). */
static inline int plain_byte(unsigned char c)
{
    return plain_bytes[c];
}

/*
 * The usual node list of a job, "prefix[lo-hi]suffix" or "prefix[n]"
 * (one group of one range, no blanks, no top-level comma), expanded
 * straight into a: what expand_into gives for it, without its piece
 * tables and odometer (which cost more than a thousand instructions a
 * two-node list). Returns the count, or -1 when expr is not of that
 * form or is one expand_into refuses (it then decides, and words the
 * error).
 */
static long expand_simple(const char *expr, struct arena *a,
                          const char ***names, size_t max_hosts)
{
    const unsigned char *s = (const unsigned char *)expr;
    const unsigned char *lo_s, *hi_s, *suf;
    size_t plen, lo_n, hi_n = 0, slen = 0, at, nl;
    unsigned long long lo = 0, hi, count, v;
    unsigned dg;
    char buf[256];
    const char **out;

    if (!s)
        return -1;
    for (plen = 0; plain_byte(s[plen]); plen++)
        ;
    if (!s[plen] && plen) {
        /* one plain name (a step's node) */
        out = arena_alloc_raw(a, 2 * sizeof(*out));
        out[0] = arena_strndup(a, expr, plen);
        out[1] = NULL;
        *names = out;
        return 1;
    }
    if (s[plen] != '[')
        return -1;
    lo_s = s + plen + 1;
    for (lo_n = 0; (dg = (unsigned)lo_s[lo_n] - '0') < 10; lo_n++)
        lo = lo * 10 + dg;
    hi_s = lo_s + lo_n;
    hi = lo;
    if (*hi_s == '-') {
        hi_s++;
        hi = 0;
        for (hi_n = 0; (dg = (unsigned)hi_s[hi_n] - '0') < 10; hi_n++)
            hi = hi * 10 + dg;
        if (!hi_n)
            return -1;
        hi_s += hi_n;
    }
    /* parse_uint's bounds: 1 to 18 digits (no overflow above) */
    if (!lo_n || lo_n > 18 || hi_n > 18 || *hi_s != ']' || lo > hi)
        return -1;
    suf = hi_s + 1;
    while (plain_byte(suf[slen]))
        slen++;
    if (suf[slen])
        return -1;
    if (!max_hosts)
        max_hosts = HOSTLIST_MAX_HOSTS;
    count = hi - lo + 1;
    /* the name: the prefix, at most 20 digits, the suffix */
    if (count > max_hosts || plen + 20 + slen >= sizeof(buf))
        return -1;
    out = arena_alloc_raw(a, ((size_t)count + 1) * sizeof(*out));
    out[count] = NULL;
    arena_copy(buf, expr, plen);
    at = plen;
    /* lo padded to its width is its digits as printed */
    arena_copy(buf + at, (const char *)lo_s, lo_n);
    nl = at + lo_n;
    for (v = lo;; v++) {
        size_t k = nl;
        if (slen)
            arena_copy(buf + nl, (const char *)suf, slen);
        out[v - lo] = arena_strndup(a, buf, nl + slen);
        if (v == hi)
            break;
        /* the next number: one more, in place (the digits only grow
         * when they were all nines: then written anew) */
        while (k > at && buf[k - 1] == '9')
            buf[--k] = '0';
        if (k > at)
            buf[k - 1]++;
        else
            nl = (size_t)(put_padded(buf + at, v + 1, (int)lo_n) - buf);
    }
    *names = out;
    return (long)count;
}

long hostlist_expand_arena(const char *expr, struct arena *a,
                           const char ***names, size_t max_hosts,
                           exa_error_t *err)
{
    struct hl_out o;
    long n;
    const char **v;

    n = expand_simple(expr, a, names, max_hosts);
    if (n >= 0)
        return n;
    memset(&o, 0, sizeof(o));
    o.a = a;
    o.alloc = 16;
    o.v = o.v_s;
    n = expand_into(expr, &o, max_hosts, err);
    if (n < 0) {
        if (o.v != o.v_s)
            free(o.v);
        return -1;
    }
    v = arena_alloc(a, ((size_t)n + 1) * sizeof(*v));
    if (n)
        memcpy(v, o.v, (size_t)n * sizeof(*v));
    v[n] = NULL;
    if (o.v != o.v_s)
        free(o.v);
    *names = v;
    return n;
}

/* Split name into prefix length and numeric suffix; 0 if no digits. */
static int split_num(const char *h, size_t *plen, unsigned long long *num,
                     int *width)
{
    size_t len = strlen(h), k = len;
    while (k > 0 && isdigit((unsigned char)h[k - 1]))
        k--;
    if (k == len || len - k > 18)
        return 0;
    *plen = k;
    *width = (int)(len - k);
    parse_uint(h + k, len - k, num);
    return 1;
}

char *hostlist_compress(const char *const *hosts, size_t n)
{
    struct strbuf sb = STRBUF_INIT;
    size_t i = 0;
    while (i < n) {
        size_t plen, plen2, j;
        unsigned long long num, num2;
        int width, width2, nterms = 0;
        struct strbuf grp = STRBUF_INIT;
        if (sb.len)
            strbuf_addch(&sb, ',');
        if (!split_num(hosts[i], &plen, &num, &width)) {
            strbuf_addstr(&sb, hosts[i++]);
            continue;
        }
        j = i;
        while (j < n) {
            unsigned long long lo;
            if (j > i && (!split_num(hosts[j], &plen2, &num2, &width2) ||
                          plen2 != plen || width2 != width ||
                          strncmp(hosts[j], hosts[i], plen)))
                break;
            split_num(hosts[j], &plen2, &lo, &width2);
            num2 = lo;
            j++;
            while (j < n && split_num(hosts[j], &plen2, &num, &width2) &&
                   plen2 == plen && width2 == width &&
                   !strncmp(hosts[j], hosts[i], plen) && num == num2 + 1) {
                num2 = num;
                j++;
            }
            if (nterms++)
                strbuf_addch(&grp, ',');
            if (num2 == lo)
                strbuf_addf(&grp, "%0*llu", width, lo);
            else
                strbuf_addf(&grp, "%0*llu-%0*llu", width, lo, width, num2);
        }
        strbuf_add(&sb, hosts[i], plen);
        if (j - i == 1)
            strbuf_addbuf(&sb, &grp);
        else
            strbuf_addf(&sb, "[%s]", grp.buf);
        strbuf_release(&grp);
        i = j;
    }
    return strbuf_detach(&sb, NULL);
}

int hostlist_node_ok(const char *s)
{
    size_t n = 0;
    if (!s || !isalnum((unsigned char)s[0]) || strstr(s, ".."))
        return 0;
    for (; s[n]; n++)
        if (n >= 128 || !(isalnum((unsigned char)s[n]) || s[n] == '.' ||
                          s[n] == '_' || s[n] == '-'))
            return 0;
    return 1;
}
