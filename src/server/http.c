/*
 * http.c - the router behind `exa serve`, on libmicrohttpd.
 *
 * libmicrohttpd calls the access handler several times per request: once
 * with the headers, then with each piece of the body, then once more with
 * no data, when the answer is due. The per-connection state keeps the raw
 * request URI (from the URI log callback, before libmicrohttpd decodes
 * it, so the query string and path escapes are parsed here) and the body
 * (capped); the route is looked up once the request is complete, so GET
 * and body-carrying routes share one path (http_dispatch, a pure
 * function). Handlers produce a malloc'ed body that libmicrohttpd frees
 * after sending (no copy).
 */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "server/dl_mhd.h"
#include "libutil/xalloc.h"

struct route {
    char *method, *path;
    char **segs; /* path split at '/', "{x}" kept as is */
    size_t nsegs;
    http_handler_f fn;
    void *ctx;
};

struct http_server {
    struct route *routes;
    size_t nroutes, alloc;
    struct MHD_Daemon *d;
    int port;
    int loopback;
    int tls;
    struct http_options opt;
    char *cert, *key;
};

struct conn {
    char *uri; /* the raw request target */
    struct strbuf body;
    int started;
    int too_large;
};

struct http_server *http_server_new(void)
{
    return xcalloc(1, sizeof(struct http_server));
}

/* Split a path "/a/b" into segments "a", "b" (raw). */
static void split_path(const char *path, char ***segs, size_t *n)
{
    const char *p = path;
    *segs = NULL;
    *n = 0;
    if (*p == '/')
        p++;
    for (;;) {
        const char *q = strchr(p, '/');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        *segs = xrealloc(*segs, (*n + 1) * sizeof(**segs));
        (*segs)[(*n)++] = xstrndup(p, len);
        if (!q)
            break;
        p = q + 1;
    }
}

static void free_segs(char **segs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(segs[i]);
    free(segs);
}

void http_route(struct http_server *srv, const char *method, const char *path,
                http_handler_f fn, void *ctx)
{
    struct route *r;
    ALLOC_GROW(srv->routes, srv->nroutes + 1, srv->alloc);
    r = &srv->routes[srv->nroutes++];
    r->method = xstrdup(method);
    r->path = xstrdup(path);
    split_path(path, &r->segs, &r->nsegs);
    r->fn = fn;
    r->ctx = ctx;
}

/* ---- request accessors ---- */

const char *http_request_header(const struct http_request *req,
                                const char *name)
{
    if (req->header_fn)
        return req->header_fn(req->header_cls, name);
    if (!req->conn)
        return NULL;
    return dl_mhd.lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *http_request_param(const struct http_request *req, const char *name)
{
    for (size_t i = 0; i < req->nparams; i++)
        if (!strcmp(req->params[i].name, name))
            return req->params[i].value;
    return NULL;
}

const char *http_request_query(const struct http_request *req, const char *name)
{
    for (size_t i = 0; i < req->nq; i++)
        if (!strcmp(req->q[i].name, name))
            return req->q[i].value;
    return NULL;
}

const char *http_request_cookie(const struct http_request *req,
                                const char *name, char *buf, size_t n)
{
    const char *h = http_request_header(req, "Cookie");
    size_t nl = strlen(name);
    while (h && *h) {
        const char *end = strchr(h, ';'), *eq;
        size_t len;
        while (*h == ' ' || *h == '\t')
            h++;
        len = end ? (size_t)(end - h) : strlen(h);
        eq = memchr(h, '=', len);
        if (eq && (size_t)(eq - h) == nl && !memcmp(h, name, nl)) {
            size_t vl = len - nl - 1;
            const char *v = eq + 1;
            if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
                v++;
                vl -= 2;
            }
            if (vl + 1 > n)
                return NULL;
            memcpy(buf, v, vl);
            buf[vl] = '\0';
            return buf;
        }
        h = end ? end + 1 : NULL;
    }
    return NULL;
}

/* ---- responses ---- */

void http_response_header(struct http_response *resp, const char *name,
                          const char *value)
{
    struct http_header *h;
    ALLOC_GROW(resp->headers, resp->nheaders + 1, resp->headers_alloc);
    h = &resp->headers[resp->nheaders++];
    h->name = xstrdup(name);
    h->value = xstrdup(value);
}

static void free_headers(struct http_response *resp)
{
    for (size_t i = 0; i < resp->nheaders; i++) {
        free(resp->headers[i].name);
        free(resp->headers[i].value);
    }
    free(resp->headers);
    resp->headers = NULL;
    resp->nheaders = resp->headers_alloc = 0;
}

