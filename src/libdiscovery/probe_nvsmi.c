/*
 * probe_nvsmi.c - the nvidia-smi probe for hosts with no scheduler
 * ("unmanaged"): `nvidia-smi -L` for presence, one CSV query for the GPUs
 * (parsed by parse_nvidia_smi.c) named after the host's own hostname, and
 * the host as one node whose state is judged from GPU use. probe.c also
 * uses it to enrich a scheduler's count-only GPUs with device details.
 */
#include "libdiscovery/probe_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_nvidia_smi.h"
#include "libutil/cmdspec.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static int nvsmi_available(struct transport *t, char **version,
                           exa_error_t *err)
{
    const char *argv[] = {"nvidia-smi", "-L", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1 && !r.out.len)
        ok = 0;
    if (ok == 1 && version)
        *version = NULL;
    transport_result_release(&r);
    return ok;
}

static int nvsmi_caps(struct transport *t, struct cluster_caps *caps,
                      exa_error_t *err)
{
    strvec_push(&caps->notes, "no scheduler \u2014 GPUs visible via "
                              "nvidia-smi only (manual placement)");
    return 0;
}

static char *remote_hostname(struct transport *t, exa_error_t *err)
{
    const char *argv[] = {"hostname", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    char *h = NULL;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1)
        h = tool_message(r.out.buf, r.out.len, 0);
    transport_result_release(&r);
    if (ok < 0)
        return NULL;
    return h ? h : xstrdup(t->host ? t->host : "localhost");
}

static double jreal(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int nvsmi_gpus(struct transport *t, struct gpu_info **out, size_t *n,
                      exa_error_t *err)
{
    const char *argv[] = {"nvidia-smi", "--query-gpu=" NVSMI_PRODUCT_QUERY,
                          "--format=csv,noheader,nounits", NULL};
    struct cmd_spec spec = CMD_SPEC_INIT;
    struct strvec fields = STRVEC_INIT;
    struct transport_result r = TRANSPORT_RESULT_INIT;
    const char *kind = NULL;
    json_t *doc = NULL, *gpus;
    struct gpu_info *v = NULL;
    char *host = NULL;
    size_t nr;
    int ran = probe_run(t, argv, &r, err), rc = -1;
    if (ran < 0)
        goto out;
    if (ran == 0 || r.rc != 0) {
        sched_fail(t, "nvidia-smi", &r, err);
        goto out;
    }
    /* noheader: the columns are the query's, read from the argv run */
    cmd_spec_from_argv(argv, 3, &spec);
    for (size_t i = 0; i < spec.ncols; i++)
        strvec_push(&fields, spec.cols[i].name);
    cmd_spec_release(&spec);
    doc = nvsmi_parse(r.out.buf, r.out.len, (const char *const *)fields.v,
                      fields.nr, &kind, err);
    strvec_clear(&fields);
    if (!doc) {
        exa_err_prefix(err, "nvidia-smi on '%s'", t->host);
        goto out;
    }
    if (!(host = remote_hostname(t, err)))
        goto out;
    gpus = json_object_get(doc, "gpus");
    nr = json_array_size(gpus);
    v = xcalloc(nr ? nr : 1, sizeof(*v));
    for (size_t i = 0; i < nr; i++) {
        const json_t *o = json_array_get(gpus, i);
        v[i].node = xstrdup(host);
        v[i].index = jint(o, "index");
        v[i].uuid = join_or_null(jx_get_str(o, "uuid", NULL));
        v[i].name = join_or_null(jx_get_str(o, "name", NULL));
        v[i].mem_total_mb = jint(o, "mem_total_mb");
        v[i].mem_used_mb = jint(o, "mem_used_mb");
        v[i].util_pct = jreal(o, "util_pct");
        v[i].power_w = jreal(o, "power_w");
        v[i].state = xstrdup("online");
    }
    *out = v;
    *n = nr;
    rc = 0;
out:
    free(host);
    json_decref(doc);
    transport_result_release(&r);
    return rc;
}

/*
 * A GPU counts as busy when it computes or holds more than 256 MiB (an
 * idle device with a driver loaded holds a few MiB): a judgment call, as
 * nvidia-smi has no notion of allocation.
 */
static int gpu_busy(const struct gpu_info *g)
{
    return (!isnan(g->util_pct) && g->util_pct > 0) || g->mem_used_mb > 256;
}

static int nvsmi_nodes(struct transport *t, struct node_info **out, size_t *n,
                       exa_error_t *err)
{
    struct gpu_info *g = NULL;
    size_t ng = 0;
    struct node_info *v;
    long long busy = 0;
    if (nvsmi_gpus(t, &g, &ng, err) < 0)
        return -1;
    v = xcalloc(1, sizeof(*v));
    v->name = xstrdup(ng ? g[0].node : (t->host ? t->host : "localhost"));
    v->cpus = -1;
    v->mem_mb = -1;
    v->gpus = (long long)ng;
    for (size_t i = 0; i < ng; i++)
        busy += gpu_busy(&g[i]);
    v->gpus_used = busy;
    v->gpu_model = ng && g[0].name ? xstrdup(g[0].name) : NULL;
    v->state = xstrdup(!busy                   ? "idle"
                       : busy == (long long)ng ? "allocated"
                                               : "mixed");
    v->raw_state = xstrdup("nvidia-smi");
    strvec_init(&v->partitions);
    gpu_infos_free(g, ng);
    *out = v;
    *n = 1;
    return 0;
}

const struct probe probe_nvsmi = {"nvidia-smi", "unmanaged", nvsmi_available,
                                  nvsmi_caps,   nvsmi_nodes, nvsmi_gpus};
