/*
 * gate.h - the one way to reach a cluster: open it by name for a purpose.
 *
 * Every action on a cluster (the CLI's `exa hpc ...` and `exa pipeline run
 * --cluster`, `exa serve`'s collectors, and later the REST API, the MCP
 * server and the workers) goes through gate_open(), which
 *
 *   1. resolves the cluster: a registered name (clusters.yaml merged with
 *      the platform.db governance row, libfleet/governance.h); or, with
 *      none named, the seed's environment target (EXAMLOPS_HPC_SCHEDULER,
 *      EXAMLOPS_HPC_TRANSPORT, EXAMLOPS_HPC_SSH_{HOST,USER,KEY,PORT})
 *      matched against the registry; or mock mode;
 *   2. refuses a host key that does not match the approval, for every
 *      purpose: the fingerprint of the key pinned in known_hosts.d/NAME
 *      (fleet_known_hosts_path()) must equal the host_key_fingerprint
 *      recorded when the cluster was connected and approved, and ssh must
 *      not report a changed or unknown key; a refusal marks the cluster
 *      (store_hostkey_mismatch_set(), shown by `exa hpc clusters`);
 *   3. for GATE_SCHEDULE requires the cluster to be ACTIVE (and
 *      gate_job_insert() checks it again in the transaction that records
 *      the job);
 *   4. builds the transport (libfleet/connect.h) and the scheduler adapter
 *      (libsched/sched.h) the caller then uses through gate_sched().
 *
 * Mock mode (no cluster named, scheduler mock: the default) needs no
 * registration: its transport is transport_from_env() and its jobs are
 * recorded on cluster "default". Mock mode is local: the mock scheduler
 * runs the payload through its transport, so an environment naming an
 * ssh host (EXAMLOPS_HPC_TRANSPORT=ssh or EXAMLOPS_HPC_SSH_HOST) with the
 * mock scheduler is a target like any other (matched, else registered
 * PENDING and refused), and a forced mock (req->mock) then gets the local
 * transport.
 *
 * The jobs table is written through the gate too: gate_job_insert() for a
 * new job, gate_job_record() as the one writer of scheduler status (with
 * the accounting of every job that reached a terminal state), and
 * gate_reconcile() to move stale rows forward in one batched query.
 */
#ifndef EXA_FLEET_GATE_H
#define EXA_FLEET_GATE_H

#include <stddef.h>

#include "libfleet/governance.h"
#include "libsched/accounting.h"
#include "libsched/resources.h"
#include "libsched/sched.h"
#include "libstore/jobs.h"
#include "libstore/store.h"
#include "libtransport/transport.h"
#include "libutil/error.h"
#include "libutil/strvec.h"

/* The cluster name mock-mode jobs are recorded under. */
#define GATE_MOCK_CLUSTER "default"
/* The cluster name in-process (mock) pipeline runs are recorded under. */
#define GATE_LOCAL_CLUSTER "local"

/*
 * 1 when a job row's cluster and scheduler (both borrowed, may be NULL)
 * name a job of mock mode itself: scheduler "mock" on GATE_MOCK_CLUSTER or
 * GATE_LOCAL_CLUSTER. A registered cluster whose scheduler is mock (an
 * approved mock-over-ssh target) is not: its jobs go through the gate
 * like any other cluster's. 0 otherwise.
 */
int gate_is_mock_job(const char *cluster, const char *scheduler);

enum gate_purpose {
    GATE_READ,     /* discovery, queue, status, logs, collection */
    GATE_SCHEDULE, /* submit, cancel, pipeline run, provisioning */
};

struct gate_req {
    /* A registered cluster's name, or NULL. With NULL and use_env:
     * EXAMLOPS_HPC_CLUSTER, else the environment target, else mock mode.
     * A named cluster always wins over the environment target. */
    const char *cluster;
    enum gate_purpose purpose;
    int use_env;         /* 1: consult the environment as above */
    int mock;            /* 1: mock mode whatever the environment says, jobs
                            recorded under cluster (NULL: "default") */
    store_t *st;         /* borrowed open store, or NULL: open db_path */
    const char *db_path; /* NULL: store_default_path() */
    const char *regpath; /* NULL: registry_default_path() */
    const char *actor;   /* who asks (audit); NULL: audit_actor() */
    /* Optional caller buffer: receives the resolved cluster's name, also
     * when gate_open() refuses it (for a hint such as 'exa hpc approve
     * NAME'); "" when nothing was resolved. */
    char *cluster_out;
    size_t cluster_out_len;
};

