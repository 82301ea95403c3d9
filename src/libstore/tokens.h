/*
 * tokens.h - the tokens table of platform.db: API tokens of `exa serve`
 * (REST, the console, MCP over HTTP). Only the SHA-256 of a token is
 * stored, never the token (libauth/auth.h makes and checks them).
 *
 * Columns: id, token_sha256 (64 lower-case hex digits, unique), user,
 * role (viewer | operator | admin), created_at, expires_at (NULL: never),
 * revoked_at (NULL: not revoked); times ISO-8601 UTC
 * "YYYY-MM-DDTHH:MM:SSZ".
 */
#ifndef EXA_STORE_TOKENS_H
#define EXA_STORE_TOKENS_H

#include <stddef.h>

#include "libstore/store.h"

/* One row; strings owned (NULL for SQL NULL). */
struct token_row {
    long long id;
    char *token_sha256;
    char *user;
    char *role;
    char *created_at;
    char *expires_at;
    char *revoked_at;
};

void token_row_release(struct token_row *r);
void token_rows_free(struct token_row *v, size_t n);

/*
 * Insert a row (revoked_at NULL) and set *id (may be NULL) to its id.
 * expires_at may be NULL. Run it in the caller's transaction when it
 * goes with an audit event. 0 or -1 with err (EXA_ECONFIG; a duplicate
 * hash is an error too).
 */
int store_token_insert(store_t *st, const char *token_sha256, const char *user,
                       const char *role, const char *created_at,
                       const char *expires_at, long long *id, exa_error_t *err);

/*
 * The row whose token_sha256 is hex (64 hex digits). Returns 1 and fills
 * *out (release with token_row_release), 0 when none, -1 with err.
 */
int store_token_find(store_t *st, const char *hex, struct token_row *out,
                     exa_error_t *err);

/* Every row by id (*v freed with token_rows_free). 0 or -1 with err. */
int store_token_list(store_t *st, struct token_row **v, size_t *n,
                     exa_error_t *err);

/*
 * The row of id. 1 and *out filled, 0 when none, -1 with err.
 */
int store_token_get(store_t *st, long long id, struct token_row *out,
                    exa_error_t *err);

/*
 * Set revoked_at of row id to at when it is not revoked yet. Returns 1
 * when a row changed, 0 when none (unknown or already revoked), -1 with
 * err.
 */
int store_token_revoke(store_t *st, long long id, const char *at,
                       exa_error_t *err);

#endif
