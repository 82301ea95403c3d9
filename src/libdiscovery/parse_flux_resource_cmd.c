/*
 * parse_flux_resource_cmd.c - `flux resource list|status` output read
 * with the command line that printed it (libutil/cmdspec.h): with
 * `-n -o '{queue} {nodelist}'` no header is printed, so the command's
 * fields name the columns, as the header flux prints for that format.
 */
#include "libdiscovery/parse_flux_resource.h"

#include "libutil/strbuf.h"

json_t *flux_resource_parse_cmd(const char *buf, size_t len,
                                const struct cmd_spec *spec,
                                const char **errkind, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *res;
    if (!spec || spec->tool != CMD_TOOL_FLUX_RESOURCE || !spec->noheader ||
        spec->sep || cmd_spec_header_line(spec, &sb) < 0)
        return flux_resource_parse(buf, len, errkind, err);
    strbuf_addch(&sb, '\n');
    strbuf_add(&sb, buf, len);
    res = flux_resource_parse(sb.buf, sb.len, errkind, err);
    strbuf_release(&sb);
    return res;
}
