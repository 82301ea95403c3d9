/*
 * probe_int.h - private to probe.c and the built-in probes
 * (probe_slurm.c, probe_flux.c, probe_nvsmi.c): the three probe vtables
 * the registry starts with, the count-only GPU helpers, and the small
 * command-running helpers every probe uses. Not for other callers; the
 * public surface is probe.h.
 */
#ifndef EXA_PROBE_INT_H
#define EXA_PROBE_INT_H

#include <string.h>

#include "libdiscovery/probe.h"
#include "libsched/parse_message.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* The built-in probes, registered in this order (probe.c). */
extern const struct probe probe_flux;
extern const struct probe probe_slurm;
extern const struct probe probe_nvsmi;

/* GPU entries from node records for nodes[0..nn): one per GPU a node
 * counts, named (node, index: the GRES index), model from the node's
 * gpu_model, memory -1, utilization and power NAN; state the node's
 * ("down", "drain") when it takes no work; where the node names its GPUs
 * in use by index (gpu_used_mask: Slurm GresUsed's IDX list, Flux's
 * allocated R) and no job is completing there, "allocated" for those,
 * and for the others "idle" on an idle or mixed node, "unknown" on an
 * allocated one (a whole-node job holds GPUs no index names); else by
 * the count: "allocated" when its count of used
 * GPUs (Slurm GresUsed, Flux's allocated R) is all of them, "idle" on an
 * idle node with none counted, else "unknown" (a count does not say
 * which are used, nor GPUs shared as shards or MPS). *out is malloc'ed
 * (free with gpu_infos_free), *n its length; never fails. */
void probe_gpus_from_nodes(const struct node_info *nodes, size_t nn,
                           struct gpu_info **out, size_t *n);

/* list_gpus for a scheduler that only gives counts: list the nodes with
 * list, then probe_gpus_from_nodes. Returns 0, or -1 with err filled by
 * list. */
int probe_gpus_by_count(struct transport *t,
                        int (*list)(struct transport *, struct node_info **,
                                    size_t *, exa_error_t *),
                        struct gpu_info **out, size_t *n, exa_error_t *err);

/* Run argv and require exit 0: 1 ok, 0 absent or non-zero, -1 transport. */
static inline int run_ok(struct transport *t, const char *const *argv,
                         struct transport_result *res, exa_error_t *err)
{
    int r = probe_run(t, argv, res, err);
    if (r <= 0)
        return r;
    return res->rc == 0;
}

/* A command that ran but failed: the scheduler's own words (the first
 * line of its stderr, else of its stdout; parse_message.h). */
static inline int sched_fail(struct transport *t, const char *prog,
                             const struct transport_result *res,
                             exa_error_t *err)
{
    const struct strbuf *s = res->err.len ? &res->err : &res->out;
    char *msg = tool_message(s->buf, s->len, 200);
    int rc = exa_err(err, EXA_ESCHED, "%s on '%s' exited %d%s%s", prog,
                     t->host ? t->host : "localhost", res->rc, msg ? ": " : "",
                     msg ? msg : "");
    free(msg);
    return rc;
}

/* A malloc'ed copy of s, or NULL when s is NULL or empty. */
static inline char *join_or_null(const char *s)
{
    return s && *s ? xstrdup(s) : NULL;
}

/* Integer member k of o (a real is truncated), or -1. */
static inline long long jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return (long long)json_real_value(v);
    return -1;
}

#endif
