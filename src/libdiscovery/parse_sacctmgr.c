/*
 * parse_sacctmgr.c - sacctmgr's association rows (parse_sacctmgr.h),
 * split here rather than in preflight.c so that only parser files split
 * scheduler output (scripts/check-sched-lines.sh).
 */
#include "libdiscovery/parse_sacctmgr.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

static char *trimmed(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    return xstrndup(s, n);
}

void sacctmgr_assoc_parse(const char *buf, size_t len,
                          struct sacctmgr_assoc **out, size_t *n)
{
    struct sacctmgr_assoc *v = NULL;
    size_t nr = 0, alloc = 0;
    const char *p = buf, *end = buf ? buf + len : NULL;

    while (p && p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        const char *le = e ? e : end, *bar = memchr(p, '|', (size_t)(le - p));
        char *acct = trimmed(p, (size_t)((bar ? bar : le) - p));
        char *qos = bar ? trimmed(bar + 1, (size_t)(le - bar - 1)) : NULL;
        if (*acct || (qos && *qos)) {
            struct sacctmgr_assoc *a;
            ALLOC_GROW(v, nr + 1, alloc);
            a = &v[nr++];
            a->account = acct;
            strvec_init(&a->qos);
            if (qos && *qos)
                strvec_split(&a->qos, qos, ',');
            acct = NULL;
        }
        free(acct);
        free(qos);
        p = e ? e + 1 : end;
    }
    *out = v;
    *n = nr;
}

void sacctmgr_assocs_free(struct sacctmgr_assoc *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].account);
        strvec_clear(&v[i].qos);
    }
    free(v);
}
