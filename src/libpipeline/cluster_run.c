/*
 * cluster_run.c - the main job on a cluster (see cluster_run.h for the
 * order of steps).
 *
 * Shaped around one rule: the job row is written as soon as the scheduler
 * gave an id and before the wait, so a crash or an interrupt at any later
 * point leaves a row (run_uuid, remote_dir, no model_version) from which
 * `exa hpc wait` finishes the same work (cluster_run_resume). The wait
 * uses the tracker with a sleep function of ours, so an interrupt is seen
 * within 0.2 s instead of after the poll interval, and the deadline is
 * kept here on the real clock. Artifacts are fetched into a staging
 * directory next to the version directories and published by rename
 * inside the registration transaction, as in mock mode (run.c): a version
 * row exists exactly when its verified directory does.
 */
#include "libpipeline/cluster_run.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libfleet/connect.h"
#include "libfleet/placement.h"
#include "libfleet/registry.h"
#include "libpipeline/run.h"
#include "libpipeline/train.h"
#include "libpipeline/zoo.h"
#include "libsched/runscript.h"
#include "libsched/tracker.h"
#include "libstore/nodes.h"
#include "libutil/atomic.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

/* The artifact files `exa train` writes, in SHA256SUMS order. */
static const char *const artifact_files[] = { "model.json", "encoders.json",
                                              "metrics.json" };
#define NARTIFACTS 3
/* Largest artifact file fetched (a forest of a full PM100 run is MBs). */
#define MAX_ARTIFACT_BYTES ((size_t)1 << 30)

void cluster_run_result_init(struct cluster_run_result *res)
{
    memset(res, 0, sizeof(*res));
    job_rec_init(&res->job);
    model_version_init(&res->mv);
    sched_job_init(&res->last, "");
    sched_acct_init(&res->acct);
}

void cluster_run_result_release(struct cluster_run_result *res)
{
    free(res->cluster);
    free(res->scheduler);
    free(res->placement_reason);
    if (res->preflight_ran)
        preflight_report_release(&res->pf);
    job_rec_release(&res->job);
    model_version_release(&res->mv);
    free(res->stderr_tail);
    free(res->db_path);
    memset(res, 0, sizeof(*res));
}

static void hook_step(const struct cluster_run_hooks *h, const char *step,
                      const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void hook_step(const struct cluster_run_hooks *h, const char *step,
                      const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    if (!h || !h->step)
        return;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    h->step(h->arg, step, detail);
}

/* ---- cluster, transport, placement ---- */

/* Placement over the ACTIVE clusters of f; sets *chosen. */
static int place_auto(store_t *st, const struct fleet *f,
                      const struct place_ask *ask, const char **chosen,
                      char **reason, exa_error_t *err)
{
    struct node_row *nodes = NULL;
    size_t nnodes = 0, nr = 0;
    struct place_cluster *v = NULL;
    struct place_result pr;
    int rc = -1;

    memset(&pr, 0, sizeof(pr));
    if (place_load_candidates(st, f, &v, &nr, &nodes, &nnodes, err) < 0)
        goto out;
    if (!nr) {
        exa_err(err, EXA_ENOTAPPROVED, "auto-placement found no cluster: "
                "no cluster is ACTIVE (connect one and have it approved)");
        goto out;
    }
    if (place_choose(v, nr, ask, NULL, place_max_age_from_env(), time(NULL),
                     &pr, err) < 0)
        goto out;
    if (pr.chosen < 0) {
        exa_err(err, EXA_EFAIL, "auto-placement found no cluster: %s",
                pr.reason ? pr.reason : "nothing fits");
        goto out;
    }
    for (size_t i = 0; i < f->nr; i++)
        if (!strcmp(f->v[i].def.name, pr.cands[pr.chosen].name))
            *chosen = f->v[i].def.name;
    *reason = xstrdup(pr.reason ? pr.reason : "");
    rc = 0;
out:
    place_result_release(&pr);
    node_rows_free(nodes, nnodes);
    free(v);
    return rc;
}

static char *read_small_file(const char *path)
{
    FILE *fp = fopen(path, "re");
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    if (!fp)
        return NULL;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0 && sb.len < (1u << 20))
        strbuf_add(&sb, buf, n);
    fclose(fp);
    return strbuf_detach(&sb, NULL);
}

