/*
 * provreq.c - provision_requests and the demand query (provreq.h).
 */
#include "libstore/provreq.h"

#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libutil/xalloc.h"

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static double col_time(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL
               ? 0
               : sqlite3_column_double(s, i);
}

void provreq_release(struct provreq *r)
{
    free(r->id);
    free(r->provisioner);
    free(r->cluster);
    free(r->profile);
    free(r->worker_id);
    free(r->job_name);
    free(r->jti);
    free(r->state);
    free(r->job_id);
    free(r->reason);
    free(r->detail);
    memset(r, 0, sizeof(*r));
}

void provreq_free_list(struct provreq *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        provreq_release(&v[i]);
    free(v);
}

#define PR_COLS                                                                \
    "id, provisioner, cluster, profile, worker_id, job_name, jti, state,"      \
    " job_id, created_at, submitted_at, deadline_at, ended_at, reason, detail"

static void pr_row(sqlite3_stmt *s, struct provreq *r)
{
    r->id = col_dup(s, 0);
    r->provisioner = col_dup(s, 1);
    r->cluster = col_dup(s, 2);
    r->profile = col_dup(s, 3);
    r->worker_id = col_dup(s, 4);
    r->job_name = col_dup(s, 5);
    r->jti = col_dup(s, 6);
    r->state = col_dup(s, 7);
    r->job_id = col_dup(s, 8);
    r->created_at = col_time(s, 9);
    r->submitted_at = col_time(s, 10);
    r->deadline_at = col_time(s, 11);
    r->ended_at = col_time(s, 12);
    r->reason = col_dup(s, 13);
    r->detail = col_dup(s, 14);
}

static int pr_rows(store_t *st, sqlite3_stmt *s, struct provreq **v, size_t *n,
                   exa_error_t *err)
{
    struct provreq *out = NULL;
    size_t cnt = 0, alloc = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, cnt + 1, alloc);
        memset(&out[cnt], 0, sizeof(out[cnt]));
        pr_row(s, &out[cnt++]);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        provreq_free_list(out, cnt);
        return store_err(st, err, "reading provision requests");
    }
    *v = out;
    *n = cnt;
    return 0;
}

int store_provreq_insert(store_t *st, const struct provreq *r, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT INTO provision_requests (id, provisioner, cluster, profile,"
        " worker_id, job_name, jti, state, created_at, deadline_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 'intent', ?, ?)",
        err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, r->id);
    store_bind_text(s, 2, r->provisioner);
    store_bind_text(s, 3, r->cluster);
    store_bind_text(s, 4, r->profile);
    store_bind_text(s, 5, r->worker_id);
    store_bind_text(s, 6, r->job_name);
    store_bind_text(s, 7, r->jti);
    sqlite3_bind_double(s, 8, r->created_at);
    sqlite3_bind_double(s, 9, r->deadline_at);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "recording a provision request");
    return 0;
}

int store_provreq_update(store_t *st, const char *id, const char *state,
                         const char *job_id, double submitted_at,
                         double ended_at, const char *reason,
                         const char *detail, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE provision_requests SET state = ?2,"
        " job_id = COALESCE(?3, job_id),"
        " submitted_at = COALESCE(?4, submitted_at),"
        " ended_at = COALESCE(?5, ended_at), reason = COALESCE(?6, reason),"
        " detail = COALESCE(?7, detail) WHERE id = ?1",
        err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, id);
    store_bind_text(s, 2, state);
    store_bind_text(s, 3, job_id);
    if (submitted_at > 0)
        sqlite3_bind_double(s, 4, submitted_at);
    if (ended_at > 0)
        sqlite3_bind_double(s, 5, ended_at);
    store_bind_text(s, 6, reason);
    store_bind_text(s, 7, detail);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "updating a provision request");
    return 0;
}

int store_provreq_list(store_t *st, const char *provisioner, const char *state,
                       long long limit, struct provreq **v, size_t *n,
                       exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT " PR_COLS " FROM provision_requests"
        " WHERE (?1 IS NULL OR provisioner = ?1) AND (?2 IS NULL OR"
        " (?2 = 'live' AND state IN ('intent','submitted')) OR state = ?2)"
        " ORDER BY created_at DESC LIMIT ?3",
        err);
    if (!s)
        return -1;
    store_bind_text(s, 1, provisioner);
    store_bind_text(s, 2, state);
    sqlite3_bind_int64(s, 3, limit > 0 ? limit : -1);
    return pr_rows(st, s, v, n, err);
}

