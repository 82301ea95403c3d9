/*
 * models.c - model_versions accessors (see models.h).
 *
 * The version number, the artifact publish and the insert happen in one
 * IMMEDIATE transaction: the write lock is taken before max(version) is
 * read, so a concurrent registration waits (busy timeout) rather than
 * racing to the same number, and a publish that fails rolls everything
 * back.
 */
#include "libstore/models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

void model_version_init(struct model_version *mv)
{
    memset(mv, 0, sizeof(*mv));
    mv->version = 0;
    mv->rmse = mv->mse = mv->mape = NAN;
    mv->train_rows = mv->val_rows = mv->skipped_rows = JOB_NULL_INT;
    mv->job_ref = JOB_NULL_INT;
    mv->task_id = mv->task_attempt = JOB_NULL_INT;
}

void model_version_release(struct model_version *mv)
{
    free(mv->model);
    free(mv->stage);
    free(mv->metrics);
    free(mv->dataset);
    free(mv->dataset_path);
    free(mv->artifact_path);
    free(mv->artifact_sha256);
    free(mv->cluster);
    free(mv->scheduler);
    free(mv->job_id);
    free(mv->run_uuid);
    free(mv->worker_id);
    free(mv->created_at);
    model_version_init(mv);
}

void model_version_free_list(struct model_version *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        model_version_release(&list[i]);
    free(list);
}

static void bind_real(sqlite3_stmt *s, int i, double v)
{
    if (isnan(v) || isinf(v))
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_double(s, i, v);
}

static void bind_int(sqlite3_stmt *s, int i, long long v)
{
    if (v == JOB_NULL_INT)
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_int64(s, i, v);
}

static int next_version(store_t *st, const char *model, long long *out,
                        exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "SELECT COALESCE(MAX(version), 0) + 1 FROM model_versions "
        "WHERE model = ?",
        err);
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, model);
    if (sqlite3_step(stmt) != SQLITE_ROW) {
        sqlite3_finalize(stmt);
        return store_err(st, err, "reading model versions");
    }
    *out = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return 0;
}

static int insert_version(store_t *st, struct model_version *mv,
                          const char *now, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "INSERT INTO model_versions (model, version, stage, rmse, mse, mape,"
        " metrics, dataset, dataset_path, train_rows, val_rows, skipped_rows,"
        " artifact_path, artifact_sha256, job_ref, cluster, scheduler,"
        " job_id, run_uuid, created_at, task_id, task_attempt, worker_id)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        err);
    int i = 1, rc;
    if (!stmt)
        return -1;
    store_bind_text(stmt, i++, mv->model);
    sqlite3_bind_int64(stmt, i++, mv->version);
    store_bind_text(stmt, i++, mv->stage ? mv->stage : "None");
    bind_real(stmt, i++, mv->rmse);
    bind_real(stmt, i++, mv->mse);
    bind_real(stmt, i++, mv->mape);
    store_bind_text(stmt, i++, mv->metrics);
    store_bind_text(stmt, i++, mv->dataset);
    store_bind_text(stmt, i++, mv->dataset_path);
    bind_int(stmt, i++, mv->train_rows);
    bind_int(stmt, i++, mv->val_rows);
    bind_int(stmt, i++, mv->skipped_rows);
    store_bind_text(stmt, i++, mv->artifact_path);
    store_bind_text(stmt, i++, mv->artifact_sha256);
    bind_int(stmt, i++, mv->job_ref);
    store_bind_text(stmt, i++, mv->cluster);
    store_bind_text(stmt, i++, mv->scheduler);
    store_bind_text(stmt, i++, mv->job_id);
    store_bind_text(stmt, i++, mv->run_uuid);
    store_bind_text(stmt, i++, now);
    bind_int(stmt, i++, mv->task_id);
    bind_int(stmt, i++, mv->task_attempt);
    store_bind_text(stmt, i++, mv->worker_id);
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "registering model version");
    mv->id = sqlite3_last_insert_rowid(st->db);
    return 0;
}

static int link_job(store_t *st, const struct model_version *mv,
                    const char *now, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st, "UPDATE jobs SET model_version = ?, updated_at = ? WHERE id = ?",
        err);
    int rc;
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, mv->version);
    store_bind_text(stmt, 2, now);
    sqlite3_bind_int64(stmt, 3, mv->job_ref);
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "linking job to model version");
    return 0;
}

int store_model_register(store_t *st, struct model_version *mv,
                         model_publish_f publish, model_unpublish_f unpublish,
                         void *arg, exa_error_t *err)
{
    char now[32];
    long long v = 0;
    int published = 0;

    if (!mv->model || !*mv->model)
        return exa_err(err, EXA_EUSAGE, "a model version needs a model name");
    if (store_begin(st, err) < 0)
        return -1;
    if (next_version(st, mv->model, &v, err) < 0)
        goto fail;
    mv->version = v;
    if (publish) {
        if (publish(mv, arg, err) < 0)
            goto fail;
        published = 1;
    }
    store_now(now, sizeof(now));
    if (insert_version(st, mv, now, err) < 0)
        goto fail;
    if (mv->job_ref != JOB_NULL_INT && link_job(st, mv, now, err) < 0)
        goto fail;
    if (store_commit(st, err) < 0)
        goto fail;
    free(mv->created_at);
    mv->created_at = xstrdup(now);
    return 0;
fail:
    store_rollback(st);
    if (published && unpublish)
        unpublish(mv, arg);
    mv->version = 0;
    mv->id = 0;
    return -1;
}

void model_summary_free_list(struct model_summary *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(list[i].model);
        free(list[i].latest_stage);
        free(list[i].latest_created_at);
    }
    free(list);
}

