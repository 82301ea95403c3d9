/*
 * parse_flux_cmd.c - `flux jobs` output read with the command line that
 * printed it (libutil/cmdspec.h): `flux jobs -n -o '{id} {status}'`
 * prints no header, so the command's fields name the columns, as the
 * header flux prints for that format would, when every row has one
 * token per field.
 */
#include "libsched/parse_flux.h"

#include <ctype.h>

#include "libutil/strbuf.h"

/* Does every non-blank line hold exactly n blank-separated tokens? A
 * transcript that mixes formats (or a cell flux left empty) does not fit
 * one header; the shape-based reading then does better. */
static int rows_fit(const char *buf, size_t len, size_t n)
{
    size_t i = 0;
    while (i < len) {
        size_t ntok = 0;
        int in = 0;
        for (; i < len && buf[i] != '\n'; i++) {
            int sp = isspace((unsigned char)buf[i]);
            if (!sp && !in)
                ntok++;
            in = !sp;
        }
        i++;
        if (ntok && ntok != n)
            return 0;
    }
    return 1;
}

json_t *flux_jobs_parse_cmd(const char *buf, size_t len,
                            const struct cmd_spec *spec, const char **errkind,
                            exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *res;
    if (spec && spec->tool == CMD_TOOL_FLUX_JOBS && spec->sep && spec->format)
        /* one separator byte between fields (exa's own 0x1F queries) */
        return flux_jobs_parse_format(buf, len, spec->format, errkind, err);
    if (!spec || spec->tool != CMD_TOOL_FLUX_JOBS || !spec->noheader ||
        spec->sep || !rows_fit(buf, len, spec->ncols) ||
        cmd_spec_header_line(spec, &sb) < 0)
        return flux_jobs_parse(buf, len, errkind, err);
    strbuf_addch(&sb, '\n');
    strbuf_add(&sb, buf, len);
    res = flux_jobs_parse(sb.buf, sb.len, errkind, err);
    strbuf_release(&sb);
    return res;
}
