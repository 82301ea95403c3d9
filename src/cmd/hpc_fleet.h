/*
 * hpc_fleet.h - the fleet commands of `exa hpc`: discovery (detect, nodes,
 * gpus), registry and approval (connect, clusters, approve, reject),
 * placement (place, preflight, queue, capacity) and `audit verify`.
 * Each returns the exit status (doc/exit-codes.md).
 */
#ifndef EXA_HPC_FLEET_H
#define EXA_HPC_FLEET_H

#include "cmd/cmd.h"

int cmd_hpc_detect(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_nodes(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_gpus(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_connect(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_clusters(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_approve(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_reject(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_place(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_preflight(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_queue(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_capacity(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_audit(struct exa_ctx *ctx, int argc, char **argv);

#endif
