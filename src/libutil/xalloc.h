/*
 * xalloc.h - allocation that never returns NULL.
 *
 * exa follows git and redis: running out of memory is not a recoverable
 * error for a CLI, so these abort with a message instead of returning NULL.
 */
#ifndef EXA_XALLOC_H
#define EXA_XALLOC_H

#include <stddef.h>

/* malloc(n); aborts on failure. n == 0 returns a unique 1-byte block. */
void *xmalloc(size_t n);
/* calloc(nmemb, size) with overflow check; aborts on failure. */
void *xcalloc(size_t nmemb, size_t size);
/* realloc(p, n); aborts on failure. */
void *xrealloc(void *p, size_t n);
/* strdup(s); s must not be NULL; aborts on failure. Caller frees. */
char *xstrdup(const char *s);
/* strndup(s, n); aborts on failure. Caller frees. */
char *xstrndup(const char *s, size_t n);
/* Grow *arr (of *alloc elements of elsize bytes) to hold at least nr. */
void *xgrow(void *arr, size_t elsize, size_t nr, size_t *alloc);

/* Grow arr to hold nr elements when it does not yet: the check is inline
 * (most pushes need no growth), so nr and alloc are read twice and must
 * have no side effects. */
#define ALLOC_GROW(arr, nr, alloc)                                             \
    ((size_t)(nr) > (alloc)                                                    \
         ? ((arr) = xgrow((arr), sizeof(*(arr)), (nr), &(alloc)))              \
         : (arr))

/* Abort with "BUG: file:line: msg"; marks a broken invariant. */
#define BUG(...) exa_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void exa_bug(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
