/*
 * pipeline_task.c - a cluster run whose payload is a task of the engine on
 * a dial-back worker of the cluster (pipeline_task.h for the order).
 *
 * It lives in libtask, not libpipeline, because it queues and reads
 * tasks (engine.h, libstore/tasks.h), a layer above libpipeline; what it
 * shares with the batch path (the payload's argv, the run id, the
 * SHA256SUMS check, the registration that publishes the version
 * directory) it calls in libpipeline/cluster_run.h rather than copying.
 * The task row is the record of the run: it carries the run id and the
 * cluster, so a rerun finds it (adopt, or report the registered version)
 * the way the batch path finds its job by name. The wait reads
 * platform.db only; the engine in `exa serve --worker-listen` and the
 * worker do the rest.
 */
#include "libtask/pipeline_task.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfleet/gate.h"
#include "libpipeline/zoo.h"
#include "libsched/tracker.h"
#include "libtransport/transport.h"
#include "libstore/audit.h"
#include "libstore/tasks.h"
#include "libtask/engine.h"
#include "libutil/atomic.h"
#include "libutil/duration.h"
#include "libutil/json.h"
#include "libutil/sha256.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

/* What `exa train --out` leaves, uploaded as the task's artifacts. */
static const char *const outputs[] = {"SHA256SUMS", "model.json",
                                      "encoders.json", "metrics.json"};
#define NOUTPUTS 4
/* Largest artifact copied into the version directory. */
#define MAX_ARTIFACT_BYTES ((size_t)1 << 30)

