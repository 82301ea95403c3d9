/*
 * collect.h - the exporter's sources for real clusters: one node command
 * and one job command per collection, run over the cluster's transport
 * and read by exa's own parsers into an obs_snapshot.
 */
#ifndef EXA_COLLECT_H
#define EXA_COLLECT_H

#include "libobserve/exporter.h"

/*
 * obs_source_factory_f for `exa serve`: a source for an ACTIVE Slurm or
 * Flux cluster (ctx unused). Returns NULL with err for a scheduler that
 * has no collector (mock, unknown) or a transport that cannot be made.
 */
struct obs_source *obs_collect_factory(const struct fv_cluster *c, void *ctx,
                                       exa_error_t *err);

#endif
