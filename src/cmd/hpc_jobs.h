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
     "jobs. --json prints the full rows."},

#endif
