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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
    size_t item_len; /* what goes before a member or element at depth:
                      * ",\n" and the indent (pretty), "," (compact), with
                      * the ',' dropped for the first; 0 where the inline
                      * writers below leave it to the slow path (depth 0,
                      * or an indent over 16 bytes) */
    /* a fragment (jsonw_init_items): the full buffers a flush set aside,
     * in order, instead of writing them to fp */
    struct strbuf *chunks;
    size_t nchunks, chunks_alloc;
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

/* Internal: the jsonw_member_* writers are inlined into their caller
 * whatever the compiler's heuristics, so that a literal key is copied by
 * fixed-size moves (an out-of-line copy makes it a memcpy call). */
#if defined(__GNUC__)
#define JSONW_INLINE static inline __attribute__((always_inline))
#else
#define JSONW_INLINE static inline
#endif

/* Internal to the jsonw_member_* writers below: where jsonw flushes its
 * buffer, the flush, and the bytes a string copies as they are (0) or
 * must leave to jsonw_str (1: NUL, controls, '"', '\\', >= 0x80). */
#define JSONW_FLUSH_AT 65536
void jsonw_flush_full(struct jsonw *w);
extern const unsigned char jsonw_not_plain[256];

/* Internal: ",\n" and 16 blanks, the item prefix of every depth up to
 * 7 (the first item_len bytes, or item_len - 1 from the newline). */
extern const char jsonw_item_prefix[19];

/* Internal: write what goes before an item (a member or an element) at
 * the current depth and return where the item goes, with room for extra
 * more bytes, the NUL and 16 bytes of slack; NULL (nothing written) where
 * the caller must take the slow path (after a key, depth 0, a deep
 * indent, a full buffer). The prefix goes in one 16-byte copy. */
JSONW_INLINE char *jsonw_item_at(struct jsonw *w, size_t extra)
{
    char *d;
    size_t first;
    if (w->after_key || !w->item_len ||
        w->buf.alloc < w->buf.len + 18 + extra + 1)
        return NULL;
    d = w->buf.buf + w->buf.len;
    first = w->empty[w->depth];
    w->empty[w->depth] = 0;
    memcpy(d, jsonw_item_prefix + first, 16);
    return d + w->item_len - first;
}

/* Internal: write the member key (n bytes, as jsonw_keyn) and return
 * where its value goes, with room for extra more bytes and the NUL; NULL
 * (nothing written) where jsonw_item_at gives NULL. */
JSONW_INLINE char *jsonw_member_at(struct jsonw *w, const char *key, size_t n,
                                   size_t extra)
{
    char *d = jsonw_item_at(w, n + 4 + extra);
    if (!d)
        return NULL;
    *d++ = '"';
    memcpy(d, key, n);
    d += n;
    memcpy(d, "\": ", 3);
    return d + 2 + (w->pretty != 0);
}

/* Internal: the member's value ends at d (NUL-terminated here). */
JSONW_INLINE void jsonw_member_done(struct jsonw *w, char *d)
{
    *d = '\0';
    w->buf.len = (size_t)(d - w->buf.buf);
    if (w->buf.len >= JSONW_FLUSH_AT)
        jsonw_flush_full(w);
}

/* Internal: n bytes from s to d, short runs as fixed-size (inlined)
 * copies that stay inside both. */
