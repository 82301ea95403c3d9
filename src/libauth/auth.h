/*
 * auth.h - API tokens and roles of `exa serve` (the REST API, the
 * console, MCP over HTTP): make, check, list and revoke tokens, and
 * decide what a role may do (doc/console.md "Tokens and roles").
 *
 * A token is "exa_" followed by 43 characters: the unpadded base64url
 * (RFC 4648 §5) of 32 bytes from getrandom(2) (256 bits). It is shown
 * once, when made; platform.db keeps only the SHA-256 of the whole token
 * text, as 64 lower-case hex digits (libstore/tokens.h). A presented
 * token is hashed, its row found by that hash, and the stored hash
 * compared with CRYPTO_memcmp (constant time), so neither the lookup nor
 * the compare depends on the secret itself.
 *
 * Roles, each including the one before it: viewer reads; operator also
 * runs place and preflight; admin also approves, rejects and reads the
 * audit log.
 *
 * Every token change and every refused call is an audit event (source
 * "api" or "cli"), whose actor is a user name, never a role; no event,
 * message or log line holds a token.
 */
#ifndef EXA_AUTH_H
#define EXA_AUTH_H

#include <jansson.h>
#include <stddef.h>

#include "libstore/store.h"
#include "libutil/error.h"

enum auth_role {
    AUTH_ROLE_NONE = -1,
    AUTH_ROLE_VIEWER = 0,
    AUTH_ROLE_OPERATOR,
    AUTH_ROLE_ADMIN,
};

/* Length of a token's text: "exa_" + 43 base64url characters. */
#define AUTH_TOKEN_LEN 47
/* The longest user name (the grammar: see auth_user_check). */
#define AUTH_USER_MAX 64

/* Who a valid token belongs to. */
struct auth_principal {
    char user[AUTH_USER_MAX + 1]; /* "" when unknown */
    enum auth_role role;          /* AUTH_ROLE_NONE when unknown */
    long long token_id;           /* 0 when unknown */
};

/* "viewer" / "operator" / "admin" ("none" for AUTH_ROLE_NONE). */
const char *auth_role_name(enum auth_role r);
/* Parse a role word; anything else gives AUTH_ROLE_NONE. */
enum auth_role auth_role_parse(const char *s);
/* 1 when role have may do what needs role needed (have >= needed). */
int auth_role_allows(enum auth_role have, enum auth_role needed);

/*
 * 0 when user is 1..64 characters of [A-Za-z0-9._@-] starting with a
 * letter or digit; else -1 with err (EXA_EUSAGE) naming it.
 */
int auth_user_check(const char *user, exa_error_t *err);

/*
 * Make a token for user with role, valid for expires_s seconds from now
 * (0: never expires). In one transaction: the row (its hash only) and
 * the audit event `token_created` (source, actor, target "token:ID";
 * details: token id, user, role, expires_at). *token_out gets the token text
 * (caller frees; it exists nowhere else), *id (may be NULL) its id. 0 or -1
 * with err (EXA_EUSAGE bad user or role, EXA_ECONFIG database, EXA_EFAIL no
 * randomness).
 */
int auth_token_create(store_t *st, const char *user, enum auth_role role,
                      long long expires_s, const char *source,
                      const char *actor, char **token_out, long long *id,
                      exa_error_t *err);

/*
 * Revoke token id (audit `token_revoked`, target "token:ID", details:
 * id, user, role). 0, or -1
 * with err: EXA_ENOTFOUND "unknown token id N", EXA_EFAIL "token N is
 * already revoked", EXA_ECONFIG database.
 */
int auth_token_revoke(store_t *st, long long id, const char *source,
                      const char *actor, exa_error_t *err);

/*
 * Check token (NUL-terminated text, may be NULL). Returns 0 with *out
 * filled when it is a known, unexpired, unrevoked token. Otherwise -1
 * with err: EXA_EFAIL for a missing, malformed, unknown, expired
 * ("token of user 'U' expired at T") or revoked token (then out->user
 * and out->role are the token's, so the refusal can be audited under
 * its user; else out->user is ""), EXA_ECONFIG for a database error.
 * The message never contains the token.
 */
int auth_verify(store_t *st, const char *token, struct auth_principal *out,
                exa_error_t *err);

/*
 * auth_verify for a token already checked once, by its id (a console
 * session remembers the id, never the token): 0 with *out when token id
 * is still unrevoked and unexpired, else -1 as auth_verify.
 */
int auth_check_id(store_t *st, long long id, struct auth_principal *out,
                  exa_error_t *err);

/*
 * The SHA-256 of text as 64 lower-case hex digits and a NUL into hex.
 */
void auth_sha256_hex(const char *text, size_t len, char hex[65]);

/* The longest request path an `api_denied` event keeps. */
#define AUTH_DENIED_PATH_MAX 256

/*
 * Record a refused call as audit event `api_denied` (source "api";
 * target the path, cut to AUTH_DENIED_PATH_MAX bytes and "..." when
 * longer; details: status, method, reason, remote) in its own
 * transaction. method and remote may be NULL (json null). actor is the token's
 * user name, or NULL/"" for "anonymous" (no or an unknown token). No argument
 * may hold a token. 0 or -1 with err (EXA_ECONFIG).
 */
int auth_record_denied(store_t *st, const char *actor, int status,
                       const char *method, const char *path, const char *reason,
                       const char *remote, exa_error_t *err);

/*
 * Record an allowed API action as audit event action (source "api",
 * actor the token's user, details borrowed, may be NULL) in its own
 * transaction. action must not start with "cluster_" (those events are
 * governance's, bound to the clusters rows). 0 or -1 with err.
 */
int auth_record_action(store_t *st, const char *actor, const char *action,
                       const char *target, const json_t *details,
                       exa_error_t *err);

/*
 * n random bytes from getrandom(2) into buf. 0 or -1 with err
 * (EXA_EFAIL). Also used for session ids and CSRF tokens.
 */
int auth_random(void *buf, size_t n, exa_error_t *err);

/*
 * Unpadded base64url (RFC 4648 §5) of n bytes into out, which must hold
 * 4 * ceil(n / 3) + 1 bytes; returns the text length.
 */
size_t auth_b64url(const unsigned char *in, size_t n, char *out);

#endif
