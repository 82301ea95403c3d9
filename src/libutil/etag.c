/*
 * etag.c - If-None-Match against one entity tag (etag.h; RFC 9110
 * §13.1.2). The field value is read once, left to right, element by
 * element; nothing is copied.
 */
#include "libutil/etag.h"

#include <string.h>

static int ows(char c)
{
    return c == ' ' || c == '\t';
}

/* RFC 9110 §8.8.3: %x21 / %x23-7E / obs-text (%x80-FF) */
static int etagc(unsigned char c)
{
    return c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80;
}

int etag_if_none_match(const char *inm, size_t len, const char *etag)
{
    const char *p = inm, *e = inm + len;
    size_t tl;
    const char *tag;
    int match = 0;

    if (!inm || !len || !etag)
        return 0;
    /* the opaque tag of etag: between its quotes */
    tl = strlen(etag);
    if (tl < 2 || etag[0] != '"' || etag[tl - 1] != '"')
        return 0;
    tag = etag + 1;
    tl -= 2;

    /* "*" alone */
    {
        const char *a = p, *b = e;
        while (a < b && ows(*a))
            a++;
        while (b > a && ows(b[-1]))
            b--;
        if (b - a == 1 && *a == '*')
            return 1;
    }
    while (p < e) {
        const char *o;
        while (p < e && (ows(*p) || *p == ','))
            p++;
        if (p == e)
            break;
        if (e - p >= 2 && p[0] == 'W' && p[1] == '/')
            p += 2;
        if (p == e || *p != '"')
            return 0;
        o = ++p;
        while (p < e && *p != '"') {
            if (!etagc((unsigned char)*p))
                return 0;
            p++;
        }
        if (p == e)
            return 0; /* no closing quote */
        if ((size_t)(p - o) == tl && !memcmp(o, tag, tl))
            match = 1;
        p++;
        while (p < e && ows(*p))
            p++;
        if (p < e && *p != ',')
            return 0; /* text after a tag */
    }
    return match;
}