int store_provreq_recent(store_t *st, const char *provisioner,
                         const char *profile, long long limit,
                         struct provreq **v, size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT " PR_COLS " FROM provision_requests"
                                    " WHERE provisioner = ? AND profile = ?"
                                    " ORDER BY created_at DESC LIMIT ?",
                                    err);
    if (!s)
        return -1;
    store_bind_text(s, 1, provisioner);
    store_bind_text(s, 2, profile);
    sqlite3_bind_int64(s, 3, limit > 0 ? limit : -1);
    return pr_rows(st, s, v, n, err);
}

int store_provreq_by_name(store_t *st, const char *name, struct provreq *out,
                          exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "SELECT " PR_COLS " FROM provision_requests WHERE job_name = ?",
        err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, name);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        memset(out, 0, sizeof(*out));
        pr_row(s, out);
        sqlite3_finalize(s);
        return 1;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading a provision request");
    return 0;
}

int store_provreq_attach(store_t *st, const char *id, exa_error_t *err)
{
    sqlite3_stmt *s =
        store_prepare(st,
                      "UPDATE provision_requests SET state = 'attached'"
                      " WHERE id = ? AND state IN ('intent','submitted')",
                      err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, id);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "attaching a provision request");
    return 0;
}

void task_shapes_free(struct task_shape *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].labels);
        free(v[i].cluster);
    }
    free(v);
}

int store_task_shapes(store_t *st, double since, struct task_shape **v,
                      size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT cpus, gpus, ram_mb, timeout_s, labels, count(*), cluster"
        " FROM tasks WHERE state = 'queued' AND queued_since <= ?"
        " GROUP BY cpus, gpus, ram_mb, timeout_s, labels, cluster"
        " ORDER BY min(id)",
        err);
    struct task_shape *out = NULL;
    size_t cnt = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    sqlite3_bind_double(s, 1, since);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, cnt + 1, alloc);
        out[cnt].cpus = sqlite3_column_int64(s, 0);
        out[cnt].gpus = sqlite3_column_int64(s, 1);
        out[cnt].ram_mb = sqlite3_column_int64(s, 2);
        out[cnt].timeout_s = sqlite3_column_double(s, 3);
        out[cnt].labels = col_dup(s, 4);
        out[cnt].count = sqlite3_column_int64(s, 5);
        out[cnt].cluster = col_dup(s, 6);
        cnt++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        task_shapes_free(out, cnt);
        return store_err(st, err, "reading the task demand");
    }
    *v = out;
    *n = cnt;
    return 0;
}

int store_task_shape_reason(store_t *st, const struct task_shape *sh,
                            const char *reason, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE tasks SET reason = ?6 WHERE state = 'queued' AND cpus = ?1"
        " AND gpus = ?2 AND ram_mb = ?3 AND timeout_s = ?4 AND labels = ?5"
        " AND reason IS NOT ?6 AND cluster IS ?7",
        err);
    int rc;
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, sh->cpus);
    sqlite3_bind_int64(s, 2, sh->gpus);
    sqlite3_bind_int64(s, 3, sh->ram_mb);
    sqlite3_bind_double(s, 4, sh->timeout_s);
    store_bind_text(s, 5, sh->labels ? sh->labels : "");
    store_bind_text(s, 6, reason);
    store_bind_text(s, 7, sh->cluster);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "marking queued tasks");
    return 0;
}

/* ---- black-hole nodes (migration 10) ---- */

int store_node_strike_add(store_t *st, const char *cluster, const char *profile,
                          const char *node, const char *kind, const char *ref,
                          double at, exa_error_t *err)
{
    sqlite3_stmt *s;
    int rc;
    if (!hostlist_node_ok(node))
        return exa_err(err, EXA_EUSAGE,
                       "node '%.128s': expected a Slurm node name "
                       "([A-Za-z0-9._-], from a letter or digit)",
                       node ? node : "");
    if (strcmp(kind, "failed_start") && strcmp(kind, "black_hole"))
        return exa_err(err, EXA_EUSAGE,
                       "strike kind '%s': expected failed_start or black_hole",
                       kind);
    s = store_prepare(st,
                      "INSERT INTO node_strikes (cluster, profile, node, kind,"
                      " at, ref) VALUES (?, ?, ?, ?, ?, ?)",
                      err);
    if (!s)
        return -1;
    store_bind_text(s, 1, cluster);
    store_bind_text(s, 2, profile);
    store_bind_text(s, 3, node);
    store_bind_text(s, 4, kind);
    sqlite3_bind_double(s, 5, at);
    store_bind_text(s, 6, ref);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "recording a node strike");
    return 0;
}

