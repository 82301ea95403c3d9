/*
 * http.c - the router behind `exa serve`, on libmicrohttpd.
 *
 * libmicrohttpd calls the access handler several times per request: once
 * with the headers, then with each piece of the body, then once more with
 * no data, when the answer is due. The per-connection state keeps the
 * body (capped), and the route is looked up once the request is complete,
 * so GET and body-carrying routes share one path. Handlers produce a
 * malloc'ed body that libmicrohttpd frees after sending (no copy).
 */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

struct route {
    char *method, *path;
    http_handler_f fn;
    void *ctx;
};

struct http_server {
    struct route *routes;
    size_t nroutes, alloc;
    struct MHD_Daemon *d;
    int port;
    int loopback;
};

struct conn {
    struct strbuf body;
    int too_large;
};

struct http_server *http_server_new(void)
{
    return xcalloc(1, sizeof(struct http_server));
}

void http_route(struct http_server *srv, const char *method, const char *path,
                http_handler_f fn, void *ctx)
{
    struct route *r;
    ALLOC_GROW(srv->routes, srv->nroutes + 1, srv->alloc);
    r = &srv->routes[srv->nroutes++];
    r->method = xstrdup(method);
    r->path = xstrdup(path);
    r->fn = fn;
    r->ctx = ctx;
}

const char *http_request_header(const struct http_request *req,
                                const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

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

static void add_headers(struct MHD_Response *r,
                        const struct http_response *resp)
{
    for (size_t i = 0; resp && i < resp->nheaders; i++)
        MHD_add_response_header(r, resp->headers[i].name,
                                resp->headers[i].value);
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status,
                                 const char *ctype, char *body, size_t len,
                                 const struct http_response *resp)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result rc;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            ctype ? ctype : "text/plain; charset=utf-8");
    add_headers(r, resp);
    rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
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
    mr = MHD_create_response_from_callback(resp->len, 64 * 1024, reader_cb, r,
                                           reader_free);
    if (!mr) {
        reader_free(r);
        return MHD_NO;
    }
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                            ctype ? ctype : "text/plain; charset=utf-8");
    add_headers(mr, resp);
    rc = MHD_queue_response(c, status, mr);
    MHD_destroy_response(mr);
    return rc;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status,
                                  const char *text)
{
    char *b = xstrfmt("%s\n", text);
    return send_text(c, status, NULL, b, strlen(b), NULL);
}

static enum MHD_Result dispatch(struct http_server *srv,
                                struct MHD_Connection *c, const char *method,
                                const char *url, struct conn *cs)
{
    struct http_request req;
    struct http_response resp = {.status = 200};
    int path_known = 0;
    const int head = !strcmp(method, "HEAD");
    enum MHD_Result rc;

    for (size_t i = 0; i < srv->nroutes; i++) {
        struct route *r = &srv->routes[i];
        if (strcmp(r->path, url))
            continue;
        path_known = 1;
        if (strcmp(r->method, method) && !(head && !strcmp(r->method, "GET")))
            continue;
        req.method = method;
        req.path = url;
        req.body = cs->body.buf;
        req.body_len = cs->body.len;
        req.conn = c;
        if (r->fn(r->ctx, &req, &resp) < 0) {
            free(resp.body);
            free_headers(&resp);
            if (resp.read && resp.read_free)
                resp.read_free(resp.read_cls);
            return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
                              "internal error");
        }
        if (resp.read) {
            rc =
                send_reader(c, (unsigned)resp.status, resp.content_type, &resp);
            free_headers(&resp);
            return rc;
        }
        if (!resp.body)
            resp.body = xstrdup("");
        if (head) /* same headers, no body */
            resp.len = 0;
        rc = send_text(c, (unsigned)resp.status, resp.content_type, resp.body,
                       resp.len, &resp);
        free_headers(&resp);
        return rc;
    }
    if (path_known)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed");
    return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct http_server *srv = cls;
    struct conn *cs = *con_cls;
    (void)version;
    if (!cs) {
        cs = xcalloc(1, sizeof(*cs));
        strbuf_init(&cs->body, 0);
        *con_cls = cs;
        return MHD_YES;
    }
    if (*upload_size) {
        if (cs->body.len + *upload_size > HTTP_MAX_BODY)
            cs->too_large = 1;
        else
            strbuf_add(&cs->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (cs->too_large)
        return send_error(c, 413, "request body too large");
    return dispatch(srv, c, method, url, cs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct conn *cs = *con_cls;
    (void)cls, (void)c, (void)toe;
    if (cs) {
        strbuf_release(&cs->body);
        free(cs);
        *con_cls = NULL;
    }
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
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
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
    srv->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR,
        res->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)256, MHD_OPTION_END);
    freeaddrinfo(res);
    if (!srv->d)
        return exa_err(err, EXA_ECONFIG, "cannot listen on '%s': %s", listen,
                       errno ? strerror(errno) : "bind failed");
    info = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
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

void http_server_free(struct http_server *srv)
{
    if (!srv)
        return;
    if (srv->d)
        MHD_stop_daemon(srv->d);
    for (size_t i = 0; i < srv->nroutes; i++) {
        free(srv->routes[i].method);
        free(srv->routes[i].path);
    }
    free(srv->routes);
    free(srv);
}
