/*
 * tasks.h - typed access to the task engine's tables (migration 6;
 * shared/WORKERS.md §8): tasks, task_attempts, task_results,
 * task_artifacts, workers, join_tokens, worker_events and engine_kv.
 *
 * These are the SQL primitives only; the rules (fencing, first success
 * wins, the infrastructure budget, restart grace) are libtask/engine.c's,
 * which composes these calls inside one store_begin()/store_commit().
 * Times are Unix seconds (double, wall clock). An absent integer is
 * TASK_NULL_INT, an absent time 0.
 */
#ifndef EXA_STORE_TASKS_H
#define EXA_STORE_TASKS_H

#include <limits.h>
#include <stddef.h>

#include "libstore/store.h"

#define TASK_NULL_INT LLONG_MIN

struct task_rec {
    long long id;
    char *state;  /* queued | leased | done | failed | cancelled */
    char *spec;   /* JSON text (libtask/proto.h task spec) */
    char *labels; /* comma-separated, "" for none */
    long long cpus, gpus, ram_mb;
    double timeout_s;
    long long attempt; /* latest lease number, 0 before the first */
    long long infra_failures, max_infra;
    double created_at, queued_since, ended_at;
    long long done_attempt, exit_code, signal; /* TASK_NULL_INT if none */
    char *reason;
    char *worker_id; /* reads: worker of the latest attempt, or NULL */
    char *cluster;   /* NULL: any worker; else only workers whose join
                        token named this cluster (migration 9) */
    char *run_id;    /* the `exa pipeline run` that queued it, or NULL */
};

struct attempt_rec {
    long long task_id, attempt;
    char *worker_id;
    double leased_at, lease_expires_at, ended_at;
    char *outcome; /* NULL while open, else ok failed lost released ... */
    long long exit_code, signal;
    char *cause; /* why it ended: dead restart walltime revoked ... */
};

struct worker_rec {
    char *id, *request_id, *cluster, *profile, *slurm_job_id, *node, *host;
    long long pid;
    char *session_hash; /* hex SHA-256 of the session token */
    long long incarnation;
    char *state; /* attached | draining | lost | exited */
    int drain_requested;
    double registered_at, last_seen_at, walltime_end_at;
    long long cpus, gpus, ram_mb, capacity;
    char *labels;
    long long protocol;
    char *exa_version, *exit_reason;
};

struct join_rec {
    char *jti, *worker_id, *request_id, *cluster, *profile;
    double created_at, exp, used_at;
    char *register_nonce;
};

struct wevent_rec {
    long long id;
    double ts;
    char *kind, *cluster, *profile, *worker_id;
    long long task_id, attempt;
    char *detail; /* JSON text or NULL */
};

void task_rec_init(struct task_rec *t);
void task_rec_release(struct task_rec *t);
void task_rec_free_list(struct task_rec *v, size_t n);
void attempt_rec_release(struct attempt_rec *a);
void attempt_rec_free_list(struct attempt_rec *v, size_t n);
void worker_rec_init(struct worker_rec *w);
void worker_rec_release(struct worker_rec *w);
void worker_rec_free_list(struct worker_rec *v, size_t n);
void join_rec_release(struct join_rec *j);
void wevent_rec_free_list(struct wevent_rec *v, size_t n);

/* engine_kv: *out malloc'ed (caller frees); 1 found, 0 absent, -1 err. */
int store_engine_get(store_t *st, const char *key, char **out,
                     exa_error_t *err);
int store_engine_set(store_t *st, const char *key, const char *value,
                     exa_error_t *err);

/*
 * Insert a queued task from t (borrowed: spec, labels, cpus, gpus, ram_mb,
 * timeout_s, max_infra, created_at, cluster, run_id); *id gets the new id. 0 or
 * -1 with err (EXA_ECONFIG).
 */
int store_task_insert(store_t *st, const struct task_rec *t, long long *id,
                      exa_error_t *err);
/* Read task id into *out (release it). 0, or -1 with err: EXA_ENOTFOUND
 * "task 'ID' not found", EXA_ECONFIG. */
