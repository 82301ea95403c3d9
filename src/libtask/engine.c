/*
 * engine.c - the task engine (engine.h): the rules of WORKERS.md §6.3 and
 * §8 over the primitives of libstore/tasks.h.
 *
 * Every mutation is one BEGIN IMMEDIATE transaction that also writes its
 * events, and a worker is answered only after the commit: a result is
 * acknowledged once it is durable, a lease handed out once it is
 * recorded. Liveness is the only thing kept in memory (last_seen per
 * worker, written to the database at most once a minute); the expiry
 * pass runs on the injected clock so tests drive it without sleeping.
 */
#include "libtask/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stddef.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libhostlist/hostlist.h"
#include "libstore/provreq.h"
#include "libstore/tasks.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

enum mstate { MW_ATTACHED, MW_DRAINING, MW_LOST, MW_EXITED };

struct mworker {
    char id[TP_NAME_MAX + 1];
    char hash[65];
    enum mstate state;
    double last_seen, last_written;
    int restart_pending; /* not heard from since the engine opened */
    long long cpus, gpus, ram_mb, capacity, incarnation;
    char *labels, *cluster, *profile;
    double walltime_end;
    unsigned park_gen;
    /* black-hole detection: the last infrastructure-sign failures */
    struct bh_rec {
        double at;
        long long task, attempt;
    } bh[TE_BLACKHOLE_FAILURES];
    int nbh;
};

struct failrec {
    char peer[64];
    double since;
    int count;
};

struct task_engine {
    store_t *st;
    int alive_fd; /* the liveness lock (te_engine_running), LOCK_SH */
    int bell_fd;  /* the doorbell (te_ring), -1 when another engine has it */
    pthread_t bell_thread;
    struct te_opts o;
    char id[9];
    long long epoch;
    struct token_keys keys;
    char *artdir;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct mworker **w;
    size_t nw, aw;
    struct failrec fails[256];
    int closing;
    unsigned long long qgen;  /* bumped when this process requeues */
    int fault_busy;           /* requests left to fail as SQLITE_BUSY */
    unsigned fault_tick;      /* every other request meets it */
    pthread_mutex_t busy_mu;  /* the two below; e->mu is not always held */
    double busy_logged;       /* when a 503's cause was last logged */
    unsigned long busy_quiet; /* 503s since then, not logged */
    struct te_counters c;
};

