/*
 * jsonw.c - see jsonw.h. The layout rules are jansson's dump.c (2.14):
 * an empty object or array is "{}" / "[]"; otherwise each member goes on
 * its own line at 2 spaces per level, members are separated by ",", a key
 * by ": " (":" when compact), and the closing bracket returns to the
 * parent's indent.
 */
#include "libutil/jsonw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/json.h"
#include "libutil/xalloc.h"

#define FLUSH_AT JSONW_FLUSH_AT

/* Room for n more bytes in the buffer (and its NUL). */
static inline char *room(struct jsonw *w, size_t n)
{
    if (w->buf.alloc < w->buf.len + n + 1)
        strbuf_grow(&w->buf, n);
    return w->buf.buf + w->buf.len;
}

static void flush(struct jsonw *w)
{
    if (!w->fp) { /* a fragment (jsonw_init_items): the buffer set aside */
        if (!w->buf.len)
            return;
        ALLOC_GROW(w->chunks, w->nchunks + 1, w->chunks_alloc);
        w->chunks[w->nchunks++] = w->buf;
        strbuf_init(&w->buf, FLUSH_AT + 4096);
        return;
    }
    if (w->buf.len && fwrite(w->buf.buf, 1, w->buf.len, w->fp) != w->buf.len)
        w->failed = 1;
    strbuf_reset(&w->buf);
}

static inline void put(struct jsonw *w, const char *s, size_t n)
{
    char *d = room(w, n);
    memcpy(d, s, n);
    w->buf.len += n;
    d[n] = '\0';
    if (w->buf.len >= FLUSH_AT)
        flush(w);
}

/* One byte (no memcpy call, no flush: the callers flush). */
static inline void put1(struct jsonw *w, char c)
{
    char *d = room(w, 1);
    d[0] = c;
    d[1] = '\0';
    w->buf.len++;
}

static void indent(struct jsonw *w)
{
    static const char spaces[16] = "                ";
    size_t n = (size_t)w->depth * 2;
    /* 16 bytes at a time (fixed-size copies the compiler inlines) into a
     * room 16 bytes larger, then cut at n */
    char *d = room(w, n + 1 + 16);
    d[0] = '\n';
    for (size_t i = 0; i < n; i += 16)
        memcpy(d + 1 + i, spaces, 16);
    w->buf.len += n + 1;
    w->buf.buf[w->buf.len] = '\0';
}

void jsonw_flush_full(struct jsonw *w)
{
    flush(w);
}

void jsonw_init(struct jsonw *w, FILE *fp, int pretty)
{
    memset(w, 0, sizeof(*w));
    w->fp = fp;
    w->pretty = pretty;
    strbuf_init(&w->buf, FLUSH_AT + 4096);
}

/* What goes before a value or a key: nothing after a key; else "," when
 * the container has members already, and the member's line. */
static inline void before(struct jsonw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth == 0)
        return;
    if (!w->empty[w->depth])
        put1(w, ',');
    w->empty[w->depth] = 0;
    if (w->pretty)
        indent(w);
}

const char jsonw_item_prefix[19] = ",\n                ";

/* item_len for the depth w is at (jsonw.h) */
static inline void set_item_len(struct jsonw *w)
{
    if (!w->depth || (w->pretty && w->depth > 7))
        w->item_len = 0;
    else
        w->item_len = w->pretty ? 2 + (size_t)w->depth * 2 : 1;
}

static void open_(struct jsonw *w, char c)
{
    char *d = jsonw_item_at(w, 1);
    if (d) { /* an element or member's value: its line in one copy */
        *d++ = c;
        *d = '\0';
        w->buf.len = (size_t)(d - w->buf.buf);
    } else {
        before(w);
        put1(w, c);
    }
    if (w->depth + 1 >= JSONW_MAX_DEPTH) {
        w->failed = 1;
        return;
    }
    w->depth++;
    w->empty[w->depth] = 1;
    set_item_len(w);
}

static void close_(struct jsonw *w, char c)
{
    int was_empty;
    if (w->depth <= 0) {
        w->failed = 1;
        return;
    }
    was_empty = w->empty[w->depth];
    w->depth--;
    set_item_len(w);
    if (!was_empty && w->pretty) {
        /* the parent's line: its item prefix without the ',' */
        if (w->item_len) {
            char *d = room(w, 17);
            memcpy(d, jsonw_item_prefix + 1, 16);
            w->buf.len += w->item_len - 1;
        } else {
            indent(w);
        }
    }
    put1(w, c);
    if (w->buf.len >= FLUSH_AT)
        flush(w);
}

