/*
 * nodes.c - inventory snapshots (see nodes.h). A snapshot is a DELETE of
 * the cluster's rows and one INSERT per node inside one transaction.
 */
#include "libstore/nodes.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

void node_row_release(struct node_row *r)
{
    if (!r)
        return;
    free(r->cluster);
    free(r->node);
    free(r->scheduler);
    free(r->gpu_model);
    free(r->state);
    free(r->raw_state);
    free(r->flags);
    free(r->partitions);
    free(r->addr);
    free(r->captured_at);
    memset(r, 0, sizeof(*r));
}

void node_rows_free(struct node_row *rows, size_t n)
{
    /* last to first: a string a row shares with the row before it
     * (store_node_summary_list) is freed with that row */
    for (size_t i = n; i-- > 0;) {
        struct node_row *r = &rows[i];
        if (i) {
            const struct node_row *p = &rows[i - 1];
            if (r->cluster == p->cluster)
                r->cluster = NULL;
            if (r->captured_at == p->captured_at)
                r->captured_at = NULL;
            if (r->state == p->state)
                r->state = NULL;
        }
        node_row_release(r);
    }
    free(rows);
}

static void bind_int_or_null(sqlite3_stmt *s, int i, long long v)
{
    if (v < 0)
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_int64(s, i, v);
}

int store_nodes_replace(store_t *st, const char *cluster, const char *scheduler,
                        const struct node_row *rows, size_t n, exa_error_t *err)
{
    int own = sqlite3_get_autocommit(st->db);
    sqlite3_stmt *s = NULL;
    char now[32];
    if (own && store_begin(st, err) < 0)
        return -1;
    store_now(now, sizeof(now));
    s = store_prepare(st, "DELETE FROM nodes WHERE cluster = ?", err);
    if (!s)
        goto fail;
    store_bind_text(s, 1, cluster);
    if (sqlite3_step(s) != SQLITE_DONE) {
        store_err(st, err, "replacing node snapshot");
        goto fail;
    }
    sqlite3_finalize(s);
    s = store_prepare(st,
                      "INSERT OR REPLACE INTO nodes (cluster, node, "
                      "scheduler, cpus, mem_mb, gpus, gpus_used, gpu_model, "
                      "state, raw_state, flags, partitions, captured_at, "
                      "addr) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                      err);
    if (!s)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const struct node_row *r = &rows[i];
        sqlite3_reset(s);
        store_bind_text(s, 1, cluster);
        store_bind_text(s, 2, r->node);
        store_bind_text(s, 3, r->scheduler ? r->scheduler : scheduler);
        bind_int_or_null(s, 4, r->cpus);
        bind_int_or_null(s, 5, r->mem_mb);
        sqlite3_bind_int(s, 6, r->gpus > 0 ? r->gpus : 0);
        bind_int_or_null(s, 7, r->gpus_used);
        store_bind_text(s, 8, r->gpu_model);
        store_bind_text(s, 9, r->state);
        store_bind_text(s, 10, r->raw_state);
        store_bind_text(s, 11, r->flags);
        store_bind_text(s, 12, r->partitions);
        store_bind_text(s, 13, r->captured_at ? r->captured_at : now);
        store_bind_text(s, 14, r->addr);
        if (sqlite3_step(s) != SQLITE_DONE) {
            store_err(st, err, "writing node snapshot");
            goto fail;
        }
    }
    sqlite3_finalize(s);
    s = NULL;
    if (own && store_commit(st, err) < 0)
        goto fail;
    return 0;
fail:
    sqlite3_finalize(s);
    if (own)
        store_rollback(st);
    return -1;
}

static char *col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static long long icol(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL
               ? -1
               : sqlite3_column_int64(s, i);
}

int store_nodes_list(store_t *st, const char *cluster, struct node_row **rows,
                     size_t *n, exa_error_t *err)
{
    /* Two statements, not "?1 IS NULL OR cluster = ?1": the OR would hide
     * the primary key index from the planner (a full scan per cluster). */
    sqlite3_stmt *s = store_prepare(
        st,
        cluster ? "SELECT cluster, node, scheduler, cpus, mem_mb, gpus, "
                  "gpus_used, gpu_model, state, raw_state, flags, "
                  "partitions, captured_at, addr FROM nodes WHERE cluster = ?1 "
                  "ORDER BY cluster, node"
                : "SELECT cluster, node, scheduler, cpus, mem_mb, gpus, "
                  "gpus_used, gpu_model, state, raw_state, flags, "
                  "partitions, captured_at, addr FROM nodes "
                  "ORDER BY cluster, node",
        err);
    struct node_row *v = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    if (cluster)
        store_bind_text(s, 1, cluster);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct node_row *r;
        ALLOC_GROW(v, nr + 1, alloc);
        r = &v[nr++];
        r->cluster = col(s, 0);
        r->node = col(s, 1);
        r->scheduler = col(s, 2);
        r->cpus = (int)icol(s, 3);
        r->mem_mb = icol(s, 4);
        r->gpus = (int)icol(s, 5);
        r->gpus_used = (int)icol(s, 6);
        r->gpu_model = col(s, 7);
        r->state = col(s, 8);
        r->raw_state = col(s, 9);
        r->flags = col(s, 10);
        r->partitions = col(s, 11);
        r->count = 1;
        r->captured_at = col(s, 12);
        r->addr = col(s, 13);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        node_rows_free(v, nr);
        return store_err(st, err, "listing nodes");
    }
    *rows = v;
    *n = nr;
    return 0;
}

/* Column i as the string prev (the row before's) when it is equal, else a
 * copy; NULL for NULL. */
static char *col_shared(sqlite3_stmt *s, int i, char *prev)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    if (!t)
        return NULL;
    if (prev && !strcmp(prev, (const char *)t))
        return prev;
    return xstrdup((const char *)t);
}

int store_node_summary_list(store_t *st, const char *cluster,
                            struct node_row **rows, size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_cached(
        st,
        cluster ? "SELECT cluster, captured_at, state, gpus, gpus_used, cpus, "
                  "n FROM node_summary WHERE cluster = ?1 ORDER BY cluster, "
                  "captured_at, state, gpus, gpus_used, cpus"
                : "SELECT cluster, captured_at, state, gpus, gpus_used, cpus, "
                  "n FROM node_summary ORDER BY cluster, captured_at, state, "
                  "gpus, gpus_used, cpus",
        err);
    struct node_row *v = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    if (cluster)
        store_bind_text(s, 1, cluster);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct node_row *r;
        ALLOC_GROW(v, nr + 1, alloc);
        r = &v[nr++];
        memset(r, 0, sizeof(*r));
        /* the rows of a cluster share its name, snapshot time and (in key
         * order) state: one copy each, not one per row */
        r->cluster = col_shared(s, 0, nr > 1 ? v[nr - 2].cluster : NULL);
        r->captured_at =
            col_shared(s, 1, nr > 1 ? v[nr - 2].captured_at : NULL);
        r->state = col_shared(s, 2, nr > 1 ? v[nr - 2].state : NULL);
        /* NOT NULL columns (a NULL is stored as -1): no type check */
        r->gpus = sqlite3_column_int(s, 3);
        r->gpus_used = sqlite3_column_int(s, 4);
        r->cpus = sqlite3_column_int(s, 5);
        r->mem_mb = -1;
        r->count = sqlite3_column_int64(s, 6);
    }
    if (rc != SQLITE_DONE) {
        store_err(st, err, "reading the node summary");
        store_done(st, s);
        node_rows_free(v, nr);
        return -1;
    }
    store_done(st, s);
    *rows = v;
    *n = nr;
    return 0;
}