static char *col_str(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static double col_real(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL
               ? NAN
               : sqlite3_column_double(s, i);
}

static long long col_int(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL
               ? JOB_NULL_INT
               : sqlite3_column_int64(s, i);
}

int store_model_list(store_t *st, struct model_summary **out, size_t *n,
                     exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "SELECT m.model, c.n, m.version, m.stage, m.rmse, m.created_at"
        " FROM model_versions m JOIN (SELECT model, COUNT(*) AS n,"
        " MAX(version) AS v FROM model_versions GROUP BY model) c"
        " ON m.model = c.model AND m.version = c.v ORDER BY m.model",
        err);
    struct model_summary *list = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!stmt)
        return -1;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        struct model_summary *m;
        ALLOC_GROW(list, nr + 1, alloc);
        m = &list[nr++];
        m->model = col_str(stmt, 0);
        m->versions = sqlite3_column_int64(stmt, 1);
        m->latest_version = sqlite3_column_int64(stmt, 2);
        m->latest_stage = col_str(stmt, 3);
        m->latest_rmse = col_real(stmt, 4);
        m->latest_created_at = col_str(stmt, 5);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
        model_summary_free_list(list, nr);
        return store_err(st, err, "listing models");
    }
    *out = list;
    *n = nr;
    return 0;
}

int store_model_versions(store_t *st, const char *model, long long version,
                         struct model_version **out, size_t *n,
                         exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "SELECT id, model, version, stage, rmse, mse, mape, metrics,"
        " dataset, dataset_path, train_rows, val_rows, skipped_rows,"
        " artifact_path, artifact_sha256, job_ref, cluster, scheduler,"
        " job_id, run_uuid, created_at, task_id, task_attempt, worker_id"
        " FROM model_versions"
        " WHERE model = ? AND (? <= 0 OR version = ?) ORDER BY version",
        err);
    struct model_version *list = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, model);
    sqlite3_bind_int64(stmt, 2, version);
    sqlite3_bind_int64(stmt, 3, version);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        struct model_version *mv;
        int i = 0;
        ALLOC_GROW(list, nr + 1, alloc);
        mv = &list[nr++];
        model_version_init(mv);
        mv->id = sqlite3_column_int64(stmt, i++);
        mv->model = col_str(stmt, i++);
        mv->version = sqlite3_column_int64(stmt, i++);
        mv->stage = col_str(stmt, i++);
        mv->rmse = col_real(stmt, i++);
        mv->mse = col_real(stmt, i++);
        mv->mape = col_real(stmt, i++);
        mv->metrics = col_str(stmt, i++);
        mv->dataset = col_str(stmt, i++);
        mv->dataset_path = col_str(stmt, i++);
        mv->train_rows = col_int(stmt, i++);
        mv->val_rows = col_int(stmt, i++);
        mv->skipped_rows = col_int(stmt, i++);
        mv->artifact_path = col_str(stmt, i++);
        mv->artifact_sha256 = col_str(stmt, i++);
        mv->job_ref = col_int(stmt, i++);
        mv->cluster = col_str(stmt, i++);
        mv->scheduler = col_str(stmt, i++);
        mv->job_id = col_str(stmt, i++);
        mv->run_uuid = col_str(stmt, i++);
        mv->created_at = col_str(stmt, i++);
        mv->task_id = col_int(stmt, i++);
        mv->task_attempt = col_int(stmt, i++);
        mv->worker_id = col_str(stmt, i++);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
        model_version_free_list(list, nr);
        return store_err(st, err, "listing model versions");
    }
    *out = list;
    *n = nr;
    return 0;
}

static json_t *int_or_null(long long v)
{
    return jx_int_or_null(v != JOB_NULL_INT, v);
}

json_t *model_version_to_json(const struct model_version *mv)
{
    json_t *o = json_object(), *lin = json_object(), *m = json_object();
    json_t *details = NULL;
    jx_set(o, "model", jx_str(mv->model));
    jx_set(o, "version", json_integer(mv->version));
    jx_set(o, "stage", jx_str(mv->stage));
    jx_set(m, "rmse", jx_real(mv->rmse));
    jx_set(m, "mse", jx_real(mv->mse));
    jx_set(m, "mape", jx_real(mv->mape));
    jx_set(o, "metrics", m);
    if (mv->metrics)
        details = json_loads(mv->metrics, 0, NULL);
    jx_set(o, "evaluation", details);
    jx_set(o, "dataset", jx_str(mv->dataset));
    jx_set(o, "dataset_path", jx_str(mv->dataset_path));
    jx_set(o, "train_rows", int_or_null(mv->train_rows));
    jx_set(o, "val_rows", int_or_null(mv->val_rows));
    jx_set(o, "skipped_rows", int_or_null(mv->skipped_rows));
    jx_set(o, "artifact_path", jx_str(mv->artifact_path));
    jx_set(o, "artifact_sha256", jx_str(mv->artifact_sha256));
    jx_set(lin, "job_ref", int_or_null(mv->job_ref));
    jx_set(lin, "job_id", jx_str(mv->job_id));
    jx_set(lin, "cluster", jx_str(mv->cluster));
    jx_set(lin, "scheduler", jx_str(mv->scheduler));
    jx_set(lin, "run_uuid", jx_str(mv->run_uuid));
    if (mv->task_id != JOB_NULL_INT) { /* trained by a task of a worker */
        jx_set(lin, "task_id", json_integer(mv->task_id));
        jx_set(lin, "task_attempt", int_or_null(mv->task_attempt));
        jx_set(lin, "worker_id", jx_str(mv->worker_id));
    }
    jx_set(o, "lineage", lin);
    jx_set(o, "created_at", jx_str(mv->created_at));
    return o;
}
