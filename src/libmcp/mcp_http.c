/*
 * mcp_http.c - streamable HTTP sessions, headers and status codes over the
 * MCP core; see mcp_http.h for the rules.
 *
 * The checks run in the order that leaks least: the Host/Origin check
 * first (a page on another site learns nothing but 403), then the token,
 * then the method and the protocol version, then the session. Requests
 * run in parallel (exa serve has a thread per connection and a tool may wait on
 * ssh): the table lock is held only to find, add or end a session; the
 * token check and the tool run outside it, and each session has its own
 * lock, so one session's messages run in order and a slow call holds up
 * only its own session. A session ended while a request of it is still
 * running is freed when that request is done (refs). The HTTP
 * server has read the whole body before this runs (server/http.c), so an
 * early answer never leaves a body in a kept-alive connection
 * (shared/E2E-TESTING.md A2 pitfall 3).
 */
#include "libmcp/mcp_http.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

struct http_session {
    char id[33];
    struct mcp_session s;
    double last;          /* time_monotonic() of the last use */
    int refs;             /* requests using it now (under the table lock) */
    int dead;             /* ended while in use: freed by the last one */
    pthread_mutex_t lock; /* one message of the session at a time */
};

struct mcp_http {
    struct mcp_server *srv;
    mcp_auth_f auth;
    void *auth_ctx;
    size_t max;
    struct http_session **v; /* live sessions */
    size_t nr, alloc;
    struct strvec hosts; /* allowed besides loopback, lower case */
    pthread_mutex_t lock;
};

struct mcp_http *mcp_http_create(struct mcp_server *srv, mcp_auth_f auth,
                                 void *auth_ctx, size_t max_sessions)
{
    struct mcp_http *h = xcalloc(1, sizeof(*h));
    h->srv = srv;
    h->auth = auth;
    h->auth_ctx = auth_ctx;
    h->max = max_sessions ? max_sessions : 256;
    strvec_init(&h->hosts);
    pthread_mutex_init(&h->lock, NULL);
    return h;
}

void mcp_http_destroy(struct mcp_http *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->nr; i++) {
        mcp_session_release(&h->v[i]->s);
        pthread_mutex_destroy(&h->v[i]->lock);
        free(h->v[i]);
    }
    free(h->v);
    strvec_clear(&h->hosts);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

void mcp_http_allow_host(struct mcp_http *h, const char *host)
{
    char *c = xstrdup(host);
    for (char *p = c; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    pthread_mutex_lock(&h->lock);
    strvec_push(&h->hosts, c);
    pthread_mutex_unlock(&h->lock);
    free(c);
}

size_t mcp_http_session_count(struct mcp_http *h)
{
    size_t n;
    pthread_mutex_lock(&h->lock);
    n = h->nr;
    pthread_mutex_unlock(&h->lock);
    return n;
}

/* ---- Host and Origin ---- */

/*
 * Is the host part of hostport ("127.0.0.1:8931", "[::1]:80",
 * "localhost") allowed? A port, when present, must be digits only.
 */
static int host_allowed(const struct mcp_http *h, const char *hostport,
                        size_t n)
{
    static const char *const loop[] = {"localhost", "127.0.0.1", "[::1]"};
    size_t hl = n;
    const char *colon;
    if (n == 0)
        return 0;
    if (hostport[0] == '[') {
        const char *rb = memchr(hostport, ']', n);
        if (!rb)
            return 0;
        hl = (size_t)(rb - hostport) + 1;
    } else if ((colon = memchr(hostport, ':', n)))
        hl = (size_t)(colon - hostport);
    if (hl < n) {
        if (hostport[hl] != ':' || hl + 1 == n)
            return 0;
        for (size_t i = hl + 1; i < n; i++)
            if (hostport[i] < '0' || hostport[i] > '9')
                return 0;
    }
    for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++)
        if (strlen(loop[i]) == hl && !strncasecmp(hostport, loop[i], hl))
            return 1;
    for (size_t i = 0; i < h->hosts.nr; i++)
        if (strlen(h->hosts.v[i]) == hl &&
            !strncasecmp(hostport, h->hosts.v[i], hl))
            return 1;
    return 0;
}

/* Origin is "scheme://host[:port]" (RFC 6454 §7); "null" is refused. */
static int origin_allowed(const struct mcp_http *h, const char *origin)
{
    const char *p = strstr(origin, "://");
    size_t n;
    if (!p || (strncasecmp(origin, "http://", 7) &&
               strncasecmp(origin, "https://", 8)))
        return 0;
    p += 3;
    n = strcspn(p, "/");
    if (p[n]) /* a path: not an origin */
        return 0;
    return host_allowed(h, p, n);
}

/* ---- answers ---- */

static void answer_json(struct mcp_http_resp *r, int status, char *text)
{
    r->status = status;
    r->content_type = "application/json";
    r->body = text;
    r->len = text ? strlen(text) : 0;
}