struct gate; /* opaque */

/*
 * Open the cluster req asks for (borrowed; nothing of it is kept but a
 * copy of the names). The environment target (use_env, no cluster named,
 * scheduler not mock) is matched against the registered clusters on
 * scheduler, transport and, for ssh, host, port (22 when unset) and user
 * (unset matches unset only); one match is that cluster; several are
 * EXA_EUSAGE listing them; none registers the target PENDING through
 * gov_connect() (name gate_env_name(), requested_by the actor, its host
 * key pinned from EXAMLOPS_HPC_SSH_KNOWN_HOSTS or else ssh-keyscan) and
 * fails EXA_ENOTAPPROVED "... ('exa hpc approve NAME')".
 * Errors (nothing is left open):
 *   EXA_ENOTFOUND     "unknown cluster: 'X' ..."
 *   EXA_ENOTAPPROVED  GATE_SCHEDULE on a cluster not ACTIVE
 *   EXA_ETRANSPORT    host key mismatch: "host key for 'HOST' changed:
 *                     cluster 'X' was approved with SHA256:A but ... holds
 *                     SHA256:B" (also when ssh itself refuses the key;
 *                     then B is what the server offers now); the cluster
 *                     is marked in platform.db
 *   EXA_ECONFIG       store, registry, bad environment value
 *   EXA_EUSAGE        unknown scheduler kind, ambiguous environment target
 * Returns the gate (gate_close()), or NULL with err.
 */
struct gate *gate_open(const struct gate_req *req, exa_error_t *err);

/* Close the adapter, the transport, the fleet view and (when the gate
 * opened it) the store. NULL is accepted. */
void gate_close(struct gate *g);

/* The cluster's name ("default" in mock mode); borrowed, valid until
 * gate_close(). */
const char *gate_name(const struct gate *g);
/* The cluster's scheduler kind: "slurm", "flux" or "mock", or for a
 * cluster opened for GATE_READ another word ("nvidia-smi", "unknown") for
 * which gate_sched() is NULL; borrowed. */
const char *gate_scheduler(const struct gate *g);
/* 1 in mock mode. */
int gate_is_mock(const struct gate *g);
/* The merged registered cluster, NULL in mock mode; borrowed. */
const struct fleet_cluster *gate_cluster(const struct gate *g);
/* The adapter (NULL when gate_scheduler() has none, see above), the
 * transport and the store; borrowed, valid until gate_close(). */
struct sched *gate_sched(struct gate *g);
struct transport *gate_transport(struct gate *g);
store_t *gate_store(struct gate *g);

/*
 * Append to out the key lines of known_hosts text (blank, comment and
 * @revoked lines skipped) whose key has the OpenSSH fingerprint fpr, each
 * with its newline: what a pin may hold, since ssh trusts every key of
 * the file and the approval records one fingerprint. 0, or -1 when no line
 * has fpr (out unchanged).
 */
int gate_host_key_lines(const char *text, const char *fpr, struct strbuf *out);

/*
 * The host key check of gate_open() for a caller that already holds the
 * merged cluster c (borrowed) and a store st (may be NULL: the mismatch
 * is then not recorded): for an ssh cluster whose
 * approval recorded a host key fingerprint, every key pinned in
 * known_hosts.d/NAME (gate_host_key_lines()) must have that fingerprint;
 * the first other one is named as what the pin holds; a pin that cannot
 * be checked whole (a NUL byte, or over 1 MiB) holds "an unreadable key".
 * A mismatch (or no key pinned) is recorded with store_hostkey_mismatch_set()
 * and fails with EXA_ETRANSPORT, the message of gate_open(). 0 when they agree
 * (the record, if any, is cleared), for local clusters, and for clusters never
 * pinned; -1 with err otherwise.
 */
int gate_check_host_key(store_t *st, const struct fleet_cluster *c,
                        exa_error_t *err);

