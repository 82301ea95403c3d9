/*
 * strvec.c - argv-style string array; see strvec.h.
 */
#include "libutil/strvec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

const char *strvec_empty[] = {NULL};

void strvec_init(struct strvec *sv)
{
    sv->v = strvec_empty;
    sv->nr = sv->alloc = 0;
}

static const char *push_owned(struct strvec *sv, char *s)
{
    if (sv->v == strvec_empty)
        sv->v = NULL;
    ALLOC_GROW(sv->v, sv->nr + 2, sv->alloc);
    sv->v[sv->nr++] = s;
    sv->v[sv->nr] = NULL;
    return s;
}

const char *strvec_push(struct strvec *sv, const char *s)
{
    return push_owned(sv, xstrdup(s));
}

const char *strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    return push_owned(sv, strbuf_detach(&sb, NULL));
}

void strvec_pushv(struct strvec *sv, const char **items)
{
    for (; *items; items++)
        strvec_push(sv, *items);
}

void strvec_pushl(struct strvec *sv, ...)
{
    va_list ap;
    const char *s;
    va_start(ap, sv);
    while ((s = va_arg(ap, const char *)))
        strvec_push(sv, s);
    va_end(ap);
}

void strvec_pop(struct strvec *sv)
{
    if (!sv->nr)
        return;
    free((char *)sv->v[--sv->nr]);
    sv->v[sv->nr] = NULL;
}

void strvec_clear(struct strvec *sv)
{
    if (sv->v != strvec_empty) {
        for (size_t i = 0; i < sv->nr; i++)
            free((char *)sv->v[i]);
        free(sv->v);
    }
    strvec_init(sv);
}

void strvec_split(struct strvec *sv, const char *s, char sep)
{
    const char *p;
    while ((p = strchr(s, sep))) {
        push_owned(sv, xstrndup(s, (size_t)(p - s)));
        s = p + 1;
    }
    strvec_push(sv, s);
}

int csv_has(const char *list, const char *name, size_t n)
{
    if (!list || !*list)
        return 0;
    for (const char *x = list, *y; x; x = *y ? y + 1 : NULL) {
        y = strchr(x, ',');
        if (!y)
            y = x + strlen(x);
        if ((size_t)(y - x) == n && !memcmp(x, name, n))
            return 1;
    }
    return 0;
}

int csv_has_any(const char *list, const char *names)
{
    if (!names)
        return 0;
    for (const char *c = names, *e; c; c = *e ? e + 1 : NULL) {
        e = strchr(c, ',');
        if (!e)
            e = c + strlen(c);
        if (csv_has(list, c, (size_t)(e - c)))
            return 1;
    }
    return 0;
}
