/*
 * tasks.c - the task engine's SQL (tasks.h). Each function is one
 * statement, or a read loop; transactions belong to the caller
 * (libtask/engine.c), so a lease, a result or an expiry is atomic with
 * the events it records.
 */
#include "libstore/tasks.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static long long col_int(sqlite3_stmt *s, int i)
{
    if (sqlite3_column_type(s, i) == SQLITE_NULL)
        return TASK_NULL_INT;
    return sqlite3_column_int64(s, i);
}

static double col_time(sqlite3_stmt *s, int i)
{
    if (sqlite3_column_type(s, i) == SQLITE_NULL)
        return 0;
    return sqlite3_column_double(s, i);
}

static void bind_int(sqlite3_stmt *s, int i, long long v)
{
    if (v == TASK_NULL_INT)
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_int64(s, i, v);
}

static void bind_time(sqlite3_stmt *s, int i, double v)
{
    if (v <= 0)
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_double(s, i, v);
}

/* Step a statement with no rows; finalize; 0 or -1. */
static int step_done(store_t *st, sqlite3_stmt *s, const char *what,
                     exa_error_t *err)
{
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, what);
    return 0;
}

void task_rec_init(struct task_rec *t)
{
    memset(t, 0, sizeof(*t));
    t->exit_code = t->signal = t->done_attempt = TASK_NULL_INT;
    t->cpus = 1;
    t->max_infra = 3;
    t->timeout_s = 3600;
}

void task_rec_release(struct task_rec *t)
{
    free(t->state);
    free(t->spec);
    free(t->labels);
    free(t->reason);
    free(t->worker_id);
    free(t->cluster);
    free(t->run_id);
    task_rec_init(t);
}

void task_rec_free_list(struct task_rec *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        task_rec_release(&v[i]);
    free(v);
}

void attempt_rec_release(struct attempt_rec *a)
{
    free(a->worker_id);
    free(a->outcome);
    free(a->cause);
    memset(a, 0, sizeof(*a));
}

void attempt_rec_free_list(struct attempt_rec *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        attempt_rec_release(&v[i]);
    free(v);
}

void worker_rec_init(struct worker_rec *w)
{
    memset(w, 0, sizeof(*w));
    w->pid = w->protocol = TASK_NULL_INT;
    w->incarnation = 1;
    w->cpus = w->capacity = 1;
}

void worker_rec_release(struct worker_rec *w)
{
    free(w->id);
    free(w->request_id);
    free(w->cluster);
    free(w->profile);
    free(w->slurm_job_id);
    free(w->node);
    free(w->host);
    free(w->session_hash);
    free(w->state);
    free(w->labels);
    free(w->exa_version);
    free(w->exit_reason);
    worker_rec_init(w);
}

void worker_rec_free_list(struct worker_rec *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        worker_rec_release(&v[i]);
    free(v);
}

void join_rec_release(struct join_rec *j)
{
    free(j->jti);
    free(j->worker_id);
    free(j->request_id);
    free(j->cluster);
    free(j->profile);
    free(j->register_nonce);
    memset(j, 0, sizeof(*j));
}

void wevent_rec_free_list(struct wevent_rec *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].kind);
        free(v[i].cluster);
        free(v[i].profile);
        free(v[i].worker_id);
        free(v[i].detail);
    }
    free(v);
}

/* ---- engine_kv ---- */

int store_engine_get(store_t *st, const char *key, char **out, exa_error_t *err)
{
    sqlite3_stmt *s =
        store_prepare(st, "SELECT value FROM engine_kv WHERE key = ?", err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, key);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *out = col_dup(s, 0);
        sqlite3_finalize(s);
        return 1;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading engine_kv");
    return 0;
}

int store_engine_set(store_t *st, const char *key, const char *value,
                     exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "INSERT OR REPLACE INTO engine_kv (key, value) VALUES (?, ?)", err);
    if (!s)
        return -1;
    store_bind_text(s, 1, key);
    store_bind_text(s, 2, value);
    return step_done(st, s, "writing engine_kv", err);
}

/* ---- tasks ---- */