double te_wallclock(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void te_opts_default(struct te_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->heartbeat_s = 15;
    o->lease_ttl_s = 60;
    o->longpoll_s = 25;
    o->max_idle_s = 300;
    o->engine_lost_s = 600;
    o->restart_grace_s = 30;
    o->join_skew_s = 120;
}

static double now_of(const task_engine_t *e)
{
    return e->o.now ? e->o.now(e->o.now_ctx) : te_wallclock(NULL);
}

const char *te_engine_id(const task_engine_t *e)
{
    return e->id;
}

long long te_epoch(const task_engine_t *e)
{
    return e->epoch;
}

const struct te_opts *te_options(const task_engine_t *e)
{
    return &e->o;
}

const char *te_artifact_dir(const task_engine_t *e)
{
    return e->artdir;
}

const char *te_reg_result_name(enum te_reg_result r)
{
    static const char *const n[] = {
        "ok",           "expired",  "replayed",    "bad_signature",
        "wrong_worker", "protocol", "unknown_kid", "rate_limited"};
    return (unsigned)r < sizeof(n) / sizeof(n[0]) ? n[r] : "unknown";
}

void te_counters_get(task_engine_t *e, struct te_counters *out)
{
    pthread_mutex_lock(&e->mu);
    *out = e->c;
    pthread_mutex_unlock(&e->mu);
}

void te_reply_release(struct te_reply *r)
{
    json_decref(r->body);
    r->body = NULL;
}

static void reply(struct te_reply *r, int status, json_t *body)
{
    r->status = status;
    r->body = body;
    r->retry_after_s = 0;
}

static void reply_err(struct te_reply *r, int status, const char *code,
                      const char *reason)
{
    json_t *b = json_object(), *er = json_object();
    json_object_set_new(er, "code", json_string(code));
    json_object_set_new(er, "reason", jx_str(reason));
    json_object_set_new(b, "error", er);
    reply(r, status, b);
}

/*
 * BEGIN IMMEDIATE for a worker request, or the injected fault: until
 * o.fault_busy requests have failed, every other one fails as a locked
 * database does (so registration, leases, heartbeats and results all meet
 * it), taking the 503 + Retry-After path (WORKERS.md §13 T15). e->mu
 * held.
 */
static int req_begin(task_engine_t *e, exa_error_t *err)
{
    if (e->fault_busy > 0 && (e->fault_tick++ & 1) == 0) {
        e->fault_busy--;
        return exa_err(err, EXA_ECONFIG,
                       "database '%s': database is locked (fault sqlite_busy)",
                       e->st->path);
    }
    return store_begin(e->st, err);
}

/* seconds between two log lines naming the cause of a 503 */
#define BUSY_LOG_EVERY_S 10.0

/*
 * A database failure: 503 with Retry-After. The worker is told only that
 * the database is busy, never the engine's paths or SQLite's text; the
 * operator gets err's text in the engine's log (e->o.log), at most once
 * every BUSY_LOG_EVERY_S (engine clock), with the count of the 503s not
 * logged since the last line. e->mu held or not.
 */
static void reply_busy(task_engine_t *e, struct te_reply *r,
                       const exa_error_t *err)
{
    double now = now_of(e);
    char *line = NULL;
    pthread_mutex_lock(&e->busy_mu);
    if (!e->busy_logged || now - e->busy_logged >= BUSY_LOG_EVERY_S) {
        line = e->busy_quiet
                   ? xstrfmt("worker API: 503 (database busy): %s (and %lu "
                             "more in the last %.0f s)",
                             err->text[0] ? err->text : "unknown error",
                             e->busy_quiet, now - e->busy_logged)
                   : xstrfmt("worker API: 503 (database busy): %s",
                             err->text[0] ? err->text : "unknown error");
        e->busy_logged = now;
        e->busy_quiet = 0;
    } else {
        e->busy_quiet++;
    }
    pthread_mutex_unlock(&e->busy_mu);
    if (line && e->o.log)
        e->o.log(e->o.log_ctx, line);
    free(line);
    reply_err(r, 503, "unavailable", "the engine's database is busy");
    r->retry_after_s = 1 + (int)(time(NULL) % 4);
}

/* ---- events ---- */

static int event(task_engine_t *e, const char *kind, const struct mworker *w,
                 long long task, long long attempt, json_t *detail,
                 exa_error_t *err)
{
    char *d = detail ? jx_dumps_canonical(detail) : NULL;
    int rc = store_wevent_add(e->st, now_of(e), kind, w ? w->cluster : NULL,
                              w ? w->profile : NULL, w ? w->id : NULL, task,
                              attempt, d, err);
    free(d);
    json_decref(detail);
    return rc;
}

/* ---- the engine id ---- */

int task_engine_id(store_t *st, char out[9], exa_error_t *err)
{
    char *v = NULL;
    int found;
    if (store_begin(st, err) < 0)
        return -1;
    found = store_engine_get(st, "engine_id", &v, err);
    if (found < 0)
        goto fail;
    if (!found) {
        char hex[9];
        token_random_hex(hex, 4);
        if (store_engine_set(st, "engine_id", hex, err) < 0)
            goto fail;
        v = xstrdup(hex);
    }
    if (store_commit(st, err) < 0)
        goto fail;
    xsnprintf(out, 9, "%s", v);
    free(v);
    return 0;
fail:
    free(v);
    store_rollback(st);
    return -1;
}

/* ---- workers in memory ---- */

static enum mstate mstate_of(const char *s)
{
    if (s && !strcmp(s, "attached"))
        return MW_ATTACHED;
    if (s && !strcmp(s, "draining"))
        return MW_DRAINING;
    if (s && !strcmp(s, "lost"))
        return MW_LOST;
    return MW_EXITED;
}

static struct mworker *mw_find(task_engine_t *e, const char *id)
{
    for (size_t i = 0; i < e->nw; i++)
        if (!strcmp(e->w[i]->id, id))
            return e->w[i];
    return NULL;
}

static struct mworker *mw_set(task_engine_t *e, const struct worker_rec *r)
{
    struct mworker *w = mw_find(e, r->id);
    if (!w) {
        w = xcalloc(1, sizeof(*w));
        xsnprintf(w->id, sizeof(w->id), "%s", r->id);
        ALLOC_GROW(e->w, e->nw + 1, e->aw);
        e->w[e->nw++] = w;
    }
    free(w->labels);
    free(w->cluster);
    free(w->profile);
    xsnprintf(w->hash, sizeof(w->hash), "%s",
              r->session_hash ? r->session_hash : "");
    w->state = mstate_of(r->state);
    w->cpus = r->cpus;
    w->gpus = r->gpus;
    w->ram_mb = r->ram_mb;
    w->capacity = r->capacity;
    w->incarnation = r->incarnation;
    w->labels = xstrdup(r->labels ? r->labels : "");
    w->cluster = r->cluster ? xstrdup(r->cluster) : NULL;
    w->profile = r->profile ? xstrdup(r->profile) : NULL;
    w->walltime_end = r->walltime_end_at;
    return w;
}

static int mw_live(const struct mworker *w)
{
    return w && (w->state == MW_ATTACHED || w->state == MW_DRAINING);
}

/* ---- open / close ---- */

static int mkdir_p(const char *path)
{
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    free(p);
    return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    return xstrndup(path, (size_t)(slash - path));
}

/* The doorbell's abstract AF_UNIX name (unix(7): sun_path[0] == 0, no
 * file, gone with the process): "exa-engine-bell-" and the FNV-1a hash
 * of the database's real path, so that the CLI and the engine agree
 * whatever path spelling each was given. 0, or -1 when the path cannot
 * be resolved. */
static int bell_addr(const char *db_path, struct sockaddr_un *a, socklen_t *len)
{
    char *rp = realpath(db_path, NULL);
    unsigned long long h = 1469598103934665603ULL;
    int n;
    if (!rp)
        return -1;
    for (const unsigned char *p = (const unsigned char *)rp; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    free(rp);
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
                 "exa-engine-bell-%016llx", h);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    return 0;
}

/* The doorbell thread: every datagram (whatever its bytes: anyone on the
 * host may ring, and a ring only makes parked leases look again) wakes
 * the parked long-polls as a commit of the engine's own would; several
 * rings in a row are one wake-up. Polls every 200 ms for te_close. */
static void *bell_loop(void *arg)
{
    task_engine_t *e = arg;
    char buf[16];
    for (;;) {
        struct pollfd p = {e->bell_fd, POLLIN, 0};
        int r = poll(&p, 1, 200), rang = 0;
        pthread_mutex_lock(&e->mu);
        if (e->closing) {
            pthread_mutex_unlock(&e->mu);
            return NULL;
        }
        pthread_mutex_unlock(&e->mu);
        if (r <= 0)
            continue;
        while (recv(e->bell_fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
            rang = 1;
        if (!rang)
            continue;
        pthread_mutex_lock(&e->mu);
        e->qgen++;
        e->c.rings++;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
    }
}

/* Bind the doorbell and start its thread; without it (another engine on
 * the same database has the name, or no socket) the engine still sees
 * other processes' commits through PRAGMA data_version every 100 ms. */
static void bell_open(task_engine_t *e, const char *db_path)
{
    struct sockaddr_un a;
    socklen_t len;
    int fd;
    if (bell_addr(db_path, &a, &len) < 0)
        return;
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return;
    if (bind(fd, (struct sockaddr *)&a, len) < 0) {
        close(fd);
        return;
    }
    e->bell_fd = fd;
    if (pthread_create(&e->bell_thread, NULL, bell_loop, e) != 0) {
        close(fd);
        e->bell_fd = -1;
    }
}

void te_ring(const char *db_path)
{
    struct sockaddr_un a;
    socklen_t len;
    int fd;
    if (bell_addr(db_path, &a, &len) < 0)
        return;
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    (void)sendto(fd, "q", 1, MSG_DONTWAIT, (struct sockaddr *)&a, len);
    close(fd);
}

task_engine_t *te_open(store_t *st, const struct te_opts *o, exa_error_t *err)
{
    task_engine_t *e = xcalloc(1, sizeof(*e));
    char *ep = NULL, *kp, *dir;
    struct worker_rec *ws = NULL;
    size_t nws = 0;
    double now;
    int found;

    e->st = st;
    e->o = *o;
    e->alive_fd = -1;
    e->bell_fd = -1;
    e->fault_busy = o->fault_busy;
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->busy_mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    kp = o->keyfile ? xstrdup(o->keyfile) : token_key_path(st->path);
    if (token_keys_load(kp, &e->keys, err) < 0) {
        free(kp);
        goto fail;
    }
    free(kp);
    dir = dir_of(st->path);
    e->artdir = xstrfmt("%s/artifacts", dir);
    free(dir);
    {
        char *lp = te_alive_path(st->path);
        e->alive_fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (e->alive_fd < 0 || flock(e->alive_fd, LOCK_SH) < 0) {
            exa_err(err, EXA_ECONFIG, "cannot lock '%s': %s", lp,
                    strerror(errno));
            free(lp);
            goto fail;
        }
        free(lp);
    }
    bell_open(e, st->path);
    if (task_engine_id(st, e->id, err) < 0)
        goto fail;
    now = now_of(e);
    if (store_begin(st, err) < 0)
        goto fail;
    found = store_engine_get(st, "epoch", &ep, err);
    if (found < 0)
        goto rollback;
    e->epoch = (found ? strtoll(ep, NULL, 10) : 0) + 1;
    free(ep);
    ep = xstrfmt("%lld", e->epoch);
    if (store_engine_set(st, "epoch", ep, err) < 0 ||
        store_attempt_extend_all(st, now + o->lease_ttl_s + o->restart_grace_s,
                                 err) < 0 ||
        store_worker_list(st, &ws, &nws, err) < 0)
        goto rollback;
    for (size_t i = 0; i < nws; i++) {
        struct mworker *w = mw_set(e, &ws[i]);
        w->last_seen = now + o->restart_grace_s;
        w->last_written = now;
        w->restart_pending = mw_live(w);
    }
    worker_rec_free_list(ws, nws);
    ws = NULL;
    {
        json_t *d = json_object();
        json_object_set_new(d, "epoch", json_integer(e->epoch));
        if (event(e, "engine_started", NULL, TASK_NULL_INT, TASK_NULL_INT, d,
                  err) < 0)
            goto rollback;
    }
    if (store_commit(st, err) < 0)
        goto rollback;
    free(ep);
    return e;
rollback:
    store_rollback(st);
fail:
    free(ep);
    worker_rec_free_list(ws, nws);
    te_close(e);
    return NULL;
}

char *te_alive_path(const char *db_path)
{
    return xstrfmt("%s.engine-lock", db_path);
}

int te_engine_running(const char *db_path, exa_error_t *err)
{
    char *lp = te_alive_path(db_path);
    int fd = open(lp, O_RDONLY | O_CLOEXEC), rc = 0;
    if (fd < 0) {
        if (errno == ENOENT) { /* no engine ever ran on this database */
            free(lp);
            return 0;
        }
        rc = exa_err(err, EXA_ECONFIG, "cannot open '%s': %s", lp,
                     strerror(errno));
        free(lp);
        return rc;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        flock(fd, LOCK_UN); /* nobody holds it: no engine */
    else if (errno == EWOULDBLOCK)
        rc = 1;
    else
        rc = exa_err(err, EXA_ECONFIG, "cannot lock '%s': %s", lp,
                     strerror(errno));
    close(fd);
    free(lp);
    return rc;
}

void te_shutdown(task_engine_t *e)
{
    pthread_mutex_lock(&e->mu);
    e->closing = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

void te_close(task_engine_t *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->mu);
    e->closing = 1;
    pthread_cond_broadcast(&e->cv);
    while (e->c.parked > 0) {
        pthread_mutex_unlock(&e->mu);
        usleep(10000);
        pthread_mutex_lock(&e->mu);
    }
    pthread_mutex_unlock(&e->mu);
    if (e->bell_fd >= 0) { /* closing is set: the bell thread ends */
        shutdown(e->bell_fd, SHUT_RDWR); /* wakes its poll(2) */
        pthread_join(e->bell_thread, NULL);
        close(e->bell_fd);
    }
    for (size_t i = 0; i < e->nw; i++) {
        free(e->w[i]->labels);
        free(e->w[i]->cluster);
        free(e->w[i]->profile);
        free(e->w[i]);
    }
    free(e->w);
    free(e->artdir);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->busy_mu);
    memset(&e->keys, 0, sizeof(e->keys));
    if (e->alive_fd >= 0)
        close(e->alive_fd); /* releases the liveness lock */
    free(e);
}

/* ---- expiry and requeue ---- */

/*
 * End attempt a (open) of its task with outcome (lost, released,
 * revoked) and cause; when it is the task's live lease, the task goes
 * back to queued, or fails once the infrastructure budget is spent
 * (count_budget only for unexplained losses). Inside a transaction.
 */
static int end_lease(task_engine_t *e, const struct mworker *w,
                     const struct attempt_rec *a, const char *outcome,
                     const char *cause, int count_budget, exa_error_t *err)
{
    struct task_rec t;
    double now = now_of(e);
    int rc = -1;
    if (store_attempt_close(e->st, a->task_id, a->attempt, outcome, cause,
                            TASK_NULL_INT, TASK_NULL_INT, now, err) < 0)
        return -1;
    if (store_task_get(e->st, a->task_id, &t, err) < 0)
        return -1;
    if (!strcmp(outcome, "lost")) {
        json_t *d = json_object();
        json_object_set_new(d, "cause", json_string(cause));
        if (event(e, "lease_expired", w, a->task_id, a->attempt, d, err) < 0)
            goto out;
    }
    if (strcmp(t.state, "leased") || t.attempt != a->attempt) {
        rc = 0; /* the task moved on (done by a late result, cancelled) */
        goto out;
    }
    if (count_budget && t.infra_failures + 1 >= t.max_infra) {
        char *why = xstrfmt("worker_lost x%lld", t.infra_failures + 1);
        rc = store_task_set_state(e->st, t.id, "failed", why, TASK_NULL_INT,
                                  TASK_NULL_INT, TASK_NULL_INT, now, 0, 1, err);
        free(why);
        goto out;
    }
    if (store_task_set_state(e->st, t.id, "queued", NULL, TASK_NULL_INT,
                             TASK_NULL_INT, TASK_NULL_INT, 0, now, count_budget,
                             err) < 0)
        goto out;
    e->qgen++;
    {
        json_t *d = json_object();
        json_object_set_new(d, "attempt", json_integer(a->attempt + 1));
        json_object_set_new(d, "cause", json_string(cause));
        rc = event(e, "task_requeued", w, t.id, a->attempt, d, err);
    }
out:
    task_rec_release(&t);
    return rc;
}

static int expired_index(const char *cause)
{
    if (!strcmp(cause, "dead"))
        return 0;
    if (!strcmp(cause, "restart"))
        return 1;
    if (!strcmp(cause, "revoked") || !strcmp(cause, "timeout"))
        return 2;
    return 3;
}

/* End every open lease of w; inside a transaction. */
static int end_leases_of(task_engine_t *e, const struct mworker *w,
                         const char *outcome, const char *cause,
                         int count_budget, exa_error_t *err)
{
    struct attempt_rec *v = NULL;
    size_t n = 0;
    int rc = 0;
    if (store_attempt_open(e->st, w->id, &v, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = end_lease(e, w, &v[i], outcome, cause, count_budget, err);
        e->c.expired[expired_index(cause)]++;
    }
    attempt_rec_free_list(v, n);
    return rc;
}

static int lose_worker(task_engine_t *e, struct mworker *w, exa_error_t *err)
{
    const char *cause = w->restart_pending ? "restart" : "dead";
    double now = now_of(e);
    json_t *d = json_object();
    if (store_begin(e->st, err) < 0)
        return -1;
    if (store_worker_set_state(e->st, w->id, "lost", cause, now, err) < 0 ||
        end_leases_of(e, w, "lost", cause, !w->restart_pending, err) < 0)
        goto fail;
    json_object_set_new(d, "cause", json_string(cause));
    if (event(e, "worker_lost", w, TASK_NULL_INT, TASK_NULL_INT, d, err) < 0 ||
        store_commit(e->st, err) < 0)
        goto fail;
    w->state = MW_LOST;
    e->c.worker_lost++;
    return 1;
fail:
    store_rollback(e->st);
    return -1;
}

/* Open leases past timeout_s + 60 s, or whose worker is not live. */
static int sweep_leases(task_engine_t *e, exa_error_t *err)
{
    struct attempt_rec *v = NULL;
    size_t n = 0;
    int count = 0;
    double now = now_of(e);
    if (store_attempt_open(e->st, NULL, &v, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct mworker *w = mw_find(e, v[i].worker_id);
        struct task_rec t;
        const char *cause = NULL;
        int rc;
        if (store_task_get(e->st, v[i].task_id, &t, err) < 0)
            goto fail;
        if (now > v[i].leased_at + t.timeout_s + 60)
            cause = "timeout";
        else if (!mw_live(w) && now > v[i].lease_expires_at)
            cause = "dead";
        task_rec_release(&t);
        if (!cause)
            continue;
        if (store_begin(e->st, err) < 0)
            goto fail;
        if (!strcmp(cause, "timeout")) {
            rc = store_attempt_close(e->st, v[i].task_id, v[i].attempt,
                                     "revoked", "timeout", TASK_NULL_INT,
                                     TASK_NULL_INT, now, err);
            if (rc > 0)
                rc = store_task_set_state(
                    e->st, v[i].task_id, "failed", "timeout", TASK_NULL_INT,
                    TASK_NULL_INT, TASK_NULL_INT, now, 0, 0, err);
        } else {
            rc = end_lease(e, w, &v[i], "lost", cause, 1, err);
        }
        if (rc < 0 || store_commit(e->st, err) < 0) {
            store_rollback(e->st);
            goto fail;
        }
        e->c.expired[expired_index(cause)]++;
        count++;
    }
    attempt_rec_free_list(v, n);
    return count;
fail:
    attempt_rec_free_list(v, n);
    return -1;
}

int te_tick(task_engine_t *e, exa_error_t *err)
{
    int count = 0, rc;
    double now;
    pthread_mutex_lock(&e->mu);
    now = now_of(e);
    for (size_t i = 0; i < e->nw; i++) {
        struct mworker *w = e->w[i];
        if (!mw_live(w))
            continue;
        if (now - w->last_seen > e->o.lease_ttl_s) {
            if ((rc = lose_worker(e, w, err)) < 0)
                goto fail;
            count += rc;
            w->park_gen++;
        } else if (w->last_seen - w->last_written >= 60) {
            /* best effort; the next pass retries */
            if (store_worker_set_state(e->st, w->id,
                                       w->state == MW_DRAINING ? "draining"
                                                               : "attached",
                                       NULL, w->last_seen, NULL) == 0)
                w->last_written = w->last_seen;
        }
    }
    if ((rc = sweep_leases(e, err)) < 0)
        goto fail;
    count += rc;
    if (count)
        pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    return count;
fail:
    pthread_mutex_unlock(&e->mu);
    return -1;
}

/* ---- authentication ---- */

/*
 * The worker of a session request: 401 without or with a wrong session,
 * 404 unknown, 410 lost or exited. Marks it heard. NULL with out set.
 */
static struct mworker *auth(task_engine_t *e, const char *id,
                            const char *bearer, struct te_reply *out)
{
    struct mworker *w = mw_find(e, id);
    char h[65];
    if (!w) {
        reply_err(out, 404, "unknown_worker", "no such worker");
        return NULL;
    }
    if (!bearer || !*bearer) {
        reply_err(out, 401, "unauthorized", "bad_session");
        return NULL;
    }
    token_sha256_hex(bearer, strlen(bearer), h);
    if (!w->hash[0] || !token_equal(h, w->hash)) {
        reply_err(out, 401, "unauthorized", "bad_session");
        return NULL;
    }
    if (!mw_live(w)) {
        reply_err(out, 410, "worker_expired",
                  w->state == MW_LOST ? "lost" : "exited");
        return NULL;
    }
    w->last_seen = now_of(e);
    w->restart_pending = 0;
    return w;
}

static struct failrec *fail_slot(task_engine_t *e, const char *peer)
{
    struct failrec *oldest = &e->fails[0];
    for (size_t i = 0; i < sizeof(e->fails) / sizeof(e->fails[0]); i++) {
        if (!strcmp(e->fails[i].peer, peer))
            return &e->fails[i];
        if (e->fails[i].since < oldest->since)
            oldest = &e->fails[i];
    }
    memset(oldest, 0, sizeof(*oldest));
    xsnprintf(oldest->peer, sizeof(oldest->peer), "%s", peer);
    return oldest;
}

/* refusals from one address in a minute before its further refusals are
 * 429 (a valid token still registers) */
#define FAIL_LIMIT 10
/* refusals from one address in a minute before it is held back (429)
 * before its token is even verified: a flood costs no HMAC or SHA-256 */
#define FAIL_FLOOD 100

/* The refusals counted for peer in the current minute (e->mu held). */
static int fail_count(task_engine_t *e, const char *peer)
{
    struct failrec *f = fail_slot(e, peer ? peer : "-");
    double now = now_of(e);
    if (now - f->since > 60) {
        f->since = now;
        f->count = 0;
    }
    return f->count;
}

static int limited(task_engine_t *e, const char *peer)
{
    return fail_count(e, peer) >= FAIL_LIMIT;
}

static void note_failure(task_engine_t *e, const char *peer)
{
    struct failrec *f = fail_slot(e, peer ? peer : "-");
    double now = now_of(e);
    if (now - f->since > 60) {
        f->since = now;
        f->count = 0;
    }
    f->count++;
}

/* ---- register ---- */

static void refuse(task_engine_t *e, const char *peer, enum te_reg_result r,
                   const char *worker_id, struct te_reply *out)
{
    json_t *d = json_object();
    exa_error_t err = EXA_ERROR_INIT;
    struct mworker tmp;
    /* only failures are held back: a valid token from an address that
     * sent bad ones still registers (several workers behind one NAT or
     * login node), and a held-back failure writes no event */
    if (limited(e, peer)) {
        json_decref(d);
        note_failure(e, peer); /* counts toward FAIL_FLOOD */
        e->c.registrations[TE_REG_LIMITED]++;
        reply_err(out, 429, "rate_limited",
                  "too many failed registrations from this address");
        out->retry_after_s = 60;
        return;
    }
    memset(&tmp, 0, sizeof(tmp));
    if (worker_id && tp_name_ok(worker_id))
        xsnprintf(tmp.id, sizeof(tmp.id), "%s", worker_id);
    json_object_set_new(d, "reason", json_string(te_reg_result_name(r)));
    json_object_set_new(d, "peer", jx_str(peer));
    /* best effort: a refusal is answered even if the event is not kept */
    if (store_begin(e->st, &err) == 0) {
        if (event(e, "token_refused", tmp.id[0] ? &tmp : NULL, TASK_NULL_INT,
                  TASK_NULL_INT, d, &err) < 0 ||
            store_commit(e->st, &err) < 0)
            store_rollback(e->st);
    } else {
        json_decref(d);
    }
    note_failure(e, peer);
    e->c.registrations[r]++;
    reply_err(out, 401, "unauthorized", te_reg_result_name(r));
}

static json_t *register_body(task_engine_t *e, const struct mworker *w,
                             const char *session)
{
    json_t *b = json_object();
    json_object_set_new(b, "session_token", json_string(session));
    json_object_set_new(b, "worker_id", json_string(w->id));
    json_object_set_new(b, "incarnation", json_integer(w->incarnation));
    json_object_set_new(b, "engine_id", json_string(e->id));
    json_object_set_new(b, "engine_epoch", json_integer(e->epoch));
    json_object_set_new(b, "heartbeat_s", jx_real(e->o.heartbeat_s));
    json_object_set_new(b, "lease_ttl_s", jx_real(e->o.lease_ttl_s));
    json_object_set_new(b, "longpoll_s", jx_real(e->o.longpoll_s));
    json_object_set_new(b, "max_idle_s", jx_real(e->o.max_idle_s));
    json_object_set_new(b, "engine_lost_s", jx_real(e->o.engine_lost_s));
    return b;
}

static char *labels_join(char **v, size_t n)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (i)
            strbuf_addch(&sb, ',');
        strbuf_addstr(&sb, v[i]);
    }
    return strbuf_detach(&sb, NULL);
}

/* Write the worker row for r (a new incarnation when it existed) with a
 * fresh session; the session token goes to *session. In a transaction. */
static struct mworker *attach(task_engine_t *e, const struct tp_register *r,
                              const struct join_rec *j, long long incarnation,
                              char **session, exa_error_t *err)
{
    struct worker_rec w;
    struct mworker *m;
    char *tok = token_session_new();
    char h[65];
    double now = now_of(e);
    token_sha256_hex(tok, strlen(tok), h);
    worker_rec_init(&w);
    w.id = xstrdup(r->worker_id);
    w.request_id = j && j->request_id ? xstrdup(j->request_id) : NULL;
    w.cluster = j && j->cluster ? xstrdup(j->cluster) : NULL;
    w.profile = j && j->profile ? xstrdup(j->profile) : NULL;
    w.slurm_job_id = r->slurm_job_id ? xstrdup(r->slurm_job_id) : NULL;
    w.node = r->node ? xstrdup(r->node) : NULL;
    w.host = r->host ? xstrdup(r->host) : NULL;
    w.pid = r->pid;
    w.session_hash = xstrdup(h);
    w.incarnation = incarnation;
    w.state = xstrdup("attached");
    w.registered_at = now;
    w.last_seen_at = now;
    w.walltime_end_at = r->end_time;
    w.cpus = r->cpus;
    w.gpus = r->gpus;
    w.ram_mb = r->ram_mb;
    w.capacity = r->capacity;
    w.labels = labels_join(r->labels, r->nlabels);
    w.protocol = r->protocol;
    w.exa_version = r->exa_version ? xstrdup(r->exa_version) : NULL;
    if (store_worker_put(e->st, &w, err) < 0) {
        worker_rec_release(&w);
        free(tok);
        return NULL;
    }
    m = mw_set(e, &w);
    m->last_seen = m->last_written = now;
    m->restart_pending = 0;
    m->park_gen++;
    worker_rec_release(&w);
    *session = tok;
    return m;
}

static void register_join(task_engine_t *e, const struct tp_register *r,
                          const char *peer, struct te_reply *out)
{
    struct join_claims c;
    struct join_rec j;
    exa_error_t err = EXA_ERROR_INIT;
    enum token_refusal tr;
    struct mworker *m, *old;
    char *session = NULL;
    double now = now_of(e);
    int found, burned;
    long long inc = 1;
    json_t *d;

    memset(&j, 0, sizeof(j));
    tr = token_join_verify(&e->keys, r->join_token, now, e->o.join_skew_s, &c);
    if (tr != TOKEN_OK) {
        refuse(e, peer,
               tr == TOKEN_EXPIRED       ? TE_REG_EXPIRED
               : tr == TOKEN_UNKNOWN_KID ? TE_REG_UNKNOWN_KID
                                         : TE_REG_BAD_SIGNATURE,
               r->worker_id, out);
        return;
    }
    if (strcmp(c.engine_id, e->id)) {
        refuse(e, peer, TE_REG_BAD_SIGNATURE, r->worker_id, out);
        return;
    }
    if (strcmp(c.worker_id, r->worker_id)) {
        refuse(e, peer, TE_REG_WRONG_WORKER, r->worker_id, out);
        return;
    }
    if (req_begin(e, &err) < 0)
        goto busy;
    found = store_join_get(e->st, c.jti, &j, &err);
    if (found < 0)
        goto busy_rb;
    if (!found) {
        store_rollback(e->st);
        refuse(e, peer, TE_REG_BAD_SIGNATURE, r->worker_id, out);
        return;
    }
    burned = store_join_burn(e->st, c.jti, r->register_nonce, now, &err);
    if (burned < 0)
        goto busy_rb;
    old = mw_find(e, r->worker_id);
    if (!burned) {
        /* a retry of a registration whose answer was lost: same nonce
         * within 60 s gets a fresh session for the same incarnation */
        if (!j.register_nonce || strcmp(j.register_nonce, r->register_nonce) ||
            now - j.used_at > 60 || !old || !mw_live(old)) {
            store_rollback(e->st);
            join_rec_release(&j);
            refuse(e, peer, TE_REG_REPLAYED, r->worker_id, out);
            return;
        }
        inc = old->incarnation;
    } else if (old) {
        inc = old->incarnation + 1;
    }
    m = attach(e, r, &j, inc, &session, &err);
    if (!m)
        goto busy_rb;
    if (j.request_id && store_provreq_attach(e->st, j.request_id, &err) < 0)
        goto busy_rb;
    d = json_object();
    json_object_set_new(d, "incarnation", json_integer(inc));
    json_object_set_new(d, "time_to_attach_s", jx_real(now - j.created_at));
    json_object_set_new(d, "slurm_job_id", jx_str(r->slurm_job_id));
    if (event(e, "worker_attached", m, TASK_NULL_INT, TASK_NULL_INT, d, &err) <
            0 ||
        store_commit(e->st, &err) < 0)
        goto busy_rb;
    e->c.registrations[TE_REG_OK]++;
    reply(out, 201, register_body(e, m, session));
    free(session);
    join_rec_release(&j);
    return;
busy_rb:
    store_rollback(e->st);
busy:
    free(session);
    join_rec_release(&j);
    reply_busy(e, out, &err);
}

static void register_rejoin(task_engine_t *e, const struct tp_register *r,
                            const char *peer, const char *bearer,
                            struct te_reply *out)
{
    struct mworker *w = mw_find(e, r->worker_id), *m;
    exa_error_t err = EXA_ERROR_INIT;
    char h[65];
    char *session = NULL;
    struct join_rec j;
    struct worker_rec row;
    int found;
    if (!w || !bearer) {
        refuse(e, peer, TE_REG_BAD_SIGNATURE, r->worker_id, out);
        return;
    }
    token_sha256_hex(bearer, strlen(bearer), h);
    if (!w->hash[0] || !token_equal(h, w->hash) || w->state == MW_EXITED) {
        refuse(e, peer, TE_REG_BAD_SIGNATURE, r->worker_id, out);
        return;
    }
    memset(&j, 0, sizeof(j));
    if (req_begin(e, &err) < 0)
        goto busy;
    found = store_worker_get(e->st, w->id, &row, &err);
    if (found <= 0)
        goto busy_rb;
    j.request_id = row.request_id;
    j.cluster = row.cluster;
    j.profile = row.profile;
    /* a rejoining worker killed what it ran; its leases were ended when
     * it was declared lost, and any still open are released now */
    if (end_leases_of(e, w, "released", "rejoin", 0, &err) < 0)
        goto busy_rb_row;
    m = attach(e, r, &j, w->incarnation + 1, &session, &err);
    if (!m)
        goto busy_rb_row;
    {
        json_t *d = json_object();
        json_object_set_new(d, "incarnation", json_integer(m->incarnation));
        if (event(e, "worker_rejoined", m, TASK_NULL_INT, TASK_NULL_INT, d,
                  &err) < 0 ||
            store_commit(e->st, &err) < 0)
            goto busy_rb_row;
    }
    worker_rec_release(&row);
    e->c.registrations[TE_REG_OK]++;
    reply(out, 201, register_body(e, m, session));
    free(session);
    return;
busy_rb_row:
    worker_rec_release(&row);
busy_rb:
    store_rollback(e->st);
busy:
    free(session);
    if (!err.text[0])
        exa_err(&err, EXA_ECONFIG, "worker row missing");
    reply_busy(e, out, &err);
}

void te_register(task_engine_t *e, const char *body, size_t len,
                 const char *peer, const char *bearer, struct te_reply *out)
{
    struct tp_register r;
    exa_error_t err = EXA_ERROR_INIT;
    memset(&r, 0, sizeof(r));
    pthread_mutex_lock(&e->mu);
    /* the cheap pre-check: a flooding address is held back before its
     * body is decoded or its token verified, and the hold-back is not
     * counted (the window ends a minute after it began) */
    if (fail_count(e, peer) >= FAIL_FLOOD) {
        e->c.registrations[TE_REG_LIMITED]++;
        e->c.reg_held_back++;
        reply_err(out, 429, "rate_limited",
                  "too many failed registrations from this address");
        out->retry_after_s = 60;
        goto out;
    }
    if (tp_decode_register(body, len, &r, &err) < 0) {
        if (err.code == EXA_EUSAGE) {
            json_t *sup = json_array();
            json_array_append_new(sup, json_integer(TP_PROTOCOL));
            reply_err(out, 426, "protocol", err.text);
            json_object_set_new(json_object_get(out->body, "error"),
                                "supported", sup);
            e->c.registrations[TE_REG_PROTOCOL]++;
        } else {
            reply_err(out, 400, "bad_request", err.text);
        }
        goto out;
    }
    if (r.join_token)
        register_join(e, &r, peer, out);
    else
        register_rejoin(e, &r, peer, bearer, out);
out:
    pthread_mutex_unlock(&e->mu);
    tp_register_release(&r);
}

/* ---- heartbeat ---- */

static int drain_wanted(task_engine_t *e, struct mworker *w)
{
    struct worker_rec row;
    int found;
    if (w->state == MW_DRAINING)
        return 1;
    found = store_worker_get(e->st, w->id, &row, NULL);
    if (found <= 0)
        return 0;
    found = row.drain_requested;
    worker_rec_release(&row);
    return found;
}

void te_heartbeat(task_engine_t *e, const char *worker_id, const char *bearer,
                  const char *body, size_t len, struct te_reply *out)
{
    struct tp_heartbeat h;
    exa_error_t err = EXA_ERROR_INIT;
    struct mworker *w;
    struct attempt_rec *open = NULL;
    size_t nopen = 0;
    json_t *revoke = json_array(), *release = json_array(), *b;
    double now;
    char *seen = NULL;

    memset(&h, 0, sizeof(h));
    pthread_mutex_lock(&e->mu);
    if (!(w = auth(e, worker_id, bearer, out)))
        goto out;
    if (tp_decode_heartbeat(body, len, &h, &err) < 0) {
        reply_err(out, 400, "bad_request", err.text);
        goto out;
    }
    now = now_of(e);
    if (req_begin(e, &err) < 0)
        goto busy;
    if (store_attempt_open(e->st, w->id, &open, &nopen, &err) < 0)
        goto busy_rb;
    seen = xcalloc(nopen + 1, 1);
    for (size_t i = 0; i < h.nrunning; i++) {
        size_t k;
        for (k = 0; k < nopen; k++)
            if (open[k].task_id == h.running[i].task &&
                open[k].attempt == h.running[i].attempt)
                break;
        if (k < nopen) {
            seen[k] = 1;
        } else {
            struct attempt_rec a;
            int found = store_attempt_get(e->st, h.running[i].task,
                                          h.running[i].attempt, &a, &err);
            json_t *it = json_object();
            if (found < 0) {
                json_decref(it);
                goto busy_rb;
            }
            if (found && a.outcome &&
                (!strcmp(a.outcome, "ok") || !strcmp(a.outcome, "failed") ||
                 !strcmp(a.outcome, "late_ok"))) {
                /* finished and recorded: a report racing its result */
                json_decref(it);
                attempt_rec_release(&a);
                continue;
            }
            json_object_set_new(it, "task", json_integer(h.running[i].task));
            json_object_set_new(it, "attempt",
                                json_integer(h.running[i].attempt));
            json_object_set_new(it, "reason",
                                json_string(found && a.cause     ? a.cause
                                            : found && a.outcome ? a.outcome
                                                                 : "unknown"));
            json_array_append_new(revoke, it);
            if (found)
                attempt_rec_release(&a);
        }
    }
    /* leases granted but not reported after one heartbeat of grace: the
     * lease response was lost; release them (no budget used) */
    for (size_t k = 0; k < nopen; k++) {
        json_t *it;
        if (seen[k] || now - open[k].leased_at < 2 * e->o.heartbeat_s)
            continue;
        if (end_lease(e, w, &open[k], "released", "unreported", 0, &err) < 0)
            goto busy_rb;
        e->c.expired[3]++;
        it = json_object();
        json_object_set_new(it, "task", json_integer(open[k].task_id));
        json_object_set_new(it, "attempt", json_integer(open[k].attempt));
        json_array_append_new(release, it);
    }
    if (store_commit(e->st, &err) < 0)
        goto busy_rb;
    if (json_array_size(release))
        pthread_cond_broadcast(&e->cv);
    b = json_object();
    json_object_set_new(b, "heartbeat_s", jx_real(e->o.heartbeat_s));
    json_object_set_new(b, "drain", json_boolean(drain_wanted(e, w)));
    json_object_set_new(b, "revoke", revoke);
    json_object_set_new(b, "release", release);
    revoke = release = NULL;
    reply(out, 200, b);
    goto out;
busy_rb:
    store_rollback(e->st);
busy:
    reply_busy(e, out, &err);
out:
    pthread_mutex_unlock(&e->mu);
    json_decref(revoke);
    json_decref(release);
    free(seen);
    attempt_rec_free_list(open, nopen);
    tp_heartbeat_release(&h);
}

/* ---- lease ---- */

/* 1 when every label of the comma list want is in the comma list have or
 * equals name (a provisioned worker's profile, which counts as one of its
 * labels: WORKERS.md §9.2 step 3, "the label is in the profile's labels or
 * equals its name"; NULL for a worker of no profile). */
static int labels_fit(const char *want, const char *have, const char *name)
{
    const char *p = want;
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        const char *q = have;
        int ok = name && strlen(name) == n && !strncmp(p, name, n);
        while (!ok && q && *q) {
            const char *d = strchr(q, ',');
            size_t m = d ? (size_t)(d - q) : strlen(q);
            if (m == n && !strncmp(p, q, n)) {
                ok = 1;
                break;
            }
            q = d ? d + 1 : NULL;
        }
        if (!ok)
            return 0;
        p = c ? c + 1 : NULL;
    }
    return 1;
}

/* Lease up to n tasks to w into tasks (a JSON array); 0 or -1. */
static int try_lease(task_engine_t *e, struct mworker *w, long long n,
                     json_t *tasks, exa_error_t *err)
{
    struct task_rec *v = NULL;
    size_t nv = 0;
    double now = now_of(e), tmax = -1;
    long long got = 0;
    if (w->walltime_end > 0) {
        tmax = w->walltime_end - now - 60;
        if (tmax < 1)
            return 0;
    }
    if (req_begin(e, err) < 0)
        return -1;
    if (store_task_queued_fitting(e->st, w->cpus, w->gpus, w->ram_mb, tmax,
                                  w->cluster && *w->cluster ? w->cluster : NULL,
                                  n * 4 + 16, &v, &nv, err) < 0)
        goto fail;
    for (size_t i = 0; i < nv && got < n; i++) {
        long long a;
        json_t *it, *spec;
        if (!labels_fit(v[i].labels, w->labels, w->profile))
            continue;
        a = store_task_lease(e->st, v[i].id, w->id, now, now + e->o.lease_ttl_s,
                             err);
        if (a < 0)
            goto fail;
        if (a == 0)
            continue;
        spec = json_loads(v[i].spec, 0, NULL);
        it = json_object();
        json_object_set_new(it, "task_id", json_integer(v[i].id));
        json_object_set_new(it, "attempt", json_integer(a));
        json_object_set_new(it, "deadline_s", jx_real(v[i].timeout_s));
        json_object_set_new(it, "spec", spec ? spec : json_object());
        json_array_append_new(tasks, it);
        got++;
    }
    if (store_commit(e->st, err) < 0)
        goto fail;
    task_rec_free_list(v, nv);
    e->c.leases += (unsigned long long)got;
    return 0;
fail:
    store_rollback(e->st);
    task_rec_free_list(v, nv);
    json_array_clear(tasks);
    return -1;
}

static long long open_count(task_engine_t *e, const struct mworker *w,
                            exa_error_t *err)
{
    struct attempt_rec *v = NULL;
    size_t n = 0;
    if (store_attempt_open(e->st, w->id, &v, &n, err) < 0)
        return -1;
    attempt_rec_free_list(v, n);
    return (long long)n;
}

static void drain_reply(struct te_reply *out)
{
    json_t *b = json_object();
    json_object_set_new(b, "drain", json_true());
    json_object_set_new(b, "tasks", json_array());
    reply(out, 200, b);
}

void te_lease(task_engine_t *e, const char *worker_id, const char *bearer,
              const char *body, size_t len, double wait_s, struct te_reply *out)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct mworker *w;
    long long want0, want, used, dv;
    unsigned long long qg;
    json_t *tasks = json_array();
    struct timespec ts;
    double deadline;
    unsigned gen;

    pthread_mutex_lock(&e->mu);
    if (!(w = auth(e, worker_id, bearer, out)))
        goto out;
    if (tp_decode_lease(body, len, &want0, &err) < 0) {
        reply_err(out, 400, "bad_request", err.text);
        goto out;
    }
    if (drain_wanted(e, w)) {
        drain_reply(out);
        goto out;
    }
    if (wait_s < 0)
        wait_s = e->o.longpoll_s;
    deadline = te_wallclock(NULL) + wait_s;
    gen = ++w->park_gen;
    pthread_cond_broadcast(&e->cv); /* an older parked request answers 204 */
    dv = store_data_version(e->st);
    qg = e->qgen;
    for (;;) {
        if ((used = open_count(e, w, &err)) < 0)
            goto busy;
        want = want0;
        if (want > w->capacity - used)
            want = w->capacity - used;
        if (want > 0) {
            if (try_lease(e, w, want, tasks, &err) < 0)
                goto busy;
            if (json_array_size(tasks)) {
                json_t *b = json_object();
                json_object_set_new(b, "tasks", tasks);
                tasks = NULL;
                reply(out, 200, b);
                goto out;
            }
        }
        /* nothing yet: park, waking on a notify or every 100 ms to see
         * whether another process (the CLI) committed */
        for (;;) {
            double t = te_wallclock(NULL);
            long long v;
            if (e->closing || w->park_gen != gen || !mw_live(w) ||
                t >= deadline) {
                reply(out, 204, NULL);
                goto out;
            }
            t = t + 0.1 < deadline ? t + 0.1 : deadline;
            ts.tv_sec = (time_t)t;
            ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
            e->c.parked++;
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
            e->c.parked--;
            if (e->closing || w->park_gen != gen)
                continue;
            if (drain_wanted(e, w)) {
                drain_reply(out);
                goto out;
            }
            v = store_data_version(e->st);
            if (v != dv || e->qgen != qg) {
                dv = v;
                qg = e->qgen;
                break;
            }
        }
        w->last_seen = now_of(e);
    }
busy:
    reply_busy(e, out, &err);
out:
    pthread_mutex_unlock(&e->mu);
    json_decref(tasks);
}

/* ---- results ---- */

static json_t *result_json(const struct tp_result *r)
{
    json_t *o = json_object(), *a = json_array();
    json_object_set_new(o, "exit_code", json_integer(r->exit_code));
    json_object_set_new(o, "signal", json_integer(r->signal));
    json_object_set_new(o, "started_at", jx_real(r->started_at));
    json_object_set_new(o, "ended_at", jx_real(r->ended_at));
    json_object_set_new(o, "stdout_tail", jx_str(r->stdout_tail));
    json_object_set_new(o, "stderr_tail", jx_str(r->stderr_tail));
    for (size_t i = 0; i < r->nartifacts; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "name", json_string(r->artifacts[i].name));
        json_object_set_new(x, "sha256", json_string(r->artifacts[i].sha256));
        json_object_set_new(x, "size", json_integer(r->artifacts[i].size));
        json_array_append_new(a, x);
    }
    json_object_set_new(o, "artifacts", a);
    return o;
}

