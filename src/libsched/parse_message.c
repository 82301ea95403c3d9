/*
 * parse_message.c - the first non-blank line of a tool's output
 * (parse_message.h), cut at a character boundary so a message quoted in
 * an error never ends in half a UTF-8 sequence.
 */
#include "libsched/parse_message.h"

#include <string.h>

#include "libutil/xalloc.h"

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

char *tool_message(const char *buf, size_t len, size_t max)
{
    const char *p = buf, *end;

    if (!buf)
        return NULL;
    end = buf + len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        const char *s = p, *t = e ? e : end;
        const char *nul = memchr(s, '\0', (size_t)(t - s));
        if (nul)
            t = nul; /* a C string ends there (found by fuzz_sacctmgr) */
        while (s < t && blank(*s))
            s++;
        while (t > s && blank(t[-1]))
            t--;
        if (t > s) {
            size_t n = (size_t)(t - s);
            if (max && n > max) {
                /* s[n] continues a character: cut before its lead byte,
                 * at most 3 back (UTF-8); bytes that are no UTF-8 are
                 * cut at max (found by fuzz_sacctmgr) */
                size_t k = max;
                while (k && max - k < 3 && ((unsigned char)s[k] & 0xC0) == 0x80)
                    k--;
                n = ((unsigned char)s[k] & 0xC0) == 0x80 || !k ? max : k;
            }
            return xstrndup(s, n);
        }
        if (!e)
            break;
        p = e + 1;
    }
    return NULL;
}
