/*
 * cluster_run.h - `exa pipeline run --cluster NAME|auto`: the main job on
 * a real cluster (doc/design.md §7), and its resumption by
 * `exa hpc wait`. This is `--via batch`; `--via worker` is
 * libtask/pipeline_task.h, which shares the payload, the run id, the
 * artifact check and the registration declared at the end of this file.
 *
 * Order (each step talks to the layer below it):
 *   1. resolve the cluster: `auto` ranks the ACTIVE clusters by placement
 *      (libfleet/placement.h, their node snapshots); then the cluster is
 *      opened through the gate for GATE_SCHEDULE (libfleet/gate.h): it
 *      must be ACTIVE (EXA_ENOTAPPROVED otherwise, exit 6) and its pinned
 *      host key the approved one (EXA_ETRANSPORT, exit 4); the job row is
 *      inserted by gate_job_insert() (ACTIVE checked again in that
 *      transaction) and every status written by gate_record_status();
 *      cluster_run_resume() opens it for GATE_READ;
 *   2. use the gate's transport (the registered connection: host, port,
 *      user, key, the known_hosts pinned at connect) and preflight it
 *      (libdiscovery/preflight.h); a failed check stops the run before
 *      anything is submitted (EXA_EFAIL, the report in the result);
 *   3. stage run.sh (libsched/runscript.h) whose payload is
 *      `<remote exa> train --model M --dataset D --dataset-path P
 *      --out <remote_dir>/out [--dummy]`, and with stage_dataset the local
 *      dataset file copied into <remote_dir> first;
 *   4. submit (the run id is in the job name, so a lost reply never makes
 *      a second job), record the job row (cluster-scoped id, run_uuid,
 *      remote_dir, model, dataset, the requested gpus/nodes/cpus);
 *      but first, unless the run is new (--new), look for a job this run
 *      id already has (the job rows of platform.db, then the scheduler by
 *      job name: sched_find_by_name()): a queued or running one is
 *      adopted (steps 5-7 on it, no preflight, nothing submitted); a
 *      COMPLETED one whose version is registered is reported as done
 *      (res->already, nothing run); a COMPLETED one without its version
 *      is adopted to finish the registration; after a FAILED, CANCELLED
 *      or TIMEOUT job it submits again under the same run id;
 *   5. wait through the tracker (one batched status query per poll, a
 *      deadline, an UNKNOWN streak limit); an interrupt asks the caller
 *      whether to cancel the job or leave it running;
 *   6. on the end: record state, raw_state, exit code, signal, reason and
 *      the scheduler's accounting (libsched/accounting.h: queue and run
 *      seconds, nodes, cpus, gpus, GPU- and CPU-hours) on the job row;
 *   7. COMPLETED: fetch model.json, encoders.json, metrics.json and
 *      SHA256SUMS over the transport into a staging directory, verify
 *      every checksum, and register the next version with lineage
 *      (cluster, scheduler, job id, run id, dataset, rows) publishing the
 *      directory as <models_root>/<model>/<version>/ like mock mode.
 *      Anything else registers nothing, keeps the tail of the job's
 *      stderr log and fails (EXA_EFAIL).
 */
#ifndef EXA_CLUSTER_RUN_H
#define EXA_CLUSTER_RUN_H

#include <signal.h>

#include "libdiscovery/preflight.h"
#include "libfleet/governance.h"
#include "libsched/accounting.h"
#include "libsched/resources.h"
#include "libsched/sched.h"
#include "libstore/jobs.h"
#include "libstore/models.h"
#include "libtransport/transport.h"
#include "libutil/strvec.h"

/* Hex digits of a derived run id (cluster_run_id()). */
#define CLUSTER_RUN_ID_LEN 12

/* Lines of the job's stderr log kept in the result of a failed job. */
#define CLUSTER_RUN_STDERR_LINES 20

/* Callbacks of the front end; every member may be NULL. */
struct cluster_run_hooks {
    /* A step finished or started: "placement", "preflight", "stage",
     * "submit", "adopt", "done", "wait", "accounting", "fetch",
     * "register"; detail is a
     * short human line. Borrowed strings. */
    void (*step)(void *arg, const char *step, const char *detail);
    /* After every poll of the wait: the job's status, seconds waited. */
    void (*wait)(void *arg, const struct sched_job *job, double elapsed_s);
    /* Set (by a SIGINT handler) to interrupt the wait; checked at least
     * every 0.2 s and reset when seen. */
    volatile sig_atomic_t *interrupted;
    /* Called when interrupted was seen: return 1 to cancel the job and
     * wait for it to end, 0 to stop waiting and leave it running. NULL:
     * leave it running. */
    int (*on_interrupt)(void *arg, const char *cluster, const char *job_id);
    void *arg;
};

