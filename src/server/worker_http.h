/*
 * worker_http.h - the worker listener of `exa serve --worker-listen`
 * (shared/WORKERS.md §6): its own libmicrohttpd daemon, apart from the
 * admin API, the console and /metrics, carrying only the /v1/ worker
 * routes, so opening its port to a cluster network exposes nothing else.
 */
#ifndef EXA_WORKER_HTTP_H
#define EXA_WORKER_HTTP_H

#include "libtask/engine.h"
#include "libutil/error.h"

struct worker_listener;

struct worker_listen_opts {
    const char *listen;  /* "HOST:PORT"; port 0 picks a free one */
    int insecure_http;   /* allow plain HTTP beyond loopback */
    const char *db_path; /* NULL: EXAMLOPS_DB / the default */
    /* HTTPS (TLS 1.2/1.3) when both are set: PEM text, borrowed for the
     * call (libmicrohttpd copies nothing: the listener keeps its own) */
    const char *tls_cert_pem, *tls_key_pem;
    const char *pin; /* the certificate's pin (libutil/tlspin.h), or NULL */
};

/*
 * Check o->listen without binding anything: HOST:PORT, not a wildcard,
 * resolvable, and either loopback, or TLS (tls_cert_pem), or
 * insecure_http. 0, or -1 with err (EXA_EUSAGE naming the address).
 * worker_listener_start makes the same checks; exa serve calls this
 * first so that a refused worker address starts no listener at all.
 */
int worker_listen_check(const struct worker_listen_opts *o, exa_error_t *err);

/*
 * Open platform.db and the task engine (timers from te_opts_default(),
 * overridden by EXAMLOPS_WORKER_{HEARTBEAT,LEASE_TTL,LONGPOLL,MAX_IDLE,
 * ENGINE_LOST,JOIN_SKEW,RESTART_GRACE}_S), bind o->listen and start
 * serving and the expiry pass.
 * A wildcard address (0.0.0.0, ::) is refused, and so is any address
 * beyond loopback without TLS unless insecure_http is set. With TLS the
 * daemon speaks TLS 1.2 and 1.3 only (GnuTLS priorities, as the admin
 * API), and o->pin is recorded as engine_kv 'worker_pin' (an empty
 * value for plain HTTP) for `exa provision status`.
 * EXAMLOPS_WORKER_FAULT=drop_reply:ROUTE:N (route register, heartbeat,
 * lease, results) commits the first N requests of that route and then
 * closes the connection without an answer (tests of lost replies).
 * Returns the listener or NULL with err (EXA_EUSAGE bad address,
 * EXA_ECONFIG bind, database, or libmicrohttpd not loadable:
 * server/dl_mhd.h).
 */
struct worker_listener *
worker_listener_start(const struct worker_listen_opts *o, exa_error_t *err);
/* Append the workers' /metrics families (libprovision/metrics.h) to out;
 * thread-safe. 0 or -1 with err. */
struct strbuf;
int worker_listener_metrics(struct worker_listener *wl, struct strbuf *out,
                            exa_error_t *err);
/* The bound port. */
int worker_listener_port(const struct worker_listener *wl);
/* The engine (borrowed) for the /metrics families. */
task_engine_t *worker_listener_engine(struct worker_listener *wl);
/* Stop serving, stop the expiry pass, close the engine; NULL is fine. */
void worker_listener_stop(struct worker_listener *wl);

#endif
