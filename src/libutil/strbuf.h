/*
 * strbuf.h - growable NUL-terminated byte buffer (git's strbuf contract).
 *
 * buf is never NULL and always NUL-terminated; len excludes the NUL. A
 * strbuf may hold embedded NUL bytes (output read from a process).
 * Initialise with STRBUF_INIT, free with strbuf_release().
 */
#ifndef EXA_STRBUF_H
#define EXA_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
    size_t alloc;
    size_t len;
    char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT                                                            \
    {                                                                          \
        0, 0, strbuf_slopbuf                                                   \
    }

/* Initialise sb with room for hint bytes. */
void strbuf_init(struct strbuf *sb, size_t hint);
/* Free the storage; sb is left as STRBUF_INIT. Accepts a released sb. */
void strbuf_release(struct strbuf *sb);
/* Return the malloc'ed string (caller frees) and reset sb to empty. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Ensure room for extra more bytes plus the NUL. */
void strbuf_grow(struct strbuf *sb, size_t extra);
/* Set len to n (n <= alloc) and NUL-terminate. */
void strbuf_setlen(struct strbuf *sb, size_t n);
#define strbuf_reset(sb) strbuf_setlen((sb), 0)

/*
 * Append n bytes of data (may hold NUL bytes), a C string, one byte, another
 * strbuf, or printf-formatted text; sb stays NUL-terminated. Grow with
 * xrealloc (abort on OOM); no error return.
 */
void strbuf_add(struct strbuf *sb, const void *data, size_t n);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/*
 * Append src's bytes to sb and leave src empty (as STRBUF_INIT). When sb
 * holds nothing (len 0) the storage itself moves, no byte is copied (a
 * command's output of megabytes handed from the subprocess to the
 * transport to the caller); else as strbuf_addbuf, then src released.
 */
void strbuf_take(struct strbuf *sb, struct strbuf *src);

/* Remove leading / trailing ASCII whitespace in place. */
void strbuf_trim(struct strbuf *sb);
/* Remove trailing ASCII whitespace only. */
void strbuf_rtrim(struct strbuf *sb);

/* Non-zero when sb starts / ends with the NUL-terminated prefix/suffix. */
int strbuf_starts_with(const struct strbuf *sb, const char *prefix);

/* Helpers on plain C strings. */
int starts_with(const char *s, const char *prefix);
int ends_with(const char *s, const char *suffix);
/* If s starts with prefix, set *out to the rest and return 1; else 0. */
int skip_prefix(const char *s, const char *prefix, const char **out);

/*
 * Format into dst of size n like snprintf; BUG() if the result would be
 * truncated. Use only for buffers sized by construction.
 */
void xsnprintf(char *dst, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* malloc'ed printf. Caller frees. */
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