static int run_preflight(struct transport *t, const struct fleet_cluster *c,
                         const struct sched_resources *r, const char *workdir,
                         const char *remote_exa, struct cluster_run_result *res)
{
    struct preflight_target tg = { 0 };
    struct preflight_ask ask = { 0, 1, NULL, NULL, NULL, NULL };
    char *kh = NULL, *pinned = NULL, *text;

    tg.cluster = c->def.name;
    tg.scheduler = c->def.scheduler;
    tg.ssh = strcmp(t->ops->kind, "local") != 0;
    if (tg.ssh) {
        kh = fleet_known_hosts_path(c->def.name);
        if ((text = read_small_file(kh))) {
            pinned = fleet_host_key_fingerprint(text, NULL);
            free(text);
        }
    }
    tg.known_hosts = kh;
    tg.pinned_fingerprint = pinned;
    tg.host_key_fingerprint = c->row.host_key_fingerprint;
    tg.workdir = workdir;
    tg.remote_exa = remote_exa;
    if (r) {
        ask.gpus = (int)r->gpus;
        ask.nodes = r->nodes > 0 ? (int)r->nodes : 1;
        ask.partition = r->partition;
        ask.account = r->account;
        ask.qos = r->qos;
    }
    ask.user = c->def.ssh_user;
    preflight_run(t, &tg, &ask, &res->pf);
    res->preflight_ran = 1;
    free(kh);
    free(pinned);
    return res->pf.ok ? 0 : -1;
}

/* ---- waiting ---- */

struct waiter {
    const struct cluster_run_hooks *h;
    store_t *st;
    const char *job_cluster;
    char last_state[16]; /* last state written to the job row */
    struct sched *s;
    struct tracker_opts *o;
    const char *cluster, *job_id;
    double deadline;     /* time_monotonic() */
    double max_wait;     /* seconds, for messages */
    int detached, cancelled, timed_out;
};

static void wait_sleep(void *arg, double seconds)
{
    struct waiter *w = arg;
    double end = time_monotonic() + seconds;

    for (;;) {
        double now = time_monotonic(), left = end - now;
        struct timespec ts;
        if (w->h && w->h->interrupted && *w->h->interrupted) {
            *w->h->interrupted = 0;
            if (w->h->on_interrupt &&
                w->h->on_interrupt(w->h->arg, w->cluster, w->job_id) == 1) {
                exa_error_t e = EXA_ERROR_INIT;
                if (sched_cancel(w->s, w->job_id, &e) == 0)
                    w->cancelled = 1;
                return; /* poll now: the end comes soon */
            }
            w->detached = 1;
            w->o->max_wait_s = 0; /* the tracker stops before its next poll */
            return;
        }
        if (now >= w->deadline) {
            w->timed_out = 1;
            w->o->max_wait_s = 0;
            return;
        }
        if (left <= 0)
            return;
        if (left > 0.2)
            left = 0.2;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)(left * 1e9);
        nanosleep(&ts, NULL);
    }
}

static void wait_progress(void *arg, const struct sched_job *jobs, size_t n,
                          double elapsed_s, int poll)
{
    struct waiter *w = arg;
    (void)poll;
    /* keep the row in step while waiting (exa hpc jobs shows it); the
     * terminal state is written with the accounting by record_end */
    if (n && w->st && (jobs[0].state == SCHED_PENDING ||
                       jobs[0].state == SCHED_RUNNING ||
                       jobs[0].state == SCHED_SUSPENDED) &&
        strcmp(w->last_state, sched_state_name(jobs[0].state))) {
        struct job_rec ch;
        job_rec_init(&ch);
        ch.state = (char *)sched_state_name(jobs[0].state);
        if (store_job_update(w->st, w->job_cluster, w->job_id, &ch, NULL) == 0)
            xsnprintf(w->last_state, sizeof(w->last_state), "%s", ch.state);
    }
    if (n && w->h && w->h->wait)
        w->h->wait(w->h->arg, &jobs[0], elapsed_s);
}

/* Scheduler time (Slurm local ISO, Flux epoch) -> UTC "…Z"; "" if none. */
static void to_utc(const char *s, char *buf, size_t n)
{
    time_t t = time_parse_sched(s);

    buf[0] = '\0';
    if (t >= 0)
        time_format_iso8601(t, buf, n);
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = v && *v ? xstrdup(v) : NULL;
}

/* Record the final status and the accounting on the job row. */
static void record_end(store_t *st, struct sched *s,
                       const struct cluster_run_hooks *h,
                       struct cluster_run_result *res)
{
    struct job_rec ch;
    const struct sched_job *j = &res->last;
    char sub[TIME_ISO_MAX], start[TIME_ISO_MAX], end[TIME_ISO_MAX];
    exa_error_t e = EXA_ERROR_INIT;