static void step(const struct cluster_run_hooks *h, const char *name,
                 const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void step(const struct cluster_run_hooks *h, const char *name,
                 const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    if (!h || !h->step)
        return;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    h->step(h->arg, name, detail);
}

static char **strv_dup(const char *const *v, size_t n)
{
    char **out = xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        out[i] = xstrdup(v[i]);
    return out;
}

int pipeline_task_spec(const struct cluster_run_request *req, const char *rexa,
                       struct tp_spec *out, exa_error_t *err)
{
    static const struct sched_resources none = SCHED_RESOURCES_INIT;
    const struct sched_resources *r = req->res ? req->res : &none;
    const struct zoo_model *zm;
    const struct zoo_dataset *zd;
    struct strvec argv = STRVEC_INIT;
    long long secs = 3600;

    if (!(zm = zoo_model_find(req->model, err)) ||
        !(zd = zoo_dataset_find(req->dataset, err)))
        return -1;
    if (!req->dataset_path || !*req->dataset_path)
        return exa_err(err, EXA_EUSAGE,
                       "a worker run needs the dataset's path on the "
                       "cluster (--dataset-path)");
    if (r->time && *r->time &&
        (slurm_time_arg_parse(r->time, &secs) < 0 || secs < 1 ||
         secs > 2592000))
        return exa_err(err, EXA_EUSAGE,
                       "--time '%s' is not a task timeout: sbatch's syntax "
                       "(minutes, M:S, H:M:S, D-H[:M[:S]]), 1 s to 30 days",
                       r->time);
    memset(out, 0, sizeof(*out));
    cluster_run_payload_argv(req, rexa, zm->name, zd->name, req->dataset_path,
                             PIPELINE_TASK_OUT_DIR, &argv);
    out->argc = argv.nr;
    out->argv = strv_dup((const char *const *)argv.v, argv.nr);
    strvec_clear(&argv);
    out->env = xcalloc(1, sizeof(char *));
    out->labels = xcalloc(1, sizeof(char *));
    out->noutputs = NOUTPUTS;
    out->outputs = strv_dup(outputs, NOUTPUTS);
    out->outputs_dir = xstrdup(PIPELINE_TASK_OUT_DIR);
    out->timeout_s = (double)secs;
    out->cpus = (r->cpus_per_task > 0 ? r->cpus_per_task : 1) *
                (r->ntasks > 0 ? r->ntasks : 1);
    out->gpus = r->gpus > 0 ? r->gpus : 0;
    return 0;
}

void pipeline_task_lineage_line(const struct cluster_run_result *res,
                                struct strbuf *out)
{
    strbuf_addf(out, "task %lld attempt %lld on worker %s (", res->task_id,
                res->task_attempt, res->worker_id ? res->worker_id : "unknown");
    if (res->worker_job_id && *res->worker_job_id)
        strbuf_addf(out, "Slurm job %s", res->worker_job_id);
    else
        strbuf_addstr(out, "no Slurm job");
    strbuf_addf(out, ") of cluster %s, run %s",
                res->cluster ? res->cluster : "unknown",
                res->run_id[0] ? res->run_id : "unknown");
}

/* ---- what the run already has ---- */

/* The version run registered from a task on cluster into res->mv: 1,
 * 0 none, -1 err. */
static int find_registered(store_t *st, const char *model, const char *run,
                           const char *cluster, struct cluster_run_result *res,
                           exa_error_t *err)
{
    struct model_version *v = NULL;
    size_t n = 0;
    int found = 0;
    if (store_model_versions(st, model, 0, &v, &n, err) < 0)
        return -1;
    for (size_t i = n; i-- > 0 && !found;)
        if (v[i].task_id != JOB_NULL_INT && v[i].run_uuid &&
            !strcmp(v[i].run_uuid, run) && v[i].cluster &&
            !strcmp(v[i].cluster, cluster)) {
            model_version_release(&res->mv);
            res->mv = v[i];
            model_version_init(&v[i]);
            found = 1;
        }
    model_version_free_list(v, n);
    return found;
}

static int task_live(const char *s)
{
    return !strcmp(s, "queued") || !strcmp(s, "leased");
}

/* The task of run on cluster to adopt (queued, leased, else done), or 0;
 * *ended the newest that ended otherwise (0 none). -1 err. */
static long long find_task(store_t *st, const char *run, const char *cluster,
                           long long *ended, char state[16], exa_error_t *err)
{
    struct task_rec *v = NULL;
    size_t n = 0;
    long long id = 0;
    *ended = 0;
    if (store_task_list_run(st, run, cluster, &v, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n && !id; i++)
        if (task_live(v[i].state))
            id = v[i].id;
    for (size_t i = 0; i < n && !id; i++)
        if (!strcmp(v[i].state, "done"))
            id = v[i].id;
    if (id) {
        for (size_t i = 0; i < n; i++)
            if (v[i].id == id)
                xsnprintf(state, 16, "%s", v[i].state);
    } else if (n) {
        *ended = v[0].id;
        xsnprintf(state, 16, "%s", v[0].state);
    }
    task_rec_free_list(v, n);
    return id;
}

/* ---- waiting ---- */

static enum sched_state state_of_task(const char *s)
{
    if (!strcmp(s, "queued"))
        return SCHED_PENDING;
    if (!strcmp(s, "leased"))
        return SCHED_RUNNING;
    if (!strcmp(s, "done"))
        return SCHED_COMPLETED;
    if (!strcmp(s, "failed"))
        return SCHED_FAILED;
    if (!strcmp(s, "cancelled"))
        return SCHED_CANCELLED;
    return SCHED_UNKNOWN;
}

static void nap(double s)
{
    struct timespec ts;
    if (s <= 0)
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* Wait for task id to end; *out its final row. 0, or -1 with err. */
static int wait_task(store_t *st, long long id, const char *cluster,
                     const struct cluster_run_hooks *h, struct task_rec *out,
                     struct cluster_run_result *res, exa_error_t *err)
{
    struct tracker_opts o;
    double t0 = time_monotonic(), deadline, poll, next = 0, absent_s,
           absent_since = -1;
    char label[64];
    const char *last = "queued";

    if (tracker_opts_from_env(&o, err) < 0 ||
        transport_env_seconds("EXAMLOPS_ENGINE_ABSENT_S", 60, &absent_s, err) <
            0)
        return -1;
    deadline = t0 + o.max_wait_s;
    poll = o.poll_interval_s < 1 ? o.poll_interval_s : 1;
    xsnprintf(label, sizeof(label), "task %lld", id);
    step(h, "wait", "task %lld on workers of %s (platform.db every %gs)", id,
         cluster, poll);
    for (;;) {
        double now = time_monotonic();
        if (h && h->interrupted && *h->interrupted) {
            *h->interrupted = 0;
            if (h->on_interrupt &&
                h->on_interrupt(h->arg, cluster, label) == 1) {
                if (task_cancel(st, id, te_wallclock(NULL), err) < 0)
                    return -1;
                res->cancelled_by_user = 1;
                next = 0; /* read the cancelled row now */
            } else {
                res->detached = 1;
                return exa_err(err, EXA_EFAIL,
                               "interrupted: task %lld on cluster '%s' is "
                               "left %s; the same command adopts it",
                               id, cluster, last);
            }
        }
        if (now >= next) {
            struct task_rec t;
            struct sched_job j;
            int alive = te_engine_running(st->path, err);
            if (alive < 0)
                return -1;
            if (alive)
                absent_since = -1;
            else if (absent_since < 0)
                absent_since = now;
            if (store_task_get(st, id, &t, err) < 0)
                return -1;
            sched_job_init(&j, label);
            j.state = state_of_task(t.state);
            xsnprintf(
                j.reason, sizeof(j.reason), "%s%s%s",
                t.worker_id && task_live(t.state) && strcmp(t.state, "queued")
                    ? "on "
                    : "",
                t.worker_id && strcmp(t.state, "queued") ? t.worker_id : "",
                !strcmp(t.state, "queued") && absent_since >= 0
                    ? "no task engine running"
                : !strcmp(t.state, "queued") && t.reason ? t.reason
                                                         : "");
            last = task_live(t.state) && !strcmp(t.state, "leased") ? "leased"
                                                                    : "queued";
            if (h && h->wait)
                h->wait(h->arg, &j, now - t0);
            if (!task_live(t.state)) {
                *out = t;
                return 0;
            }
            task_rec_release(&t);
            next = now + poll;
            if (absent_since >= 0 && now - absent_since >= absent_s)
                return exa_err(
                    err, EXA_EFAIL,
                    "no task engine has run on '%s' for %g s (start 'exa "
                    "serve --worker-listen HOST:PORT' on it); task %lld "
                    "stays %s (the same command adopts it)",
                    st->path, absent_s, id, last);
        }
        if (now >= deadline)
            return exa_err(err, EXA_ETIMEOUT,
                           "task %lld on cluster '%s' not finished after "
                           "%g s; it stays %s (the same command adopts it)",
                           id, cluster, o.max_wait_s, last);
        nap(next - now < 0.2 ? next - now : 0.2);
    }
}

/* ---- the end ---- */

static int slurp(const char *path, struct strbuf *sb, exa_error_t *err)
{
    FILE *fp = fopen(path, "re");
    char buf[65536];
    size_t n;
    if (!fp)
        return exa_err(err, EXA_EFAIL, "cannot read '%s': %s", path,
                       strerror(errno));
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) {
        if (sb->len + n > MAX_ARTIFACT_BYTES) {
            fclose(fp);
            return exa_err(err, EXA_EFAIL, "'%s' is larger than %zu bytes",
                           path, MAX_ARTIFACT_BYTES);
        }
        strbuf_add(sb, buf, n);
    }
    fclose(fp);
    return 0;
}

static int spill(const char *path, const struct strbuf *sb, exa_error_t *err)
{
    FILE *fp = fopen(path, "wxe");
    if (!fp || fwrite(sb->buf, 1, sb->len, fp) != sb->len) {
        int e = errno;
        if (fp)
            fclose(fp);
        return exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", path,
                       strerror(e));
    }
    if (fclose(fp) != 0)
        return exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", path,
                       strerror(errno));
    return 0;
}

