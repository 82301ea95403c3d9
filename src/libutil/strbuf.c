/*
 * strbuf.c - growable string buffer; the contract is in strbuf.h.
 */
#include "libutil/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
    sb->alloc = sb->len = 0;
    sb->buf = strbuf_slopbuf;
    if (hint)
        strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
    if (sb->alloc)
        free(sb->buf);
    strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
    char *res;
    strbuf_grow(sb, 0);
    res = sb->buf;
    if (len)
        *len = sb->len;
    strbuf_init(sb, 0);
    return res;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
    int fresh = !sb->alloc;
    if (sb->len + extra + 1 <= sb->len)
        BUG("strbuf overflow");
    if (fresh)
        sb->buf = NULL;
    ALLOC_GROW(sb->buf, sb->len + extra + 1, sb->alloc);
    if (fresh)
        sb->buf[0] = '\0';
}

void strbuf_setlen(struct strbuf *sb, size_t n)
{
    if (n > (sb->alloc ? sb->alloc - 1 : 0))
        BUG("strbuf_setlen beyond alloc");
    sb->len = n;
    if (sb->buf != strbuf_slopbuf)
        sb->buf[n] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t n)
{
    if (!n)
        return;
    strbuf_grow(sb, n);
    memcpy(sb->buf + sb->len, data, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
    strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
    strbuf_grow(sb, 1);
    sb->buf[sb->len++] = (char)c;
    sb->buf[sb->len] = '\0';
}

void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other)
{
    strbuf_add(sb, other->buf, other->len);
}

void strbuf_take(struct strbuf *sb, struct strbuf *src)
{
    if (sb == src)
        return;
    if (!sb->len && src->alloc) {
        strbuf_release(sb);
        *sb = *src;
        strbuf_init(src, 0);
        return;
    }
    strbuf_addbuf(sb, src);
    strbuf_release(src);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    int n;
    va_copy(cp, ap);
    n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        BUG("vsnprintf failed on '%s'", fmt);
    strbuf_grow(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_rtrim(struct strbuf *sb)
{
    while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
        sb->len--;
    if (sb->alloc)
        sb->buf[sb->len] = '\0';
}

void strbuf_trim(struct strbuf *sb)
{
    size_t i = 0;
    strbuf_rtrim(sb);
    while (i < sb->len && isspace((unsigned char)sb->buf[i]))
        i++;
    if (i) {
        memmove(sb->buf, sb->buf + i, sb->len - i);
        strbuf_setlen(sb, sb->len - i);
    }
}

int strbuf_starts_with(const struct strbuf *sb, const char *prefix)
{
    size_t n = strlen(prefix);
    return sb->len >= n && !memcmp(sb->buf, prefix, n);
}

int starts_with(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !memcmp(s + a - b, suffix, b);
}

int skip_prefix(const char *s, const char *prefix, const char **out)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n))
        return 0;
    *out = s + n;
    return 1;
}

void xsnprintf(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = vsnprintf(dst, n, fmt, ap);
    va_end(ap);
    if (r < 0 || (size_t)r >= n)
        BUG("xsnprintf truncated '%s'", fmt);
}

char *xstrfmt(const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    return strbuf_detach(&sb, NULL);
}
