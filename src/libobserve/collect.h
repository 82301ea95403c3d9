/*
 * collect.h - the exporter's sources for real clusters: one node command
 * (Flux: list, status and R) and one job command per collection, run over the
 * cluster's transport and read by exa's own parsers
 * (libdiscovery/parse_sinfo.h, libsched/parse_slurm.h,
 * libdiscovery/parse_flux_resource.h, libsched/parse_flux.h) into an
 * obs_snapshot.
 */
#ifndef EXA_COLLECT_H
#define EXA_COLLECT_H

#include <stddef.h>

#include "libobserve/exporter.h"

/* The commands, as argv (NULL-terminated, static). */
extern const char *const obs_slurm_nodes_argv[]; /* sinfo -N -O ... */
extern const char *const obs_slurm_jobs_argv[];  /* squeue -a -r -O ... */
extern const char *const obs_flux_nodes_argv[];  /* flux resource list */
extern const char *const obs_flux_status_argv[]; /* flux resource status */
extern const char *const obs_flux_R_argv[];      /* flux resource R */
/* flux resource R --states=allocated */
extern const char *const obs_flux_alloc_argv[];
extern const char *const obs_flux_jobs_argv[]; /* flux jobs -A --count=0 -o */

/*
 * Parse the output of the matching command into s (appending nodes or
 * jobs). Pure functions: bytes in, records out. Return 0, or -1 with err
 * (EXA_EPARSE) when the output is not what the command prints.
 */
int obs_parse_slurm_nodes(const char *buf, size_t len, struct obs_snapshot *s,
                          exa_error_t *err);
int obs_parse_slurm_jobs(const char *buf, size_t len, struct obs_snapshot *s,
                         exa_error_t *err);
int obs_parse_flux_nodes(const char *buf, size_t len, struct obs_snapshot *s,
                         exa_error_t *err);
int obs_parse_flux_jobs(const char *buf, size_t len, struct obs_snapshot *s,
                        exa_error_t *err);

/*
 * `flux resource list` output buf completed by the outputs of `flux
 * resource status` (drain states), `flux resource R` (per-node cores and
 * GPUs) and `flux resource R --states=allocated` (alloc: each node's
 * cores and GPUs held by jobs, obs_node.cpus_used and gpus_used), each
 * NULL when not had (flux_resource_apply()). Pure; 0 or -1 with err as
 * obs_parse_flux_nodes(), which is this with all three NULL.
 */
int obs_parse_flux_nodes_full(const char *buf, size_t len, const char *status,
                              size_t status_len, const char *R, size_t R_len,
                              const char *alloc, size_t alloc_len,
                              struct obs_snapshot *s, exa_error_t *err);

/*
 * Runs argv on a cluster and puts its stdout in out. Returns 0 when the
 * command ran and exited 0, else -1 with err (transport failure, timeout,
 * or non-zero exit with the first stderr line).
 */
typedef int (*obs_run_f)(void *ctx, const char *const *argv, struct strbuf *out,
                         exa_error_t *err);

/*
 * A source for scheduler "slurm" or "flux" running its commands through
 * run(ctx, ...); destroy(ctx) (may be NULL) is called when the source is
 * freed. Returns NULL with err (EXA_ECONFIG) for another scheduler.
 */
struct obs_source *obs_source_new(const char *cluster, const char *scheduler,
                                  obs_run_f run, void *ctx,
                                  void (*destroy)(void *ctx), exa_error_t *err);

/* What obs_collect_factory() records when it is given one as ctx. */
struct obs_collect_ctx {
    int refused;       /* clusters the gate refused to open */
    exa_error_t first; /* the first refusal (e.g. a host key mismatch) */
};

/*
 * obs_source_factory_f for `exa serve`: a source for an ACTIVE Slurm or
 * Flux cluster, opened through the gate (libfleet/gate.h, GATE_READ: the
 * registered connection, the pinned host key checked against the
 * approval). The source is concurrent (obs_source.concurrent: the node and
 * job commands run at the same time), and every collection is followed by
 * gate_reconcile() (obs_source.after), so the jobs table's stale rows move
 * forward (one batched status query, and the accounting of ended jobs). ctx may
 * be NULL or a struct obs_collect_ctx that counts refusals. Returns NULL with
 * err for a scheduler without a collector (mock, unknown) or a cluster the gate
 * refuses.
 */
struct obs_source *obs_collect_factory(const struct fv_cluster *c, void *ctx,
                                       exa_error_t *err);

#endif