int store_task_get(store_t *st, long long id, struct task_rec *out,
                   exa_error_t *err);
/*
 * Tasks in id order; state (NULL: all) filters, limit 0 means all. *v
 * (task_rec_free_list) and *n. 0 or -1 with err.
 */
int store_task_list(store_t *st, const char *state, long long limit,
                    struct task_rec **v, size_t *n, exa_error_t *err);
/* Count of tasks per state into counts[5] in the order queued, leased,
 * done, failed, cancelled. 0 or -1. */
int store_task_counts(store_t *st, long long counts[5], exa_error_t *err);
/*
 * Queued tasks, oldest first, whose cpus, gpus, ram_mb and timeout_s are
 * at most the given ones (timeout_max < 0: no bound) and that are not
 * pinned to a cluster other than cluster (NULL: only unpinned tasks); at
 * most limit. The caller filters labels. *v and *n as store_task_list.
 */
int store_task_queued_fitting(store_t *st, long long cpus, long long gpus,
                              long long ram_mb, double timeout_max,
                              const char *cluster, long long limit,
                              struct task_rec **v, size_t *n, exa_error_t *err);
/*
 * The tasks of run run_id pinned to cluster, newest first. *v
 * (task_rec_free_list) and *n. 0 or -1 with err.
 */
int store_task_list_run(store_t *st, const char *run_id, const char *cluster,
                        struct task_rec **v, size_t *n, exa_error_t *err);
/*
 * Lease: if task id is queued, set it leased with attempt+1 and insert
 * the open attempt (worker_id, leased_at = now, lease_expires_at). Returns
 * the new attempt number (> 0), 0 when the task was no longer queued,
 * -1 with err.
 */
long long store_task_lease(store_t *st, long long id, const char *worker_id,
                           double now, double expires, exa_error_t *err);
/*
 * Set a task's terminal or queued state. state is required; reason may be
 * NULL; exit_code, signal, done_attempt TASK_NULL_INT to leave as is;
 * ended_at 0 to leave as is; queued_since set when state is queued;
 * infra_inc is added to infra_failures. 0 or -1 with err.
 */
int store_task_set_state(store_t *st, long long id, const char *state,
                         const char *reason, long long exit_code,
                         long long signal, long long done_attempt,
                         double ended_at, double queued_since, int infra_inc,
                         exa_error_t *err);

/* A failed task back to queued (the engine's black-hole drain): its
 * reason, exit code, signal, done_attempt and ended_at cleared,
 * queued_since set (epoch seconds), infra_failures unchanged. A task not
 * in state failed is left as it is. 0 or -1 with err. */
int store_task_reopen(store_t *st, long long id, double queued_since,
                      exa_error_t *err);

/* Attempts of task id in attempt order; *v (attempt_rec_free_list). */
int store_attempt_list(store_t *st, long long task_id, struct attempt_rec **v,
                       size_t *n, exa_error_t *err);
/* One attempt; 1 found, 0 none, -1 err. */
int store_attempt_get(store_t *st, long long task_id, long long attempt,
                      struct attempt_rec *out, exa_error_t *err);
/*
 * Open attempts (outcome NULL): of worker_id, or of every worker when
 * worker_id is NULL. *v and *n as store_attempt_list.
 */
int store_attempt_open(store_t *st, const char *worker_id,
                       struct attempt_rec **v, size_t *n, exa_error_t *err);
/* Close an open attempt: outcome, cause (may be NULL), exit_code and
 * signal (TASK_NULL_INT for none), ended_at. 1 closed, 0 it was not open,
 * -1 err. */
int store_attempt_close(store_t *st, long long task_id, long long attempt,
                        const char *outcome, const char *cause,
                        long long exit_code, long long signal, double ended_at,
                        exa_error_t *err);
/* Set the outcome of an attempt whether or not it is open (a late
 * result relabels a lost attempt late_ok or late_stale); ended_at is kept
 * when already set. 0 or -1. */