    job_rec_init(&ch);
    ch.state = (char *)sched_state_name(j->state);
    ch.raw_state = j->raw_state[0] ? (char *)j->raw_state : NULL;
    if (j->exit_code >= 0)
        ch.exit_code = j->exit_code;
    if (j->signal >= 0)
        ch.signal = j->signal;
    if (j->reason[0])
        ch.reason = (char *)j->reason;
    to_utc(j->submit, sub, sizeof(sub));
    to_utc(j->start, start, sizeof(start));
    to_utc(j->end, end, sizeof(end));
    if (sub[0])
        ch.submit_time = sub;
    if (start[0])
        ch.start_time = start;
    if (end[0])
        ch.end_time = end;
    if (sched_state_terminal(j->state) &&
        sched_accounting(s, j->id, 10, &res->acct, &e) == 0) {
        const struct sched_acct *a = &res->acct;
        res->have_acct = 1;
        if (a->submit[0])
            ch.submit_time = res->acct.submit;
        if (a->start[0])
            ch.start_time = res->acct.start;
        if (a->end[0])
            ch.end_time = res->acct.end;
        if (a->queue_seconds >= 0)
            ch.queue_seconds = a->queue_seconds;
        if (a->run_seconds >= 0)
            ch.run_seconds = a->run_seconds;
        if (a->cpu_seconds >= 0)
            ch.cpu_seconds = a->cpu_seconds;
        if (a->nodes >= 0)
            ch.nodes = a->nodes;
        if (a->cpus >= 0)
            ch.cpus = a->cpus;
        if (a->gpus >= 0)
            ch.gpus = a->gpus;
        if (a->gpu_hours >= 0)
            ch.gpu_hours = a->gpu_hours;
        if (a->cpu_hours >= 0)
            ch.cpu_hours = a->cpu_hours;
        hook_step(h, "accounting", "%.0f s queued, %.0f s run, %lld GPU(s), "
                  "%lld CPU(s): %.4f GPU-h, %.4f CPU-h", a->queue_seconds,
                  a->run_seconds, a->gpus, a->cpus,
                  a->gpu_hours < 0 ? 0 : a->gpu_hours,
                  a->cpu_hours < 0 ? 0 : a->cpu_hours);
    } else if (sched_state_terminal(j->state)) {
        /* No accounting: what the status said is all there is. */
        if (j->elapsed_s >= 0)
            ch.run_seconds = (double)j->elapsed_s;
        if (j->gpus >= 0)
            ch.gpus = j->gpus;
        if (j->cpus >= 0)
            ch.cpus = j->cpus;
        if (j->nodes >= 0)
            ch.nodes = j->nodes;
        if (j->elapsed_s >= 0 && j->gpus >= 0)
            ch.gpu_hours = j->gpus * (double)j->elapsed_s / 3600.0;
        if (j->elapsed_s >= 0 && j->cpus >= 0)
            ch.cpu_hours = j->cpus * (double)j->elapsed_s / 3600.0;
        hook_step(h, "accounting", "unavailable: %s", e.text);
    }
    store_job_update(st, res->job.cluster, res->job.job_id, &ch, NULL);
    {
        struct job_rec fresh;
        if (store_job_get(st, res->job.cluster, res->job.job_id, &fresh,
                          NULL) == 0) {
            job_rec_release(&res->job);
            res->job = fresh;
        }
    }
}

/* The last n lines of text, malloc'ed. */
static char *tail_lines(const char *text, size_t len, int n)
{
    size_t i = len;
    while (i > 0 && (text[i - 1] == '\n' || text[i - 1] == ' '))
        i--;
    len = i;
    while (i > 0) {
        if (text[i - 1] == '\n' && --n == 0)
            break;
        i--;
    }
    return xstrndup(text + i, len - i);
}

static void keep_stderr_tail(struct sched *s, struct cluster_run_result *res)
{
    struct strbuf sb = STRBUF_INIT;
    char *path;
    if (!res->job.remote_dir)
        return;
    path = xstrfmt("%s/%s.err", res->job.remote_dir, res->job.job_id);
    /* The last 64 KiB hold far more than CLUSTER_RUN_STDERR_LINES lines;
     * a job's stderr can be gigabytes and is never read whole. */
    if (sched_fetch_tail(s, path, (size_t)64 << 10, &sb, NULL) == 0 &&
        sb.len)
        res->stderr_tail = tail_lines(sb.buf, sb.len, CLUSTER_RUN_STDERR_LINES);
    strbuf_release(&sb);
    free(path);
}

/* ---- artifacts ---- */

static int slurp(const char *path, struct strbuf *out, exa_error_t *err)
{
    FILE *fp = fopen(path, "re");
    char buf[65536];
    size_t n;
    if (!fp)
        return exa_err(err, EXA_EFAIL, "cannot read '%s': %s", path,
                       strerror(errno));
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) {
        if (out->len + n > MAX_ARTIFACT_BYTES) {
            fclose(fp);
            return exa_err(err, EXA_EFAIL, "'%s' is larger than %zu bytes",
                           path, MAX_ARTIFACT_BYTES);
        }
        strbuf_add(out, buf, n);
    }
    fclose(fp);
    return 0;
}

