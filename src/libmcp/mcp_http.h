/*
 * mcp_http.h - MCP's streamable HTTP transport rules (specification
 * 2025-11-25, basic/transports#streamable-http), independent of the HTTP
 * server: the front end (server/mcp_route.c on server/http.c) copies the
 * request's method, headers and body in and sends what comes out.
 *
 * One endpoint, /mcp:
 *   POST    one JSON-RPC message; a request gets 200 application/json with
 *           its reply, a notification or a response 202 with no body, an
 *           unparsable body 400 (-32700), a batch 400 (-32600)
 *   GET     405, Allow: POST, DELETE (exa offers no server-sent stream)
 *   DELETE  ends the session named by Mcp-Session-Id (200); later use of
 *           that id is 404
 * Sessions: an initialize that succeeds gets a new Mcp-Session-Id (32 hex
 * digits from 128 random bits); every other POST must carry a live one
 * (400 without, 404 for an unknown or ended one). MCP-Protocol-Version:
 * absent means 2025-03-26 (the SDK's default); an unsupported one is 400.
 * DNS rebinding: Host must name an allowed host (loopback names by
 * default) and Origin, when present, too; else 403 before anything else.
 * Authentication: when an authenticator is set, every request needs
 * "Authorization: Bearer TOKEN" that it accepts (401 otherwise, with
 * WWW-Authenticate: Bearer); the token's user and role become the
 * session's, and a session answers only to tokens of its own user (403).
 * Each request runs with the role of its own token: a session opened
 * with an admin token and used with a viewer token of the same user has
 * the viewer's rights for that request.
 */
#ifndef EXA_MCP_HTTP_H
#define EXA_MCP_HTTP_H

#include <stddef.h>

#include "libmcp/mcp.h"

enum mcp_http_method {
    MCP_HTTP_OTHER = 0,
    MCP_HTTP_POST,
    MCP_HTTP_GET,
    MCP_HTTP_DELETE,
};

/* A request; every string borrowed, NULL when the header is absent. */
struct mcp_http_req {
    enum mcp_http_method method;
    const char *host;             /* Host */
    const char *origin;           /* Origin */
    const char *session_id;       /* Mcp-Session-Id */
    const char *protocol_version; /* MCP-Protocol-Version */
    const char *authorization;    /* Authorization */
    const char *content_type;     /* Content-Type */
    const char *body;             /* POST body, body_len bytes */
    size_t body_len;
    const char *remote;      /* the peer address ("127.0.0.1"); NULL unknown */
    const char *method_name; /* the method as sent ("POST"), for audit
                                events; NULL unknown */
};

/* The answer: the front end sends status, the headers that are set, and
 * body (malloc'ed, the front end frees it; NULL: empty). */
struct mcp_http_resp {
    int status;
    const char *content_type; /* static; NULL: no body */
    char *body;
    size_t len;
    char session_id[33];  /* "" or the Mcp-Session-Id to send */
    int allow;            /* 1: send Allow: POST, DELETE */
    int www_authenticate; /* 1: send WWW-Authenticate: Bearer */
    long retry_after;     /* > 0 (a 429): send Retry-After: N */
};

/* The token's user and role, filled by an authenticator. */
struct mcp_principal {
    char user[128];
    char role[16];    /* "viewer", "operator" or "admin" */
    long retry_after; /* set on a refusal: the address is held back this
                         many seconds more (answered 429, not 401) */
};

/*
 * Check a bearer token (the text after "Bearer "; NULL when the request
 * had none) of request req (its remote address and method, for the
 * slow-down and the audit). Returns 0 and fills out, or -1 with err when
 * the token is missing, unknown, expired or revoked (the request is
 * answered 401, or 429 with Retry-After when out->retry_after > 0), or
 * with err EXA_ECONFIG when the tokens could not be read (500).
 * Called from the server's threads, possibly at the same time: it must be
 * thread-safe.
 */
typedef int (*mcp_auth_f)(void *ctx, const char *token,
                          const struct mcp_http_req *req,
                          struct mcp_principal *out, exa_error_t *err);

struct mcp_http;

/*
 * The HTTP rules over srv (borrowed; it must outlive the result). auth
 * (may be NULL: no authentication, for tests of the protocol alone) is
 * called with auth_ctx. Up to max_sessions (0: 256) live at once; past
 * that the one idle longest is ended.
 */
struct mcp_http *mcp_http_create(struct mcp_server *srv, mcp_auth_f auth,
                                 void *auth_ctx, size_t max_sessions);
/* End every session and free; NULL is accepted. */
void mcp_http_destroy(struct mcp_http *h);

/*
 * Allow Host/Origin name host (copied; "example.org", "[::1]") besides
 * the loopback names localhost, 127.0.0.1 and [::1]. For a listener
 * beyond loopback that clients reach by name.
 */
void mcp_http_allow_host(struct mcp_http *h, const char *host);

/*
 * Apply the rules to one request and fill resp (zero it first). Thread-
 * safe: requests of different sessions run in parallel, those of one
 * session one at a time, in arrival order of the lock. Always returns 0;
 * every outcome, errors included, is an HTTP answer.
 */
int mcp_http_handle(struct mcp_http *h, const struct mcp_http_req *req,
                    struct mcp_http_resp *resp);

/* Live sessions (for tests). */
size_t mcp_http_session_count(struct mcp_http *h);

#endif
