/*
 * engine.h - the task engine behind `exa serve --worker-listen`
 * (shared/WORKERS.md §6, §8): tasks, leases fenced by attempt number,
 * worker liveness, expiry and re-queue, results recorded exactly once.
 *
 * Semantics (§6.3): a task is queued -> leased(attempt n) -> done | failed
 * | cancelled; an expired, released or revoked lease sends it back to
 * queued and the next lease is attempt n+1. Execution is at-least-once;
 * recording is exactly-once: results carry "task:attempt" as idempotency
 * key (UNIQUE), and the first successful result of any attempt makes the
 * task done - a late success of an older attempt is kept (late_ok) while
 * the task is not terminal, and answered "stale" once it is. A lease lost
 * with its worker (no heartbeat for lease_ttl_s) counts toward the task's
 * infrastructure budget (max_infra, default 3) unless the engine itself
 * caused it (restart, drain, bye, revoke).
 *
 * All state is in platform.db; only heartbeats (last-seen times) and
 * parked long-polls are in memory, so an engine restart keeps sessions
 * and leases: on open every open lease and every live worker gets a grace
 * of lease_ttl_s + restart_grace_s, and a worker that stays silent past
 * it is lost with cause "restart", which does not use the budget.
 *
 * Thread-safety: every te_* call may come from any server thread; one
 * mutex serialises them (te_lease releases it while parked). Tasks and
 * cancels written by another process (the CLI) are seen through the
 * database: parked lease requests re-check it every 100 ms.
 *
 * The worker-facing calls answer with a struct te_reply: an HTTP status
 * and a JSON body (new reference; {"error":{"code","reason"}} on errors,
 * the codes of §6.2). They never fail otherwise; a database error is a
 * 503 with retry_after_s.
 */
#ifndef EXA_TASK_ENGINE_H
#define EXA_TASK_ENGINE_H

#include <jansson.h>

#include "libstore/store.h"
#include "libtask/proto.h"
#include "libtask/token.h"

typedef struct task_engine task_engine_t;

/* Wall clock in Unix seconds; tests inject a fake one. */
typedef double (*te_clock_f)(void *ctx);

struct te_opts {
    double heartbeat_s;     /* 15 */
    double lease_ttl_s;     /* 60: a silent worker is lost after this */
    double longpoll_s;      /* 25: default lease wait */
    double max_idle_s;      /* 300: told to the worker */
    double engine_lost_s;   /* 600: told to the worker */
    double restart_grace_s; /* 30: added to lease_ttl_s on open */
    double join_skew_s;     /* 120: clock tolerance on join tokens */
    te_clock_f now;         /* NULL: the real clock */
    void *now_ctx;
    const char *keyfile; /* NULL: token_key_path(st->path) */
    int fault_busy;      /* tests: every other worker request fails as if
                            SQLite were locked (503 + Retry-After), N in all */
    /* NULL: quiet; else called with one line (no newline, borrowed for
     * the call) for what the operator must see and the worker is not
     * told: the cause of a 503, at most once every 10 s. Called from
     * request threads, so it must be thread-safe. */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
};
/* Fill o with the defaults above. */
void te_opts_default(struct te_opts *o);

/*
 * Open the engine on st (borrowed; must outlive the engine): create the
 * engine id on first use, bump the epoch, load the HMAC keys, load live
 * workers and give them and every open lease the restart grace. Returns
 * the engine (te_close) or NULL with err (EXA_ECONFIG).
 */
task_engine_t *te_open(store_t *st, const struct te_opts *o, exa_error_t *err);
/* Answer every parked and later long-poll with 204 at once (before the
 * server joins its connection threads); the engine stays usable. */
void te_shutdown(task_engine_t *e);
/* Wake parked long-polls (they answer 204) and free the engine. */
void te_close(task_engine_t *e);

/*
 * Liveness of the task engine, for the CLI (`exa pipeline run --via
 * worker`, `exa task submit`): te_open takes a shared flock(2) on
 * te_alive_path(db) and holds it until te_close, or until the process
 * ends however it ends (the kernel drops the lock with the descriptor).
 * te_engine_running tries that lock exclusively without waiting: 1 when
 * an engine holds it, 0 when none does (or none ever ran on this
 * database), -1 with err (EXA_ECONFIG) when the file cannot be opened or
 * locked. Same host only, as platform.db itself (SQLite on a local file
 * system). The path is "<db_path>.engine-lock", malloc'ed.
 */
