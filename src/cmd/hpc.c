/*
 * hpc.c - the `exa hpc` command table. The commands themselves live in
 * hpc_<area>.c files (jobs, sched, fleet, observe), each with its header,
 * so areas can grow independently; this file only lists them, in the help
 * order of the reference (discovery, registry & approval, placement & jobs).
 */
#include "cmd/groups.h"
/* area headers */
#include "cmd/hpc_jobs.h"
#include "cmd/hpc_observe.h"

static const struct exa_cmd cmds[] = {
    /* discovery and registry (hpc_fleet.c) */
    /* placement, queue, capacity (hpc_fleet.c) */
    /* jobs (hpc_jobs.c) */
    HPC_JOBS_CMDS
    /* scheduler adapter: submit, status, wait, cancel, logs (hpc_sched.c) */
    /* observability: prometheus-sd, job-map (hpc_observe.c) */
    HPC_OBSERVE_CMDS,
    { NULL },
};

const struct exa_group group_hpc = {
    "hpc", "clusters, jobs and the scheduler adapter", cmds
};
