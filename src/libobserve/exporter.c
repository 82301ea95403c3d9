/*
 * exporter.c - background collection, the rendered cache, and scrapes.
 *
 * The expensive part of an exporter is not writing text but asking the
 * scheduler: the exporters that run squeue on every scrape put N scrapers'
 * worth of load on slurmctld. Here one thread owns every scheduler call:
 * per interval and per ACTIVE cluster one node command and one job
 * command, then a single render of the whole exposition into a buffer.
 * Scrapes copy that buffer under a mutex and append the few values that
 * depend on the scrape's own time (cache age), so a scrape costs a memcpy
 * whatever the fleet size. The store connection lives in the collector
 * thread only (SQLite handles are not shared across threads here).
 */
#include "libobserve/exporter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libobserve/promtext.h"
#include "libstore/finops.h"
#include "libstore/store.h"
#include "libutil/log.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* One render, shared by the scrapes reading it; refs under ex->mu. */
struct obs_body {
    char *data;
    size_t len;
    size_t refs;
};

struct obs_scrape {
    struct obs_exporter *ex;
    struct obs_body *body; /* NULL before the first collection */
    struct strbuf tail;    /* the scrape-time families */
};

struct cmd_stat {
    char *cluster, *command;
    double last_s;
    unsigned long runs, errors;
    char last_err[256]; /* warned once per distinct error, "" after success */
};

/* Log a failure once until it changes or the command succeeds again. */
static void note_result(struct cmd_stat *cs, int failed, const char *what,
                        const char *cluster, const char *text)
{
    if (!failed) {
        cs->last_err[0] = '\0';
        return;
    }
    cs->errors++;
    if (strcmp(cs->last_err, text)) {
        log_msg(LOG_WARN, "exporter: %s on '%s': %s", what, cluster, text);
        snprintf(cs->last_err, sizeof(cs->last_err), "%s", text);
    }
}

struct src_slot {
    struct obs_source *src;
    char *cluster;
    double last_ok; /* monotonic seconds of the last full success; <0 never */
    int seen;       /* still ACTIVE in the latest refresh */
};

struct obs_exporter {
    char *db_path;
    double interval_s;
    obs_source_factory_f factory;
    void *factory_ctx;

    /* collector-thread state */
    store_t *st;
    struct src_slot *slots;
    size_t nslots, slots_alloc;
    struct cmd_stat *stats;
    size_t nstats, stats_alloc;

    /* shared with scrapers, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct obs_body *body; /* the current render, shared with scrapes */
    double body_at;        /* monotonic time of the last render; <0 none */
    struct strbuf ages;    /* rendered cluster ages: "cluster\tlast_ok\n" */
    unsigned long generation, scrapes;
    int stop, running;
    pthread_t thread;
};

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void obs_source_free(struct obs_source *src)
{
    if (!src)
        return;
    if (src->destroy)
        src->destroy(src);
    free(src->cluster);
    free(src->prefix);
    free(src);
}

struct obs_exporter *obs_exporter_new(const char *db_path, double interval_s,
                                      obs_source_factory_f factory,
                                      void *factory_ctx)
{
    struct obs_exporter *ex = xcalloc(1, sizeof(*ex));
    ex->db_path = db_path ? xstrdup(db_path) : NULL;
    ex->interval_s = interval_s > 0 ? interval_s : OBS_DEFAULT_INTERVAL_S;
    ex->factory = factory;
    ex->factory_ctx = factory_ctx;
    ex->body_at = -1;
    strbuf_init(&ex->ages, 0);
    pthread_mutex_init(&ex->mu, NULL);
    pthread_cond_init(&ex->cv, NULL);
    return ex;
}

void obs_exporter_free(struct obs_exporter *ex)
{
    if (!ex)
        return;
    obs_exporter_stop(ex);
    for (size_t i = 0; i < ex->nslots; i++) {
        obs_source_free(ex->slots[i].src);
        free(ex->slots[i].cluster);
    }
    free(ex->slots);
    for (size_t i = 0; i < ex->nstats; i++) {
        free(ex->stats[i].cluster);
        free(ex->stats[i].command);
    }
    free(ex->stats);
    if (ex->st)
        store_close(ex->st);
    if (ex->body && --ex->body->refs == 0) {
        free(ex->body->data);
        free(ex->body);
    }
    strbuf_release(&ex->ages);
    pthread_mutex_destroy(&ex->mu);
    pthread_cond_destroy(&ex->cv);
    free(ex->db_path);
    free(ex);
}

