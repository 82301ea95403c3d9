/*
 * parse_flux_cmd.c - `flux jobs` output read with the command line that
 * printed it (libutil/cmdspec.h): `flux jobs -n -o '{id} {status}'`
 * prints no header, so the command's fields name the columns, exactly as
 * the header flux would have printed for that format would.
 */
#include "libsched/parse_flux.h"

#include "libutil/strbuf.h"

json_t *flux_jobs_parse_cmd(const char *buf, size_t len,
                            const struct cmd_spec *spec,
                            const char **errkind, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *res;
    if (!spec || spec->tool != CMD_TOOL_FLUX_JOBS || !spec->noheader ||
        spec->sep || cmd_spec_header_line(spec, &sb) < 0)
        return flux_jobs_parse(buf, len, errkind, err);
    strbuf_addch(&sb, '\n');
    strbuf_add(&sb, buf, len);
    res = flux_jobs_parse(sb.buf, sb.len, errkind, err);
    strbuf_release(&sb);
    return res;
}