#define TASK_COLS                                                              \
    "t.id, t.state, t.spec, t.labels, t.cpus, t.gpus, t.ram_mb,"               \
    " t.timeout_s, t.attempt, t.infra_failures, t.max_infra, t.created_at,"    \
    " t.queued_since, t.ended_at, t.done_attempt, t.exit_code, t.signal,"      \
    " t.reason, (SELECT a.worker_id FROM task_attempts a"                      \
    "  WHERE a.task_id = t.id AND a.attempt = t.attempt), t.cluster, t.run_id"

static void task_row(sqlite3_stmt *s, struct task_rec *t)
{
    task_rec_init(t);
    t->id = sqlite3_column_int64(s, 0);
    t->state = col_dup(s, 1);
    t->spec = col_dup(s, 2);
    t->labels = col_dup(s, 3);
    t->cpus = sqlite3_column_int64(s, 4);
    t->gpus = sqlite3_column_int64(s, 5);
    t->ram_mb = sqlite3_column_int64(s, 6);
    t->timeout_s = sqlite3_column_double(s, 7);
    t->attempt = sqlite3_column_int64(s, 8);
    t->infra_failures = sqlite3_column_int64(s, 9);
    t->max_infra = sqlite3_column_int64(s, 10);
    t->created_at = col_time(s, 11);
    t->queued_since = col_time(s, 12);
    t->ended_at = col_time(s, 13);
    t->done_attempt = col_int(s, 14);
    t->exit_code = col_int(s, 15);
    t->signal = col_int(s, 16);
    t->reason = col_dup(s, 17);
    t->worker_id = col_dup(s, 18);
    t->cluster = col_dup(s, 19);
    t->run_id = col_dup(s, 20);
}

static int task_rows(store_t *st, sqlite3_stmt *s, struct task_rec **v,
                     size_t *n, exa_error_t *err)
{
    struct task_rec *out = NULL;
    size_t cnt = 0, alloc = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, cnt + 1, alloc);
        task_row(s, &out[cnt++]);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        task_rec_free_list(out, cnt);
        return store_err(st, err, "reading tasks");
    }
    *v = out;
    *n = cnt;
    return 0;
}

int store_task_insert(store_t *st, const struct task_rec *t, long long *id,
                      exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT INTO tasks (state, spec, labels, cpus, gpus, ram_mb,"
        " timeout_s, max_infra, created_at, queued_since, cluster, run_id)"
        " VALUES ('queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        err);
    if (!s)
        return -1;
    store_bind_text(s, 1, t->spec ? t->spec : "{}");
    store_bind_text(s, 2, t->labels ? t->labels : "");
    sqlite3_bind_int64(s, 3, t->cpus);
    sqlite3_bind_int64(s, 4, t->gpus);
    sqlite3_bind_int64(s, 5, t->ram_mb);
    sqlite3_bind_double(s, 6, t->timeout_s);
    sqlite3_bind_int64(s, 7, t->max_infra);
    sqlite3_bind_double(s, 8, t->created_at);
    sqlite3_bind_double(s, 9, t->created_at);
    store_bind_text(s, 10, t->cluster);
    store_bind_text(s, 11, t->run_id);
    if (step_done(st, s, "inserting a task", err) < 0)
        return -1;
    if (id)
        *id = sqlite3_last_insert_rowid(st->db);
    return 0;
}

int store_task_get(store_t *st, long long id, struct task_rec *out,
                   exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "SELECT " TASK_COLS " FROM tasks t WHERE t.id = ?", err);
    int rc;
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        task_row(s, out);
        sqlite3_finalize(s);
        return 0;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading a task");
    return exa_err(err, EXA_ENOTFOUND, "task '%lld' not found", id);
}

int store_task_list(store_t *st, const char *state, long long limit,
                    struct task_rec **v, size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT " TASK_COLS " FROM tasks t"
                                    " WHERE (?1 IS NULL OR t.state = ?1)"
                                    " ORDER BY t.id LIMIT ?2",
                                    err);
    if (!s)
        return -1;
    store_bind_text(s, 1, state);
    sqlite3_bind_int64(s, 2, limit > 0 ? limit : -1);
    return task_rows(st, s, v, n, err);
}