static struct cmd_stat *stat_for(struct obs_exporter *ex, const char *cluster,
                                 const char *command)
{
    struct cmd_stat *s;
    for (size_t i = 0; i < ex->nstats; i++)
        if (!strcmp(ex->stats[i].cluster, cluster) &&
            !strcmp(ex->stats[i].command, command))
            return &ex->stats[i];
    ALLOC_GROW(ex->stats, ex->nstats + 1, ex->stats_alloc);
    s = &ex->stats[ex->nstats++];
    memset(s, 0, sizeof(*s));
    s->cluster = xstrdup(cluster);
    s->command = xstrdup(command);
    return s;
}

/* Make the slots match the ACTIVE clusters of the store. */
static int refresh_sources(struct obs_exporter *ex, exa_error_t *err)
{
    struct fv_fleet fleet;
    if (fv_fleet_load_ex(ex->st, NULL, 0, 0, NULL, &fleet, err) < 0)
        return -1;
    for (size_t i = 0; i < ex->nslots; i++)
        ex->slots[i].seen = 0;
    for (size_t i = 0; i < fleet.nr; i++) {
        const struct fv_cluster *c = &fleet.clusters[i];
        struct src_slot *slot = NULL;
        for (size_t k = 0; k < ex->nslots; k++)
            if (!strcmp(ex->slots[k].cluster, c->name))
                slot = &ex->slots[k];
        if (!slot) {
            ALLOC_GROW(ex->slots, ex->nslots + 1, ex->slots_alloc);
            slot = &ex->slots[ex->nslots++];
            memset(slot, 0, sizeof(*slot));
            slot->cluster = xstrdup(c->name);
            slot->last_ok = -1;
        }
        slot->seen = 1;
        if (!slot->src && ex->factory) {
            exa_error_t e = EXA_ERROR_INIT;
            struct cmd_stat *cs = stat_for(ex, c->name, "connect");
            cs->runs++;
            slot->src = ex->factory(c, ex->factory_ctx, &e);
            note_result(cs, !slot->src, "connect", c->name, e.text);
        }
    }
    /* drop clusters that are no longer ACTIVE */
    for (size_t i = 0; i < ex->nslots;) {
        if (ex->slots[i].seen) {
            i++;
            continue;
        }
        obs_source_free(ex->slots[i].src);
        free(ex->slots[i].cluster);
        ex->slots[i] = ex->slots[--ex->nslots];
    }
    fv_fleet_release(&fleet);
    return 0;
}

typedef int (*run_f)(struct obs_source *, struct obs_snapshot *, exa_error_t *);

static int timed(struct obs_exporter *ex, struct obs_source *src, run_f fn,
                 const char *command, struct obs_snapshot *snap)
{
    exa_error_t e = EXA_ERROR_INIT;
    struct cmd_stat *cs = stat_for(ex, src->cluster, command);
    double t0 = now_mono();
    int rc = fn(src, snap, &e);
    cs->last_s = now_mono() - t0;
    cs->runs++;
    note_result(cs, rc < 0, command, src->cluster, e.text);
    return rc;
}

/* The node command of a concurrent source, on a thread of its own. */
struct nodes_run {
    struct obs_source *src;
    struct obs_snapshot snap; /* its own: nothing is shared with jobs() */
    exa_error_t err;
    double elapsed_s;
    int rc;
};

static void *nodes_main(void *arg)
{
    struct nodes_run *nr = arg;
    double t0 = now_mono();
    nr->rc = nr->src->nodes(nr->src, &nr->snap, &nr->err);
    nr->elapsed_s = now_mono() - t0;
    return NULL;
}

/*
 * One source's commands into snap. A concurrent source runs its node
 * command on a second thread while the job command runs on this one; the
 * statistics, the log and the after hook stay on this thread. *nodes_snap
 * then owns what the node command made besides the node array (moved into
 * snap); the caller frees it after snap.
 */
static void collect_source(struct obs_exporter *ex, struct obs_source *src,
                           struct obs_snapshot *snap,
                           struct obs_snapshot *nodes_snap)
{
    struct nodes_run nr;
    struct cmd_stat *cs;
    pthread_t th;
    int threaded;