/*
 * Look at err, a failure of a command run through g's transport: when ssh
 * refused the host key ("REMOTE HOST IDENTIFICATION HAS CHANGED", "Host key
 * verification failed", as libtransport/ssh.c reports them), rewrite it
 * into the mismatch error above (both fingerprints; the server's read with
 * ssh-keyscan) and mark the cluster; when the server still offers the
 * approved key, err says instead that the pin does not vouch for it
 * (EXA_ETRANSPORT, cluster not marked). Returns 1 when err was a host key
 * refusal, else 0 (err untouched).
 */
int gate_check_error(struct gate *g, exa_error_t *err);

/* What gate_submit() stages and submits. */
struct gate_submit_req {
    const char *script;      /* local payload script, run with bash */
    const char *const *args; /* its arguments, NULL-terminated; may be NULL */
    const struct sched_resources *res; /* may be NULL */
    const char *kind;                  /* the job row's kind; NULL: "batch" */
    int dry_run; /* 1: resolve and render only; nothing copied, submitted
                    or recorded (out->script, out->command) */
};

struct gate_submit_out {
    char run_id[13];               /* exa's run id, in the job name */
    char *remote_dir;              /* the job directory on the cluster */
    struct sched_submit_result sr; /* ids, warnings (also "not recorded") */
    char *script;                  /* dry run: the run.sh text */
    struct strvec command;         /* dry run: the submit command's argv */
};

/*
 * Submit r->script on g's cluster (opened for GATE_SCHEDULE): a new run
 * id, its job directory (sched_remote_jobdir()), the script copied there
 * as payload-<basename>, a run.sh (libsched/runscript.h) running `bash
 * payload ARGS...`, sched_submit(), and a jobs row per id through
 * gate_job_insert() (state PENDING, submit time now, the asked nodes, gpus
 * and cpus). out is initialised here; release it with
 * gate_submit_out_release() either way. With r->dry_run the same steps
 * only render: out->script gets run.sh and out->command the scheduler's
 * submit argv (sched.h s->dry_run); nothing is copied to the cluster,
 * submitted or recorded, and out->sr holds no id. Returns 0, or -1 with
 * err (the
 * failing step's; EXA_ENOTAPPROVED when the cluster was rejected while
 * submitting; when a job row cannot be written, for that or any other
 * reason, that job and the later ids of the submission are cancelled:
 * exa never leaves a job it does not record).
 */
int gate_submit(struct gate *g, const struct gate_submit_req *r,
                struct gate_submit_out *out, exa_error_t *err);
void gate_submit_out_release(struct gate_submit_out *out);

/*
 * For work the caller records on the gate's cluster in its own
 * transaction (the task of `exa pipeline run --via worker`): inside that
 * open transaction on gate_store(g), check again that the cluster is
 * ACTIVE and its row bound to its audit chain, as gate_job_insert() does
 * for a job row. 0 (always in mock mode), or -1 with err
 * (EXA_ENOTAPPROVED, EXA_ENOTFOUND, or the binding's error); the caller
 * then rolls back.
 */
int gate_recheck_active(struct gate *g, exa_error_t *err);

/*
 * Record the job j (borrowed; j->cluster is ignored and set to
 * gate_name(g)) just submitted through g. On a registered cluster the row
 * is inserted by store_job_insert_checked(): one BEGIN IMMEDIATE
 * transaction that reads the cluster's state and inserts only when it is
 * ACTIVE and the row agrees with its audit chain
 * (governance_verify_cluster()). When the cluster stopped being ACTIVE
 * (or its row was changed behind exa's back) since gate_open(), the job
 * is cancelled (sched_cancel) and EXA_ENOTAPPROVED returned. An id already
 * recorded on the cluster is updated instead (a retried submission).
 * *id_out (may be NULL) gets the rowid. 0 or -1 with err.
 */
int gate_job_insert(struct gate *g, const struct job_rec *j, long long *id_out,
                    exa_error_t *err);