/* Copy the stored artifacts of (task, attempt) into a staging directory
 * for the version, each checked against the engine's recorded SHA-256,
 * then all against SHA256SUMS; the staging path (malloc'ed) or NULL. */
static char *collect(store_t *st, long long task, long long attempt,
                     const char *models_root, const char *model,
                     const char *run, char sha[65], exa_error_t *err)
{
    char *final = xstrfmt("%s/%s/run-%s", models_root, model, run);
    char *staging = atomic_dir_begin(final, err);
    free(final);
    if (!staging) {
        exa_err_prefix(err, "data directory '%s' is not writable", models_root);
        return NULL;
    }
    for (size_t i = 0; i < NOUTPUTS; i++) {
        struct strbuf sb = STRBUF_INIT;
        char want[65], got[65], *path = NULL, *dst;
        int f =
            store_artifact_get(st, task, attempt, outputs[i], want, &path, err);
        if (f <= 0) {
            if (f == 0)
                exa_err(err, EXA_EFAIL,
                        "task %lld attempt %lld stored no artifact '%s'", task,
                        attempt, outputs[i]);
            free(path);
            goto fail;
        }
        if (slurp(path, &sb, err) < 0) {
            free(path);
            strbuf_release(&sb);
            goto fail;
        }
        exa_sha256_hex(sb.buf, sb.len, got);
        if (strcmp(want, got)) {
            exa_err(err, EXA_EFAIL,
                    "artifact '%s' of task %lld: the stored file '%s' is "
                    "%.12s..., the engine recorded %.12s...",
                    outputs[i], task, path, got, want);
            free(path);
            strbuf_release(&sb);
            goto fail;
        }
        free(path);
        dst = xstrfmt("%s/%s", staging, outputs[i]);
        f = spill(dst, &sb, err);
        free(dst);
        strbuf_release(&sb);
        if (f < 0)
            goto fail;
    }
    if (cluster_run_verify_artifacts(staging, sha, err) < 0) {
        exa_err_prefix(err, "artifacts of task %lld rejected", task);
        goto fail;
    }
    return staging;
fail:
    atomic_dir_abort(staging);
    free(staging);
    return NULL;
}

