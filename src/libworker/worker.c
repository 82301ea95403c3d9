/*
 * worker.c - the dial-back worker (worker.h).
 *
 * Four threads, each with its own libcurl handle, share one table of
 * attempts under a mutex: the main thread registers, long-polls for
 * leases and starts tasks; the heartbeat thread reports what runs and
 * obeys revoke and drain; the reaper waits for task processes, uploads
 * their outputs and posts results until the engine has them; the signal
 * thread turns SIGUSR1/SIGTERM/SIGINT into a drain. Tasks are separate
 * processes, so none of them can stall a heartbeat.
 *
 * Every call retries network failures (jittered exponential backoff,
 * 1 s .. 30 s, +-20 %) and 503/429 (their Retry-After, +-20 %) for up to
 * engine_lost_s in all, and stops retrying at once on SIGTERM/SIGINT
 * (the signal thread runs from before the first registration, so a
 * worker whose engine never answers still ends on scancel) - except the
 * post of a finished task's result, which goes on retrying for up to
 * TERM_GRACE_S after the signal so that a task that ended just then is
 * not run again. A 410 means the engine declared this worker lost: its
 * tasks are killed (they were leased again elsewhere) and it rejoins
 * with its session, unless it was told to stop (SIGTERM/SIGINT): then it
 * exits. SIGHUP from outside is ignored: the worker's own SIGHUP, which
 * ends the signal thread at exit, is sent after w->stop is set.
 */
#include "libworker/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libtask/proto.h"
#include "libworker/dl_curl_int.h"
#include "libutil/dl_crypto_int.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

extern char **environ;

enum astate { A_RUNNING, A_DONE, A_REPORTED };

/* seconds after SIGTERM/SIGINT during which a finished task's result is
 * still posted and retried (Slurm's KillWait is 30 s by default) */
#define TERM_GRACE_S 20.0

struct attempt {
    long long task, attempt;
    struct tp_spec spec;
    pid_t pid; /* the shim; 0 for noop or not started */
    double started, ended;
    enum astate state;
    int revoked;
    char *dir;
    json_t *result; /* the result item once done */
    struct attempt *next;
};

