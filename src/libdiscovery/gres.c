/*
 * gres.c - GPU counts from GRES and TRES strings.
 *
 * Both are comma lists, but GRES may hold commas inside parentheses
 * ("gpu:l4:4(S:1,3,5,7)") so it is split with a depth counter, never with
 * a plain split. Non-GPU resources (shard, mps, mig, ssd, tmp:844G) are
 * recognized as entries but never counted.
 */
#include "libdiscovery/gres.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libutil/strbuf.h"

static int all_digits(const char *s, size_t n)
{
    if (!n || n > 15)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static long long to_ll(const char *s, size_t n)
{
    long long v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

static void add_type(struct gres_info *out, const char *t, size_t n)
{
    size_t tl = strlen(out->types);
    const char *p = out->types;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !strncmp(p, t, n))
            return;
        p += len + (c ? 1 : 0);
    }
    if (tl + n + 2 > sizeof(out->types))
        return;
    if (tl)
        out->types[tl++] = ',';
    memcpy(out->types + tl, t, n);
    out->types[tl + n] = '\0';
}

static void one_entry(const char *e, size_t n, struct gres_info *out)
{
    const char *f[8];
    size_t fl[8], nf = 0, i = 0;
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
    while (n && isspace((unsigned char)*e)) {
        e++;
        n--;
    }
    while (n && isspace((unsigned char)e[n - 1]))
        n--;
    if (n >= 5 && (!strncmp(e, "gres/", 5) || !strncmp(e, "gres:", 5))) {
        e += 5;
        n -= 5;
    }
    if (!n)
        return;
    while (i <= n && nf < 8) {
        size_t j = i;
        while (j < n && e[j] != ':')
            j++;
        f[nf] = e + i;
        fl[nf++] = j - i;
        i = j + 1;
    }
    if (nf < 2 || !all_digits(f[nf - 1], fl[nf - 1]))
        return;
    out->entries++;
    if (fl[0] != 3 || strncmp(f[0], "gpu", 3))
        return;
    out->gpus += to_ll(f[nf - 1], fl[nf - 1]);
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
        size_t j = i;
        int depth = 0;
        while (j < len && (depth || s[j] != ',')) {
            if (s[j] == '(')
                depth++;
            else if (s[j] == ')' && depth)
                depth--;
            j++;
        }
        one_entry(s + i, j - i, out);
        i = j + 1;
    }
}

int tres_gpus(const char *s, long long *gpus)
{
    long long untyped = -1, typed = 0;
    size_t i = 0, len;
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
        size_t j = i;
        const char *eq;
        while (j < len && s[j] != ',')
            j++;
        eq = memchr(s + i, '=', j - i);
        if (!eq)
            return 0;
        if ((size_t)(eq - (s + i)) == 8 && !strncmp(s + i, "gres/gpu", 8)) {
            if (!all_digits(eq + 1, (size_t)(s + j - eq - 1)))
                return 0;
            untyped = to_ll(eq + 1, (size_t)(s + j - eq - 1));
        } else if (!strncmp(s + i, "gres/gpu:", 9) && eq > s + i + 9) {
            if (!all_digits(eq + 1, (size_t)(s + j - eq - 1)))
                return 0;
            typed += to_ll(eq + 1, (size_t)(s + j - eq - 1));
        }
        i = j + 1;
    }
    *gpus = untyped >= 0 ? untyped : typed;
    return 1;
}
