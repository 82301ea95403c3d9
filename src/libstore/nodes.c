/*
 * nodes.c - inventory snapshots (see nodes.h). A snapshot is a DELETE of
 * the cluster's rows and one INSERT per node inside one transaction.
 */
#include "libstore/nodes.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
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

/* Release rows[from..n) (a string a row shares with the row before it
 * inside the range is freed once; the range's first row shares nothing
 * with rows before it). The array itself stays. */
static void rows_release_range(struct node_row *rows, size_t from, size_t n)
{
    /* last to first: a string a row shares with the row before it
     * (store_node_summary_list) is freed with that row */
    for (size_t i = n; i-- > from;) {
        struct node_row *r = &rows[i];
        if (i > from) {
            const struct node_row *p = &rows[i - 1];
            if (r->cluster == p->cluster)
                r->cluster = NULL;
            if (r->captured_at == p->captured_at)
                r->captured_at = NULL;
            if (r->state == p->state)
                r->state = NULL;
            if (r->partitions == p->partitions)
                r->partitions = NULL;
        }
        node_row_release(r);
    }
}

void node_rows_free(struct node_row *rows, size_t n)
{
    rows_release_range(rows, 0, n);
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
    /* the summary text placement reads, current as of this snapshot */
    if (store_cluster_summary_save(st, cluster, err) < 0)
        goto fail;
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

/* Append the summary rows s yields (cluster, captured_at, state, gpus,
 * gpus_used, cpus, partitions, n, in key order: SUMMARY_SELECT) to
 * v[0..*nr). 0, or -1 with
 * err (the rows read so far stay in v). */
static int summary_rows_append(store_t *st, sqlite3_stmt *s,
                               struct node_row **v, size_t *nr, size_t *alloc,
                               exa_error_t *err)
{
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct node_row *r, *prev;
        ALLOC_GROW(*v, *nr + 1, *alloc);
        r = &(*v)[(*nr)++];
        prev = *nr > 1 ? r - 1 : NULL;
        memset(r, 0, sizeof(*r));
        /* the rows of a cluster share its name, snapshot time and (in key
         * order) state: one copy each, not one per row */
        r->cluster = col_shared(s, 0, prev ? prev->cluster : NULL);
        r->captured_at = col_shared(s, 1, prev ? prev->captured_at : NULL);
        r->state = col_shared(s, 2, prev ? prev->state : NULL);
        /* NOT NULL columns (a NULL is stored as -1): no type check */
        r->gpus = sqlite3_column_int(s, 3);
        r->gpus_used = sqlite3_column_int(s, 4);
        r->cpus = sqlite3_column_int(s, 5);
        r->partitions = col_shared(s, 6, prev ? prev->partitions : NULL);
        r->mem_mb = -1;
        r->count = sqlite3_column_int64(s, 7);
    }
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading the node summary");
    return 0;
}

/*
 * The node summary's SELECT (store.c migration 7's grouping, and since
 * migration 14 the partitions list): node rows grouped by what placement
 * reads, a state other than idle or mixed as 'other' with gpus_used and
 * cpus -1, a NULL number as -1, a NULL captured_at or partitions as '',
 * with the count of each group; followed by a WHERE naming the rows,
 * then SUMMARY_GROUP.
 */
#define SUMMARY_SELECT                                                         \
    "SELECT cluster, IFNULL(captured_at, ''), CASE WHEN state IN "             \
    "('idle','mixed') THEN state ELSE 'other' END, IFNULL(gpus, -1), "         \
    "CASE WHEN state IN ('idle','mixed') THEN IFNULL(gpus_used, -1) "          \
    "ELSE -1 END, CASE WHEN state IN ('idle','mixed') THEN "                   \
    "IFNULL(cpus, -1) ELSE -1 END, IFNULL(partitions, ''), count(*) FROM "     \
    "nodes "
#define SUMMARY_GROUP                                                          \
    " GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7"

/* The node summary of one cluster, from its node rows (through the
 * primary key), in key order, appended to v. */
static int summary_rows_of(store_t *st, const char *cluster,
                           struct node_row **v, size_t *nr, size_t *alloc,
                           exa_error_t *err)
{
    sqlite3_stmt *s = store_cached(
        st, SUMMARY_SELECT "WHERE cluster = ?1" SUMMARY_GROUP, err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, cluster);
    rc = summary_rows_append(st, s, v, nr, alloc, err);
    store_done(st, s);
    return rc;
}