int cluster_run_verify_artifacts(const char *dir, char sha_hex[65],
                                 exa_error_t *err)
{
    struct strbuf sums = STRBUF_INIT;
    char *path = xstrfmt("%s/SHA256SUMS", dir), *p;
    int seen[NARTIFACTS] = { 0 }, rc = -1;

    if (slurp(path, &sums, err) < 0)
        goto out;
    sha256_hex(sums.buf, sums.len, sha_hex);
    for (p = sums.buf; p && *p;) {
        char *nl = strchr(p, '\n'), *name, want[65], got[65];
        struct strbuf data = STRBUF_INIT;
        char *fpath;
        int k = -1;
        if (nl)
            *nl = '\0';
        if (!*p) {
            p = nl ? nl + 1 : NULL;
            continue;
        }
        if (strlen(p) < 67 || p[64] != ' ' || (p[65] != ' ' && p[65] != '*')) {
            exa_err(err, EXA_EFAIL, "SHA256SUMS: malformed line '%.80s'", p);
            goto out;
        }
        memcpy(want, p, 64);
        want[64] = '\0';
        name = p + 66;
        for (int i = 0; i < NARTIFACTS; i++)
            if (!strcmp(name, artifact_files[i]))
                k = i;
        if (k < 0) {
            exa_err(err, EXA_EFAIL, "SHA256SUMS names an unexpected file "
                    "'%.80s'", name);
            goto out;
        }
        fpath = xstrfmt("%s/%s", dir, name);
        if (slurp(fpath, &data, err) < 0) {
            free(fpath);
            strbuf_release(&data);
            goto out;
        }
        sha256_hex(data.buf, data.len, got);
        free(fpath);
        strbuf_release(&data);
        for (char *q = want; *q; q++)
            if (*q >= 'A' && *q <= 'F')
                *q = (char)(*q - 'A' + 'a');
        if (strcmp(want, got)) {
            exa_err(err, EXA_EFAIL, "checksum mismatch for '%s': SHA256SUMS "
                    "says %.12s..., the fetched file is %.12s...", name, want,
                    got);
            goto out;
        }
        seen[k] = 1;
        p = nl ? nl + 1 : NULL;
    }
    for (int i = 0; i < NARTIFACTS; i++)
        if (!seen[i]) {
            exa_err(err, EXA_EFAIL, "SHA256SUMS does not list '%s'",
                    artifact_files[i]);
            goto out;
        }
    rc = 0;
out:
    strbuf_release(&sums);
    free(path);
    return rc;
}

char *cluster_run_fetch_artifacts(struct transport *t, const char *remote_dir,
                                  const char *models_root, const char *model,
                                  const char *run_uuid, char sha_hex[65],
                                  exa_error_t *err)
{
    char *final = xstrfmt("%s/%s/run-%s", models_root, model, run_uuid);
    char *staging = atomic_dir_begin(final, err);
    static const char *const all[] = { "SHA256SUMS", "model.json",
                                       "encoders.json", "metrics.json" };

    free(final);
    if (!staging) {
        exa_err_prefix(err, "data directory '%s' is not writable", models_root);
        return NULL;
    }
    for (size_t i = 0; i < 4; i++) {
        char *rp = xstrfmt("%s/out/%s", remote_dir, all[i]);
        char *lp = xstrfmt("%s/%s", staging, all[i]);
        int rc = transport_get(t, rp, lp, err);
        if (rc < 0)
            exa_err_prefix(err, "cannot fetch '%s'", rp);
        free(rp);
        free(lp);
        if (rc < 0)
            goto fail;
    }
    if (cluster_run_verify_artifacts(staging, sha_hex, err) < 0) {
        exa_err_prefix(err, "artifacts of run %s rejected", run_uuid);
        goto fail;
    }
    return staging;
fail:
    atomic_dir_abort(staging);
    free(staging);
    return NULL;
}

struct publish_ctx {
    const char *staging;
    char *model_dir;
    char *final;
};

static int publish(struct model_version *mv, void *arg, exa_error_t *err)
{
    struct publish_ctx *pc = arg;
    free(pc->final);
    pc->final = xstrfmt("%s/%lld", pc->model_dir, mv->version);
    if (atomic_dir_commit(pc->staging, pc->final, 0755, err) < 0) {
        exa_err_prefix(err, "cannot publish version %lld of %s", mv->version,
                       mv->model);
        return -1;
    }
    free(mv->artifact_path);
    mv->artifact_path = xstrdup(pc->final);
    return 0;
}

static void unpublish(struct model_version *mv, void *arg)
{
    struct publish_ctx *pc = arg;
    (void)mv;
    if (rename(pc->final, pc->staging) < 0)
        atomic_dir_abort(pc->final);
}

static double jnum(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : JOB_NULL_INT;
}