/* The winning (or last) attempt's worker and its Slurm job into res. */
static void load_worker(store_t *st, long long task, long long attempt,
                        struct cluster_run_result *res)
{
    struct attempt_rec a;
    struct worker_rec w;
    memset(&a, 0, sizeof(a));
    if (attempt <= 0 || store_attempt_get(st, task, attempt, &a, NULL) != 1)
        return;
    free(res->worker_id);
    res->worker_id = a.worker_id ? xstrdup(a.worker_id) : NULL;
    worker_rec_init(&w);
    if (a.worker_id && store_worker_get(st, a.worker_id, &w, NULL) == 1) {
        free(res->worker_job_id);
        res->worker_job_id = w.slurm_job_id ? xstrdup(w.slurm_job_id) : NULL;
        worker_rec_release(&w);
    }
    attempt_rec_release(&a);
}

/* The stderr tail of the task's result for attempt into res. */
static void keep_stderr(store_t *st, long long task, long long attempt,
                        struct cluster_run_result *res)
{
    char *body = NULL;
    json_t *j;
    const char *t;
    if (attempt <= 0 || store_result_get(st, task, attempt, &body, NULL) != 1)
        return;
    if ((j = json_loads(body, 0, NULL))) {
        if ((t = jx_get_str(j, "stderr_tail", NULL)) && *t)
            res->stderr_tail =
                cluster_run_tail_lines(t, strlen(t), CLUSTER_RUN_STDERR_LINES);
        json_decref(j);
    }
    free(body);
}

static int finish(store_t *st, struct gate *g, const struct task_rec *t,
                  const char *cluster, const char *scheduler,
                  const char *models_root, const struct zoo_model *zm,
                  const struct zoo_dataset *zd,
                  const struct cluster_run_hooks *h,
                  struct cluster_run_result *res, exa_error_t *err)
{
    long long att =
        t->done_attempt != TASK_NULL_INT ? t->done_attempt : t->attempt;
    char sha[65], *staging;
    struct strbuf line = STRBUF_INIT;

