/*
 * api.c - the REST API routes of `exa serve` (see api.h): the
 * authentication middleware (bearer tokens, console sessions with CSRF
 * tokens, the per-address slow-down), JSON bodies and query parameters,
 * and the routes, each a thin call into libview, libfleet governance or
 * libauth. No SQL, subprocess or transport here (scripts/check-layering.sh).
 *
 * Threads: libmicrohttpd runs each connection's handlers in its own
 * thread; each thread opens its own platform.db handle once (SQLite
 * connections are not shared), the session and slow-down tables are
 * guarded by one mutex.
 */
#include "server/api.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "libauth/auth.h"
#include "libauth/throttle.h"
#include "libdiscovery/preflight.h"
#include "libfleet/governance.h"
#include "libfleet/registry.h"
#include "libstore/store.h"
#include "libutil/dl_crypto_int.h"
#include "libutil/json.h"
#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "libview/view.h"
#include "server/http.h"

#define SESSION_MAX 4096
#define SESSION_PER_TOKEN 32
#define ID_LEN 43 /* base64url of 32 bytes */
#define REASON_MAX 500

struct session {
    char id[ID_LEN + 1];
    char csrf[ID_LEN + 1];
    long long token_id;
    time_t expires;
};

struct api {
    struct api_config cfg;
    char *dbpath, *regpath;
    pthread_key_t key;
    pthread_mutex_t mu;
    struct session *sessions;
    size_t nsessions;
    struct auth_throttle *thr; /* cfg.throttle or own_thr */
    struct auth_throttle *own_thr;
    int nlive; /* calls waiting on a cluster now (under mu) */
};

struct api_route;

/* One authenticated call. */
struct call {
    struct api *a;
    const struct api_route *route;
    const struct http_request *req;
    struct http_response *resp;
    store_t *st;
    struct view_ctx vc;
    struct auth_principal who;
    int via_cookie;
    char csrf[ID_LEN + 1];
    char client[INET6_ADDRSTRLEN + 1]; /* the peer, or the address a
                                          trusted proxy forwarded for */
};

typedef int (*route_fn)(struct call *c);

struct api_route {
    const char *method, *path;
    enum auth_role need; /* AUTH_ROLE_NONE: no token needed */
    route_fn fn;
    struct api *a; /* set at registration */
};

/* ---- store per thread ---- */

static void store_destroy(void *p)
{
    store_close(p);
}

static store_t *thread_store(struct api *a, exa_error_t *err)
{
    store_t *st = pthread_getspecific(a->key);
    if (st)
        return st;
    st = store_open(a->dbpath, err);
    if (st)
        pthread_setspecific(a->key, st);
    return st;
}

/* ---- answers ---- */

static void common_headers(struct http_response *resp)
{
    http_response_header(resp, "Cache-Control", "no-store");
    http_response_header(resp, "X-Content-Type-Options", "nosniff");
    http_response_header(resp, "X-Frame-Options", "DENY");
    http_response_header(resp, "Referrer-Policy", "no-referrer");
}

/* The error message with every ssh user and key path of the fleet
 * rewritten (it may quote a transport error). */
static void fail_msg(struct call *c, int status, const char *code,
                     const char *msg)
{
    struct view_secrets sec;
    char *m = xstrdup(msg);
    if (c->st && view_secrets_load(&c->vc, &sec, NULL) == 0) {
        m = view_redact_text(m, &sec);
        view_secrets_release(&sec);
    }
    http_error_json(c->resp, status, code, "%s", m);
    free(m);
}

/* Map a core error to its HTTP status (doc/openapi.json "Error"). */
static int fail(struct call *c, const exa_error_t *err)
{
    int status = 500;
    const char *code = "internal";
    switch (err->code) {
    case EXA_ENOTFOUND:
        status = 404, code = "not_found";
        break;
    case EXA_EUSAGE:
    case EXA_EPARSE:
        status = 400, code = "bad_request";
        break;
    case EXA_ENOTAPPROVED:
        status = 409, code = "not_approved";
        break;
    case EXA_EFAIL:
        status = 409, code = "conflict";
        break;
    case EXA_ETRANSPORT:
    case EXA_ESCHED:
    case EXA_ETIMEOUT:
        status = 502, code = "cluster_unreachable";
        break;
    default:
        break;
    }
    fail_msg(c, status, code, err->text[0] ? err->text : "internal error");
    return 0;
}

/* Answer doc (stolen) as JSON; NULL doc: the error in err. */
static int reply(struct call *c, json_t *doc, const exa_error_t *err)
{
    if (!doc)
        return fail(c, err);
    free(c->resp->body);
    c->resp->body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!c->resp->body) {
        http_error_json(c->resp, 500, "internal", "cannot encode the answer");
        return 0;
    }
    c->resp->len = strlen(c->resp->body);
    c->resp->status = 200;
    c->resp->content_type = "application/json";
    return 0;
}

