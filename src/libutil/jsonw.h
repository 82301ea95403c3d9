/*
 * jsonw.h - a streaming JSON writer (RFC 8259) whose bytes are those
 * jx_dumpf() writes for the same document: jansson's encoder with
 * JSON_INDENT(2) (pretty) or JSON_COMPACT, keys in the order written, a
 * newline at the end. Large outputs (`exa debug parse` of 100,000 rows)
 * are written straight from the parser's records, without a json_t per
 * value: the text goes out in 64 KiB blocks.
 *
 * Strings: `"` and `\` escaped, \b \f \n \r \t, other bytes below 0x20 as
 * \u00XX (jansson's "\\u%04X"); printable ASCII as is; a string with any
 * byte >= 0x80 is encoded through jx_str() and jansson, so invalid UTF-8
 * becomes U+FFFD exactly as in the json_t path. Keys are the caller's
 * literals: ASCII (jansson would refuse a key that is not UTF-8).
 */
#ifndef EXA_JSONW_H
#define EXA_JSONW_H

#include <stdio.h>
#include <string.h>

#include "libutil/strbuf.h"

#define JSONW_MAX_DEPTH 64

struct jsonw {
    FILE *fp;
    struct strbuf buf;
    int pretty;
    int depth;
    int after_key;
    int failed;
    unsigned char empty[JSONW_MAX_DEPTH]; /* nothing written yet at depth */
};

/* Start a document written to fp (pretty: 2-space indent). */
void jsonw_init(struct jsonw *w, FILE *fp, int pretty);
void jsonw_obj_begin(struct jsonw *w);
void jsonw_obj_end(struct jsonw *w);
void jsonw_arr_begin(struct jsonw *w);
void jsonw_arr_end(struct jsonw *w);
/* The key of the next value (inside an object). */
void jsonw_key(struct jsonw *w, const char *key);
/* jsonw_key for a key of n bytes known to need no escape (printable
 * ASCII, no '"' or '\\', no NUL): the same bytes without scanning it.
 * jsonw_key_lit(w, "name") passes a string literal and its length. */
/* Internal to jsonw_keyn and jsonw_keyn_slow: write ",", the indent,
 * "key": at d, which has room for 1 + ind + n + 4 + JSONW_KEY_SLACK
 * bytes at the end of w->buf; ind is the newline plus indent width (0
 * when not pretty). The indent goes in 16-byte stores (no memset call
 * per key), which may write up to 15 bytes past it, into that slack. */
#define JSONW_KEY_SLACK 16
static inline void jsonw_put_member_key(struct jsonw *w, char *d,
                                        const char *key, size_t n, size_t ind)
{
    if (!w->empty[w->depth])
        *d++ = ',';
    w->empty[w->depth] = 0;
    if (ind) {
        static const char spaces[16] = "                ";
        *d++ = '\n';
        for (size_t k = 0; k < ind - 1; k += 16)
            memcpy(d + k, spaces, 16);
        d += ind - 1;
    }
    *d++ = '"';
    memcpy(d, key, n);
    d += n;
    *d++ = '"';
    *d++ = ':';
    if (w->pretty)
        *d++ = ' ';
    *d = '\0';
    w->buf.len = (size_t)(d - w->buf.buf);
    w->after_key = 1;
}
void jsonw_keyn_slow(struct jsonw *w, const char *key, size_t n);
static inline void jsonw_keyn(struct jsonw *w, const char *key, size_t n)
{
    /* inline for a member with room in the buffer (a key per value) */
    size_t ind = w->pretty ? 1 + (size_t)w->depth * 2 : 0;
    char *d;
    if (w->after_key || w->depth == 0 ||
        w->buf.alloc < w->buf.len + ind + n + 6 + JSONW_KEY_SLACK) {
        jsonw_keyn_slow(w, key, n);
        return;
    }
    d = w->buf.buf + w->buf.len;
    jsonw_put_member_key(w, d, key, n, ind);
}
#define jsonw_key_lit(w, lit) jsonw_keyn((w), "" lit, sizeof(lit) - 1)
/* A string value; NULL writes null. */
void jsonw_str(struct jsonw *w, const char *s);
void jsonw_int(struct jsonw *w, long long v);
void jsonw_null(struct jsonw *w);
/* true when v is non-zero, else false (as json_boolean(v)). */
void jsonw_bool(struct jsonw *w, int v);
/* x as jx_real(x) dumps (jansson's %.15g form; null when not finite). */
void jsonw_real(struct jsonw *w, double x);
/* v when has_value, else null (as jx_int_or_null). */
void jsonw_int_or_null(struct jsonw *w, int has_value, long long v);
/*
 * End the document: the final newline, flush, fflush(fp). Returns 0, or
 * -1 when a write failed (or the nesting was deeper than
 * JSONW_MAX_DEPTH). Releases the buffer.
 */
int jsonw_finish(struct jsonw *w);

/* Release w without writing what it holds (nothing reaches fp that was
 * not flushed already: a document abandoned before its first 64 KiB). */
void jsonw_discard(struct jsonw *w);

#endif
