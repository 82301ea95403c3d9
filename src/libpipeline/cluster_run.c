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
 * row exists exactly when its verified directory does. That end of the
 * job (accounting on the row, stderr tail, fetch, SHA256SUMS check,
 * registration) lives in cluster_artifacts.c, reached through
 * cluster_run_int.h; this file keeps the orchestration.
 */
#include "libpipeline/cluster_run_int.h"

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
#include "libfleet/gate.h"
#include "libfleet/placement.h"
#include "libfleet/registry.h"
#include "libpipeline/run.h"
#include "libpipeline/train.h"
#include "libpipeline/zoo.h"
#include "libsched/byname.h"
#include "libsched/runscript.h"
#include "libsched/tracker.h"
#include "libstore/audit.h"
#include "libstore/nodes.h"
#include "libutil/atomic.h"
#include "libutil/json.h"
#include "libutil/sha256.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

void cluster_run_result_init(struct cluster_run_result *res)
{
    memset(res, 0, sizeof(*res));
    job_rec_init(&res->job);
    model_version_init(&res->mv);
    sched_job_init(&res->last, "");
    sched_acct_init(&res->acct);
    strvec_init(&res->dry_command);
    res->task_exit_code = JOB_NULL_INT;
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
    free(res->dry_script);
    free(res->dry_remote_dir);
    strvec_clear(&res->dry_command);
    free(res->task_state);
    free(res->task_reason);
    free(res->worker_id);
    free(res->worker_job_id);
    memset(res, 0, sizeof(*res));
}

/* ---- cluster, transport, placement ---- */

/* Placement over the ACTIVE clusters of f; sets *chosen. */
static int place_auto(store_t *st, const struct fleet *f,
                      const struct place_ask *ask, const char **chosen,
                      char **reason, exa_error_t *err)
{
    struct node_row *nodes = NULL, *pnodes = NULL;
    size_t nnodes = 0, nr = 0, npnodes = 0;
    struct place_cluster *v = NULL;
    struct place_result pr;
    int rc = -1;

    memset(&pr, 0, sizeof(pr));
    if (place_load_candidates(st, f, &v, &nr, &nodes, &nnodes, err) < 0)
        goto out;
    if (!nr) {
        exa_err(err, EXA_ENOTAPPROVED,
                "auto-placement found no cluster: "
                "no cluster is ACTIVE (connect one and have it approved)");
        goto out;
    }
    if (place_restrict_partition(f, ask->partition, v, nr, &pnodes, &npnodes,
                                 err) < 0)
        goto out;
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
    free(pnodes);
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
    struct preflight_target tg = {0};
    struct preflight_ask ask = {0, 1, NULL, NULL, NULL, NULL, 0};
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
        ask.nodes = r->nodes > 0 ? (int)r->nodes : 0; /* 0: not asked */
        ask.partition = r->partition;
        ask.account = r->account;
        ask.qos = r->qos;
        ask.ntasks = (int)r->ntasks;
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
    double deadline; /* time_monotonic() */
    double max_wait; /* seconds, for messages */
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
     * terminal state is written with the accounting by
     * cluster_run_record_end */
    if (n && w->st &&
        (jobs[0].state == SCHED_PENDING || jobs[0].state == SCHED_RUNNING ||
         jobs[0].state == SCHED_SUSPENDED) &&
        strcmp(w->last_state, sched_state_name(jobs[0].state))) {
        /* the gate's one status writer; no accounting before the end */
        if (gate_record_status(w->st, NULL, w->job_cluster, &jobs[0], 1, NULL,
                               NULL) >= 0)
            xsnprintf(w->last_state, sizeof(w->last_state), "%s",
                      sched_state_name(jobs[0].state));
    }
    if (n && w->h && w->h->wait)
        w->h->wait(w->h->arg, &jobs[0], elapsed_s);
}