/* ---- query and body ---- */

/* An integer query parameter in [lo, hi]; absent leaves *out. 0 or -1
 * after answering 400. */
static int q_int(struct call *c, const char *name, long long lo, long long hi,
                 long long *out)
{
    const char *v = http_request_query(c->req, name);
    int64_t x;
    if (!v)
        return 0;
    if (parse_i64_str(v, &x) < 0 || x < lo || x > hi) {
        http_error_json(c->resp, 400, "bad_request",
                        "query parameter '%s' expects an integer between "
                        "%lld and %lld",
                        name, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* A boolean query parameter: 1/true/yes or 0/false/no. */
static int q_bool(struct call *c, const char *name, int *out)
{
    const char *v = http_request_query(c->req, name);
    if (!v)
        return 0;
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
        *out = 1;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))
        *out = 0;
    else {
        http_error_json(c->resp, 400, "bad_request",
                        "query parameter '%s' expects true or false", name);
        return -1;
    }
    return 0;
}

/*
 * The request body as a JSON object: an empty body is {}; anything but
 * one JSON object (RFC 8259), duplicate keys or NUL bytes is 400. NULL
 * after answering.
 */
static json_t *body_object(struct call *c)
{
    json_error_t je;
    json_t *d;
    const char *b = c->req->body;
    size_t n = c->req->body_len, i = 0;
    while (i < n &&
           (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
        i++;
    if (i == n)
        return json_object();
    d = json_loadb(b, n, JSON_REJECT_DUPLICATES, &je);
    if (!d) {
        /* the position only: jansson's text quotes the input, which
         * may hold a token (login) */
        http_error_json(c->resp, 400, "bad_request",
                        "request body is not JSON (line %d, column %d)",
                        je.line, je.column);
        return NULL;
    }
    if (!json_is_object(d)) {
        json_decref(d);
        http_error_json(c->resp, 400, "bad_request",
                        "request body must be a JSON object");
        return NULL;
    }
    return d;
}

/* An optional string member (NULL when absent or null); -1 after a 400
 * for another type or more than max bytes. */
static int body_str(struct call *c, json_t *d, const char *key, size_t max,
                    const char **out)
{
    json_t *v = json_object_get(d, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v) || json_string_length(v) > max ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        http_error_json(c->resp, 400, "bad_request",
                        "'%s' must be a string of at most %zu bytes", key, max);
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

/* An optional integer member in [lo, hi]. */
static int body_int(struct call *c, json_t *d, const char *key, long long lo,
                    long long hi, int *out)
{
    json_t *v = json_object_get(d, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo ||
        json_integer_value(v) > hi) {
        http_error_json(c->resp, 400, "bad_request",
                        "'%s' must be an integer between %lld and %lld", key,
                        lo, hi);
        return -1;
    }
    *out = (int)json_integer_value(v);
    return 0;
}

/* ---- sessions and the slow-down ---- */

static int make_id(char out[ID_LEN + 1])
{
    unsigned char raw[32];
    if (auth_random(raw, sizeof(raw), NULL) < 0)
        return -1;
    auth_b64url(raw, sizeof(raw), out);
    dl_crypto()->OPENSSL_cleanse(raw, sizeof(raw));
    return 0;
}

/* Find the live session id (constant-time compare); copies it. */
static int session_get(struct api *a, const char *id, struct session *out)
{
    time_t now = time(NULL);
    int found = 0;
    if (strlen(id) != ID_LEN)
        return 0;
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < a->nsessions; i++) {
        struct session *s = &a->sessions[i];
        if (s->expires > now &&
            dl_crypto()->CRYPTO_memcmp(s->id, id, ID_LEN) == 0) {
            *out = *s;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&a->mu);
    return found;
}

/* Under mu: the index of the session of token (any token when < 0) that
 * expires first, among those of token_id; -1 when none. */
static long soonest_of(const struct api *a, long long token_id)
{
    long best = -1;
    for (size_t i = 0; i < a->nsessions; i++)
        if ((token_id < 0 || a->sessions[i].token_id == token_id) &&
            (best < 0 ||
             a->sessions[i].expires < a->sessions[(size_t)best].expires))
            best = (long)i;
    return best;
}

/* Under mu: the token with the most live sessions. */
static long long busiest_token(const struct api *a)
{
    long long best = -1;
    size_t bestn = 0;
    for (size_t i = 0; i < a->nsessions; i++) {
        size_t n = 0;
        for (size_t j = 0; j < a->nsessions; j++)
            n += a->sessions[j].token_id == a->sessions[i].token_id;
        if (n > bestn)
            bestn = n, best = a->sessions[i].token_id;
    }
    return best;
}

/*
 * A new session for token_id. A token keeps at most SESSION_PER_TOKEN
 * sessions (past that its own soonest-expiring one ends), and at the
 * global cap SESSION_MAX the busiest token loses one, so logins with one
 * token never end another user's sessions.
 */
static int session_new(struct api *a, long long token_id, struct session *out)
{
    time_t now = time(NULL);
    size_t k = 0, mine = 0;
    long victim = -1;
    memset(out, 0, sizeof(*out));
    if (make_id(out->id) < 0 || make_id(out->csrf) < 0)
        return -1;
    out->token_id = token_id;
    out->expires = now + API_SESSION_TTL_S;
    pthread_mutex_lock(&a->mu);
    /* drop expired ones */
    for (size_t i = 0; i < a->nsessions; i++)
        if (a->sessions[i].expires > now)
            a->sessions[k++] = a->sessions[i];
    a->nsessions = k;
    for (size_t i = 0; i < a->nsessions; i++)
        mine += a->sessions[i].token_id == token_id;
    if (mine >= SESSION_PER_TOKEN)
        victim = soonest_of(a, token_id);
    else if (a->nsessions >= SESSION_MAX)
        victim = soonest_of(a, busiest_token(a));
    if (victim >= 0) {
        dl_crypto()->OPENSSL_cleanse(&a->sessions[(size_t)victim],
                                     sizeof(struct session));
        a->sessions[(size_t)victim] = a->sessions[--a->nsessions];
    }
    a->sessions[a->nsessions++] = *out;
    pthread_mutex_unlock(&a->mu);
    return 0;
}

static void session_drop(struct api *a, const char *id)
{
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < a->nsessions; i++)
        if (!strcmp(a->sessions[i].id, id)) {
            dl_crypto()->OPENSSL_cleanse(&a->sessions[i],
                                         sizeof(a->sessions[i]));
            a->sessions[i] = a->sessions[--a->nsessions];
            break;
        }
    pthread_mutex_unlock(&a->mu);
}

/* ---- the middleware ---- */

static void deny(struct call *c, int status, const char *code,
                 const char *actor, const char *reason)
{
    exa_error_t e = EXA_ERROR_INIT;
    if (c->st && auth_record_denied(c->st, actor, status, c->req->method,
                                    c->req->path, reason, c->client, &e) < 0)
        /* the refusal stands even when it could not be recorded */
        (void)e;
    if (status == 401)
        http_response_header(c->resp, "WWW-Authenticate",
                             "Bearer realm=\"exa\"");
    http_error_json(c->resp, status, code, "%s", reason);
}

/* The bearer token of the Authorization header (RFC 6750 §2.1), or
 * NULL; *present says whether the header was there at all. */
static const char *bearer(const struct http_request *req, int *present)
{
    const char *h = http_request_header(req, "Authorization");
    *present = h != NULL;
    if (!h || strncasecmp(h, "Bearer ", 7))
        return NULL;
    h += 7;
    while (*h == ' ')
        h++;
    return h;
}

/*
 * A failed authentication: counted for the address (libauth/throttle.h);
 * 429 with Retry-After while the address is held back (not audited, so
 * one address cannot fill the audit log), else the audited 401.
 */
static void refuse_auth(struct call *c, const char *actor, const char *why)
{
    long wait = auth_throttle_failed(c->a->thr, c->client);
    if (wait > 0) {
        char ra[32];
        snprintf(ra, sizeof(ra), "%ld", wait);
        http_response_header(c->resp, "Retry-After", ra);
        http_error_json(c->resp, 429, "too_many_requests",
                        "too many failed authentications from this address; "
                        "retry in %ld s",
                        wait);
        return;
    }
    deny(c, 401, "unauthorized", actor, why);
}

/* Authenticate and authorize c; 0 to go on, -1 when answered. A valid
 * token or session is never held back by the slow-down. */
static int authenticate(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    const char *tok;
    char cookie[ID_LEN + 8];
    struct session s;
    int present;

    tok = bearer(c->req, &present);
    if (tok) {
        if (auth_verify(c->st, tok, &c->who, &err) < 0) {
            if (err.code == EXA_ECONFIG) {
                fail(c, &err);
                return -1;
            }
            refuse_auth(c, c->who.user, err.text);
            return -1;
        }
    } else if (!present &&
               http_request_cookie(c->req, "exa_session", cookie,
                                   sizeof(cookie)) &&
               session_get(c->a, cookie, &s)) {
        if (auth_check_id(c->st, s.token_id, &c->who, &err) < 0) {
            if (err.code == EXA_ECONFIG) {
                fail(c, &err);
                return -1;
            }
            session_drop(c->a, s.id);
            deny(c, 401, "unauthorized", c->who.user, err.text);
            return -1;
        }
        c->via_cookie = 1;
        memcpy(c->csrf, s.csrf, sizeof(c->csrf));
    } else {
        refuse_auth(c, NULL,
                    present ? "the Authorization header is not 'Bearer TOKEN'"
                            : "authentication required: send "
                              "'Authorization: Bearer TOKEN' or log in");
        return -1;
    }
    if (!auth_role_allows(c->who.role, c->route->need)) {
        char why[160];
        snprintf(why, sizeof(why), "role '%s' required (token of '%s' is %s)",
                 auth_role_name(c->route->need), c->who.user,
                 auth_role_name(c->who.role));
        deny(c, 403, "forbidden", c->who.user, why);
        return -1;
    }
    if (c->via_cookie && strcmp(c->req->method, "GET") &&
        strcmp(c->req->method, "HEAD")) {
        const char *h = http_request_header(c->req, "X-CSRF-Token");
        if (!h || strlen(h) != ID_LEN ||
            dl_crypto()->CRYPTO_memcmp(h, c->csrf, ID_LEN) != 0) {
            deny(c, 403, "forbidden", c->who.user,
                 "a missing or wrong X-CSRF-Token header");
            return -1;
        }
    }
    return 0;
}

/*
 * The client's address: the peer's, or, when the peer is the trusted
 * proxy (--trusted-proxy), the last address of its X-Forwarded-For (the
 * one that proxy appended; earlier ones are the client's own claims),
 * when it is a valid IPv4 or IPv6 address.
 */
static void client_addr(const struct api *a, const struct http_request *req,
                        char *out, size_t n)
{
    const char *peer = req->remote ? req->remote : "";
    const char *xff, *last;
    char buf[INET6_ADDRSTRLEN + 1];
    unsigned char bin[sizeof(struct in6_addr)];
    size_t len;
    snprintf(out, n, "%s", peer);
    if (!a->cfg.trusted_proxy || strcmp(peer, a->cfg.trusted_proxy) ||
        !(xff = http_request_header(req, "X-Forwarded-For")))
        return;
    last = strrchr(xff, ',');
    last = last ? last + 1 : xff;
    while (*last == ' ' || *last == '\t')
        last++;
    len = strcspn(last, " \t");
    if (!len || len >= sizeof(buf))
        return;
    memcpy(buf, last, len);
    buf[len] = '\0';
    if (inet_pton(AF_INET, buf, bin) == 1 || inet_pton(AF_INET6, buf, bin) == 1)
        snprintf(out, n, "%s", buf);
}

static int entry(void *ctx, const struct http_request *req,
                 struct http_response *resp)
{
    const struct api_route *r = ctx;
    struct call c;
    exa_error_t err = EXA_ERROR_INIT;
    int rc;

    memset(&c, 0, sizeof(c));
    c.a = r->a;
    c.route = r;
    c.req = req;
    c.resp = resp;
    c.who.role = AUTH_ROLE_NONE;
    client_addr(c.a, req, c.client, sizeof(c.client));
    common_headers(resp);
    if (!(c.st = thread_store(c.a, &err))) {
        http_error_json(resp, 500, "internal", "%s", err.text);
        return 0;
    }
    c.vc.st = c.st;
    c.vc.regpath = c.a->regpath;
    c.vc.redact = 1;
    if (r->need != AUTH_ROLE_NONE && authenticate(&c) < 0)
        return 0;
    rc = r->fn(&c);
    /* a transaction left open would hide every later write of this
     * thread's handle from other processes: never carry one over */
    if (store_in_transaction(c.st)) {
        fprintf(stderr,
                "exa serve: warning: %s %s left a transaction "
                "open; rolled back\n",
                r->method, r->path);
        store_rollback(c.st);
    }
    return rc;
}

/* ---- routes: the fleet ---- */

static int r_clusters(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c, view_clusters(&c->vc, &err), &err);
}

static int r_cluster(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c,
                 view_cluster(&c->vc, http_request_param(c->req, "name"), &err),
                 &err);
}

static int r_nodes(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(
        c, view_nodes(&c->vc, http_request_param(c->req, "name"), &err), &err);
}

/* ---- calls that wait on a cluster ---- */

/*
 * A call that asks a cluster (ssh, the scheduler) may wait for its
 * transport's timeout; at most API_MAX_LIVE run at once, so that slow or
 * unreachable clusters cannot pile up ssh processes and threads without
 * bound. 0 to go on (pair with live_leave), or
 * -1 after answering 503 with Retry-After.
 */
static int live_enter(struct call *c)
{
    int ok;
    pthread_mutex_lock(&c->a->mu);
    ok = c->a->nlive < API_MAX_LIVE;
    if (ok)
        c->a->nlive++;
    pthread_mutex_unlock(&c->a->mu);
    if (ok)
        return 0;
    http_response_header(c->resp, "Retry-After", "5");
    http_error_json(c->resp, 503, "busy",
                    "%d calls to clusters are running; retry in 5 s",
                    API_MAX_LIVE);
    return -1;
}

static void live_leave(struct call *c)
{
    pthread_mutex_lock(&c->a->mu);
    c->a->nlive--;
    pthread_mutex_unlock(&c->a->mu);
}

static int r_queue(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    json_t *doc;
    if (live_enter(c) < 0)
        return 0;
    doc = view_queue(&c->vc, http_request_param(c->req, "name"), &err);
    live_leave(c);
    return reply(c, doc, &err);
}

static int r_preflight(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct preflight_ask ask = {0, 0, NULL, NULL, NULL, NULL, 0};
    struct preflight_report rep = {0};
    const char *name = http_request_param(c->req, "name");
    json_t *b = body_object(c), *doc, *d;
    int rc;
    if (!b)
        return 0;
    if (body_int(c, b, "gpus", 0, 1000000, &ask.gpus) < 0 ||
        body_int(c, b, "nodes", 1, 1000000, &ask.nodes) < 0 ||
        body_int(c, b, "ntasks", 0, 1000000, &ask.ntasks) < 0 ||
        body_str(c, b, "partition", 128, &ask.partition) < 0 ||
        body_str(c, b, "account", 128, &ask.account) < 0 ||
        body_str(c, b, "qos", 128, &ask.qos) < 0) {
        json_decref(b);
        return 0;
    }
    if (live_enter(c) < 0) {
        json_decref(b);
        return 0;
    }
    rc = view_preflight(&c->vc, name, &ask, NULL, &rep, &err);
    live_leave(c);
    if (rc < 0) {
        json_decref(b);
        preflight_report_release(&rep);
        return fail(c, &err);
    }
    /* an action on a cluster: audited by name (not a cluster_* event,
     * so the governance chain of the cluster is not touched) */
    d = json_object();
    jx_set(d, "ok", json_boolean(rep.ok));
    jx_set(d, "gpus", json_integer(ask.gpus));
    jx_set(d, "nodes", json_integer(ask.nodes));
    auth_record_action(c->st, c->who.user, "preflight_run", name, d, NULL);
    json_decref(d);
    doc = preflight_report_json(name, &rep);
    preflight_report_release(&rep);
    json_decref(b);
    {
        struct view_secrets sec;
        if (view_secrets_load(&c->vc, &sec, &err) < 0) {
            json_decref(doc);
            return fail(c, &err);
        }
        view_redact(doc, &sec);
        view_secrets_release(&sec);
    }
    return reply(c, doc, &err);
}

/* ---- jobs, placement, capacity ---- */

static int r_jobs(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct view_job_filter f = {NULL, NULL, NULL, NULL, 100, 0};
    char *since = NULL;
    const char *s;
    json_t *doc;
    f.cluster = http_request_query(c->req, "cluster");
    f.model = http_request_query(c->req, "model");
    f.state = http_request_query(c->req, "state");
    if (q_int(c, "limit", 1, 1000, &f.limit) < 0 ||
        q_int(c, "offset", 0, 1000000000, &f.offset) < 0)
        return 0;
    if ((s = http_request_query(c->req, "since"))) {
        if (view_parse_since(s, &since, &err) < 0)
            return fail(c, &err);
        f.since = since;
    }
    doc = view_jobs(&c->vc, &f, &err);
    free(since);
    return reply(c, doc, &err);
}

static int r_job(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c,
                 view_job(&c->vc, http_request_query(c->req, "cluster"),
                          http_request_param(c->req, "id"), &err),
                 &err);
}

