/*
 * timeutil.c - a strict hand-written ISO-8601 parser (strptime accepts
 * too much and depends on the locale) and the clocks exa measures with.
 */
#include "libutil/timeutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

/* Read exactly n digits at *p into *v; advances only on success. */
static int digits(const char **p, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        x = x * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *v = x;
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 ? 28 + leap : d[m - 1];
}

int time_parse_iso8601(const char *s, time_t *out, exa_error_t *err)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, sec = 0, off = 0;
    struct tm tm;
    time_t t;

    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d))
        goto bad;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi))
            goto bad;
        if (*p == ':') {
            p++;
            if (digits(&p, 2, &sec))
                goto bad;
            if (*p == '.' || *p == ',') {
                p++;
                if (!isdigit((unsigned char)*p))
                    goto bad;
                while (isdigit((unsigned char)*p))
                    p++;
            }
        }
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
            if (digits(&p, 2, &oh))
                goto bad;
            if (*p == ':') {
                p++;
                if (digits(&p, 2, &om))
                    goto bad;
            } else if (isdigit((unsigned char)*p) && digits(&p, 2, &om)) {
                goto bad;
            }
            if (oh > 23 || om > 59)
                goto bad;
            off = sign * (oh * 3600 + om * 60);
        }
    }
    if (*p)
        goto bad;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
        mi > 59 || sec > 60)
        goto bad;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    t = timegm(&tm);
    *out = t - off;
    return 0;
bad:
    return exa_err(err, EXA_EPARSE, "invalid ISO-8601 time '%.64s'", s);
}

void time_format_iso8601(time_t t, char *buf, size_t n)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double time_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv(struct timeval v)
{
    return (double)v.tv_sec + (double)v.tv_usec / 1e6;
}

double time_cpu_seconds(int children)
{
    struct rusage ru;
    double s = 0;
    if (!getrusage(RUSAGE_SELF, &ru))
        s += tv(ru.ru_utime) + tv(ru.ru_stime);
    if (children && !getrusage(RUSAGE_CHILDREN, &ru))
        s += tv(ru.ru_utime) + tv(ru.ru_stime);
    return s;
}

time_t time_parse_sched(const char *s)
{
    struct tm tm;
    char *end;
    double d;

    if (!s || !*s)
        return -1;
    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (end && !*end) {
        tm.tm_isdst = -1;
        return mktime(&tm);
    }
    if (end && end[0] == 'Z' && !end[1])
        return timegm(&tm); /* UTC, as Flux and mock times are recorded */
    d = strtod(s, &end);
    if (end == s || *end || !(d > 0) || d > 1e11)
        return -1;
    return (time_t)d;
}