void node_strikes_free(struct node_strikes *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].node);
        free(v[i].kinds);
    }
    free(v);
}

int store_node_strikes_since(store_t *st, const char *cluster,
                             const char *profile, double since,
                             struct node_strikes **v, size_t *n,
                             exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT node, (SELECT group_concat(k, ',') FROM (SELECT DISTINCT"
        " kind AS k FROM node_strikes t WHERE t.cluster = ?1 AND"
        " t.profile = ?2 AND t.node = s.node AND t.at > ?3 AND t.at >"
        " IFNULL((SELECT since FROM node_exclusions x WHERE x.cluster = ?1"
        " AND x.profile = ?2 AND x.node = s.node), -1) ORDER BY k)),"
        " count(*), max(at) FROM node_strikes s WHERE cluster = ?1 AND"
        " profile = ?2 AND at > ?3 AND at > IFNULL((SELECT since FROM"
        " node_exclusions x WHERE x.cluster = ?1 AND x.profile = ?2 AND"
        " x.node = s.node), -1) GROUP BY node ORDER BY node",
        err);
    struct node_strikes *out = NULL;
    size_t cnt = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, cluster);
    store_bind_text(s, 2, profile);
    sqlite3_bind_double(s, 3, since);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, cnt + 1, alloc);
        out[cnt].node = col_dup(s, 0);
        out[cnt].kinds = col_dup(s, 1);
        out[cnt].count = sqlite3_column_int64(s, 2);
        out[cnt].last_at = col_time(s, 3);
        cnt++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        node_strikes_free(out, cnt);
        return store_err(st, err, "reading node strikes");
    }
    *v = out;
    *n = cnt;
    return 0;
}

void node_exclusions_free(struct node_exclusion *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].cluster);
        free(v[i].profile);
        free(v[i].node);
        free(v[i].reason);
    }
    free(v);
}

int store_node_exclude(store_t *st, const char *cluster, const char *profile,
                       const char *node, const char *reason, double since,
                       double until, exa_error_t *err)
{
    sqlite3_stmt *s;
    int rc;
    if (!hostlist_node_ok(node))
        return exa_err(err, EXA_EUSAGE,
                       "node '%.128s': expected a Slurm node name",
                       node ? node : "");
    s = store_prepare(st,
                      "INSERT OR REPLACE INTO node_exclusions (cluster,"
                      " profile, node, reason, since, until)"
                      " VALUES (?, ?, ?, ?, ?, ?)",
                      err);
    if (!s)
        return -1;
    store_bind_text(s, 1, cluster);
    store_bind_text(s, 2, profile);
    store_bind_text(s, 3, node);
    store_bind_text(s, 4, reason);
    sqlite3_bind_double(s, 5, since);
    sqlite3_bind_double(s, 6, until);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "recording a node exclusion");
    return 0;
}

int store_node_exclusions(store_t *st, const char *cluster, const char *profile,
                          double now, struct node_exclusion **v, size_t *n,
                          exa_error_t *err)
{
    sqlite3_stmt *s =
        store_prepare(st,
                      "SELECT cluster, profile, node, reason, since, until FROM"
                      " node_exclusions WHERE (?1 IS NULL OR cluster = ?1) AND"
                      " (?2 IS NULL OR profile = ?2) AND until > ?3"
                      " ORDER BY cluster, profile, node",
                      err);
    struct node_exclusion *out = NULL;
    size_t cnt = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, cluster);
    store_bind_text(s, 2, profile);
    sqlite3_bind_double(s, 3, now);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, cnt + 1, alloc);
        out[cnt].cluster = col_dup(s, 0);
        out[cnt].profile = col_dup(s, 1);
        out[cnt].node = col_dup(s, 2);
        out[cnt].reason = col_dup(s, 3);
        out[cnt].since = col_time(s, 4);
        out[cnt].until = col_time(s, 5);
        cnt++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        node_exclusions_free(out, cnt);
        return store_err(st, err, "reading node exclusions");
    }
    *v = out;
    *n = cnt;
    return 0;
}

int store_node_strikes_prune(store_t *st, double before, exa_error_t *err)
{
    static const char *const q[] = {
        "DELETE FROM node_strikes WHERE at < ?",
        "DELETE FROM node_exclusions WHERE until < ?"};
    for (size_t i = 0; i < 2; i++) {
        sqlite3_stmt *s = store_prepare(st, q[i], err);
        int rc;
        if (!s)
            return -1;
        sqlite3_bind_double(s, 1, before);
        rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE)
            return store_err(st, err, "pruning node strikes");
    }
    return 0;
}