static int r_place(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct view_place_ask ask = {0, 0, 1, NULL, 0, NULL};
    long long g = 0, n = 1, cp = 0;
    int st = 0;
    json_t *doc;
    if (q_int(c, "gpus", 0, 1000000, &g) < 0 ||
        q_int(c, "nodes", 1, 1000000, &n) < 0 ||
        q_int(c, "cpus", 0, 100000000, &cp) < 0 ||
        q_bool(c, "refresh", &ask.refresh) < 0)
        return 0;
    ask.gpus = (int)g;
    ask.nodes = (int)n;
    ask.cpus = (int)cp;
    ask.provider = http_request_query(c->req, "provider");
    ask.partition = http_request_query(c->req, "partition");
    if (ask.refresh && live_enter(c) < 0)
        return 0;
    doc = view_place(&c->vc, &ask, &st, &err);
    if (ask.refresh)
        live_leave(c);
    if (doc)
        jx_set(doc, "status",
               jx_str(st == 0   ? "chosen"
                      : st == 6 ? "no_active_cluster"
                                : "no_fit"));
    return reply(c, doc, &err);
}

static int r_capacity(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    int refresh = 0;
    json_t *doc;
    if (q_bool(c, "refresh", &refresh) < 0 || (refresh && live_enter(c) < 0))
        return 0;
    doc = view_capacity(&c->vc, refresh, &err);
    if (refresh)
        live_leave(c);
    return reply(c, doc, &err);
}