struct cluster_run_request {
    const char *model;        /* zoo name ("JPCP") */
    const char *dataset;      /* zoo name ("PM100Dataset") */
    const char *dataset_path; /* path on the cluster; with stage_dataset
                                 the local file to copy there */
    int stage_dataset;
    int dummy;
    int nthread;     /* `exa train --threads`, 0: its default */
    double max_skip; /* `exa train --max-skip`, when max_skip_set */
    int max_skip_set;
    int dry_run;         /* 1: resolve, preflight and render only: nothing is
                            created, copied, submitted or recorded (res->dry_*) */
    const char *cluster; /* registered name, or "auto" */
    const struct sched_resources *res; /* the ask; may be NULL */
    const char *db_path;               /* NULL: store_default_path() */
    const char *regpath;               /* NULL: registry_default_path() */
    const char *models_root;           /* NULL: pipeline_models_root() */
    const char *remote_exa; /* NULL: $EXAMLOPS_HPC_REMOTE_EXA, else "exa" */
    const char *actor;      /* for governance reconciliation; NULL ok */
    const char *run_id;     /* [A-Za-z0-9_-]{1,64}; NULL: cluster_run_id()
                               of this request */
    int new_run;            /* 1: a fresh random run id, no adoption */
    const char *user;       /* who asks, for the run id; NULL:
                               audit_actor() (libstore/audit.h) */
    int via_worker;         /* 1: run the payload as a task of the engine on
                               a dial-back worker of the named cluster
                               (--via worker: pipeline_task_run() in
                               libtask/pipeline_task.h; cluster_run()
                               refuses it) */
    struct cluster_run_hooks hooks;
};

struct cluster_run_result {
    char *cluster, *scheduler;  /* where it ran */
    char *placement_reason;     /* `auto` only */
    struct preflight_report pf; /* when preflight ran */
    int preflight_ran;
    struct job_rec job; /* the job row as finally recorded */
    int job_recorded;
    struct sched_job last;  /* last status seen */
    struct sched_acct acct; /* accounting, when have_acct */
    int have_acct;
    struct model_version mv; /* the registered version */
    int registered;
    char *stderr_tail;     /* failed job: last lines of its stderr */
    char run_id[65];       /* the run id used ("" before it is known) */
    int adopted;           /* 1: an existing job was adopted */
    int already;           /* 1: the run had registered its version
                              before; nothing ran (mv, job filled) */
    int detached;          /* interrupted and left running */
    int cancelled_by_user; /* interrupted and cancelled */
    char *db_path;
    int dry_run;               /* the run was a dry run (req->dry_run) */
    char *dry_script;          /* dry run: the run.sh text */
    char *dry_remote_dir;      /* dry run: the job directory it would use */
    struct strvec dry_command; /* dry run: the scheduler's submit argv;
                                  via worker: the task's argv */
    /* via worker (res->via_worker): the task, its last (or winning)
     * attempt, the worker that ran it and that worker's Slurm job; a dry
     * run puts the task spec it would queue (JSON) in dry_script */
    int via_worker;
    long long task_id, task_attempt; /* 0: none */
    char *task_state, *task_reason;
    long long task_exit_code; /* JOB_NULL_INT when unknown */
    char *worker_id, *worker_job_id;
};

void cluster_run_result_init(struct cluster_run_result *res);
void cluster_run_result_release(struct cluster_run_result *res);

/*
 * The run id of req for user: the first CLUSTER_RUN_ID_LEN hex digits of
 * the SHA-256 (OpenSSL EVP_sha256) of the text
 *     "exa pipeline run v1\n" then one "KEY=VALUE\n" line per key, in this
 *     order: model dataset dataset_path stage_dataset dummy threads
 *     cluster [via] user workdir partition qos account constraint time mem
 *     job_name array nodes ntasks cpus_per_task gpus hold
 * where a string VALUE is "LEN:TEXT" (LEN its byte count in decimal) or
 * "-" when absent, and numbers are decimal. model and dataset are the zoo
 * names (so "jpcp" and "JPCP" agree) when known, else as given; cluster
 * is as asked ("auto" stays "auto"); the resources are res (the flags
 * with the EXAMLOPS_HPC_* environment merged in; NULL: none asked);
 * workdir is $EXAMLOPS_HPC_REMOTE_WORKDIR, else $EXAMLOPS_HPC_WORKDIR, as
 * set (the base of the run's directory on the cluster: another base is
 * another run, whose artifacts live elsewhere);
 * the line "via=worker" follows cluster only when req->via_worker (so
 * batch ids are unchanged); req->run_id, new_run and the paths are not
 * part of it. The same request
 * by the same user gives the same id on every host and run. out receives
 * CLUSTER_RUN_ID_LEN + 1 bytes, NUL-terminated. Never fails.
 */
void cluster_run_id(const struct cluster_run_request *req,
                    const struct sched_resources *res, const char *user,
                    char out[CLUSTER_RUN_ID_LEN + 1]);