/*
 * Ring the doorbell of the engine on db_path (after a commit that queued
 * or changed tasks): one datagram to the engine's abstract AF_UNIX socket
 * (unix(7)), so its parked long-polls look at once instead of at their
 * next PRAGMA data_version poll (100 ms). Never blocks, never fails: with
 * no engine listening the datagram is dropped.
 */
void te_ring(const char *db_path);

char *te_alive_path(const char *db_path);
int te_engine_running(const char *db_path, exa_error_t *err);
/* The engine id (8 hex digits) and epoch. */
const char *te_engine_id(const task_engine_t *e);
long long te_epoch(const task_engine_t *e);
/* The options in effect (borrowed). */
const struct te_opts *te_options(const task_engine_t *e);

struct te_reply {
    int status;
    json_t *body;
    int retry_after_s; /* > 0: send Retry-After */
};
void te_reply_release(struct te_reply *r);

/*
 * POST /v1/workers/register. body is the raw request body (decoded here
 * so a wrong protocol gets 426), peer the client address (for the
 * failed-auth limit: after 10 refusals in a minute, that address's
 * further refusals are 429 with no event, but a valid token still
 * registers; after 100 refusals in a minute (the 429s count) every
 * registration from it is 429 before the body is decoded or a token
 * verified, until the minute is over, so a flood costs no HMAC or
 * SHA-256 work), bearer the
 * Authorization bearer token or NULL (a rejoin with the session).
 * Success: 201 {session_token, worker_id, incarnation, engine_id,
 * engine_epoch, heartbeat_s, lease_ttl_s, longpoll_s, max_idle_s,
 * engine_lost_s}.
 */
void te_register(task_engine_t *e, const char *body, size_t len,
                 const char *peer, const char *bearer, struct te_reply *out);
/* POST /v1/workers/{id}/heartbeat -> 200 {heartbeat_s, drain, revoke:
 * [{task, attempt, reason}], release: [{task, attempt}]}. */
void te_heartbeat(task_engine_t *e, const char *worker_id, const char *bearer,
                  const char *body, size_t len, struct te_reply *out);
/*
 * POST /v1/workers/{id}/lease: up to want tasks that fit the worker, or
 * park up to wait_s (< 0: longpoll_s) for one. 200 {tasks: [{task_id,
 * attempt, deadline_s, spec}]}, 204 (no body) at the deadline or when a
 * newer lease request of the same worker replaces this one, 200 {drain:
 * true} when the worker is to drain.
 */
void te_lease(task_engine_t *e, const char *worker_id, const char *bearer,
              const char *body, size_t len, double wait_s,
              struct te_reply *out);
/* POST /v1/workers/{id}/results -> 200 {accepted, duplicate, stale,
 * missing_artifacts} (arrays of "task:attempt"). */
void te_results(task_engine_t *e, const char *worker_id, const char *bearer,
                const char *body, size_t len, struct te_reply *out);
/* POST /v1/workers/{id}/drain and /bye -> 200 {}. bye releases the
 * worker's open leases (requeued, no budget) and ends its session. */
void te_drain(task_engine_t *e, const char *worker_id, const char *bearer,
              const char *body, size_t len, struct te_reply *out);
void te_bye(task_engine_t *e, const char *worker_id, const char *bearer,
            const char *body, size_t len, struct te_reply *out);
/* GET /v1/ping -> 200 {engine_id, protocols: [1]}. */
void te_ping(task_engine_t *e, struct te_reply *out);

/*
 * Artifacts (PUT /v1/tasks/T/attempts/A/artifacts/NAME, with headers
 * X-Exa-Worker: ID and X-Exa-Sha256: HEX): te_artifact_check
 * authenticates, checks that the worker holds or held attempt A of task T
 * and that NAME with sha256 is not already stored with another hash.
 * Returns 0 (continue: stream the body into *tmp_path, a malloc'ed file
 * path under the engine's artifact directory), 1 when the same artifact
 * is already stored (out: 200, do not store again), or -1 with out set.
 * te_artifact_commit then checks the hash of what arrived (hex) against
 * the claim, renames the file into place and records it.
 */
int te_artifact_check(task_engine_t *e, const char *worker_id,
                      const char *bearer, long long task, long long attempt,
                      const char *name, const char *sha256, char **tmp_path,
                      struct te_reply *out);
void te_artifact_commit(task_engine_t *e, const char *worker_id, long long task,
                        long long attempt, const char *name,
                        const char *claimed, const char *got, long long size,
                        const char *tmp_path, struct te_reply *out);
/* The directory artifacts are kept under (borrowed): <db dir>/artifacts. */
const char *te_artifact_dir(const task_engine_t *e);

