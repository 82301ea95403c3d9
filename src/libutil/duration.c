/*
 * duration.c - Slurm and Flux duration parsing and formatting.
 *
 * Cursor parsers over digits and separators, no sscanf, so that every
 * malformed token ("1:2:3:4", "5-", "-3", "1.2.3s") is refused rather
 * than half-read. Slurm's printed forms and its --time input forms are
 * different grammars (a bare "20" is minutes only on input), hence two
 * entry points.
 */
#include "libutil/duration.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libutil/parse.h"
#include "libutil/strbuf.h"

/* Read a run of decimal digits at *p into *v; 0 or -1 when none/overflow. */
static int read_uint(const char **p, long long *v)
{
    const char *s = *p;
    long long x = 0;
    int over = 0;
    /* a field past 10^12 is no duration (nor one past INT64_MAX): once
     * past it the digits are only skipped, so nothing overflows */
    if (!(*s >= '0' && *s <= '9'))
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (x > 1000000000000LL)
            over = 1;
        else
            x = x * 10 + (*s - '0');
    }
    if (over || x > 1000000000000LL)
        return -1;
    *v = x;
    *p = s;
    return 0;
}

/* Copy s without surrounding blanks into buf; -1 if it does not fit. */
static int trimmed(const char *s, char *buf, size_t n)
{
    size_t len;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' ||
                   s[len - 1] == '\n' || s[len - 1] == '\r'))
        len--;
    if (len >= n)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return 0;
}

/* 1 for the blanks trimmed() drops */
static int is_trim_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The forms squeue and sacct print for nearly every job, [D-]H:M[:S] and
 * M:S with plain digit fields (at most 12 digits each, so nothing below
 * can overflow) and blanks around them: their seconds in one pass, 1.
 * 0 for anything else, fractions, blank words and every invalid value
 * included: slurm_duration_parse's general reading then decides.
 */
static int duration_plain(const char *q, double *secs)
{
    long long f[3], days = 0;
    int nf = 0, dash = 0;
    while (is_trim_blank(*q))
        q++;
    for (;;) {
        long long x = 0;
        int nd = 0;
        unsigned d0 = (unsigned)(unsigned char)q[0] - '0';
        unsigned d1 = d0 < 10 ? (unsigned)(unsigned char)q[1] - '0' : 10;
        /* a field of two digits (every field after the first, as
         * printed): no loop */
        if (d1 < 10 && (unsigned)(unsigned char)q[2] - '0' >= 10) {
            x = d0 * 10 + d1;
            q += 2;
            nd = 2;
        }
        for (unsigned dg; (dg = (unsigned)(unsigned char)*q - '0') < 10; q++) {
            if (++nd > 12)
                return 0;
            x = x * 10 + dg;
        }
        if (!nd)
            return 0;
        if (*q == '-' && !dash && !nf) {
            days = x;
            dash = 1;
            q++;
            continue;
        }
        f[nf++] = x;
        if (*q == ':' && nf < 3) {
            q++;
            continue;
        }
        break;
    }
    while (is_trim_blank(*q))
        q++;
    if (*q)
        return 0;
    if (dash) {
        long long m = nf > 1 ? f[1] : 0, sec = nf > 2 ? f[2] : 0;
        if (m > 59 || sec > 59)
            return 0;
        *secs = (double)(days * 86400 + f[0] * 3600 + m * 60 + sec);
        return 1;
    }
    if (nf == 1 || f[1] > 59 || (nf == 3 && f[2] > 59))
        return 0;
    *secs = nf == 2 ? (double)(f[0] * 60 + f[1])
                    : (double)(f[0] * 3600 + f[1] * 60 + f[2]);
    return 1;
}

/* slurm_duration_parse past its plain forms (kept out of line, so that
 * the plain path does not pay this one's frame). */
static __attribute__((noinline)) int duration_general(const char *s,
                                                      double *secs)
{
    static const struct {
        const char *w;
        size_t n;
    } none[] = {{"UNLIMITED", 9}, {"INVALID", 7}, {"Partition_Limit", 15},
                {"N/A", 3},       {"NONE", 4},    {"(null)", 6}};
    const char *p, *end;
    size_t len;
    long long f[3], days = 0;
    int nf = 0, dash;
    double frac = 0;

    /* read in place between the blanks trimmed() would drop (what follows
     * end is blanks then the NUL, which stops every digit run as the
     * copy's NUL did), with the copy's 63-byte limit */
    while (is_trim_blank(*s))
        s++;
    len = strlen(s);
    while (len && is_trim_blank(s[len - 1]))
        len--;
    if (len >= 64)
        return -1;
    if (!len)
        return 0;
    end = s + len;
    /* no blank word starts with a digit: most values skip the list */
    if (!isdigit((unsigned char)s[0]))
        for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
            if (len == none[i].n && !strncasecmp(s, none[i].w, len))
                return 0;
    p = s;
    dash = memchr(s, '-', len) != NULL;
    if (dash) {
        if (read_uint(&p, &days) < 0 || *p != '-')
            return -1;
        p++;
    }
    for (;;) {
        if (nf == 3 || read_uint(&p, &f[nf]) < 0)
            return -1;
        nf++;
        if (*p == ':') {
            p++;
            continue;
        }
        break;
    }
    if (*p == '.') {
        const char *q = ++p;
        double scale = 0.1;
        if (!isdigit((unsigned char)*q))
            return -1;
        while (isdigit((unsigned char)*q)) {
            frac += (*q - '0') * scale;
            scale /= 10;
            q++;
        }
        p = q;
    }
    if (p != end)
        return -1;
    if (dash) {
        /* D-H, D-H:M, D-H:M:S */
        long long h = f[0], m = nf > 1 ? f[1] : 0, sec = nf > 2 ? f[2] : 0;
        if (nf > 1 && m > 59)
            return -1;
        if (nf > 2 && sec > 59)
            return -1;
        *secs = (double)(days * 86400 + h * 3600 + m * 60 + sec) + frac;
        return 1;
    }
    if (nf == 1)
        return -1; /* a bare number is not a printed duration */
    if (nf == 2) {
        if (f[1] > 59)
            return -1;
        *secs = (double)(f[0] * 60 + f[1]) + frac;
        return 1;
    }
    if (f[1] > 59 || f[2] > 59)
        return -1;
    *secs = (double)(f[0] * 3600 + f[1] * 60 + f[2]) + frac;
    return 1;
}

