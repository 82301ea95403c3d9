/*
 * arena.c - chunked bump allocator (arena.h).
 */
#include "libutil/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

#define CHUNK 65536

/* room for n bytes at alignment align (a power of two) in the newest
 * chunk, a new one when it has none; returns the address */
static char *take(struct arena *a, size_t n, size_t align)
{
    struct arena_chunk *c = a->head;
    size_t at = 0;
    if (c)
        at = c->used + (size_t)(-(uintptr_t)(c->data + c->used) & (align - 1));
    if (!c || at > c->cap || c->cap - at < n) {
        size_t cap = n + align > CHUNK ? n + align : CHUNK;
        c = xmalloc(sizeof(*c) + cap);
        c->next = a->head;
        c->cap = cap;
        a->head = c;
        at = (size_t)(-(uintptr_t)c->data & (align - 1));
    }
    c->used = at + n;
    return c->data + at;
}

void *arena_alloc(struct arena *a, size_t n)
{
    void *p;
    if (!n)
        n = 1;
    p = take(a, n, 16);
    memset(p, 0, n);
    return p;
}

char *arena_strndup_slow(struct arena *a, const char *s, size_t n)
{
    char *p = take(a, n + 1, 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void *arena_alloc_raw(struct arena *a, size_t n)
{
    return take(a, n ? n : 1, 16);
}

char *arena_strndup_pad_slow(struct arena *a, const char *s, size_t n,
                             size_t pad)
{
    char *p = take(a, n + 1 + pad, 1);
    memcpy(p, s, n);
    memset(p + n, 0, 1 + pad);
    return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
    return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

void arena_release(struct arena *a)
{
    while (a->head) {
        struct arena_chunk *c = a->head;
        a->head = c->next;
        free(c);
    }
}
