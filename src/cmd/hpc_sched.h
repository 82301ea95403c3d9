/*
 * hpc_sched.h - `exa hpc submit|status|wait|cancel|logs`: the scheduler
 * adapter on the command line. hpc.c puts HPC_SCHED_CMDS in its table.
 */
#ifndef EXA_HPC_SCHED_H
#define EXA_HPC_SCHED_H

#include "cmd/cmd.h"

/*
 * The command handlers: argv[0] is the subcommand name, options as in
 * HPC_SCHED_CMDS below. Each prints through output.c (one JSON document
 * with --json; {"error","exit_code","hint"} on failure, cancel adding
 * "results") and returns the exit status of doc/exit-codes.md: 0 ok,
 * 1 failure (a job not COMPLETED for wait, an unknown id for cancel),
 * 2 usage, 3 configuration (missing script, bad environment value),
 * 4 transport, 5 scheduler, 6 cluster not approved.
 */
int cmd_hpc_submit(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_status(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_wait(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_cancel(struct exa_ctx *ctx, int argc, char **argv);
int cmd_hpc_logs(struct exa_ctx *ctx, int argc, char **argv);

#define HPC_SCHED_CMDS                                                         \
    {"submit", cmd_hpc_submit,                                                 \
     "SCRIPT [--partition P] [--qos Q] [--account A] "                         \
     "[--constraint C] [--time T] [--nodes N] [--ntasks N] "                   \
     "[--cpus-per-task N] [--mem M] [--gpus N] [--job-name NAME] "             \
     "[--array SPEC] [--hold] [--cluster NAME] [--wait] [--dry-run] "          \
     "[-- ARG...]",                                                            \
     "submit a script through the scheduler adapter",                          \
     "Stages SCRIPT and a generated run.sh in a job directory on the\n"        \
     "cluster and submits it (sbatch, flux batch, or inline for mock).\n"      \
     "Arguments after -- are passed to SCRIPT, quoted. Resource flags\n"       \
     "default to EXAMLOPS_HPC_* (then EXAMLOPS_SLURM_*). The job name\n"       \
     "carries a run id, so a retried submit never makes a second job.\n"       \
     "The scheduler is EXAMLOPS_HPC_SCHEDULER, the connection\n"               \
     "EXAMLOPS_HPC_TRANSPORT / EXAMLOPS_HPC_SSH_*.\n"                          \
     "--dry-run prints the resolved cluster, the scheduler command and\n"      \
     "run.sh, and copies, submits and records nothing.\n\n"                    \
     "Options:\n"                                                              \
     "  SCRIPT                the payload, run with bash on the cluster\n"     \
     "  --cluster NAME        the cluster (default EXAMLOPS_HPC_CLUSTER,\n"    \
     "                        else the environment target)\n"                  \
     "  --partition P         the partition (Flux: queue); default\n"          \
     "                        EXAMLOPS_HPC_PARTITION\n"                        \
     "  --qos Q               the quality of service; default "                \
     "EXAMLOPS_HPC_QOS\n"                                                      \
     "  --account A           the account (Flux: bank); default\n"             \
     "                        EXAMLOPS_HPC_ACCOUNT\n"                          \
     "  --constraint C        node features the job needs (sbatch\n"           \
     "                        --constraint)\n"                                 \
     "  --time T              the time limit, e.g. 1:00:00; default\n"         \
     "                        EXAMLOPS_HPC_TIME\n"                             \
     "  --nodes N             nodes; default EXAMLOPS_HPC_NODES\n"             \
     "  --ntasks N            tasks (sbatch --ntasks)\n"                       \
     "  --cpus-per-task C     CPUs per task (sbatch --cpus-per-task)\n"        \
     "  --mem M               memory per node, e.g. 16G (sbatch --mem)\n"      \
     "  --gpus G              GPUs for the job in total; default\n"            \
     "                        EXAMLOPS_HPC_GPUS\n"                             \
     "  --job-name NAME       the job's name (default exa's, with the\n"       \
     "                        run id)\n"                                       \
     "  --array SPEC          a job array, e.g. 0-9 (sbatch --array)\n"        \
     "  --hold                submit held\n"                                   \
     "  --wait                wait for the job to end (exit as hpc wait)\n"    \
     "  --dry-run             print, submit nothing (above)\n"                 \
     "Example: exa hpc submit job.sh --cluster c1 --gpus 1 --dry-run"},        \
        {"status", cmd_hpc_status, "JOBID... [--cluster NAME]",                \
         "state of jobs (one batched query)",                                  \
         "Asks the scheduler once for all JOBIDs (squeue, then sacct for\n"    \
         "those that left the queue) and records what it learned."             \
         "\n"                                                                  \
         "\n"                                                                  \
         "Options:\n"                                                          \
         "  JOBID...              job ids as the scheduler prints them\n"      \
         "  --cluster NAME        the cluster (default: the one that "         \
         "recorded the\n"                                                      \
         "                        job, else EXAMLOPS_HPC_CLUSTER)\n"           \
         "Example: exa hpc status 4242 4243 --cluster c1"},                    \
        {"wait", cmd_hpc_wait, "JOBID... [--cluster NAME]",                    \
         "wait until jobs end",                                                \
         "Polls every EXAMLOPS_HPC_POLL_INTERVAL s (10) until every job is\n"  \
         "terminal, at most EXAMLOPS_SLURM_MAX_WAIT_S s (86400), giving up\n"  \
         "after EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS (5) polls that do not see "   \
         "a\n"                                                                 \
         "job. Exit 0 when all COMPLETED, 1 otherwise."                        \
         "\n"                                                                  \
         "\n"                                                                  \
         "Options:\n"                                                          \
         "  JOBID...              job ids as the scheduler prints them\n"      \
         "  --cluster NAME        the cluster (default: the one that "         \
         "recorded the\n"                                                      \
         "                        job, else EXAMLOPS_HPC_CLUSTER)\n"           \
         "Example: exa hpc wait 4242 --cluster c1"},                           \
        {"cancel", cmd_hpc_cancel, "JOBID... [--cluster NAME]",                \
         "cancel jobs (scancel, flux cancel)",                                 \
         "Cancels each JOBID. When any fails the exit status is the first\n"   \
         "failure's and --json prints {error, exit_code, hint, results}."      \
         "\n"                                                                  \
         "\n"                                                                  \
         "Options:\n"                                                          \
         "  JOBID...              job ids as the scheduler prints them\n"      \
         "  --cluster NAME        the cluster (default: the one that "         \
         "recorded the\n"                                                      \
         "                        job, else EXAMLOPS_HPC_CLUSTER)\n"           \
         "Example: exa -y hpc cancel 4242 --cluster c1"},                      \
        {"logs", cmd_hpc_logs, "JOBID [--cluster NAME] [--err]",               \
         "print a job's output log",                                           \
         "Fetches <job dir>/<JOBID>.out (or .err) over the transport,\n"       \
         "keeping its last EXAMLOPS_HPC_LOG_MAX_BYTES bytes (8 MiB); a\n"      \
         "warning on stderr says when the start was cut."                      \
         "\n"                                                                  \
         "\n"                                                                  \
         "Options:\n"                                                          \
         "  JOBID                 the job\n"                                   \
         "  --cluster NAME        the cluster (default: the one that "         \
         "recorded it)\n"                                                      \
         "  --err                 the job's stderr (.err) instead of its "     \
         "output\n"                                                            \
         "Example: exa hpc logs 4242 --err"},

#endif
