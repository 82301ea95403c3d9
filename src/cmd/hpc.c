/*
 * hpc.c - the `exa hpc` command table. The commands themselves live in
 * hpc_<area>.c files (jobs, sched, fleet, observe), each with its header,
 * so areas can grow independently; this file only lists them, in the help
 * order of the reference (discovery, registry & approval, placement & jobs).
 */
#include "cmd/groups.h"
/* area headers */
#include "cmd/hpc_fleet.h"
#include "cmd/hpc_jobs.h"
#include "cmd/hpc_observe.h"
#include "cmd/hpc_sched.h"

static const struct exa_cmd cmds[] = {
    /* discovery and registry (hpc_discover.c, hpc_govern.c) */
    {"detect", cmd_hpc_detect,
     "[HOST] [--user/-u U] [--key/-k K] "
     "[--port/-p 22] [--scheduler/-s S]",
     "probe a host (read-only) and "
     "suggest a config",
     NULL},
    {"nodes", cmd_hpc_nodes,
     "[--host/-H H] [--user/-u U] [--key/-k K] "
     "[--port/-p 22] [--scheduler/-s S] [--cluster/-c C] [--save]",
     "list nodes; --save stores a registered cluster's snapshot", NULL},
    {"gpus", cmd_hpc_gpus,
     "[--cluster/-c C | --host/-H H] [--user/-u U] "
     "[--key/-k K] [--port/-p 22] [--scheduler/-s S]",
     "list GPU devices", NULL},
    {"connect", cmd_hpc_connect,
     "HOST [--name/-n N] [--user/-u U] "
     "[--key/-k K] [--port/-p 22] [--scheduler/-s S]",
     "probe a cluster, "
     "pin its host key and register it PENDING",
     NULL},
    {"clusters", cmd_hpc_clusters, "",
     "list registered clusters and their "
     "approval state",
     NULL},
    {"approve", cmd_hpc_approve, "NAME",
     "approve a PENDING cluster for "
     "scheduling (prompts unless --yes)",
     NULL},
    {"reject", cmd_hpc_reject, "NAME [--reason/-r TEXT]",
     "reject a cluster: "
     "scheduling blocked until a new connect (prompts unless --yes)",
     NULL},
    {"audit", cmd_hpc_audit, "[--cluster/-c C] [--since T] | --verify",
     "list audit events, or verify the chain and the cluster rows",
     "--since takes a UTC time (2026-12-01T12:03:10Z or a prefix of it) "
     "or an age (90m, 2h, 1d).\n--verify recomputes the hash chain, "
     "checks its head (a deleted tail) and that every cluster row agrees "
     "with its latest audit event (a row changed behind exa's back); "
     "exit 1 naming what is wrong. `exa hpc audit verify` is the same."},
    /* placement, queue, capacity (hpc_place.c) */
    {"place", cmd_hpc_place,
     "[--gpus/-g G] [--cpus C] [--nodes/-N N] "
     "[--placement-provider P] [--explain] [--no-refresh]",
     "choose the "
     "ACTIVE cluster "
     "that best fits a job",
     "Providers: least-loaded (default; most idle "
     "GPUs, then idle nodes), carbon-aware (lowest declared "
     "carbon_intensity), cost-aware (lowest declared cost_per_gpu_hour).\n"
     "Snapshots older than EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S (300) are "
     "refreshed through the cluster's transport, or flagged when that "
     "fails (--no-refresh: only flag)."},
    {"preflight", cmd_hpc_preflight,
     "NAME [--gpus/-g G] [--nodes/-N N] "
     "[--ntasks/-n T] [--partition P] [--account A] [--qos Q]",
     "check that a job can run "
     "on an ACTIVE cluster (exit 1 on any failure)",
     NULL},
    {"queue", cmd_hpc_queue, "[--cluster/-c NAME]",
     "the scheduler queue "
     "of an ACTIVE cluster",
     NULL},
    {"capacity", cmd_hpc_capacity, "[--no-refresh]",
     "idle/total GPUs, "
     "utilization, GPU-hours, cost and snapshot age per ACTIVE cluster",
     "Snapshots older than EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S (300) are "
     "refreshed through the cluster's transport, or flagged (stale: true "
     "and the error) when that fails (--no-refresh: only flag)."},
    /* jobs (hpc_jobs.c) */
    HPC_JOBS_CMDS
        /* scheduler adapter: submit, status, wait, cancel, logs (hpc_sched.c)
         */
        HPC_SCHED_CMDS
            /* observability: prometheus-sd, job-map (hpc_observe.c) */
            HPC_OBSERVE_CMDS,
    {NULL},
};

const struct exa_group group_hpc = {
    "hpc", "clusters, jobs and the scheduler adapter", cmds};
