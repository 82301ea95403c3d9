/*
 * xalloc.c - aborting allocators (see xalloc.h for why).
 */
#include "libutil/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void oom(size_t n)
{
    fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size)
        oom(SIZE_MAX);
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p)
        oom(nmemb * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s);
    char *p = xmalloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void *xgrow(void *arr, size_t elsize, size_t nr, size_t *alloc)
{
    if (nr <= *alloc)
        return arr;
    size_t n = *alloc ? *alloc : 8;
    while (n < nr) {
        if (n > SIZE_MAX / 2 / elsize)
            oom(SIZE_MAX);
        n *= 2;
    }
    arr = xrealloc(arr, n * elsize);
    *alloc = n;
    return arr;
}

void exa_bug(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "BUG: %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
