/*
 * jobs.c - the jobs table accessors (see jobs.h).
 *
 * One column table (name, type, offset into struct job_rec) drives insert,
 * partial update, read and JSON, so a column is added in one place (and
 * in a new migration) and no accessor can forget it.
 */
#include "libstore/jobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libstore/clusters.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

enum col_type { COL_TEXT, COL_INT, COL_REAL };

struct col {
    const char *name;
    enum col_type type;
    size_t off;
    size_t namelen; /* strlen(name): the JSON key written without a scan */
};

#define TEXT(f)                                                                \
    {                                                                          \
#f, COL_TEXT, offsetof(struct job_rec, f), sizeof(#f) - 1              \
    }
#define INT(f)                                                                 \
    {                                                                          \
#f, COL_INT, offsetof(struct job_rec, f), sizeof(#f) - 1               \
    }
#define REAL(f)                                                                \
    {                                                                          \
#f, COL_REAL, offsetof(struct job_rec, f), sizeof(#f) - 1              \
    }

/* Every column but id, in table order. */
static const struct col cols[] = {
    TEXT(cluster),     TEXT(scheduler),     TEXT(job_id),
    TEXT(run_uuid),    TEXT(job_name),      TEXT(kind),
    TEXT(model),       TEXT(dataset),       TEXT(state),
    TEXT(raw_state),   TEXT(reason),        INT(exit_code),
    INT(signal),       TEXT(submit_time),   TEXT(start_time),
    TEXT(end_time),    REAL(queue_seconds), REAL(run_seconds),
    REAL(cpu_seconds), INT(nodes),          INT(gpus),
    INT(cpus),         REAL(gpu_hours),     REAL(cpu_hours),
    TEXT(remote_dir),  INT(model_version),  TEXT(created_at),
    TEXT(updated_at),
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

#define FIELD(j, c, T) ((T *)((char *)(j) + (c)->off))
#define CFIELD(j, c, T) ((const T *)((const char *)(j) + (c)->off))

void job_rec_init(struct job_rec *j)
{
    memset(j, 0, sizeof(*j));
    for (size_t i = 0; i < NCOLS; i++) {
        const struct col *c = &cols[i];
        if (c->type == COL_INT)
            *FIELD(j, c, long long) = JOB_NULL_INT;
        else if (c->type == COL_REAL)
            *FIELD(j, c, double) = NAN;
    }
}

void job_rec_release(struct job_rec *j)
{
    for (size_t i = 0; i < NCOLS; i++)
        if (cols[i].type == COL_TEXT)
            free(*FIELD(j, &cols[i], char *));
    job_rec_init(j);
}

void job_rec_free_list(struct job_rec *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        job_rec_release(&list[i]);
    free(list);
}

static int col_present(const struct job_rec *j, const struct col *c)
{
    switch (c->type) {
    case COL_TEXT:
        return *CFIELD(j, c, char *) != NULL;
    case COL_INT:
        return *CFIELD(j, c, long long) != JOB_NULL_INT;
    case COL_REAL:
        return !isnan(*CFIELD(j, c, double));
    }
    return 0;
}

static int bind_col(sqlite3_stmt *stmt, int idx, const struct job_rec *j,
                    const struct col *c)
{
    if (!col_present(j, c))
        return sqlite3_bind_null(stmt, idx);
    switch (c->type) {
    case COL_TEXT:
        return store_bind_text(stmt, idx, *CFIELD(j, c, char *));
    case COL_INT:
        return sqlite3_bind_int64(stmt, idx, *CFIELD(j, c, long long));
    case COL_REAL:
        return sqlite3_bind_double(stmt, idx, *CFIELD(j, c, double));
    }
    return SQLITE_MISUSE;
}

int store_job_insert(store_t *st, const struct job_rec *j, long long *id_out,
                     exa_error_t *err)
{
    struct job_rec row = *j; /* shallow: only defaults are swapped in */
    struct strbuf sql = STRBUF_INIT;
    sqlite3_stmt *stmt;
    char now[32];
    int rc;

    if (!j->cluster || !j->scheduler || !j->job_id)
        return exa_err(err, EXA_EUSAGE,
                       "a job needs a cluster, a scheduler and a job id");
    store_now(now, sizeof(now));
    if (!row.state)
        row.state = "PENDING";
    if (!row.kind)
        row.kind = "train";
    row.created_at = now;
    row.updated_at = now;

    strbuf_addstr(&sql, "INSERT INTO jobs (");
    for (size_t i = 0; i < NCOLS; i++)
        strbuf_addf(&sql, "%s%s", i ? "," : "", cols[i].name);
    strbuf_addstr(&sql, ") VALUES (");
    for (size_t i = 0; i < NCOLS; i++)
        strbuf_addstr(&sql, i ? ",?" : "?");
    strbuf_addch(&sql, ')');
    stmt = store_prepare(st, sql.buf, err);
    strbuf_release(&sql);
    if (!stmt)
        return -1;
    for (size_t i = 0; i < NCOLS; i++)
        bind_col(stmt, (int)i + 1, &row, &cols[i]);
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_CONSTRAINT_UNIQUE)
        return exa_err(err, EXA_EFAIL,
                       "job '%s' on cluster '%s' is already recorded",
                       j->job_id, j->cluster);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "recording job");
    if (id_out)
        *id_out = sqlite3_last_insert_rowid(st->db);
    return 0;
}

