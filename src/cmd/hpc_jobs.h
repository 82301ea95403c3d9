/*
 * hpc_jobs.h - `exa hpc jobs`: the jobs exa recorded, on every cluster.
 * hpc.c puts HPC_JOBS_CMDS in its command table.
 */
#ifndef EXA_HPC_JOBS_H
#define EXA_HPC_JOBS_H

#include "cmd/cmd.h"

/* exa hpc jobs [--model M] [--cluster C] [--state S] [--limit N] */
int cmd_hpc_jobs(struct exa_ctx *ctx, int argc, char **argv);

#define HPC_JOBS_CMDS                                                          \
    {"jobs", cmd_hpc_jobs,                                                     \
     "[--model M] [--cluster C] [--state S] [--limit N]",                      \
     "jobs exa recorded, newest first",                                        \
     "Lists recorded jobs from platform.db, newest first (default 20).\n"      \
     "Jobs belong to a cluster: the same job id on two clusters is two\n"      \
     "jobs. --json prints the full rows."                                      \
     "\n"                                                                      \
     "\n"                                                                      \
     "Options:\n"                                                              \
     "  --cluster, -c NAME    only this cluster's jobs (an unknown name is "   \
     "an error)\n"                                                             \
     "  --model, -m M         only jobs that trained model M\n"                \
     "  --state, -s S         only jobs in state S (RUNNING, COMPLETED, "      \
     "...)\n"                                                                  \
     "  --limit, -n N         at most N jobs (default 20)\n"                   \
     "  --refresh             ask the schedulers about open jobs first\n"      \
     "Example: exa hpc jobs --cluster c1 --state FAILED"},

#endif
