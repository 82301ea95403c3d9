/*
 * etag.h - HTTP entity tags and the If-None-Match precondition (RFC 9110
 * §8.8.3 and §13.1.2), for the conditional GETs of `exa serve`'s static
 * answers (the console's files).
 *
 *   If-None-Match = "*" / #entity-tag
 *   entity-tag    = [ "W/" ] DQUOTE *etagc DQUOTE
 *   etagc         = %x21 / %x23-7E / obs-text   (no DQUOTE, no space)
 *
 * List elements are separated by commas with optional spaces and tabs
 * around them; empty elements are allowed (RFC 9110 §5.6.1).
 */
#ifndef EXA_ETAG_H
#define EXA_ETAG_H

#include <stddef.h>

/*
 * Whether the If-None-Match field value inm (len bytes, need not be
 * NUL-terminated; NULL or empty: no) names etag, a strong entity tag with
 * its quotes ("\"0a1b\""), by the weak comparison that §13.1.2 asks for:
 * the opaque tags are equal, W/ prefixes ignored. "*" alone matches any
 * tag. A field value that is not a valid list (a tag without its closing
 * quote, a byte outside etagc, text between tags) matches nothing: the
 * answer is then a full 200, never a wrong 304. Returns 1 or 0.
 */
int etag_if_none_match(const char *inm, size_t len, const char *etag);

#endif