/* ---- models, costs, carbon, audit ---- */

static int r_models(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c, view_models(&c->vc, &err), &err);
}

static int r_model(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    long long v = 0;
    if (q_int(c, "version", 1, 1000000000, &v) < 0)
        return 0;
    return reply(
        c, view_model(&c->vc, http_request_param(c->req, "name"), v, &err),
        &err);
}

static int r_costs(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c, view_costs(&c->vc, &err), &err);
}

static int r_carbon(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c,
                 view_carbon(&c->vc, http_request_query(c->req, "model"), &err),
                 &err);
}

static int r_audit(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct view_audit_filter f = {NULL, NULL, 100};
    char *since = NULL;
    const char *s;
    json_t *doc;
    if (q_int(c, "limit", 1, 10000, &f.limit) < 0)
        return 0;
    f.target = http_request_query(c->req, "cluster");
    if ((s = http_request_query(c->req, "since"))) {
        if (view_parse_since(s, &since, &err) < 0)
            return fail(c, &err);
        f.since = since;
    }
    doc = view_audit(&c->vc, &f, &err);
    free(since);
    return reply(c, doc, &err);
}

/* ---- the reference's facility routes ---- */

static int r_overview(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c,
                 view_facility_overview(
                     &c->vc, http_request_query(c->req, "cluster"), &err),
                 &err);
}

