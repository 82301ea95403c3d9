/*
 * pipeline_cluster.c - `exa pipeline run --cluster NAME|auto` and the
 * resumption of such a run by `exa hpc wait`.
 *
 * All the work is libpipeline/cluster_run.c; this file turns flags and
 * environment into the request, shows progress (steps on stdout, the
 * wait's state and elapsed time on stderr, rewritten in place on a
 * terminal), owns the SIGINT handler that interrupts the wait, asks
 * whether to cancel (out_confirm: --yes cancels; --json without --yes
 * leaves the job running and says how to resume), and reports the
 * outcome: one JSON document, or text.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/pipeline_cluster.h"
#include "libpipeline/cluster_run.h"
#include "libpipeline/train.h"
#include "libpipeline/zoo.h"
#include "libstore/jobs.h"
#include "libstore/store.h"
#include "libtask/pipeline_task.h"
#include "libutil/json.h"
#include "libutil/shquote.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

struct view {
    struct exa_ctx *ctx;
    int tty_err;
    char last_state[32];
    int wrote_line;
};

static void show_step(void *arg, const char *step, const char *detail)
{
    struct view *v = arg;
    if (v->ctx->out == OUT_JSON || v->ctx->quiet)
        return;
    if (v->wrote_line) {
        fputc('\n', stderr);
        v->wrote_line = 0;
    }
    printf("  %-10s %s\n", step, detail);
    fflush(stdout);
}

static void show_wait(void *arg, const struct sched_job *j, double elapsed)
{
    struct view *v = arg;
    long long s = (long long)elapsed;
    const char *st = sched_state_name(j->state);
    if (v->ctx->out == OUT_JSON || v->ctx->quiet)
        return;
    if (!v->tty_err && !strcmp(v->last_state, st))
        return; /* a log gets state changes only */
    xsnprintf(v->last_state, sizeof(v->last_state), "%s", st);
    fprintf(stderr, "%s  job %s %s%s%s, %02lld:%02lld:%02lld elapsed%s",
            v->tty_err ? "\r\033[K" : "", j->id, st, j->reason[0] ? " " : "",
            j->reason, s / 3600, s / 60 % 60, s % 60, v->tty_err ? "" : "\n");
    v->wrote_line = v->tty_err;
    fflush(stderr);
}

static int ask_cancel(void *arg, const char *cluster, const char *job_id)
{
    struct view *v = arg;
    if (v->wrote_line) {
        fputc('\n', stderr);
        v->wrote_line = 0;
    }
    return out_confirm(v->ctx,
                       "Interrupted: cancel job %s on '%s'? (no: "
                       "leave it running)",
                       job_id, cluster);
}

/* The task fields of a --via worker run. */
static json_t *task_json(const struct cluster_run_result *r)
{
    json_t *t = json_object();
    jx_set(t, "id", r->task_id ? json_integer(r->task_id) : json_null());
    jx_set(t, "attempt",
           r->task_attempt ? json_integer(r->task_attempt) : json_null());
    jx_set(t, "state", jx_str(r->task_state));
    jx_set(t, "reason", jx_str(r->task_reason));
    jx_set(t, "exit_code",
           r->task_exit_code == JOB_NULL_INT ? json_null()
                                             : json_integer(r->task_exit_code));
    jx_set(t, "worker_id", jx_str(r->worker_id));
    jx_set(t, "worker_job_id", jx_str(r->worker_job_id));
    return t;
}

