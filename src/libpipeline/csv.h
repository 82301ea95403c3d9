/*
 * csv.h - a cursor over RFC 4180 CSV text (https://www.rfc-editor.org/
 * rfc/rfc4180): comma-separated fields, optionally quoted with '"', a
 * doubled quote inside quotes standing for one, records ending in LF or
 * CRLF. Quoted fields may span lines; line numbers stay those of the
 * file so errors can name them.
 */
#ifndef EXA_CSV_H
#define EXA_CSV_H

#include <stddef.h>

#include "libutil/error.h"
#include "libutil/strvec.h"

/* The longest record csv_next() reads (a PM100 power series of a
 * many-node job is a few MB): longer is an error naming its line, so one
 * runaway line never becomes gigabytes of field copies. */
#define CSV_MAX_RECORD_BYTES ((size_t)64 << 20)

struct csv_cursor {
    const char *p, *end;
    size_t line;       /* 1-based line where the next record starts */
    size_t max_record; /* bytes; csv_init sets CSV_MAX_RECORD_BYTES */
};

/* Start reading buf[0..len). */
void csv_init(struct csv_cursor *c, const char *buf, size_t len);

/*
 * Read the next record into fields (cleared first; each field unquoted
 * and owned by fields). *line gets the 1-based line number the record
 * started on. Lines that are completely empty are skipped. Returns 1 for
 * a record, 0 at the end of input, -1 with err (EXA_EPARSE, "line N: ...")
 * for a quote that is never closed, text after a closing quote, or a
 * record longer than c->max_record bytes ("line N: record is longer than
 * M bytes").
 */
int csv_next(struct csv_cursor *c, struct strvec *fields, size_t *line,
             exa_error_t *err);

#endif