static int r_fqueue(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c,
                 view_facility_queue(
                     &c->vc, http_request_query(c->req, "cluster"), &err),
                 &err);
}

static int r_fjob(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c,
                 view_facility_job(&c->vc,
                                   http_request_query(c->req, "cluster"),
                                   http_request_param(c->req, "id"), &err),
                 &err);
}

static int r_fleet(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c, view_facility_fleet(&c->vc, &err), &err);
}

/* approve / reject: the CLI's gov_approve / gov_reject, actor = user */
static int decide(struct call *c, int approve)
{
    exa_error_t err = EXA_ERROR_INIT;
    const char *name = http_request_param(c->req, "name");
    const char *reason = NULL, *want_key = NULL, *want_host = NULL;
    const struct cluster_row *seen = NULL;
    struct fleet f = {NULL, 0};
    struct gov_result res;
    json_t *b = body_object(c), *d;
    int rc;
    if (!b)
        return 0;
    if (body_str(c, b, "reason", REASON_MAX, &reason) < 0) {
        json_decref(b);
        return 0;
    }
    if (body_str(c, b, "key_fingerprint", 128, &want_key) < 0 ||
        body_str(c, b, "host_key_fingerprint", 128, &want_host) < 0) {
        json_decref(b);
        return 0;
    }
    if (cluster_name_check(name, "the path", &err) < 0) {
        json_decref(b);
        return fail(c, &err);
    }
    /*
     * Bound to what the caller was shown, as the CLI's prompt: given
     * fingerprints must be the row's now, and the row read here is the
     * one gov_approve/gov_reject compare at the change (seen).
     */
    if (want_key || want_host) {
        const struct fleet_cluster *fc;
        if (fleet_load(c->st, c->a->regpath, &f, &err) < 0) {
            json_decref(b);
            return fail(c, &err);
        }
        fc = fleet_find(&f, name);
        if (fc && fc->in_db &&
            ((want_key && (!fc->row.key_fingerprint ||
                           strcmp(want_key, fc->row.key_fingerprint))) ||
             (want_host &&
              (!fc->row.host_key_fingerprint ||
               strcmp(want_host, fc->row.host_key_fingerprint))))) {
            http_error_json(
                c->resp, 409, "conflict",
                "cluster '%s' changed its connection identity "
                "since it was shown (key %s, host key %s now); "
                "review it again",
                name,
                fc->row.key_fingerprint ? fc->row.key_fingerprint : "none",
                fc->row.host_key_fingerprint ? fc->row.host_key_fingerprint
                                             : "none");
            fleet_release(&f);
            json_decref(b);
            return 0;
        }
        if (fc && fc->in_db)
            seen = &fc->row;
    }
    /* the reason of an approve goes into its audit event, as MCP's */
    rc = approve ? gov_approve_reason(c->st, c->a->regpath, name, reason, seen,
                                      c->who.user, &res, &err)
                 : gov_reject(c->st, c->a->regpath, name, reason, seen,
                              c->who.user, &res, &err);
    fleet_release(&f);
    if (rc < 0) {
        json_decref(b);
        return fail(c, &err);
    }
    d = json_object();
    jx_set(d, "name", jx_str(name));
    jx_set(d, "state", jx_str(cluster_state_name(res.to)));
    jx_set(d, "reason", jx_str(reason));
    jx_set(d, "from_state", jx_str(cluster_state_name(res.from)));
    jx_set(d, "approved_by", jx_str(c->who.user));
    json_decref(b);
    return reply(c, d, &err);
}