char *jsonw_run_room(struct jsonw *w, char *d, size_t n)
{
    w->buf.len = (size_t)(d - w->buf.buf);
    if (w->buf.len >= FLUSH_AT)
        flush(w);
    return room(w, n + JSONW_RUN_SLACK);
}

char *jsonw_run_strs_tail(struct jsonw *w, char *d, const char *const *v,
                          size_t i, size_t nv)
{
    w->buf.len = (size_t)(d - w->buf.buf);
    w->empty[w->depth] = 0; /* the member is written */
    w->depth++;
    w->empty[w->depth] = i == 0;
    set_item_len(w);
    for (; i < nv; i++)
        jsonw_str(w, v[i]);
    jsonw_arr_end(w);
    return jsonw_run_room(w, w->buf.buf + w->buf.len, 0);
}

void jsonw_init_items(struct jsonw *w, int pretty, int depth)
{
    memset(w, 0, sizeof(*w));
    w->pretty = pretty;
    w->depth = depth > 0 && depth < JSONW_MAX_DEPTH ? depth : 1;
    w->empty[w->depth] = 0; /* every item with its ',' */
    set_item_len(w);
    strbuf_init(&w->buf, FLUSH_AT + 4096);
}

/* n bytes of a fragment's items into w's container. */
static void put_raw(struct jsonw *w, const char *s, size_t n)
{
    if (!n)
        return;
    if (w->empty[w->depth] && *s == ',') {
        s++; /* the container's first item */
        n--;
    }
    w->empty[w->depth] = 0;
    if (w->fp && w->buf.len + n >= FLUSH_AT) {
        flush(w);
        if (fwrite(s, 1, n, w->fp) != n)
            w->failed = 1;
        return;
    }
    strbuf_add(&w->buf, s, n);
    if (w->buf.len >= FLUSH_AT)
        flush(w);
}

void jsonw_put_items(struct jsonw *w, struct jsonw *items)
{
    for (size_t i = 0; i < items->nchunks; i++)
        put_raw(w, items->chunks[i].buf, items->chunks[i].len);
    put_raw(w, items->buf.buf, items->buf.len);
    jsonw_discard(items);
}

void jsonw_obj_begin(struct jsonw *w)
{
    open_(w, '{');
}

void jsonw_obj_end(struct jsonw *w)
{
    close_(w, '}');
}

void jsonw_arr_begin(struct jsonw *w)
{
    open_(w, '[');
}

void jsonw_arr_end(struct jsonw *w)
{
    close_(w, ']');
}

/* s as a JSON string literal, with jansson's escapes. */
static void quoted(struct jsonw *w, const char *s)
{
    jx_quote(&w->buf, s);
}

void jsonw_key(struct jsonw *w, const char *key)
{
    const unsigned char *p = (const unsigned char *)key;
    size_t n = 0;

    while (p[n] >= 0x20 && p[n] < 0x80 && p[n] != '"' && p[n] != '\\')
        n++;
    if (p[n]) {
        before(w);
        quoted(w, key);
        strbuf_addstr(&w->buf, w->pretty ? ": " : ":");
        w->after_key = 1;
        return;
    }
    jsonw_keyn_slow(w, key, n);
}

void jsonw_keyn_slow(struct jsonw *w, const char *key, size_t n)
{
    size_t ind;
    char *d;

    if (w->after_key || w->depth == 0) {
        before(w);
        quoted(w, key);
        strbuf_addstr(&w->buf, w->pretty ? ": " : ":");
        w->after_key = 1;
        return;
    }
    /* the common case, a member of an object: what before(), quoted()
     * and ": " write, in one reservation (a key per value made them a
     * quarter of `exa --json hpc jobs --limit 0`) */
    ind = w->pretty ? 1 + (size_t)w->depth * 2 : 0;
    d = room(w, 1 + ind + n + 4 + JSONW_KEY_SLACK);
    jsonw_put_member_key(w, d, key, n, ind);
}

