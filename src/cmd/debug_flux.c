/*
 * debug_flux.c - thin adapters from `exa debug parse KIND` to the Flux and
 * nvidia-smi parsers of libsched / libdiscovery: they only copy the
 * parser's error kind out, so what the user sees is exactly what the
 * product's own code understood.
 */
#include "cmd/debug_flux.h"

#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libdiscovery/parse_nvidia_smi.h"
#include "libsched/parse_flux.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"

static json_t *with_kind(json_t *res, const char *kind, char *errkind,
                         size_t errkind_len)
{
    if (!res && errkind_len)
        xsnprintf(errkind, errkind_len, "%.*s", (int)errkind_len - 1,
                  kind ? kind : "parse_error");
    return res;
}

json_t *debug_parse_flux_jobs(const char *buf, size_t len,
                              const struct cmd_spec *spec, exa_error_t *err,
                              char *errkind, size_t errkind_len)
{
    const char *kind = NULL;
    json_t *res = flux_jobs_parse_cmd(buf, len, spec, &kind, err);
    return with_kind(res, kind, errkind, errkind_len);
}

json_t *debug_parse_flux_eventlog(const char *buf, size_t len,
                                  const struct cmd_spec *spec, exa_error_t *err,
                                  char *errkind, size_t errkind_len)
{
    json_t *res = flux_eventlog_parse(buf, len, err);
    return with_kind(
        res, err && err->code == EXA_ENOTFOUND ? "unknown_job" : "parse_error",
        errkind, errkind_len);
}

json_t *debug_parse_flux_resource(const char *buf, size_t len,
                                  const struct cmd_spec *spec, exa_error_t *err,
                                  char *errkind, size_t errkind_len)
{
    const char *kind = NULL;
    json_t *res = flux_resource_parse_cmd(buf, len, spec, &kind, err);
    return with_kind(res, kind, errkind, errkind_len);
}

json_t *debug_parse_nvidia_smi(const char *buf, size_t len,
                               const struct cmd_spec *spec, exa_error_t *err,
                               char *errkind, size_t errkind_len)
{
    struct strvec fields = STRVEC_INIT;
    const char *kind = NULL;
    json_t *res;

    if (spec->tool == CMD_TOOL_NVIDIA_SMI)
        for (size_t i = 0; i < spec->ncols; i++)
            strvec_push(&fields, spec->cols[i].name);
    res = nvsmi_parse(buf, len, fields.v, fields.nr, &kind, err);
    strvec_clear(&fields);
    return with_kind(res, kind, errkind, errkind_len);
}