    if (!src->concurrent) {
        snap->have_nodes = timed(ex, src, src->nodes, src->node_cmd, snap) == 0;
        snap->have_jobs = timed(ex, src, src->jobs, src->job_cmd, snap) == 0;
        if (src->after)
            src->after(src);
        return;
    }
    memset(&nr, 0, sizeof(nr));
    nr.src = src;
    /* both entries made now, in the order of the one-thread walk */
    stat_for(ex, src->cluster, src->node_cmd);
    stat_for(ex, src->cluster, src->job_cmd);
    if (src->prepare)
        src->prepare(src);
    threaded = pthread_create(&th, NULL, nodes_main, &nr) == 0;
    if (!threaded)
        nodes_main(&nr); /* no thread to be had: one after the other */
    snap->have_jobs = timed(ex, src, src->jobs, src->job_cmd, snap) == 0;
    if (threaded)
        pthread_join(th, NULL);
    /* looked up again: an entry is an element of ex->stats, which a new
     * one may move */
    cs = stat_for(ex, src->cluster, src->node_cmd);
    cs->last_s = nr.elapsed_s;
    cs->runs++;
    note_result(cs, nr.rc < 0, src->node_cmd, src->cluster, nr.err.text);
    snap->have_nodes = nr.rc == 0;
    snap->nodes = nr.snap.nodes;
    snap->nnodes = nr.snap.nnodes;
    snap->nodes_alloc = nr.snap.nodes_alloc;
    nr.snap.nodes = NULL;
    nr.snap.nnodes = nr.snap.nodes_alloc = 0;
    *nodes_snap = nr.snap;
    if (src->after)
        src->after(src);
}

static void add_or_bug(struct prom_family *f, const char *const *l, double v)
{
    if (prom_add(f, l, v, NULL) < 0)
        BUG("bad exporter label");
}

static struct prom_family *family(struct prom_set *set, const char *name,
                                  enum prom_type t, const char *help)
{
    struct prom_family *f = prom_family(set, name, t, help, NULL);
    if (!f)
        BUG("bad exporter metric '%s'", name);
    return f;
}