int te_infra_sign(long long exit_code, long long signal, double started_at,
                  double ended_at)
{
    if (signal != 0 || (exit_code != 126 && exit_code != 127))
        return 0;
    return ended_at - started_at <= TE_BLACKHOLE_FAST_S;
}

/*
 * Requeue task (failed by attempt on w, a black hole) unless an earlier
 * attempt of it was already given back by a black-hole drain: the second
 * time, the task is the likelier cause and its failure stands. Inside a
 * transaction; 1 requeued, 0 left, -1 err.
 */
static int black_hole_requeue(task_engine_t *e, const struct mworker *w,
                              long long task, long long attempt,
                              exa_error_t *err)
{
    struct attempt_rec *v = NULL;
    struct task_rec t;
    size_t n = 0;
    int rc = 0, before = 0;
    if (store_task_get(e->st, task, &t, err) < 0)
        return -1;
    if (strcmp(t.state, "failed") || t.attempt != attempt) {
        task_rec_release(&t); /* cancelled, or moved on */
        return 0;
    }
    if (store_attempt_list(e->st, task, &v, &n, err) < 0) {
        task_rec_release(&t);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].cause && !strcmp(v[i].cause, "black_hole"))
            before = 1;
    attempt_rec_free_list(v, n);
    if (!before) {
        json_t *d = json_object();
        json_object_set_new(d, "attempt", json_integer(attempt + 1));
        json_object_set_new(d, "cause", json_string("black_hole"));
        /* the attempt stays failed; its cause says it was given back */
        if (store_attempt_relabel(e->st, task, attempt, "failed", "black_hole",
                                  t.exit_code, t.signal, 0, err) < 0 ||
            store_task_reopen(e->st, task, now_of(e), err) < 0 ||
            event(e, "task_requeued", w, task, attempt, d, err) < 0)
            rc = -1;
        else
            rc = 1;
    }
    task_rec_release(&t);
    return rc;
}

