/*
 * preflight.h - can this job run on this cluster, checked before anything
 * is submitted (doc/reference.md §4.6 "Preflight", with the checks
 * §6.30 found missing). Read-only except for one probe file created and
 * removed in the remote work directory.
 *
 * Checks, in order (each one {check, ok, detail}; later checks that need
 * an earlier one are skipped when it failed):
 *   host_key       the pinned known_hosts file exists and its key has the
 *                  fingerprint recorded at connect (ssh only)
 *   transport      `hostname` runs through the transport (for ssh that
 *                  also proves the host key matches the pinned one)
 *   scheduler      the cluster's scheduler answers (probe available)
 *   partition      the partition / queue exists and is UP (when asked)
 *   account        the account (bank) is associated with the user, and
 *   qos            the QOS is allowed for that association (slurm:
 *                  `sacctmgr -n -P show assoc user=U format=account,qos`)
 *   gpus           enough GPUs in total on usable nodes
 *   gpus_per_node  N usable nodes with ceil(G/N) GPUs each
 *   slots          flux only: the -n/-g shape flux batch gets
 *                  (sched_flux_slots(): one slot when neither tasks nor
 *                  nodes are asked; GPUs must split evenly over slots)
 *   nodes          enough usable (not down/drained) nodes
 *   workdir        the remote work directory can be created and written
 *   remote_exa     the remote exa (EXAMLOPS_HPC_REMOTE_EXA) runs
 */
#ifndef EXA_PREFLIGHT_H
#define EXA_PREFLIGHT_H

#include <jansson.h>
#include <stddef.h>

#include "libtransport/transport.h"
#include "libutil/error.h"

struct preflight_ask {
    int gpus;              /* job total; 0: no GPU checks */
    int nodes;             /* >= 1; 0: not asked (the checks count one;
                            * Flux places the slots, flux batch gets no -N) */
    const char *partition; /* NULL: not checked */
    const char *account;   /* NULL: not checked */
    const char *qos;       /* NULL: not checked */
    const char *user;      /* remote user for associations; NULL: `id -un` */
    int ntasks;            /* tasks (Flux slots); 0: not asked */
};

struct preflight_target {
    const char *cluster;            /* name, for messages */
    const char *scheduler;          /* slurm | flux | unmanaged */
    int ssh;                        /* the transport is ssh: host key checked */
    const char *known_hosts;        /* pinned file, for messages */
    const char *pinned_fingerprint; /* of the pinned file's key, NULL when
                                       the file is missing or unreadable */
    const char *host_key_fingerprint; /* recorded at connect, or NULL */
    const char *workdir;              /* remote work directory */
    const char *remote_exa;           /* program to run with --version */
};

struct preflight_check {
    char *check;
    int ok;
    char *detail;
};

struct preflight_report {
    struct preflight_check *checks;
    size_t n, alloc;
    int ok; /* every check passed */
};

/*
 * Run the checks through t. Never fails as a whole: transport and
 * scheduler problems become failed checks with their messages. Release
 * with preflight_report_release().
 */
void preflight_run(struct transport *t, const struct preflight_target *tg,
                   const struct preflight_ask *ask,
                   struct preflight_report *rep);
void preflight_report_release(struct preflight_report *rep);

/* {"cluster", "ok", "checks": [{check, ok, detail}]} (new reference). */
json_t *preflight_report_json(const char *cluster,
                              const struct preflight_report *rep);

#endif
