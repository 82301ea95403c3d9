/*
 * http.h - a small HTTP router on libmicrohttpd for `exa serve`.
 *
 * Routes are (method, exact path) pairs with a handler; the server owns
 * threading (libmicrohttpd's internal polling thread), request bodies (up
 * to HTTP_MAX_BODY bytes, for the REST and MCP routes that will join) and
 * errors (404 unknown path, 405 known path with another method, 413 body
 * too large). /metrics and /healthz are the first routes; the REST API,
 * the worker protocol and MCP-over-HTTP join by calling http_route().
 */
#ifndef EXA_HTTP_H
#define EXA_HTTP_H

#include <stddef.h>

#include "libutil/error.h"

#define HTTP_MAX_BODY (1u << 20)

struct http_request {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* "/metrics", without the query string */
    const char *body;   /* request body (NUL-terminated), "" when none */
    size_t body_len;
    void *conn; /* private: the connection, for http_request_header() */
};

/*
 * The value of request header name (matched case-insensitively, RFC 9110
 * §5.1), borrowed for the handler's run, or NULL when absent. The first
 * one when repeated.
 */
const char *http_request_header(const struct http_request *req,
                                const char *name);

/* One extra response header; both strings malloc'ed, freed by the server. */
struct http_header {
    char *name, *value;
};

struct http_response {
    int status;               /* default 200 */
    const char *content_type; /* static string; default text/plain */
    char *body;               /* malloc'ed; the server frees it */
    size_t len;
    /*
     * Instead of body: a body of len bytes produced by read(cls, pos, buf,
     * max) (bytes copied, > 0 until len is reached) while it is sent, in a
     * server thread; read_free(cls) runs once when the response is done
     * (also when the client went away). For large bodies shared between
     * requests, so each request does not copy them first.
     */
    size_t (*read)(void *cls, size_t pos, char *buf, size_t max);
    void (*read_free)(void *cls);
    void *read_cls;
    /* extra headers, added with http_response_header(); may stay empty */
    struct http_header *headers;
    size_t nheaders, headers_alloc;
};

/* Add header "name: value" (both copied) to resp. */
void http_response_header(struct http_response *resp, const char *name,
                          const char *value);

/*
 * Fill resp (status, content type, body). Runs in a server thread: the
 * handler must be thread-safe. Return 0; -1 answers 500.
 */
typedef int (*http_handler_f)(void *ctx, const struct http_request *req,
                              struct http_response *resp);

struct http_server;

struct http_server *http_server_new(void);
/* Add a route; path and method are copied. GET routes also answer HEAD. */
void http_route(struct http_server *srv, const char *method, const char *path,
                http_handler_f fn, void *ctx);

/*
 * Parse "HOST:PORT" ("127.0.0.1:9477", "[::1]:9477", "localhost:0"; port
 * 0 picks a free one) and start listening. Returns 0, or -1 with err
 * (EXA_EUSAGE for a bad address, EXA_ECONFIG when binding fails).
 */
int http_server_listen(struct http_server *srv, const char *listen,
                       exa_error_t *err);
/* The bound port (after listen). */
int http_server_port(const struct http_server *srv);
/* Non-zero when the listen address is a loopback one. */
int http_server_is_loopback(const struct http_server *srv);
/* Stop listening (if started) and free everything. */
void http_server_free(struct http_server *srv);

#endif