/*
 * A provisioned worker's black-hole drain is a strike against its node for
 * its cluster's profile (WORKERS.md §9.4; the provisioner excludes a node
 * with two): the node is the one its registration named (SLURMD_NODENAME),
 * else its host name up to the first dot. A worker with no cluster or
 * profile (not provisioned), or whose node is no Slurm node name
 * (hostlist_node_ok), strikes nothing. The node goes into d ("node").
 * Inside the caller's transaction; 0 or -1 with err.
 */
static int black_hole_strike(task_engine_t *e, const struct mworker *w,
                             double now, json_t *d, exa_error_t *err)
{
    struct worker_rec r;
    char node[129] = "";
    int found = store_worker_get(e->st, w->id, &r, err), rc = 0;
    if (found < 0)
        return -1;
    if (!found)
        return 0;
    if (r.node && *r.node)
        xsnprintf(node, sizeof(node), "%.128s", r.node);
    else if (r.host && *r.host)
        xsnprintf(node, sizeof(node), "%.*s", (int)strcspn(r.host, "."),
                  r.host);
    if (hostlist_node_ok(node)) {
        json_object_set_new(d, "node", json_string(node));
        if (r.cluster && r.profile)
            rc = store_node_strike_add(e->st, r.cluster, r.profile, node,
                                       "black_hole", w->id, now, err);
    }
    worker_rec_release(&r);
    return rc;
}