/* An HTTP-level refusal with a JSON-RPC error body (id null: the request
 * was not read as JSON-RPC). */
static void refuse(struct mcp_http_resp *r, int status, int code,
                   const char *msg)
{
    json_t *e = mcp_error_reply(NULL, code, msg);
    answer_json(r, status, json_dumps(e, JSON_COMPACT));
    json_decref(e);
}

/* ---- sessions ---- */

/* Under the table lock. */
static struct http_session *find_session(struct mcp_http *h, const char *id)
{
    for (size_t i = 0; id && i < h->nr; i++)
        if (!strcmp(h->v[i]->id, id))
            return h->v[i];
    return NULL;
}

static void free_session(struct http_session *s)
{
    mcp_session_release(&s->s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Under the table lock: take s out of the table; free it unless a
 * request still uses it. */
static void drop_session(struct mcp_http *h, struct http_session *s)
{
    for (size_t i = 0; i < h->nr; i++)
        if (h->v[i] == s) {
            memmove(&h->v[i], &h->v[i + 1], (h->nr - i - 1) * sizeof(h->v[0]));
            h->nr--;
            break;
        }
    if (s->refs)
        s->dead = 1;
    else
        free_session(s);
}

/* Under the table lock: one request is done with s. */
static void unref_session(struct http_session *s)
{
    if (--s->refs == 0 && s->dead)
        free_session(s);
}

static int new_id(char out[33])
{
    unsigned char raw[16];
    static const char hex[] = "0123456789abcdef";
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return -1;
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[32] = '\0';
    return 0;
}

/* Under the table lock: a session holding from's strings, or NULL (no
 * randomness; from is left alone). */
static struct http_session *add_session(struct mcp_http *h,
                                        struct mcp_session *from)
{
    struct http_session *s = xcalloc(1, sizeof(*s));
    if (new_id(s->id) < 0) {
        free(s);
        return NULL;
    }
    if (h->nr >= h->max) { /* end the one idle longest */
        size_t old = 0;
        for (size_t i = 1; i < h->nr; i++)
            if (h->v[i]->last < h->v[old]->last)
                old = i;
        drop_session(h, h->v[old]);
    }
    pthread_mutex_init(&s->lock, NULL);
    s->s = *from; /* takes the strings */
    s->last = time_monotonic();
    ALLOC_GROW(h->v, h->nr + 1, h->alloc);
    h->v[h->nr++] = s;
    return s;
}

/* The token of "Bearer TOKEN" (RFC 6750 §2.1; the scheme is case-
 * insensitive), or NULL. */
static const char *bearer(const char *authz)
{
    if (!authz || strncasecmp(authz, "Bearer ", 7))
        return NULL;
    authz += 7;
    while (*authz == ' ')
        authz++;
    return *authz ? authz : NULL;
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static void post(struct mcp_http *h, const struct mcp_http_req *req,
                 const struct mcp_principal *who, struct mcp_http_resp *resp)
{
    struct http_session *hs = NULL;
    struct mcp_session fresh = MCP_SESSION_INIT, *sess;
    enum mcp_msg_kind kind = MCP_MSG_INVALID;
    int was_init = 0;
    json_error_t je;
    json_t *msg, *out;
    const char *method;

    if (req->content_type &&
        strncasecmp(req->content_type, "application/json", 16))
        return refuse(resp, 415, MCP_INVALID_REQUEST,
                      "unsupported content type: expected "
                      "application/json");
    msg = json_loadb(req->body ? req->body : "", req->body_len,
                     JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!msg) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_addf(&sb, "parse error: %s at byte %d", je.text, je.position);
        refuse(resp, 400, MCP_PARSE_ERROR, sb.buf);
        strbuf_release(&sb);
        return;
    }
    method = jx_get_str(msg, "method", "");
    if (req->session_id) {
        const char *why = NULL;
        int status = 0, code = 0;
        pthread_mutex_lock(&h->lock);
        if (!(hs = find_session(h, req->session_id)))
            status = 404, code = -32001, why = "session not found";
        else if (who && !same(hs->s.user, who->user))
            status = 403, code = -32000,
            why = "session belongs to another user";
        else if (!strcmp(method, "initialize"))
            status = 400, code = MCP_INVALID_REQUEST,
            why = "session already initialized";
        else {
            hs->refs++;
            hs->last = time_monotonic();
        }
        pthread_mutex_unlock(&h->lock);
        if (why) {
            json_decref(msg);
            return refuse(resp, status, code, why);
        }
        sess = &hs->s;
    } else if (!strcmp(method, "initialize") && json_object_get(msg, "id")) {
        if (who) {
            fresh.user = xstrdup(who->user);
            fresh.role = xstrdup(who->role);
        }
        xsnprintf(fresh.remote, sizeof(fresh.remote), "%s",
                  req->remote ? req->remote : "");
        sess = &fresh;
    } else {
        json_decref(msg);
        return refuse(resp, 400, MCP_INVALID_REQUEST,
                      "bad request: missing Mcp-Session-Id header (send "
                      "initialize first)");
    }
    if (hs) {
        pthread_mutex_lock(&hs->lock);
        /* the rights are this request's token's, never the ones of the
         * token that opened the session (it may be revoked since, and
         * another token of the same user may have a smaller role) */
        if (who && !same(hs->s.role, who->role)) {
            free(hs->s.role);
            hs->s.role = xstrdup(who->role);
        }
        xsnprintf(hs->s.remote, sizeof(hs->s.remote), "%s",
                  req->remote ? req->remote : "");
        out = mcp_handle(h->srv, sess, msg, &kind, &was_init);
        pthread_mutex_unlock(&hs->lock);
        pthread_mutex_lock(&h->lock);
        unref_session(hs);
        pthread_mutex_unlock(&h->lock);
    } else {
        out = mcp_handle(h->srv, sess, msg, &kind, &was_init);
        pthread_mutex_lock(&h->lock);
        if (was_init && (hs = add_session(h, &fresh)))
            memcpy(resp->session_id, hs->id, sizeof(resp->session_id));
        else
            mcp_session_release(&fresh);
        pthread_mutex_unlock(&h->lock);
    }
    json_decref(msg);
    if (!out) { /* a notification or a response: accepted */
        resp->status = 202;
        return;
    }
    answer_json(resp, kind == MCP_MSG_REQUEST ? 200 : 400,
                json_dumps(out, JSON_COMPACT));
    json_decref(out);
}

int mcp_http_handle(struct mcp_http *h, const struct mcp_http_req *req,
                    struct mcp_http_resp *resp)
{
    struct mcp_principal who;
    exa_error_t err = EXA_ERROR_INIT;
    const char *token;
    struct http_session *hs;
    int host_ok;

    pthread_mutex_lock(&h->lock);
    host_ok = req->host && host_allowed(h, req->host, strlen(req->host)) &&
              (!req->origin || origin_allowed(h, req->origin));
    pthread_mutex_unlock(&h->lock);
    if (!host_ok) {
        refuse(resp, 403, -32000,
               "forbidden: the Host or Origin header names a host this "
               "server does not answer for");
        return 0;
    }
    if (h->auth) {
        memset(&who, 0, sizeof(who));
        token = bearer(req->authorization);
        if (h->auth(h->auth_ctx, token, req, &who, &err) < 0) {
            if (err.code == EXA_ECONFIG) { /* the store, not the token */
                refuse(resp, 500, MCP_INTERNAL_ERROR, err.text);
                return 0;
            }
            if (who.retry_after > 0) {
                struct strbuf sb = STRBUF_INIT;
                strbuf_addf(&sb,
                            "too many failed authentications from this "
                            "address; retry in %ld s",
                            who.retry_after);
                resp->retry_after = who.retry_after;
                refuse(resp, 429, -32000, sb.buf);
                strbuf_release(&sb);
                return 0;
            }
            resp->www_authenticate = 1;
            if (!token)
                refuse(resp, 401, -32000,
                       "unauthorized: send 'Authorization: Bearer TOKEN' "
                       "(see 'exa auth token create')");
            else
                refuse(resp, 401, -32000,
                       err.text[0] ? err.text : "unauthorized: invalid token");
            return 0;
        }
    }
    if (req->method != MCP_HTTP_POST && req->method != MCP_HTTP_DELETE) {
        resp->allow = 1;
        refuse(resp, 405, -32000,
               "method not allowed: exa offers no server-sent event stream");
        return 0;
    }
    if (req->protocol_version &&
        !mcp_version_supported(req->protocol_version)) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_addf(&sb, "unsupported MCP-Protocol-Version '%.32s'",
                    req->protocol_version);
        refuse(resp, 400, MCP_INVALID_REQUEST, sb.buf);
        strbuf_release(&sb);
        return 0;
    }
    if (req->method == MCP_HTTP_POST) {
        post(h, req, h->auth ? &who : NULL, resp);
        return 0;
    }
    /* DELETE: end the session */
    if (!req->session_id) {
        refuse(resp, 400, MCP_INVALID_REQUEST,
               "bad request: missing Mcp-Session-Id header");
        return 0;
    }
    pthread_mutex_lock(&h->lock);
    if (!(hs = find_session(h, req->session_id)))
        resp->status = 404;
    else if (h->auth && !same(hs->s.user, who.user))
        resp->status = 403;
    else {
        drop_session(h, hs);
        resp->status = 200;
    }
    pthread_mutex_unlock(&h->lock);
    if (resp->status == 404)
        refuse(resp, 404, -32001, "session not found");
    else if (resp->status == 403)
        refuse(resp, 403, -32000, "session belongs to another user");
    return 0;
}