static json_t *outcome_json(const struct cluster_run_result *r)
{
    const struct model_version *mv = &r->mv;
    json_t *o = json_object(), *lin = json_object(), *acct = json_object();
    json_error_t je;
    json_t *m = mv->metrics ? json_loads(mv->metrics, 0, &je) : NULL;

    jx_set(o, "cluster", jx_str(r->cluster));
    jx_set(o, "scheduler", jx_str(r->scheduler));
    jx_set(o, "run_id", jx_str(r->run_id[0] ? r->run_id : NULL));
    jx_set(o, "adopted", json_boolean(r->adopted));
    jx_set(o, "already_registered", json_boolean(r->already));
    jx_set(o, "placement_reason", jx_str(r->placement_reason));
    jx_set(o, "via", jx_str(r->via_worker ? "worker" : "batch"));
    if (r->via_worker) {
        jx_set(o, "job", json_null());
        jx_set(o, "task", task_json(r));
    } else {
        jx_set(o, "job", job_rec_to_json(&r->job));
    }
    jx_set(o, "model", jx_str(mv->model));
    jx_set(o, "version", json_integer(mv->version));
    jx_set(o, "stage", jx_str(mv->stage));
    jx_set(o, "metrics",
           m ? json_incref(json_object_get(m, "metrics")) : json_null());
    jx_set(o, "artifact_path", jx_str(mv->artifact_path));
    jx_set(o, "artifact_sha256", jx_str(mv->artifact_sha256));
    jx_set(o, "dataset", jx_str(mv->dataset));
    jx_set(o, "dataset_path", jx_str(mv->dataset_path));
    jx_set(o, "train_rows", json_integer(mv->train_rows));
    jx_set(o, "val_rows", json_integer(mv->val_rows));
    jx_set(lin, "cluster", jx_str(mv->cluster));
    jx_set(lin, "scheduler", jx_str(mv->scheduler));
    jx_set(lin, "job_id", jx_str(mv->job_id));
    jx_set(lin, "run_uuid", jx_str(mv->run_uuid));
    jx_set(lin, "job_ref", json_integer(mv->job_ref));
    if (r->via_worker) {
        jx_set(lin, "task_id", json_integer(mv->task_id));
        jx_set(lin, "task_attempt", json_integer(mv->task_attempt));
        jx_set(lin, "worker_id", jx_str(mv->worker_id));
    }
    jx_set(o, "lineage", lin);
    jx_set(acct, "queue_seconds", jx_real(r->job.queue_seconds));
    jx_set(acct, "run_seconds", jx_real(r->job.run_seconds));
    jx_set(acct, "gpus",
           r->job.gpus == JOB_NULL_INT ? json_null()
                                       : json_integer(r->job.gpus));
    jx_set(acct, "cpus",
           r->job.cpus == JOB_NULL_INT ? json_null()
                                       : json_integer(r->job.cpus));
    jx_set(acct, "gpu_hours", jx_real(r->job.gpu_hours));
    jx_set(acct, "cpu_hours", jx_real(r->job.cpu_hours));
    jx_set(o, "accounting", acct);
    jx_set(o, "db_path", jx_str(r->db_path));
    json_decref(m);
    return o;
}

static void print_outcome(const struct cluster_run_result *r)
{
    const struct model_version *mv = &r->mv;
    const struct job_rec *j = &r->job;
    char mape[32] = "n/a";
    if (isfinite(mv->mape))
        xsnprintf(mape, sizeof(mape), "%.2f%%", mv->mape);
    if (r->via_worker) {
        struct strbuf line = STRBUF_INIT;
        pipeline_task_lineage_line(r, &line);
        if (r->already)
            printf("Already done: run %s registered %s version %lld on %s "
                   "(rmse %.2f W per node, mape %s, stage %s); nothing "
                   "queued (--new runs it again)\n",
                   r->run_id, mv->model, mv->version, mv->dataset, mv->rmse,
                   mape, mv->stage);
        else
            printf("Trained %s version %lld on %s: rmse %.2f W per node, "
                   "mape %s, stage %s\n",
                   mv->model, mv->version, mv->dataset, mv->rmse, mape,
                   mv->stage);
        printf("model:   %s/model.json (sha256 of SHA256SUMS %.12s...)\n",
               mv->artifact_path,
               mv->artifact_sha256 ? mv->artifact_sha256 : "");
        printf("task:    %s\n", line.buf);
        printf("lineage: exa models show %s --version %lld; exa task show "
               "%lld\n",
               mv->model, mv->version, r->task_id);
        strbuf_release(&line);
        return;
    }
    if (r->already) {
        printf("Already done: run %s registered %s version %lld on %s "
               "(rmse %.2f W per node, mape %s, stage %s); nothing "
               "submitted (--new runs it again)\n",
               r->run_id, mv->model, mv->version, mv->dataset, mv->rmse, mape,
               mv->stage);
        printf("model:   %s/model.json (sha256 of SHA256SUMS %.12s...)\n",
               mv->artifact_path,
               mv->artifact_sha256 ? mv->artifact_sha256 : "");
        printf("job:     %s on cluster %s (%s) %s\n", j->job_id, j->cluster,
               j->scheduler, j->state);
        printf("lineage: exa models show %s --version %lld; exa hpc jobs\n",
               mv->model, mv->version);
        return;
    }
    printf("Trained %s version %lld on %s: rmse %.2f W per node, mape %s, "
           "stage %s\n",
           mv->model, mv->version, mv->dataset, mv->rmse, mape, mv->stage);
    printf("model:   %s/model.json (sha256 of SHA256SUMS %.12s...)\n",
           mv->artifact_path, mv->artifact_sha256);
    printf("job:     %s on cluster %s (%s) %s: queued %.0fs, ran %.0fs on "
           "%lld GPU(s) and %lld CPU(s), %.4f GPU-h, %.4f CPU-h\n",
           j->job_id, j->cluster, j->scheduler, j->state,
           isnan(j->queue_seconds) ? 0 : j->queue_seconds,
           isnan(j->run_seconds) ? 0 : j->run_seconds,
           j->gpus == JOB_NULL_INT ? 0 : j->gpus,
           j->cpus == JOB_NULL_INT ? 0 : j->cpus,
           isnan(j->gpu_hours) ? 0 : j->gpu_hours,
           isnan(j->cpu_hours) ? 0 : j->cpu_hours);
    printf("lineage: exa models show %s --version %lld; exa hpc jobs\n",
           mv->model, mv->version);
}

