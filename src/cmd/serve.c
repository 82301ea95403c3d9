/*
 * serve.c - `exa serve`: the HTTP face of exa, starting with /metrics
 * (Prometheus text format, from the exporter's cache) and /healthz.
 *
 * The command wires three things and waits for SIGINT/SIGTERM: the
 * exporter (libobserve/exporter.c) with its background collector, the
 * router (server/http.c), and the routes. Signals are blocked before any
 * thread starts and taken with sigwait(), so shutdown runs in this thread
 * in a fixed order: stop listening, stop collecting, free.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd/groups.h"
#include "libauth/throttle.h"
#include "libobserve/collect.h"
#include "libobserve/exporter.h"
#include "libobserve/promtext.h"
#include "libutil/dl_crypto_int.h"
#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/tlspin.h"
#include "libutil/xalloc.h"
#include "server/api.h"
#include "server/console.h"
#include "server/http.h"
#include "server/mcp_route.h"
#include "server/worker_http.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9477"

static size_t scrape_read(void *cls, size_t pos, char *buf, size_t max)
{
    return obs_scrape_read(cls, pos, buf, max);
}

static void scrape_free(void *cls)
{
    obs_scrape_end(cls);
}

struct metrics_ctx {
    struct obs_exporter *ex;
    const char *token;          /* --metrics-token; NULL: /metrics is open */
    struct worker_listener *wl; /* --worker-listen: its families too */
    struct auth_throttle *thr;  /* wrong tokens count as failed logins */
};

/* The exporter's cached render followed by the workers' families. */
struct scrape_plus {
    struct obs_scrape *sc;
    size_t sclen;
    struct strbuf extra;
};

static size_t plus_read(void *cls, size_t pos, char *buf, size_t max)
{
    struct scrape_plus *sp = cls;
    size_t n;
    if (pos < sp->sclen)
        return obs_scrape_read(sp->sc, pos, buf, max);
    pos -= sp->sclen;
    if (pos >= sp->extra.len)
        return 0;
    n = sp->extra.len - pos < max ? sp->extra.len - pos : max;
    memcpy(buf, sp->extra.buf + pos, n);
    return n;
}

static void plus_free(void *cls)
{
    struct scrape_plus *sp = cls;
    obs_scrape_end(sp->sc);
    strbuf_release(&sp->extra);
    free(sp);
}

/* 1 when the request carries "Authorization: Bearer TOKEN" (constant
 * time in the token's length). */
static int metrics_allowed(const struct metrics_ctx *m,
                           const struct http_request *req)
{
    const char *h = http_request_header(req, "Authorization");
    size_t n = strlen(m->token);
    if (!h || strncasecmp(h, "Bearer ", 7))
        return 0;
    h += 7;
    return strlen(h) == n && dl_crypto()->CRYPTO_memcmp(h, m->token, n) == 0;
}

/* prom_write_f for `exa serve --once`: the bytes to stdout. */
static int write_stdout(void *ctx, const char *bytes, size_t n)
{
    (void)ctx;
    return fwrite(bytes, 1, n, stdout) == n ? 0 : -1;
}

/* /metrics streams the shared cached render: no per-scrape copy. */
static int h_metrics(void *ctx, const struct http_request *req,
                     struct http_response *resp)
{
    struct metrics_ctx *m = ctx;
    struct obs_scrape *sc;
    if (m->token && !metrics_allowed(m, req)) {
        long wait = auth_throttle_failed(m->thr, req->remote);
        if (wait > 0) {
            char ra[32];
            snprintf(ra, sizeof(ra), "%ld", wait);
            resp->status = 429;
            resp->body = xstrdup("too many failed authentications from this "
                                 "address\n");
            resp->len = strlen(resp->body);
            http_response_header(resp, "Retry-After", ra);
            return 0;
        }
        resp->status = 401;
        resp->body = xstrdup("a metrics token is required\n");
        resp->len = strlen(resp->body);
        http_response_header(resp, "WWW-Authenticate",
                             "Bearer realm=\"exa metrics\"");
        return 0;
    }
    sc = obs_exporter_scrape_begin(m->ex);
    resp->content_type = PROM_CONTENT_TYPE;
    if (m->wl) {
        struct scrape_plus *sp = xcalloc(1, sizeof(*sp));
        sp->sc = sc;
        sp->sclen = obs_scrape_len(sc);
        strbuf_init(&sp->extra, 0);
        worker_listener_metrics(m->wl, &sp->extra, NULL);
        resp->len = sp->sclen + sp->extra.len;
        resp->read = plus_read;
        resp->read_free = plus_free;
        resp->read_cls = sp;
        return 0;
    }
    resp->len = obs_scrape_len(sc);
    resp->read = scrape_read;
    resp->read_free = scrape_free;
    resp->read_cls = sc;
    return 0;
}