int store_job_update(store_t *st, const char *cluster, const char *job_id,
                     const struct job_rec *changes, exa_error_t *err)
{
    struct strbuf sql = STRBUF_INIT;
    sqlite3_stmt *stmt;
    char now[32];
    int idx = 1, rc;

    store_now(now, sizeof(now));
    strbuf_addstr(&sql, "UPDATE jobs SET updated_at = ?");
    for (size_t i = 0; i < NCOLS; i++) {
        const struct col *c = &cols[i];
        if (!strcmp(c->name, "cluster") || !strcmp(c->name, "job_id") ||
            !strcmp(c->name, "created_at") || !strcmp(c->name, "updated_at"))
            continue;
        if (col_present(changes, c))
            strbuf_addf(&sql, ", %s = ?", c->name);
    }
    strbuf_addstr(&sql, " WHERE cluster = ? AND job_id = ?");
    stmt = store_prepare(st, sql.buf, err);
    strbuf_release(&sql);
    if (!stmt)
        return -1;
    store_bind_text(stmt, idx++, now);
    for (size_t i = 0; i < NCOLS; i++) {
        const struct col *c = &cols[i];
        if (!strcmp(c->name, "cluster") || !strcmp(c->name, "job_id") ||
            !strcmp(c->name, "created_at") || !strcmp(c->name, "updated_at"))
            continue;
        if (col_present(changes, c))
            bind_col(stmt, idx++, changes, c);
    }
    store_bind_text(stmt, idx++, cluster);
    store_bind_text(stmt, idx++, job_id);
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "updating job");
    if (sqlite3_changes(st->db) == 0)
        return exa_err(err, EXA_ENOTFOUND, "no job '%s' on cluster '%s'",
                       job_id, cluster);
    return 0;
}

int store_job_upsert(store_t *st, const struct job_rec *j, long long *id_out,
                     exa_error_t *err)
{
    exa_error_t e = EXA_ERROR_INIT;
    struct job_rec got;
    if (store_job_insert(st, j, id_out, &e) == 0)
        return 0;
    if (e.code != EXA_EFAIL) {
        if (err)
            *err = e;
        return -1;
    }
    if (store_job_update(st, j->cluster, j->job_id, j, err) < 0 ||
        store_job_get(st, j->cluster, j->job_id, &got, err) < 0)
        return -1;
    if (id_out)
        *id_out = got.id;
    job_rec_release(&got);
    return 0;
}

/* SELECT list: id then every column, matching read_row(). */
static void select_list(struct strbuf *sql)
{
    strbuf_addstr(sql, "SELECT id");
    for (size_t i = 0; i < NCOLS; i++)
        strbuf_addf(sql, ",%s", cols[i].name);
    strbuf_addstr(sql, " FROM jobs");
}

static void read_row(sqlite3_stmt *stmt, struct job_rec *j)
{
    job_rec_init(j);
    j->id = sqlite3_column_int64(stmt, 0);
    for (size_t i = 0; i < NCOLS; i++) {
        const struct col *c = &cols[i];
        int k = (int)i + 1;
        if (c->type == COL_TEXT) {
            /* NULL for SQL NULL: no separate type check */
            const unsigned char *t = sqlite3_column_text(stmt, k);
            if (t)
                *FIELD(j, c, char *) = xstrdup((const char *)t);
            continue;
        }
        if (sqlite3_column_type(stmt, k) == SQLITE_NULL)
            continue;
        if (c->type == COL_INT)
            *FIELD(j, c, long long) = sqlite3_column_int64(stmt, k);
        else
            *FIELD(j, c, double) = sqlite3_column_double(stmt, k);
    }
}