void http_response_release(struct http_response *resp)
{
    free(resp->body);
    resp->body = NULL;
    if (resp->read && resp->read_free)
        resp->read_free(resp->read_cls);
    resp->read = NULL;
    free_headers(resp);
}

void http_error_json(struct http_response *resp, int status, const char *code,
                     const char *fmt, ...)
{
    json_t *d = json_object(), *e = json_object();
    struct strbuf msg = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&msg, fmt, ap);
    va_end(ap);
    jx_set(e, "code", jx_str(code));
    jx_set(e, "message", jx_str(msg.buf));
    jx_set(d, "error", e);
    free(resp->body);
    resp->body = json_dumps(d, JSON_COMPACT);
    resp->len = strlen(resp->body);
    resp->status = status;
    resp->content_type = "application/json";
    json_decref(d);
    strbuf_release(&msg);
}

/* An error in the shape of the path: JSON under /api/, text elsewhere. */
static void router_error(struct http_response *resp, const char *path,
                         int status, const char *code, const char *text)
{
    http_response_header(resp, "Cache-Control", "no-store");
    http_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (!strncmp(path, "/api/", 5) || !strcmp(path, "/api")) {
        http_error_json(resp, status, code, "%s", text);
        return;
    }
    free(resp->body);
    resp->body = xstrfmt("%s\n", text);
    resp->len = strlen(resp->body);
    resp->status = status;
    resp->content_type = NULL;
}

/* ---- parsing ---- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static char *decode(const char *s, size_t len, int plus)
{
    char *out = xmalloc(len + 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\0')
            goto bad;
        if (c == '%') {
            int h, l;
            if (i + 2 >= len)
                goto bad;
            h = hexval(s[i + 1]);
            l = hexval(s[i + 2]);
            if (h < 0 || l < 0 || (h == 0 && l == 0))
                goto bad;
            out[o++] = (char)(h << 4 | l);
            i += 2;
        } else if (c == '+' && plus) {
            out[o++] = ' ';
        } else {
            out[o++] = c;
        }
    }
    out[o] = '\0';
    return out;
bad:
    free(out);
    return NULL;
}

char *http_pct_decode(const char *s, size_t len)
{
    return decode(s, len, 0);
}

void http_kv_free(struct http_kv *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].value);
    }
    free(v);
}

int http_query_parse(const char *query, struct http_kv **out, size_t *n)
{
    const char *p = query ? query : "";
    struct http_kv *v = NULL;
    size_t nr = 0;
    int rc = -1;
    *out = NULL;
    *n = 0;
    while (*p) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        char *name, *value;
        if (len) {
            if (nr >= HTTP_MAX_QUERY) {
                rc = -2;
                goto bad;
            }
            name = decode(p, eq ? (size_t)(eq - p) : len, 1);
            value = eq ? decode(eq + 1, len - (size_t)(eq - p) - 1, 1)
                       : xstrdup("");
            if (!name || !value) {
                free(name);
                free(value);
                goto bad;
            }
            v = xrealloc(v, (nr + 1) * sizeof(*v));
            v[nr].name = name;
            v[nr].value = value;
            nr++;
        }
        if (!amp)
            break;
        p = amp + 1;
    }
    *out = v;
    *n = nr;
    return 0;
bad:
    http_kv_free(v, nr);
    return rc;
}

void http_request_release(struct http_request *req)
{
    for (size_t i = 0; i < req->nparams; i++) {
        free(req->params[i].name);
        free(req->params[i].value);
    }
    req->nparams = 0;
    http_kv_free(req->q, req->nq);
    req->q = NULL;
    req->nq = 0;
}

/* Match decoded segments against r; fill req->params. 1 on a match. */
static int match(const struct route *r, char **segs, size_t n,
                 struct http_request *req)
{
    size_t np = 0;
    if (r->nsegs != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = r->segs[i];
        size_t pl = strlen(p);
        if (pl >= 2 && p[0] == '{' && p[pl - 1] == '}') {
            if (!*segs[i] || np >= HTTP_MAX_PARAMS)
                return 0;
            np++;
        } else if (strcmp(p, segs[i])) {
            return 0;
        }
    }
    for (size_t i = 0; i < req->nparams; i++) {
        free(req->params[i].name);
        free(req->params[i].value);
    }
    req->nparams = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = r->segs[i];
        size_t pl = strlen(p);
        if (pl >= 2 && p[0] == '{' && p[pl - 1] == '}') {
            req->params[req->nparams].name = xstrndup(p + 1, pl - 2);
            req->params[req->nparams].value = xstrdup(segs[i]);
            req->nparams++;
        }
    }
    return 1;
}