    free(res->task_state);
    res->task_state = xstrdup(t->state);
    free(res->task_reason);
    res->task_reason = t->reason ? xstrdup(t->reason) : NULL;
    res->task_attempt = att;
    res->task_exit_code =
        t->exit_code != TASK_NULL_INT ? t->exit_code : JOB_NULL_INT;
    load_worker(st, t->id, att, res);
    if (strcmp(t->state, "done")) {
        keep_stderr(st, t->id, att, res);
        return exa_err(err, EXA_EFAIL,
                       "task %lld on cluster '%s' ended %s%s%s%s: no "
                       "version registered",
                       t->id, cluster, t->state, t->reason ? " (" : "",
                       t->reason ? t->reason : "", t->reason ? ")" : "");
    }
    /* the cluster may have been rejected while the task ran: nothing of
     * it is recorded then, as for a job row (gate_job_insert) */
    if (gate_recheck_active(g, err) < 0) {
        exa_error_t e = *err;
        return exa_err(err, e.code, "task %lld is done, but %s", t->id, e.text);
    }
    staging =
        collect(st, t->id, att, models_root, zm->name, res->run_id, sha, err);
    if (!staging)
        return -1;
    step(h, "fetch",
         "4 artifacts of task %lld verified (sha256 of SHA256SUMS "
         "%.12s...)",
         t->id, sha);
    job_rec_release(&res->job);
    job_rec_init(&res->job);
    res->job.id = JOB_NULL_INT;
    res->job.cluster = xstrdup(cluster);
    res->job.scheduler = xstrdup(scheduler);
    res->job.job_id = res->worker_job_id ? xstrdup(res->worker_job_id) : NULL;
    res->job.run_uuid = xstrdup(res->run_id);
    res->job.model = xstrdup(zm->name);
    res->job.dataset = xstrdup(zd->name);
    res->job.state = xstrdup("COMPLETED");
    res->mv.task_id = t->id;
    res->mv.task_attempt = att;
    free(res->mv.worker_id);
    res->mv.worker_id = res->worker_id ? xstrdup(res->worker_id) : NULL;
    if (cluster_run_register_staged(st, staging, sha, models_root, h, res,
                                    err) < 0)
        return -1;
    pipeline_task_lineage_line(res, &line);
    step(h, "lineage", "%s", line.buf);
    strbuf_release(&line);
    return 0;
}

/* ---- the run ---- */

int pipeline_task_run(const struct cluster_run_request *req,
                      struct cluster_run_result *res, exa_error_t *err)
{
    const struct cluster_run_hooks *h = &req->hooks;
    const struct zoo_model *zm;
    const struct zoo_dataset *zd;
    const char *rexa = req->remote_exa;
    struct tp_spec spec;
    struct gate *g = NULL;
    struct task_rec t;
    store_t *st = NULL;
    char *root = NULL, *reg = NULL, *user = NULL;
    char uuid[65];
    long long id = 0;
    int rc = -1, have_spec = 0;

    cluster_run_result_init(res);
    res->via_worker = 1;
    task_rec_init(&t);
    if (!(zm = zoo_model_find(req->model, err)) ||
        !(zd = zoo_dataset_find(req->dataset, err)))
        return -1;
    if (!req->cluster || !*req->cluster || !strcmp(req->cluster, "auto"))
        return exa_err(err, EXA_EUSAGE,
                       "--via worker needs a named cluster (--cluster NAME), "
                       "not placement");
    if (req->stage_dataset)
        return exa_err(err, EXA_EUSAGE,
                       "--stage-dataset needs --via batch: a worker reads "
                       "the dataset where it runs (--dataset-path)");
    if (!req->new_run && req->run_id && !cluster_run_valid_id(req->run_id))
        return exa_err(err, EXA_EUSAGE,
                       "run id '%s' is not 1 to 64 of [A-Za-z0-9_-]",
                       req->run_id);
    if (!rexa || !*rexa)
        rexa = getenv("EXAMLOPS_HPC_REMOTE_EXA");
    if (!rexa || !*rexa)
        rexa = "exa";
    if (pipeline_task_spec(req, rexa, &spec, err) < 0)
        return -1;
    have_spec = 1;
    if (cluster_run_open_paths(req->db_path, req->models_root, req->regpath,
                               &st, &root, &reg, err) < 0)
        goto out;
    res->db_path = xstrdup(st->path);
    user = req->user ? xstrdup(req->user) : audit_actor();
    if (req->new_run)
        sched_new_run_id(uuid);
    else if (req->run_id)
        xsnprintf(uuid, sizeof(uuid), "%s", req->run_id);
    else
        cluster_run_id(req, req->res, user, uuid);
    xsnprintf(res->run_id, sizeof(res->run_id), "%s", uuid);
    res->cluster = xstrdup(req->cluster);
    {
        /* the gate: registered, host key as approved, ACTIVE */
        struct gate_req gr;
        memset(&gr, 0, sizeof(gr));
        gr.cluster = req->cluster;
        gr.purpose = GATE_SCHEDULE;
        gr.st = st;
        gr.regpath = reg;
        gr.actor = req->actor;
        if (!(g = gate_open(&gr, err)))
            goto out;
    }
    res->scheduler = xstrdup(gate_scheduler(g));

