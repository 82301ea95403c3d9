/*
 * auth.c - API tokens and roles (see auth.h).
 */
#include "libauth/auth.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "libstore/audit.h"
#include "libstore/tokens.h"
#include "libutil/dl_crypto_int.h"
#include "libutil/json.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

const char *auth_role_name(enum auth_role r)
{
    switch (r) {
    case AUTH_ROLE_VIEWER:
        return "viewer";
    case AUTH_ROLE_OPERATOR:
        return "operator";
    case AUTH_ROLE_ADMIN:
        return "admin";
    default:
        return "none";
    }
}

enum auth_role auth_role_parse(const char *s)
{
    if (!s)
        return AUTH_ROLE_NONE;
    if (!strcmp(s, "viewer"))
        return AUTH_ROLE_VIEWER;
    if (!strcmp(s, "operator"))
        return AUTH_ROLE_OPERATOR;
    if (!strcmp(s, "admin"))
        return AUTH_ROLE_ADMIN;
    return AUTH_ROLE_NONE;
}

int auth_role_allows(enum auth_role have, enum auth_role needed)
{
    return have != AUTH_ROLE_NONE && needed != AUTH_ROLE_NONE && have >= needed;
}

static int user_char(char c, int first)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9'))
        return 1;
    return !first && (c == '.' || c == '_' || c == '@' || c == '-');
}

int auth_user_check(const char *user, exa_error_t *err)
{
    size_t n = user ? strlen(user) : 0;
    int ok = n >= 1 && n <= AUTH_USER_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = user_char(user[i], i == 0);
    if (!ok)
        return exa_err(err, EXA_EUSAGE,
                       "invalid user name '%.64s%s': expected 1 to 64 of "
                       "[A-Za-z0-9._@-], starting with a letter or digit",
                       user ? user : "", n > 64 ? "..." : "");
    return 0;
}

