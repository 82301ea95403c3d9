/*
 * json.c - jansson wrappers that never emit NaN/Infinity; see json.h.
 */
#include "libutil/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

json_t *jx_real(double x)
{
    if (!isfinite(x))
        return json_null();
    return json_real(x);
}

/* Length of a valid UTF-8 sequence at s (1-4) or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (s[0] == 0xE0 && s[1] < 0xA0)
            return 0;
        if (s[0] == 0xED && s[1] >= 0xA0)
            return 0;
        return 3;
    }
    if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        if (s[0] == 0xF0 && s[1] < 0x90)
            return 0;
        if (s[0] == 0xF4 && s[1] >= 0x90)
            return 0;
        return 4;
    }
    return 0;
}

json_t *jx_str(const char *s)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *j;
    if (!s)
        return json_null();
    j = json_string(s);
    if (j)
        return j;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_seq(p);
        if (n) {
            strbuf_add(&sb, p, n);
            p += n;
        } else {
            strbuf_addstr(&sb, "\xEF\xBF\xBD");
            p++;
        }
    }
    j = json_string(sb.buf);
    strbuf_release(&sb);
    return j ? j : json_null();
}

json_t *jx_int_or_null(int has_value, long long v)
{
    return has_value ? json_integer(v) : json_null();
}

void jx_set(json_t *obj, const char *key, json_t *value)
{
    json_object_set_new(obj, key, value ? value : json_null());
}

const char *jx_get_str(const json_t *obj, const char *key, const char *def)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

long long jx_get_int(const json_t *obj, const char *key, long long def)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && fabs(d) < 9e15)
            return (long long)d;
    }
    return def;
}

double jx_get_num(const json_t *obj, const char *key, double def)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

/* jansson hands the encoder's output over a token at a time; json_dumpf
 * makes each token one locked fwrite(3). Collect them in a 64 KiB buffer
 * and write that: the same bytes, streamed, for a fraction of the calls. */
struct dump_buf {
    FILE *fp;
    size_t len;
    int failed;
    char data[65536];
};

static int dump_flush(struct dump_buf *b)
{
    if (b->len && fwrite(b->data, 1, b->len, b->fp) != b->len)
        b->failed = 1;
    b->len = 0;
    return b->failed ? -1 : 0;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
    struct dump_buf *b = data;
    if (size > sizeof(b->data) - b->len) {
        if (dump_flush(b) < 0)
            return -1;
        if (size > sizeof(b->data))
            return fwrite(buf, 1, size, b->fp) == size ? 0 : -1;
    }
    memcpy(b->data + b->len, buf, size);
    b->len += size;
    return 0;
}

int jx_dumpf(const json_t *doc, FILE *fp, int pretty)
{
    size_t flags = JSON_ENCODE_ANY | JSON_REAL_PRECISION(15) |
                   (pretty ? JSON_INDENT(2) : JSON_COMPACT);
    struct dump_buf *b = xmalloc(sizeof(*b));
    int rc;

    b->fp = fp;
    b->len = 0;
    b->failed = 0;
    rc = json_dump_callback(doc, dump_cb, b, flags);
    if (rc == 0 && dump_cb("\n", 1, b) < 0)
        rc = -1;
    if (dump_flush(b) < 0)
        rc = -1;
    free(b);
    if (rc < 0)
        return -1;
    return fflush(fp) ? -1 : 0;
}

int jx_quote_ascii(struct strbuf *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;

    if (!s) {
        strbuf_add(sb, "null", 4);
        return 0;
    }
    /* the common case: printable ASCII with nothing to escape, one copy */
    while (p[n] >= 0x20 && p[n] < 0x80 && p[n] != '"' && p[n] != '\\')
        n++;
    if (!p[n]) {
        strbuf_grow(sb, n + 2);
        sb->buf[sb->len] = '"';
        memcpy(sb->buf + sb->len + 1, p, n);
        sb->buf[sb->len + n + 1] = '"';
        sb->len += n + 2;
        sb->buf[sb->len] = '\0';
        return 0;
    }
    for (const unsigned char *q = p + n; *q; q++)
        if (*q >= 0x80)
            return -1;
    strbuf_addch(sb, '"');
    while (*p) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p != '"' && *p != '\\')
            p++;
        strbuf_add(sb, run, (size_t)(p - run));
        if (!*p)
            break;
        switch (*p) {
        case '"':
            strbuf_addstr(sb, "\\\"");
            break;
        case '\\':
            strbuf_addstr(sb, "\\\\");
            break;
        case '\b':
            strbuf_addstr(sb, "\\b");
            break;
        case '\f':
            strbuf_addstr(sb, "\\f");
            break;
        case '\n':
            strbuf_addstr(sb, "\\n");
            break;
        case '\r':
            strbuf_addstr(sb, "\\r");
            break;
        case '\t':
            strbuf_addstr(sb, "\\t");
            break;
        default:
            strbuf_addf(sb, "\\u%04X", *p);
        }
        p++;
    }
    strbuf_addch(sb, '"');
    return 0;
}

