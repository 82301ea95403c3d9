/*
 * tokens.c - the tokens table (see tokens.h).
 */
#include "libstore/tokens.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

#define TOKEN_COLS                                                             \
    "id, token_sha256, user, role, created_at, expires_at, revoked_at"

void token_row_release(struct token_row *r)
{
    if (!r)
        return;
    free(r->token_sha256);
    free(r->user);
    free(r->role);
    free(r->created_at);
    free(r->expires_at);
    free(r->revoked_at);
    memset(r, 0, sizeof(*r));
}

void token_rows_free(struct token_row *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        token_row_release(&v[i]);
    free(v);
}

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static void row_read(sqlite3_stmt *s, struct token_row *r)
{
    r->id = sqlite3_column_int64(s, 0);
    r->token_sha256 = col_dup(s, 1);
    r->user = col_dup(s, 2);
    r->role = col_dup(s, 3);
    r->created_at = col_dup(s, 4);
    r->expires_at = col_dup(s, 5);
    r->revoked_at = col_dup(s, 6);
}

int store_token_insert(store_t *st, const char *token_sha256, const char *user,
                       const char *role, const char *created_at,
                       const char *expires_at, long long *id, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "INSERT INTO tokens (token_sha256, user, role, created_at,"
        " expires_at) VALUES (?, ?, ?, ?, ?)",
        err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, token_sha256);
    store_bind_text(s, 2, user);
    store_bind_text(s, 3, role);
    store_bind_text(s, 4, created_at);
    store_bind_text(s, 5, expires_at);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "recording a token");
    if (id)
        *id = sqlite3_last_insert_rowid(st->db);
    return 0;
}

static int find_one(store_t *st, sqlite3_stmt *s, struct token_row *out,
                    exa_error_t *err)
{
    int rc = sqlite3_step(s);
    memset(out, 0, sizeof(*out));
    if (rc == SQLITE_ROW)
        row_read(s, out);
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading a token");
    return 0;
}

int store_token_find(store_t *st, const char *hex, struct token_row *out,
                     exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "SELECT " TOKEN_COLS " FROM tokens WHERE token_sha256 = ?", err);
    if (!s)
        return -1;
    store_bind_text(s, 1, hex);
    return find_one(st, s, out, err);
}

int store_token_get(store_t *st, long long id, struct token_row *out,
                    exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st, "SELECT " TOKEN_COLS " FROM tokens WHERE id = ?", err);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    return find_one(st, s, out, err);
}

int store_token_list(store_t *st, struct token_row **v, size_t *n,
                     exa_error_t *err)
{
    sqlite3_stmt *s =
        store_prepare(st, "SELECT " TOKEN_COLS " FROM tokens ORDER BY id", err);
    size_t alloc = 0;
    int rc;
    *v = NULL;
    *n = 0;
    if (!s)
        return -1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(*v, *n + 1, alloc);
        memset(&(*v)[*n], 0, sizeof(**v));
        row_read(s, &(*v)[(*n)++]);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        token_rows_free(*v, *n);
        *v = NULL;
        *n = 0;
        return store_err(st, err, "listing tokens");
    }
    return 0;
}

int store_token_revoke(store_t *st, long long id, const char *at,
                       exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
        err);
    int rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, at);
    sqlite3_bind_int64(s, 2, id);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "revoking a token");
    return sqlite3_changes(st->db) > 0 ? 1 : 0;
}