struct worker {
    struct worker_opts *o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *session;
    unsigned session_gen;
    int need_rejoin;
    int draining, drain_posted, stop, fatal;
    int term;       /* SIGTERM: kill tasks now */
    double term_at; /* when term was set */
    double heartbeat_s, longpoll_s, max_idle_s, engine_lost_s;
    double started, idle_since, end_time;
    int engine_gone; /* heartbeats unanswered past engine_lost_s */
    struct attempt *list;
    int nrunning;
    char nonce[33];
    exa_error_t err;
    int exit_code;
    int untrusted; /* TLS trust failure or a scheme the listener does not
                    * speak: exit 1 with trust_err */
    exa_error_t trust_err; /* under mu */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts;
    if (s <= 0)
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void logf_(struct worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void logf_(struct worker *w, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    if (!w->o->log)
        return;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    w->o->log(w->o->log_ctx, sb.buf);
    strbuf_release(&sb);
}

/* ---- HTTP ---- */

struct buf {
    struct strbuf sb;
};

static size_t on_body(char *p, size_t size, size_t n, void *cls)
{
    struct strbuf *sb = cls;
    if (sb->len + size * n > TP_MAX_BODY * 2)
        return 0;
    strbuf_add(sb, p, size * n);
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *cls)
{
    int *retry = cls;
    size_t len = size * n;
    if (len > 12 && !strncasecmp(p, "Retry-After:", 12))
        *retry = (int)strtol(p + 12, NULL, 10);
    return len;
}

struct call {
    long status; /* 0: network failure */
    json_t *body;
    int retry_after;
    int untrusted;   /* the engine's certificate or key was refused, or
                      * the listener speaks the other scheme */
    exa_error_t why; /* its cause when untrusted */
};

/*
 * The TLS failures that no retry can mend: the engine's key is not the
 * pinned one, or (without --pin) its certificate does not verify. They
 * end the worker at once (exit 1) with this cause, never counted as an
 * outage; NULL for every other code (handshake resets, timeouts, refused
 * connections are retried).
 */
static const char *trust_failure(CURLcode rc, int pinned)
{
    switch (rc) {
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        return "public key does not match --pin";
    case CURLE_PEER_FAILED_VERIFICATION:
        return pinned ? "certificate refused"
                      : "certificate not trusted (self-signed? give "
                        "--pin sha256//...)";
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
        return "certificate refused";
    default:
        return NULL;
    }
}

/*
 * Whether the worker listener behind url answers in the other scheme:
 * url's host and port asked for GET /v1/ping over https when url is
 * http://, over http when it is https:// (no session, no token, no
 * certificate check: it only asks which protocol the port speaks).
 * 1 when an HTTP status came back, else 0.
 */
static int speaks_other_scheme(const char *url)
{
    int https = !strncmp(url, "https://", 8);
    const char *rest = url + (https ? 8 : 7);
    char *probe = xstrfmt("%s://%.*s/v1/ping", https ? "http" : "https",
                          (int)strcspn(rest, "/?#"), rest);
    struct strbuf sink = STRBUF_INIT;
    CURL *h = dl_curl.easy_init();
    long status = 0;
    if (h) {
        dl_curl.easy_setopt(h, CURLOPT_URL, probe);
        dl_curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        dl_curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
        dl_curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
        dl_curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        dl_curl.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        dl_curl.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        dl_curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        dl_curl.easy_setopt(h, CURLOPT_WRITEDATA, &sink);
        if (dl_curl.easy_perform(h) == CURLE_OK)
            dl_curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        dl_curl.easy_cleanup(h);
    }
    strbuf_release(&sink);
    free(probe);
    return status >= 100 && status <= 599;
}

/*
 * A scheme that the listener does not speak: an https:// URL whose
 * handshake failed (a plain HTTP listener answers a ClientHello with an
 * HTTP 400, which OpenSSL reads as "wrong version number"), or an http://
 * URL that got no reply or a garbled one (libmicrohttpd over TLS closes a
 * plaintext connection without a byte). Confirmed by speaks_other_scheme;
 * then no retry can mend it. Returns the cause (static) or NULL.
 */
static const char *scheme_mismatch(const char *url, CURLcode rc)
{
    int https = !strncmp(url, "https://", 8);
    if (https ? rc != CURLE_SSL_CONNECT_ERROR
              : rc != CURLE_GOT_NOTHING && rc != CURLE_RECV_ERROR &&
                    rc != CURLE_WEIRD_SERVER_REPLY)
        return NULL;
    if (!speaks_other_scheme(url))
        return NULL; /* nothing answers either way: an outage */
    return https ? "the TLS handshake failed; the worker listener speaks http"
                 : "no HTTP reply; the worker listener speaks https";
}

/* One request; body NULL for no body; upload_fd >= 0 streams a file. */
static void call_once(struct worker *w, CURL *h, const char *method,
                      const char *path, const char *body, int upload_fd,
                      long long upload_len, const char *sha, double timeout_s,
                      struct call *out)
{
    struct strbuf resp = STRBUF_INIT;
    struct curl_slist *hdr = NULL;
    char *url = xstrfmt("%s%s", w->o->url, path), *auth = NULL, *x;
    FILE *up = NULL;
    CURLcode rc;
    out->status = 0;
    out->body = NULL;
    out->retry_after = 0;
    out->untrusted = 0;
    dl_curl.easy_reset(h);
    dl_curl.easy_setopt(h, CURLOPT_URL, url);
    dl_curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    dl_curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    dl_curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
    dl_curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    dl_curl.easy_setopt(h, CURLOPT_WRITEDATA, &resp);
    dl_curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    dl_curl.easy_setopt(h, CURLOPT_HEADERDATA, &out->retry_after);
    dl_curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (w->o->pin) {
        /* the pin is the trust (WORKERS.md §5.2): the engine's key must be
         * the pinned one, whoever signed its certificate and whatever
         * name it carries (a self-signed certificate of `exa serve` names
         * no CA, and compute nodes may reach it by an address it does not
         * list); curl checks the pin with peer verification off */
        dl_curl.easy_setopt(h, CURLOPT_PINNEDPUBLICKEY, w->o->pin);
        dl_curl.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        dl_curl.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    /* without --pin: curl's default CA and host name verification */
    dl_curl.easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    pthread_mutex_lock(&w->mu);
    if (w->session)
        auth = xstrfmt("Authorization: Bearer %s", w->session);
    pthread_mutex_unlock(&w->mu);
    if (auth)
        hdr = dl_curl.slist_append(hdr, auth);
    hdr = dl_curl.slist_append(hdr, "Expect:");
    if (upload_fd >= 0) {
        x = xstrfmt("X-Exa-Sha256: %s", sha);
        hdr = dl_curl.slist_append(hdr, x);
        free(x);
        x = xstrfmt("X-Exa-Worker: %s", w->o->worker_id);
        hdr = dl_curl.slist_append(hdr, x);
        free(x);
        up = fdopen(dup(upload_fd), "rb");
        dl_curl.easy_setopt(h, CURLOPT_UPLOAD, 1L);
        dl_curl.easy_setopt(h, CURLOPT_READDATA, up);
        dl_curl.easy_setopt(h, CURLOPT_INFILESIZE_LARGE,
                            (curl_off_t)upload_len);
    } else {
        hdr = dl_curl.slist_append(hdr, "Content-Type: application/json");
        dl_curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        if (body) {
            dl_curl.easy_setopt(h, CURLOPT_POSTFIELDS, body);
            dl_curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        } else if (!strcmp(method, "POST")) {
            dl_curl.easy_setopt(h, CURLOPT_POSTFIELDS, "");
        }
    }
    dl_curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    rc = dl_curl.easy_perform(h);
    if (rc == CURLE_OK) {
        dl_curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
        if (resp.len)
            out->body = json_loadb(resp.buf, resp.len, 0, NULL);
    } else if ((x = (char *)trust_failure(rc, w->o->pin != NULL)) ||
               (x = (char *)scheme_mismatch(w->o->url, rc))) {
        out->untrusted = 1;
        exa_err(&out->why, EXA_EFAIL, "engine %s: %s", w->o->url, x);
    } else {
        logf_(w, "%s %s: %s", method, path, dl_curl.easy_strerror(rc));
    }
    if (up)
        fclose(up);
    dl_curl.slist_free_all(hdr);
    if (auth) {
        dl_crypto()->OPENSSL_cleanse(auth, strlen(auth));
        free(auth);
    }
    free(url);
    strbuf_release(&resp);
}

/*
 * Wait up to s seconds before a retry (w->mu not held); 1 when the caller
 * must stop retrying: the end of the run (w->stop), or SIGTERM/SIGINT
 * (w->term) - at once without grace, TERM_GRACE_S after the signal with
 * it - at once or during the wait; else 0.
 */
static int pause_retry(struct worker *w, double s, int grace)
{
    double until = now_s() + s;
    int stop = 0;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        struct timespec ts;
        double t = now_s(), u = until;
        if (w->stop) {
            stop = 1;
            break;
        }
        if (w->term) {
            if (!grace || t >= w->term_at + TERM_GRACE_S) {
                stop = 1;
                break;
            }
            if (u > w->term_at + TERM_GRACE_S)
                u = w->term_at + TERM_GRACE_S;
        }
        if (t >= u)
            break;
        ts.tv_sec = (time_t)u;
        ts.tv_nsec = (long)((u - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return stop;
}

static const char *err_reason(const struct call *c)
{
    return jx_get_str(json_object_get(c->body, "error"), "reason", "");
}

/* Record a trust failure (call's untrusted): exit 1 with why. */
static void untrusted(struct worker *w, const exa_error_t *why)
{
    pthread_mutex_lock(&w->mu);
    if (!w->untrusted) {
        w->untrusted = 1;
        w->trust_err = *why;
    }
    w->fatal = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/*
 * call_once with retries: network failures, 429 and 503 are retried
 * (backoff, or the answer's Retry-After) for up to engine_lost_s counted
 * from the first failure. grace 1 (a result's post) keeps retrying for
 * TERM_GRACE_S after SIGTERM/SIGINT, grace 0 stops at the signal.
 * Returns 0 with out set to the answer (a 503/429 when told to stop), or
 * -1 when the engine stayed away or busy past engine_lost_s, or was
 * unreachable when told to stop (out->status 0 or the last 503/429;
 * out->body NULL), or at once when the engine's certificate or key is
 * refused (w->untrusted set: exit 1, never retried).
 */
static int call(struct worker *w, CURL *h, const char *method, const char *path,
                const char *body, double timeout_s, int grace, struct call *out)
{
    double first_fail = 0, backoff = 1;
    for (;;) {
        double wait;
        unsigned char r;
        call_once(w, h, method, path, body, -1, 0, NULL, timeout_s, out);
        if (out->status && out->status != 503 && out->status != 429)
            return 0;
        if (out->untrusted) { /* not an outage: no retry can mend it */
            untrusted(w, &out->why);
            return -1;
        }
        if (!first_fail)
            first_fail = now_s();
        if (out->status) {
            wait = out->retry_after > 0 ? out->retry_after : 1;
            logf_(w, "%s %s: %ld %s, retrying in %.0f s", method, path,
                  out->status, err_reason(out), wait);
        } else {
            wait = backoff;
            backoff = backoff * 2 > 30 ? 30 : backoff * 2;
        }
        if (now_s() - first_fail > w->engine_lost_s) {
            json_decref(out->body);
            out->body = NULL;
            return -1;
        }
        dl_crypto()->RAND_bytes(&r, 1);
        wait *= 0.8 + 0.4 * (double)r / 255.0;
        /* SIGTERM/SIGINT or the end of the run: no more retries (Slurm
         * sends SIGKILL KillWait seconds after SIGTERM) */
        if (pause_retry(w, wait, grace))
            return out->status ? 0 : -1; /* a 503/429 is the answer */
        json_decref(out->body);
        out->body = NULL;
    }
}

/* ---- registration ---- */

static char *register_body(struct worker *w)
{
    json_t *b = json_object(), *res = json_object(), *sl = json_object();
    json_t *labels = json_array();
    char host[256] = "";
    char *s;
    gethostname(host, sizeof(host) - 1);
    json_object_set_new(b, "protocol", json_integer(w->o->protocol));
    json_object_set_new(b, "worker_id", json_string(w->o->worker_id));
    if (w->o->join_token && !w->session)
        json_object_set_new(b, "join_token", json_string(w->o->join_token));
    json_object_set_new(b, "register_nonce", json_string(w->nonce));
    json_object_set_new(b, "exa_version", json_string(EXA_VERSION));
    json_object_set_new(b, "host", jx_str(host));
    json_object_set_new(b, "pid", json_integer(getpid()));
    if (w->o->slurm_job_id)
        json_object_set_new(sl, "job_id", json_string(w->o->slurm_job_id));
    if (w->o->node)
        json_object_set_new(sl, "node", jx_str(w->o->node));
    if (w->end_time > 0)
        json_object_set_new(sl, "end_time",
                            json_integer((long long)w->end_time));
    json_object_set_new(b, "slurm", sl);
    json_object_set_new(res, "cpus", json_integer(w->o->cpus));
    json_object_set_new(res, "gpus", json_integer(w->o->gpus));
    json_object_set_new(res, "ram_mb", json_integer(w->o->ram_mb));
    json_object_set_new(b, "resources", res);
    if (w->o->labels && *w->o->labels) {
        const char *p = w->o->labels;
        while (p && *p) {
            const char *c = strchr(p, ',');
            char *l = c ? xstrndup(p, (size_t)(c - p)) : xstrdup(p);
            json_array_append_new(labels, json_string(l));
            free(l);
            p = c ? c + 1 : NULL;
        }
    }
    json_object_set_new(b, "labels", labels);
    json_object_set_new(b, "capacity", json_integer(w->o->capacity));
    s = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return s;
}

/* Register (join) or rejoin (with the session); 0, or -1 with w->exit_code
 * and w->err set. */
static int do_register(struct worker *w, CURL *h)
{
    char *body = register_body(w);
    struct call c;
    int rc = call(w, h, "POST", "/v1/workers/register", body, 30, 0, &c);
    dl_crypto()->OPENSSL_cleanse(body, strlen(body));
    free(body);
    if (rc < 0 && w->untrusted) {
        w->exit_code = WORKER_EXIT_REFUSED;
        w->err = w->trust_err;
        return -1;
    }
    if (rc < 0) {
        w->exit_code = WORKER_EXIT_ENGINE_LOST;
        exa_err(&w->err, EXA_ETRANSPORT, "engine '%s' unreachable for %.0f s",
                w->o->url, w->engine_lost_s);
        return -1;
    }
    if (c.status == 201) {
        const char *s = jx_get_str(c.body, "session_token", NULL);
        pthread_mutex_lock(&w->mu);
        if (w->session) {
            dl_crypto()->OPENSSL_cleanse(w->session, strlen(w->session));
            free(w->session);
        }
        w->session = s ? xstrdup(s) : NULL;
        w->session_gen++;
        w->need_rejoin = 0;
        /* idle counts from here: time spent getting an answer (a busy
         * or restarting engine) is not idleness */
        w->idle_since = now_s();
        w->heartbeat_s = jx_get_num(c.body, "heartbeat_s", 15);
        w->longpoll_s = jx_get_num(c.body, "longpoll_s", 25);
        if (w->o->max_idle_s < 0)
            w->max_idle_s = jx_get_num(c.body, "max_idle_s", 300);
        if (w->o->engine_lost_s < 0)
            w->engine_lost_s = jx_get_num(c.body, "engine_lost_s", 600);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        logf_(w, "registered as '%s' (incarnation %lld, engine %s)",
              w->o->worker_id, jx_get_int(c.body, "incarnation", 0),
              jx_get_str(c.body, "engine_id", "?"));
        json_decref(c.body);
        if (w->o->join_token) {
            dl_crypto()->OPENSSL_cleanse(w->o->join_token,
                                         strlen(w->o->join_token));
            w->o->join_token[0] = '\0';
        }
        return 0;
    }
    if (c.status == 426) {
        w->exit_code = WORKER_EXIT_PROTOCOL;
        exa_err(&w->err, EXA_EUSAGE,
                "engine '%s' does not speak protocol %lld (426)", w->o->url,
                w->o->protocol);
    } else {
        w->exit_code = WORKER_EXIT_REFUSED;
        exa_err(&w->err, EXA_EFAIL, "engine '%s' refused registration: %ld %s",
                w->o->url, c.status, err_reason(&c));
    }
    json_decref(c.body);
    return -1;
}

/* ---- tasks ---- */

static void kill_attempt(struct attempt *a)
{
    if (a->pid > 0 && a->state == A_RUNNING)
        kill(a->pid, SIGTERM); /* the shim SIGKILLs the task's group */
}

static void kill_all(struct worker *w)
{
    for (struct attempt *a = w->list; a; a = a->next)
        if (a->state == A_RUNNING) {
            a->revoked = 1;
            kill_attempt(a);
        }
}

static char *tail_of(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    char *buf;
    ssize_t n;
    off_t off = 0;
    if (fd < 0)
        return xstrdup("");
    if (fstat(fd, &sb) == 0 && sb.st_size > TP_TAIL_MAX)
        off = sb.st_size - TP_TAIL_MAX;
    buf = xmalloc(TP_TAIL_MAX + 1);
    n = pread(fd, buf, TP_TAIL_MAX, off);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int sha_file(const char *path, char hex[65], long long *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
    unsigned mdlen = 0;
    EVP_MD_CTX *c;
    ssize_t n;
    if (fd < 0)
        return -1;
    c = dl_crypto()->EVP_MD_CTX_new();
    dl_crypto()->EVP_DigestInit_ex(c, dl_crypto()->EVP_sha256(), NULL);
    *size = 0;
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        dl_crypto()->EVP_DigestUpdate(c, buf, (size_t)n);
        *size += n;
    }
    dl_crypto()->EVP_DigestFinal_ex(c, md, &mdlen);
    dl_crypto()->EVP_MD_CTX_free(c);
    close(fd);
    for (unsigned i = 0; i < 32; i++)
        xsnprintf(hex + 2 * i, 3, "%02x", md[i]);
    return n < 0 ? -1 : 0;
}

/* Upload the outputs of a finished attempt and build its result item. */
static json_t *finish(struct worker *w, CURL *h, struct attempt *a, int status)
{
    json_t *r = json_object(), *arts = json_array();
    char *p, *t;
    const char *base = a->spec.cwd ? a->spec.cwd : a->dir;
    long long code = 0, sig = 0;
    if (a->spec.noop) {
        code = 0;
    } else {
        char *st = xstrfmt("%s/status", a->dir);
        char *s = tail_of(st);
        if (!strncmp(s, "exit ", 5))
            code = strtoll(s + 5, NULL, 10);
        else if (!strncmp(s, "signal ", 7))
            sig = strtoll(s + 7, NULL, 10);
        else if (WIFEXITED(status))
            code = WEXITSTATUS(status) == 0 ? -1 : WEXITSTATUS(status);
        else
            sig = WIFSIGNALED(status) ? WTERMSIG(status) : 9;
        free(s);
        free(st);
        if (code < -1 || code > 255)
            code = 255;
    }
    for (size_t i = 0; i < a->spec.noutputs && !code && !sig; i++) {
        char hex[65];
        long long size;
        char *f = a->spec.outputs_dir
                      ? xstrfmt("%s/%s/%s", base, a->spec.outputs_dir,
                                a->spec.outputs[i])
                      : xstrfmt("%s/%s", base, a->spec.outputs[i]);
        int fd;
        if (sha_file(f, hex, &size) == 0 &&
            (fd = open(f, O_RDONLY | O_CLOEXEC)) >= 0) {
            char *path = xstrfmt("/v1/tasks/%lld/attempts/%lld/artifacts/%s",
                                 a->task, a->attempt, a->spec.outputs[i]);
            struct call c;
            double backoff = 1, t0 = now_s();
            for (;;) {
                call_once(w, h, "PUT", path, NULL, fd, size, hex, 600, &c);
                json_decref(c.body);
                if (c.status && c.status != 503)
                    break;
                if (now_s() - t0 > w->engine_lost_s || w->stop ||
                    (w->term && now_s() > w->term_at + TERM_GRACE_S))
                    break;
                sleep_s(backoff);
                backoff = backoff * 2 > 30 ? 30 : backoff * 2;
            }
            close(fd);
            if (c.status == 200 || c.status == 201) {
                json_t *x = json_object();
                json_object_set_new(x, "name", json_string(a->spec.outputs[i]));
                json_object_set_new(x, "sha256", json_string(hex));
                json_object_set_new(x, "size", json_integer(size));
                json_array_append_new(arts, x);
            } else {
                logf_(w, "task %lld attempt %lld: upload of '%s' failed: %ld",
                      a->task, a->attempt, a->spec.outputs[i], c.status);
            }
            free(path);
        }
        free(f);
    }
    json_object_set_new(r, "task_id", json_integer(a->task));
    json_object_set_new(r, "attempt", json_integer(a->attempt));
    t = xstrfmt("%lld:%lld", a->task, a->attempt);
    json_object_set_new(r, "idem", json_string(t));
    free(t);
    json_object_set_new(r, "exit_code", json_integer(code));
    json_object_set_new(r, "signal", json_integer(sig));
    json_object_set_new(r, "started_at", jx_real(a->started));
    json_object_set_new(r, "ended_at", jx_real(a->ended));
    if (!a->spec.noop) {
        p = xstrfmt("%s/stdout", a->dir);
        t = tail_of(p);
        json_object_set_new(r, "stdout_tail", jx_str(t));
        free(t);
        free(p);
        p = xstrfmt("%s/stderr", a->dir);
        t = tail_of(p);
        json_object_set_new(r, "stderr_tail", jx_str(t));
        free(t);
        free(p);
    }
    json_object_set_new(r, "artifacts", arts);
    return r;
}

static int start_attempt(struct worker *w, struct attempt *a)
{
    struct strvec {
        char **v;
        size_t n, alloc;
    } args = {NULL, 0, 0}, env = {NULL, 0, 0};
    char ppid[24];
    pid_t pid;
    a->dir = xstrfmt("%s/%lld-%lld", w->o->spool, a->task, a->attempt);
    if (mkdir(a->dir, 0700) < 0 && errno != EEXIST)
        return -1;
    a->started = now_s();
    if (a->spec.noop) {
        a->ended = a->started;
        a->state = A_DONE;
        return 0;
    }
    xsnprintf(ppid, sizeof(ppid), "%d", (int)getpid());
#define PUSH(sv, x)                                                            \
    do {                                                                       \
        ALLOC_GROW((sv).v, (sv).n + 2, (sv).alloc);                            \
        (sv).v[(sv).n++] = (x);                                                \
        (sv).v[(sv).n] = NULL;                                                 \
    } while (0)
    PUSH(args, xstrdup(w->o->self_exe));
    PUSH(args, xstrdup("task-shim"));
    PUSH(args, xstrdup(ppid));
    PUSH(args, xstrdup(a->dir));
    PUSH(args, xstrdup(a->spec.cwd ? a->spec.cwd : a->dir));
    PUSH(args, xstrdup("--"));
    for (size_t i = 0; i < a->spec.argc; i++)
        PUSH(args, xstrdup(a->spec.argv[i]));
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "EXA_TASK_", 9))
            PUSH(env, xstrdup(*e));
    for (size_t i = 0; i < a->spec.nenv; i++)
        PUSH(env, xstrdup(a->spec.env[i]));
    PUSH(env, xstrfmt("EXA_TASK_ID=%lld", a->task));
    PUSH(env, xstrfmt("EXA_TASK_ATTEMPT=%lld", a->attempt));
    PUSH(env, xstrfmt("EXA_TASK_DIR=%s", a->dir));
    PUSH(env, xstrfmt("EXA_WORKER_ID=%s", w->o->worker_id));
#undef PUSH
    pid = fork();
    if (pid == 0) {
        execve(w->o->self_exe, args.v, env.v);
        _exit(127);
    }
    for (size_t i = 0; i < args.n; i++)
        free(args.v[i]);
    free(args.v);
    for (size_t i = 0; i < env.n; i++)
        free(env.v[i]);
    free(env.v);
    if (pid < 0)
        return -1;
    a->pid = pid;
    return 0;
}

/* ---- threads ---- */

static void *heartbeat_main(void *arg)
{
    struct worker *w = arg;
    CURL *h = dl_curl.easy_init();
    char *path = xstrfmt("/v1/workers/%s/heartbeat", w->o->worker_id);
    double fail_since = 0; /* first heartbeat the engine did not answer */
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct timespec ts;
        double t = now_s() + w->heartbeat_s;
        json_t *b = json_object(), *run = json_array();
        char *body;
        struct call c;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (w->stop || w->need_rejoin) {
            json_decref(b);
            json_decref(run);
            continue;
        }
        for (struct attempt *a = w->list; a; a = a->next) {
            json_t *x;
            if (a->state == A_REPORTED)
                continue;
            x = json_object();
            json_object_set_new(x, "task", json_integer(a->task));
            json_object_set_new(x, "attempt", json_integer(a->attempt));
            json_object_set_new(x, "pid_alive",
                                json_boolean(a->state == A_RUNNING));
            json_array_append_new(run, x);
        }
        json_object_set_new(b, "running", run);
        json_object_set_new(b, "free_slots",
                            json_integer(w->o->capacity - w->nrunning > 0
                                             ? w->o->capacity - w->nrunning
                                             : 0));
        body = json_dumps(b, JSON_COMPACT);
        json_decref(b);
        pthread_mutex_unlock(&w->mu);
        call_once(w, h, "POST", path, body, -1, 0, NULL, 10, &c);
        free(body);
        pthread_mutex_lock(&w->mu);
        /* a worker whose slots are all busy asks the engine nothing else:
         * the heartbeat is what notices an engine gone past engine_lost_s
         * (WORKERS.md §6.4: exit 75, its tasks killed) */
        if (!c.status) {
            double now = now_s();
            if (!fail_since)
                fail_since = now;
            if (now - fail_since > w->engine_lost_s && !w->engine_gone) {
                w->engine_gone = 1;
                pthread_cond_broadcast(&w->cv);
            }
        } else {
            fail_since = 0;
        }
        if (c.status == 200) {
            json_t *rv = json_object_get(c.body, "revoke");
            for (size_t i = 0; i < json_array_size(rv); i++) {
                json_t *x = json_array_get(rv, i);
                for (struct attempt *a = w->list; a; a = a->next)
                    if (a->task == jx_get_int(x, "task", 0) &&
                        a->attempt == jx_get_int(x, "attempt", 0)) {
                        a->revoked = 1;
                        kill_attempt(a);
                        logf_(w, "task %lld attempt %lld revoked: %s", a->task,
                              a->attempt, jx_get_str(x, "reason", "?"));
                    }
            }
            if (json_is_true(json_object_get(c.body, "drain")) &&
                !w->draining) {
                w->draining = 1;
                logf_(w, "the engine asks to drain");
            }
            w->heartbeat_s = jx_get_num(c.body, "heartbeat_s", w->heartbeat_s);
        } else if (c.status == 410) {
            w->need_rejoin = 1;
            pthread_cond_broadcast(&w->cv);
        } else if (c.status == 401 || c.status == 404) {
            w->fatal = 1;
            pthread_cond_broadcast(&w->cv);
        }
        json_decref(c.body);
    }
    pthread_mutex_unlock(&w->mu);
    free(path);
    dl_curl.easy_cleanup(h);
    return NULL;
}

/* Results in one POST at most (the engine takes 1..256, libtask/proto.h). */
#define WORKER_RESULTS_MAX 64

/* 1 when the idem of result (a result item) is a string of list. */
static int idem_listed(const json_t *list, const json_t *result)
{
    const char *idem = jx_get_str(result, "idem", "");
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v) && !strcmp(json_string_value(v), idem))
            return 1;
    }
    return 0;
}