int store_task_counts(store_t *st, long long counts[5], exa_error_t *err)
{
    static const char *const names[5] = {"queued", "leased", "done", "failed",
                                         "cancelled"};
    sqlite3_stmt *s = store_prepare(
        st, "SELECT state, count(*) FROM tasks GROUP BY state", err);
    int rc;
    if (!s)
        return -1;
    for (int i = 0; i < 5; i++)
        counts[i] = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *w = (const char *)sqlite3_column_text(s, 0);
        for (int i = 0; i < 5; i++)
            if (w && !strcmp(w, names[i]))
                counts[i] = sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "counting tasks");
    return 0;
}

int store_task_queued_fitting(store_t *st, long long cpus, long long gpus,
                              long long ram_mb, double timeout_max,
                              const char *cluster, long long limit,
                              struct task_rec **v, size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT " TASK_COLS " FROM tasks t WHERE t.state = 'queued'"
        " AND t.cpus <= ?1 AND t.gpus <= ?2 AND t.ram_mb <= ?3"
        " AND (?4 < 0 OR t.timeout_s <= ?4)"
        " AND (t.cluster IS NULL OR t.cluster = ?6) ORDER BY t.id LIMIT ?5",
        err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, cpus);
    sqlite3_bind_int64(s, 2, gpus);
    sqlite3_bind_int64(s, 3, ram_mb);
    sqlite3_bind_double(s, 4, timeout_max);
    sqlite3_bind_int64(s, 5, limit > 0 ? limit : -1);
    store_bind_text(s, 6, cluster);
    return task_rows(st, s, v, n, err);
}

int store_task_list_run(store_t *st, const char *run_id, const char *cluster,
                        struct task_rec **v, size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT " TASK_COLS " FROM tasks t"
                                    " WHERE t.run_id = ?1 AND t.cluster = ?2"
                                    " ORDER BY t.id DESC",
                                    err);
    if (!s)
        return -1;
    store_bind_text(s, 1, run_id);
    store_bind_text(s, 2, cluster);
    return task_rows(st, s, v, n, err);
}

long long store_task_lease(store_t *st, long long id, const char *worker_id,
                           double now, double expires, exa_error_t *err)
{
    sqlite3_stmt *s =
        store_prepare(st,
                      "UPDATE tasks SET state = 'leased', attempt = attempt + 1"
                      " WHERE id = ? AND state = 'queued' RETURNING attempt",
                      err);
    long long attempt;
    int rc;
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        if (rc == SQLITE_DONE)
            return 0;
        return store_err(st, err, "leasing a task");
    }
    attempt = sqlite3_column_int64(s, 0);
    sqlite3_step(s);
    sqlite3_finalize(s);
    s = store_prepare(st,
                      "INSERT INTO task_attempts (task_id, attempt, worker_id,"
                      " leased_at, lease_expires_at) VALUES (?, ?, ?, ?, ?)",
                      err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, attempt);
    store_bind_text(s, 3, worker_id);
    sqlite3_bind_double(s, 4, now);
    sqlite3_bind_double(s, 5, expires);
    if (step_done(st, s, "recording an attempt", err) < 0)
        return -1;
    return attempt;
}

int store_task_set_state(store_t *st, long long id, const char *state,
                         const char *reason, long long exit_code,
                         long long signal, long long done_attempt,
                         double ended_at, double queued_since, int infra_inc,
                         exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE tasks SET state = ?2, reason = COALESCE(?3, reason),"
        " exit_code = COALESCE(?4, exit_code),"
        " signal = COALESCE(?5, signal),"
        " done_attempt = COALESCE(?6, done_attempt),"
        " ended_at = COALESCE(?7, ended_at),"
        " queued_since = COALESCE(?8, queued_since),"
        " infra_failures = infra_failures + ?9 WHERE id = ?1",
        err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    store_bind_text(s, 2, state);
    store_bind_text(s, 3, reason);
    bind_int(s, 4, exit_code);
    bind_int(s, 5, signal);
    bind_int(s, 6, done_attempt);
    bind_time(s, 7, ended_at);
    bind_time(s, 8, queued_since);
    sqlite3_bind_int(s, 9, infra_inc);
    return step_done(st, s, "updating a task", err);
}

int store_task_reopen(store_t *st, long long id, double queued_since,
                      exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE tasks SET state = 'queued', reason = NULL, exit_code = NULL,"
        " signal = NULL, done_attempt = NULL, ended_at = NULL,"
        " queued_since = ?2 WHERE id = ?1 AND state = 'failed'",
        err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    bind_time(s, 2, queued_since);
    return step_done(st, s, "reopening a task", err);
}