JSONW_INLINE void jsonw_copy(char *d, const char *s, size_t n)
{
    if (n >= 8) {
        if (n <= 16) {
            memcpy(d, s, 8);
            memcpy(d + n - 8, s + n - 8, 8);
        } else if (n <= 32) { /* a timestamp */
            memcpy(d, s, 16);
            memcpy(d + n - 16, s + n - 16, 16);
        } else {
            memcpy(d, s, n);
        }
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

/* Internal: jsonw_copy for a source that may be read 16 bytes a step
 * (at least 15 readable bytes past its n: a padded string, see
 * jsonw_run_str) into a run's room (JSONW_RUN_SLACK past the n bytes may
 * be written): whole 16-byte moves, the bytes past n left as they fall. */
JSONW_INLINE void jsonw_copy16(char *d, const char *s, size_t n)
{
    memcpy(d, s, 16);
    if (n > 16) {
        memcpy(d + 16, s + 16, 16);
        if (n > 32)
            memcpy(d + 32, s + 32, n - 32);
    }
}

/* Internal: the length of s's leading run of bytes that jsonw_str copies
 * as they are (it stops at the NUL at the latest; four bytes a step, each
 * read only after the one before it was not the end). */
JSONW_INLINE size_t jsonw_plain_len(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t l = 0;
    for (;; l += 4) {
        if (jsonw_not_plain[p[l]])
            return l;
        if (jsonw_not_plain[p[l + 1]])
            return l + 1;
        if (jsonw_not_plain[p[l + 2]])
            return l + 2;
        if (jsonw_not_plain[p[l + 3]])
            return l + 3;
    }
}

/* Internal: jsonw_plain_len(s) for an s followed, past its NUL, by at
 * least 15 readable (initialized) bytes: 16 bytes a step with SSE2 (the
 * last step may read up to 15 bytes past the NUL), else as
 * jsonw_plain_len. */
JSONW_INLINE size_t jsonw_plain_len16(const char *s)
{
#if defined(__SSE2__)
    /* not plain: below 0x20 or 0x80 and over (below 0x20 as signed
     * bytes, the NUL included), '"', '\\' */
    const __m128i lo = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'),
                  bsl = _mm_set1_epi8('\\');
    for (size_t l = 0;; l += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + l));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_cmplt_epi8(x, lo),
            _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bsl))));
        if (m)
            return l + (size_t)__builtin_ctz(m);
    }
#else
    return jsonw_plain_len(s);
#endif
}