/* Fetch, verify and register the artifacts of the COMPLETED job. */
static int register_version(store_t *st, struct transport *t,
                            const char *models_root,
                            const struct cluster_run_hooks *h,
                            struct cluster_run_result *res, exa_error_t *err)
{
    const struct job_rec *j = &res->job;
    struct publish_ctx pc = { 0 };
    struct strbuf mtext = STRBUF_INIT;
    json_t *m = NULL;
    json_error_t je;
    char sha[65], *staging, *mpath;
    double t0 = time_monotonic();
    int rc = -1;

    staging = cluster_run_fetch_artifacts(t, j->remote_dir, models_root,
                                          j->model, j->run_uuid, sha, err);
    if (!staging)
        return -1;
    hook_step(h, "fetch", "4 files verified in %.2fs (sha256 of SHA256SUMS "
              "%.12s...)", time_monotonic() - t0, sha);
    mpath = xstrfmt("%s/metrics.json", staging);
    if (slurp(mpath, &mtext, err) < 0)
        goto out;
    if (!(m = json_loadb(mtext.buf, mtext.len, 0, &je)) || !json_is_object(m)) {
        exa_err(err, EXA_EFAIL, "metrics.json of run %s is not a JSON object",
                j->run_uuid);
        goto out;
    }
    {
        const json_t *met = json_object_get(m, "metrics");
        const char *stage = jx_get_str(m, "stage", NULL);
        const char *dpath = jx_get_str(m, "dataset_path", NULL);
        res->mv.model = xstrdup(j->model);
        res->mv.stage = xstrdup(stage ? stage : "None");
        res->mv.rmse = jnum(met, "rmse");
        res->mv.mse = jnum(met, "mse");
        res->mv.mape = jnum(met, "mape");
        res->mv.metrics = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
        res->mv.dataset = xstrdup(j->dataset ? j->dataset : "");
        res->mv.dataset_path = dpath ? xstrdup(dpath) : NULL;
        res->mv.train_rows = jint(m, "train_rows");
        res->mv.val_rows = jint(m, "val_rows");
        res->mv.skipped_rows = jint(m, "skipped_rows");
    }
    res->mv.artifact_sha256 = xstrdup(sha);
    res->mv.job_ref = j->id;
    res->mv.cluster = xstrdup(j->cluster);
    res->mv.scheduler = xstrdup(j->scheduler);
    res->mv.job_id = xstrdup(j->job_id);
    res->mv.run_uuid = xstrdup(j->run_uuid);
    pc.staging = staging;
    pc.model_dir = xstrfmt("%s/%s", models_root, j->model);
    if (store_model_register(st, &res->mv, publish, unpublish, &pc, err) < 0)
        goto out;
    res->registered = 1;
    res->job.model_version = res->mv.version;
    hook_step(h, "register", "%s version %lld (%s) in '%s'", res->mv.model,
              res->mv.version, res->mv.stage, res->mv.artifact_path);
    rc = 0;
out:
    if (rc < 0)
        atomic_dir_abort(staging);
    json_decref(m);
    strbuf_release(&mtext);
    free(mpath);
    free(staging);
    free(pc.model_dir);
    free(pc.final);
    return rc;
}

/* Steps 5-7 for the recorded job res->job over s and t. */
static int wait_and_finish(store_t *st, struct sched *s, struct transport *t,
                           const char *models_root,
                           const struct cluster_run_hooks *h,
                           struct cluster_run_result *res, exa_error_t *err)
{
    struct tracker_opts o;
    struct waiter w;
    const char *ids[1];
    int polls = 0, rc;
    exa_error_t werr = EXA_ERROR_INIT;

