/*
 * debug_slurm.c - the Slurm and hostlist kinds of `exa debug parse`: thin
 * adapters from the library parsers (libdiscovery/parse_sinfo.c,
 * libsched/parse_slurm.c, libhostlist) to the doc/formats.md result objects.
 * No parsing happens here, so what users see is what the product uses.
 */
#include "cmd/debug_slurm.h"

#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_sinfo.h"
#include "libhostlist/hostlist.h"
#include "libsched/parse_slurm.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"

static void set_kind(char *errkind, size_t n, const char *kind)
{
    xsnprintf(errkind, n, "%s", kind);
}

json_t *debug_parse_sinfo(const char *buf, size_t len,
                          const struct cmd_spec *spec, exa_error_t *err,
                          char *errkind, size_t errkind_len)
{
    struct sinfo_result res;
    const char *kind = NULL;
    json_t *doc;
    memset(&res, 0, sizeof(res));
    if (sinfo_parse_cmd(buf, len, spec, &res, &kind, err) < 0) {
        set_kind(errkind, errkind_len, kind);
        sinfo_result_free(&res);
        return NULL;
    }
    doc = sinfo_result_to_json(&res);
    sinfo_result_free(&res);
    return doc;
}

int debug_stream_sinfo(const char *buf, size_t len, const struct cmd_spec *spec,
                       FILE *out, exa_error_t *err, char *errkind,
                       size_t errkind_len)
{
    struct sinfo_result res;
    const char *kind = NULL;
    struct jsonw w;
    memset(&res, 0, sizeof(res));
    if (sinfo_parse_cmd(buf, len, spec, &res, &kind, err) < 0) {
        set_kind(errkind, errkind_len, kind);
        sinfo_result_free(&res);
        return -1;
    }
    jsonw_init(&w, out, 1);
    sinfo_result_write_json(&res, &w);
    sinfo_result_free(&res);
    jsonw_finish(&w); /* a closed stdout is the reader's choice */
    return 0;
}

int debug_stream_squeue(const char *buf, size_t len,
                        const struct cmd_spec *spec, FILE *out,
                        exa_error_t *err, char *errkind, size_t errkind_len)
{
    const char *kind = NULL;
    if (slurm_jobs_stream_json(buf, len, 0, spec, 0, out, &kind, err) < 0) {
        set_kind(errkind, errkind_len, kind);
        return -1;
    }
    return 0;
}

int debug_stream_sacct(const char *buf, size_t len, const struct cmd_spec *spec,
                       FILE *out, exa_error_t *err, char *errkind,
                       size_t errkind_len)
{
    const char *kind = NULL;
    if (slurm_jobs_stream_json(buf, len, 1, spec, 0, out, &kind, err) < 0) {
        set_kind(errkind, errkind_len, kind);
        return -1;
    }
    return 0;
}

json_t *debug_parse_squeue(const char *buf, size_t len,
                           const struct cmd_spec *spec, exa_error_t *err,
                           char *errkind, size_t errkind_len)
{
    struct slurm_jobs jobs;
    const char *kind = NULL;
    json_t *doc;
    memset(&jobs, 0, sizeof(jobs));
    if (squeue_parse_cmd(buf, len, spec, &jobs, &kind, err) < 0) {
        set_kind(errkind, errkind_len, kind);
        slurm_jobs_free(&jobs);
        return NULL;
    }
    doc = slurm_jobs_to_json(&jobs, 0);
    slurm_jobs_free(&jobs);
    return doc;
}

json_t *debug_parse_sacct(const char *buf, size_t len,
                          const struct cmd_spec *spec, exa_error_t *err,
                          char *errkind, size_t errkind_len)
{
    struct slurm_jobs jobs;
    const char *kind = NULL;
    json_t *doc;
    memset(&jobs, 0, sizeof(jobs));
    if (sacct_parse_cmd(buf, len, spec, &jobs, &kind, err) < 0) {
        set_kind(errkind, errkind_len, kind);
        slurm_jobs_free(&jobs);
        return NULL;
    }
    doc = slurm_jobs_to_json(&jobs, 1);
    slurm_jobs_free(&jobs);
    return doc;
}

json_t *debug_parse_sbatch(const char *buf, size_t len,
                           const struct cmd_spec *spec, exa_error_t *err,
                           char *errkind, size_t errkind_len)
{
    struct sbatch_result res;
    json_t *doc;
    (void)spec; /* sbatch output has no columns */
    memset(&res, 0, sizeof(res));
    if (sbatch_parse(buf, len, &res, err) < 0) {
        set_kind(errkind, errkind_len, "submit_failed");
        sbatch_result_free(&res);
        return NULL;
    }
    doc = sbatch_result_to_json(&res);
    sbatch_result_free(&res);
    return doc;
}

json_t *debug_parse_hostlist(const char *buf, size_t len,
                             const struct cmd_spec *spec, exa_error_t *err,
                             char *errkind, size_t errkind_len)
{
    struct strvec hosts = STRVEC_INIT;
    json_t *doc, *arr;
    (void)len;
    (void)spec;
    if (hostlist_expand(buf, &hosts, 0, err) < 0) {
        set_kind(errkind, errkind_len, "invalid_hostlist");
        return NULL;
    }
    doc = json_object();
    arr = json_array();
    for (size_t i = 0; i < hosts.nr; i++)
        json_array_append_new(arr, jx_str(hosts.v[i]));
    jx_set(doc, "hosts", arr);
    strvec_clear(&hosts);
    return doc;
}