/*
 * Run req as described above into *res (initialised here; release with
 * cluster_run_result_release in every case). Returns 0 when a version
 * was registered (by this call, or before it: res->already), else -1
 * with err: EXA_EUSAGE (unknown model, dataset,
 * bad ask), EXA_ENOTFOUND (unknown cluster), EXA_ENOTAPPROVED (cluster
 * not ACTIVE), EXA_EFAIL (no fitting cluster, failed preflight, job not
 * COMPLETED, artifacts rejected, or res->detached), EXA_ETRANSPORT,
 * EXA_ESCHED, EXA_ETIMEOUT (the wait deadline; the job keeps running),
 * EXA_ECONFIG. A bad req->run_id is EXA_EUSAGE; a failed lookup of the
 * run's existing jobs is the lookup's error (nothing is submitted when
 * exa cannot tell whether the run already has a job).
 */
int cluster_run(const struct cluster_run_request *req,
                struct cluster_run_result *res, exa_error_t *err);

/*
 * 1 when the job row (cluster, job_id) of the database at db_path is a
 * cluster run still waiting for its registration (it has a run_uuid and a
 * remote_dir, no model_version, scheduler slurm or flux), 0 when not or
 * unknown, -1 with err for a database error.
 */
int cluster_run_pending(const char *db_path, const char *cluster,
                        const char *job_id, exa_error_t *err);

/*
 * Resume a cluster run whose waiting exa went away: wait for the recorded
 * job (cluster, job_id) over the cluster's registered transport (or over
 * t when not NULL: borrowed, for tests with the fake transport), then
 * steps 6 and 7 above. The cluster must still be registered. Paths as in
 * cluster_run_request (NULL: defaults). Returns and fills res like
 * cluster_run().
 */
int cluster_run_resume(const char *db_path, const char *regpath,
                       const char *models_root, const char *cluster,
                       const char *job_id, struct transport *t,
                       const struct cluster_run_hooks *h,
                       struct cluster_run_result *res, exa_error_t *err);

/*
 * Verify an artifact directory fetched from a cluster: dir/SHA256SUMS
 * lists exactly model.json, encoders.json and metrics.json (sha256sum(1)
 * format) and each file's SHA-256 matches. Fills sha_hex (65 bytes) with
 * the SHA-256 of SHA256SUMS. 0, or -1 with err (EXA_EFAIL naming the
 * file that does not match).
 */
int cluster_run_verify_artifacts(const char *dir, char sha_hex[65],
                                 exa_error_t *err);

/*
 * Fetch and verify the artifacts in remote_dir over t into a new staging
 * directory under <models_root>/<model>/, returned malloc'ed (the caller
 * commits or aborts it, libutil/atomic.h). NULL with err; nothing is
 * left behind then.
 */
char *cluster_run_fetch_artifacts(struct transport *t, const char *remote_dir,
                                  const char *models_root, const char *model,
                                  const char *run_uuid, char sha_hex[65],
                                  exa_error_t *err);

/* ---- shared with the worker path (libtask/pipeline_task.h) ---- */

/* Step 7 after the fetch: register the verified staging directory
 * (owned: committed as the version's directory or removed; freed) with
 * sha the SHA-256 of its SHA256SUMS, lineage from res->job (model,
 * dataset, cluster, scheduler, job_id, run_uuid, id as job_ref) and any
 * task fields already in res->mv. 0, or -1 with err. */
int cluster_run_register_staged(store_t *st, char *staging, const char *sha,
                                const char *models_root,
                                const struct cluster_run_hooks *h,
                                struct cluster_run_result *res,
                                exa_error_t *err);

/* The last n lines of text[0..len) without trailing blanks, malloc'ed. */
char *cluster_run_tail_lines(const char *text, size_t len, int n);

/*
 * The training payload of a run, appended to argv: `rexa train --model
 * MODEL --dataset DATASET --dataset-path DPATH --out=OUT_DIR [--dummy]
 * [--threads=N] [--max-skip=S]` from req. Both paths (run.sh's payload
 * and a worker's task) use it.
 */
void cluster_run_payload_argv(const struct cluster_run_request *req,
                              const char *rexa, const char *model,
                              const char *dataset, const char *dpath,
                              const char *out_dir, struct strvec *argv);

/* 1 when r is 1 to 64 of [A-Za-z0-9_-] (a --run-id), else 0. */
int cluster_run_valid_id(const char *r);

/* Open the store at db_path (NULL: default) and resolve the models root
 * and registry path (NULL: defaults), all malloc'ed / opened for the
 * caller. 0, or -1 with err. */
int cluster_run_open_paths(const char *db_path, const char *models_root,
                           const char *regpath, store_t **st, char **root,
                           char **reg, exa_error_t *err);

#endif