/*
 * The summary text of one cluster (cluster_node_summary.rows, migration
 * 12, partitions since 14; node_summary_encode / node_summary_decode):
 * its summary rows (summary_rows_of) in key order, a line each,
 *   STATE TAB GPUS TAB GPUS_USED TAB CPUS TAB N TAB PARTITIONS LF
 * after a line "@" CAPTURED_AT LF that opens each run of rows with the
 * same captured_at. Numbers are decimal with an optional '-'; a string
 * holds no TAB, LF or NUL and a state does not begin with '@' (a row
 * whose strings cannot be written so leaves the text NULL, which
 * readers take as "group the node rows").
 */
static int summary_field_ok(const char *s)
{
    for (; *s; s++)
        if (*s == '\t' || *s == '\n')
            return 0;
    return 1;
}

int node_summary_encode(const struct node_row *r, size_t n, struct strbuf *sb)
{
    const char *at = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!r[i].captured_at || !r[i].state || r[i].state[0] == '@' ||
            !summary_field_ok(r[i].captured_at) ||
            !summary_field_ok(r[i].state) ||
            (r[i].partitions && !summary_field_ok(r[i].partitions)))
            return -1;
        if (!at || strcmp(at, r[i].captured_at)) {
            at = r[i].captured_at;
            strbuf_addch(sb, '@');
            strbuf_addstr(sb, at);
            strbuf_addch(sb, '\n');
        }
        strbuf_addf(sb, "%s\t%d\t%d\t%d\t%lld\t%s\n", r[i].state, r[i].gpus,
                    r[i].gpus_used, r[i].cpus, r[i].count,
                    r[i].partitions ? r[i].partitions : "");
    }
    return 0;
}

/* One number of a summary line: digits (optional '-') ending at a byte
 * term; *p past the terminator. 0, or -1. */
static int summary_num(const char **p, const char *end, char term, long long lo,
                       long long hi, long long *out)
{
    int64_t x;
    if (parse_i64(p, end, &x) < 0 || *p >= end || **p != term || x < lo ||
        x > hi)
        return -1;
    (*p)++;
    *out = x;
    return 0;
}

int node_summary_decode(const char *t, size_t len, const char *cluster_name,
                        struct node_row **v, size_t *nr, size_t *alloc)
{
    const char *p = t, *end = t + len;
    size_t from = *nr;
    char *cluster = xstrdup(cluster_name);
    char *cur = NULL; /* the run's captured_at: the run's first row owns it */
    char *at = NULL;  /* cur while no row holds it yet */
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p)), *tab;
        struct node_row *r, *prev;
        long long g, gu, c, n;
        if (!eol)
            goto bad;
        if (*p == '@') {
            if (at)
                goto bad; /* a run of no rows: not node_summary_encode's */
            if (memchr(p, '\t', (size_t)(eol - p)) ||
                memchr(p, '\0', (size_t)(eol - p)))
                goto bad; /* not a string node_summary_encode writes */
            cur = at = xstrndup(p + 1, (size_t)(eol - p - 1));
            p = eol + 1;
            continue;
        }
        if (!cur)
            goto bad; /* a row before any "@" line */
        tab = memchr(p, '\t', (size_t)(eol - p));
        if (!tab || memchr(p, '\0', (size_t)(tab - p)))
            goto bad;
        ALLOC_GROW(*v, *nr + 1, *alloc);
        r = &(*v)[*nr];
        prev = *nr > from ? r - 1 : NULL;
        memset(r, 0, sizeof(*r));
        r->cluster = prev ? prev->cluster : cluster;
        r->captured_at = cur;
        at = NULL;
        if (prev && strlen(prev->state) == (size_t)(tab - p) &&
            !memcmp(prev->state, p, (size_t)(tab - p)))
            r->state = prev->state;
        else
            r->state = xstrndup(p, (size_t)(tab - p));
        (*nr)++; /* v's now: released with the range on error */
        p = tab + 1;
        if (summary_num(&p, eol, '\t', INT_MIN, INT_MAX, &g) < 0 ||
            summary_num(&p, eol, '\t', INT_MIN, INT_MAX, &gu) < 0 ||
            summary_num(&p, eol, '\t', INT_MIN, INT_MAX, &c) < 0 ||
            summary_num(&p, eol, '\t', LLONG_MIN, LLONG_MAX, &n) < 0 ||
            memchr(p, '\t', (size_t)(eol - p)) ||
            memchr(p, '\0', (size_t)(eol - p)))
            goto bad;
        /* the partitions list, the rest of the line ("" for none) */
        if (prev && prev->partitions &&
            strlen(prev->partitions) == (size_t)(eol - p) &&
            !memcmp(prev->partitions, p, (size_t)(eol - p)))
            r->partitions = prev->partitions;
        else
            r->partitions = xstrndup(p, (size_t)(eol - p));
        p = eol + 1;
        r->gpus = (int)g;
        r->gpus_used = (int)gu;
        r->cpus = (int)c;
        r->mem_mb = -1;
        r->count = n;
    }
    if (at)
        goto bad; /* a last "@" line with no rows */
    if (*nr == from)
        free(cluster); /* no rows: a cluster with no nodes */
    return 0;