/*
 * Note an infrastructure-sign failure (te_infra_sign) of task/attempt on
 * w. The TE_BLACKHOLE_FAILURES-th within TE_BLACKHOLE_WINDOW_S makes w a
 * black hole (WORKERS.md 6.3): drain requested, so its next lease or
 * heartbeat answers drain and it is leased nothing more; event
 * worker_black_hole; the tasks of those failures go back to queued
 * without using their infrastructure budget (black_hole_requeue). Inside
 * the caller's transaction; 0 or -1 with err.
 */
static int black_hole_note(task_engine_t *e, struct mworker *w, long long task,
                           long long attempt, exa_error_t *err)
{
    double now = now_of(e);
    int k = 0, requeued = 0;
    json_t *d;
    /* keep only the failures inside the window, then add this one */
    for (int i = 0; i < w->nbh; i++)
        if (now - w->bh[i].at <= TE_BLACKHOLE_WINDOW_S)
            w->bh[k++] = w->bh[i];
    if (k == TE_BLACKHOLE_FAILURES) {
        memmove(w->bh, w->bh + 1, (size_t)(k - 1) * sizeof(w->bh[0]));
        k--;
    }
    w->bh[k].at = now;
    w->bh[k].task = task;
    w->bh[k].attempt = attempt;
    w->nbh = k + 1;
    if (w->nbh < TE_BLACKHOLE_FAILURES)
        return 0;
    if (store_worker_request_drain(e->st, w->id, err) < 0)
        return -1;
    for (int i = 0; i < w->nbh; i++) {
        int r = black_hole_requeue(e, w, w->bh[i].task, w->bh[i].attempt, err);
        if (r < 0)
            return -1;
        requeued += r;
    }
    d = json_object();
    json_object_set_new(d, "failures", json_integer(w->nbh));
    json_object_set_new(d, "window_s", json_integer(TE_BLACKHOLE_WINDOW_S));
    json_object_set_new(d, "requeued", json_integer(requeued));
    if (black_hole_strike(e, w, now, d, err) < 0) {
        json_decref(d);
        return -1;
    }
    if (event(e, "worker_black_hole", w, TASK_NULL_INT, TASK_NULL_INT, d, err) <
        0)
        return -1;
    w->nbh = 0;
    e->c.black_holes++;
    if (requeued)
        e->qgen++;
    return 0;
}