int store_job_get(store_t *st, const char *cluster, const char *job_id,
                  struct job_rec *out, exa_error_t *err)
{
    struct strbuf sql = STRBUF_INIT;
    sqlite3_stmt *stmt;
    int rc;

    select_list(&sql);
    strbuf_addstr(&sql, " WHERE cluster = ? AND job_id = ?");
    stmt = store_prepare(st, sql.buf, err);
    strbuf_release(&sql);
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, cluster);
    store_bind_text(stmt, 2, job_id);
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        read_row(stmt, out);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_DONE)
        return exa_err(err, EXA_ENOTFOUND, "no job '%s' on cluster '%s'",
                       job_id, cluster);
    if (rc != SQLITE_ROW)
        return store_err(st, err, "reading job");
    return 0;
}

int store_job_list(store_t *st, const struct job_filter *f,
                   struct job_rec **out, size_t *n, exa_error_t *err)
{
    static const struct job_filter none = {0};
    struct strbuf sql = STRBUF_INIT;
    sqlite3_stmt *stmt;
    struct job_rec *list = NULL;
    size_t nr = 0, alloc = 0;
    const char *where = " WHERE ";
    int idx = 1, rc;

    if (!f)
        f = &none;
    select_list(&sql);
    if (f->model) {
        strbuf_addf(&sql, "%smodel = ?", where);
        where = " AND ";
    }
    if (f->cluster) {
        strbuf_addf(&sql, "%scluster = ?", where);
        where = " AND ";
    }
    if (f->state) {
        strbuf_addf(&sql, "%sstate = ?", where);
        where = " AND ";
    }
    if (f->run_uuid) {
        strbuf_addf(&sql, "%srun_uuid = ?", where);
        where = " AND ";
    }
    if (f->since)
        strbuf_addf(&sql, "%sCOALESCE(submit_time, created_at) >= ?", where);
    strbuf_addstr(&sql, " ORDER BY id DESC");
    if (f->limit > 0 || f->offset > 0)
        strbuf_addstr(&sql, " LIMIT ? OFFSET ?");
    stmt = store_prepare(st, sql.buf, err);
    strbuf_release(&sql);
    if (!stmt)
        return -1;
    if (f->model)
        store_bind_text(stmt, idx++, f->model);
    if (f->cluster)
        store_bind_text(stmt, idx++, f->cluster);
    if (f->state)
        store_bind_text(stmt, idx++, f->state);
    if (f->run_uuid)
        store_bind_text(stmt, idx++, f->run_uuid);
    if (f->since)
        store_bind_text(stmt, idx++, f->since);
    if (f->limit > 0 || f->offset > 0) {
        sqlite3_bind_int64(stmt, idx++, f->limit > 0 ? f->limit : -1);
        sqlite3_bind_int64(stmt, idx++, f->offset > 0 ? f->offset : 0);
    }
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        ALLOC_GROW(list, nr + 1, alloc);
        read_row(stmt, &list[nr++]);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
        job_rec_free_list(list, nr);
        return store_err(st, err, "listing jobs");
    }
    *out = list;
    *n = nr;
    return 0;
}

int store_job_insert_active(store_t *st, const struct job_rec *j,
                            long long *id_out, exa_error_t *err)
{
    return store_job_insert_checked(st, j, NULL, NULL, id_out, err);
}

int store_job_insert_checked(store_t *st, const struct job_rec *j,
                             store_cluster_check_f check, void *arg,
                             long long *id_out, exa_error_t *err)
{
    sqlite3_stmt *stmt;
    char *state = NULL;
    int rc;

    if (!j->cluster || !j->scheduler || !j->job_id)
        return exa_err(err, EXA_EUSAGE,
                       "a job needs a cluster, a scheduler and a job id");
    if (store_begin(st, err) < 0)
        return -1;
    stmt = store_prepare(st, "SELECT state FROM clusters WHERE name = ?", err);
    if (!stmt)
        goto fail;
    store_bind_text(stmt, 1, j->cluster);
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_text(stmt, 0))
        state = xstrdup((const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        store_err(st, err, "reading cluster state");
        goto fail;
    }
    if (!state) {
        exa_err(err, EXA_ENOTFOUND, "unknown cluster: '%s'", j->cluster);
        goto fail;
    }
    if (strcmp(state, "ACTIVE")) {
        exa_err(err, EXA_ENOTAPPROVED,
                "cluster '%s' is %s: job %s is not recorded ('exa hpc "
                "approve %s')",
                j->cluster, state, j->job_id, j->cluster);
        goto fail;
    }
    if (check) {
        /* the caller's rule over the row as this transaction sees it */
        struct cluster_row row = {0};
        int found = store_cluster_get(st, j->cluster, &row, err);
        int ok = found == 1 && check(st, &row, arg, err) == 0;
        cluster_row_release(&row);
        if (!ok)
            goto fail;
    }
    if (store_job_upsert(st, j, id_out, err) < 0 || store_commit(st, err) < 0)
        goto fail;
    free(state);
    return 0;
fail:
    store_rollback(st);
    free(state);
    return -1;
}