/* Post done results until accepted (or stale/duplicate), every result
 * done by then in one request; reap children. */
static void *reaper_main(void *arg)
{
    struct worker *w = arg;
    CURL *h = dl_curl.easy_init();
    char *path = xstrfmt("/v1/workers/%s/results", w->o->worker_id);
    pthread_mutex_lock(&w->mu);
    while (!w->stop || w->nrunning) {
        struct attempt *todo[WORKER_RESULTS_MAX];
        size_t ntodo;
        int status = 0;
        pid_t pid;
        /* reap any finished shim */
        pthread_mutex_unlock(&w->mu);
        pid = waitpid(-1, &status, WNOHANG);
        pthread_mutex_lock(&w->mu);
        if (pid > 0) {
            for (struct attempt *a = w->list; a; a = a->next)
                if (a->pid == pid && a->state == A_RUNNING) {
                    a->ended = now_s();
                    a->state = a->revoked ? A_REPORTED : A_DONE;
                    a->pid = -status - 1; /* keep the wait status */
                    w->nrunning--;
                }
            pthread_cond_broadcast(&w->cv);
            continue;
        }
        ntodo = 0;
        for (struct attempt *a = w->list; a; a = a->next) {
            if (a->state == A_DONE && a->revoked) {
                a->state = A_REPORTED; /* the engine moved on */
                pthread_cond_broadcast(&w->cv);
            } else if (a->state == A_DONE && ntodo < WORKER_RESULTS_MAX) {
                todo[ntodo++] = a;
            }
        }
        if (!ntodo || w->need_rejoin) {
            struct timespec ts;
            double t = now_s() + 0.05;
            if (w->stop && !w->nrunning)
                break;
            ts.tv_sec = (time_t)t;
            ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
            pthread_cond_timedwait(&w->cv, &w->mu, &ts);
            continue;
        }
        for (size_t i = 0; i < ntodo; i++) {
            if (!todo[i]->result) {
                int st = todo[i]->pid < 0 ? -(todo[i]->pid + 1) : 0;
                pthread_mutex_unlock(&w->mu);
                todo[i]->result = finish(w, h, todo[i], st);
                pthread_mutex_lock(&w->mu);
            }
        }
        {
            /* every result done by now in one request (the engine takes
             * 1..256 a POST); the reply lists them by idem */
            json_t *b = json_object(), *arr = json_array(), *missing;
            char *body;
            struct call c;
            int rc;
            for (size_t i = 0; i < ntodo; i++)
                json_array_append(arr, todo[i]->result);
            json_object_set_new(b, "results", arr);
            body = json_dumps(b, JSON_COMPACT);
            json_decref(b);
            pthread_mutex_unlock(&w->mu);
            rc = call(w, h, "POST", path, body, 30, 1, &c);
            free(body);
            pthread_mutex_lock(&w->mu);
            if (rc < 0) {
                w->exit_code = WORKER_EXIT_ENGINE_LOST;
                w->fatal = 1;
                pthread_cond_broadcast(&w->cv);
                continue;
            }
            missing = json_object_get(c.body, "missing_artifacts");
            for (size_t i = 0; c.status == 200 && i < ntodo; i++) {
                struct attempt *a = todo[i];
                if (idem_listed(missing, a->result)) {
                    json_decref(a->result);
                    a->result = NULL; /* upload again */
                    continue;
                }
                a->state = A_REPORTED;
                w->idle_since = now_s();
                logf_(w, "task %lld attempt %lld reported: exit %lld", a->task,
                      a->attempt, jx_get_int(a->result, "exit_code", -1));
            }
            if (c.status == 410) {
                w->need_rejoin = 1;
            } else if (c.status == 401 || c.status == 404) {
                w->fatal = 1;
            } else if (c.status != 200) {
                logf_(w, "results for %zu task(s), the first %lld: %ld %s",
                      ntodo, todo[0]->task, c.status, err_reason(&c));
                for (size_t i = 0; i < ntodo; i++)
                    todo[i]->state = A_REPORTED;
            }
            json_decref(c.body);
            pthread_cond_broadcast(&w->cv);
        }
    }
    pthread_mutex_unlock(&w->mu);
    free(path);
    dl_curl.easy_cleanup(h);
    return NULL;
}

