/*
 * jobid.c - job id grammars (see jobid.h). Hand-written recognisers, one
 * per scheduler, so an id with a leading '-', a comma, a blank or a shell
 * metacharacter is refused before any command line is built.
 */
#include "libsched/jobid.h"

#include <string.h>

/* Advance *p over 1..10 decimal digits; 0 when there were none. */
static int digits(const char **p)
{
    const char *s = *p;
    int n = 0;
    while (*s >= '0' && *s <= '9' && n <= 10) {
        s++;
        n++;
    }
    if (n == 0 || n > 10)
        return 0;
    *p = s;
    return 1;
}

/* M or M-M */
static int range(const char **p)
{
    if (!digits(p))
        return 0;
    if (**p == '-') {
        (*p)++;
        return digits(p);
    }
    return 1;
}

static int slurm_ok(const char *s)
{
    if (!digits(&s))
        return 0;
    if (!*s)
        return 1;
    if (*s == '+') {
        s++;
        return digits(&s) && !*s;
    }
    if (*s++ != '_')
        return 0;
    if (*s != '[')
        return digits(&s) && !*s;
    s++;
    if (!range(&s))
        return 0;
    while (*s == ',') {
        s++;
        if (!range(&s))
            return 0;
    }
    if (*s == '%') {
        s++;
        if (!digits(&s))
            return 0;
    }
    return s[0] == ']' && !s[1];
}

static int is_b58(unsigned char c)
{
    return (c >= '1' && c <= '9') || (c >= 'A' && c <= 'H') ||
           (c >= 'J' && c <= 'N') || (c >= 'P' && c <= 'Z') ||
           (c >= 'a' && c <= 'k') || (c >= 'm' && c <= 'z');
}

static int flux_ok(const char *s)
{
    const char *p = s;
    size_t n = 0;
    if (!strncmp(p, "\xc6\x92", 2)) /* U+0192 LATIN SMALL LETTER F WITH HOOK */
        p += 2;
    else if (*p == 'f')
        p++;
    else
        return 0; /* decimal ids: flux_decimal_ok() */
    while (*p && is_b58((unsigned char)*p)) {
        p++;
        n++;
    }
    return n >= 1 && n <= 11 && !*p; /* 64 bits are at most 11 base58 digits */
}

/* Flux decimal ids are 64-bit: up to 20 digits. */
static int flux_decimal_ok(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n >= 1 && n <= 20 && !s[n];
}

static int mock_ok(const char *s)
{
    if (strncmp(s, "mock-", 5))
        return 0;
    s += 5;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

int sched_job_id_check(const char *kind, const char *id, exa_error_t *err)
{
    int ok;
    if (!id || !*id || strlen(id) > SCHED_JOB_ID_MAX)
        ok = 0;
    else if (!kind)
        ok = slurm_ok(id) || flux_ok(id) || flux_decimal_ok(id) || mock_ok(id);
    else if (!strcmp(kind, "slurm"))
        ok = slurm_ok(id);
    else if (!strcmp(kind, "flux"))
        ok = flux_ok(id) || flux_decimal_ok(id);
    else if (!strcmp(kind, "mock"))
        ok = mock_ok(id);
    else
        return exa_err(err, EXA_EUSAGE, "unknown scheduler '%s'", kind);
    if (ok)
        return 0;
    return exa_err(err, EXA_EUSAGE, "invalid %s%sjob id '%.120s' (expected %s)",
                   kind ? kind : "", kind ? " " : "", id ? id : "",
                   !kind                    ? "a scheduler's job id"
                   : !strcmp(kind, "slurm") ? "123, 123_4, 123_[1-5%2] or 93+0"
                   : !strcmp(kind, "flux")  ? "an F58 id like ƒ2TR77Ao1 or a "
                                              "decimal id"
                                            : "mock-<run id>");
}
