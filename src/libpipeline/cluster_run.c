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
    struct preflight_ask ask = { 0, 1, NULL, NULL, NULL, NULL, 0 };
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
     * terminal state is written with the accounting by
     * cluster_run_record_end */
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
    cluster_run_record_end(st, s, h, res);
    if (res->last.state != SCHED_COMPLETED) {
        cluster_run_keep_stderr_tail(s, res);
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
