/*
 * clusters.c - row access for the clusters table (see clusters.h). Kept
 * free of policy: the governance state machine decides, this file stores.
 */
#include "libstore/clusters.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

#define CLUSTER_COLS                                                           \
    "name, scheduler, transport, host, port, ssh_user, ssh_key, "              \
    "key_fingerprint, host_key_fingerprint, state, capabilities, "             \
    "requested_by, approved_by, reason, created_at, updated_at"
#define CLUSTER_READ_COLS CLUSTER_COLS ", audit_hash"

static char *col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static void read_row(sqlite3_stmt *s, struct cluster_row *r)
{
    memset(r, 0, sizeof(*r));
    r->name = col(s, 0);
    r->scheduler = col(s, 1);
    r->transport = col(s, 2);
    r->host = col(s, 3);
    r->port = sqlite3_column_int(s, 4);
    r->ssh_user = col(s, 5);
    r->ssh_key = col(s, 6);
    r->key_fingerprint = col(s, 7);
    r->host_key_fingerprint = col(s, 8);
    r->state = col(s, 9);
    r->capabilities = col(s, 10);
    r->requested_by = col(s, 11);
    r->approved_by = col(s, 12);
    r->reason = col(s, 13);
    r->created_at = col(s, 14);
    r->updated_at = col(s, 15);
    r->audit_hash = col(s, 16);
}

void cluster_row_release(struct cluster_row *r)
{
    if (!r)
        return;
    free(r->name);
    free(r->scheduler);
    free(r->transport);
    free(r->host);
    free(r->ssh_user);
    free(r->ssh_key);
    free(r->key_fingerprint);
    free(r->host_key_fingerprint);
    free(r->state);
    free(r->capabilities);
    free(r->requested_by);
    free(r->approved_by);
    free(r->reason);
    free(r->created_at);
    free(r->updated_at);
    free(r->audit_hash);
    memset(r, 0, sizeof(*r));
}

static char *dn(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void cluster_row_copy(struct cluster_row *d, const struct cluster_row *s)
{
    d->name = dn(s->name);
    d->scheduler = dn(s->scheduler);
    d->transport = dn(s->transport);
    d->host = dn(s->host);
    d->port = s->port;
    d->ssh_user = dn(s->ssh_user);
    d->ssh_key = dn(s->ssh_key);
    d->key_fingerprint = dn(s->key_fingerprint);
    d->host_key_fingerprint = dn(s->host_key_fingerprint);
    d->state = dn(s->state);
    d->capabilities = dn(s->capabilities);
    d->requested_by = dn(s->requested_by);
    d->approved_by = dn(s->approved_by);
    d->reason = dn(s->reason);
    d->created_at = dn(s->created_at);
    d->updated_at = dn(s->updated_at);
    d->audit_hash = dn(s->audit_hash);
}

int store_cluster_get(store_t *st, const char *name, struct cluster_row *out,
                      exa_error_t *err)
{
    /* one lookup per cluster in fleet_load: kept prepared */
    sqlite3_stmt *s = store_cached(
        st, "SELECT " CLUSTER_READ_COLS " FROM clusters WHERE name = ?", err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, name);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        read_row(s, out);
        rc = 1;
    } else if (rc == SQLITE_DONE) {
        rc = 0;
    } else {
        rc = store_err(st, err, "reading cluster");
    }
    store_done(st, s);
    return rc;
}

int store_cluster_list(store_t *st, struct cluster_row **rows, size_t *n,
                       exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "SELECT " CLUSTER_READ_COLS " FROM clusters ORDER BY name", err);
    struct cluster_row *v = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(v, nr + 1, alloc);
        read_row(s, &v[nr++]);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        for (size_t i = 0; i < nr; i++)
            cluster_row_release(&v[i]);
        free(v);
        return store_err(st, err, "listing clusters");
    }
    *rows = v;
    *n = nr;
    return 0;
}

int store_cluster_put(store_t *st, const struct cluster_row *r,
                      exa_error_t *err)
{
    char now[32];
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT INTO clusters (" CLUSTER_COLS ") VALUES "
        "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?15) "
        "ON CONFLICT(name) DO UPDATE SET scheduler=?2, transport=?3, "
        "host=?4, port=?5, ssh_user=?6, ssh_key=?7, key_fingerprint=?8, "
        "host_key_fingerprint=?9, state=?10, capabilities=?11, "
        "requested_by=?12, approved_by=?13, reason=?14, updated_at=?15",
        err);
    int rc = 0;
    if (!s)
        return -1;
    store_now(now, sizeof(now));
    store_bind_text(s, 1, r->name);
    store_bind_text(s, 2, r->scheduler ? r->scheduler : "unknown");
    store_bind_text(s, 3, r->transport ? r->transport : "ssh");
    store_bind_text(s, 4, r->host);
    if (r->port > 0)
        sqlite3_bind_int(s, 5, r->port);
    else
        sqlite3_bind_null(s, 5);
    store_bind_text(s, 6, r->ssh_user);
    store_bind_text(s, 7, r->ssh_key);
    store_bind_text(s, 8, r->key_fingerprint);
    store_bind_text(s, 9, r->host_key_fingerprint);
    store_bind_text(s, 10, r->state ? r->state : "PENDING");
    store_bind_text(s, 11, r->capabilities);
    store_bind_text(s, 12, r->requested_by);
    store_bind_text(s, 13, r->approved_by);
    store_bind_text(s, 14, r->reason);
    store_bind_text(s, 15, now);
    if (sqlite3_step(s) != SQLITE_DONE)
        rc = store_err(st, err, "writing cluster");
    sqlite3_finalize(s);
    return rc;
}

int store_cluster_bind_event(store_t *st, const char *name, const char *hash,
                             exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "UPDATE clusters SET audit_hash = ?2 WHERE name = ?1", err);
    int rc = 0;
    if (!s)
        return -1;
    store_bind_text(s, 1, name);
    store_bind_text(s, 2, hash);
    if (sqlite3_step(s) != SQLITE_DONE)
        rc = store_err(st, err, "binding cluster to its audit event");
    else if (sqlite3_changes(st->db) != 1)
        rc = exa_err(err, EXA_ENOTFOUND, "unknown cluster: '%s'", name);
    sqlite3_finalize(s);
    return rc;
}
