/*
 * debug_kinds.h - the adapter type behind `exa debug parse KIND`.
 */
#ifndef EXA_DEBUG_KINDS_H
#define EXA_DEBUG_KINDS_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "libutil/cmdspec.h"
#include "libutil/error.h"

/*
 * Parse len bytes at buf (not NUL-terminated necessarily; buf[len] is NUL)
 * into the doc/formats.md `result` object (new reference). spec is the column
 * spec of the command line that printed buf (`--command` or
 * $EXA_PARSE_COMMAND; never NULL, empty when none was given): the adapter
 * hands it to the library parser, which takes headerless column lists,
 * separators, widths and state filters from it. On input that must be
 * rejected return NULL, set err and write the error kind into errkind.
 */
typedef json_t *(*parse_kind_f)(const char *buf, size_t len,
                                const struct cmd_spec *spec, exa_error_t *err,
                                char *errkind, size_t errkind_len);

/*
 * The same, written to out as it is produced (jsonw.h, the bytes jx_dumpf
 * gives for fn's result) for kinds whose inputs run to 100,000 rows:
 * 0 when written, -1 (nothing written) as fn's NULL.
 */
typedef int (*parse_stream_f)(const char *buf, size_t len,
                              const struct cmd_spec *spec, FILE *out,
                              exa_error_t *err, char *errkind,
                              size_t errkind_len);

struct parse_kind {
    const char *name;
    parse_kind_f fn;
    const char *summary;
    parse_stream_f stream; /* or NULL: fn and jx_dumpf */
};

#endif
