/*
 * csv.c - the RFC 4180 record reader (see csv.h). Written by hand rather
 * than with a library because exa needs exact line numbers in errors and
 * a hard failure, not a guess, on a malformed quote.
 */
#include "libpipeline/csv.h"

#include "libutil/strbuf.h"

void csv_init(struct csv_cursor *c, const char *buf, size_t len)
{
    c->p = buf;
    c->end = buf + len;
    c->line = 1;
    c->max_record = CSV_MAX_RECORD_BYTES;
}

static int too_long(const struct csv_cursor *c, size_t line, exa_error_t *err)
{
    return exa_err(err, EXA_EPARSE,
                   "line %zu: record is longer than %zu bytes (the limit for "
                   "one CSV record)",
                   line, c->max_record);
}

int csv_next(struct csv_cursor *c, struct strvec *fields, size_t *line,
             exa_error_t *err)
{
    struct strbuf f = STRBUF_INIT;
    const char *p = c->p;
    size_t ln = c->line;

    strvec_clear(fields);
    /* Skip empty lines. */
    while (p < c->end && (*p == '\n' || *p == '\r')) {
        if (*p == '\n')
            ln++;
        p++;
    }
    if (p >= c->end) {
        c->p = p;
        c->line = ln;
        return 0;
    }
    *line = ln;
    const char *rs = p; /* where the record starts, for the length cap */
    for (;;) {
        strbuf_reset(&f);
        if (p < c->end && *p == '"') {
            size_t qline = ln;
            p++;
            for (;;) {
                if (p >= c->end) {
                    strbuf_release(&f);
                    return exa_err(err, EXA_EPARSE,
                                   "line %zu: quoted field is never closed",
                                   qline);
                }
                if (*p == '"') {
                    if (p + 1 < c->end && p[1] == '"') {
                        strbuf_addch(&f, '"');
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                if (*p == '\n')
                    ln++;
                if ((size_t)(p - rs) >= c->max_record) {
                    strbuf_release(&f);
                    return too_long(c, *line, err);
                }
                strbuf_addch(&f, *p++);
            }
            if (p < c->end && *p != ',' && *p != '\n' && *p != '\r') {
                strbuf_release(&f);
                return exa_err(err, EXA_EPARSE,
                               "line %zu: unexpected text after a closing "
                               "quote",
                               ln);
            }
        } else {
            const char *s = p;
            while (p < c->end && *p != ',' && *p != '\n' && *p != '\r')
                p++;
            if ((size_t)(p - rs) > c->max_record) {
                strbuf_release(&f);
                return too_long(c, *line, err);
            }
            strbuf_add(&f, s, (size_t)(p - s));
        }
        strvec_push(fields, f.buf);
        if (p < c->end && *p == ',') {
            p++;
            continue;
        }
        break;
    }
    if (p < c->end && *p == '\r')
        p++;
    if (p < c->end && *p == '\n') {
        p++;
        ln++;
    }
    c->p = p;
    c->line = ln;
    strbuf_release(&f);
    return 1;
}