/* Report r's outcome (rc from cluster_run/resume) and return the status. */
static int report(struct exa_ctx *ctx, struct cluster_run_result *r, int rc,
                  exa_error_t *err, struct view *v)
{
    char hint[512];
    const char *h = NULL;

    if (v->wrote_line) {
        fputc('\n', stderr);
        v->wrote_line = 0;
    }
    if (rc == 0 && r->dry_run && r->via_worker) {
        struct strbuf cmd = STRBUF_INIT;
        shquote_argv(&cmd, (const char *const *)r->dry_command.v);
        if (ctx->out == OUT_JSON) {
            json_t *o = json_object();
            json_t *spec =
                r->dry_script ? json_loads(r->dry_script, 0, NULL) : NULL;
            jx_set(o, "dry_run", json_true());
            jx_set(o, "via", jx_str("worker"));
            jx_set(o, "cluster", jx_str(r->cluster));
            jx_set(o, "scheduler", jx_str(r->scheduler));
            jx_set(o, "run_id", jx_str(r->run_id));
            jx_set(o, "command_line", jx_str(cmd.buf));
            jx_set(o, "task", spec ? spec : json_null());
            out_json(ctx, o);
        } else {
            printf("Dry run: nothing was queued.\n");
            printf("cluster:   %s (%s): a task pinned to its workers, run "
                   "%s\n",
                   r->cluster, r->scheduler, r->run_id);
            printf("command:   %s\n", cmd.buf);
            printf("task:      %s\n", r->dry_script ? r->dry_script : "");
        }
        strbuf_release(&cmd);
        return 0;
    }
    if (rc == 0 && r->dry_run) {
        struct strbuf cmd = STRBUF_INIT;
        shquote_argv(&cmd, (const char *const *)r->dry_command.v);
        if (ctx->out == OUT_JSON) {
            json_t *o = json_object(), *a = json_array();
            for (size_t i = 0; i < r->dry_command.nr; i++)
                json_array_append_new(a, jx_str(r->dry_command.v[i]));
            jx_set(o, "dry_run", json_true());
            jx_set(o, "cluster", jx_str(r->cluster));
            jx_set(o, "scheduler", jx_str(r->scheduler));
            jx_set(o, "placement_reason", jx_str(r->placement_reason));
            jx_set(o, "remote_dir", jx_str(r->dry_remote_dir));
            jx_set(o, "command", a);
            jx_set(o, "command_line", jx_str(cmd.buf));
            jx_set(o, "script", jx_str(r->dry_script));
            out_json(ctx, o);
        } else {
            printf("Dry run: nothing was created, copied or submitted.\n");
            printf("cluster:   %s (%s)%s%s\n", r->cluster, r->scheduler,
                   r->placement_reason ? ": " : "",
                   r->placement_reason ? r->placement_reason : "");
            printf("directory: %s\n", r->dry_remote_dir);
            printf("command:   %s\n", cmd.buf);
            printf("run.sh:\n%s", r->dry_script ? r->dry_script : "");
        }
        strbuf_release(&cmd);
        return 0;
    }
    if (rc == 0) {
        if (ctx->out == OUT_JSON)
            out_json(ctx, outcome_json(r));
        else
            print_outcome(r);
        return 0;
    }
    if (r->preflight_ran && !r->pf.ok && ctx->out != OUT_JSON)
        for (size_t i = 0; i < r->pf.n; i++)
            fprintf(stderr, "  %s %s: %s\n",
                    r->pf.checks[i].ok ? "\u2713" : "\u2717",
                    r->pf.checks[i].check, r->pf.checks[i].detail);
    if (r->via_worker) {
        if (r->stderr_tail && *r->stderr_tail)
            fprintf(stderr,
                    "--- last lines of task %lld's stderr (attempt %lld on "
                    "worker %s) ---\n%s\n---\n",
                    r->task_id, r->task_attempt,
                    r->worker_id ? r->worker_id : "unknown", r->stderr_tail);
        if (err->code == EXA_ENOTAPPROVED) {
            h = cmd_not_approved_hint(err, r->cluster, hint, sizeof(hint));
        } else if (r->task_id) {
            xsnprintf(hint, sizeof(hint),
                      "task %lld is %s; see 'exa task show %lld'%s", r->task_id,
                      r->task_state ? r->task_state : "unknown", r->task_id,
                      r->detached || err->code == EXA_ETIMEOUT
                          ? "; the same command adopts it"
                          : "");
            h = hint;
            if (err->code == EXA_ETIMEOUT)
                err->code = EXA_EFAIL; /* the wait's deadline fails the run */
        } else if (err->code == EXA_ENOTFOUND) {
            h = "see 'exa hpc clusters'; register one with 'exa hpc connect'";
        }
        return out_error(ctx, err, h);
    }
    if (r->stderr_tail && *r->stderr_tail)
        fprintf(stderr,
                "--- last lines of the job's stderr (%s/%s.err) ---\n"
                "%s\n---\n",
                r->job.remote_dir, r->job.job_id, r->stderr_tail);
    if (err->code == EXA_ENOTAPPROVED) {
        h = cmd_not_approved_hint(err, r->cluster, hint, sizeof(hint));
    } else if (r->detached || err->code == EXA_ETIMEOUT) {
        xsnprintf(hint, sizeof(hint), "exa hpc wait %s --cluster %s",
                  r->job.job_id, r->job.cluster);
        h = hint;
        /* the wait's deadline (the job keeps running) fails the run (1);
         * a command past its cap stays 4 */
        if (err->code == EXA_ETIMEOUT && r->job_recorded &&
            !sched_state_terminal(r->last.state))
            err->code = EXA_EFAIL;
    } else if (r->job_recorded && r->job.job_id) {
        xsnprintf(hint, sizeof(hint),
                  "job %s on cluster %s is recorded as "
                  "%s; see 'exa hpc jobs' and 'exa hpc logs %s --cluster %s'",
                  r->job.job_id, r->job.cluster,
                  r->job.state ? r->job.state : "UNKNOWN", r->job.job_id,
                  r->job.cluster);
        h = hint;
    } else if (err->code == EXA_ENOTFOUND) {
        h = "see 'exa hpc clusters'; register one with 'exa hpc connect'";
    }
    return out_error(ctx, err, h);
}

