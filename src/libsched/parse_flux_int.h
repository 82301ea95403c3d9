/*
 * parse_flux_int.h - helpers shared by the pieces of exa's Flux output
 * readers (parse_flux.c, parse_flux_jobs.c, parse_flux_jobs_json.c,
 * parse_flux_eventlog.c). Private: include it only from those files;
 * the public interface is parse_flux.h.
 */
#ifndef EXA_PARSE_FLUX_INT_H
#define EXA_PARSE_FLUX_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "libutil/error.h"

/* One whitespace token of a line. */
struct flux_tok {
    size_t b0, b1; /* byte span */
    size_t c0, c1; /* code point span [c0, c1) */
};

/* One line of a buffer, borrowed, without its "\n" / "\r\n". */
struct flux_line {
    const char *s;
    size_t len;
};

/* Unprefixed F58 s into *id: 0, or -1 (empty, bad digit, overflow). */
int flux_parse_f58_plain(const char *s, uint64_t *id);

/* Space/tab tokens of s[0..len) into *out (caller frees); their count. */
size_t flux_tokenize(const char *s, size_t len, struct flux_tok **out);

/* Lines of buf[0..len) into *out (into buf; caller frees); their count. */
size_t flux_split_lines(const char *buf, size_t len, struct flux_line **out);

/* 1 when s[0..n) is all whitespace (or empty), else 0. */
int flux_is_blank(const char *s, size_t n);

/* Whole s (NULL ok) as a decimal into *v: 0, or -1 ("-", junk, range). */
int flux_parse_ll(const char *s, long long *v);

/* Whole s (NULL ok) as a finite double into *v: 0, or -1. */
int flux_parse_dbl(const char *s, double *v);

/* New array of hostlist s's hosts: [] for NULL/""/"-", [s] if unreadable. */
json_t *flux_nodelist_json(const char *s);

/* New {"type","severity","note"}; sev < 0 gives severity null. */
json_t *flux_exception_json(const char *type, long long sev, const char *note);

/* `flux jobs --json` text into a new {"jobs": [...]}, or NULL + EXA_EPARSE. */
json_t *flux_jobs_json(const char *buf, size_t len, exa_error_t *err);

#endif
