/*
 * parse.c - overflow-checked decimal, size and real parsing (parse.h).
 *
 * Digits are accumulated with an explicit bound check before each step
 * (v > (MAX - d) / 10), so no intermediate value ever overflows and the
 * result is the same under -fsanitize=undefined as without it. strtoll and
 * friends are avoided: they skip blanks, take '+', need errno to tell
 * overflow apart and need a NUL-terminated buffer, none of which fits
 * bytes cut out of a scheduler's output.
 */
#include "libutil/parse.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int parse_u64(const char **cur, const char *end, uint64_t *out)
{
    const char *p = *cur;
    uint64_t v = 0;

    if (p >= end || !is_digit(*p))
        return -1;
    for (; p < end && is_digit(*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        /* v * 10 + d > UINT64_MAX, without a division per digit */
        if (v >= UINT64_MAX / 10 &&
            (v > UINT64_MAX / 10 || d > (unsigned)(UINT64_MAX % 10)))
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    *cur = p;
    return 0;
}

int parse_i64(const char **cur, const char *end, int64_t *out)
{
    const char *p = *cur;
    int neg = 0;
    uint64_t u;

    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (parse_u64(&p, end, &u) < 0)
        return -1;
    if (neg) {
        if (u > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    } else {
        if (u > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)u;
    }
    *cur = p;
    return 0;
}

int parse_count(const char **cur, const char *end, int64_t *out)
{
    const char *p = *cur;
    uint64_t u;

    if (parse_u64(&p, end, &u) < 0 || u > (uint64_t)INT64_MAX)
        return -1;
    *out = (int64_t)u;
    *cur = p;
    return 0;
}

int parse_u64_span(const char *s, size_t len, uint64_t *out)
{
    const char *p = s;
    uint64_t v;

    if (!s || parse_u64(&p, s + len, &v) < 0 || p != s + len)
        return -1;
    *out = v;
    return 0;
}

int parse_i64_span(const char *s, size_t len, int64_t *out)
{
    const char *p = s;
    int64_t v;

    if (!s || parse_i64(&p, s + len, &v) < 0 || p != s + len)
        return -1;
    *out = v;
    return 0;
}

int parse_count_span(const char *s, size_t len, int64_t *out)
{
    const char *p = s;
    int64_t v;

    if (!s || parse_count(&p, s + len, &v) < 0 || p != s + len)
        return -1;
    *out = v;
    return 0;
}

int parse_u64_str(const char *s, uint64_t *out)
{
    return s ? parse_u64_span(s, strlen(s), out) : -1;
}

int parse_i64_str(const char *s, int64_t *out)
{
    return s ? parse_i64_span(s, strlen(s), out) : -1;
}

int parse_count_str(const char *s, int64_t *out)
{
    return s ? parse_count_span(s, strlen(s), out) : -1;
}

int parse_int_str(const char *s, int *out)
{
    int64_t v;

    if (parse_count_str(s, &v) < 0 || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

static int unit_of(char c, unsigned *shift)
{
    static const char units[] = "KMGTPE";
    const char *u;

    if (c >= 'a' && c <= 'z')
        c = (char)(c - 'a' + 'A');
    u = c ? strchr(units, c) : NULL;
    if (!u)
        return -1;
    *shift = 10u * (unsigned)(u - units + 1);
    return 0;
}

int parse_size(const char **cur, const char *end, uint64_t default_unit,
               uint64_t *bytes)
{
    const char *p = *cur;
    uint64_t whole, mult = default_unit, frac = 0, scale = 1;
    unsigned __int128 total;
    unsigned shift;

    if (!default_unit || parse_u64(&p, end, &whole) < 0)
        return -1;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p))
            return -1;
        /* 18 fraction digits are below a byte of any unit; more are read
         * and dropped */
        for (; p < end && is_digit(*p); p++)
            if (scale < 1000000000000000000ULL) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                scale *= 10;
            }
    }
    if (p < end && unit_of(*p, &shift) == 0) {
        mult = (uint64_t)1 << shift;
        p++;
    }
    total = (unsigned __int128)whole * mult +
            (unsigned __int128)frac * mult / scale;
    if (total > UINT64_MAX)
        return -1;
    *bytes = (uint64_t)total;
    *cur = p;
    return 0;
}

int parse_size_str(const char *s, uint64_t default_unit, uint64_t *bytes)
{
    const char *p = s, *end;
    uint64_t v;

    if (!s)
        return -1;
    end = s + strlen(s);
    if (parse_size(&p, end, default_unit, &v) < 0 || p != end)
        return -1;
    *bytes = v;
    return 0;
}

int parse_real(const char **cur, const char *end, double *out)
{
    const char *p = *cur, *start = *cur;
    int digits = 0;
    char buf[64];
    char *e;
    double d;

    if (p < end && *p == '-')
        p++;
    for (; p < end && is_digit(*p); p++)
        digits++;
    if (p < end && *p == '.')
        for (p++; p < end && is_digit(*p); p++)
            digits++;
    if (!digits)
        return -1;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        if (q < end && is_digit(*q)) {
            while (q < end && is_digit(*q))
                q++;
            p = q;
        }
    }
    if ((size_t)(p - start) >= sizeof(buf))
        return -1;
    memcpy(buf, start, (size_t)(p - start));
    buf[p - start] = '\0';
    d = strtod(buf, &e);
    if (*e || !isfinite(d))
        return -1;
    *out = d;
    *cur = p;
    return 0;
}

int parse_real_str(const char *s, double *out)
{
    const char *p = s, *end;
    double v;

    if (!s)
        return -1;
    end = s + strlen(s);
    if (parse_real(&p, end, &v) < 0 || p != end)
        return -1;
    *out = v;
    return 0;
}

int count_add(int64_t *acc, int64_t v)
{
    if (*acc < 0 || v < 0 || *acc > INT64_MAX - v)
        return -1;
    *acc += v;
    return 0;
}

int count_mul(int64_t *acc, int64_t v)
{
    if (*acc < 0 || v < 0 || (v && *acc > INT64_MAX / v))
        return -1;
    *acc *= v;
    return 0;
}

int parse_char(const char **cur, const char *end, char c)
{
    if (*cur >= end || **cur != c)
        return -1;
    (*cur)++;
    return 0;
}
