/*
 * hostkeys.c - the host_key_mismatch table (see hostkeys.h). Kept apart
 * from the clusters row on purpose: that row is governance state bound to
 * the audit chain, and an observation of a bad key must not look like a
 * state change nobody audited.
 */
#include "libstore/hostkeys.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

void hostkey_mismatch_release(struct hostkey_mismatch *m)
{
    free(m->cluster);
    free(m->approved);
    free(m->seen);
    free(m->seen_at);
    memset(m, 0, sizeof(*m));
}

int store_hostkey_mismatch_set(store_t *st, const char *cluster,
                               const char *approved, const char *seen,
                               exa_error_t *err)
{
    char now[32];
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT OR REPLACE INTO host_key_mismatch (cluster, approved,"
        " seen, seen_at) VALUES (?, ?, ?, ?)",
        err);
    int rc;
    if (!s)
        return -1;
    store_now(now, sizeof(now));
    store_bind_text(s, 1, cluster);
    store_bind_text(s, 2, approved);
    store_bind_text(s, 3, seen ? seen : "none");
    store_bind_text(s, 4, now);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "recording a host key mismatch");
    return 0;
}

int store_hostkey_mismatch_clear(store_t *st, const char *cluster,
                                 exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "DELETE FROM host_key_mismatch WHERE cluster = ?", err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, cluster);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "clearing a host key mismatch");
    return 0;
}

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

int store_hostkey_mismatch_get(store_t *st, const char *cluster,
                               struct hostkey_mismatch *out, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT cluster, approved, seen, seen_at FROM host_key_mismatch"
        " WHERE cluster = ?",
        err);
    int rc;
    if (!s)
        return -1;
    memset(out, 0, sizeof(*out));
    store_bind_text(s, 1, cluster);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        out->cluster = col_dup(s, 0);
        out->approved = col_dup(s, 1);
        out->seen = col_dup(s, 2);
        out->seen_at = col_dup(s, 3);
    }
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading a host key mismatch");
    return 0;
}
