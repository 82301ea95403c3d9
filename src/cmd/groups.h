/*
 * groups.h - the command groups and top-level commands exa.c dispatches.
 * Each is defined in its own file (hpc.c, pipeline.c, ...).
 */
#ifndef EXA_GROUPS_H
#define EXA_GROUPS_H

#include "cmd/cmd.h"

extern const struct exa_group group_pipeline;
extern const struct exa_group group_models;
extern const struct exa_group group_hpc;
extern const struct exa_group group_finops;
extern const struct exa_group group_debug;
extern const struct exa_group group_task;
extern const struct exa_group group_provision;

/* `exa worker` (run, list, token) and the task shim (worker.c). */
#define WORKER_USAGE                                                           \
    "--url URL --worker-id ID --join-token-stdin [options] | list | token "    \
    "--worker-id ID"
int cmd_worker(struct exa_ctx *ctx, int argc, char **argv);
int cmd_task_shim(struct exa_ctx *ctx, int argc, char **argv);
extern const struct exa_group group_auth;
extern const struct exa_group group_mcp;

/* `exa train`, the payload of cluster runs (pipeline.c). */
#define TRAIN_USAGE                                                            \
    "--model M --dataset D --dataset-path FILE --out DIR [--dummy] "           \
    "[--threads N] [--max-skip SHARE]"
int cmd_train(struct exa_ctx *ctx, int argc, char **argv);

/* `exa serve`: /metrics, /healthz, the REST API and the console
 * (serve.c). */
#define SERVE_USAGE                                                            \
    "[--listen HOST:PORT] [--interval SECONDS] [--once] "                      \
    "[--tls-cert FILE --tls-key FILE] [--insecure-http] "                      \
    "[--metrics-token TOKEN | --metrics-token-file FILE] [--secure-cookies] "  \
    "[--trusted-proxy ADDR] "                                                  \
    "[--worker-listen HOST:PORT [--worker-tls-cert FILE --worker-tls-key "     \
    "FILE] [--worker-insecure-http]]"
int cmd_serve(struct exa_ctx *ctx, int argc, char **argv);

#endif