/* One result inside the caller's transaction; *kind gets the list it
 * belongs to (0 accepted, 1 duplicate, 2 stale, 3 missing). */
static int one_result(task_engine_t *e, struct mworker *w,
                      const struct tp_result *r, int *kind, exa_error_t *err)
{
    struct attempt_rec a;
    struct task_rec t;
    double now = now_of(e);
    int found, rc = -1, ok = r->exit_code == 0 && r->signal == 0;
    char *body;
    found = store_attempt_get(e->st, r->task, r->attempt, &a, err);
    if (found < 0)
        return -1;
    if (!found || strcmp(a.worker_id, w->id)) {
        if (found)
            attempt_rec_release(&a);
        *kind = 2;
        return 0;
    }
    if (store_task_get(e->st, r->task, &t, err) < 0) {
        attempt_rec_release(&a);
        return -1;
    }
    for (size_t i = 0; i < r->nartifacts; i++) {
        char have[65];
        int f = store_artifact_hash(e->st, r->task, r->attempt,
                                    r->artifacts[i].name, have, err);
        if (f < 0)
            goto out;
        if (!f || strcmp(have, r->artifacts[i].sha256)) {
            *kind = 3;
            rc = 0;
            goto out;
        }
    }
    {
        json_t *j = result_json(r);
        body = jx_dumps_canonical(j);
        json_decref(j);
    }
    found = store_result_insert(e->st, r->task, r->attempt, r->idem, body, now,
                                err);
    free(body);
    if (found < 0)
        goto out;
    if (found == 0) {
        *kind = 1;
        rc = 0;
        goto out;
    }
    if (!strcmp(t.state, "leased") && t.attempt == r->attempt && !a.outcome) {
        /* the live lease: the normal case */
        if (store_attempt_close(e->st, r->task, r->attempt,
                                ok ? "ok" : "failed", NULL, r->exit_code,
                                r->signal, now, err) < 0)
            goto out;
        if (ok) {
            rc = store_task_set_state(e->st, t.id, "done", NULL, r->exit_code,
                                      r->signal, r->attempt, now, 0, 0, err);
        } else {
            char *why = r->signal ? xstrfmt("signal %lld", r->signal)
                                  : xstrfmt("exit %lld", r->exit_code);
            rc = store_task_set_state(e->st, t.id, "failed", why, r->exit_code,
                                      r->signal, r->attempt, now, 0, 0, err);
            free(why);
            if (rc == 0 && te_infra_sign(r->exit_code, r->signal, r->started_at,
                                         r->ended_at))
                rc = black_hole_note(e, w, r->task, r->attempt, err);
        }
        *kind = 0;
        goto out;
    }
    if (ok && (!strcmp(t.state, "leased") || !strcmp(t.state, "queued"))) {
        /* a late success of an older attempt: first success wins; the
         * live lease (if any) is revoked on its worker's next heartbeat */
        json_t *d = json_object();
        if (!strcmp(t.state, "leased") &&
            store_attempt_close(e->st, t.id, t.attempt, "revoked", "superseded",
                                TASK_NULL_INT, TASK_NULL_INT, now, err) < 0) {
            json_decref(d);
            goto out;
        }
        if (store_attempt_relabel(e->st, r->task, r->attempt, "late_ok", NULL,
                                  r->exit_code, r->signal, now, err) < 0 ||
            store_task_set_state(e->st, t.id, "done", NULL, r->exit_code,
                                 r->signal, r->attempt, now, 0, 0, err) < 0) {
            json_decref(d);
            goto out;
        }
        json_object_set_new(d, "result", json_string("accepted"));
        rc = event(e, "task_late_result", w, t.id, r->attempt, d, err);
        e->c.results[3]++;
        *kind = 0;
        goto out;
    }
    /* terminal already, or a late failure: kept for audit only */
    {
        json_t *d = json_object();
        if (store_attempt_relabel(e->st, r->task, r->attempt, "late_stale",
                                  NULL, r->exit_code, r->signal, now,
                                  err) < 0) {
            json_decref(d);
            goto out;
        }
        json_object_set_new(d, "result", json_string("stale"));
        rc = event(e, "task_late_result", w, t.id, r->attempt, d, err);
        *kind = 2;
    }
out:
    attempt_rec_release(&a);
    task_rec_release(&t);
    return rc;
}

