/*
 * strvec.h - NULL-terminated growable array of owned strings (an argv).
 *
 * v is never NULL (an empty strvec points at a static { NULL }); v[nr] is
 * NULL so v can be passed to execvp(). Every string is owned by the strvec.
 */
#ifndef EXA_STRVEC_H
#define EXA_STRVEC_H

#include <stddef.h>

struct strvec {
    const char **v;
    size_t nr;
    size_t alloc;
};

extern const char *strvec_empty[];
#define STRVEC_INIT                                                            \
    {                                                                          \
        strvec_empty, 0, 0                                                     \
    }

/* Make sv empty (same as STRVEC_INIT); it owns nothing yet. */
void strvec_init(struct strvec *sv);
/* Append a copy of s; returns the stored copy. */
const char *strvec_push(struct strvec *sv, const char *s);
/* Append a formatted string. */
const char *strvec_pushf(struct strvec *sv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append each string of the NULL-terminated list. */
void strvec_pushv(struct strvec *sv, const char **items);
/* Append each variadic string up to a terminating NULL. */
void strvec_pushl(struct strvec *sv, ...);
/* Remove the last element. */
void strvec_pop(struct strvec *sv);
/* Free all strings; sv is left as STRVEC_INIT. */
void strvec_clear(struct strvec *sv);
/* Split s on sep (no empty fields skipped) and push each piece. */
void strvec_split(struct strvec *sv, const char *s, char sep);

/*
 * 1 when the comma-separated list (NULL or "": none) holds name[0..n) as
 * one of its items, exactly (not a prefix of one), else 0. Pure. For the
 * lists exa keeps and asks for: a node's partitions, sbatch -p a,b.
 */
int csv_has(const char *list, const char *name, size_t n);

/* 1 when the comma-separated list holds an item of the comma-separated
 * names (csv_has() of each), else 0. Pure. */
int csv_has_any(const char *list, const char *names);

#endif
