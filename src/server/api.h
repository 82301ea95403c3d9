/*
 * api.h - the REST API of `exa serve` under /api/v1/ (doc/openapi.json,
 * served at /api/v1/openapi.json; doc/console.md).
 *
 * Every route but POST /api/v1/auth/login needs a token (Authorization:
 * Bearer, libauth/auth.h) or a console session cookie made by login; a
 * cookie-authenticated POST also needs the session's X-CSRF-Token
 * header. Roles: viewer reads; operator also runs place and preflight;
 * admin also approves, rejects and reads the audit log. 401 (missing,
 * bad, expired or revoked token) and 403 (wrong role, missing CSRF
 * header) are audited as `api_denied` with the token's user as actor.
 * After API_FAIL_LIMIT failed authentications (no, a bad, an expired or
 * a revoked token) from one address (the peer, or what a trusted proxy
 * forwarded for) within API_FAIL_WINDOW_S seconds, that address's further
 * failures get 429 with Retry-After (doubling up to API_FAIL_MAX_DELAY_S)
 * and are not audited; a valid token or session is never refused
 * (libauth/throttle.h, shared with /mcp).
 *
 * The routes call the core exactly as the CLI does: the read views of
 * libview (redacted: no ssh user, key path or key material in any
 * answer), gov_approve / gov_reject (libfleet/governance.h) with the
 * token's user as actor, and view_preflight. Errors are
 * {"error": {"code", "message"}}.
 */
#ifndef EXA_SERVER_API_H
#define EXA_SERVER_API_H

struct http_server;

#include "libauth/throttle.h"

#define API_FAIL_LIMIT AUTH_FAIL_LIMIT
#define API_FAIL_WINDOW_S AUTH_FAIL_WINDOW_S
#define API_FAIL_MAX_DELAY_S AUTH_FAIL_MAX_DELAY_S
#define API_SESSION_TTL_S (12 * 3600)
/* Calls that wait on a cluster (queue, preflight, refresh) at once; more
 * get 503 with Retry-After. */
#define API_MAX_LIVE 4

struct api_config {
    const char *dbpath;  /* platform.db; NULL: store_default_path() */
    const char *regpath; /* clusters.yaml; NULL: registry_default_path() */
    int secure_cookies;  /* 1: the session cookie carries Secure (TLS, or
                            TLS ended at a reverse proxy) */
    int fail_limit;      /* 0: API_FAIL_LIMIT; < 0: no slow-down (tests) */
    /* the reverse proxy's address ("127.0.0.1"): for requests from it,
     * the slow-down and the audit use the last X-Forwarded-For address;
     * NULL: the peer's address always */
    const char *trusted_proxy;
    struct auth_throttle *throttle; /* borrowed, shared with /mcp
                                       (libauth/throttle.h); NULL: the
                                       API makes its own of fail_limit */
};

struct api;

/*
 * Add the /api/v1/ routes to srv. cfg is copied. Returns the API's
 * state, freed with api_free() after the server stopped.
 */
struct api *api_register(struct http_server *srv, const struct api_config *cfg);
void api_free(struct api *a);

/* The embedded OpenAPI 3.1 document (doc/openapi.json, generated C). */
extern const unsigned char api_openapi_json[];
extern const unsigned long api_openapi_json_len;

#endif