/*
 * The periodic pass (call every heartbeat_s / 4 or so): workers silent
 * for lease_ttl_s are lost and their leases expire (requeue or fail on
 * budget), leases past timeout_s + 60 s are revoked. Returns the number
 * of leases expired or revoked, -1 on a database error (err).
 */
int te_tick(task_engine_t *e, exa_error_t *err);

/* Counters for /metrics (WORKERS.md §11); bounded labels only. */
struct te_counters {
    unsigned long long registrations[8]; /* by enum te_reg_result */
    unsigned long long leases;
    unsigned long long expired[4]; /* dead, restart, revoked, released */
    unsigned long long results[4]; /* accepted duplicate stale late_ok */
    unsigned long long worker_lost;
    unsigned long long parked;
    unsigned long long black_holes;   /* workers drained as black holes */
    unsigned long long result_posts;  /* results requests answered 200 */
    unsigned long long rings;         /* doorbell wake-ups (te_ring) */
    unsigned long long reg_held_back; /* 429s of the flood pre-check (also
                                         in registrations[LIMITED]) */
};
enum te_reg_result {
    TE_REG_OK,
    TE_REG_EXPIRED,
    TE_REG_REPLAYED,
    TE_REG_BAD_SIGNATURE,
    TE_REG_WRONG_WORKER,
    TE_REG_PROTOCOL,
    TE_REG_UNKNOWN_KID,
    TE_REG_LIMITED,
};
/* Wire name of a registration result ("ok", "expired", ...). */
const char *te_reg_result_name(enum te_reg_result r);
void te_counters_get(task_engine_t *e, struct te_counters *out);

/*
 * Black-hole workers (WORKERS.md 6.3, GlideinWMS's GLIDEIN_BLACKHOLE_*):
 * TE_BLACKHOLE_FAILURES failed results with an infrastructure sign from
 * one worker within TE_BLACKHOLE_WINDOW_S seconds drain it; the tasks of
 * those failures are queued again without using their infrastructure
 * budget, once per task (a task given back once that fails the same way
 * again keeps its failure).
 */
#define TE_BLACKHOLE_FAILURES 5
#define TE_BLACKHOLE_WINDOW_S 60
#define TE_BLACKHOLE_FAST_S 10.0

/* 1 when a result is an infrastructure sign: exit 126 (found, cannot be
 * executed) or 127 (not found, or the worker could not spawn it: the
 * shim's exec failed) with no signal, ended_at - started_at (epoch
 * seconds) at most TE_BLACKHOLE_FAST_S; else 0. */
int te_infra_sign(long long exit_code, long long signal, double started_at,
                  double ended_at);

/* ---- the operator side: no engine needed, only the store ---- */

/*
 * Queue a task from spec (borrowed) at time now; *id gets its id. 0 or -1
 * with err (EXA_ECONFIG).
 */
int task_submit(store_t *st, const struct tp_spec *spec, double now,
                long long *id, exa_error_t *err);
/*
 * task_submit, pinned: cluster (a name, or NULL for any worker) is the
 * only cluster whose workers may lease the task - a worker is of cluster
 * C when its join token named C (a provisioned worker's token names its
 * provisioner's cluster; labels a worker claims never count), and the
 * provisioner asks only C's profiles for it. run_id (NULL: none) is kept
 * on the row for store_task_list_run(). A bad cluster name is EXA_EUSAGE.
 */
int task_submit_pinned(store_t *st, const struct tp_spec *spec,
                       const char *cluster, const char *run_id, double now,
                       long long *id, exa_error_t *err);
/*
 * Cancel task id: queued or leased -> cancelled (an open lease is closed
 * revoked; its worker is told on its next heartbeat). Returns 0, 1 when
 * the task was already terminal (nothing changed), or -1 with err
 * (EXA_ENOTFOUND).
 */
int task_cancel(store_t *st, long long id, double now, exa_error_t *err);
/*
 * Mint a single-use join token for worker_id (a name), valid ttl_s (1 ..
 * 21600) from now: records the jti and returns the token (malloc'ed; the
 * caller hands it to the worker's stdin and never logs it), or NULL with
 * err. cluster, profile, request_id may be NULL.
 */
char *task_join_mint(store_t *st, const char *keyfile, const char *worker_id,
                     const char *cluster, const char *profile,
                     const char *request_id, double ttl_s, double now,
                     exa_error_t *err);
/* The engine id recorded in st (creating it when absent), into out[9]. */
int task_engine_id(store_t *st, char out[9], exa_error_t *err);
/* The real clock (Unix seconds, with sub-second precision). */
double te_wallclock(void *ctx);

#endif