void auth_sha256_hex(const char *text, size_t len, char hex[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    static const char digits[] = "0123456789abcdef";
    dl_crypto()->EVP_Digest(text, len, md, &mdlen, dl_crypto()->EVP_sha256(),
                            NULL);
    for (size_t i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
    dl_crypto()->OPENSSL_cleanse(md, sizeof(md));
}

int auth_random(void *buf, size_t n, exa_error_t *err)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return exa_err(err, EXA_EFAIL, "getrandom failed: %s",
                           strerror(errno));
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

size_t auth_b64url(const unsigned char *in, size_t n, char *out)
{
    static const char tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v =
            (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        out[o++] = tbl[v >> 18 & 63];
        out[o++] = tbl[v >> 12 & 63];
        out[o++] = tbl[v >> 6 & 63];
        out[o++] = tbl[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)in[i] << 16;
        out[o++] = tbl[v >> 18 & 63];
        out[o++] = tbl[v >> 12 & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
        out[o++] = tbl[v >> 18 & 63];
        out[o++] = tbl[v >> 12 & 63];
        out[o++] = tbl[v >> 6 & 63];
    }
    out[o] = '\0';
    return o;
}

int auth_token_create(store_t *st, const char *user, enum auth_role role,
                      long long expires_s, const char *source,
                      const char *actor, char **token_out, long long *id,
                      exa_error_t *err)
{
    unsigned char raw[32];
    char tok[AUTH_TOKEN_LEN + 8], hex[65], now[32], exp[32], target[48];
    long long tid = 0;
    json_t *d;
    int rc;

    *token_out = NULL;
    if (auth_user_check(user, err) < 0)
        return -1;
    if (role == AUTH_ROLE_NONE)
        return exa_err(err, EXA_EUSAGE,
                       "invalid role: expected viewer, operator or admin");
    if (expires_s < 0)
        return exa_err(err, EXA_EUSAGE, "invalid expiry: negative duration");
    if (auth_random(raw, sizeof(raw), err) < 0)
        return -1;
    memcpy(tok, "exa_", 4);
    auth_b64url(raw, sizeof(raw), tok + 4);
    dl_crypto()->OPENSSL_cleanse(raw, sizeof(raw));
    auth_sha256_hex(tok, strlen(tok), hex);
    store_now(now, sizeof(now));
    if (expires_s > 0)
        time_format_iso8601(time(NULL) + (time_t)expires_s, exp, sizeof(exp));
    if (store_begin(st, err) < 0)
        goto fail;
    if (store_token_insert(st, hex, user, auth_role_name(role), now,
                           expires_s > 0 ? exp : NULL, &tid, err) < 0) {
        store_rollback(st);
        goto fail;
    }
    snprintf(target, sizeof(target), "token:%lld", tid);
    d = json_object();
    jx_set(d, "token_id", json_integer(tid));
    jx_set(d, "user", jx_str(user));
    jx_set(d, "role", jx_str(auth_role_name(role)));
    jx_set(d, "expires_at", expires_s > 0 ? jx_str(exp) : NULL);
    rc = audit_append(st, source, actor, "token_created", target, d, err);
    json_decref(d);
    if (rc < 0 || store_commit(st, err) < 0) {
        store_rollback(st);
        goto fail;
    }
    *token_out = xstrdup(tok);
    dl_crypto()->OPENSSL_cleanse(tok, sizeof(tok));
    if (id)
        *id = tid;
    return 0;
fail:
    dl_crypto()->OPENSSL_cleanse(tok, sizeof(tok));
    return -1;
}

int auth_token_revoke(store_t *st, long long id, const char *source,
                      const char *actor, exa_error_t *err)
{
    struct token_row r;
    char now[32], target[48];
    json_t *d;
    int rc;

    snprintf(target, sizeof(target), "token:%lld", id);
    if (store_begin(st, err) < 0)
        return -1;
    rc = store_token_get(st, id, &r, err);
    if (rc <= 0) {
        store_rollback(st);
        if (rc == 0)
            exa_err(err, EXA_ENOTFOUND, "unknown token id %lld", id);
        return -1;
    }
    if (r.revoked_at) {
        store_rollback(st);
        exa_err(err, EXA_EFAIL, "token %lld of user '%s' is already revoked",
                id, r.user);
        token_row_release(&r);
        return -1;
    }
    store_now(now, sizeof(now));
    if (store_token_revoke(st, id, now, err) < 0)
        goto fail;
    d = json_object();
    jx_set(d, "token_id", json_integer(id));
    jx_set(d, "user", jx_str(r.user));
    jx_set(d, "role", jx_str(r.role));
    rc = audit_append(st, source, actor, "token_revoked", target, d, err);
    json_decref(d);
    if (rc < 0 || store_commit(st, err) < 0)
        goto fail;
    token_row_release(&r);
    return 0;
fail:
    store_rollback(st);
    token_row_release(&r);
    return -1;
}

/* 1 when s is "exa_" and 43 base64url characters. */
static int token_shape_ok(const char *s)
{
    if (strncmp(s, "exa_", 4))
        return 0;
    for (size_t i = 4; i < AUTH_TOKEN_LEN; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '_'))
            return 0;
    }
    return s[AUTH_TOKEN_LEN] == '\0';
}

/* The revocation, expiry and role checks of a found row r (released). */
static int check_row(struct token_row *r, struct auth_principal *out,
                     exa_error_t *err)
{
    char now[32];
    snprintf(out->user, sizeof(out->user), "%s", r->user ? r->user : "");
    out->role = auth_role_parse(r->role);
    out->token_id = r->id;
    store_now(now, sizeof(now));
    if (r->revoked_at) {
        exa_err(err, EXA_EFAIL, "token of user '%s' was revoked at %s",
                out->user, r->revoked_at);
        token_row_release(r);
        return -1;
    }
    /* ISO-8601 UTC of one shape compares as text */
    if (r->expires_at && strcmp(r->expires_at, now) <= 0) {
        exa_err(err, EXA_EFAIL, "token of user '%s' expired at %s", out->user,
                r->expires_at);
        token_row_release(r);
        return -1;
    }
    token_row_release(r);
    if (out->role == AUTH_ROLE_NONE)
        return exa_err(err, EXA_EFAIL, "token of user '%s' has no valid role",
                       out->user);
    return 0;
}

int auth_check_id(store_t *st, long long id, struct auth_principal *out,
                  exa_error_t *err)
{
    struct token_row r;
    int rc;
    memset(out, 0, sizeof(*out));
    out->role = AUTH_ROLE_NONE;
    rc = store_token_get(st, id, &r, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return exa_err(err, EXA_EFAIL, "the token is not valid");
    return check_row(&r, out, err);
}

int auth_verify(store_t *st, const char *token, struct auth_principal *out,
                exa_error_t *err)
{
    struct token_row r;
    char hex[65];
    int rc;

    memset(out, 0, sizeof(*out));
    out->role = AUTH_ROLE_NONE;
    if (!token || !*token)
        return exa_err(err, EXA_EFAIL, "no token given");
    if (!token_shape_ok(token))
        return exa_err(err, EXA_EFAIL, "the token is not valid");
    auth_sha256_hex(token, strlen(token), hex);
    rc = store_token_find(st, hex, &r, err);
    if (rc < 0)
        return -1;
    if (rc == 0 || !r.token_sha256 || strlen(r.token_sha256) != 64 ||
        dl_crypto()->CRYPTO_memcmp(r.token_sha256, hex, 64) != 0) {
        token_row_release(&r);
        return exa_err(err, EXA_EFAIL, "the token is not valid");
    }
    return check_row(&r, out, err);
}

int auth_record_denied(store_t *st, const char *actor, int status,
                       const char *method, const char *path, const char *reason,
                       const char *remote, exa_error_t *err)
{
    json_t *d = json_object();
    char target[AUTH_DENIED_PATH_MAX + 4];
    int rc;
    /* a request line is the caller's: cut it, so one refused call
     * cannot write more than a few hundred bytes into the log */
    snprintf(target, sizeof(target), "%.*s%s", AUTH_DENIED_PATH_MAX,
             path ? path : "",
             path && strlen(path) > AUTH_DENIED_PATH_MAX ? "..." : "");
    jx_set(d, "status", json_integer(status));
    jx_set(d, "method", jx_str(method));
    jx_set(d, "reason", jx_str(reason));
    jx_set(d, "remote", jx_str(remote));
    if (store_begin(st, err) < 0) {
        json_decref(d);
        return -1;
    }
    rc = audit_append(st, "api", actor && *actor ? actor : "anonymous",
                      "api_denied", target, d, err);
    json_decref(d);
    if (rc < 0 || store_commit(st, err) < 0) {
        store_rollback(st);
        return -1;
    }
    return 0;
}

int auth_record_action(store_t *st, const char *actor, const char *action,
                       const char *target, const json_t *details,
                       exa_error_t *err)
{
    if (!strncmp(action, "cluster_", 8))
        return exa_err(err, EXA_EUSAGE,
                       "audit action '%s' is reserved for governance", action);
    if (store_begin(st, err) < 0)
        return -1;
    if (audit_append(st, "api", actor, action, target, details, err) < 0 ||
        store_commit(st, err) < 0) {
        store_rollback(st);
        return -1;
    }
    return 0;
}