int slurm_duration_parse_unfixed(const char *s, double *secs)
{
    if (!s)
        return 0;
    if (duration_plain(s, secs))
        return 1;
    return duration_general(s, secs);
}

int slurm_time_arg_parse(const char *s, long long *secs)
{
    char buf[64];
    const char *p;
    long long f[3], days = 0;
    int nf = 0, has_days = 0;

    if (!s || trimmed(s, buf, sizeof(buf)) < 0 || !buf[0])
        return -1;
    if (!strcasecmp(buf, "UNLIMITED") || !strcasecmp(buf, "infinite")) {
        *secs = -1;
        return 0;
    }
    p = buf;
    if (strchr(buf, '-')) {
        if (read_uint(&p, &days) < 0 || *p != '-')
            return -1;
        p++;
        has_days = 1;
    }
    for (;;) {
        if (nf == 3 || read_uint(&p, &f[nf]) < 0)
            return -1;
        nf++;
        if (*p == ':') {
            p++;
            continue;
        }
        break;
    }
    if (*p)
        return -1;
    if (has_days) {
        long long h = f[0], m = nf > 1 ? f[1] : 0, sec = nf > 2 ? f[2] : 0;
        *secs = days * 86400 + h * 3600 + m * 60 + sec;
    } else if (nf == 1) {
        *secs = f[0] * 60;
    } else if (nf == 2) {
        *secs = f[0] * 60 + f[1];
    } else {
        *secs = f[0] * 3600 + f[1] * 60 + f[2];
    }
    return 0;
}

int fsd_parse(const char *s, double *secs)
{
    char buf[64];
    double v, mult = 1;
    size_t len;

    if (!s || trimmed(s, buf, sizeof(buf)) < 0 || !buf[0])
        return -1;
    if (!strcasecmp(buf, "inf") || !strcasecmp(buf, "infinity")) {
        *secs = INFINITY;
        return 0;
    }
    len = strlen(buf);
    switch (buf[len - 1]) {
    case 's':
        mult = 1;
        buf[--len] = '\0';
        break;
    case 'm':
        mult = 60;
        buf[--len] = '\0';
        break;
    case 'h':
        mult = 3600;
        buf[--len] = '\0';
        break;
    case 'd':
        mult = 86400;
        buf[--len] = '\0';
        break;
    default:
        break;
    }
    if (!len || !(isdigit((unsigned char)buf[0]) || buf[0] == '.'))
        return -1;
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)buf[i]) && buf[i] != '.')
            return -1;
    if (parse_real_str(buf, &v) < 0 || v < 0)
        return -1;
    *secs = v * mult;
    return 0;
}

void fsd_format(double secs, char *buf, size_t n)
{
    double v;
    char unit;
    char tmp[64];
    if (!isfinite(secs) || secs < 0) {
        xsnprintf(buf, n, "inf");
        return;
    }
    if (secs < 60) {
        v = secs;
        unit = 's';
    } else if (secs < 3600) {
        v = secs / 60;
        unit = 'm';
    } else if (secs < 86400) {
        v = secs / 3600;
        unit = 'h';
    } else {
        v = secs / 86400;
        unit = 'd';
    }
    xsnprintf(tmp, sizeof(tmp), "%.4g", v);
    if (strchr(tmp, 'e'))
        xsnprintf(tmp, sizeof(tmp), "%.0f", v);
    xsnprintf(buf, n, "%s%c", tmp, unit);
}

void slurm_duration_format(long long secs, char *buf, size_t n)
{
    if (secs < 0) {
        xsnprintf(buf, n, "UNLIMITED");
        return;
    }
    if (secs >= 86400)
        xsnprintf(buf, n, "%lld-%02lld:%02lld:%02lld", secs / 86400,
                  secs % 86400 / 3600, secs % 3600 / 60, secs % 60);
    else
        xsnprintf(buf, n, "%02lld:%02lld:%02lld", secs / 3600, secs % 3600 / 60,
                  secs % 60);
}