static void hooks_init(struct cluster_run_hooks *h, struct view *v,
                       struct exa_ctx *ctx)
{
    memset(v, 0, sizeof(*v));
    v->ctx = ctx;
    v->tty_err = isatty(2);
    h->step = show_step;
    h->wait = show_wait;
    h->interrupted = &interrupted;
    h->on_interrupt = ask_cancel;
    h->arg = v;
}

static void sigint_install(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, old);
}

int pipeline_cluster_run(struct exa_ctx *ctx, struct pipeline_cluster_opts *o)
{
    struct cluster_run_request req;
    struct cluster_run_result res;
    struct sigaction old;
    struct view v;
    exa_error_t err = EXA_ERROR_INIT;
    char *path = NULL;
    int rc;

    memset(&req, 0, sizeof(req));
    if (sched_resources_from_env(&o->res, &err) < 0) {
        rc = out_error(ctx, &err,
                       "check the EXAMLOPS_HPC_* resource "
                       "variables");
        sched_resources_release(&o->res);
        return rc;
    }
    if (!o->dataset_path) {
        const struct zoo_dataset *d = zoo_dataset_find(o->dataset, &err);
        if (!d) {
            sched_resources_release(&o->res);
            return out_error(ctx, &err, "see 'exa pipeline run --help'");
        }
        path = zoo_dataset_default_path(d, EXA_DATADIR, EXA_SRCDIR);
    }
    req.model = o->model;
    req.dataset = o->dataset;
    req.dataset_path = o->dataset_path ? o->dataset_path : path;
    req.stage_dataset = o->stage_dataset;
    req.dummy = o->dummy;
    req.nthread = o->nthread;
    req.max_skip = o->max_skip;
    req.max_skip_set = o->max_skip_set;
    req.dry_run = o->dry_run;
    req.cluster = o->cluster;
    req.res = &o->res;
    req.actor = getenv("EXAMLOPS_ACTOR");
    req.run_id = o->run_id;
    req.new_run = o->new_run;
    req.via_worker = o->via_worker;
    hooks_init(&req.hooks, &v, ctx);
    if (ctx->out != OUT_JSON && !ctx->quiet) {
        printf("Running %s on %s on cluster %s%s%s\n", o->model, o->dataset,
               o->cluster, o->via_worker ? " via a worker" : "",
               o->dummy ? ", --dummy" : "");
        fflush(stdout); /* before any error on stderr, also under 2>&1 */
    }
    sigint_install(&old);
    rc = o->via_worker ? pipeline_task_run(&req, &res, &err)
                       : cluster_run(&req, &res, &err);
    sigaction(SIGINT, &old, NULL);
    rc = report(ctx, &res, rc, &err, &v);
    cluster_run_result_release(&res);
    sched_resources_release(&o->res);
    free(path);
    return rc;
}

