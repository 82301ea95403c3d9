/*
 * hpc_observe.h - the observability commands of `exa hpc`
 * (prometheus-sd, job-map); hpc.c lists them through HPC_OBSERVE_CMDS.
 */
#ifndef EXA_HPC_OBSERVE_H
#define EXA_HPC_OBSERVE_H

#include "cmd/cmd.h"

int cmd_hpc_prometheus_sd(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_job_map(struct exa_ctx *ctx, int argc, char **argv);

#define HPC_OBSERVE_CMDS                                                       \
    {"prometheus-sd", cmd_hpc_prometheus_sd, "[--out PATH] [--cluster NAME]",  \
     "write Prometheus file_sd targets for the nodes of ACTIVE clusters",      \
     "Targets: node_exporter on every node (port 9100) and dcgm-exporter\n"    \
     "on GPU nodes (port 9400); per-cluster node_exporter_port and\n"          \
     "dcgm_exporter_port in clusters.yaml override them. Labels: cluster,\n"   \
     "scheduler, tenant (clusters.yaml tenant, else $EXAMLOPS_TENANT,\n"       \
     "else 'default'), job.\n"                                                 \
     "Nodes come from the saved snapshots (exa hpc nodes). --out replaces\n"   \
     "PATH atomically (the old file stays if the write fails); without it\n"   \
     "the JSON is printed."                                                    \
     "\n"                                                                      \
     "\n"                                                                      \
     "Options:\n"                                                              \
     "  --out PATH            write the file_sd file (default: print it)\n"    \
     "  --cluster NAME        only this (ACTIVE) cluster\n"                    \
     "Example: exa hpc prometheus-sd --out /etc/prometheus/exa.json"},         \
    {                                                                          \
        "job-map", cmd_hpc_job_map,                                            \
            "prolog|epilog [--dir DIR] [--job-id ID] [--gpus LIST]",           \
            "write/remove dcgm-exporter GPU-to-job files (Slurm "              \
            "Prolog/Epilog)",                                                  \
            "Run from Slurm's Prolog and Epilog on a compute node. DIR is "    \
            "the\n"                                                            \
            "dcgm-exporter --hpc-job-mapping-dir (default "                    \
            "$EXAMLOPS_JOB_MAP_DIR,\n"                                         \
            "else /var/run/dcgm-job-map). The job id defaults to "             \
            "$SLURM_JOB_ID,\n"                                                 \
            "the GPUs to $SLURM_JOB_GPUS, $SLURM_STEP_GPUS or\n"               \
            "$CUDA_VISIBLE_DEVICES. prolog adds the id to each GPU's file; "   \
            "epilog\n"                                                         \
            "removes it from every file, leaving other jobs' ids.\n\n"         \
            "Options:\n"                                                       \
            "  prolog|epilog         add the job to its GPUs' files, or\n"     \
            "                        remove it\n"                              \
            "  --dir DIR             the mapping directory (default above)\n"  \
            "  --job-id ID           the job (default $SLURM_JOB_ID)\n"        \
            "  --gpus LIST           the GPU indexes (default from Slurm)\n"   \
            "Example: exa hpc job-map prolog --dir /var/run/dcgm-job-map"      \
    }

#endif