/* ---- attempts ---- */

#define ATTEMPT_COLS                                                           \
    "task_id, attempt, worker_id, leased_at, lease_expires_at, ended_at,"      \
    " outcome, exit_code, signal, cause"

static void attempt_row(sqlite3_stmt *s, struct attempt_rec *a)
{
    a->task_id = sqlite3_column_int64(s, 0);
    a->attempt = sqlite3_column_int64(s, 1);
    a->worker_id = col_dup(s, 2);
    a->leased_at = col_time(s, 3);
    a->lease_expires_at = col_time(s, 4);
    a->ended_at = col_time(s, 5);
    a->outcome = col_dup(s, 6);
    a->exit_code = col_int(s, 7);
    a->signal = col_int(s, 8);
    a->cause = col_dup(s, 9);
}

static int attempt_rows(store_t *st, sqlite3_stmt *s, struct attempt_rec **v,
                        size_t *n, exa_error_t *err)
{
    struct attempt_rec *out = NULL;
    size_t cnt = 0, alloc = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, cnt + 1, alloc);
        attempt_row(s, &out[cnt++]);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        attempt_rec_free_list(out, cnt);
        return store_err(st, err, "reading task attempts");
    }
    *v = out;
    *n = cnt;
    return 0;
}

int store_attempt_list(store_t *st, long long task_id, struct attempt_rec **v,
                       size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT " ATTEMPT_COLS
                                    " FROM task_attempts WHERE task_id = ?"
                                    " ORDER BY attempt",
                                    err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    return attempt_rows(st, s, v, n, err);
}

int store_attempt_get(store_t *st, long long task_id, long long attempt,
                      struct attempt_rec *out, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT " ATTEMPT_COLS " FROM task_attempts"
                                    " WHERE task_id = ? AND attempt = ?",
                                    err);
    int rc;
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, attempt);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        memset(out, 0, sizeof(*out));
        attempt_row(s, out);
        sqlite3_finalize(s);
        return 1;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading an attempt");
    return 0;
}

int store_attempt_open(store_t *st, const char *worker_id,
                       struct attempt_rec **v, size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT " ATTEMPT_COLS " FROM task_attempts WHERE outcome IS NULL"
        " AND (?1 IS NULL OR worker_id = ?1) ORDER BY task_id, attempt",
        err);
    if (!s)
        return -1;
    store_bind_text(s, 1, worker_id);
    return attempt_rows(st, s, v, n, err);
}

int store_attempt_close(store_t *st, long long task_id, long long attempt,
                        const char *outcome, const char *cause,
                        long long exit_code, long long signal, double ended_at,
                        exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE task_attempts SET outcome = ?3, cause = ?4, exit_code = ?5,"
        " signal = ?6, ended_at = ?7"
        " WHERE task_id = ?1 AND attempt = ?2 AND outcome IS NULL",
        err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, attempt);
    store_bind_text(s, 3, outcome);
    store_bind_text(s, 4, cause);
    bind_int(s, 5, exit_code);
    bind_int(s, 6, signal);
    sqlite3_bind_double(s, 7, ended_at);
    if (step_done(st, s, "closing an attempt", err) < 0)
        return -1;
    return sqlite3_changes(st->db) > 0;
}

int store_attempt_extend_all(store_t *st, double expires, exa_error_t *err)
{
    sqlite3_stmt *s =
        store_prepare(st,
                      "UPDATE task_attempts SET lease_expires_at = ?"
                      " WHERE outcome IS NULL",
                      err);
    if (!s)
        return -1;
    sqlite3_bind_double(s, 1, expires);
    return step_done(st, s, "extending leases", err);
}

/* ---- results and artifacts ---- */

int store_result_insert(store_t *st, long long task_id, long long attempt,
                        const char *idem, const char *body, double now,
                        exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT OR IGNORE INTO task_results (task_id, attempt, idem, body,"
        " received_at) VALUES (?, ?, ?, ?, ?)",
        err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, attempt);
    store_bind_text(s, 3, idem);
    store_bind_text(s, 4, body);
    sqlite3_bind_double(s, 5, now);
    if (step_done(st, s, "recording a result", err) < 0)
        return -1;
    return sqlite3_changes(st->db) > 0;
}

