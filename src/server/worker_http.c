/*
 * worker_http.c - the worker listener (worker_http.h).
 *
 * A daemon of its own, thread per connection: a long-polled lease parks
 * inside the engine (te_lease waits on a condition variable), which
 * needs a thread that may block; one connection per worker is the shape
 * of the traffic (WORKERS.md §7.2 asks for one parked request each).
 * JSON bodies are collected up to 1 MiB (413 past it); artifact bodies
 * stream into te_upload_write() as they arrive. The Authorization header
 * is read and never logged.
 */
#include "server/worker_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libprovision/metrics.h"
#include "libprovision/provision.h"
#include "libstore/store.h"
#include "libstore/tasks.h"
#include "libtask/proto.h"
#include "libtask/upload.h"
#include "libutil/log.h"
#include "libutil/strbuf.h"
#include "server/dl_mhd.h"
#include "libutil/xalloc.h"

struct worker_listener {
    struct MHD_Daemon *d;
    store_t *st;
    task_engine_t *e;
    int port;
    pthread_t ticker;
    int ticking;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    double tick_s;
    store_t *mst; /* /metrics reads, under mmu */
    pthread_mutex_t mmu;
    /* the provisioner: its own connection and thread */
    store_t *pst;
    struct provisioner *prov;
    struct prov_config pcfg; /* a copy for shutdown */
    pthread_t pthread;
    int proving;
    double prov_tick_s;
    char *db_path;
    /* fault hook: drop the answer of the first drop_n requests of route
     * (drop_busy 0), or answer them 503 busy instead (drop_busy 1) */
    enum tp_route drop_route;
    int drop_n, drop_busy;
    char *cert, *key; /* PEM text for libmicrohttpd (TLS), or NULL */
};

struct wconn {
    struct strbuf body;
    int too_large;
    struct tp_path path;
    int path_rc;
    struct te_upload *up;
    struct te_reply early; /* answer decided before the body ended */
    int have_early;
};