/* Internal: v in decimal at d (room for 20 bytes); returns the end. */
JSONW_INLINE char *jsonw_put_int(char *d, long long v)
{
    static const char pairs[201] = "00010203040506070809"
                                   "10111213141516171819"
                                   "20212223242526272829"
                                   "30313233343536373839"
                                   "40414243444546474849"
                                   "50515253545556575859"
                                   "60616263646566676869"
                                   "70717273747576777879"
                                   "80818283848586878889"
                                   "90919293949596979899";
    unsigned long long u =
        v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    char b[20]; /* the digits, from its end: no count of them first */
    char *p = b + sizeof(b);
    if ((unsigned long long)v < 10) { /* 0 to 9: exit codes, counts */
        *d = (char)('0' + v);
        return d + 1;
    }
    if (v < 0)
        *d++ = '-';
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        p -= 2;
        memcpy(p, pairs + 2 * r, 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    jsonw_copy(d, p, (size_t)(b + sizeof(b) - p));
    return d + (b + sizeof(b) - p);
}

/*
 * One member of the object being written: its key (n bytes, as for
 * jsonw_keyn) and a value, the same bytes as jsonw_keyn followed by
 * jsonw_str / jsonw_int / jsonw_null / jsonw_int_or_null, in one
 * reservation of the buffer (a parse writes a score of members per
 * record). jsonw_member_str: s NULL writes null; a string with a byte to
 * escape or >= 0x80 goes through jsonw_str.
 */
JSONW_INLINE void jsonw_member_str(struct jsonw *w, const char *key, size_t n,
                                   const char *s)
{
    size_t l;
    char *d;
    if (!s) {
        d = jsonw_member_at(w, key, n, 4);
        if (!d)
            goto slow;
        memcpy(d, "null", 4);
        jsonw_member_done(w, d + 4);
        return;
    }
    l = jsonw_plain_len(s);
    if (s[l])
        goto slow;
    d = jsonw_member_at(w, key, n, l + 2);
    if (!d)
        goto slow;
    *d++ = '"';
    jsonw_copy(d, s, l);
    d += l;
    *d++ = '"';
    jsonw_member_done(w, d);
    return;
slow:
    jsonw_keyn(w, key, n);
    jsonw_str(w, s);
}

/* An element of the array being written: jsonw_str(w, s)'s bytes, with
 * jsonw_member_str's inline path (s never NULL). */
JSONW_INLINE void jsonw_elem_str(struct jsonw *w, const char *s)
{
    size_t l = jsonw_plain_len(s);
    char *d;
    if (s[l] || !(d = jsonw_item_at(w, l + 2))) {
        jsonw_str(w, s);
        return;
    }
    *d++ = '"';
    jsonw_copy(d, s, l);
    d += l;
    *d++ = '"';
    jsonw_member_done(w, d);
}

JSONW_INLINE void jsonw_member_int(struct jsonw *w, const char *key, size_t n,
                                   long long v)
{
    char *d = jsonw_member_at(w, key, n, 24);
    if (!d) {
        jsonw_keyn(w, key, n);
        jsonw_int(w, v);
        return;
    }
    jsonw_member_done(w, jsonw_put_int(d, v));
}

JSONW_INLINE void jsonw_member_null(struct jsonw *w, const char *key, size_t n)
{
    char *d = jsonw_member_at(w, key, n, 4);
    if (!d) {
        jsonw_keyn(w, key, n);
        jsonw_null(w);
        return;
    }
    memcpy(d, "null", 4);
    jsonw_member_done(w, d + 4);
}

JSONW_INLINE void jsonw_member_int_or_null(struct jsonw *w, const char *key,
                                           size_t n, int has_value, long long v)
{
    if (has_value)
        jsonw_member_int(w, key, n, v);
    else
        jsonw_member_null(w, key, n);
}
#define jsonw_member_str_lit(w, lit, s)                                        \
    jsonw_member_str((w), "" lit, sizeof(lit) - 1, (s))
#define jsonw_member_int_lit(w, lit, v)                                        \
    jsonw_member_int((w), "" lit, sizeof(lit) - 1, (v))
#define jsonw_member_null_lit(w, lit)                                          \
    jsonw_member_null((w), "" lit, sizeof(lit) - 1)
#define jsonw_member_int_or_null_lit(w, lit, has, v)                           \
    jsonw_member_int_or_null((w), "" lit, sizeof(lit) - 1, (has), (v))
/*
 * Runs: an object's members written from a local cursor (struct
 * jsonw_run, kept in registers), with no field of w read or written
 * between them. The jsonw_member_* writers above store through a char
 * pointer, which may alias w, so each one reloads the writer's state;
 * a run pays that once per object (a parse writes a score of members
 * per record).
 *
 * jsonw_run_obj_begin(w, r) opens an object as the next item of the
 * container w is in (as jsonw_obj_begin) and returns 1 with r set, or
 * returns 0 with nothing written where a run does not apply (after a
 * key, at depth 0, an indent over 16 bytes for the object's members or
 * their array elements): the caller then writes the object with the
 * calls above. Between it and jsonw_run_obj_end(w, r), which closes the
 * object (as jsonw_obj_end), only the jsonw_run_* writers may write to
 * w, except inside a jsonw_run_sync(w, r) ... jsonw_run_resume(w, r)
 * pair, where any member may be written with the calls above (a key and
 * a value), then the run goes on. Every run writer's bytes are those of
 * jsonw_keyn and the matching value call.
 */
struct jsonw_run {
    char *d;        /* where the next byte goes */
    char *lim;      /* d may pass lim by n only after jsonw_run_need(n) */
    size_t item;    /* item_len of the members' depth */
    size_t compact; /* 1 when not pretty: ": " loses its blank */
    int first;      /* no member written yet: no ',' before the next */
};

/* Internal: what a run keeps free past lim (the NUL, and the 16-byte
 * prefix and copy stores that may write past their bytes). */
#define JSONW_RUN_SLACK 64

/* Internal: w's buffer ends at d; flush it when full, make room for n
 * more bytes (and JSONW_RUN_SLACK), and return where the next byte goes
 * (the same bytes, maybe moved). */
char *jsonw_run_room(struct jsonw *w, char *d, size_t n);

/* Internal: room for n bytes at r->d. */
JSONW_INLINE void jsonw_run_need(struct jsonw *w, struct jsonw_run *r, size_t n)
{
    if ((size_t)(r->lim - r->d) < n) {
        r->d = jsonw_run_room(w, r->d, n);
        r->lim = w->buf.buf + w->buf.alloc - JSONW_RUN_SLACK;
    }
}

/* Open an object as the next item of w's container and start a run on
 * it (r set): 1; or 0, nothing written, where a run does not apply (see
 * above). */
JSONW_INLINE int jsonw_run_obj_begin(struct jsonw *w, struct jsonw_run *r)
{
    char *d;
    if (w->pretty ? w->depth > 5 : w->depth + 2 >= JSONW_MAX_DEPTH)
        return 0; /* members' array elements: an indent over 16 bytes */
    d = jsonw_item_at(w, JSONW_RUN_SLACK); /* lim is past d */
    if (!d)
        return 0;
    *d++ = '{';
    w->depth++;
    w->empty[w->depth] = 1;
    w->item_len = w->pretty ? 2 + (size_t)w->depth * 2 : 1;
    r->item = w->item_len;
    r->compact = !w->pretty;
    r->first = 1;
    r->d = d;
    r->lim = w->buf.buf + w->buf.alloc - JSONW_RUN_SLACK;
    return 1;
}

/* Internal: the ',' (not for the first member), the member's line and
 * its key kq (kn bytes: '"', the key, '"', ':', ' ') at r->d, with room
 * for extra more bytes after it; returns where the value goes. */
JSONW_INLINE char *jsonw_run_key(struct jsonw *w, struct jsonw_run *r,
                                 const char *kq, size_t kn, size_t extra)
{
    char *d;
    jsonw_run_need(w, r, 16 + kn + extra);
    d = r->d;
    memcpy(d, jsonw_item_prefix + r->first, 16);
    d += r->item - (size_t)r->first;
    r->first = 0;
    memcpy(d, kq, kn);
    return d + kn - r->compact;
}

/* Give w the run's bytes: a member may be written with the calls above
 * until jsonw_run_resume. */
JSONW_INLINE void jsonw_run_sync(struct jsonw *w, struct jsonw_run *r)
{
    w->buf.len = (size_t)(r->d - w->buf.buf);
    w->buf.buf[w->buf.len] = '\0';
    w->empty[w->depth] = (unsigned char)r->first;
    r->first = 0;
}

/* Go on with the run after jsonw_run_sync and the member written. */
JSONW_INLINE void jsonw_run_resume(struct jsonw *w, struct jsonw_run *r)
{
    r->d = jsonw_run_room(w, w->buf.buf + w->buf.len, 0);
    r->lim = w->buf.buf + w->buf.alloc - JSONW_RUN_SLACK;
    r->first = 0;
}

/* A member (key kq as jsonw_run_key takes it, the key n bytes of it from
 * kq + 1) whose value is jsonw_str(s)'s bytes: NULL writes null. padded
 * 1: s is followed, past its NUL, by at least 15 readable initialized
 * bytes (scanned 16 at a time, jsonw_plain_len16); 0: no such promise. */
JSONW_INLINE void jsonw_run_str(struct jsonw *w, struct jsonw_run *r,
                                const char *kq, size_t kn, const char *s,
                                int padded)
{
    size_t l;
    char *d;
    if (!s) {
        d = jsonw_run_key(w, r, kq, kn, 4);
        memcpy(d, "null", 4);
        r->d = d + 4;
        return;
    }
    l = padded ? jsonw_plain_len16(s) : jsonw_plain_len(s);
    if (s[l]) {
        jsonw_run_sync(w, r);
        jsonw_keyn(w, kq + 1, kn - 4);
        jsonw_str(w, s);
        jsonw_run_resume(w, r);
        return;
    }
    d = jsonw_run_key(w, r, kq, kn, l + 2);
    *d++ = '"';
    if (padded)
        jsonw_copy16(d, s, l);
    else
        jsonw_copy(d, s, l);
    d += l;
    *d++ = '"';
    r->d = d;
}

/* A member whose value is v (jsonw_int). */
JSONW_INLINE void jsonw_run_int(struct jsonw *w, struct jsonw_run *r,
                                const char *kq, size_t kn, long long v)
{
    r->d = jsonw_put_int(jsonw_run_key(w, r, kq, kn, 24), v);
}

/* A member whose value is null. */
JSONW_INLINE void jsonw_run_null(struct jsonw *w, struct jsonw_run *r,
                                 const char *kq, size_t kn)
{
    char *d = jsonw_run_key(w, r, kq, kn, 4);
    memcpy(d, "null", 4);
    r->d = d + 4;
}

/* A member whose value is v when has_value, else null. */
JSONW_INLINE void jsonw_run_int_or_null(struct jsonw *w, struct jsonw_run *r,
                                        const char *kq, size_t kn,
                                        int has_value, long long v)
{
    if (has_value)
        jsonw_run_int(w, r, kq, kn, v);
    else
        jsonw_run_null(w, r, kq, kn);
}

/* Internal: the elements v[i..nv) of the array a run member opened at
 * d (its '[' written, i of them too), written by jsonw_str, and the
 * array closed; returns where the run goes on (as jsonw_run_room(w,
 * d, 0) does). */
char *jsonw_run_strs_tail(struct jsonw *w, char *d, const char *const *v,
                          size_t i, size_t nv);

/* A member whose value is the array of the nv strings v (each as
 * jsonw_str writes it; NULL writes null). */
JSONW_INLINE void jsonw_run_strs(struct jsonw *w, struct jsonw_run *r,
                                 const char *kq, size_t kn,
                                 const char *const *v, size_t nv)
{
    size_t elem = r->compact ? 1 : r->item + 2;
    char *d = jsonw_run_key(w, r, kq, kn, 2);
    *d++ = '[';
    r->d = d;
    for (size_t i = 0; i < nv; i++) {
        const char *s = v[i];
        size_t l = s ? jsonw_plain_len(s) : 0;
        if (!s || s[l]) {
            r->d = jsonw_run_strs_tail(w, r->d, v, i, nv);
            r->lim = w->buf.buf + w->buf.alloc - JSONW_RUN_SLACK;
            return;
        }
        jsonw_run_need(w, r, 16 + l + 2);
        d = r->d;
        memcpy(d, jsonw_item_prefix + (i == 0), 16);
        d += elem - (i == 0);
        *d++ = '"';
        jsonw_copy(d, s, l);
        d += l;
        *d++ = '"';
        r->d = d;
    }
    jsonw_run_need(w, r, 17);
    d = r->d;
    if (nv && !r->compact) { /* the member's line, without its ',' */
        memcpy(d, jsonw_item_prefix + 1, 16);
        d += r->item - 1;
    }
    *d++ = ']';
    r->d = d;
}

/* Close the run's object (as jsonw_obj_end) and give w its bytes. */
JSONW_INLINE void jsonw_run_obj_end(struct jsonw *w, struct jsonw_run *r)
{
    char *d;
    jsonw_run_need(w, r, 17);
    d = r->d;
    w->depth--;
    w->item_len = w->pretty ? 2 + (size_t)w->depth * 2 : 1;
    if (!r->first && !r->compact) {
        memcpy(d, jsonw_item_prefix + 1, 16);
        d += w->item_len - 1;
    }
    *d++ = '}';
    jsonw_member_done(w, d);
}

#define jsonw_run_str_lit(w, r, lit, s, padded)                                \
    jsonw_run_str((w), (r), "\"" lit "\": ", sizeof(lit) + 3, (s), (padded))
#define jsonw_run_int_lit(w, r, lit, v)                                        \
    jsonw_run_int((w), (r), "\"" lit "\": ", sizeof(lit) + 3, (v))
#define jsonw_run_null_lit(w, r, lit)                                          \
    jsonw_run_null((w), (r), "\"" lit "\": ", sizeof(lit) + 3)
#define jsonw_run_int_or_null_lit(w, r, lit, has, v)                           \
    jsonw_run_int_or_null((w), (r), "\"" lit "\": ", sizeof(lit) + 3, (has),   \
                          (v))
#define jsonw_run_strs_lit(w, r, lit, v, nv)                                   \
    jsonw_run_strs((w), (r), "\"" lit "\": ", sizeof(lit) + 3, (v), (nv))

/*
 * End the document: the final newline, flush, fflush(fp). Returns 0, or
 * -1 when a write failed (or the nesting was deeper than
 * JSONW_MAX_DEPTH). Releases the buffer.
 */
int jsonw_finish(struct jsonw *w);

/*
 * A fragment of a document, to build items apart (on another thread) and
 * put them in order: items written to w as the elements (or members) of
 * a container at depth, each with the ',' and line it has there, kept in
 * memory (no fp: each full 64 KiB buffer is set aside, none is grown or
 * copied; free with jsonw_discard()). depth and pretty must be those of
 * the document's writer where the items go.
 */
void jsonw_init_items(struct jsonw *w, int pretty, int depth);
/*
 * Put the items of fragment items (jsonw_init_items() at w's depth) into
 * the container w is in, after the items it has (the container's first
 * item loses its ','), and release items.
 */
void jsonw_put_items(struct jsonw *w, struct jsonw *items);

/* Release w without writing what it holds (nothing reaches fp that was
 * not flushed already: a document abandoned before its first 64 KiB). */
void jsonw_discard(struct jsonw *w);

#endif