int store_attempt_relabel(store_t *st, long long task_id, long long attempt,
                          const char *outcome, const char *cause,
                          long long exit_code, long long signal,
                          double ended_at, exa_error_t *err);
/* PRAGMA data_version: changes when another connection commits; -1 on
 * error. */
long long store_data_version(store_t *st);
/* Set lease_expires_at of every open attempt (restart grace). */
int store_attempt_extend_all(store_t *st, double expires, exa_error_t *err);

/*
 * Record a result (idem "task:attempt", body JSON text). Returns 1 when
 * inserted, 0 when that idem (or that task and attempt) is already
 * recorded, -1 with err.
 */
int store_result_insert(store_t *st, long long task_id, long long attempt,
                        const char *idem, const char *body, double now,
                        exa_error_t *err);
/* The body of task's result for attempt (malloc'ed into *body); 1, 0
 * none, -1 err. */
int store_result_get(store_t *st, long long task_id, long long attempt,
                     char **body, exa_error_t *err);
/* Number of results recorded for task_id; -1 with err. */
long long store_result_count(store_t *st, long long task_id, exa_error_t *err);

/*
 * Record an artifact (sha256 lower-case hex). Returns 1 inserted, 0 the
 * same name exists with the same hash, 2 it exists with another hash
 * (nothing changed), -1 err.
 */
int store_artifact_put(store_t *st, long long task_id, long long attempt,
                       const char *name, const char *sha256, long long size,
                       const char *path, double now, exa_error_t *err);
/* The stored hash (sha_out, 65 bytes) and file (*path, malloc'ed) of an
 * artifact; 1 found, 0 none, -1 err. */
int store_artifact_get(store_t *st, long long task_id, long long attempt,
                       const char *name, char sha_out[65], char **path,
                       exa_error_t *err);
/* The stored hash of an artifact into sha_out (65 bytes); 1, 0 none, -1. */
int store_artifact_hash(store_t *st, long long task_id, long long attempt,
                        const char *name, char sha_out[65], exa_error_t *err);

/* Insert or replace the worker row w (borrowed). 0 or -1. */
int store_worker_put(store_t *st, const struct worker_rec *w, exa_error_t *err);
/* 1 found (release *out), 0 none, -1 err. */
int store_worker_get(store_t *st, const char *id, struct worker_rec *out,
                     exa_error_t *err);
/* All workers, attached and draining first, then by id. */
int store_worker_list(store_t *st, struct worker_rec **v, size_t *n,
                      exa_error_t *err);
/* Set state (and exit_reason when not NULL, last_seen_at when > 0). */
int store_worker_set_state(store_t *st, const char *id, const char *state,
                           const char *exit_reason, double last_seen,
                           exa_error_t *err);
/* Set drain_requested on one worker (id) or every live one (NULL). */
int store_worker_request_drain(store_t *st, const char *id, exa_error_t *err);

/* Insert an unused join token row (borrowed). 0 or -1. */
int store_join_insert(store_t *st, const struct join_rec *j, exa_error_t *err);
/* 1 found (release *out), 0 none, -1 err. */
int store_join_get(store_t *st, const char *jti, struct join_rec *out,
                   exa_error_t *err);
/* Burn: set used_at and register_nonce of an unused jti; 1 burned, 0 it
 * was already used, -1 err. */
int store_join_burn(store_t *st, const char *jti, const char *nonce, double now,
                    exa_error_t *err);

/* Append an event; the strings may be NULL, task_id/attempt
 * TASK_NULL_INT for none; detail is JSON text or NULL. 0 or -1. */
int store_wevent_add(store_t *st, double ts, const char *kind,
                     const char *cluster, const char *profile,
                     const char *worker_id, long long task_id,
                     long long attempt, const char *detail, exa_error_t *err);
/* Events with id > after_id in id order, at most limit (0 all); kind
 * NULL for all. */
int store_wevent_list(store_t *st, const char *kind, long long after_id,
                      long long limit, struct wevent_rec **v, size_t *n,
                      exa_error_t *err);

#endif