int store_job_clusters(store_t *st, const char *job_id, struct strvec *clusters,
                       struct strvec *schedulers, exa_error_t *err)
{
    sqlite3_stmt *stmt =
        store_prepare(st,
                      "SELECT cluster, scheduler FROM jobs WHERE job_id = ? "
                      "GROUP BY cluster ORDER BY cluster",
                      err);
    int rc;
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, job_id);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const unsigned char *c = sqlite3_column_text(stmt, 0);
        const unsigned char *s = sqlite3_column_text(stmt, 1);
        strvec_push(clusters, c ? (const char *)c : "");
        if (schedulers)
            strvec_push(schedulers, s ? (const char *)s : "");
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "looking up job");
    return 0;
}

int store_job_list_open(store_t *st, const char *cluster, struct job_rec **out,
                        size_t *n, exa_error_t *err)
{
    struct strbuf sql = STRBUF_INIT;
    sqlite3_stmt *stmt;
    struct job_rec *list = NULL;
    size_t nr = 0, alloc = 0;
    int rc;

    select_list(&sql);
    strbuf_addstr(&sql, " WHERE cluster = ? AND state NOT IN ('COMPLETED',"
                        " 'FAILED', 'CANCELLED', 'TIMEOUT') ORDER BY id");
    stmt = store_prepare(st, sql.buf, err);
    strbuf_release(&sql);
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, cluster);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        ALLOC_GROW(list, nr + 1, alloc);
        read_row(stmt, &list[nr++]);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
        job_rec_free_list(list, nr);
        return store_err(st, err, "listing open jobs");
    }
    *out = list;
    *n = nr;
    return 0;
}

int store_job_open_clusters(store_t *st, struct strvec *clusters,
                            struct strvec *schedulers, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "SELECT DISTINCT cluster, scheduler FROM jobs WHERE state NOT IN"
        " ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')"
        " ORDER BY cluster, scheduler",
        err);
    int rc;
    if (!stmt)
        return -1;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const unsigned char *c = sqlite3_column_text(stmt, 0);
        const unsigned char *s = sqlite3_column_text(stmt, 1);
        strvec_push(clusters, c ? (const char *)c : "");
        strvec_push(schedulers, s ? (const char *)s : "");
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "listing clusters with open jobs");
    return 0;
}

void job_rec_write_json(const struct job_rec *j, struct jsonw *w)
{
    jsonw_obj_begin(w);
    jsonw_key_lit(w, "id");
    jsonw_int(w, j->id);
    for (size_t i = 0; i < NCOLS; i++) {
        const struct col *c = &cols[i];
        jsonw_keyn(w, c->name, c->namelen); /* plain identifiers */
        if (!col_present(j, c)) {
            jsonw_null(w);
            continue;
        }
        switch (c->type) {
        case COL_TEXT:
            jsonw_str(w, *CFIELD(j, c, char *));
            break;
        case COL_INT:
            jsonw_int(w, *CFIELD(j, c, long long));
            break;
        case COL_REAL:
            jsonw_real(w, *CFIELD(j, c, double));
            break;
        }
    }
    jsonw_obj_end(w);
}

json_t *job_rec_to_json(const struct job_rec *j)
{
    json_t *o = json_object();
    jx_set(o, "id", json_integer(j->id));
    for (size_t i = 0; i < NCOLS; i++) {
        const struct col *c = &cols[i];
        json_t *v = NULL;
        if (col_present(j, c)) {
            switch (c->type) {
            case COL_TEXT:
                v = jx_str(*CFIELD(j, c, char *));
                break;
            case COL_INT:
                v = json_integer(*CFIELD(j, c, long long));
                break;
            case COL_REAL:
                v = jx_real(*CFIELD(j, c, double));
                break;
            }
        }
        jx_set(o, c->name, v);
    }
    return o;
}
