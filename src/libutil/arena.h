/*
 * arena.h - bump allocation of many small objects freed together.
 *
 * A parse of a large scheduler output makes one or two small strings per
 * field and per node; one malloc and free each was most of its time. An
 * arena hands them out of 64 KiB chunks and frees the chunks at once.
 * Zero-initialised (struct arena a = {0}) is an empty arena.
 */
#ifndef EXA_ARENA_H
#define EXA_ARENA_H

#include <stddef.h>

#include <string.h>

/* private: a block the arena hands objects out of */
struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    char data[];
};

struct arena {
    struct arena_chunk *head; /* newest chunk first */
};

/* n zeroed bytes aligned for any object (n 0 counts as 1); aborts on OOM
 * like xmalloc. Valid until arena_release. */
void *arena_alloc(struct arena *a, size_t n);
/* arena_alloc's n bytes, not zeroed (the caller writes them first). */
void *arena_alloc_raw(struct arena *a, size_t n);

/* The n bytes at s to d (no overlap), as memcpy; up to 16 bytes (a
 * field, a host name) in at most two moves each way, no library call. */
static inline void arena_copy(char *d, const char *s, size_t n)
{
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n) { /* 1 to 3 bytes: first, middle, last */
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

/* A NUL-terminated copy of the n bytes at s (s may hold no NUL). Inline:
 * a large parse makes one per field. */
char *arena_strndup_slow(struct arena *a, const char *s, size_t n);
static inline char *arena_strndup(struct arena *a, const char *s, size_t n)
{
    struct arena_chunk *c = a->head;
    char *p;
    if (!c || c->cap - c->used <= n)
        return arena_strndup_slow(a, s, n);
    p = c->data + c->used;
    c->used += n + 1;
    arena_copy(p, s, n);
    p[n] = '\0';
    return p;
}

/* arena_strndup's copy of the n bytes at s, its NUL then followed by
 * pad more zero bytes (that a reader may load past the string's end). */
char *arena_strndup_pad_slow(struct arena *a, const char *s, size_t n,
                             size_t pad);
static inline char *arena_strndup_pad(struct arena *a, const char *s, size_t n,
                                      size_t pad)
{
    struct arena_chunk *c = a->head;
    char *p;
    if (!c || c->cap - c->used <= n + pad)
        return arena_strndup_pad_slow(a, s, n, pad);
    p = c->data + c->used;
    c->used += n + 1 + pad;
    memcpy(p, s, n);
    memset(p + n, 0, 1 + pad);
    return p;
}

/* A copy of the string s; NULL for NULL. */
char *arena_strdup(struct arena *a, const char *s);

/* Free every chunk; a is left empty and may be used again. */
void arena_release(struct arena *a);

#endif
