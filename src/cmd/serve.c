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
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/groups.h"
#include "libobserve/collect.h"
#include "libobserve/exporter.h"
#include "libobserve/promtext.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "server/console.h"
#include "server/http.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9477"

static size_t scrape_read(void *cls, size_t pos, char *buf, size_t max)
{
    return obs_scrape_read(cls, pos, buf, max);
}

static void scrape_free(void *cls)
{
    obs_scrape_end(cls);
}

/* /metrics streams the shared cached render: no per-scrape copy. */
static int h_metrics(void *ctx, const struct http_request *req,
                     struct http_response *resp)
{
    struct obs_scrape *sc = obs_exporter_scrape_begin(ctx);
    (void)req;
    resp->content_type = PROM_CONTENT_TYPE;
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

int cmd_serve(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"interval", required_argument, NULL, 'i'},
        {"once", no_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    const char *listen = getenv("EXAMLOPS_SERVE_LISTEN");
    const char *env_iv = getenv("EXAMLOPS_EXPORTER_INTERVAL_S");
    double interval = OBS_DEFAULT_INTERVAL_S;
    int once = 0, c, sig = 0, rc;
    exa_error_t err = EXA_ERROR_INIT;
    struct obs_exporter *ex;
    struct obs_collect_ctx cctx = {0, EXA_ERROR_INIT};
    struct http_server *srv;
    sigset_t set;

    if (!listen || !*listen)
        listen = SERVE_DEFAULT_LISTEN;
    if (env_iv && *env_iv &&
        (rc = parse_interval(ctx, "EXAMLOPS_EXPORTER_INTERVAL_S", env_iv,
                             &interval)))
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
        default:
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);

    ex = obs_exporter_new(NULL, interval, obs_collect_factory, &cctx);
    if (once) {
        char *body;
        size_t len;
        if (obs_exporter_collect(ex, &err) < 0) {
            obs_exporter_free(ex);
            return out_error(ctx, &err, NULL);
        }
        body = obs_exporter_scrape(ex, &len);
        fwrite(body, 1, len, stdout);
        free(body);
        obs_exporter_free(ex);
        /* a cluster the gate refused (host key, registration) fails the
         * one-shot collection with its own error, after the metrics of
         * the others */
        if (cctx.refused)
            return out_error(ctx, &cctx.first, NULL);
        return 0;
    }

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    srv = http_server_new();
    http_route(srv, "GET", "/metrics", h_metrics, ex);
    http_route(srv, "GET", "/healthz", h_healthz, ex);
    console_register(srv);
    if (http_server_listen(srv, listen, &err) < 0) {
        http_server_free(srv);
        obs_exporter_free(ex);
        return out_error(ctx, &err, NULL);
    }
    if (!http_server_is_loopback(srv))
        out_warn(ctx,
                 "listening on '%s', beyond loopback: /metrics has no "
                 "authentication; restrict it with a firewall",
                 listen);
    if (obs_exporter_start(ex, &err) < 0) {
        http_server_free(srv);
        obs_exporter_free(ex);
        return out_error(ctx, &err, NULL);
    }
    out_info(ctx, "Serving /metrics and /healthz on port %d (every %gs)",
             http_server_port(srv), interval);
    fflush(stdout);
    while (sigwait(&set, &sig) != 0)
        ;
    http_server_free(srv);
    obs_exporter_free(ex);
    return 0;
}