bad:
    free(at);
    if (*nr == from)
        free(cluster);
    rows_release_range(*v, from, *nr);
    *nr = from;
    return -1;
}

int store_node_summary_list(store_t *st, const char *cluster,
                            struct node_row **rows, size_t *n, exa_error_t *err)
{
    struct node_row *v = NULL;
    size_t nr = 0, alloc = 0;
    sqlite3_stmt *s;
    int rc;
    if (cluster) {
        if (summary_rows_of(st, cluster, &v, &nr, &alloc, err) < 0)
            goto fail;
        *rows = v;
        *n = nr;
        return 0;
    }
    /* Every cluster: its summary text, one row per cluster, where the
     * triggers have not marked it stale since the last snapshot save;
     * its node rows grouped (summary_rows_of) for a cluster whose text
     * is NULL or not what node_summary_encode writes. The fallback's statement
     * runs while this one is active, so both read one snapshot of the database.
     */
    s = store_cached(st,
                     "SELECT cluster, rows FROM cluster_node_summary ORDER BY "
                     "cluster",
                     err);
    if (!s)
        goto fail;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        const char *t = (const char *)sqlite3_column_text(s, 1);
        size_t len = (size_t)sqlite3_column_bytes(s, 1);
        if (!name)
            continue; /* NOT NULL column */
        if (t && node_summary_decode(t, len, name, &v, &nr, &alloc) == 0)
            continue;
        if (summary_rows_of(st, name, &v, &nr, &alloc, err) < 0) {
            store_done(st, s);
            goto fail;
        }
    }
    store_done(st, s);
    if (rc != SQLITE_DONE) {
        store_err(st, err, "reading the cluster node summaries");
        goto fail;
    }
    *rows = v;
    *n = nr;
    return 0;
fail:
    node_rows_free(v, nr);
    return -1;
}

int store_cluster_summary_save(store_t *st, const char *cluster,
                               exa_error_t *err)
{
    struct node_row *v = NULL;
    size_t nr = 0, alloc = 0;
    struct strbuf sb = STRBUF_INIT;
    sqlite3_stmt *s;
    int rc = -1;
    if (summary_rows_of(st, cluster, &v, &nr, &alloc, err) < 0)
        goto out;
    s = store_cached(st,
                     "INSERT INTO cluster_node_summary (cluster, rows) VALUES "
                     "(?1, ?2) ON CONFLICT (cluster) DO UPDATE SET rows = "
                     "excluded.rows",
                     err);
    if (!s)
        goto out;
    store_bind_text(s, 1, cluster);
    if (node_summary_encode(v, nr, &sb) == 0)
        sqlite3_bind_text(s, 2, sb.buf ? sb.buf : "", (int)sb.len,
                          SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 2);
    if (sqlite3_step(s) != SQLITE_DONE)
        store_err(st, err, "saving the cluster node summary");
    else
        rc = 0;
    store_done(st, s);
out:
    strbuf_release(&sb);
    node_rows_free(v, nr);
    return rc;
}

int store_cluster_summaries_rebuild(store_t *st, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "SELECT cluster FROM cluster_node_summary ORDER BY cluster", err);
    struct strvec names = STRVEC_INIT;
    int rc;
    if (!s)
        return -1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        strvec_push(&names, (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        strvec_clear(&names);
        return store_err(st, err, "listing the cluster node summaries");
    }
    for (size_t i = 0; i < names.nr; i++)
        if (store_cluster_summary_save(st, names.v[i], err) < 0) {
            strvec_clear(&names);
            return -1;
        }
    strvec_clear(&names);
    return 0;
}