int http_dispatch(struct http_server *srv, struct http_request *req,
                  struct http_response *resp)
{
    char **raw = NULL, **segs = NULL;
    size_t n = 0;
    int path_known = 0;
    const int head = !strcmp(req->method, "HEAD");
    const char *path = req->path ? req->path : "";

    if (!resp->status)
        resp->status = 200;
    if (path[0] != '/') {
        router_error(resp, path, 400, "bad_request", "malformed path");
        return 0;
    }
    split_path(path, &raw, &n);
    segs = xcalloc(n, sizeof(*segs));
    for (size_t i = 0; i < n; i++) {
        segs[i] = decode(raw[i], strlen(raw[i]), 0);
        if (!segs[i] || !strcmp(segs[i], ".") || !strcmp(segs[i], "..")) {
            router_error(resp, path, 400, "bad_request", "malformed path");
            goto out;
        }
    }
    switch (http_query_parse(req->query, &req->q, &req->nq)) {
    case 0:
        break;
    case -2: {
        char msg[64];
        snprintf(msg, sizeof(msg), "too many query parameters: at most %d",
                 HTTP_MAX_QUERY);
        router_error(resp, path, 400, "bad_request", msg);
        goto out;
    }
    default:
        router_error(resp, path, 400, "bad_request", "malformed query string");
        goto out;
    }
    for (size_t i = 0; i < srv->nroutes; i++) {
        struct route *r = &srv->routes[i];
        if (!match(r, segs, n, req))
            continue;
        path_known = 1;
        if (strcmp(r->method, req->method) &&
            !(head && !strcmp(r->method, "GET")))
            continue;
        if (r->fn(r->ctx, req, resp) < 0) {
            http_response_release(resp);
            memset(resp, 0, sizeof(*resp));
            router_error(resp, path, 500, "internal", "internal error");
        }
        goto out;
    }
    if (path_known) {
        /* RFC 9110 §15.5.6: a 405 lists the methods the path has */
        struct strbuf allow = STRBUF_INIT;
        for (size_t i = 0; i < srv->nroutes; i++) {
            struct route *r = &srv->routes[i];
            if (!match(r, segs, n, req) ||
                strstr(allow.buf, r->method)) /* each once */
                continue;
            strbuf_addf(&allow, "%s%s", allow.len ? ", " : "", r->method);
            if (!strcmp(r->method, "GET") && !strstr(allow.buf, "HEAD"))
                strbuf_addstr(&allow, ", HEAD");
        }
        router_error(resp, path, 405, "method_not_allowed",
                     "method not allowed");
        if (allow.len)
            http_response_header(resp, "Allow", allow.buf);
        strbuf_release(&allow);
    } else
        router_error(resp, path, 404, "not_found", "not found");
out:
    free_segs(raw, n);
    for (size_t i = 0; i < n; i++)
        free(segs[i]);
    free(segs);
    return 0;
}

/* ---- libmicrohttpd glue ---- */

static void add_headers(struct MHD_Response *r,
                        const struct http_response *resp)
{
    for (size_t i = 0; resp && i < resp->nheaders; i++)
        dl_mhd.add_response_header(r, resp->headers[i].name,
                                   resp->headers[i].value);
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status,
                                 const char *ctype, char *body, size_t len,
                                 const struct http_response *resp)
{
    struct MHD_Response *r =
        dl_mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result rc;
    dl_mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                               ctype ? ctype : "text/plain; charset=utf-8");
    add_headers(r, resp);
    rc = dl_mhd.queue_response(c, status, r);
    dl_mhd.destroy_response(r);
    return rc;
}

struct reader {
    size_t (*read)(void *cls, size_t pos, char *buf, size_t max);
    void (*read_free)(void *cls);
    void *cls;
};

static ssize_t reader_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct reader *r = cls;
    size_t n = r->read(r->cls, (size_t)pos, buf, max);
    return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void reader_free(void *cls)
{
    struct reader *r = cls;
    if (r->read_free)
        r->read_free(r->cls);
    free(r);
}

static enum MHD_Result send_reader(struct MHD_Connection *c, unsigned status,
                                   const char *ctype,
                                   const struct http_response *resp)
{
    struct reader *r = xmalloc(sizeof(*r));
    struct MHD_Response *mr;
    enum MHD_Result rc;
    r->read = resp->read;
    r->read_free = resp->read_free;
    r->cls = resp->read_cls;
    mr = dl_mhd.create_response_from_callback(resp->len, 64 * 1024, reader_cb,
                                              r, reader_free);
    if (!mr) {
        reader_free(r);
        return MHD_NO;
    }
    dl_mhd.add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                               ctype ? ctype : "text/plain; charset=utf-8");
    add_headers(mr, resp);
    rc = dl_mhd.queue_response(c, status, mr);
    dl_mhd.destroy_response(mr);
    return rc;
}

