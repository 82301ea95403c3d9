/*
 * exporter.h - the collector and cache behind `exa serve`'s /metrics.
 *
 * A background thread runs, once per interval, one node command and one
 * job command per ACTIVE cluster (through an obs_source, which hides the
 * transport and the parser), reads exa's own counts from platform.db, and
 * renders the whole exposition once into a cache. Scrapes only copy the
 * cache, so any number of scrapers costs the schedulers nothing more
 * (doc/design.md §1.3: exa never floods a queue it does not own).
 *
 * Self-metrics: exa_exporter_command_duration_seconds{cluster,command}
 * (last run), exa_exporter_command_runs_total and
 * exa_exporter_command_errors_total{cluster,command},
 * exa_exporter_cache_age_seconds (at scrape time), exa_exporter_scrapes_total.
 */
#ifndef EXA_EXPORTER_H
#define EXA_EXPORTER_H

#include <stddef.h>

#include "libobserve/fleet_view.h"
#include "libobserve/sched_metrics.h"
#include "libutil/error.h"

#define OBS_DEFAULT_INTERVAL_S 30

/* One cluster's scheduler, as the exporter sees it. */
struct obs_source {
    char *cluster;        /* owned */
    char *prefix;         /* metric prefix: "slurm" or "flux"; owned */
    const char *node_cmd; /* command names for self-metrics: "sinfo" */
    const char *job_cmd;  /* "squeue" */
    /*
     * Run the node (job) command once and append to s->nodes (s->jobs).
     * Return 0 or -1 with err (transport, scheduler or parse failure).
     */
    int (*nodes)(struct obs_source *src, struct obs_snapshot *s,
                 exa_error_t *err);
    int (*jobs)(struct obs_source *src, struct obs_snapshot *s,
                exa_error_t *err);
    /*
     * Non-zero when nodes() and jobs() may run at the same time, each on
     * its own thread and with a snapshot of its own (what they run on the
     * cluster is safe to share between threads). The collector then runs
     * the node command on a second thread while the job command runs, so a
     * collection takes the longer of the two, not their sum.
     */
    int concurrent;
    /* Run before a concurrent source's two commands start (e.g. opening
     * the connection they will share, so they do not open one each); may
     * be NULL. */
    void (*prepare)(struct obs_source *src);
    /* Run after both commands of a collection, on the collector's thread
     * (e.g. moving the cluster's stale job rows forward); may be NULL. */
    void (*after)(struct obs_source *src);
    void (*destroy)(struct obs_source *src); /* frees data; may be NULL */
    void *data;
};

/*
 * Make the source of an ACTIVE cluster, or return NULL with err (the
 * cluster is then skipped and its error counted). ctx is the factory's.
 */
typedef struct obs_source *(*obs_source_factory_f)(const struct fv_cluster *c,
                                                   void *ctx, exa_error_t *err);

/* Free a source made by a factory (calls destroy, frees names). */
void obs_source_free(struct obs_source *src);

struct obs_exporter;

/*
 * A new exporter. db_path: platform.db (NULL: store_default_path());
 * interval_s > 0: seconds between collections; factory may be NULL (no
 * scheduler metrics, only exa's own).
 */
struct obs_exporter *obs_exporter_new(const char *db_path, double interval_s,
                                      obs_source_factory_f factory,
                                      void *factory_ctx);
void obs_exporter_free(struct obs_exporter *ex);

/*
 * Collect once now, in the calling thread: refresh the cluster list from
 * the store, run every source, render, replace the cache. Returns 0, or
 * -1 with err when the store cannot be read (the previous cache stays);
 * command failures are counted, not returned.
 */
int obs_exporter_collect(struct obs_exporter *ex, exa_error_t *err);

/*
 * Collect once as obs_exporter_collect() does, but write the exposition
 * (followed by the scrape-time families) through write(ctx, bytes, n) as
 * it is rendered, in pieces of about 60 KiB, instead of caching it: the
 * text is never whole in memory (`exa serve --once`). Later scrapes see
 * no cached body. Returns 0, or -1 with err (the store, or write failed).
 */
int obs_exporter_collect_stream(struct obs_exporter *ex, prom_write_f write,
                                void *ctx, exa_error_t *err);
/* Start / stop the background collection thread (first run at once). */
int obs_exporter_start(struct obs_exporter *ex, exa_error_t *err);
void obs_exporter_stop(struct obs_exporter *ex);

/*
 * The exposition for one scrape: the cached body plus the scrape-time
 * families. Returns a malloc'ed buffer (caller frees) and its length.
 * Before the first collection finished the body holds only the
 * scrape-time families.
 */
char *obs_exporter_scrape(struct obs_exporter *ex, size_t *len);

/*
 * A scrape without a copy: the view shares the cached render (kept alive
 * until obs_scrape_end(), even if a newer collection replaces it) and
 * owns the scrape-time families. obs_scrape_read() copies up to max
 * bytes from byte pos of the exposition into buf and returns how many (0
 * at the end). Readers may run in any thread; end each view once, and
 * all of them before obs_exporter_free().
 */
struct obs_scrape;
struct obs_scrape *obs_exporter_scrape_begin(struct obs_exporter *ex);
size_t obs_scrape_len(const struct obs_scrape *sc);
size_t obs_scrape_read(const struct obs_scrape *sc, size_t pos, char *buf,
                       size_t max);
void obs_scrape_end(struct obs_scrape *sc);

/* Number of collections completed (tests wait on it). */
unsigned long obs_exporter_generation(struct obs_exporter *ex);

#endif