static int h_healthz(void *ctx, const struct http_request *req,
                     struct http_response *resp)
{
    struct obs_exporter *ex = ctx;
    (void)req;
    resp->body = xstrfmt("ok %lu\n", obs_exporter_generation(ex));
    resp->len = strlen(resp->body);
    return 0;
}

/* The environment variable name as an integer in 1..max into *out (left
 * alone when unset or empty); 0, or exit 3 naming the variable. */
static int env_int(struct exa_ctx *ctx, const char *name, int64_t max, int *out)
{
    const char *s = getenv(name);
    int64_t v;
    if (!s || !*s)
        return 0;
    if (parse_i64_str(s, &v) < 0 || v < 1 || v > max)
        return out_errorf(ctx, EXA_ECONFIG, NULL,
                          "%s is '%s': expected an integer between 1 and "
                          "%lld",
                          name, s, (long long)max);
    *out = (int)v;
    return 0;
}

static int parse_interval(struct exa_ctx *ctx, const char *what, const char *s,
                          double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0.1) || v > 86400)
        return out_usage(ctx,
                         "%s expects seconds between 0.1 and 86400, "
                         "got '%s'",
                         what, s);
    *out = v;
    return 0;
}

/* Read a PEM file of at most 1 MiB into a new string; NULL after
 * printing the error (exit status in *rc). */
static char *read_pem(struct exa_ctx *ctx, const char *opt, const char *path,
                      int *rc)
{
    FILE *fp = fopen(path, "rb");
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    if (!fp) {
        *rc = out_errorf(ctx, EXA_ECONFIG, NULL, "%s '%s': %s", opt, path,
                         strerror(errno));
        return NULL;
    }
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0 && sb.len < (1u << 20))
        strbuf_add(&sb, buf, n);
    fclose(fp);
    if (sb.len >= (1u << 20) || !strstr(sb.buf, "-----BEGIN ")) {
        *rc = out_errorf(ctx, EXA_ECONFIG, NULL,
                         "%s '%s': expected a PEM file (-----BEGIN ...)", opt,
                         path);
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb, NULL);
}

/* Free a PEM certificate and key (the key wiped first); NULLs are fine. */
static void free_pem_pair(char *cert, char *key)
{
    if (key)
        memset(key, 0, strlen(key));
    free(key);
    free(cert);
}

/*
 * The worker listener's TLS pair and address check for exa serve: with
 * cert_path, read both PEM files (*cert, *key: malloc'ed, the caller
 * frees with free_pem_pair), compute the pin into pin and set o's TLS
 * fields; then worker_listen_check. 0, or the exit code after a one-line
 * error naming the file or the address (nothing is kept then).
 */
static int worker_tls(struct exa_ctx *ctx, struct worker_listen_opts *o,
                      const char *cert_path, const char *key_path, char **cert,
                      char **key, char pin[TLSPIN_LEN])
{
    exa_error_t err = EXA_ERROR_INIT;
    int rc;
    if (cert_path) {
        char *nc, *nk;
        if (!(*cert = read_pem(ctx, "--worker-tls-cert", cert_path, &rc)))
            return rc;
        if (!(*key = read_pem(ctx, "--worker-tls-key", key_path, &rc))) {
            free_pem_pair(*cert, NULL);
            *cert = NULL;
            return rc;
        }
        nc = xstrfmt("--worker-tls-cert '%s'", cert_path);
        nk = xstrfmt("--worker-tls-key '%s'", key_path);
        rc = tlspin_from_pem(*cert, *key, nc, nk, pin, &err);
        free(nc);
        free(nk);
        if (rc < 0)
            goto fail;
        o->tls_cert_pem = *cert;
        o->tls_key_pem = *key;
        o->pin = pin;
    }
    if (worker_listen_check(o, &err) == 0)
        return 0;
fail:
    free_pem_pair(*cert, *key);
    *cert = *key = NULL;
    o->tls_cert_pem = o->tls_key_pem = o->pin = NULL;
    return out_error(ctx, &err, NULL);
}

