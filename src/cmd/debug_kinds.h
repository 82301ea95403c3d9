/*
 * debug_kinds.h - the adapter type behind `exa debug parse KIND`.
 */
#ifndef EXA_DEBUG_KINDS_H
#define EXA_DEBUG_KINDS_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/error.h"

/*
 * Parse len bytes at buf (not NUL-terminated necessarily; buf[len] is NUL)
 * into the FORMAT.md `result` object (new reference). On input that must
 * be rejected return NULL, set err and write the error kind into errkind.
 */
typedef json_t *(*parse_kind_f)(const char *buf, size_t len,
                                exa_error_t *err, char *errkind,
                                size_t errkind_len);

struct parse_kind {
    const char *name;
    parse_kind_f fn;
    const char *summary;
};

#endif