static int r_approve(struct call *c)
{
    return decide(c, 1);
}

static int r_reject(struct call *c)
{
    return decide(c, 0);
}

/* ---- sessions ---- */

static json_t *who_json(const struct call *c, const char *csrf)
{
    json_t *d = json_object();
    jx_set(d, "user", jx_str(c->who.user));
    jx_set(d, "role", jx_str(auth_role_name(c->who.role)));
    jx_set(d, "csrf", csrf ? jx_str(csrf) : NULL);
    return d;
}

/*
 * Login CSRF: a page on another site could post a form (text/plain, no
 * preflight) that logs the browser in with the attacker's token. So a
 * login needs Content-Type application/json (which a cross-site form
 * cannot send without CORS) and, when the browser sends Origin
 * (RFC 6454), "http(s)://" + this request's Host. 0 to go on, -1 after
 * answering 415 or 403.
 */
static int login_origin_ok(struct call *c)
{
    const char *ct = http_request_header(c->req, "Content-Type");
    const char *origin = http_request_header(c->req, "Origin");
    const char *host = http_request_header(c->req, "Host");
    const char *rest = NULL;
    if (!ct || strncasecmp(ct, "application/json", 16) ||
        (ct[16] && ct[16] != ';' && ct[16] != ' ')) {
        http_error_json(c->resp, 415, "unsupported_media_type",
                        "login expects Content-Type application/json");
        return -1;
    }
    if (!origin)
        return 0;
    if (!strncasecmp(origin, "https://", 8))
        rest = origin + 8;
    else if (!strncasecmp(origin, "http://", 7))
        rest = origin + 7;
    if (!rest || !host || strcasecmp(rest, host)) {
        deny(c, 403, "forbidden", NULL,
             "login from another origin: Origin must be this server's");
        return -1;
    }
    return 0;
}