static const char *bearer_of(struct MHD_Connection *c)
{
    const char *h = dl_mhd.lookup_connection_value(
        c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *p;
    if (h && (skip_prefix(h, "Bearer ", &p) || skip_prefix(h, "bearer ", &p)))
        return p;
    return NULL;
}

static void peer_of(struct MHD_Connection *c, char *buf, size_t n)
{
    const union MHD_ConnectionInfo *ci =
        dl_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buf[0] = '\0';
    if (!ci || !ci->client_addr)
        return;
    if (ci->client_addr->sa_family == AF_INET)
        inet_ntop(AF_INET,
                  &((const struct sockaddr_in *)(const void *)ci->client_addr)
                       ->sin_addr,
                  buf, (socklen_t)n);
    else if (ci->client_addr->sa_family == AF_INET6)
        inet_ntop(AF_INET6,
                  &((const struct sockaddr_in6 *)(const void *)ci->client_addr)
                       ->sin6_addr,
                  buf, (socklen_t)n);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct te_reply *r)
{
    struct MHD_Response *resp;
    enum MHD_Result rc;
    char *body = NULL;
    size_t len = 0;
    if (r->body && r->status != 204) {
        body = json_dumps(r->body, JSON_COMPACT);
        len = body ? strlen(body) : 0;
    }
    resp = dl_mhd.create_response_from_buffer(len, body ? body : (char *)"",
                                              body ? MHD_RESPMEM_MUST_FREE
                                                   : MHD_RESPMEM_PERSISTENT);
    if (body)
        dl_mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                   "application/json");
    if (r->retry_after_s > 0) {
        char ra[16];
        xsnprintf(ra, sizeof(ra), "%d", r->retry_after_s);
        dl_mhd.add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    rc = dl_mhd.queue_response(c, (unsigned)r->status, resp);
    dl_mhd.destroy_response(resp);
    te_reply_release(r);
    return rc;
}

static void err_reply(struct te_reply *r, int status, const char *code,
                      const char *reason)
{
    json_t *b = json_object(), *er = json_object();
    json_object_set_new(er, "code", json_string(code));
    json_object_set_new(er, "reason", json_string(reason));
    json_object_set_new(b, "error", er);
    r->status = status;
    r->body = b;
    r->retry_after_s = 0;
}

static int take_drop(struct worker_listener *wl, enum tp_route r)
{
    int drop = 0;
    pthread_mutex_lock(&wl->mu);
    if (wl->drop_n > 0 && wl->drop_route == r) {
        wl->drop_n--;
        drop = 1;
    }
    pthread_mutex_unlock(&wl->mu);
    return drop;
}

static enum MHD_Result dispatch(struct worker_listener *wl,
                                struct MHD_Connection *c, struct wconn *cs)
{
    struct te_reply r = {0, NULL, 0};
    const struct tp_path *p = &cs->path;
    const char *bearer = bearer_of(c);
    char peer[64];
    if (wl->drop_busy && take_drop(wl, p->route)) {
        /* the fault busy_reply: the engine never sees the request */
        err_reply(&r, 503, "unavailable", "the engine's database is busy");
        r.retry_after_s = 1;
        return send_reply(c, &r);
    }
    switch (p->route) {
    case TP_PING:
        te_ping(wl->e, &r);
        break;
    case TP_REGISTER:
        peer_of(c, peer, sizeof(peer));
        te_register(wl->e, cs->body.buf, cs->body.len, peer, bearer, &r);
        break;
    case TP_HEARTBEAT:
        te_heartbeat(wl->e, p->worker_id, bearer, cs->body.buf, cs->body.len,
                     &r);
        break;
    case TP_LEASE:
        te_lease(wl->e, p->worker_id, bearer, cs->body.buf, cs->body.len,
                 p->wait_s, &r);
        break;
    case TP_RESULTS:
        te_results(wl->e, p->worker_id, bearer, cs->body.buf, cs->body.len, &r);
        break;
    case TP_DRAIN:
        te_drain(wl->e, p->worker_id, bearer, cs->body.buf, cs->body.len, &r);
        break;
    case TP_BYE:
        te_bye(wl->e, p->worker_id, bearer, cs->body.buf, cs->body.len, &r);
        break;
    case TP_ARTIFACT:
        if (cs->up)
            te_upload_finish(cs->up, &r);
        cs->up = NULL;
        break;
    }
    if (!r.status)
        err_reply(&r, 500, "internal", "no answer");
    if (!wl->drop_busy && take_drop(wl, p->route)) {
        te_reply_release(&r);
        return MHD_NO; /* committed; the connection is reset unanswered */
    }
    return send_reply(c, &r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct worker_listener *wl = cls;
    struct wconn *cs = *con_cls;
    exa_error_t err = EXA_ERROR_INIT;
    (void)version;
    if (!cs) {
        const char *q = NULL;
        char *path = xstrdup(url), *qm = strchr(path, '?');
        cs = xcalloc(1, sizeof(*cs));
        strbuf_init(&cs->body, 0);
        *con_cls = cs;
        if (qm)
            *qm = '\0';
        q = dl_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "wait");
        {
            char qs[32] = "";
            if (q)
                xsnprintf(qs, sizeof(qs), "wait=%s", q);
            cs->path_rc =
                tp_parse_path(method, path, q ? qs : NULL, &cs->path, &err);
        }
        free(path);
        if (cs->path_rc < 0) {
            err_reply(&cs->early, 404, "not_found", err.text);
            cs->have_early = 1;
        } else if (cs->path_rc > 0) {
            err_reply(&cs->early, 405, "method_not_allowed",
                      "method not allowed");
            cs->have_early = 1;
        } else if (cs->path.route == TP_ARTIFACT) {
            const char *sha = dl_mhd.lookup_connection_value(c, MHD_HEADER_KIND,
                                                             "X-Exa-Sha256");
            const char *wid = dl_mhd.lookup_connection_value(c, MHD_HEADER_KIND,
                                                             "X-Exa-Worker");
            cs->up =
                te_upload_open(wl->e, wid && tp_name_ok(wid) ? wid : "-",
                               bearer_of(c), cs->path.task, cs->path.attempt,
                               cs->path.name, sha, &cs->early);
            if (!cs->up)
                cs->have_early = 1;
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (cs->have_early) {
            /* discard the body of a request already answered */
        } else if (cs->up) {
            te_upload_write(cs->up, upload, *upload_size);
        } else if (cs->body.len + *upload_size > TP_MAX_BODY) {
            cs->too_large = 1;
        } else {
            strbuf_add(&cs->body, upload, *upload_size);
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (cs->have_early) {
        cs->have_early = 0;
        return send_reply(c, &cs->early);
    }
    if (cs->too_large) {
        struct te_reply r;
        err_reply(&r, 413, "too_large", "request body over 1 MiB");
        return send_reply(c, &r);
    }
    return dispatch(wl, c, cs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct wconn *cs = *con_cls;
    (void)cls, (void)c, (void)toe;
    if (!cs)
        return;
    te_upload_abort(cs->up);
    te_reply_release(&cs->early);
    strbuf_release(&cs->body);
    free(cs);
    *con_cls = NULL;
}

static void *ticker(void *arg)
{
    struct worker_listener *wl = arg;
    pthread_mutex_lock(&wl->mu);
    while (!wl->stop) {
        struct timespec ts;
        double t;
        clock_gettime(CLOCK_REALTIME, &ts);
        t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + wl->tick_s;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&wl->cv, &wl->mu, &ts);
        if (wl->stop)
            break;
        pthread_mutex_unlock(&wl->mu);
        te_tick(wl->e, NULL); /* a failed pass is retried on the next */
        pthread_mutex_lock(&wl->mu);
    }
    pthread_mutex_unlock(&wl->mu);
    return NULL;
}

static void *prov_main(void *arg)
{
    struct worker_listener *wl = arg;
    pthread_mutex_lock(&wl->mu);
    while (!wl->stop) {
        struct timespec ts;
        double t;
        pthread_mutex_unlock(&wl->mu);
        prov_tick(wl->prov, te_wallclock(NULL), NULL);
        pthread_mutex_lock(&wl->mu);
        clock_gettime(CLOCK_REALTIME, &ts);
        t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + wl->prov_tick_s;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        if (!wl->stop)
            pthread_cond_timedwait(&wl->cv, &wl->mu, &ts);
    }
    pthread_mutex_unlock(&wl->mu);
    return NULL;
}

/* te_opts.log: the engine's lines on serve's stderr, as warnings */
static void engine_log(void *ctx, const char *line)
{
    (void)ctx;
    log_msg(LOG_WARN, "%s", line);
}

static int env_secs(const char *name, double *out, exa_error_t *err)
{
    const char *v = getenv(name);
    char *end;
    double x;
    if (!v || !*v)
        return 0;
    errno = 0;
    x = strtod(v, &end);
    if (errno || *end || !(x >= 0.05) || x > 86400)
        return exa_err(err, EXA_EUSAGE,
                       "%s expects seconds between 0.05 and 86400, got '%s'",
                       name, v);
    *out = x;
    return 0;
}

static int parse_fault(struct worker_listener *wl, struct te_opts *to,
                       exa_error_t *err)
{
    static const struct {
        const char *name;
        enum tp_route r;
    } routes[] = {{"register", TP_REGISTER},
                  {"heartbeat", TP_HEARTBEAT},
                  {"lease", TP_LEASE},
                  {"results", TP_RESULTS}};
    const char *v = getenv("EXAMLOPS_WORKER_FAULT"), *p;
    if (!v || !*v)
        return 0;
    if (!strcmp(v, "crash_after_sbatch")) /* the provisioner's (T13b) */
        return 0;
    if (skip_prefix(v, "sqlite_busy:", &p)) {
        char *end;
        long k = strtol(p, &end, 10);
        if (!*end && k >= 1 && k <= 100000) {
            to->fault_busy = (int)k;
            return 0;
        }
    }
    if (skip_prefix(v, "drop_reply:", &p) ||
        (skip_prefix(v, "busy_reply:", &p) && (wl->drop_busy = 1))) {
        for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
            const char *n;
            if (skip_prefix(p, routes[i].name, &n) && *n == ':') {
                char *end;
                long k = strtol(n + 1, &end, 10);
                if (*end || k < 1 || k > 1000)
                    break;
                wl->drop_route = routes[i].r;
                wl->drop_n = (int)k;
                return 0;
            }
        }
    }
    return exa_err(err, EXA_EUSAGE,
                   "EXAMLOPS_WORKER_FAULT '%s': expected "
                   "drop_reply|busy_reply:register|heartbeat|lease|results:N, "
                   "sqlite_busy:N or crash_after_sbatch",
                   v);
}

/* Split HOST:PORT and resolve it; refuse wildcards. */
static struct addrinfo *resolve(const char *listen, int *loopback,
                                exa_error_t *err)
{
    struct addrinfo hints, *res = NULL;
    char host[256], port[16];
    const char *colon = strrchr(listen, ':'), *h = listen;
    size_t hl;
    int gai;
    if (!colon || !colon[1] || strlen(colon + 1) >= sizeof(port)) {
        exa_err(err, EXA_EUSAGE,
                "invalid worker listen address '%s': expected HOST:PORT",
                listen);
        return NULL;
    }
    hl = (size_t)(colon - listen);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= sizeof(host)) {
        exa_err(err, EXA_EUSAGE,
                "invalid worker listen address '%s': expected HOST:PORT",
                listen);
        return NULL;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    memcpy(port, colon + 1, strlen(colon + 1) + 1);
    if (!strcmp(host, "0.0.0.0") || !strcmp(host, "::") || !strcmp(host, "*")) {
        exa_err(err, EXA_EUSAGE,
                "worker listen address '%s' is a wildcard: name the one "
                "address compute nodes reach",
                listen);
        return NULL;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0 || !res) {
        exa_err(err, EXA_EUSAGE,
                "cannot resolve worker listen address '%s': %s", listen,
                gai_strerror(gai));
        return NULL;
    }
    *loopback = 0;
    if (res->ai_family == AF_INET)
        *loopback =
            (ntohl(((const struct sockaddr_in *)(const void *)res->ai_addr)
                       ->sin_addr.s_addr) >>
             24) == 127;
    else if (res->ai_family == AF_INET6)
        *loopback = IN6_IS_ADDR_LOOPBACK(
            &((const struct sockaddr_in6 *)(const void *)res->ai_addr)
                 ->sin6_addr);
    return res;
}

/* resolve() plus the loopback / TLS / insecure_http rule */
static struct addrinfo *checked(const struct worker_listen_opts *o,
                                exa_error_t *err)
{
    int loopback = 0;
    struct addrinfo *res = resolve(o->listen, &loopback, err);
    if (res && !loopback && !o->tls_cert_pem && !o->insecure_http) {
        freeaddrinfo(res);
        exa_err(err, EXA_EUSAGE,
                "refusing to serve workers on '%s' beyond loopback without "
                "TLS: give --worker-tls-cert FILE --worker-tls-key FILE, or "
                "--worker-insecure-http on a trusted network",
                o->listen);
        return NULL;
    }
    return res;
}

int worker_listen_check(const struct worker_listen_opts *o, exa_error_t *err)
{
    struct addrinfo *res = checked(o, err);
    if (!res)
        return -1;
    freeaddrinfo(res);
    return 0;
}

struct worker_listener *
worker_listener_start(const struct worker_listen_opts *o, exa_error_t *err)
{
    struct worker_listener *wl;
    struct te_opts to;
    struct addrinfo *res;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    const union MHD_DaemonInfo *info;
    struct MHD_OptionItem tls[4] = {{MHD_OPTION_END, 0, NULL}};

    te_opts_default(&to);
    to.log = engine_log;
    if (env_secs("EXAMLOPS_WORKER_HEARTBEAT_S", &to.heartbeat_s, err) < 0 ||
        env_secs("EXAMLOPS_WORKER_LEASE_TTL_S", &to.lease_ttl_s, err) < 0 ||
        env_secs("EXAMLOPS_WORKER_LONGPOLL_S", &to.longpoll_s, err) < 0 ||
        env_secs("EXAMLOPS_WORKER_MAX_IDLE_S", &to.max_idle_s, err) < 0 ||
        env_secs("EXAMLOPS_WORKER_ENGINE_LOST_S", &to.engine_lost_s, err) < 0 ||
        env_secs("EXAMLOPS_WORKER_JOIN_SKEW_S", &to.join_skew_s, err) < 0 ||
        env_secs("EXAMLOPS_WORKER_RESTART_GRACE_S", &to.restart_grace_s, err) <
            0)
        return NULL;
    if (dl_mhd_load(err) < 0)
        return NULL;
    if (!(res = checked(o, err)))
        return NULL;
    if (o->tls_cert_pem) {
        if (dl_mhd.is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            freeaddrinfo(res);
            exa_err(err, EXA_ECONFIG,
                    "this libmicrohttpd was built without TLS");
            return NULL;
        }
        flags |= MHD_USE_TLS;
    }
    wl = xcalloc(1, sizeof(*wl));
    pthread_mutex_init(&wl->mu, NULL);
    pthread_mutex_init(&wl->mmu, NULL);
    pthread_cond_init(&wl->cv, NULL);
    if (parse_fault(wl, &to, err) < 0)
        goto fail;
    wl->db_path = o->db_path ? xstrdup(o->db_path) : NULL;
    wl->st = store_open(o->db_path, err);
    if (!wl->st)
        goto fail;
    wl->e = te_open(wl->st, &to, err);
    if (!wl->e)
        goto fail;
    if (store_engine_set(wl->st, "worker_pin", o->pin ? o->pin : "", err) < 0)
        goto fail;
    if (o->tls_cert_pem) {
        /* libmicrohttpd keeps the pointers: the listener owns copies */
        wl->cert = xstrdup(o->tls_cert_pem);
        wl->key = xstrdup(o->tls_key_pem);
    }
    if (res->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (wl->cert) {
        tls[0] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, wl->cert};
        tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, wl->key};
        /* TLS 1.2 and 1.3 only (GnuTLS priority strings), as server/http.c */
        tls[2] = (struct MHD_OptionItem){
            MHD_OPTION_HTTPS_PRIORITIES, 0,
            (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"};
    }
    wl->d = dl_mhd.start_daemon(flags, 0, NULL, NULL, on_request, wl,
                                MHD_OPTION_SOCK_ADDR, res->ai_addr,
                                MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)90,
                                MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024,
                                MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!wl->d) {
        exa_err(err, EXA_ECONFIG, "cannot listen on '%s': %s", o->listen,
                errno ? strerror(errno) : "bind failed");
        goto fail;
    }
    freeaddrinfo(res);
    res = NULL;
    info = dl_mhd.get_daemon_info(wl->d, MHD_DAEMON_INFO_BIND_PORT);
    wl->port = info ? info->port : 0;
    wl->tick_s = to.heartbeat_s / 4 < 0.5 ? to.heartbeat_s / 4 : 0.5;
    if (pthread_create(&wl->ticker, NULL, ticker, wl) == 0)
        wl->ticking = 1;
    {
        struct prov_config cfg, copy;
        int found = prov_config_load(NULL, &cfg, err);
        if (found < 0)
            goto fail;
        if (found && cfg.n) {
            wl->prov_tick_s = 2;
            if (env_secs("EXAMLOPS_PROVISION_TICK_S", &wl->prov_tick_s, err) <
                    0 ||
                !(wl->pst = store_open(o->db_path, err))) {
                prov_config_release(&cfg);
                goto fail;
            }
            /* a second parse for shutdown, which outlives the thread */
            found = prov_config_load(NULL, &copy, err);
            if (found < 0) {
                prov_config_release(&cfg);
                goto fail;
            }
            wl->pcfg = copy;
            wl->prov = prov_new(wl->pst, te_engine_id(wl->e), &cfg, NULL, NULL);
            prov_set_token_slack(wl->prov, to.join_skew_s);
            if (pthread_create(&wl->pthread, NULL, prov_main, wl) == 0)
                wl->proving = 1;
        } else {
            prov_config_release(&cfg);
        }
    }
    return wl;
fail:
    if (res)
        freeaddrinfo(res);
    worker_listener_stop(wl);
    return NULL;
}

int worker_listener_metrics(struct worker_listener *wl, struct strbuf *out,
                            exa_error_t *err)
{
    int rc = -1;
    pthread_mutex_lock(&wl->mmu);
    if (!wl->mst)
        wl->mst = store_open(wl->db_path, err);
    if (wl->mst)
        rc = worker_metrics_render(wl->e, wl->prov, wl->mst, out, err);
    pthread_mutex_unlock(&wl->mmu);
    return rc;
}

int worker_listener_port(const struct worker_listener *wl)
{
    return wl->port;
}

task_engine_t *worker_listener_engine(struct worker_listener *wl)
{
    return wl->e;
}

void worker_listener_stop(struct worker_listener *wl)
{
    if (!wl)
        return;
    pthread_mutex_lock(&wl->mu);
    wl->stop = 1;
    pthread_cond_broadcast(&wl->cv);
    pthread_mutex_unlock(&wl->mu);
    if (wl->ticking)
        pthread_join(wl->ticker, NULL);
    if (wl->proving) {
        pthread_join(wl->pthread, NULL);
        /* stop asking, and cancel what was asked for and not attached */
        prov_shutdown_store(wl->pst, &wl->pcfg, NULL, 0, te_wallclock(NULL),
                            NULL);
    }
    prov_free(wl->prov);
    prov_config_release(&wl->pcfg);
    store_close(wl->pst);
    store_close(wl->mst);
    pthread_mutex_destroy(&wl->mmu);
    free(wl->db_path);
    if (wl->d) {
        /* parked long-polls answer 204 first so the daemon can stop */
        if (wl->e)
            te_shutdown(wl->e);
        dl_mhd.stop_daemon(wl->d);
    }
    te_close(wl->e);
    store_close(wl->st);
    free(wl->cert);
    if (wl->key) {
        memset(wl->key, 0, strlen(wl->key));
        free(wl->key);
    }
    pthread_cond_destroy(&wl->cv);
    pthread_mutex_destroy(&wl->mu);
    free(wl);
}