/*
 * The metrics token from the first line of path (no newline, trailing
 * blanks cut) into buf. 0, or the exit code after the error (3: the file
 * cannot be read, is empty or its line does not fit).
 */
static int read_token_file(struct exa_ctx *ctx, const char *path, char *buf,
                           size_t n)
{
    FILE *fp = fopen(path, "r");
    size_t len;
    if (!fp)
        return out_errorf(ctx, EXA_ECONFIG, NULL,
                          "--metrics-token-file '%s': %s", path,
                          strerror(errno));
    if (!fgets(buf, (int)n, fp))
        buf[0] = '\0';
    fclose(fp);
    len = strlen(buf);
    if (len && buf[len - 1] != '\n' && len == n - 1)
        return out_errorf(ctx, EXA_ECONFIG, NULL,
                          "--metrics-token-file '%s': expected one line of "
                          "at most %zu bytes",
                          path, n - 2);
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
                   buf[len - 1] == ' ' || buf[len - 1] == '\t'))
        buf[--len] = '\0';
    if (!len)
        return out_errorf(ctx, EXA_ECONFIG, NULL,
                          "--metrics-token-file '%s': expected a token on "
                          "its first line",
                          path);
    return 0;
}

int cmd_serve(struct exa_ctx *ctx, int argc, char **argv)
{
    static char mtok_buf[4096];
    enum {
        O_CERT = 256,
        O_KEY,
        O_INSECURE,
        O_MTOKEN,
        O_MTOKEN_FILE,
        O_SECURE_COOKIES,
        O_PROXY,
        O_WCERT,
        O_WKEY
    };
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"interval", required_argument, NULL, 'i'},
        {"once", no_argument, NULL, 'o'},
        {"tls-cert", required_argument, NULL, O_CERT},
        {"tls-key", required_argument, NULL, O_KEY},
        {"insecure-http", no_argument, NULL, O_INSECURE},
        {"metrics-token", required_argument, NULL, O_MTOKEN},
        {"metrics-token-file", required_argument, NULL, O_MTOKEN_FILE},
        {"secure-cookies", no_argument, NULL, O_SECURE_COOKIES},
        {"worker-listen", required_argument, NULL, 'w'},
        {"worker-insecure-http", no_argument, NULL, 'W'},
        {"worker-tls-cert", required_argument, NULL, O_WCERT},
        {"worker-tls-key", required_argument, NULL, O_WKEY},
        {"trusted-proxy", required_argument, NULL, O_PROXY},
        {NULL, 0, NULL, 0},
    };
    const char *cert_path = NULL, *key_path = NULL, *proxy = NULL;
    char *cert = NULL, *key = NULL;
    int insecure = 0, secure_cookies = 0;
    struct metrics_ctx mctx = {NULL, getenv("EXAMLOPS_SERVE_METRICS_TOKEN"),
                               NULL, NULL};
    struct http_options hopt;
    struct api_config acfg;
    struct api *api = NULL;
    const char *listen = getenv("EXAMLOPS_SERVE_LISTEN");
    const char *env_iv = getenv("EXAMLOPS_EXPORTER_INTERVAL_S");
    double interval = OBS_DEFAULT_INTERVAL_S;
    int once = 0, c, sig = 0, rc;
    exa_error_t err = EXA_ERROR_INIT;
    struct obs_exporter *ex;
    struct obs_collect_ctx cctx = {0, EXA_ERROR_INIT};
    struct http_server *srv;
    struct mcp_mount *mcp;
    struct auth_throttle *thr;
    int fail_limit = 0, fail_delay = 0;
    struct worker_listen_opts wopts;
    const char *wcert_path = NULL, *wkey_path = NULL;
    char *wcert = NULL, *wkey = NULL, wpin[TLSPIN_LEN];
    struct worker_listener *wl = NULL;
    sigset_t set;

    memset(&wopts, 0, sizeof(wopts));
    if (!listen || !*listen)
        listen = SERVE_DEFAULT_LISTEN;
    if (env_iv && *env_iv &&
        (rc = parse_interval(ctx, "EXAMLOPS_EXPORTER_INTERVAL_S", env_iv,
                             &interval)))
        return rc;
    if ((rc = env_int(ctx, "EXAMLOPS_SERVE_AUTH_FAIL_LIMIT", 1000000,
                      &fail_limit)) ||
        (rc = env_int(ctx, "EXAMLOPS_SERVE_AUTH_FAIL_DELAY_S", 3600,
                      &fail_delay)))
        return rc;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'l':
            listen = optarg;
            break;
        case 'i':
            if ((rc = parse_interval(ctx, "--interval", optarg, &interval)))
                return rc;
            break;
        case 'o':
            once = 1;
            break;
        case O_CERT:
            cert_path = optarg;
            break;
        case O_KEY:
            key_path = optarg;
            break;
        case O_INSECURE:
            insecure = 1;
            break;
        case O_MTOKEN:
            mctx.token = optarg;
            out_warn(ctx, "--metrics-token is visible to every local user "
                          "in ps(1); prefer --metrics-token-file FILE or "
                          "EXAMLOPS_SERVE_METRICS_TOKEN");
            break;
        case O_MTOKEN_FILE:
            if ((rc = read_token_file(ctx, optarg, mtok_buf, sizeof(mtok_buf))))
                return rc;
            mctx.token = mtok_buf;
            break;
        case O_SECURE_COOKIES:
            secure_cookies = 1;
            break;
        case O_PROXY: {
            unsigned char bin[16];
            if (inet_pton(AF_INET, optarg, bin) != 1 &&
                inet_pton(AF_INET6, optarg, bin) != 1)
                return out_usage(ctx,
                                 "--trusted-proxy '%s': expected an IPv4 "
                                 "or IPv6 address",
                                 optarg);
            proxy = optarg;
            break;
        }
        case 'w':
            wopts.listen = optarg;
            break;
        case 'W':
            wopts.insecure_http = 1;
            break;
        case O_WCERT:
            wcert_path = optarg;
            break;
        case O_WKEY:
            wkey_path = optarg;
            break;
        default:
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (!cert_path != !key_path)
        return out_usage(ctx, "--tls-cert and --tls-key go together");
    if (mctx.token && !*mctx.token)
        mctx.token = NULL;
    if (mctx.token && strlen(mctx.token) < 16)
        return out_usage(ctx, "--metrics-token must be at least 16 "
                              "characters");
    if (!wcert_path != !wkey_path)
        return out_usage(ctx,
                         "--worker-tls-cert and --worker-tls-key go together");
    if (wcert_path && !wopts.listen)
        return out_usage(ctx, "--worker-tls-cert needs --worker-listen");
    /* libcrypto now, in main(): not lazily in the first request thread
     * that compares a token. --once serves no request: a collection that
     * needs it loads it then (dl_crypto_load is once-only and thread-safe),
     * and one that does not is spared its 3,000 symbol bindings. */
    if (!once && dl_crypto_load(&err) < 0)
        return out_error(ctx, &err, NULL);
    ex = obs_exporter_new(NULL, interval, obs_collect_factory, &cctx);
    if (once) {
        /* written as it is rendered, never whole in memory */
        if (obs_exporter_collect_stream(ex, write_stdout, NULL, &err) < 0) {
            obs_exporter_free(ex);
            return out_error(ctx, &err, NULL);
        }
        obs_exporter_free(ex);
        /* a cluster the gate refused (host key, registration) fails the
         * one-shot collection with its own error, after the metrics of
         * the others */
        if (cctx.refused)
            return out_error(ctx, &cctx.first, NULL);
        return 0;
    }

    /* (not for --once) the worker listener's certificate, key and address
     * before anything listens: a refusal starts nothing */
    if (wopts.listen && (rc = worker_tls(ctx, &wopts, wcert_path, wkey_path,
                                         &wcert, &wkey, wpin))) {
        obs_exporter_free(ex);
        return rc;
    }

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    if (cert_path && (!(cert = read_pem(ctx, "--tls-cert", cert_path, &rc)) ||
                      !(key = read_pem(ctx, "--tls-key", key_path, &rc)))) {
        free(cert);
        obs_exporter_free(ex);
        free_pem_pair(wcert, wkey);
        return rc;
    }
    mctx.ex = ex;
    srv = http_server_new();
    memset(&hopt, 0, sizeof(hopt));
    hopt.max_body = 64 * 1024;
    hopt.tls_cert_pem = cert;
    hopt.tls_key_pem = key;
    http_server_options(srv, &hopt);
    if (key)
        memset(key, 0, strlen(key));
    free(key);
    free(cert);
    memset(&acfg, 0, sizeof(acfg));
    acfg.secure_cookies = secure_cookies;
    acfg.trusted_proxy = proxy;
    /* one slow-down for the REST API, the console, /mcp and /metrics */
    thr = auth_throttle_new(fail_limit, 0, fail_delay, 0);
    acfg.throttle = thr;
    mctx.thr = thr;
    http_route(srv, "GET", "/metrics", h_metrics, &mctx);
    http_route(srv, "GET", "/healthz", h_healthz, ex);
    api = api_register(srv, &acfg);
    console_register(srv);
    if (!(mcp = mcp_mount_env(srv, thr, &err)) ||
        http_server_listen(srv, listen, &err) < 0) {
        http_server_free(srv);
        api_free(api);
        mcp_unmount(mcp);
        auth_throttle_free(thr);
        obs_exporter_free(ex);
        free_pem_pair(wcert, wkey);
        return out_error(ctx, &err, NULL);
    }
    if (!http_server_is_loopback(srv) && !http_server_is_tls(srv)) {
        if (!insecure) {
            http_server_free(srv);
            api_free(api);
            mcp_unmount(mcp);
            auth_throttle_free(thr);
            obs_exporter_free(ex);
            free_pem_pair(wcert, wkey);
            return out_errorf(ctx, EXA_EUSAGE,
                              "give --tls-cert FILE --tls-key FILE, or "
                              "--insecure-http behind a TLS reverse proxy",
                              "refusing to listen on '%s' beyond loopback "
                              "without TLS: tokens and session cookies "
                              "would cross the network in clear text",
                              listen);
        }
        out_warn(ctx,
                 "listening on '%s', beyond loopback, without TLS "
                 "(--insecure-http): tokens cross the network in clear "
                 "text unless a TLS reverse proxy is in front",
                 listen);
    }
    if (!http_server_is_loopback(srv) && !mctx.token)
        out_warn(ctx,
                 "listening on '%s', beyond loopback: /metrics has no "
                 "authentication; give --metrics-token or restrict it with "
                 "a firewall",
                 listen);
    if (obs_exporter_start(ex, &err) < 0) {
        http_server_free(srv);
        api_free(api);
        mcp_unmount(mcp);
        auth_throttle_free(thr);
        obs_exporter_free(ex);
        free_pem_pair(wcert, wkey);
        return out_error(ctx, &err, NULL);
    }
    if (wopts.listen)
        wl = worker_listener_start(&wopts, &err);
    free_pem_pair(wcert, wkey);
    if (wopts.listen && !wl) {
        http_server_free(srv);
        api_free(api);
        mcp_unmount(mcp);
        auth_throttle_free(thr);
        obs_exporter_free(ex);
        return out_error(ctx, &err, NULL);
    }
    out_info(ctx,
             "Serving /metrics, /healthz, the REST API (/api/v1/) and the "
             "console on port %d over %s (every %gs)",
             http_server_port(srv), http_server_is_tls(srv) ? "https" : "http",
             interval);
    mctx.wl = wl;
    if (wl) {
        if (wopts.pin)
            out_info(ctx,
                     "Serving the worker API on port %d: worker listener on "
                     "%s over https (engine %s, pin %s)",
                     worker_listener_port(wl), wopts.listen,
                     te_engine_id(worker_listener_engine(wl)), wopts.pin);
        else
            out_info(ctx,
                     "Serving the worker API on port %d: worker listener on "
                     "%s over http (engine %s)",
                     worker_listener_port(wl), wopts.listen,
                     te_engine_id(worker_listener_engine(wl)));
    }
    fflush(stdout);
    while (sigwait(&set, &sig) != 0)
        ;
    http_server_free(srv);
    worker_listener_stop(wl);
    api_free(api);
    mcp_unmount(mcp);
    auth_throttle_free(thr);
    obs_exporter_free(ex);
    return 0;
}