void te_results(task_engine_t *e, const char *worker_id, const char *bearer,
                const char *body, size_t len, struct te_reply *out)
{
    struct tp_results rs = {NULL, 0};
    exa_error_t err = EXA_ERROR_INIT;
    struct mworker *w;
    json_t *lists[4] = {NULL, NULL, NULL, NULL}, *b;
    static const char *const names[4] = {"accepted", "duplicate", "stale",
                                         "missing_artifacts"};
    unsigned long long cnt[4] = {0, 0, 0, 0};
    pthread_mutex_lock(&e->mu);
    if (!(w = auth(e, worker_id, bearer, out)))
        goto out;
    if (tp_decode_results(body, len, &rs, &err) < 0) {
        reply_err(out, 400, "bad_request", err.text);
        goto out;
    }
    for (int i = 0; i < 4; i++)
        lists[i] = json_array();
    if (req_begin(e, &err) < 0)
        goto busy;
    for (size_t i = 0; i < rs.n; i++) {
        int kind = 2;
        if (one_result(e, w, &rs.v[i], &kind, &err) < 0) {
            store_rollback(e->st);
            goto busy;
        }
        json_array_append_new(lists[kind], json_string(rs.v[i].idem));
        cnt[kind]++;
    }
    if (store_commit(e->st, &err) < 0) {
        store_rollback(e->st);
        goto busy;
    }
    for (int i = 0; i < 3; i++)
        e->c.results[i] += cnt[i];
    e->c.result_posts++;
    e->qgen++; /* slots freed: a parked lease of this worker may go on */
    pthread_cond_broadcast(&e->cv);
    b = json_object();
    for (int i = 0; i < 4; i++) {
        json_object_set_new(b, names[i], lists[i]);
        lists[i] = NULL;
    }
    reply(out, 200, b);
    goto out;
busy:
    reply_busy(e, out, &err);
out:
    pthread_mutex_unlock(&e->mu);
    for (int i = 0; i < 4; i++)
        json_decref(lists[i]);
    tp_results_release(&rs);
}

/* ---- drain, bye, ping ---- */

void te_drain(task_engine_t *e, const char *worker_id, const char *bearer,
              const char *body, size_t len, struct te_reply *out)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct mworker *w;
    char *reason = NULL;
    json_t *d;
    pthread_mutex_lock(&e->mu);
    if (!(w = auth(e, worker_id, bearer, out)))
        goto out;
    if (tp_decode_reason(body, len, &reason, &err) < 0) {
        reply_err(out, 400, "bad_request", err.text);
        goto out;
    }
    if (req_begin(e, &err) < 0)
        goto busy;
    d = json_object();
    json_object_set_new(d, "reason", json_string(reason));
    if (store_worker_set_state(e->st, w->id, "draining", NULL, now_of(e),
                               &err) < 0 ||
        event(e, "worker_draining", w, TASK_NULL_INT, TASK_NULL_INT, d, &err) <
            0 ||
        store_commit(e->st, &err) < 0) {
        store_rollback(e->st);
        goto busy;
    }
    w->state = MW_DRAINING;
    pthread_cond_broadcast(&e->cv);
    reply(out, 200, json_object());
    goto out;
busy:
    reply_busy(e, out, &err);
out:
    pthread_mutex_unlock(&e->mu);
    free(reason);
}

void te_bye(task_engine_t *e, const char *worker_id, const char *bearer,
            const char *body, size_t len, struct te_reply *out)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct mworker *w;
    char *reason = NULL;
    json_t *d;
    pthread_mutex_lock(&e->mu);
    if (!(w = auth(e, worker_id, bearer, out)))
        goto out;
    if (tp_decode_reason(body, len, &reason, &err) < 0) {
        reply_err(out, 400, "bad_request", err.text);
        goto out;
    }
    if (req_begin(e, &err) < 0)
        goto busy;
    d = json_object();
    json_object_set_new(d, "reason", json_string(reason));
    if (end_leases_of(e, w, "released", "bye", 0, &err) < 0 ||
        store_worker_set_state(e->st, w->id, "exited", reason, now_of(e),
                               &err) < 0 ||
        event(e, "worker_exited", w, TASK_NULL_INT, TASK_NULL_INT, d, &err) <
            0 ||
        store_commit(e->st, &err) < 0) {
        store_rollback(e->st);
        goto busy;
    }
    w->state = MW_EXITED;
    w->park_gen++;
    pthread_cond_broadcast(&e->cv);
    reply(out, 200, json_object());
    goto out;