int store_result_get(store_t *st, long long task_id, long long attempt,
                     char **body, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT body FROM task_results"
                                    " WHERE task_id = ? AND attempt = ?",
                                    err);
    int rc;
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, attempt);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *body = col_dup(s, 0);
        sqlite3_finalize(s);
        return 1;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading a result");
    return 0;
}

long long store_result_count(store_t *st, long long task_id, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "SELECT count(*) FROM task_results WHERE task_id = ?", err);
    long long c;
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    if (sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return store_err(st, err, "counting results");
    }
    c = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return c;
}

int store_artifact_hash(store_t *st, long long task_id, long long attempt,
                        const char *name, char sha_out[65], exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT sha256 FROM task_artifacts WHERE task_id = ? AND attempt = ?"
        " AND name = ?",
        err);
    int rc;
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, attempt);
    store_bind_text(s, 3, name);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const char *h = (const char *)sqlite3_column_text(s, 0);
        xsnprintf(sha_out, 65, "%s", h ? h : "");
        sqlite3_finalize(s);
        return 1;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading an artifact");
    return 0;
}

int store_artifact_get(store_t *st, long long task_id, long long attempt,
                       const char *name, char sha_out[65], char **path,
                       exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT sha256, path FROM task_artifacts WHERE task_id = ?"
        " AND attempt = ? AND name = ?",
        err);
    int rc;
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, attempt);
    store_bind_text(s, 3, name);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const char *h = (const char *)sqlite3_column_text(s, 0);
        xsnprintf(sha_out, 65, "%s", h ? h : "");
        *path = col_dup(s, 1);
        sqlite3_finalize(s);
        return *path ? 1 : 0;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading an artifact");
    return 0;
}

int store_artifact_put(store_t *st, long long task_id, long long attempt,
                       const char *name, const char *sha256, long long size,
                       const char *path, double now, exa_error_t *err)
{
    char have[65];
    int found = store_artifact_hash(st, task_id, attempt, name, have, err);
    sqlite3_stmt *s;
    if (found < 0)
        return -1;
    if (found)
        return strcmp(have, sha256) ? 2 : 0;
    s = store_prepare(st,
                      "INSERT INTO task_artifacts (task_id, attempt, name,"
                      " sha256, size, path, created_at)"
                      " VALUES (?, ?, ?, ?, ?, ?, ?)",
                      err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, attempt);
    store_bind_text(s, 3, name);
    store_bind_text(s, 4, sha256);
    sqlite3_bind_int64(s, 5, size);
    store_bind_text(s, 6, path);
    sqlite3_bind_double(s, 7, now);
    if (step_done(st, s, "recording an artifact", err) < 0)
        return -1;
    return 1;
}

/* ---- workers ---- */

#define WORKER_COLS                                                            \
    "id, request_id, cluster, profile, slurm_job_id, node, host, pid,"         \
    " session_hash, incarnation, state, drain_requested, registered_at,"       \
    " last_seen_at, walltime_end_at, cpus, gpus, ram_mb, capacity, labels,"    \
    " protocol, exa_version, exit_reason"

static void worker_row(sqlite3_stmt *s, struct worker_rec *w)
{
    worker_rec_init(w);
    w->id = col_dup(s, 0);
    w->request_id = col_dup(s, 1);
    w->cluster = col_dup(s, 2);
    w->profile = col_dup(s, 3);
    w->slurm_job_id = col_dup(s, 4);
    w->node = col_dup(s, 5);
    w->host = col_dup(s, 6);
    w->pid = col_int(s, 7);
    w->session_hash = col_dup(s, 8);
    w->incarnation = sqlite3_column_int64(s, 9);
    w->state = col_dup(s, 10);
    w->drain_requested = sqlite3_column_int(s, 11);
    w->registered_at = col_time(s, 12);
    w->last_seen_at = col_time(s, 13);
    w->walltime_end_at = col_time(s, 14);
    w->cpus = sqlite3_column_int64(s, 15);
    w->gpus = sqlite3_column_int64(s, 16);
    w->ram_mb = sqlite3_column_int64(s, 17);
    w->capacity = sqlite3_column_int64(s, 18);
    w->labels = col_dup(s, 19);
    w->protocol = col_int(s, 20);
    w->exa_version = col_dup(s, 21);
    w->exit_reason = col_dup(s, 22);
}