    if (req->dry_run) {
        json_t *j = tp_spec_encode(&spec);
        res->dry_run = 1;
        strvec_pushv(&res->dry_command, (const char **)spec.argv);
        res->dry_script = jx_dumps_canonical(j);
        json_decref(j);
        step(h, "queue",
             "would queue a task for the workers of %s: %lld CPU(s), "
             "%lld GPU(s), timeout %.0f s, run %s",
             req->cluster, spec.cpus, spec.gpus, spec.timeout_s, uuid);
        rc = 0;
        goto out;
    }
    if (!req->new_run) {
        long long ended = 0;
        char state[16] = "";
        int r = find_registered(st, zm->name, uuid, req->cluster, res, err);
        if (r < 0)
            goto out;
        if (r) {
            res->already = res->registered = 1;
            res->task_id = res->mv.task_id;
            res->task_attempt = res->mv.task_attempt;
            res->task_state = xstrdup("done");
            res->worker_id =
                res->mv.worker_id ? xstrdup(res->mv.worker_id) : NULL;
            res->worker_job_id =
                res->mv.job_id ? xstrdup(res->mv.job_id) : NULL;
            step(h, "done",
                 "run %s already registered version %lld of %s from task "
                 "%lld on %s; --new runs it again",
                 uuid, res->mv.version, res->mv.model, res->task_id,
                 req->cluster);
            rc = 0;
            goto out;
        }
        if ((id = find_task(st, uuid, req->cluster, &ended, state, err)) < 0)
            goto out;
        if (id) {
            res->adopted = 1;
            step(h, "adopt", "adopting task %lld of run %s on %s (%s)", id,
                 uuid, req->cluster, state);
        } else if (ended) {
            step(h, "queue", "task %lld of run %s ended %s; queueing again",
                 ended, uuid, state);
        }
    }
    if (!id) {
        /* ACTIVE again in the transaction that queues the task, and the
         * run's task looked for again under its write lock: of two reruns
         * racing past the look above, the second adopts the first's */
        long long ended = 0, again = 0;
        char state[16] = "";
        if (store_begin(st, err) < 0)
            goto out;
        if (gate_recheck_active(g, err) < 0 ||
            (!req->new_run && (again = find_task(st, uuid, req->cluster, &ended,
                                                 state, err)) < 0) ||
            (!again && task_submit_pinned(st, &spec, req->cluster, uuid,
                                          te_wallclock(NULL), &id, err) < 0) ||
            store_commit(st, err) < 0) {
            store_rollback(st);
            id = 0;
            goto out;
        }
        if (again) {
            id = again;
            res->adopted = 1;
            step(h, "adopt", "adopting task %lld of run %s on %s (%s)", id,
                 uuid, req->cluster, state);
        } else {
            te_ring(st->path);
            step(h, "queue",
                 "task %lld for the workers of %s: %lld CPU(s), %lld GPU(s), "
                 "timeout %.0f s, run %s",
                 id, req->cluster, spec.cpus, spec.gpus, spec.timeout_s, uuid);
        }
    }
    res->task_id = id;
    if (wait_task(st, id, req->cluster, h, &t, res, err) < 0)
        goto out;
    rc = finish(st, g, &t, req->cluster, res->scheduler, root, zm, zd, h, res,
                err);
out:
    if (res->task_id && !res->task_state) {
        struct task_rec now;
        if (store_task_get(st, res->task_id, &now, NULL) == 0) {
            res->task_state = xstrdup(now.state);
            res->task_attempt = now.attempt;
            task_rec_release(&now);
        }
    }
    if (rc < 0 && g && err && err->code == EXA_ETRANSPORT)
        gate_check_error(g, err);
    gate_close(g);
    store_close(st);
    task_rec_release(&t);
    if (have_spec)
        tp_spec_release(&spec);
    free(root);
    free(reg);
    free(user);
    return rc;
}
