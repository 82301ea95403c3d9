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
     "Probes HOST (or this machine) read-only: which scheduler answers,\n"
     "its version, accounting, GPUs, nodes and CPUs, and the host key it\n"
     "offers (not pinned). Prints the complete 'exa hpc connect' line and the\n"
     "clusters.yaml entry that would register it; nothing is registered.\n"
     "\n"
     "Options:\n"
     "  HOST                  the login node (default: this machine)\n"
     "  --user, -u USER       the ssh user (default: ssh's, from "
     "~/.ssh/config)\n"
     "  --key, -k FILE        the private key file (default: ssh's)\n"
     "  --port, -p PORT       the ssh port (default 22)\n"
     "  --scheduler, -s S     the probe: slurm, flux, nvidia-smi or auto "
     "(default)\n"
     "Example: exa hpc detect login1 --user alice --key ~/.ssh/id_ed25519 "
     "--port 2222"},
    {"nodes", cmd_hpc_nodes,
     "[--host/-H H] [--user/-u U] [--key/-k K] "
     "[--port/-p 22] [--scheduler/-s S] [--cluster/-c C] [--save]",
     "list nodes; --save stores a registered cluster's snapshot",
     "Lists the nodes of a registered cluster (--cluster, through its pinned\n"
     "connection) or of an ad-hoc host: state, CPUs, memory, GPUs, GPU model\n"
     "and partitions. --save stores the listing as the cluster's snapshot,\n"
     "which place, capacity and prometheus-sd read.\n"
     "\n"
     "Options:\n"
     "  --cluster, -c NAME    a registered cluster\n"
     "  --host, -H HOST       an ad-hoc login node (read-only, key not "
     "pinned)\n"
     "  --user, -u USER       the ssh user (default: ssh's, from "
     "~/.ssh/config)\n"
     "  --key, -k FILE        the private key file (default: ssh's)\n"
     "  --port, -p PORT       the ssh port (default 22)\n"
     "  --scheduler, -s S     the probe: slurm, flux, nvidia-smi or auto "
     "(default)\n"
     "  --save                store the snapshot (needs --cluster)\n"
     "Example: exa hpc nodes --cluster c1 --save"},
    {"gpus", cmd_hpc_gpus,
     "[--cluster/-c C | --host/-H H] [--user/-u U] "
     "[--key/-k K] [--port/-p 22] [--scheduler/-s S]",
     "list GPU devices",
     "Lists the GPU devices (index, uuid, model, memory, utilization, power)\n"
     "of a registered cluster or an ad-hoc host, from nvidia-smi or the\n"
     "scheduler's GRES.\n"
     "\n"
     "Options:\n"
     "  --cluster, -c NAME    a registered cluster\n"
     "  --host, -H HOST       an ad-hoc host\n"
     "  --user, -u USER       the ssh user (default: ssh's, from "
     "~/.ssh/config)\n"
     "  --key, -k FILE        the private key file (default: ssh's)\n"
     "  --port, -p PORT       the ssh port (default 22)\n"
     "  --scheduler, -s S     the probe: slurm, flux, nvidia-smi or auto "
     "(default)\n"
     "Example: exa hpc gpus --host gpu01 --scheduler nvidia-smi"},
    {"connect", cmd_hpc_connect,
     "HOST [--name/-n N] [--user/-u U] "
     "[--key/-k K] [--port/-p 22] [--scheduler/-s S]",
     "probe a cluster, "
     "pin its host key and register it PENDING",
     "Probes HOST, pins its ssh host key (ssh-keyscan, kept under\n"
     "~/.config/examlops/known_hosts.d/NAME) and registers the cluster\n"
     "PENDING: nothing runs on it until a sysadmin approves it. Connecting a\n"
     "REJECTED cluster again makes it PENDING; a changed identity (host,\n"
     "port, user, keys) needs a new approval.\n"
     "\n"
     "Options:\n"
     "  HOST                  the login node ('local' for this machine)\n"
     "  --name, -n NAME       the cluster's name (default HOST)\n"
     "  --user, -u USER       the ssh user (default: ssh's, from "
     "~/.ssh/config)\n"
     "  --key, -k FILE        the private key file (default: ssh's)\n"
     "  --port, -p PORT       the ssh port (default 22)\n"
     "  --scheduler, -s S     the probe: slurm, flux, nvidia-smi or auto "
     "(default)\n"
     "Example: exa hpc connect login1 --name c1 --user alice --key "
     "~/.ssh/id_ed25519"},
    {"clusters", cmd_hpc_clusters, "",
     "list registered clusters and their "
     "approval state",
     "Lists the clusters of clusters.yaml and platform.db: name, scheduler,\n"
     "transport, host, port, user, state (PENDING, ACTIVE, REJECTED), who\n"
     "approved it, and whether its host key still matches the approval.\n"
     "--json adds fingerprints, capabilities and exporter ports.\n"
     "\n"
     "Example: exa hpc clusters"},
    {"approve", cmd_hpc_approve, "NAME",
     "approve a PENDING cluster for "
     "scheduling (prompts unless --yes)",
     "Approves a PENDING cluster for scheduling after showing its identity\n"
     "(scheduler, host, user, port, client and host key fingerprints).\n"
     "Prompts unless --yes; answering no exits 1 and changes nothing, and\n"
     "--json without --yes never approves. A REJECTED cluster must be\n"
     "connected again first (the error names the connect line).\n"
     "\n"
     "Options:\n"
     "  NAME                  the cluster\n"
     "Example: exa -y hpc approve c1"},
    {"reject", cmd_hpc_reject, "NAME [--reason/-r TEXT]",
     "reject a cluster: "
     "scheduling blocked until a new connect (prompts unless --yes)",
     "Rejects a cluster: nothing is scheduled on it until a new 'exa hpc\n"
     "connect' and an approval. Prompts unless --yes.\n"
     "\n"
     "Options:\n"
     "  NAME                  the cluster\n"
     "  --reason, -r TEXT     why, recorded in the audit log\n"
     "Example: exa -y hpc reject c1 --reason \"maintenance until Monday\""},
    {"audit", cmd_hpc_audit, "[--cluster/-c C] [--since T] | --verify",
     "list audit events, or verify the chain and the cluster rows",
     "--since takes a UTC time (2026-12-01T12:03:10Z or a prefix of it) "
     "or an age (90m, 2h, 1d).\n--verify recomputes the hash chain, "
     "checks its head (a deleted tail) and that every cluster row agrees "
     "with its latest audit event (a row changed behind exa's back); "
     "exit 1 naming what is wrong. `exa hpc audit verify` is the same."
     "\n"
     "\n"
     "Options:\n"
     "  --cluster, -c NAME    only events about this cluster\n"
     "  --since T             only events since T (a UTC time or an age)\n"
     "  --verify              check the chain and the cluster rows instead\n"
     "Example: exa hpc audit --cluster c1 --since 1d"},
    /* placement, queue, capacity (hpc_place.c) */
    {"place", cmd_hpc_place,
     "[--gpus/-g G] [--cpus C] [--nodes/-N N] "
     "[--partition P] [--placement-provider P] [--explain] [--no-refresh]",
     "choose the "
     "ACTIVE cluster "
     "that best fits a job",
     "Providers: least-loaded (default; most idle "
     "GPUs, then idle nodes), carbon-aware (lowest declared "
     "carbon_intensity), cost-aware (lowest declared cost_per_gpu_hour).\n"
     "Snapshots older than EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S (300) are "
     "refreshed through the cluster's transport, or flagged when that "
     "fails (--no-refresh: only flag).\n"
     "With a partition (Flux: queue), or a list a,b, only each cluster's\n"
     "nodes there count; a cluster with none does not fit. Without one, each\n"
     "cluster's default partition as discovery recorded it, when it did not\n"
     "hold every node; else every node.\n"
     "\n"
     "Options:\n"
     "  --gpus, -g G          GPUs in total (default 0)\n"
     "  --cpus C              CPUs (default 0)\n"
     "  --nodes, -N N         nodes (default 1)\n"
     "  --partition P         the partition the job goes to (default\n"
     "                        EXAMLOPS_HPC_PARTITION, else\n"
     "                        EXAMLOPS_SLURM_PARTITION)\n"
     "  --placement-provider P  the provider (default "
     "EXAMLOPS_PLACEMENT_PROVIDER,\n"
     "                        else least-loaded)\n"
     "  --explain             rank every candidate with its score\n"
     "  --no-refresh          never refresh a stale snapshot, only flag it\n"
     "Example: exa hpc place --gpus 4 --explain"},
    {"preflight", cmd_hpc_preflight,
     "NAME [--gpus/-g G] [--nodes/-N N] "
     "[--ntasks/-n T] [--partition P] [--account A] [--qos Q]",
     "check that a job can run "
     "on an ACTIVE cluster (exit 1 on any failure)",
     "Checks, read-only and through the cluster's pinned connection, that a\n"
     "job of this shape can run: transport, scheduler, partition, account,\n"
     "QOS, GPUs in total and per node, nodes, the work directory and the\n"
     "remote exa binary. Exit 1 naming every failed check.\n"
     "\n"
     "Options:\n"
     "  NAME                  an ACTIVE cluster\n"
     "  --gpus, -g G          GPUs in total (default 0)\n"
     "  --nodes, -N N         nodes (default 1)\n"
     "  --ntasks, -n T        tasks (default 1)\n"
     "  --partition P         the partition (default EXAMLOPS_HPC_PARTITION)\n"
     "  --account A           the account (default EXAMLOPS_HPC_ACCOUNT)\n"
     "  --qos Q               the QOS (default EXAMLOPS_HPC_QOS)\n"
     "Example: exa hpc preflight c1 --gpus 2 --partition gpu"},
    {"queue", cmd_hpc_queue, "[--cluster/-c NAME]",
     "the scheduler queue "
     "of an ACTIVE cluster",
     "Lists the scheduler's queue of an ACTIVE cluster (squeue, flux jobs\n"
     "-A): job, name, user, state, nodes and the reason a job waits (squeue\n"
     "%r: Resources, Priority, JobHeldUser, ...; Flux's pending info). An\n"
     "empty queue says so; a query that failed is an error (exit 4 or 5)\n"
     "naming why, never an empty list.\n"
     "\n"
     "Options:\n"
     "  --cluster, -c NAME    the cluster (default EXAMLOPS_HPC_CLUSTER)\n"
     "Example: exa hpc queue --cluster c1"},
    {"capacity", cmd_hpc_capacity, "[--no-refresh]",
     "idle/total GPUs, "
     "utilization, GPU-hours, cost and snapshot age per ACTIVE cluster",
     "Snapshots older than EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S (300) are "
     "refreshed through the cluster's transport, or flagged (stale: true "
     "and the error) when that fails (--no-refresh: only flag)."
     "\n"
     "\n"
     "Options:\n"
     "  --no-refresh          never refresh a stale snapshot, only flag it\n"
     "Example: exa hpc capacity --no-refresh"},
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