/* 1 for the bytes a string cannot copy as they are: NUL (its end), the
 * controls below 0x20, '"', '\\', and every byte >= 0x80 (UTF-8 is
 * checked, and invalid sequences replaced, by jx_quote) */
const unsigned char jsonw_not_plain[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x00 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x10 */
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20: '"' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x30 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x40 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* 0x50: '\\' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x60 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x70 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x80 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x90 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xa0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xb0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xc0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xd0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xe0 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0xf0 */
};

void jsonw_str(struct jsonw *w, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    char *d;

    if (!s) {
        before(w);
        put(w, "null", 4);
        return;
    }
    /* most values are printable ASCII with nothing to escape: one scan
     * and one copy; anything else is jx_quote's (the same bytes) */
    while (!jsonw_not_plain[p[n]])
        n++;
    before(w);
    if (p[n]) {
        quoted(w, s);
    } else {
        d = room(w, n + 2);
        d[0] = '"';
        memcpy(d + 1, s, n);
        d[n + 1] = '"';
        d[n + 2] = '\0';
        w->buf.len += n + 2;
    }
    if (w->buf.len >= FLUSH_AT)
        flush(w);
}

void jsonw_int(struct jsonw *w, long long v)
{
    char d[24];
    size_t k = sizeof(d);
    unsigned long long u =
        v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    before(w);
    do {
        d[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        d[--k] = '-';
    put(w, d + k, sizeof(d) - k);
}

/* jansson's dtostr (dump.c) at JSON_REAL_PRECISION(15): "%.15g", ".0"
 * when that reads as an integer, no '+' or leading zeros in the exponent */
void jsonw_real(struct jsonw *w, double x)
{
    char b[64];
    int n;
    char *e;

    before(w);
    if (!isfinite(x)) {
        strbuf_addstr(&w->buf, "null");
        return;
    }
    /* an integral value of at most 15 digits (3600.0, 8.0): "%.15g"
     * prints its digits, and ".0" follows; snprintf's float formatting
     * costs ten times as much (-0.0 keeps the slow path for its sign) */
    if (x > -1e15 && x < 1e15 && x == (double)(long long)x &&
        !(x == 0 && signbit(x))) {
        long long v = (long long)x;
        unsigned long long u =
            v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
        size_t k = sizeof(b) - 2;
        b[sizeof(b) - 2] = '.';
        b[sizeof(b) - 1] = '0';
        do {
            b[--k] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (v < 0)
            b[--k] = '-';
        strbuf_add(&w->buf, b + k, sizeof(b) - k);
        return;
    }
    n = snprintf(b, sizeof(b) - 3, "%.15g", x);
    if (n < 0 || (size_t)n >= sizeof(b) - 3) {
        strbuf_addstr(&w->buf, "null");
        return;
    }
    for (char *c = b; *c; c++)
        if (*c == ',')
            *c = '.'; /* a locale's decimal comma */
    if (!strchr(b, '.') && !strchr(b, 'e')) {
        b[n++] = '.';
        b[n++] = '0';
        b[n] = '\0';
    }
    e = strchr(b, 'e');
    if (e) {
        char *start = e + 1, *end = start + 1;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, (size_t)(n - (end - b)) + 1);
            n -= (int)(end - start);
        }
    }
    strbuf_add(&w->buf, b, (size_t)n);
}

void jsonw_null(struct jsonw *w)
{
    before(w);
    put(w, "null", 4);
}

void jsonw_bool(struct jsonw *w, int v)
{
    before(w);
    if (v)
        put(w, "true", 4);
    else
        put(w, "false", 5);
}

void jsonw_int_or_null(struct jsonw *w, int has_value, long long v)
{
    if (has_value)
        jsonw_int(w, v);
    else
        jsonw_null(w);
}

int jsonw_finish(struct jsonw *w)
{
    if (w->depth != 0)
        w->failed = 1;
    strbuf_addch(&w->buf, '\n');
    flush(w);
    strbuf_release(&w->buf);
    if (fflush(w->fp))
        w->failed = 1;
    return w->failed ? -1 : 0;
}

void jsonw_discard(struct jsonw *w)
{
    strbuf_release(&w->buf);
    for (size_t i = 0; i < w->nchunks; i++)
        strbuf_release(&w->chunks[i]);
    free(w->chunks);
    w->chunks = NULL;
    w->nchunks = w->chunks_alloc = 0;
}