static void *signal_main(void *arg)
{
    struct worker *w = arg;
    sigset_t set;
    int sig;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    for (;;) {
        if (sigwait(&set, &sig) != 0)
            continue;
        pthread_mutex_lock(&w->mu);
        if (sig == SIGHUP) {
            /* our own wake-up at exit comes after w->stop is set; one
             * from outside is not a reason to stop */
            int mine = w->stop;
            if (!mine)
                logf_(w, "SIGHUP ignored");
            pthread_mutex_unlock(&w->mu);
            if (mine)
                break;
            continue;
        }
        if (sig == SIGCHLD) { /* a shim ended: wake the reaper */
            pthread_cond_broadcast(&w->cv);
            pthread_mutex_unlock(&w->mu);
            continue;
        }
        w->draining = 1;
        if (sig != SIGUSR1) {
            if (!w->term)
                w->term_at = now_s();
            w->term = 1;
            kill_all(w);
        }
        logf_(w, "signal %d: draining", sig);
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

static void free_attempts(struct worker *w)
{
    struct attempt *a = w->list, *n;
    for (; a; a = n) {
        n = a->next;
        tp_spec_release(&a->spec);
        json_decref(a->result);
        free(a->dir);
        free(a);
    }
    w->list = NULL;
}

static void post_simple(struct worker *w, CURL *h, const char *what,
                        const char *reason)
{
    char *path = xstrfmt("/v1/workers/%s/%s", w->o->worker_id, what);
    char *body = xstrfmt("{\"reason\":\"%s\"}", reason);
    struct call c;
    call_once(w, h, "POST", path, body, -1, 0, NULL, 10, &c);
    json_decref(c.body);
    free(path);
    free(body);
}

/* Take the lease answer's tasks into the table and start them. */
static void take_tasks(struct worker *w, json_t *tasks)
{
    for (size_t i = 0; i < json_array_size(tasks); i++) {
        json_t *t = json_array_get(tasks, i);
        struct attempt *a = xcalloc(1, sizeof(*a));
        exa_error_t err = EXA_ERROR_INIT;
        a->task = jx_get_int(t, "task_id", 0);
        a->attempt = jx_get_int(t, "attempt", 0);
        if (tp_spec_decode(json_object_get(t, "spec"), &a->spec, &err) < 0) {
            logf_(w, "task %lld: %s", a->task, err.text);
            a->spec.noop = 1; /* report it failed below */
        }
        a->state = A_RUNNING;
        a->next = w->list;
        w->list = a;
        w->nrunning++;
        if (start_attempt(w, a) < 0) {
            logf_(w, "task %lld: cannot start: %s", a->task, strerror(errno));
            a->state = A_DONE;
            a->ended = now_s();
            a->pid = -(127 << 8) - 1;
        }
        if (a->state == A_DONE)
            w->nrunning--;
        else
            logf_(w, "task %lld attempt %lld started (pid %d)", a->task,
                  a->attempt, (int)a->pid);
    }
    pthread_cond_broadcast(&w->cv);
}

int worker_run(struct worker_opts *o, exa_error_t *err)
{
    struct worker w;
    pthread_t hb, rp, sg;
    sigset_t set;
    CURL *h;
    char *lease_path;
    int pending;

    /* both libraries now, before any thread exists */
    if (dl_curl_load(err) < 0 || dl_crypto_load(err) < 0)
        return -1;
    memset(&w, 0, sizeof(w));
    w.o = o;
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    w.heartbeat_s = 15;
    w.longpoll_s = 25;
    w.max_idle_s = o->max_idle_s >= 0 ? o->max_idle_s : 300;
    w.engine_lost_s = o->engine_lost_s >= 0 ? o->engine_lost_s : 600;
    w.started = w.idle_since = now_s();
    if (o->walltime_s > 0)
        w.end_time = w.started + o->walltime_s;
    {
        unsigned char r[16];
        dl_crypto()->RAND_bytes(r, sizeof(r));
        for (int i = 0; i < 16; i++)
            xsnprintf(w.nonce + 2 * i, 3, "%02x", r[i]);
    }
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (mkdir(o->spool, 0700) < 0 && errno != EEXIST)
        return exa_err(err, EXA_ECONFIG, "cannot create spool '%s': %s",
                       o->spool, strerror(errno));
    h = dl_curl.easy_init();
    /* signals first: a SIGTERM while the engine is still unreachable
     * ends the registration retries at once */
    pthread_create(&sg, NULL, signal_main, &w);
    if (do_register(&w, h) < 0) {
        int term;
        pthread_mutex_lock(&w.mu);
        term = w.term;
        w.stop = 1; /* before the SIGHUP: see signal_main */
        pthread_mutex_unlock(&w.mu);
        pthread_kill(sg, SIGHUP);
        pthread_join(sg, NULL);
        dl_curl.easy_cleanup(h);
        if (term) { /* nothing ran: a clean exit, as after a drain */
            logf_(&w, "stopped by a signal before registering: exiting");
            return 0;
        }
        *err = w.err;
        return w.exit_code;
    }
    pthread_create(&hb, NULL, heartbeat_main, &w);
    pthread_create(&rp, NULL, reaper_main, &w);
    lease_path = xstrfmt("/v1/workers/%s/lease", o->worker_id);

    pthread_mutex_lock(&w.mu);
    for (;;) {
        double t = now_s();
        long long free_slots;
        struct call c;
        char *path, *body;
        int rc;
        pending = 0;
        for (struct attempt **pp = &w.list; *pp;) {
            struct attempt *a = *pp;
            if (a->state == A_REPORTED) { /* done with: forget it */
                *pp = a->next;
                tp_spec_release(&a->spec);
                json_decref(a->result);
                free(a->dir);
                free(a);
                continue;
            }
            pending++;
            pp = &a->next;
        }
        /* an attempt holds its slot until its result is recorded, as the
         * engine counts it */
        free_slots = o->capacity - pending;
        if (w.engine_gone) {
            w.exit_code = WORKER_EXIT_ENGINE_LOST;
            exa_err(&w.err, EXA_ETRANSPORT,
                    "engine '%s' unreachable for %.0f s", o->url,
                    w.engine_lost_s);
            break;
        }
        if (w.fatal) {
            if (!w.exit_code) {
                w.exit_code = WORKER_EXIT_REFUSED;
                exa_err(&w.err, EXA_EFAIL,
                        "the engine no longer knows worker '%s'", o->worker_id);
            }
            break;
        }
        if (w.need_rejoin && w.term) {
            /* told to stop: the engine has already moved its tasks on */
            kill_all(&w);
            logf_(&w, "the engine declared this worker lost after a signal: "
                      "exiting without rejoining");
            break;
        }
        if (w.need_rejoin) {
            kill_all(&w);
            logf_(&w, "the engine declared this worker lost: rejoining");
            pthread_mutex_unlock(&w.mu);
            rc = do_register(&w, h);
            pthread_mutex_lock(&w.mu);
            if (rc < 0)
                break;
            continue;
        }
        if (w.end_time > 0 && !w.draining && t >= w.end_time - o->drain_s) {
            w.draining = 1;
            logf_(&w, "walltime: draining");
        }
        if (w.draining) {
            if (!w.drain_posted) {
                w.drain_posted = 1;
                pthread_mutex_unlock(&w.mu);
                post_simple(&w, h, "drain", w.term ? "signal" : "walltime");
                pthread_mutex_lock(&w.mu);
            }
            if (!pending) {
                pthread_mutex_unlock(&w.mu);
                post_simple(&w, h, "bye", w.term ? "signal" : "drained");
                pthread_mutex_lock(&w.mu);
                logf_(&w, "drained: exiting");
                break;
            }
        } else if (!pending && t - w.idle_since >= w.max_idle_s) {
            pthread_mutex_unlock(&w.mu);
            post_simple(&w, h, "bye", "idle");
            pthread_mutex_lock(&w.mu);
            logf_(&w, "idle for %.0f s: exiting", w.max_idle_s);
            break;
        }
        if (w.draining || free_slots <= 0) {
            struct timespec ts;
            double u = now_s() + 0.2;
            ts.tv_sec = (time_t)u;
            ts.tv_nsec = (long)((u - (double)ts.tv_sec) * 1e9);
            pthread_cond_timedwait(&w.cv, &w.mu, &ts);
            continue;
        }
        {
            double wait = w.longpoll_s;
            if (!pending && w.max_idle_s - (t - w.idle_since) < wait)
                wait = w.max_idle_s - (t - w.idle_since);
            if (wait < 0)
                wait = 0;
            path = xstrfmt("%s?wait=%d", lease_path, (int)(wait + 0.999));
        }
        body = xstrfmt("{\"want\":%lld}", free_slots);
        pthread_mutex_unlock(&w.mu);
        rc = call(&w, h, "POST", path, body, w.longpoll_s + 30, 0, &c);
        free(path);
        free(body);
        pthread_mutex_lock(&w.mu);
        if (rc < 0 && w.untrusted) {
            w.exit_code = WORKER_EXIT_REFUSED;
            w.err = w.trust_err;
            break;
        }
        if (rc < 0) {
            w.exit_code = WORKER_EXIT_ENGINE_LOST;
            exa_err(&w.err, EXA_ETRANSPORT,
                    "engine '%s' unreachable for %.0f s", o->url,
                    w.engine_lost_s);
            break;
        }
        if (c.status == 200) {
            json_t *tasks = json_object_get(c.body, "tasks");
            if (json_is_true(json_object_get(c.body, "drain")))
                w.draining = 1;
            if (json_array_size(tasks))
                take_tasks(&w, tasks);
        } else if (c.status == 410) {
            w.need_rejoin = 1;
        } else if (c.status == 401 || c.status == 404) {
            w.fatal = 1;
        } else if (c.status != 204) {
            logf_(&w, "lease: %ld %s", c.status, err_reason(&c));
            pthread_mutex_unlock(&w.mu);
            sleep_s(1);
            pthread_mutex_lock(&w.mu);
        }
        json_decref(c.body);
        if (w.nrunning)
            w.idle_since = now_s();
    }
    /* orderly exit: every task group goes */
    w.stop = 1;
    kill_all(&w);
    pthread_cond_broadcast(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(hb, NULL);
    {
        /* give shims a moment, then make sure */
        double t0 = now_s();
        while (now_s() - t0 < 5) {
            int n;
            pthread_mutex_lock(&w.mu);
            n = w.nrunning;
            pthread_mutex_unlock(&w.mu);
            if (!n)
                break;
            sleep_s(0.05);
        }
        pthread_mutex_lock(&w.mu);
        for (struct attempt *a = w.list; a; a = a->next)
            if (a->pid > 0 && a->state == A_RUNNING)
                kill(a->pid, SIGKILL);
        w.nrunning = 0;
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
    }
    pthread_join(rp, NULL);
    pthread_kill(sg, SIGHUP);
    pthread_join(sg, NULL);
    free(lease_path);
    dl_curl.easy_cleanup(h);
    free_attempts(&w);
    if (w.session) {
        dl_crypto()->OPENSSL_cleanse(w.session, strlen(w.session));
        free(w.session);
    }
    if (w.exit_code)
        *err = w.err;
    return w.exit_code;
}

/* ---- the shim ---- */

static volatile pid_t shim_task_pgid;

/* SIGTERM/SIGINT (the worker's death signal, or a cancel): kill the
 * task's process group and reap the task itself before exiting, so that no
 * zombie of it is left to whichever ancestor inherits it (PID 1 of a
 * container may reap late or never). waitpid(2) and kill(2) are
 * async-signal-safe (signal-safety(7)); after SIGKILL the wait returns as
 * soon as the kernel has torn the task down. */
static void shim_on_term(int sig)
{
    int saved = errno;
    pid_t pg = shim_task_pgid;
    (void)sig;
    if (pg > 0) {
        kill(-pg, SIGKILL);
        while (waitpid(pg, NULL, 0) < 0 && errno == EINTR)
            ;
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
    errno = saved;
    _exit(128 + SIGTERM);
}

int worker_shim_main(int argc, char **argv)
{
    pid_t parent, pid;
    int status = 0, fd;
    char *dir, *cwd, *p;
    struct sigaction sa;
    sigset_t none;
    if (argc < 6 || strcmp(argv[4], "--"))
        return 2;
    parent = (pid_t)strtol(argv[1], NULL, 10);
    dir = argv[2];
    cwd = argv[3];
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = shim_on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    setsid();
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        return 1; /* the worker died before we could ask */
    pid = fork();
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        setpgid(0, 0);
        p = xstrfmt("%s/stdout", dir);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0)
            dup2(fd, 1);
        free(p);
        p = xstrfmt("%s/stderr", dir);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0)
            dup2(fd, 2);
        free(p);
        fd = open("/dev/null", O_RDONLY);
        if (fd >= 0)
            dup2(fd, 0);
        if (chdir(cwd) < 0) {
            fprintf(stderr, "exa task-shim: cannot enter '%s': %s\n", cwd,
                    strerror(errno));
            _exit(126);
        }
        execvp(argv[5], argv + 5);
        fprintf(stderr, "exa task-shim: cannot run '%s': %s\n", argv[5],
                strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    if (pid < 0)
        return 1;
    setpgid(pid, pid);
    shim_task_pgid = pid;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    kill(-pid, SIGKILL); /* what the task left behind */
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    p = xstrfmt("%s/status", dir);
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        char line[32];
        if (WIFEXITED(status))
            xsnprintf(line, sizeof(line), "exit %d\n", WEXITSTATUS(status));
        else
            xsnprintf(line, sizeof(line), "signal %d\n",
                      WIFSIGNALED(status) ? WTERMSIG(status) : 9);
        if (write(fd, line, strlen(line)) < 0)
            status = 1;
        close(fd);
    }
    free(p);
    return 0;
}