int store_worker_put(store_t *st, const struct worker_rec *w, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT OR REPLACE INTO workers (" WORKER_COLS ") VALUES (?, ?, ?, ?,"
        " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        err);
    if (!s)
        return -1;
    store_bind_text(s, 1, w->id);
    store_bind_text(s, 2, w->request_id);
    store_bind_text(s, 3, w->cluster);
    store_bind_text(s, 4, w->profile);
    store_bind_text(s, 5, w->slurm_job_id);
    store_bind_text(s, 6, w->node);
    store_bind_text(s, 7, w->host);
    bind_int(s, 8, w->pid);
    store_bind_text(s, 9, w->session_hash);
    sqlite3_bind_int64(s, 10, w->incarnation);
    store_bind_text(s, 11, w->state ? w->state : "attached");
    sqlite3_bind_int(s, 12, w->drain_requested);
    sqlite3_bind_double(s, 13, w->registered_at);
    bind_time(s, 14, w->last_seen_at);
    bind_time(s, 15, w->walltime_end_at);
    sqlite3_bind_int64(s, 16, w->cpus);
    sqlite3_bind_int64(s, 17, w->gpus);
    sqlite3_bind_int64(s, 18, w->ram_mb);
    sqlite3_bind_int64(s, 19, w->capacity);
    store_bind_text(s, 20, w->labels ? w->labels : "");
    bind_int(s, 21, w->protocol);
    store_bind_text(s, 22, w->exa_version);
    store_bind_text(s, 23, w->exit_reason);
    return step_done(st, s, "writing a worker", err);
}

int store_worker_get(store_t *st, const char *id, struct worker_rec *out,
                     exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "SELECT " WORKER_COLS " FROM workers WHERE id = ?", err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, id);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        worker_row(s, out);
        sqlite3_finalize(s);
        return 1;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading a worker");
    return 0;
}

int store_worker_list(store_t *st, struct worker_rec **v, size_t *n,
                      exa_error_t *err)
{
    sqlite3_stmt *s =
        store_prepare(st,
                      "SELECT " WORKER_COLS " FROM workers ORDER BY"
                      " state NOT IN ('attached','draining'), id",
                      err);
    struct worker_rec *out = NULL;
    size_t cnt = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, cnt + 1, alloc);
        worker_row(s, &out[cnt++]);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        worker_rec_free_list(out, cnt);
        return store_err(st, err, "reading workers");
    }
    *v = out;
    *n = cnt;
    return 0;
}

int store_worker_set_state(store_t *st, const char *id, const char *state,
                           const char *exit_reason, double last_seen,
                           exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE workers SET state = ?2,"
        " exit_reason = COALESCE(?3, exit_reason),"
        " last_seen_at = COALESCE(?4, last_seen_at) WHERE id = ?1",
        err);
    if (!s)
        return -1;
    store_bind_text(s, 1, id);
    store_bind_text(s, 2, state);
    store_bind_text(s, 3, exit_reason);
    bind_time(s, 4, last_seen);
    return step_done(st, s, "updating a worker", err);
}

int store_worker_request_drain(store_t *st, const char *id, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE workers SET drain_requested = 1 WHERE (?1 IS NULL OR id = ?1)"
        " AND state IN ('attached','draining')",
        err);
    if (!s)
        return -1;
    store_bind_text(s, 1, id);
    return step_done(st, s, "requesting a drain", err);
}

/* ---- join tokens ---- */

int store_join_insert(store_t *st, const struct join_rec *j, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT INTO join_tokens (jti, worker_id, request_id, cluster,"
        " profile, created_at, exp) VALUES (?, ?, ?, ?, ?, ?, ?)",
        err);
    if (!s)
        return -1;
    store_bind_text(s, 1, j->jti);
    store_bind_text(s, 2, j->worker_id);
    store_bind_text(s, 3, j->request_id);
    store_bind_text(s, 4, j->cluster);
    store_bind_text(s, 5, j->profile);
    sqlite3_bind_double(s, 6, j->created_at);
    sqlite3_bind_double(s, 7, j->exp);
    return step_done(st, s, "recording a join token", err);
}