/* Outages are shown as a wait step (the tracker keeps waiting). */
static void wait_outage(void *arg, const struct tracker_outage *ev)
{
    struct waiter *w = arg;
    char since[16];
    time_t t = (time_t)ev->since;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(since, sizeof(since), "%H:%M:%S", &tm);
    if (ev->active)
        hook_step(w->h, "wait",
                  "%s unreachable since %s, retrying in %g s "
                  "(%d failed poll%s: %s)",
                  w->cluster, since, ev->retry_in_s, ev->failures,
                  ev->failures == 1 ? "" : "s", ev->error->text);
    else
        hook_step(w->h, "wait",
                  "%s reachable again after %.0f s "
                  "(unreachable since %s)",
                  w->cluster, ev->lasted_s, since);
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = v && *v ? xstrdup(v) : NULL;
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
    o.outage = wait_outage;
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
            return exa_err(err, EXA_EFAIL,
                           "interrupted: job %s on cluster "
                           "'%s' is left running",
                           res->job.job_id, res->job.cluster);
        }
        if (w.timed_out)
            return exa_err(err, EXA_ETIMEOUT,
                           "job %s on cluster '%s' not "
                           "finished after %g s (%d polls); it keeps running",
                           res->job.job_id, res->job.cluster, w.max_wait,
                           polls);
        if (err)
            *err = werr;
        return -1;
    }
    cluster_run_record_end(st, s, h, res);
    if (res->last.state != SCHED_COMPLETED) {
        cluster_run_keep_stderr_tail(s, res);
        return exa_err(
            err, EXA_EFAIL,
            "job %s on cluster '%s' ended %s%s%s "
            "(exit %d%s): no version registered",
            res->job.job_id, res->job.cluster,
            sched_state_name(res->last.state),
            res->last.raw_state[0] && strcmp(res->last.raw_state,
                                             sched_state_name(res->last.state))
                ? " / "
                : "",
            res->last.raw_state[0] && strcmp(res->last.raw_state,
                                             sched_state_name(res->last.state))
                ? res->last.raw_state
                : "",
            res->last.exit_code, res->last.signal > 0 ? ", signal" : "");
    }
    if (cluster_run_register_version(st, t, models_root, h, res, err) < 0) {
        struct job_rec ch;
        job_rec_init(&ch);
        ch.reason = err ? err->text : "artifacts rejected";
        store_job_update(st, res->job.cluster, res->job.job_id, &ch, NULL);
        set_str(&res->job.reason, ch.reason);
        return -1;
    }
    return 0;
}

/* ---- the run id, and what the run already has ---- */

static void id_str(struct strbuf *sb, const char *key, const char *v)
{
    if (v)
        strbuf_addf(sb, "%s=%zu:%s\n", key, strlen(v), v);
    else
        strbuf_addf(sb, "%s=-\n", key);
}

void cluster_run_id(const struct cluster_run_request *req,
                    const struct sched_resources *r, const char *user,
                    char out[CLUSTER_RUN_ID_LEN + 1])
{
    static const struct sched_resources none = SCHED_RESOURCES_INIT;
    const struct zoo_model *zm = zoo_model_find(req->model, NULL);
    const struct zoo_dataset *zd = zoo_dataset_find(req->dataset, NULL);
    struct strbuf sb = STRBUF_INIT;
    unsigned char md[EXA_SHA256_LEN];

    if (!r)
        r = &none;
    strbuf_addstr(&sb, "exa pipeline run v1\n");
    id_str(&sb, "model", zm ? zm->name : req->model);
    id_str(&sb, "dataset", zd ? zd->name : req->dataset);
    id_str(&sb, "dataset_path", req->dataset_path);
    strbuf_addf(&sb, "stage_dataset=%d\n", req->stage_dataset ? 1 : 0);
    strbuf_addf(&sb, "dummy=%d\n", req->dummy ? 1 : 0);
    strbuf_addf(&sb, "threads=%d\n", req->nthread);
    id_str(&sb, "cluster", req->cluster ? req->cluster : "auto");
    if (req->via_worker) /* only then: batch ids stay what they were */
        strbuf_addstr(&sb, "via=worker\n");
    id_str(&sb, "user", user);
    {
        /* the run's directory on the cluster is part of the run */
        const char *wd = getenv("EXAMLOPS_HPC_REMOTE_WORKDIR");
        if (!wd || !*wd)
            wd = getenv("EXAMLOPS_HPC_WORKDIR");
        id_str(&sb, "workdir", wd && *wd ? wd : NULL);
    }
    id_str(&sb, "partition", r->partition);
    id_str(&sb, "qos", r->qos);
    id_str(&sb, "account", r->account);
    id_str(&sb, "constraint", r->constraint);
    id_str(&sb, "time", r->time);
    id_str(&sb, "mem", r->mem);
    id_str(&sb, "job_name", r->job_name);
    id_str(&sb, "array", r->array);
    strbuf_addf(&sb,
                "nodes=%ld\nntasks=%ld\ncpus_per_task=%ld\ngpus=%ld\n"
                "hold=%d\n",
                r->nodes, r->ntasks, r->cpus_per_task, r->gpus,
                r->hold ? 1 : 0);
    exa_sha256(sb.buf, sb.len, md);
    for (size_t i = 0; i < CLUSTER_RUN_ID_LEN / 2; i++)
        xsnprintf(out + 2 * i, 3, "%02x", md[i]);
    out[CLUSTER_RUN_ID_LEN] = '\0';
    strbuf_release(&sb);
}

