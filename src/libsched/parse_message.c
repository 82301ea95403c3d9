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
        while (s < t && blank(*s))
            s++;
        while (t > s && blank(t[-1]))
            t--;
        if (t > s) {
            size_t n = (size_t)(t - s);
            if (max && n > max) {
                n = max;
                while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
                    n--; /* s[n] continues a character: cut before it */
            }
            return xstrndup(s, n);
        }
        if (!e)
            break;
        p = e + 1;
    }
    return NULL;
}