int store_join_get(store_t *st, const char *jti, struct join_rec *out,
                   exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT jti, worker_id, request_id, cluster, profile, created_at,"
        " exp, used_at, register_nonce FROM join_tokens WHERE jti = ?",
        err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, jti);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        memset(out, 0, sizeof(*out));
        out->jti = col_dup(s, 0);
        out->worker_id = col_dup(s, 1);
        out->request_id = col_dup(s, 2);
        out->cluster = col_dup(s, 3);
        out->profile = col_dup(s, 4);
        out->created_at = col_time(s, 5);
        out->exp = col_time(s, 6);
        out->used_at = col_time(s, 7);
        out->register_nonce = col_dup(s, 8);
        sqlite3_finalize(s);
        return 1;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading a join token");
    return 0;
}

int store_join_burn(store_t *st, const char *jti, const char *nonce, double now,
                    exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "UPDATE join_tokens SET used_at = ?2,"
                                    " register_nonce = ?3"
                                    " WHERE jti = ?1 AND used_at IS NULL",
                                    err);
    if (!s)
        return -1;
    store_bind_text(s, 1, jti);
    sqlite3_bind_double(s, 2, now);
    store_bind_text(s, 3, nonce);
    if (step_done(st, s, "burning a join token", err) < 0)
        return -1;
    return sqlite3_changes(st->db) > 0;
}

/* ---- events ---- */

int store_wevent_add(store_t *st, double ts, const char *kind,
                     const char *cluster, const char *profile,
                     const char *worker_id, long long task_id,
                     long long attempt, const char *detail, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT INTO worker_events (ts, kind, cluster, profile, worker_id,"
        " task_id, attempt, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        err);
    if (!s)
        return -1;
    sqlite3_bind_double(s, 1, ts);
    store_bind_text(s, 2, kind);
    store_bind_text(s, 3, cluster);
    store_bind_text(s, 4, profile);
    store_bind_text(s, 5, worker_id);
    bind_int(s, 6, task_id);
    bind_int(s, 7, attempt);
    store_bind_text(s, 8, detail);
    return step_done(st, s, "recording an event", err);
}

int store_wevent_list(store_t *st, const char *kind, long long after_id,
                      long long limit, struct wevent_rec **v, size_t *n,
                      exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT id, ts, kind, cluster, profile, worker_id, task_id, attempt,"
        " detail FROM worker_events WHERE id > ?2"
        " AND (?1 IS NULL OR kind = ?1) ORDER BY id LIMIT ?3",
        err);
    struct wevent_rec *out = NULL;
    size_t cnt = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, kind);
    sqlite3_bind_int64(s, 2, after_id);
    sqlite3_bind_int64(s, 3, limit > 0 ? limit : -1);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct wevent_rec *e;
        ALLOC_GROW(out, cnt + 1, alloc);
        e = &out[cnt++];
        e->id = sqlite3_column_int64(s, 0);
        e->ts = col_time(s, 1);
        e->kind = col_dup(s, 2);
        e->cluster = col_dup(s, 3);
        e->profile = col_dup(s, 4);
        e->worker_id = col_dup(s, 5);
        e->task_id = col_int(s, 6);
        e->attempt = col_int(s, 7);
        e->detail = col_dup(s, 8);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        wevent_rec_free_list(out, cnt);
        return store_err(st, err, "reading events");
    }
    *v = out;
    *n = cnt;
    return 0;
}

int store_attempt_relabel(store_t *st, long long task_id, long long attempt,
                          const char *outcome, const char *cause,
                          long long exit_code, long long signal,
                          double ended_at, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE task_attempts SET outcome = ?3, cause = COALESCE(?4, cause),"
        " exit_code = COALESCE(?5, exit_code), signal = COALESCE(?6, signal),"
        " ended_at = COALESCE(ended_at, ?7)"
        " WHERE task_id = ?1 AND attempt = ?2",
        err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, task_id);
    sqlite3_bind_int64(s, 2, attempt);
    store_bind_text(s, 3, outcome);
    store_bind_text(s, 4, cause);
    bind_int(s, 5, exit_code);
    bind_int(s, 6, signal);
    sqlite3_bind_double(s, 7, ended_at);
    return step_done(st, s, "relabelling an attempt", err);
}

long long store_data_version(store_t *st)
{
    sqlite3_stmt *s = store_prepare(st, "PRAGMA data_version", NULL);
    long long v = -1;
    if (!s)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}