static int r_login(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    const char *tok = NULL;
    struct session s;
    char cookie[160];
    json_t *b;
    if (login_origin_ok(c) < 0 || !(b = body_object(c)))
        return 0;
    if (body_str(c, b, "token", 256, &tok) < 0) {
        json_decref(b);
        return 0;
    }
    if (auth_verify(c->st, tok, &c->who, &err) < 0) {
        json_decref(b);
        if (err.code == EXA_ECONFIG)
            return fail(c, &err);
        refuse_auth(c, c->who.user, err.text);
        return 0;
    }
    json_decref(b);
    if (session_new(c->a, c->who.token_id, &s) < 0) {
        http_error_json(c->resp, 500, "internal", "no randomness");
        return 0;
    }
    {
        /* a login is an audit event (never the session id) */
        char target[48];
        json_t *d = json_object();
        snprintf(target, sizeof(target), "token:%lld", c->who.token_id);
        jx_set(d, "remote", jx_str(c->client));
        auth_record_action(c->st, c->who.user, "login", target, d, NULL);
        json_decref(d);
    }
    snprintf(cookie, sizeof(cookie),
             "exa_session=%s; HttpOnly; SameSite=Strict; Path=/; Max-Age=%d%s",
             s.id, API_SESSION_TTL_S,
             c->a->cfg.secure_cookies || c->req->tls ? "; Secure" : "");
    http_response_header(c->resp, "Set-Cookie", cookie);
    dl_crypto()->OPENSSL_cleanse(cookie, sizeof(cookie));
    {
        json_t *d = who_json(c, s.csrf);
        dl_crypto()->OPENSSL_cleanse(&s, sizeof(s));
        return reply(c, d, &err);
    }
}

static int r_logout(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    char cookie[ID_LEN + 8], h[160];
    if (c->via_cookie &&
        http_request_cookie(c->req, "exa_session", cookie, sizeof(cookie)))
        session_drop(c->a, cookie);
    snprintf(h, sizeof(h),
             "exa_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0%s",
             c->a->cfg.secure_cookies || c->req->tls ? "; Secure" : "");
    http_response_header(c->resp, "Set-Cookie", h);
    {
        json_t *d = json_object();
        jx_set(d, "ok", json_true());
        return reply(c, d, &err);
    }
}

static int r_whoami(struct call *c)
{
    exa_error_t err = EXA_ERROR_INIT;
    return reply(c, who_json(c, c->via_cookie ? c->csrf : NULL), &err);
}