static void peer_address(struct MHD_Connection *c, char *buf, size_t n)
{
    const union MHD_ConnectionInfo *ci =
        dl_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buf[0] = '\0';
    if (!ci || !ci->client_addr)
        return;
    if (ci->client_addr->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)ci->client_addr;
        inet_ntop(AF_INET, &a->sin_addr, buf, (socklen_t)n);
    } else if (ci->client_addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)ci->client_addr;
        inet_ntop(AF_INET6, &a->sin6_addr, buf, (socklen_t)n);
    }
}

static enum MHD_Result answer(struct http_server *srv, struct MHD_Connection *c,
                              const char *method, struct conn *cs)
{
    struct http_request req;
    struct http_response resp;
    char remote[INET6_ADDRSTRLEN + 1], *path;
    const char *uri = cs->uri ? cs->uri : "/", *qm;
    enum MHD_Result rc;

    memset(&req, 0, sizeof(req));
    memset(&resp, 0, sizeof(resp));
    resp.status = 200;
    qm = strchr(uri, '?');
    path = qm ? xstrndup(uri, (size_t)(qm - uri)) : xstrdup(uri);
    peer_address(c, remote, sizeof(remote));
    req.method = method;
    req.path = path;
    req.query = qm ? qm + 1 : "";
    req.body = cs->body.buf;
    req.body_len = cs->body.len;
    req.conn = c;
    req.remote = remote;
    req.tls = srv->tls;
    if (cs->too_large)
        router_error(&resp, path, 413, "too_large", "request body too large");
    else
        http_dispatch(srv, &req, &resp);
    if (srv->tls) /* RFC 6797: this host speaks HTTPS only */
        http_response_header(&resp, "Strict-Transport-Security",
                             "max-age=31536000");
    http_request_release(&req);
    free(path);
    if (resp.read) {
        rc = send_reader(c, (unsigned)resp.status, resp.content_type, &resp);
        free_headers(&resp);
        return rc;
    }
    if (!resp.body)
        resp.body = xstrdup("");
    /* HEAD: libmicrohttpd sends the headers GET would have, with the
     * Content-Length of the body, and no body (RFC 9110 §9.3.2) */
    rc = send_text(c, (unsigned)resp.status, resp.content_type, resp.body,
                   resp.len, &resp);
    free_headers(&resp);
    return rc;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct conn *cs = xcalloc(1, sizeof(*cs));
    (void)cls, (void)c;
    cs->uri = xstrdup(uri ? uri : "/");
    strbuf_init(&cs->body, 0);
    return cs;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct http_server *srv = cls;
    struct conn *cs = *con_cls;
    size_t max = srv->opt.max_body ? srv->opt.max_body : HTTP_MAX_BODY;
    (void)version, (void)url;
    if (!cs) { /* no URI callback ran (should not happen) */
        cs = on_uri(NULL, url, c);
        *con_cls = cs;
    }
    if (!cs->started) {
        cs->started = 1;
        return MHD_YES;
    }
    if (*upload_size) {
        if (cs->body.len + *upload_size > max)
            cs->too_large = 1;
        else
            strbuf_add(&cs->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    return answer(srv, c, method, cs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct conn *cs = *con_cls;
    (void)cls, (void)c, (void)toe;
    if (cs) {
        strbuf_release(&cs->body);
        free(cs->uri);
        free(cs);
        *con_cls = NULL;
    }
}

void http_server_options(struct http_server *srv, const struct http_options *o)
{
    free(srv->cert);
    free(srv->key);
    srv->opt = *o;
    srv->cert = o->tls_cert_pem ? xstrdup(o->tls_cert_pem) : NULL;
    srv->key = o->tls_key_pem ? xstrdup(o->tls_key_pem) : NULL;
    srv->opt.tls_cert_pem = srv->cert;
    srv->opt.tls_key_pem = srv->key;
}

int http_server_listen(struct http_server *srv, const char *listen,
                       exa_error_t *err)
{
    struct addrinfo hints, *res = NULL;
    char host[256], port[16];
    const char *colon = strrchr(listen, ':');
    const char *h = listen;
    size_t hl;
    const union MHD_DaemonInfo *info;
    /* a thread per connection: a handler that waits on a cluster (ssh)
     * holds up only its own connection, never others a pool thread would
     * also serve; MHD_USE_AUTO: poll, not select(), which stops at
     * FD_SETSIZE (1024) descriptors whatever the connection limit */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO |
                     MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    unsigned timeout = srv->opt.timeout_s ? srv->opt.timeout_s : 30;
    unsigned conns = srv->opt.max_conns ? srv->opt.max_conns : 1024;
    size_t memlim = srv->opt.max_header ? srv->opt.max_header : 32 * 1024;
    /* one address (a slowloris) may hold a quarter of the connections */
    unsigned per_ip =
        srv->opt.max_conns_per_ip ? srv->opt.max_conns_per_ip : (conns + 3) / 4;
    int gai;

    if (!colon || !colon[1] || strlen(colon + 1) >= sizeof(port))
        return exa_err(err, EXA_EUSAGE,
                       "invalid listen address '%s': expected HOST:PORT",
                       listen);
    hl = (size_t)(colon - listen);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= sizeof(host))
        return exa_err(err, EXA_EUSAGE,
                       "invalid listen address '%s': expected HOST:PORT",
                       listen);
    memcpy(host, h, hl);
    host[hl] = '\0';
    memcpy(port, colon + 1, strlen(colon + 1) + 1);
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9')
            return exa_err(err, EXA_EUSAGE,
                           "invalid port '%s' in listen address", port);
    if ((srv->cert != NULL) != (srv->key != NULL))
        return exa_err(err, EXA_EUSAGE,
                       "TLS needs both a certificate and its key");
    if (dl_mhd_load(err) < 0)
        return -1;
    if (srv->cert) {
        if (dl_mhd.is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
            return exa_err(err, EXA_ECONFIG,
                           "this libmicrohttpd was built without TLS");
        flags |= MHD_USE_TLS;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0 || !res)
        return exa_err(err, EXA_EUSAGE,
                       "cannot resolve listen address '%s': %s", listen,
                       gai_strerror(gai));
    if (res->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (res->ai_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)res->ai_addr;
        srv->loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    } else if (res->ai_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)res->ai_addr;
        srv->loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
    }
    errno = 0;
    if (srv->cert)
        srv->d = dl_mhd.start_daemon(
            flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR,
            res->ai_addr, MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
            MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
            MHD_OPTION_CONNECTION_TIMEOUT, timeout, MHD_OPTION_CONNECTION_LIMIT,
            conns, MHD_OPTION_CONNECTION_MEMORY_LIMIT, memlim,
            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
            MHD_OPTION_HTTPS_MEM_CERT, srv->cert, MHD_OPTION_HTTPS_MEM_KEY,
            srv->key,
            /* TLS 1.2 and 1.3 only (GnuTLS priority strings) */
            MHD_OPTION_HTTPS_PRIORITIES,
            "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2", MHD_OPTION_END);
    else
        srv->d = dl_mhd.start_daemon(
            flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR,
            res->ai_addr, MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
            MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
            MHD_OPTION_CONNECTION_TIMEOUT, timeout, MHD_OPTION_CONNECTION_LIMIT,
            conns, MHD_OPTION_CONNECTION_MEMORY_LIMIT, memlim,
            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, MHD_OPTION_END);
    freeaddrinfo(res);
    if (!srv->d)
        return exa_err(err, EXA_ECONFIG, "cannot listen on '%s': %s", listen,
                       errno       ? strerror(errno)
                       : srv->cert ? "bind failed or the TLS certificate "
                                     "and key were refused"
                                   : "bind failed");
    srv->tls = srv->cert != NULL;
    info = dl_mhd.get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : (int)strtol(port, NULL, 10);
    return 0;
}

int http_server_port(const struct http_server *srv)
{
    return srv->port;
}

int http_server_is_loopback(const struct http_server *srv)
{
    return srv->loopback;
}

int http_server_is_tls(const struct http_server *srv)
{
    return srv->tls;
}

void http_server_free(struct http_server *srv)
{
    if (!srv)
        return;
    if (srv->d)
        dl_mhd.stop_daemon(srv->d);
    for (size_t i = 0; i < srv->nroutes; i++) {
        free(srv->routes[i].method);
        free(srv->routes[i].path);
        free_segs(srv->routes[i].segs, srv->routes[i].nsegs);
    }
    free(srv->routes);
    free(srv->cert);
    if (srv->key) {
        memset(srv->key, 0, strlen(srv->key));
        free(srv->key);
    }
    free(srv);
}