int cluster_run_valid_id(const char *r)
{
    size_t n = strlen(r);
    if (!n || n > 64)
        return 0;
    for (; *r; r++)
        if (!((*r >= 'a' && *r <= 'z') || (*r >= 'A' && *r <= 'Z') ||
              (*r >= '0' && *r <= '9') || *r == '_' || *r == '-'))
            return 0;
    return 1;
}

/* The user part of the job name: the ask's, else "exa_<model>_<dataset>"
 * in lower case. malloc'ed. */
static char *user_job_name(const struct sched_resources *r,
                           const struct zoo_model *zm,
                           const struct zoo_dataset *zd)
{
    char *jn;
    if (r->job_name && *r->job_name)
        return xstrdup(r->job_name);
    jn = xstrfmt("exa_%s_%s", zm->name, zd->name);
    for (char *p = jn; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return jn;
}

/* For `auto`: the cluster where this run id already has a job row
 * (newest), or NULL. malloc'ed. */
static char *cluster_of_run(store_t *st, const char *run_id)
{
    struct job_filter jf = {NULL, NULL, NULL, run_id, 1, NULL, 0};
    struct job_rec *list = NULL;
    size_t n = 0;
    char *c = NULL;
    if (store_job_list(st, &jf, &list, &n, NULL) == 0 && n && list[0].cluster)
        c = xstrdup(list[0].cluster);
    job_rec_free_list(list, n);
    return c;
}

enum existing { EX_NONE, EX_ADOPT, EX_DONE, EX_RETRY };

struct lookup {
    struct job_rec *rows; /* this run's job rows on the cluster, newest first */
    size_t nrows;
    struct sched_job *found; /* the scheduler's jobs under the run's name */
    size_t nfound;
    const struct job_rec *row;   /* the chosen job's row, if any */
    const struct sched_job *job; /* the chosen job's scheduler view, if any */
    const char *job_id;          /* the chosen job */
};

static void lookup_release(struct lookup *lk)
{
    job_rec_free_list(lk->rows, lk->nrows);
    free(lk->found);
    memset(lk, 0, sizeof(*lk));
}

static const struct job_rec *row_of(const struct lookup *lk, const char *id)
{
    for (size_t i = 0; i < lk->nrows; i++)
        if (lk->rows[i].job_id && !strcmp(lk->rows[i].job_id, id))
            return &lk->rows[i];
    return NULL;
}

static const struct sched_job *found_of(const struct lookup *lk, const char *id)
{
    for (size_t i = 0; i < lk->nfound; i++)
        if (!strcmp(lk->found[i].id, id))
            return &lk->found[i];
    return NULL;
}

static void choose(struct lookup *lk, const char *id)
{
    lk->job_id = id;
    lk->row = row_of(lk, id);
    lk->job = found_of(lk, id);
}

/* A row's state as recorded, SCHED_UNKNOWN when absent. */
static enum sched_state row_state(const struct job_rec *j)
{
    return j->state ? sched_state_parse(j->state) : SCHED_UNKNOWN;
}

/*
 * What run_id already has on the cluster of s (see cluster_run.h step 4):
 * the rows of st, then the scheduler's jobs named job_name. Returns the
 * verdict with lk->job_id (and row/job) chosen, or -1 with err when the
 * scheduler could not be asked.
 */
static int find_existing(store_t *st, struct sched *s, const char *cluster,
                         const char *run_id, const char *job_name,
                         struct lookup *lk, exa_error_t *err)
{
    struct job_filter jf = {NULL, cluster, NULL, run_id, 0, NULL, 0};
    long long since = 0;

    memset(lk, 0, sizeof(*lk));
    if (store_job_list(st, &jf, &lk->rows, &lk->nrows, err) < 0)
        return -1;
    for (size_t i = 0; i < lk->nrows; i++) {
        time_t t;
        if (lk->rows[i].submit_time &&
            time_parse_iso8601(lk->rows[i].submit_time, &t, NULL) == 0 &&
            (!since || (long long)t < since))
            since = (long long)t;
    }
    if (sched_find_by_name(s, job_name, since, &lk->found, &lk->nfound, err) <
        0) {
        exa_err_prefix(err,
                       "cannot tell whether run %s already has a job "
                       "on '%s'",
                       run_id, cluster);
        return -1;
    }
    /* 1. queued or running */
    for (size_t i = 0; i < lk->nfound; i++)
        if (!sched_state_terminal(lk->found[i].state) &&
            lk->found[i].state != SCHED_UNKNOWN) {
            choose(lk, lk->found[i].id);
            return EX_ADOPT;
        }
    /* 2. its version is registered */
    for (size_t i = 0; i < lk->nrows; i++)
        if (lk->rows[i].model_version != JOB_NULL_INT) {
            choose(lk, lk->rows[i].job_id);
            return EX_DONE;
        }
    /* 3. COMPLETED, not yet registered */
    for (size_t i = 0; i < lk->nfound; i++)
        if (lk->found[i].state == SCHED_COMPLETED) {
            choose(lk, lk->found[i].id);
            return EX_ADOPT;
        }
    for (size_t i = 0; i < lk->nrows; i++)
        if (row_state(&lk->rows[i]) == SCHED_COMPLETED &&
            !found_of(lk, lk->rows[i].job_id)) {
            choose(lk, lk->rows[i].job_id);
            return EX_ADOPT;
        }
    /* 4. recorded as not ended, and the name lookup did not see it end:
     * the tracker asks for it by id */
    for (size_t i = 0; i < lk->nrows; i++) {
        const struct sched_job *f = found_of(lk, lk->rows[i].job_id);
        if (!sched_state_terminal(row_state(&lk->rows[i])) &&
            (!f || !sched_state_terminal(f->state))) {
            choose(lk, lk->rows[i].job_id);
            return EX_ADOPT;
        }
    }
    /* 5. only ended jobs that did not complete: run again */
    if (lk->nfound) {
        choose(lk, lk->found[0].id);
        return EX_RETRY;
    }
    if (lk->nrows) {
        choose(lk, lk->rows[0].job_id);
        return EX_RETRY;
    }
    return EX_NONE;
}

/* The submit time to show for the chosen job. */
static const char *submitted_at(const struct lookup *lk)
{
    if (lk->row && lk->row->submit_time)
        return lk->row->submit_time;
    if (lk->job && lk->job->submit[0])
        return lk->job->submit;
    return "at an unknown time";
}

/* The state to show for the chosen job. */
static const char *state_of(const struct lookup *lk)
{
    if (lk->job && lk->job->state != SCHED_UNKNOWN)
        return sched_state_name(lk->job->state);
    if (lk->row && lk->row->state)
        return lk->row->state;
    return "UNKNOWN";
}

/* res->already: load the registered version of the chosen row. */
static int report_done(store_t *st, const struct lookup *lk,
                       const struct cluster_run_hooks *h,
                       struct cluster_run_result *res, exa_error_t *err)
{
    struct model_version *mv = NULL;
    size_t n = 0;

    if (store_job_get(st, lk->row->cluster, lk->row->job_id, &res->job, err) <
        0)
        return -1;
    res->job_recorded = 1;
    if (store_model_versions(st, res->job.model, res->job.model_version, &mv,
                             &n, err) < 0)
        return -1;
    if (!n) {
        model_version_free_list(mv, n);
        return exa_err(err, EXA_ENOTFOUND,
                       "job %s on '%s' names version "
                       "%lld of %s, which is not registered",
                       res->job.job_id, res->job.cluster,
                       res->job.model_version, res->job.model);
    }
    model_version_release(&res->mv);
    res->mv = mv[0];
    model_version_init(&mv[0]);
    model_version_free_list(mv, n);
    res->registered = 1;
    res->already = 1;
    hook_step(h, "done",
              "run %s already registered version %lld of %s from "
              "job %s on %s (%s), submitted %s; --new runs it again",
              res->run_id, res->mv.version, res->mv.model, res->job.job_id,
              res->job.cluster, res->job.state ? res->job.state : "COMPLETED",
              res->job.submit_time ? res->job.submit_time
                                   : "at an unknown "
                                     "time");
    return 0;
}

/*
 * Make the chosen job res->job: its row, or (exa was killed between the
 * submission and the insert) a new row from what the scheduler says.
 */
static int adopt_row(store_t *st, struct gate *g, const struct lookup *lk,
                     const char *cluster, const char *job_name,
                     const char *remote_dir, const struct zoo_model *zm,
                     const struct zoo_dataset *zd,
                     const struct sched_resources *r,
                     struct cluster_run_result *res, exa_error_t *err)
{
    char now[TIME_ISO_MAX];
    time_t t;

    if (lk->row) {
        if (store_job_get(st, cluster, lk->job_id, &res->job, err) < 0)
            return -1;
        res->job_recorded = 1;
        return 0;
    }
    t = lk->job ? time_parse_sched(lk->job->submit) : (time_t)-1;
    time_format_iso8601(t != (time_t)-1 ? t : time(NULL), now, sizeof(now));
    res->job.cluster = xstrdup(cluster);
    res->job.scheduler = xstrdup(gate_scheduler(g));
    res->job.job_id = xstrdup(lk->job_id);
    res->job.run_uuid = xstrdup(res->run_id);
    res->job.job_name = xstrdup(job_name);
    res->job.kind = xstrdup("train");
    res->job.model = xstrdup(zm->name);
    res->job.dataset = xstrdup(zd->name);
    res->job.state = xstrdup(lk->job && lk->job->state != SCHED_UNKNOWN
                                 ? sched_state_name(lk->job->state)
                                 : "PENDING");
    res->job.submit_time = xstrdup(now);
    res->job.remote_dir = xstrdup(remote_dir);
    res->job.nodes = r->nodes > 0 ? r->nodes : 1;
    res->job.gpus = r->gpus;
    res->job.cpus = (r->cpus_per_task > 0 ? r->cpus_per_task : 1) *
                    (r->ntasks > 0 ? r->ntasks : 1);
    if (gate_job_insert(g, &res->job, &res->job.id, err) < 0) {
        exa_err_prefix(err, "job %s of run %s on '%s' found but not recorded",
                       lk->job_id, res->run_id, cluster);
        return -1;
    }
    res->job_recorded = 1;
    return 0;
}

/* ---- the run ---- */

void cluster_run_payload_argv(const struct cluster_run_request *req,
                              const char *rexa, const char *model,
                              const char *dataset, const char *dpath,
                              const char *out_dir, struct strvec *argv)
{
    strvec_pushl(argv, rexa, "train", "--model", model, "--dataset", dataset,
                 "--dataset-path", dpath, NULL);
    strvec_pushf(argv, "--out=%s", out_dir);
    if (req->dummy)
        strvec_push(argv, "--dummy");
    if (req->nthread > 0)
        strvec_pushf(argv, "--threads=%d", req->nthread);
    if (req->max_skip_set)
        strvec_pushf(argv, "--max-skip=%.17g", req->max_skip);
}

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

int cluster_run_open_paths(const char *db_path, const char *models_root,
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
    struct fleet f = {NULL, 0};
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
    char *ldir = NULL, *lscript = NULL, *dpath = NULL, *user = NULL;
    char *ujn = NULL, *jobname = NULL;
    const char *name = req->cluster, *rexa = req->remote_exa;
    char uuid[65], now[TIME_ISO_MAX];
    struct lookup lk;
    struct gate *g = NULL;
    int rc = -1;

    cluster_run_result_init(res);
    if (req->via_worker)
        return exa_err(err, EXA_EUSAGE,
                       "cluster_run() runs --via batch; --via worker is "
                       "pipeline_task_run() (libtask/pipeline_task.h)");
    memset(&sres, 0, sizeof(sres));
    memset(&lk, 0, sizeof(lk));
    if (!r)
        r = &none;
    if (!(zm = zoo_model_find(req->model, err)) ||
        !(zd = zoo_dataset_find(req->dataset, err)))
        return -1;
    if (!req->new_run && req->run_id && !cluster_run_valid_id(req->run_id))
        return exa_err(err, EXA_EUSAGE,
                       "run id '%s' is not 1 to 64 of "
                       "[A-Za-z0-9_-]",
                       req->run_id);
    if (!req->dataset_path || !*req->dataset_path)
        return exa_err(err, EXA_EUSAGE,
                       "a cluster run needs the dataset's "
                       "path (--dataset-path)");
    if (req->stage_dataset && access(req->dataset_path, R_OK) < 0)
        return exa_err(err, EXA_ECONFIG, "dataset file '%s' not found: %s",
                       req->dataset_path, strerror(errno));
    if (!rexa || !*rexa)
        rexa = getenv("EXAMLOPS_HPC_REMOTE_EXA");
    if (!rexa || !*rexa)
        rexa = "exa";
    if (cluster_run_open_paths(req->db_path, req->models_root, req->regpath,
                               &st, &root, &reg, err) < 0)
        goto out;
    res->db_path = xstrdup(st->path);

    /* the run id: what was asked, unless set or new */
    user = req->user ? xstrdup(req->user) : audit_actor();
    if (req->new_run)
        sched_new_run_id(uuid);
    else if (req->run_id)
        xsnprintf(uuid, sizeof(uuid), "%s", req->run_id);
    else
        cluster_run_id(req, r, user, uuid);
    xsnprintf(res->run_id, sizeof(res->run_id), "%s", uuid);

    /* 1. the cluster */
    if (fleet_load(st, reg, &f, err) < 0)
        goto out;
    if (!name || !strcmp(name, "auto")) {
        char *prev = req->new_run ? NULL : cluster_of_run(st, uuid);
        const struct fleet_cluster *pc = prev ? fleet_find(&f, prev) : NULL;
        free(prev);
        if (pc) {
            name = pc->def.name;
            res->placement_reason = xstrfmt("run %s already has a job on "
                                            "%s",
                                            uuid, name);

            hook_step(h, "placement", "%s", res->placement_reason);
        }
    }
    if (!name || !strcmp(name, "auto")) {
        struct place_ask ask;
        /* the partition the job goes to (NULL: each cluster's default) */
        ask.partition = r->partition;
        ask.gpus = (int)r->gpus;
        ask.nodes = r->nodes > 0 ? (int)r->nodes : 1; /* placement: >= 1 */
        ask.cpus = (int)((r->cpus_per_task > 0 ? r->cpus_per_task : 0) *
                         (r->ntasks > 0 ? r->ntasks : 1));
        if (place_auto(st, &f, &ask, &name, &res->placement_reason, err) < 0)
            goto out;
        hook_step(h, "placement", "%s", res->placement_reason);
    }
    res->cluster = xstrdup(name);
    {
        /* the gate: registered, host key as approved, ACTIVE */
        struct gate_req gr;
        memset(&gr, 0, sizeof(gr));
        gr.cluster = name;
        gr.purpose = GATE_SCHEDULE;
        gr.st = st;
        gr.regpath = reg;
        if (!(g = gate_open(&gr, err)))
            goto out;
    }
    c = gate_cluster(g);
    res->scheduler = xstrdup(gate_scheduler(g));
    if (strcmp(res->scheduler, "slurm") && strcmp(res->scheduler, "flux")) {
        exa_err(err, EXA_EUSAGE,
                "cluster '%s' has scheduler '%s'; a cluster "
                "run needs slurm or flux",
                name, res->scheduler);
        goto out;
    }

    /* 2. transport and preflight (the gate's) */
    t = gate_transport(g);
    s = gate_sched(g);
    if (!(remote_dir = sched_remote_jobdir(s, uuid, err)))
        goto out;
    workdir = dirname_of(remote_dir);
    ujn = user_job_name(r, zm, zd);
    jobname = sched_job_name(ujn, uuid);

    /* what this run already has: adopt, report, or run again (a dry run
     * shows the submission it would make and adopts nothing) */
    if (!req->new_run && !req->dry_run) {
        int ex = find_existing(st, s, name, uuid, jobname, &lk, err);
        if (ex < 0)
            goto out;
        if (ex == EX_DONE) {
            rc = report_done(st, &lk, h, res, err);
            goto out;
        }
        if (ex == EX_ADOPT) {
            if (adopt_row(st, g, &lk, name, jobname, remote_dir, zm, zd, r, res,
                          err) < 0)
                goto out;
            res->adopted = 1;
            hook_step(h, "adopt",
                      "adopting job %s on %s (run %s), "
                      "submitted %s, %s",
                      lk.job_id, name, uuid, submitted_at(&lk), state_of(&lk));
            rc = wait_and_finish(st, s, t, root, h, res, err);
            goto out;
        }
        if (ex == EX_RETRY)
            hook_step(h, "submit",
                      "job %s of run %s ended %s; submitting "
                      "again",
                      lk.job_id, uuid, state_of(&lk));
    }
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

    /* 3. stage (a dry run creates and copies nothing) */
    if (!req->dry_run) {
        /* the run's directory is private (a staged dataset lands in it) */
        const char *mk[] = {"mkdir", "-p", "-m", "700", "--", remote_dir, NULL};
        struct transport_result tr = TRANSPORT_RESULT_INIT;
        int mrc = transport_run_ok(t, mk, NULL, 0, &tr, err);
        transport_result_release(&tr);
        if (mrc < 0)
            goto out;
    }
    if (req->stage_dataset && req->dry_run) {
        dpath = xstrfmt("%s/%s", remote_dir, base_of(req->dataset_path));
        hook_step(h, "stage", "would copy dataset '%s' to '%s'",
                  req->dataset_path, dpath);
    } else if (req->stage_dataset) {
        struct stat sb;
        double t0 = time_monotonic(), secs;
        long long size = stat(req->dataset_path, &sb) == 0 ? sb.st_size : -1;
        dpath = xstrfmt("%s/%s", remote_dir, base_of(req->dataset_path));
        hook_step(h, "stage", "copying dataset '%s' (%.1f MB) to '%s'...",
                  req->dataset_path, size >= 0 ? (double)size / 1e6 : 0, dpath);
        if (transport_put(t, req->dataset_path, dpath, err) < 0)
            goto out;
        secs = time_monotonic() - t0;
        hook_step(h, "stage",
                  "dataset copied to '%s' (0600 in a 0700 directory): "
                  "%.1f MB in %.1f s, %.1f MB/s",
                  dpath, size >= 0 ? (double)size / 1e6 : 0, secs,
                  secs > 0 && size >= 0 ? (double)size / 1e6 / secs : 0);
    } else {
        dpath = xstrdup(req->dataset_path);
    }
    {
        char *odir = xstrfmt("%s/out", remote_dir);
        cluster_run_payload_argv(req, rexa, zm->name, zd->name, dpath, odir,
                                 &argv);
        free(odir);
    }
    {
        struct runscript rs = {NULL, remote_dir, NULL, NULL};
        char *title = xstrfmt("exa %s on %s, run %s", zm->name, zd->name, uuid);
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
        ask.job_name = ujn;
        memset(&sreq, 0, sizeof(sreq));
        sreq.script_path = lscript;
        sreq.remote_dir = remote_dir;
        sreq.run_id = uuid;
        sreq.res = &ask;
        s->sacct_since = (long long)time(NULL);
        time_format_iso8601(time(NULL), now, sizeof(now));
        s->dry_run = req->dry_run;
        rc = sched_submit(s, &sreq, &sres, err);
        s->dry_run = 0;
        if (rc == 0 && req->dry_run) { /* rendered; nothing submitted */
            res->dry_run = 1;
            strvec_pushv(&res->dry_command, (const char **)s->dry_argv.v);
            res->dry_script = strbuf_detach(&script, NULL);
            res->dry_remote_dir = xstrdup(remote_dir);
            goto out;
        }
        if (rc == 0)
            res->job.job_name = xstrdup(jobname);
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
    if (gate_job_insert(g, &res->job, &res->job.id, err) < 0) {
        /* the job runs (unless the gate cancelled it because the cluster
         * stopped being ACTIVE); say so rather than lose it */
        exa_err_prefix(err, "job %s submitted on '%s' but not recorded",
                       sres.job_id, name);
        goto out;
    }
    res->job_recorded = 1;
    hook_step(h, "submit", "job %s on %s (%s)%s, run %s, in '%s'", sres.job_id,
              name, res->scheduler,
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
    if (rc < 0 && g && err && err->code == EXA_ETRANSPORT)
        gate_check_error(g, err); /* a host key refusal says so */
    gate_close(g);                /* the adapter and transport; st stays ours */
    fleet_release(&f);
    store_close(st);
    free(root);
    free(reg);
    free(remote_dir);
    free(workdir);
    free(ldir);
    free(lscript);
    free(dpath);
    free(user);
    free(ujn);
    free(jobname);
    lookup_release(&lk);
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
    struct fleet f = {NULL, 0};
    const struct fleet_cluster *c;
    struct transport *t = tover;
    struct sched *s = NULL;
    struct gate *g = NULL;
    store_t *st = NULL;
    char *root = NULL, *reg = NULL;
    int rc = -1;

    cluster_run_result_init(res);
    if (cluster_run_open_paths(db_path, models_root, regpath, &st, &root, &reg,
                               err) < 0)
        goto out;
    res->db_path = xstrdup(st->path);
    if (store_job_get(st, cluster, job_id, &res->job, err) < 0)
        goto out;
    res->job_recorded = 1;
    if (!res->job.run_uuid || !res->job.remote_dir || !res->job.model) {
        exa_err(err, EXA_EUSAGE,
                "job %s on '%s' is not a cluster run of exa "
                "pipeline run",
                job_id, cluster);
        goto out;
    }
    if (res->job.model_version != JOB_NULL_INT) {
        exa_err(err, EXA_EFAIL,
                "job %s on '%s' already registered version "
                "%lld of %s",
                job_id, cluster, res->job.model_version, res->job.model);
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
    if (!tover) {
        /* through the gate (reading: waiting needs no approval) */
        struct gate_req gr;
        memset(&gr, 0, sizeof(gr));
        gr.cluster = cluster;
        gr.purpose = GATE_READ;
        gr.st = st;
        gr.regpath = reg;
        if (!(g = gate_open(&gr, err)))
            goto out;
        t = gate_transport(g);
        s = gate_sched(g);
    } else if (!(s = sched_new(res->job.scheduler, t, err))) {
        goto out;
    }
    rc = wait_and_finish(st, s, t, root, h, res, err);
out:
    if (g) {
        if (rc < 0 && err && err->code == EXA_ETRANSPORT)
            gate_check_error(g, err);
        gate_close(g);
    } else {
        sched_free(s);
    }
    fleet_release(&f);
    store_close(st);
    free(root);
    free(reg);
    return rc;
}