    if (tracker_opts_from_env(&o, err) < 0)
        return -1;
    memset(&w, 0, sizeof(w));
    w.h = h;
    w.st = st;
    w.job_cluster = res->job.cluster;
    w.s = s;
    w.o = &o;
    w.cluster = res->job.cluster;
    w.job_id = res->job.job_id;
    w.deadline = time_monotonic() + o.max_wait_s;
    w.max_wait = o.max_wait_s;
    o.max_wait_s = 1e18; /* the deadline is kept by wait_sleep */
    o.sleep_fn = wait_sleep;
    o.progress = wait_progress;
    o.arg = &w;
    ids[0] = res->job.job_id;
    {
        /* sacct -S must cover the submission */
        time_t sub;
        if (res->job.submit_time &&
            time_parse_iso8601(res->job.submit_time, &sub, NULL) == 0)
            s->sacct_since = (long long)sub;
        else
            s->sacct_since = (long long)time(NULL) - 86400;
    }
    hook_step(h, "wait", "job %s on %s (poll every %gs)", res->job.job_id,
              res->job.cluster, o.poll_interval_s);
    rc = tracker_wait(s, ids, 1, &o, &res->last, &polls, &werr);
    res->cancelled_by_user = w.cancelled;
    if (rc < 0) {
        if (w.detached) {
            res->detached = 1;
            return exa_err(err, EXA_EFAIL, "interrupted: job %s on cluster "
                           "'%s' is left running", res->job.job_id,
                           res->job.cluster);
        }
        if (w.timed_out)
            return exa_err(err, EXA_ETIMEOUT, "job %s on cluster '%s' not "
                           "finished after %g s (%d polls); it keeps running",
                           res->job.job_id, res->job.cluster, w.max_wait,
                           polls);
        if (err)
            *err = werr;
        return -1;
    }
    record_end(st, s, h, res);
    if (res->last.state != SCHED_COMPLETED) {
        keep_stderr_tail(s, res);
        return exa_err(err, EXA_EFAIL, "job %s on cluster '%s' ended %s%s%s "
                       "(exit %d%s): no version registered",
                       res->job.job_id, res->job.cluster,
                       sched_state_name(res->last.state),
                       res->last.raw_state[0] &&
                               strcmp(res->last.raw_state,
                                      sched_state_name(res->last.state))
                           ? " / "
                           : "",
                       res->last.raw_state[0] &&
                               strcmp(res->last.raw_state,
                                      sched_state_name(res->last.state))
                           ? res->last.raw_state
                           : "",
                       res->last.exit_code,
                       res->last.signal > 0 ? ", signal" : "");
    }
    if (register_version(st, t, models_root, h, res, err) < 0) {
        struct job_rec ch;
        job_rec_init(&ch);
        ch.reason = err ? err->text : "artifacts rejected";
        store_job_update(st, res->job.cluster, res->job.job_id, &ch, NULL);
        set_str(&res->job.reason, ch.reason);
        return -1;
    }
    return 0;
}

/* ---- the run ---- */

