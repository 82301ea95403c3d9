/*
 * json.h - jansson helpers that keep exa's JSON valid.
 *
 * JSON (RFC 8259) has no NaN or Infinity. Every floating-point value exa
 * emits goes through jx_real(), which turns a non-finite double into null,
 * so no document exa prints can contain them. Getters return a default
 * when the key is absent or of the wrong type; none of them allocate.
 */
#ifndef EXA_JSON_H
#define EXA_JSON_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* New reference: json real for finite x, json null otherwise. */
json_t *jx_real(double x);
/* New reference: json string of s, or null when s is NULL. Invalid UTF-8
 * bytes are replaced by U+FFFD so untrusted text never fails encoding. */
json_t *jx_str(const char *s);
/* New reference: json integer, or null when has_value is 0. */
json_t *jx_int_or_null(int has_value, long long v);

/* Set key on obj to a new reference (NULL value is stored as null). */
void jx_set(json_t *obj, const char *key, json_t *value);

/* Borrowed string at key, or def when absent / not a string. */
const char *jx_get_str(const json_t *obj, const char *key, const char *def);
/* Integer at key (a JSON integer or integral real), or def. */
long long jx_get_int(const json_t *obj, const char *key, long long def);
/* Number at key (integer or real), or def. */
double jx_get_num(const json_t *obj, const char *key, double def);

/*
 * Serialize doc (borrowed) to fp followed by "\n", with sorted keys off,
 * 2-space indent when pretty, compact otherwise. Returns 0 or -1 on a
 * write error.
 */
int jx_dumpf(const json_t *doc, FILE *fp, int pretty);
/* malloc'ed compact serialization (keys sorted). Caller frees. */
char *jx_dumps_canonical(const json_t *doc);

struct strbuf;
/*
 * Append to sb the JSON string literal jansson's encoder writes for the
 * ASCII string s (JSON null for NULL): `"` and `\` escaped, \b \f \n \r
 * \t, other bytes below 0x20 as \u00XX (jansson's "\\u%04X"), the rest as
 * is. Returns 0, or -1 with nothing appended when s holds a byte >= 0x80
 * (UTF-8 validation and U+FFFD replacement are jansson's: encode through
 * jx_str() then).
 */
int jx_quote_ascii(struct strbuf *sb, const char *s);

/* Append to sb the literal jansson writes for jx_str(s): jx_quote_ascii()
 * or, for non-ASCII s, jansson's own encoding (invalid UTF-8 as U+FFFD). */
void jx_quote(struct strbuf *sb, const char *s);

/*
 * 1 when text (NUL-terminated) is certainly its own canonical form, i.e.
 * jx_dumps_canonical(json_loads(text, JSON_DECODE_ANY)) would give back
 * the same bytes, so a hash over the canonical form can use it as is:
 * a flat object, no whitespace, keys of printable ASCII without escapes
 * in strictly increasing strcmp order (jansson's JSON_SORT_KEYS order, no
 * duplicates), values null, true, false, integers of at most 18 digits
 * (no leading zero, no "-0") and ASCII strings written as
 * jx_quote_ascii() writes them. 0 otherwise (including for many canonical
 * texts: nested values, reals, non-ASCII, \u escapes): the caller then
 * goes through jansson. Pure; fuzz/fuzz_json_canon.c checks the claim
 * against jansson.
 */
int jx_is_canonical_flat(const char *text);

/*
 * The string member key of text, a text jx_is_canonical_flat() accepted
 * (undefined otherwise): 1 with *val pointing into text at its value
 * (*len bytes, no quotes) when the member is a string without escapes,
 * so the bytes are the string jansson would decode; 0 when text has no
 * member key or its value is not a string (jx_get_str's default case);
 * -1 when the value has an escape (decode it through jansson). Pure.
 */
int jx_flat_str(const char *text, const char *key, const char **val,
                size_t *len);

#endif