void jx_quote(struct strbuf *sb, const char *s)
{
    json_t *j;
    char *t;
    if (jx_quote_ascii(sb, s) == 0)
        return;
    j = jx_str(s);
    t = json_dumps(j, JSON_ENCODE_ANY);
    strbuf_addstr(sb, t ? t : "null");
    free(t);
    json_decref(j);
}

/*
 * The end of the canonical string literal at p (just past its closing
 * quote), or NULL. Keys (key != 0) take no escapes.
 */
static const char *canon_string(const char *p, int key)
{
    if (*p++ != '"')
        return NULL;
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c < 0x20 || c >= 0x80)
            return NULL;
        if (c == '\\') {
            if (key)
                return NULL;
            /* the escapes jx_quote_ascii writes, but no \u (its case of
             * hex digits and its range are more to check than it saves) */
            if (!strchr("\"\\bfnrt", p[1]) || !p[1])
                return NULL;
            p += 2;
            continue;
        }
        p++;
    }
}

/* The end of a canonical scalar value at p, or NULL. */
static const char *canon_scalar(const char *p)
{
    size_t d = 0;
    int neg = *p == '-';
    if (*p == '"')
        return canon_string(p, 0);
    if (!strncmp(p, "null", 4) || !strncmp(p, "true", 4))
        return p + 4;
    if (!strncmp(p, "false", 5))
        return p + 5;
    p += neg;
    if (*p == '0') /* "0", never "-0" (jansson writes 0) nor "01" */
        return neg ? NULL : p + 1;
    while (p[d] >= '0' && p[d] <= '9')
        d++;
    return d && d <= 18 ? p + d : NULL;
}

int jx_is_canonical_flat(const char *text)
{
    const char *p = text, *prev = NULL;
    size_t prevlen = 0;
    if (!p || *p++ != '{')
        return 0;
    if (*p == '}')
        return p[1] == '\0';
    for (;;) {
        const char *k = p, *e = canon_string(p, 1);
        size_t klen;
        int c;
        if (!e || *e != ':')
            return 0;
        klen = (size_t)(e - k) - 2;
        if (prev) {
            c = memcmp(prev, k + 1, klen < prevlen ? klen : prevlen);
            if (c > 0 || (c == 0 && klen <= prevlen))
                return 0;
        }
        prev = k + 1;
        prevlen = klen;
        p = canon_scalar(e + 1);
        if (!p)
            return 0;
        if (*p == '}')
            return p[1] == '\0';
        if (*p++ != ',')
            return 0;
    }
}

int jx_flat_str(const char *text, const char *key, const char **val,
                size_t *len)
{
    const char *p = text + 1; /* past '{' */
    size_t klen = strlen(key);
    if (*p == '}')
        return 0;
    for (;;) {
        /* keys take no escapes: the member's key is its bytes */
        const char *e = canon_string(p, 1), *v, *ve;
        if (!e)
            return 0;
        v = e + 1;
        ve = canon_scalar(v);
        if (!ve)
            return 0;
        if ((size_t)(e - p) == klen + 2 && !memcmp(p + 1, key, klen)) {
            if (*v != '"')
                return 0;
            if (memchr(v + 1, '\\', (size_t)(ve - v) - 2))
                return -1;
            *val = v + 1;
            *len = (size_t)(ve - v) - 2;
            return 1;
        }
        if (*ve != ',')
            return 0;
        p = ve + 1;
    }
}

char *jx_dumps_canonical(const json_t *doc)
{
    char *s = json_dumps(doc, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS |
                                  JSON_REAL_PRECISION(17));
    return s ? s : xstrdup("null");
}