/* exa's own families, from platform.db (libstore/finops.h sums). */
static int store_metrics(struct obs_exporter *ex, struct prom_set *set,
                         exa_error_t *err)
{
    static const char *const cstates[] = {"PENDING", "ACTIVE", "REJECTED",
                                          NULL};
    struct prom_family *fc, *fj, *fg, *fe, *fco;
    struct store_group *g = NULL;
    size_t n = 0;

    fc = family(set, "exa_clusters", PROM_GAUGE,
                "Registered clusters by governance state");
    for (size_t i = 0; cstates[i]; i++)
        add_or_bug(fc, (const char *[]){"state", cstates[i], NULL}, 0);
    if (store_cluster_state_counts(ex->st, &g, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        add_or_bug(fc, (const char *[]){"state", g[i].k[0], NULL}, g[i].v[0]);
    store_groups_free(g, n);

    fj = family(set, "exa_jobs", PROM_GAUGE,
                "Jobs exa tracks, by cluster and normalized state");
    if (store_job_state_counts(ex->st, &g, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        add_or_bug(
            fj,
            (const char *[]){"cluster", g[i].k[0], "state", g[i].k[1], NULL},
            g[i].v[0]);
    store_groups_free(g, n);

    fg = family(set, "exa_gpu_seconds_total", PROM_COUNTER,
                "GPU-seconds recorded for exa's jobs (from accounting)");
    if (store_job_gpu_seconds(ex->st, &g, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        add_or_bug(fg,
                   (const char *[]){"cluster", g[i].k[0], "account", g[i].k[2],
                                    "model", g[i].k[1], NULL},
                   g[i].v[0]);
    store_groups_free(g, n);

    fe = family(set, "exa_energy_joules_total", PROM_COUNTER,
                "Energy recorded for exa's runs (carbon records), in joules");
    fco = family(set, "exa_co2e_grams_total", PROM_COUNTER,
                 "CO2-equivalent recorded for exa's runs, in grams");
    if (store_carbon_sums(ex->st, &g, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *l[] = {"model", g[i].k[0], "provider", g[i].k[1], NULL};
        add_or_bug(fe, l, g[i].v[0]);
        add_or_bug(fco, l, g[i].v[1]);
    }
    store_groups_free(g, n);
    return 0;
}

/*
 * One collection: every source run, exa's own families added. *setp gets
 * the families (caller frees), *ages the cluster ages for the scrape-time
 * families. Returns 0, or -1 with err (nothing to free).
 */
static int collect_set(struct obs_exporter *ex, struct prom_set **setp,
                       struct strbuf *ages, exa_error_t *err)
{
    struct prom_set *set;
    struct prom_family *fd, *fr, *fe;

    if (!ex->st && !(ex->st = store_open(ex->db_path, err)))
        return -1;
    if (refresh_sources(ex, err) < 0)
        return -1;
    set = prom_set_new();
    for (size_t i = 0; i < ex->nslots; i++) {
        struct src_slot *slot = &ex->slots[i];
        struct obs_snapshot snap = {0}, nodes_snap = {0};
        if (!slot->src)
            continue;
        collect_source(ex, slot->src, &snap, &nodes_snap);
        if (snap.have_nodes && snap.have_jobs)
            slot->last_ok = now_mono();
        obs_render_sched(set, slot->src->prefix, slot->cluster, &snap);
        obs_snapshot_free(&snap);
        obs_snapshot_free(&nodes_snap);
    }
    if (store_metrics(ex, set, err) < 0) {
        prom_set_free(set);
        return -1;
    }
    fd = family(set, "exa_exporter_command_duration_seconds", PROM_GAUGE,
                "Wall time of the last run of a scheduler command");
    fr = family(set, "exa_exporter_command_runs_total", PROM_COUNTER,
                "Scheduler commands run by the collector");
    fe = family(set, "exa_exporter_command_errors_total", PROM_COUNTER,
                "Scheduler commands that failed (transport, exit, parse)");
    for (size_t i = 0; i < ex->nstats; i++) {
        const struct cmd_stat *c = &ex->stats[i];
        const char *l[] = {"cluster", c->cluster, "command", c->command, NULL};
        if (strcmp(c->command, "connect"))
            add_or_bug(fd, l, c->last_s);
        add_or_bug(fr, l, (double)c->runs);
        add_or_bug(fe, l, (double)c->errors);
    }
    strbuf_init(ages, 0);
    for (size_t i = 0; i < ex->nslots; i++)
        if (ex->slots[i].last_ok >= 0)
            strbuf_addf(ages, "%s\t%.6f\n", ex->slots[i].cluster,
                        ex->slots[i].last_ok);
    *setp = set;
    return 0;
}

/* Make body (may be NULL: streamed, not kept) and ages the current
 * render, for the scrapes that begin from now on. */
static void publish(struct obs_exporter *ex, struct obs_body *body,
                    struct strbuf *ages)
{
    struct obs_body *old = NULL;
    pthread_mutex_lock(&ex->mu);
    if (ex->body && --ex->body->refs == 0)
        old = ex->body; /* freed below, outside the lock */
    ex->body = body;
    ex->body_at = now_mono();
    strbuf_release(&ex->ages);
    ex->ages = *ages;
    ex->generation++;
    pthread_cond_broadcast(&ex->cv);
    pthread_mutex_unlock(&ex->mu);
    if (old) {
        free(old->data);
        free(old);
    }
}

int obs_exporter_collect(struct obs_exporter *ex, exa_error_t *err)
{
    struct prom_set *set;
    struct strbuf out = STRBUF_INIT, ages;
    struct obs_body *body;

    if (collect_set(ex, &set, &ages, err) < 0)
        return -1;
    prom_render(set, &out);
    prom_set_free(set);
    body = xcalloc(1, sizeof(*body));
    body->data = strbuf_detach(&out, &body->len);
    body->refs = 1;
    publish(ex, body, &ages);
    return 0;
}

int obs_exporter_collect_stream(struct obs_exporter *ex, prom_write_f write,
                                void *ctx, exa_error_t *err)
{
    struct prom_set *set;
    struct strbuf ages;
    struct obs_scrape *sc;
    int rc;

    if (collect_set(ex, &set, &ages, err) < 0)
        return -1;
    publish(ex, NULL, &ages);
    rc = prom_render_stream(set, write, ctx);
    prom_set_free(set);
    sc = obs_exporter_scrape_begin(ex); /* the scrape-time families only */
    if (rc == 0 && sc->tail.len && write(ctx, sc->tail.buf, sc->tail.len) < 0)
        rc = -1;
    obs_scrape_end(sc);
    if (rc < 0)
        return exa_err(err, EXA_EFAIL, "cannot write the exposition");
    return 0;
}

struct obs_scrape *obs_exporter_scrape_begin(struct obs_exporter *ex)
{
    struct obs_scrape *sc = xcalloc(1, sizeof(*sc));
    struct strbuf *sb = &sc->tail;
    double now = now_mono();
    sc->ex = ex;
    strbuf_init(sb, 1024);
    pthread_mutex_lock(&ex->mu);
    ex->scrapes++;
    if ((sc->body = ex->body))
        sc->body->refs++;
    strbuf_addstr(sb, "# HELP exa_exporter_cache_age_seconds Seconds since "
                      "the cached exposition was rendered\n"
                      "# TYPE exa_exporter_cache_age_seconds gauge\n");
    if (ex->body_at >= 0) {
        strbuf_addstr(sb, "exa_exporter_cache_age_seconds ");
        prom_format_value(sb, now - ex->body_at);
        strbuf_addch(sb, '\n');
    }
    strbuf_addstr(sb, "# HELP exa_exporter_cluster_data_age_seconds Seconds "
                      "since both scheduler commands of the cluster last "
                      "succeeded\n"
                      "# TYPE exa_exporter_cluster_data_age_seconds gauge\n");
    for (const char *p = ex->ages.buf; *p;) {
        const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        char *name;
        if (!tab || !nl)
            break;
        name = xstrndup(p, (size_t)(tab - p));
        strbuf_addstr(sb, "exa_exporter_cluster_data_age_seconds{cluster=\"");
        prom_escape_label(sb, name);
        strbuf_addstr(sb, "\"} ");
        prom_format_value(sb, now - strtod(tab + 1, NULL));
        strbuf_addch(sb, '\n');
        free(name);
        p = nl + 1;
    }
    strbuf_addf(sb,
                "# HELP exa_exporter_scrapes_total Scrapes served\n"
                "# TYPE exa_exporter_scrapes_total counter\n"
                "exa_exporter_scrapes_total %lu\n",
                ex->scrapes);
    pthread_mutex_unlock(&ex->mu);
    return sc;
}

size_t obs_scrape_len(const struct obs_scrape *sc)
{
    return (sc->body ? sc->body->len : 0) + sc->tail.len;
}

size_t obs_scrape_read(const struct obs_scrape *sc, size_t pos, char *buf,
                       size_t max)
{
    size_t blen = sc->body ? sc->body->len : 0, n = 0;
    if (pos < blen) {
        n = blen - pos < max ? blen - pos : max;
        memcpy(buf, sc->body->data + pos, n);
        pos += n;
    }
    if (n < max && pos >= blen && pos - blen < sc->tail.len) {
        size_t off = pos - blen, m = sc->tail.len - off;
        if (m > max - n)
            m = max - n;
        memcpy(buf + n, sc->tail.buf + off, m);
        n += m;
    }
    return n;
}

void obs_scrape_end(struct obs_scrape *sc)
{
    struct obs_body *drop = NULL;
    if (!sc)
        return;
    if (sc->body) {
        pthread_mutex_lock(&sc->ex->mu);
        if (--sc->body->refs == 0)
            drop = sc->body;
        pthread_mutex_unlock(&sc->ex->mu);
    }
    if (drop) {
        free(drop->data);
        free(drop);
    }
    strbuf_release(&sc->tail);
    free(sc);
}

char *obs_exporter_scrape(struct obs_exporter *ex, size_t *len)
{
    struct obs_scrape *sc = obs_exporter_scrape_begin(ex);
    size_t n = obs_scrape_len(sc);
    char *buf = xmalloc(n + 1);
    if (obs_scrape_read(sc, 0, buf, n) != n)
        BUG("short scrape read");
    buf[n] = '\0';
    obs_scrape_end(sc);
    if (len)
        *len = n;
    return buf;
}

unsigned long obs_exporter_generation(struct obs_exporter *ex)
{
    unsigned long g;
    pthread_mutex_lock(&ex->mu);
    g = ex->generation;
    pthread_mutex_unlock(&ex->mu);
    return g;
}

static void *collector_main(void *arg)
{
    struct obs_exporter *ex = arg;
    for (;;) {
        exa_error_t err = EXA_ERROR_INIT;
        struct timespec until;
        double next = now_mono() + ex->interval_s;
        if (obs_exporter_collect(ex, &err) < 0)
            log_msg(LOG_WARN, "exporter: collection failed: %s", err.text);
        pthread_mutex_lock(&ex->mu);
        clock_gettime(CLOCK_REALTIME, &until);
        {
            double wait = next - now_mono();
            if (wait < 0)
                wait = 0;
            until.tv_sec += (time_t)wait;
            until.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
        }
        while (!ex->stop &&
               pthread_cond_timedwait(&ex->cv, &ex->mu, &until) == 0)
            ;
        if (ex->stop) {
            pthread_mutex_unlock(&ex->mu);
            return NULL;
        }
        pthread_mutex_unlock(&ex->mu);
    }
}

int obs_exporter_start(struct obs_exporter *ex, exa_error_t *err)
{
    if (ex->running)
        return 0;
    ex->stop = 0;
    if (pthread_create(&ex->thread, NULL, collector_main, ex) != 0)
        return exa_err(err, EXA_EFAIL, "cannot start the collector thread");
    ex->running = 1;
    return 0;
}

void obs_exporter_stop(struct obs_exporter *ex)
{
    if (!ex->running)
        return;
    pthread_mutex_lock(&ex->mu);
    ex->stop = 1;
    pthread_cond_broadcast(&ex->cv);
    pthread_mutex_unlock(&ex->mu);
    pthread_join(ex->thread, NULL);
    ex->running = 0;
}