/* The cluster of a pending cluster run with job id id, or NULL. */
static char *find_pending_cluster(const char *id)
{
    struct job_rec *list = NULL;
    size_t n = 0;
    char *found = NULL;
    store_t *st = store_open(NULL, NULL);
    if (!st)
        return NULL;
    if (store_job_list(st, NULL, &list, &n, NULL) == 0)
        for (size_t i = 0; i < n && !found; i++)
            if (list[i].job_id && !strcmp(list[i].job_id, id) &&
                list[i].run_uuid && list[i].remote_dir &&
                list[i].model_version == JOB_NULL_INT && list[i].scheduler &&
                (!strcmp(list[i].scheduler, "slurm") ||
                 !strcmp(list[i].scheduler, "flux")))
                found = xstrdup(list[i].cluster);
    job_rec_free_list(list, n);
    store_close(st);
    return found;
}

int pipeline_cluster_wait_hook(struct exa_ctx *ctx, const char *cluster,
                               char **ids, size_t n)
{
    struct cluster_run_hooks h;
    struct cluster_run_result res;
    struct sigaction old;
    struct view v;
    exa_error_t err = EXA_ERROR_INIT;
    char *owned = NULL;
    int rc;

    if (n != 1)
        return -1;
    if (!cluster || !*cluster)
        cluster = getenv("EXAMLOPS_HPC_CLUSTER");
    if (!cluster || !*cluster)
        cluster = owned = find_pending_cluster(ids[0]);
    if (!cluster || cluster_run_pending(NULL, cluster, ids[0], NULL) != 1) {
        free(owned);
        return -1;
    }
    memset(&h, 0, sizeof(h));
    hooks_init(&h, &v, ctx);
    if (ctx->out != OUT_JSON && !ctx->quiet)
        printf("Resuming the run of job %s on cluster %s\n", ids[0], cluster);
    sigint_install(&old);
    rc = cluster_run_resume(NULL, NULL, NULL, cluster, ids[0], NULL, &h, &res,
                            &err);
    sigaction(SIGINT, &old, NULL);
    rc = report(ctx, &res, rc, &err, &v);
    cluster_run_result_release(&res);
    free(owned);
    return rc;
}
