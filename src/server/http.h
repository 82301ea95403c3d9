/*
 * http.h - a small HTTP router on libmicrohttpd for `exa serve`.
 *
 * Routes are (method, path pattern) pairs with a handler. A pattern is
 * exact ("/metrics") or has whole-segment parameters
 * ("/api/v1/clusters/{name}/preflight"); the first route registered
 * whose pattern matches wins. The server owns threading (a
 * libmicrohttpd thread per connection), request bodies (capped), the query
 * string (parsed here, RFC 3986 §3.4 with application/x-www-form-urlencoded
 * '+' as space), limits, timeouts and TLS (GnuTLS through
 * libmicrohttpd), and answers itself: 404 unknown path, 405 known path
 * with another method, 413 body too large, 400 a malformed path or
 * query; under /api/ these are JSON, {"error": {"code", "message"}}.
 *
 * Routing (http_dispatch) is a pure function of the request, so it can be
 * tested and fuzzed without sockets (fuzz/fuzz_http_router.c).
 */
#ifndef EXA_HTTP_H
#define EXA_HTTP_H

#include <stddef.h>

#include "libutil/error.h"

#define HTTP_MAX_BODY (1u << 20)
#define HTTP_MAX_PARAMS 4
#define HTTP_MAX_QUERY 32

/* A decoded name=value pair of the query string or a path parameter. */
struct http_kv {
    char *name, *value;
};

struct http_request {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* "/metrics", without the query string, as sent */
    const char *body;   /* request body (NUL-terminated), "" when none */
    size_t body_len;
    void *conn;         /* private: the connection, for http_request_header() */
    const char *query;  /* raw query string after '?', "" when none */
    const char *remote; /* peer address ("127.0.0.1", "::1"), "" unknown */
    int tls;            /* 1 when the connection is TLS */
    /* filled by http_dispatch: decoded path parameters and query pairs */
    struct http_kv params[HTTP_MAX_PARAMS];
    size_t nparams;
    struct http_kv *q;
    size_t nq;
    /*
     * For tests and fuzzing without a connection: when set, headers are
     * looked up here instead of in conn.
     */
    const char *(*header_fn)(void *cls, const char *name);
    void *header_cls;
};

/*
 * The value of request header name (matched case-insensitively, RFC 9110
 * §5.1), borrowed for the handler's run, or NULL when absent. The first
 * one when repeated.
 */
const char *http_request_header(const struct http_request *req,
                                const char *name);

/* Path parameter name ("{name}" in the route), decoded; NULL when none. */
const char *http_request_param(const struct http_request *req,
                               const char *name);

/* The first query value of name, decoded; NULL when absent. */
const char *http_request_query(const struct http_request *req,
                               const char *name);

/*
 * The value of cookie name in the Cookie header (RFC 6265 §4.2.1:
 * "a=b; c=d"), copied into buf (n bytes); NULL when absent or longer.
 */
const char *http_request_cookie(const struct http_request *req,
                                const char *name, char *buf, size_t n);

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
 * Make resp a JSON error: status, Content-Type application/json and the
 * body {"error": {"code": code, "message": message}} (message printf
 * style). code is a short word ("not_found", "forbidden").
 */
void http_error_json(struct http_response *resp, int status, const char *code,
                     const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Free what a response holds (body, headers; read_free when set). */
void http_response_release(struct http_response *resp);

/*
 * Fill resp (status, content type, body). Runs in a server thread: the
 * handler must be thread-safe. Return 0; -1 answers 500.
 */
typedef int (*http_handler_f)(void *ctx, const struct http_request *req,
                              struct http_response *resp);

struct http_server;

struct http_server *http_server_new(void);
/* Add a route; path and method are copied. GET routes also answer HEAD.
 * A path segment "{NAME}" matches any one non-empty segment. */
void http_route(struct http_server *srv, const char *method, const char *path,
                http_handler_f fn, void *ctx);

/*
 * Route req (method, path, query, body set by the caller) to its
 * handler and fill resp, exactly as the server does for a request:
 * decodes the path (percent-encoding per segment; "%2F" stays inside its
 * segment; NUL, "." and ".." segments are refused with 400), parses the
 * query (400 when malformed), matches routes, runs the handler (500 when
 * it fails). Sets req->params and req->q (released by
 * http_request_release). Always returns 0; resp is to be released.
 */
int http_dispatch(struct http_server *srv, struct http_request *req,
                  struct http_response *resp);
void http_request_release(struct http_request *req);

/*
 * Parse a query string ("a=1&b=x%20y&flag") into *out (n pairs; a name
 * without '=' has value ""). Percent escapes are decoded and '+' is a
 * space. Returns 0, -1 for a bad escape or a NUL byte, or -2 for more
 * than HTTP_MAX_QUERY pairs (*out NULL both times). Release with
 * http_kv_free.
 */
int http_query_parse(const char *query, struct http_kv **out, size_t *n);
void http_kv_free(struct http_kv *v, size_t n);

/*
 * Decode percent escapes of s[0..len) into a new string (no '+'
 * rule). NULL for a bad escape or an escaped NUL.
 */
char *http_pct_decode(const char *s, size_t len);

/* Limits, timeouts, threads and TLS of a server; 0 / NULL: the default. */
struct http_options {
    size_t max_body;    /* bytes; default HTTP_MAX_BODY */
    size_t max_header;  /* request line + headers, bytes; default 32 KiB */
    unsigned timeout_s; /* idle connection timeout; default 30 */
    unsigned threads;   /* unused: a thread serves each connection */
    unsigned max_conns; /* simultaneous connections; default 1024 */
    unsigned max_conns_per_ip; /* from one address; default max_conns/4 */
    const char *tls_cert_pem;  /* PEM text of the certificate chain */
    const char *tls_key_pem;   /* PEM text of its private key */
};

/* Set srv's options (copied) before http_server_listen(). */
void http_server_options(struct http_server *srv, const struct http_options *o);

/*
 * Parse "HOST:PORT" ("127.0.0.1:9477", "[::1]:9477", "localhost:0"; port
 * 0 picks a free one) and start listening. Returns 0, or -1 with err
 * (EXA_EUSAGE for a bad address, EXA_ECONFIG when binding fails or TLS
 * was asked for and libmicrohttpd has none, or the key and certificate
 * are refused, or libmicrohttpd cannot be loaded: the first listener
 * dlopen()s it, server/dl_mhd.h).
 */
int http_server_listen(struct http_server *srv, const char *listen,
                       exa_error_t *err);
/* The bound port (after listen). */
int http_server_port(const struct http_server *srv);
/* Non-zero when the listen address is a loopback one. */
int http_server_is_loopback(const struct http_server *srv);
/* Non-zero when the server speaks TLS (after listen). */
int http_server_is_tls(const struct http_server *srv);
/* Stop listening (if started) and free everything. */
void http_server_free(struct http_server *srv);

#endif