busy:
    reply_busy(e, out, &err);
out:
    pthread_mutex_unlock(&e->mu);
    free(reason);
}

void te_ping(task_engine_t *e, struct te_reply *out)
{
    json_t *b = json_object(), *p = json_array();
    json_array_append_new(p, json_integer(TP_PROTOCOL));
    json_object_set_new(b, "engine_id", json_string(e->id));
    json_object_set_new(b, "protocols", p);
    reply(out, 200, b);
}

/* ---- artifacts ---- */

int te_artifact_check(task_engine_t *e, const char *worker_id,
                      const char *bearer, long long task, long long attempt,
                      const char *name, const char *sha256, char **tmp_path,
                      struct te_reply *out)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct mworker *w;
    struct attempt_rec a;
    char have[65], hex[33];
    int found, rc = -1;
    char *tmpdir;
    pthread_mutex_lock(&e->mu);
    if (!(w = auth(e, worker_id, bearer, out)))
        goto out;
    if (!tp_sha256_ok(sha256)) {
        reply_err(out, 400, "bad_request",
                  "header 'X-Exa-Sha256' must be 64 lower-case hex digits");
        goto out;
    }
    found = store_attempt_get(e->st, task, attempt, &a, &err);
    if (found < 0)
        goto busy;
    if (!found || strcmp(a.worker_id, w->id)) {
        if (found)
            attempt_rec_release(&a);
        reply_err(out, 409, "stale_attempt",
                  "this worker never held that attempt");
        goto out;
    }
    attempt_rec_release(&a);
    found = store_artifact_hash(e->st, task, attempt, name, have, &err);
    if (found < 0)
        goto busy;
    if (found) {
        if (strcmp(have, sha256)) {
            reply_err(out, 409, "artifact_conflict",
                      "stored with another sha256");
        } else {
            reply(out, 200, json_object());
            rc = 1;
        }
        goto out;
    }
    tmpdir = xstrfmt("%s/tmp", e->artdir);
    if (mkdir_p(tmpdir) < 0) {
        exa_err(&err, EXA_ECONFIG, "cannot create '%s': %s", tmpdir,
                strerror(errno));
        free(tmpdir);
        reply_err(out, 507, "insufficient_storage", err.text);
        goto out;
    }
    token_random_hex(hex, 16);
    *tmp_path = xstrfmt("%s/%s", tmpdir, hex);
    free(tmpdir);
    rc = 0;
    goto out;
busy:
    reply_busy(e, out, &err);
out:
    pthread_mutex_unlock(&e->mu);
    return rc;
}

void te_artifact_commit(task_engine_t *e, const char *worker_id, long long task,
                        long long attempt, const char *name,
                        const char *claimed, const char *got, long long size,
                        const char *tmp_path, struct te_reply *out)
{
    exa_error_t err = EXA_ERROR_INIT;
    char *dir, *final;
    int rc;
    if (strcmp(claimed, got)) {
        unlink(tmp_path);
        reply_err(out, 422, "sha256_mismatch",
                  "the body does not hash to X-Exa-Sha256");
        return;
    }
    dir = xstrfmt("%s/%lld/%lld", e->artdir, task, attempt);
    final = xstrfmt("%s/%s", dir, name);
    if (mkdir_p(dir) < 0 || rename(tmp_path, final) < 0) {
        exa_err(&err, EXA_ECONFIG, "cannot store artifact '%s': %s", final,
                strerror(errno));
        unlink(tmp_path);
        reply_err(out, 507, "insufficient_storage", err.text);
        goto out;
    }
    pthread_mutex_lock(&e->mu);
    rc = store_artifact_put(e->st, task, attempt, name, got, size, final,
                            now_of(e), &err);
    pthread_mutex_unlock(&e->mu);
    (void)worker_id;
    if (rc < 0)
        reply_busy(e, out, &err);
    else if (rc == 2)
        reply_err(out, 409, "artifact_conflict", "stored with another sha256");
    else
        reply(out, 201, json_object());
out:
    free(dir);
    free(final);
}

/* ---- operator side ---- */

int task_submit(store_t *st, const struct tp_spec *spec, double now,
                long long *id, exa_error_t *err)
{
    return task_submit_pinned(st, spec, NULL, NULL, now, id, err);
}

int task_submit_pinned(store_t *st, const struct tp_spec *spec,
                       const char *cluster, const char *run_id, double now,
                       long long *id, exa_error_t *err)
{
    struct task_rec t;
    json_t *j;
    int rc;
    if (cluster && !tp_name_ok(cluster))
        return exa_err(err, EXA_EUSAGE,
                       "cluster '%s' is not a name of [A-Za-z0-9._-]", cluster);
    j = tp_spec_encode(spec);
    task_rec_init(&t);
    t.cluster = cluster ? xstrdup(cluster) : NULL;
    t.run_id = run_id ? xstrdup(run_id) : NULL;
    t.spec = jx_dumps_canonical(j);
    json_decref(j);
    t.labels = tp_spec_labels(spec);
    t.cpus = spec->cpus;
    t.gpus = spec->gpus;
    t.ram_mb = spec->ram_mb;
    t.timeout_s = spec->timeout_s;
    t.created_at = now;
    rc = store_task_insert(st, &t, id, err);
    task_rec_release(&t);
    return rc;
}

int task_cancel(store_t *st, long long id, double now, exa_error_t *err)
{
    struct task_rec t;
    int rc = -1;
    if (store_begin(st, err) < 0)
        return -1;
    if (store_task_get(st, id, &t, err) < 0) {
        store_rollback(st);
        return -1;
    }
    if (strcmp(t.state, "queued") && strcmp(t.state, "leased")) {
        store_rollback(st);
        task_rec_release(&t);
        return 1;
    }
    if (!strcmp(t.state, "leased") &&
        store_attempt_close(st, id, t.attempt, "revoked", "cancelled",
                            TASK_NULL_INT, TASK_NULL_INT, now, err) < 0)
        goto out;
    if (store_task_set_state(st, id, "cancelled", "cancelled", TASK_NULL_INT,
                             TASK_NULL_INT, TASK_NULL_INT, now, 0, 0,
                             err) < 0 ||
        store_wevent_add(st, now, "task_cancelled", NULL, NULL, t.worker_id, id,
                         t.attempt ? t.attempt : TASK_NULL_INT, NULL,
                         err) < 0 ||
        store_commit(st, err) < 0)
        goto out;
    rc = 0;
out:
    if (rc < 0)
        store_rollback(st);
    task_rec_release(&t);
    return rc;
}

char *task_join_mint(store_t *st, const char *keyfile, const char *worker_id,
                     const char *cluster, const char *profile,
                     const char *request_id, double ttl_s, double now,
                     exa_error_t *err)
{
    struct token_keys keys;
    struct join_claims c;
    struct join_rec j;
    char *kp, *tok;
    if (!tp_name_ok(worker_id) || (cluster && !tp_name_ok(cluster)) ||
        (profile && !tp_name_ok(profile)) ||
        (request_id && !tp_name_ok(request_id))) {
        exa_err(err, EXA_EUSAGE,
                "worker id '%s' (and cluster, profile) must be names of "
                "[A-Za-z0-9._-]",
                worker_id);
        return NULL;
    }
    if (!(ttl_s >= 1 && ttl_s <= 21600)) {
        exa_err(err, EXA_EUSAGE,
                "join token lifetime must be 1 to 21600 seconds, got %g",
                ttl_s);
        return NULL;
    }
    kp = keyfile ? xstrdup(keyfile) : token_key_path(st->path);
    if (token_keys_load(kp, &keys, err) < 0) {
        free(kp);
        return NULL;
    }
    free(kp);
    memset(&c, 0, sizeof(c));
    xsnprintf(c.worker_id, sizeof(c.worker_id), "%s", worker_id);
    xsnprintf(c.request_id, sizeof(c.request_id), "%s",
              request_id ? request_id : "-");
    xsnprintf(c.cluster, sizeof(c.cluster), "%s", cluster ? cluster : "-");
    xsnprintf(c.profile, sizeof(c.profile), "%s", profile ? profile : "-");
    if (task_engine_id(st, c.engine_id, err) < 0)
        return NULL;
    c.nbf = (long long)now;
    c.exp = (long long)(now + ttl_s);
    token_random_hex(c.jti, 16);
    memset(&j, 0, sizeof(j));
    j.jti = c.jti;
    j.worker_id = (char *)worker_id;
    j.request_id = (char *)request_id;
    j.cluster = (char *)cluster;
    j.profile = (char *)profile;
    j.created_at = now;
    j.exp = (double)c.exp;
    if (store_join_insert(st, &j, err) < 0)
        return NULL;
    tok = token_join_mint(&keys, &c);
    memset(&keys, 0, sizeof(keys));
    return tok;
}