static char *local_script_dir(exa_error_t *err)
{
    const char *tmp = getenv("TMPDIR");
    char *tmpl = xstrfmt("%s/exa-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl)) {
        exa_err(err, EXA_ECONFIG, "cannot make a temporary directory: %s",
                strerror(errno));
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

static char *dirname_of(const char *p)
{
    const char *slash = strrchr(p, '/');
    if (!slash || slash == p)
        return xstrdup(slash ? "/" : ".");
    return xstrndup(p, (size_t)(slash - p));
}

static const char *base_of(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? slash + 1 : p;
}

static int open_paths(const char *db_path, const char *models_root,
                      const char *regpath, store_t **st, char **root,
                      char **reg, exa_error_t *err)
{
    *root = models_root ? xstrdup(models_root) : pipeline_models_root(err);
    if (!*root)
        return -1;
    *reg = regpath ? xstrdup(regpath) : registry_default_path(err);
    if (!*reg)
        return -1;
    *st = store_open(db_path, err);
    return *st ? 0 : -1;
}

int cluster_run(const struct cluster_run_request *req,
                struct cluster_run_result *res, exa_error_t *err)
{
    const struct cluster_run_hooks *h = &req->hooks;
    const struct sched_resources *r = req->res;
    struct sched_resources none = SCHED_RESOURCES_INIT;
    struct fleet f = { NULL, 0 };
    const struct fleet_cluster *c;
    const struct zoo_model *zm;
    const struct zoo_dataset *zd;
    struct transport *t = NULL;
    struct sched *s = NULL;
    struct sched_submit_req sreq;
    struct sched_submit_result sres;
    struct strbuf script = STRBUF_INIT;
    struct strvec argv = STRVEC_INIT;
    store_t *st = NULL;
    char *root = NULL, *reg = NULL, *remote_dir = NULL, *workdir = NULL;
    char *ldir = NULL, *lscript = NULL, *dpath = NULL;
    const char *name = req->cluster, *rexa = req->remote_exa;
    char uuid[13], now[TIME_ISO_MAX];
    int rc = -1;

    cluster_run_result_init(res);
    memset(&sres, 0, sizeof(sres));
    if (!r)
        r = &none;
    if (!(zm = zoo_model_find(req->model, err)) ||
        !(zd = zoo_dataset_find(req->dataset, err)))
        return -1;
    if (!req->dataset_path || !*req->dataset_path)
        return exa_err(err, EXA_EUSAGE, "a cluster run needs the dataset's "
                       "path (--dataset-path)");
    if (req->stage_dataset && access(req->dataset_path, R_OK) < 0)
        return exa_err(err, EXA_ECONFIG, "dataset file '%s' not found: %s",
                       req->dataset_path, strerror(errno));
    if (!rexa || !*rexa)
        rexa = getenv("EXAMLOPS_HPC_REMOTE_EXA");
    if (!rexa || !*rexa)
        rexa = "exa";
    if (open_paths(req->db_path, req->models_root, req->regpath, &st, &root,
                   &reg, err) < 0)
        goto out;
    res->db_path = xstrdup(st->path);

    /* 1. the cluster */
    if (fleet_load(st, reg, &f, err) < 0)
        goto out;
    if (!name || !strcmp(name, "auto")) {
        struct place_ask ask;
        ask.gpus = (int)r->gpus;
        ask.nodes = r->nodes > 0 ? (int)r->nodes : 1;
        ask.cpus = (int)((r->cpus_per_task > 0 ? r->cpus_per_task : 0) *
                         (r->ntasks > 0 ? r->ntasks : 1));
        if (place_auto(st, &f, &ask, &name, &res->placement_reason, err) < 0)
            goto out;
        hook_step(h, "placement", "%s", res->placement_reason);
    }
    res->cluster = xstrdup(name);
    if (fleet_require_active(&f, name, err) < 0)
        goto out;
    c = fleet_find(&f, name);
    res->scheduler = xstrdup(c->def.scheduler ? c->def.scheduler : "unknown");
    if (strcmp(res->scheduler, "slurm") && strcmp(res->scheduler, "flux")) {
        exa_err(err, EXA_EUSAGE, "cluster '%s' has scheduler '%s'; a cluster "
                "run needs slurm or flux", name, res->scheduler);
        goto out;
    }

    /* 2. transport and preflight */
    if (!(t = fleet_cluster_transport(c, err)))
        goto out;
    if (!(s = sched_new(res->scheduler, t, err)))
        goto out;
    sched_new_run_id(uuid);
    if (!(remote_dir = sched_remote_jobdir(s, uuid, err)))
        goto out;
    workdir = dirname_of(remote_dir);
    if (run_preflight(t, c, r, workdir, rexa, res) < 0) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < res->pf.n; i++)
            if (!res->pf.checks[i].ok)
                strbuf_addf(&sb, "%s%s (%s)", sb.len ? "; " : "",
                            res->pf.checks[i].check, res->pf.checks[i].detail);
        exa_err(err, EXA_EFAIL, "preflight failed for '%s': %s", name, sb.buf);
        strbuf_release(&sb);
        goto out;
    }
    hook_step(h, "preflight", "%zu checks passed on '%s'", res->pf.n, name);

    /* 3. stage */
    {
        const char *mk[] = { "mkdir", "-p", remote_dir, NULL };
        struct transport_result tr = TRANSPORT_RESULT_INIT;
        int mrc = transport_run_ok(t, mk, NULL, 0, &tr, err);
        transport_result_release(&tr);
        if (mrc < 0)
            goto out;
    }
    if (req->stage_dataset) {
        dpath = xstrfmt("%s/%s", remote_dir, base_of(req->dataset_path));
        if (transport_put(t, req->dataset_path, dpath, err) < 0)
            goto out;
        hook_step(h, "stage", "dataset copied to '%s'", dpath);
    } else {
        dpath = xstrdup(req->dataset_path);
    }
    strvec_pushl(&argv, rexa, "train", "--model", zm->name, "--dataset",
                 zd->name, "--dataset-path", dpath, NULL);
    strvec_pushf(&argv, "--out=%s/out", remote_dir);
    if (req->dummy)
        strvec_push(&argv, "--dummy");
    if (req->nthread > 0)
        strvec_pushf(&argv, "--threads=%d", req->nthread);
    {
        struct runscript rs = { NULL, remote_dir, NULL, NULL };
        char *title = xstrfmt("exa %s on %s, run %s", zm->name, zd->name,
                              uuid);
        rs.title = title;
        rs.argv = (const char *const *)argv.v;
        if (runscript_render(&rs, &script, err) < 0) {
            free(title);
            goto out;
        }
        free(title);
    }
    if (!(ldir = local_script_dir(err)))
        goto out;
    lscript = xstrfmt("%s/run.sh", ldir);
    if (runscript_write(lscript, script.buf, err) < 0)
        goto out;

    /* 4. submit and record */
    {
        struct sched_resources ask = *r;
        char *jn = xstrfmt("exa_%s_%s", zm->name, zd->name);
        for (char *p = jn; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        if (!ask.job_name)
            ask.job_name = jn;
        memset(&sreq, 0, sizeof(sreq));
        sreq.script_path = lscript;
        sreq.remote_dir = remote_dir;
        sreq.run_id = uuid;
        sreq.res = &ask;
        s->sacct_since = (long long)time(NULL);
        time_format_iso8601(time(NULL), now, sizeof(now));
        rc = sched_submit(s, &sreq, &sres, err);
        if (rc == 0) {
            res->job.job_name = sched_job_name(ask.job_name, uuid);
        }
        free(jn);
        if (rc < 0) {
            rc = -1;
            goto out;
        }
        rc = -1;
    }
    res->job.cluster = xstrdup(name);
    res->job.scheduler = xstrdup(res->scheduler);
    res->job.job_id = xstrdup(sres.job_id);
    res->job.run_uuid = xstrdup(uuid);
    res->job.kind = xstrdup("train");
    res->job.model = xstrdup(zm->name);
    res->job.dataset = xstrdup(zd->name);
    res->job.state = xstrdup("PENDING");
    res->job.submit_time = xstrdup(now);
    res->job.remote_dir = xstrdup(remote_dir);
    res->job.nodes = r->nodes > 0 ? r->nodes : 1;
    res->job.gpus = r->gpus;
    res->job.cpus = (r->cpus_per_task > 0 ? r->cpus_per_task : 1) *
                    (r->ntasks > 0 ? r->ntasks : 1);
    if (store_job_insert(st, &res->job, &res->job.id, err) < 0) {
        /* the job runs; say so rather than lose it */
        exa_err_prefix(err, "job %s submitted on '%s' but not recorded",
                       sres.job_id, name);
        goto out;
    }
    res->job_recorded = 1;
    hook_step(h, "submit", "job %s on %s (%s)%s, run %s, in '%s'",
              sres.job_id, name, res->scheduler,
              sres.reused ? " (found by name after a lost reply)" : "", uuid,
              remote_dir);
    for (size_t i = 0; i < sres.warnings.nr; i++)
        hook_step(h, "submit", "warning: %s", sres.warnings.v[i]);

    /* 5-7 */
    rc = wait_and_finish(st, s, t, root, h, res, err);
out:
    if (lscript)
        unlink(lscript);
    if (ldir)
        rmdir(ldir);
    sched_submit_result_release(&sres);
    strvec_clear(&argv);
    strbuf_release(&script);
    sched_free(s);
    transport_close(t);
    fleet_release(&f);
    store_close(st);
    free(root);
    free(reg);
    free(remote_dir);
    free(workdir);
    free(ldir);
    free(lscript);
    free(dpath);
    return rc;
}

int cluster_run_pending(const char *db_path, const char *cluster,
                        const char *job_id, exa_error_t *err)
{
    struct job_rec j;
    store_t *st = store_open(db_path, err);
    exa_error_t e = EXA_ERROR_INIT;
    int rc;
    if (!st)
        return -1;
    if (store_job_get(st, cluster, job_id, &j, &e) < 0) {
        store_close(st);
        if (e.code == EXA_ENOTFOUND)
            return 0;
        if (err)
            *err = e;
        return -1;
    }
    rc = j.run_uuid && j.remote_dir && j.model &&
         j.model_version == JOB_NULL_INT && j.scheduler &&
         (!strcmp(j.scheduler, "slurm") || !strcmp(j.scheduler, "flux"));
    job_rec_release(&j);
    store_close(st);
    return rc;
}

int cluster_run_resume(const char *db_path, const char *regpath,
                       const char *models_root, const char *cluster,
                       const char *job_id, struct transport *tover,
                       const struct cluster_run_hooks *h,
                       struct cluster_run_result *res, exa_error_t *err)
{
    struct fleet f = { NULL, 0 };
    const struct fleet_cluster *c;
    struct transport *t = tover;
    struct sched *s = NULL;
    store_t *st = NULL;
    char *root = NULL, *reg = NULL;
    int rc = -1;

    cluster_run_result_init(res);
    if (open_paths(db_path, models_root, regpath, &st, &root, &reg, err) < 0)
        goto out;
    res->db_path = xstrdup(st->path);
    if (store_job_get(st, cluster, job_id, &res->job, err) < 0)
        goto out;
    res->job_recorded = 1;
    if (!res->job.run_uuid || !res->job.remote_dir || !res->job.model) {
        exa_err(err, EXA_EUSAGE, "job %s on '%s' is not a cluster run of exa "
                "pipeline run", job_id, cluster);
        goto out;
    }
    if (res->job.model_version != JOB_NULL_INT) {
        exa_err(err, EXA_EFAIL, "job %s on '%s' already registered version "
                "%lld of %s", job_id, cluster, res->job.model_version,
                res->job.model);
        goto out;
    }
    if (fleet_load(st, reg, &f, err) < 0)
        goto out;
    if (!(c = fleet_find(&f, cluster))) {
        exa_err(err, EXA_ENOTFOUND, "unknown cluster: '%s'", cluster);
        goto out;
    }
    res->cluster = xstrdup(cluster);
    res->scheduler = xstrdup(res->job.scheduler);
    if (!t && !(t = fleet_cluster_transport(c, err)))
        goto out;
    if (!(s = sched_new(res->job.scheduler, t, err)))
        goto out;
    rc = wait_and_finish(st, s, t, root, h, res, err);
out:
    sched_free(s);
    if (t != tover)
        transport_close(t);
    fleet_release(&f);
    store_close(st);
    free(root);
    free(reg);
    return rc;
}