/*
 * The one writer of scheduler status into the jobs table: write what j
 * says about the job j->id on g's cluster (state, raw state, reason, exit
 * code, signal, times as UTC "...Z", allocation); nothing for
 * SCHED_UNKNOWN. On a terminal state also ask the scheduler's accounting
 * (sched_accounting(): sacct, or flux eventlog + R; tries as there, >= 1)
 * and write it (queue, run and CPU seconds, nodes, cpus, gpus, GPU- and
 * CPU-hours), whoever submitted the job; without accounting the status's
 * own elapsed time and allocation are used. acct (may be NULL) receives
 * the accounting. Returns 1 when accounting was recorded, 0 when not (or
 * the job is not recorded: nothing written), -1 with err for a database
 * error.
 */
int gate_job_record(struct gate *g, const struct sched_job *j, int tries,
                    struct sched_acct *acct, exa_error_t *err);

/*
 * gate_job_record() for jobs[0..n) of g's cluster at once (borrowed):
 * the accounting of every job in a terminal state is asked with one
 * sched_accounting_batch() (one sacct per SACCT_BATCH_IDS ids; tries
 * rounds for records still missing or incomplete), then each job's row is
 * written as gate_job_record() would; SCHED_UNKNOWN entries are skipped.
 * A failed accounting query leaves those jobs with their status only.
 * Every row is tried: one whose write fails does not keep the others
 * from being written. Returns 0, or -1 with err (the first database
 * error) when any row failed.
 */
int gate_job_record_batch(struct gate *g, const struct sched_job *jobs,
                          size_t n, int tries, exa_error_t *err);

/*
 * gate_job_record() for a caller that holds the pieces instead of a gate
 * (a cluster run's own adapter s and store st, the job's cluster name):
 * same writes, same return values. s may be NULL (no accounting asked).
 */
int gate_record_status(store_t *st, struct sched *s, const char *cluster,
                       const struct sched_job *j, int tries,
                       struct sched_acct *acct, exa_error_t *err);

/*
 * Move every recorded non-terminal job of g's cluster forward: one
 * sched_status_batch() over all of them (sacct -S from the oldest submit
 * time), then gate_job_record_batch() over the ids the scheduler knows.
 * *updated (may be NULL) counts rows that reached a terminal state.
 * 0, or -1 with err (the transport's when nothing could be asked).
 */
int gate_reconcile(struct gate *g, size_t *updated, exa_error_t *err);

/*
 * Cancel job id on g's cluster after asking its status: EXA_ENOTFOUND
 * "job 'ID' not found on cluster 'C'" when the scheduler does not know
 * it, EXA_EFAIL "job 'ID' on cluster 'C' already ended STATE: nothing
 * cancelled" when it is terminal, the failed query's error (transport or
 * scheduler, sched_status_failed()) when the status could not be
 * observed; else sched_cancel() (its errors). 0 or -1 with err.
 */
int gate_cancel(struct gate *g, const char *id, exa_error_t *err);

/*
 * The cluster a job id belongs to, from the jobs table of st: with
 * cluster given, that cluster (whether or not the id is recorded: 0);
 * else the one cluster that recorded id. *out (caller frees) is NULL when
 * no cluster recorded it. *scheduler (may be NULL; caller frees) gets the
 * row's scheduler. -1 with err EXA_EUSAGE "job id 'ID' is recorded on
 * several clusters (a, b): pass --cluster" when ambiguous, EXA_ECONFIG for
 * a database error.
 */
int gate_job_cluster(store_t *st, const char *id, const char *cluster,
                     char **out, char **scheduler, exa_error_t *err);

/*
 * The name an unregistered environment target is registered under:
 * "env-<scheduler>-<host>-<port>" for ssh, "env-<scheduler>-local" for the
 * local transport, characters outside [A-Za-z0-9._-] replaced by '-', at
 * most 63 characters. Caller frees.
 */
char *gate_env_name(const char *scheduler, const char *transport,
                    const char *host, int port);

/*
 * The fingerprint (OpenSSH "SHA256:" + unpadded base64 of the SHA-256 of
 * the decoded key blob, libcrypto) of the key pinned for cluster in
 * fleet_known_hosts_path(cluster): its ssh-ed25519 key when there is one,
 * else its first key (fleet_host_key_fingerprint()). Caller frees. NULL
 * with err: EXA_ENOTFOUND when the file is missing, EXA_EPARSE when it
 * holds no key.
 */
char *gate_pinned_fingerprint(const char *cluster, exa_error_t *err);

#endif
