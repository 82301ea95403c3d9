/*
 * probe_flux.c - the flux probe: `flux version` for presence, `flux
 * account --help` for flux-accounting, `flux resource list` for the nodes
 * (parsed by parse_flux_resource.c), drain states from `flux resource
 * status` (the list shows drained nodes as down), the resource set R
 * (`flux resource R`, RFC 20) giving each node's cores and GPUs (the
 * list's rows group nodes and overlap), the allocated set's R (`flux
 * resource R --states=allocated`) for what jobs hold on each node, and
 * GPUs as counts per node. Read-only commands only,
 * each through the transport; registered by probe.c as "flux".
 */
#include "libdiscovery/probe_int.h"

#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libsched/parse_flux.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static int flux_available(struct transport *t, char **version, exa_error_t *err)
{
    const char *argv[] = {"flux", "version", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1 && version) {
        *version = flux_version_parse(r.out.buf, r.out.len);
        if (!*version)
            *version = tool_message(r.out.buf, r.out.len, 0);
    }
    transport_result_release(&r);
    return ok;
}

/*
 * The queues as partitions (parse_flux_queue_list()): `flux queue list
 * -n -o FLUX_QUEUE_LIST_FORMAT`. Optional: a failure (an older flux
 * without these fields, an unreadable answer) leaves none, with a note.
 */
static void flux_queues(struct transport *t, struct cluster_caps *caps)
{
    const char *argv[] = {
        "flux", "queue", "list", "-n", "-o", FLUX_QUEUE_LIST_FORMAT, NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    exa_error_t e = EXA_ERROR_INIT;
    if (run_ok(t, argv, &r, &e) == 1) {
        if (parse_flux_queue_list(r.out.buf, r.out.len, &caps->partitions,
                                  &caps->npartitions, &e) < 0)
            strvec_pushf(&caps->notes, "queues not read: %s", e.text);
    } else {
        strvec_push(&caps->notes, "queues not read: flux queue list failed");
    }
    transport_result_release(&r);
}

static int flux_caps(struct transport *t, struct cluster_caps *caps,
                     exa_error_t *err)
{
    const char *acct[] = {"flux", "account", "--help", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok;
    if (!caps->version && flux_available(t, &caps->version, err) < 0)
        return -1;
    ok = run_ok(t, acct, &r, err);
    transport_result_release(&r);
    if (ok < 0)
        return -1;
    caps->accounting = ok == 1;
    if (!caps->accounting)
        strvec_push(&caps->notes, "flux-accounting not detected \u2014 "
                                  "--account (--bank) is dropped");
    flux_queues(t, caps);
    return 0;
}

/* The ids of a JSON array of integers 0..63 as a mask: 1, or 0 when a
 * is not such an array. */
static int ids_mask(const json_t *a, unsigned long long *mask)
{
    size_t i;
    const json_t *v;
    *mask = 0;
    if (!json_is_array(a))
        return 0;
    json_array_foreach(a, i, v)
    {
        json_int_t x = json_integer_value(v);
        if (!json_is_integer(v) || x < 0 || x > 63)
            return 0;
        *mask |= 1ULL << x;
    }
    return 1;
}

static int flux_nodes(struct transport *t, struct node_info **out, size_t *n,
                      exa_error_t *err)
{
    const char *argv[] = {"flux", "resource", "list", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    const char *kind = NULL;
    json_t *doc = NULL, *nodes;
    struct node_info *v = NULL;
    size_t nr;
    int ran = probe_run(t, argv, &r, err), rc = -1;
    if (ran < 0)
        goto out;
    if (ran == 0 || r.rc != 0) {
        sched_fail(t, "flux resource list", &r, err);
        goto out;
    }
    doc = flux_resource_parse(r.out.buf, r.out.len, &kind, err);
    if (!doc) {
        exa_err_prefix(err, "flux resource list on '%s'", t->host);
        goto out;
    }
    {
        /* The list cannot say three things (flux_resource_apply()): it
         * folds drained/draining nodes into "down", which only `flux
         * resource status` names; its rows overlap (a draining node
         * running a job is in the allocated and the down row, a partly
         * used one in the free and the allocated row), so a node's cores
         * and GPUs are R's; and what jobs hold on each node is the
         * allocated set's R. Each optional: its failure leaves the list's
         * word. */
        const char *sv[] = {"flux", "resource", "status", NULL};
        const char *rv[] = {"flux", "resource", "R", NULL};
        const char *av[] = {"flux", "resource", "R", "--states=allocated",
                            NULL};
        struct transport_result rs = TRANSPORT_RESULT_INIT;
        struct transport_result rr = TRANSPORT_RESULT_INIT;
        struct transport_result ra = TRANSPORT_RESULT_INIT;
        int have_st = run_ok(t, sv, &rs, NULL) == 1;
        int have_R = run_ok(t, rv, &rr, NULL) == 1;
        int have_alloc = run_ok(t, av, &ra, NULL) == 1;
        flux_resource_apply(doc, have_st ? rs.out.buf : NULL, rs.out.len,
                            have_R ? rr.out.buf : NULL, rr.out.len,
                            have_alloc ? ra.out.buf : NULL, ra.out.len);
        transport_result_release(&rs);
        transport_result_release(&rr);
        transport_result_release(&ra);
    }
    nodes = json_object_get(doc, "nodes");
    nr = json_array_size(nodes);
    v = xcalloc(nr ? nr : 1, sizeof(*v));
    for (size_t i = 0; i < nr; i++) {
        const json_t *o = json_array_get(nodes, i);
        const json_t *parts = json_object_get(o, "partitions");
        struct node_info *d = &v[i];
        d->name = xstrdup(jx_get_str(o, "name", "?"));
        d->cpus = jint(o, "cpus");
        d->mem_mb = jint(o, "mem_mb");
        d->gpus = jint(o, "gpus");
        d->gpus_used = jint(o, "gpus_used");
        {
            /* the GPUs jobs hold by id (the allocated set's R), where the
             * node's own ids are 0 .. gpus-1, as the entries' indices */
            unsigned long long all, used;
            if (d->gpus > 0 && d->gpus <= 64 &&
                ids_mask(json_object_get(o, "gpu_ids"), &all) &&
                all == (d->gpus == 64 ? ~0ULL : (1ULL << d->gpus) - 1) &&
                ids_mask(json_object_get(o, "gpus_used_idx"), &used) &&
                !(used & ~all)) {
                d->has_gpu_used_mask = 1;
                d->gpu_used_mask = used;
            }
        }
        d->gpu_model = join_or_null(jx_get_str(o, "gpu_type", NULL));
        d->state = xstrdup(jx_get_str(o, "state", "unknown"));
        d->raw_state = join_or_null(jx_get_str(o, "raw_state", NULL));
        strvec_init(&d->partitions);
        for (size_t k = 0; k < json_array_size(parts); k++)
            if (json_is_string(json_array_get(parts, k)))
                strvec_push(&d->partitions,
                            json_string_value(json_array_get(parts, k)));
    }
    *out = v;
    *n = nr;
    rc = 0;
out:
    json_decref(doc);
    transport_result_release(&r);
    return rc;
}

static int flux_gpus(struct transport *t, struct gpu_info **out, size_t *n,
                     exa_error_t *err)
{
    return probe_gpus_by_count(t, flux_nodes, out, n, err);
}

const struct probe probe_flux = {"flux",    "flux",     flux_available,
                                 flux_caps, flux_nodes, flux_gpus};