static int r_openapi(struct call *c)
{
    free(c->resp->body);
    c->resp->body =
        xstrndup((const char *)api_openapi_json, (size_t)api_openapi_json_len);
    c->resp->len = (size_t)api_openapi_json_len;
    c->resp->status = 200;
    c->resp->content_type = "application/json";
    return 0;
}

/* ---- registration ---- */

#define V AUTH_ROLE_VIEWER
#define O AUTH_ROLE_OPERATOR
#define A AUTH_ROLE_ADMIN
static const struct api_route routes[] = {
    {"POST", "/api/v1/auth/login", AUTH_ROLE_NONE, r_login, NULL},
    {"POST", "/api/v1/auth/logout", V, r_logout, NULL},
    {"GET", "/api/v1/auth/whoami", V, r_whoami, NULL},
    {"GET", "/api/v1/openapi.json", V, r_openapi, NULL},
    {"GET", "/api/v1/clusters", V, r_clusters, NULL},
    {"GET", "/api/v1/clusters/{name}", V, r_cluster, NULL},
    {"GET", "/api/v1/clusters/{name}/nodes", V, r_nodes, NULL},
    {"GET", "/api/v1/clusters/{name}/queue", V, r_queue, NULL},
    {"POST", "/api/v1/clusters/{name}/preflight", O, r_preflight, NULL},
    {"GET", "/api/v1/jobs", V, r_jobs, NULL},
    {"GET", "/api/v1/jobs/{id}", V, r_job, NULL},
    {"GET", "/api/v1/place", O, r_place, NULL},
    {"GET", "/api/v1/capacity", V, r_capacity, NULL},
    {"GET", "/api/v1/models", V, r_models, NULL},
    {"GET", "/api/v1/models/{name}", V, r_model, NULL},
    {"GET", "/api/v1/costs", V, r_costs, NULL},
    {"GET", "/api/v1/carbon", V, r_carbon, NULL},
    {"GET", "/api/v1/audit", A, r_audit, NULL},
    {"GET", "/api/v1/facility/overview", V, r_overview, NULL},
    {"GET", "/api/v1/facility/queue", V, r_fqueue, NULL},
    {"GET", "/api/v1/facility/fleet", V, r_fleet, NULL},
    {"GET", "/api/v1/facility/job/{id}", V, r_fjob, NULL},
    {"POST", "/api/v1/facility/fleet/{name}/approve", A, r_approve, NULL},
    {"POST", "/api/v1/facility/fleet/{name}/reject", A, r_reject, NULL},
};
#undef V
#undef O
#undef A
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

struct api *api_register(struct http_server *srv, const struct api_config *cfg)
{
    struct api *a = xcalloc(1, sizeof(*a) + NROUTES * sizeof(struct api_route));
    struct api_route *own = (struct api_route *)(a + 1);
    a->cfg = *cfg;
    a->dbpath = cfg->dbpath ? xstrdup(cfg->dbpath) : NULL;
    /* resolved now, as the CLI does, so approve/reject reconcile
     * clusters.yaml first (gov_approve skips that for a NULL path) */
    a->regpath =
        cfg->regpath ? xstrdup(cfg->regpath) : registry_default_path(NULL);
    a->cfg.dbpath = a->dbpath;
    a->cfg.trusted_proxy =
        cfg->trusted_proxy ? xstrdup(cfg->trusted_proxy) : NULL;
    a->cfg.regpath = a->regpath;
    pthread_key_create(&a->key, store_destroy);
    pthread_mutex_init(&a->mu, NULL);
    a->sessions = xcalloc(SESSION_MAX, sizeof(*a->sessions));
    if (!(a->thr = cfg->throttle))
        a->thr = a->own_thr = auth_throttle_new(
            cfg->fail_limit, API_FAIL_WINDOW_S, 0, API_FAIL_MAX_DELAY_S);
    for (size_t i = 0; i < NROUTES; i++) {
        own[i] = routes[i];
        own[i].a = a;
        http_route(srv, own[i].method, own[i].path, entry, &own[i]);
    }
    return a;
}

void api_free(struct api *a)
{
    store_t *st;
    if (!a)
        return;
    /* this thread's handle (the fuzzer's and tests' thread) */
    if ((st = pthread_getspecific(a->key))) {
        store_close(st);
        pthread_setspecific(a->key, NULL);
    }
    pthread_key_delete(a->key);
    pthread_mutex_destroy(&a->mu);
    dl_crypto()->OPENSSL_cleanse(a->sessions,
                                 SESSION_MAX * sizeof(*a->sessions));
    free(a->sessions);
    auth_throttle_free(a->own_thr);
    free(a->dbpath);
    free(a->regpath);
    free((char *)a->cfg.trusted_proxy);
    free(a);
}
