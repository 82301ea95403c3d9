/*
 * run.c - the mock-mode main job (see run.h for the order of steps and
 * why it is that order).
 *
 * The staging directory lives next to the final version directories
 * (models/<model>/run-<uuid>.tmp-XXXXXX) so publishing is one rename on
 * one file system, done inside the registration transaction: a version
 * row exists exactly when its directory does.
 */
#include "libpipeline/run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "libutil/atomic.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

char *pipeline_models_root(exa_error_t *err)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        return xstrfmt("%s/examlops/models", xdg);
    if (home && *home)
        return xstrfmt("%s/.local/share/examlops/models", home);
    exa_err(err, EXA_ECONFIG,
            "cannot locate the data directory: set XDG_DATA_HOME or HOME");
    return NULL;
}

void pipeline_random_hex(char *buf, size_t ndigits)
{
    unsigned char raw[32];
    size_t n = (ndigits + 1) / 2;
    if (n > sizeof(raw))
        BUG("pipeline_random_hex: %zu digits", ndigits);
    if (getrandom(raw, n, 0) != (ssize_t)n) {
        /* No entropy source: time and pid still make a collision unlikely
         * within one database, which is all an id needs here. */
        unsigned long long x = (unsigned long long)time(NULL) * 2654435761u ^
                               (unsigned long long)getpid() << 20 ^
                               (unsigned long long)(time_monotonic() * 1e9);
        for (size_t i = 0; i < n; i++, x = x * 6364136223846793005ULL + 1)
            raw[i] = (unsigned char)(x >> 56);
    }
    for (size_t i = 0; i < ndigits; i++)
        buf[i] = "0123456789abcdef"[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    buf[ndigits] = '\0';
}

struct publish_ctx {
    const char *staging;
    const char *model_dir;
    char *final;
};

static int publish(struct model_version *mv, void *arg, exa_error_t *err)
{
    struct publish_ctx *pc = arg;
    free(pc->final);
    pc->final = xstrfmt("%s/%lld", pc->model_dir, mv->version);
    if (atomic_dir_commit(pc->staging, pc->final, 0755, err) < 0) {
        if (errno == EEXIST || strstr(err ? err->text : "", "exists"))
            exa_err_prefix(err, "version %lld of %s is not registered but "
                           "its directory exists; move it away",
                           mv->version, mv->model);
        return -1;
    }
    free(mv->artifact_path);
    mv->artifact_path = xstrdup(pc->final);
    return 0;
}

static void unpublish(struct model_version *mv, void *arg)
{
    struct publish_ctx *pc = arg;
    /* Put it back where the failure path removes it. */
    if (rename(pc->final, pc->staging) < 0)
        atomic_dir_abort(pc->final);
}

static void step(const struct pipeline_run_request *req, const char *name,
                 double t0, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void step(const struct pipeline_run_request *req, const char *name,
                 double t0, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    if (!req->train.progress)
        return;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    req->train.progress(req->train.progress_arg, name,
                        time_monotonic() - t0, detail);
}

/* Record the end of the job: state, exit, times and resources used. */
static void finish_job(store_t *st, struct job_rec *job, const char *state,
                       const char *reason, double wall0, double cpu0)
{
    struct job_rec ch;
    char end[TIME_ISO_MAX];
    double cpu = time_cpu_seconds(0) - cpu0;
    time_format_iso8601(time(NULL), end, sizeof(end));
    job_rec_init(&ch);
    ch.state = (char *)state;
    ch.reason = (char *)reason;
    ch.exit_code = strcmp(state, "COMPLETED") ? 1 : 0;
    ch.end_time = end;
    ch.run_seconds = time_monotonic() - wall0;
    ch.cpu_seconds = cpu;
    ch.cpu_hours = cpu / 3600.0;
    ch.gpu_hours = 0.0;
    /* Best effort: the outcome the caller reports does not depend on it. */
    store_job_update(st, job->cluster, job->job_id, &ch, NULL);
    free(job->state);
    job->state = xstrdup(state);
    free(job->reason);
    job->reason = reason ? xstrdup(reason) : NULL;
    job->exit_code = ch.exit_code;
    free(job->end_time);
    job->end_time = xstrdup(end);
    job->run_seconds = ch.run_seconds;
    job->cpu_seconds = ch.cpu_seconds;
    job->cpu_hours = ch.cpu_hours;
    job->gpu_hours = ch.gpu_hours;
}

int pipeline_run_mock(const struct pipeline_run_request *req,
                      struct pipeline_run_result *res, exa_error_t *err)
{
    const struct train_request *tr = &req->train;
    struct pm100_table t = PM100_TABLE_INIT;
    struct publish_ctx pc = { 0 };
    char *root = NULL, *model_dir = NULL, *stage_name = NULL;
    char *staging = NULL;
    char hex8[16], uuid[16], start[TIME_ISO_MAX], sha[65];
    const struct zoo_model *zm;
    const struct zoo_dataset *zd;
    store_t *st = NULL;
    double wall0 = time_monotonic(), cpu0 = time_cpu_seconds(0), t0;
    long long job_ref = 0;
    int rc = -1;

    memset(res, 0, sizeof(*res));
    job_rec_init(&res->job);
    model_version_init(&res->mv);
    time_format_iso8601(time(NULL), start, sizeof(start));

    /* 1. names and data: nothing is written before this succeeds. */
    if (!(zm = zoo_model_find(tr->model, err)) ||
        !(zd = zoo_dataset_find(tr->dataset, err)))
        goto out;
    if (access(tr->dataset_path, F_OK) < 0) {
        exa_err(err, EXA_ECONFIG, "dataset file '%s' not found: %s",
                tr->dataset_path, strerror(errno));
        goto out;
    }
    if (pipeline_load(tr, &t, err) < 0)
        goto out;

    /* 2. staging directory: proves the data directory is writable. */
    root = req->models_root ? xstrdup(req->models_root)
                            : pipeline_models_root(err);
    if (!root)
        goto out;
    pipeline_random_hex(hex8, 8);
    pipeline_random_hex(uuid, 12);
    model_dir = xstrfmt("%s/%s", root, zm->name);
    stage_name = xstrfmt("%s/run-%s", model_dir, uuid);
    staging = atomic_dir_begin(stage_name, err);
    if (!staging) {
        exa_err_prefix(err, "data directory '%s' is not writable", root);
        goto out;
    }

    /* 3. the database. */
    st = store_open(req->db_path, err);
    if (!st)
        goto out;
    res->db_path = xstrdup(st->path);

    /* 4. the job record. */
    res->job.cluster = xstrdup("local");
    res->job.scheduler = xstrdup("mock");
    res->job.job_id = xstrfmt("mock-%s", hex8);
    res->job.run_uuid = xstrdup(uuid);
    res->job.job_name = xstrfmt("exa-%s-%s", zm->name, uuid);
    res->job.kind = xstrdup("train");
    res->job.model = xstrdup(zm->name);
    res->job.dataset = xstrdup(zd->name);
    res->job.state = xstrdup("RUNNING");
    res->job.submit_time = xstrdup(start);
    res->job.start_time = xstrdup(start);
    res->job.queue_seconds = 0;
    res->job.nodes = 1;
    res->job.gpus = 0;
    res->job.cpus = tr->nthread > 0 ? tr->nthread : 2;
    if (store_job_insert(st, &res->job, &job_ref, err) < 0)
        goto out;
    res->job.id = job_ref;
    res->job_recorded = 1;

    /* 5. train, evaluate, write. */
    if (pipeline_fit(tr, &t, &res->tm, err) < 0)
        goto fail_job;
    t0 = time_monotonic();
    if (pipeline_write_artifacts(&res->tm, staging, sha, err) < 0)
        goto fail_job;

    /* 6. register. */
    res->mv.model = xstrdup(zm->name);
    res->mv.stage = xstrdup(res->tm.stage);
    res->mv.rmse = res->tm.metrics.rmse;
    res->mv.mse = res->tm.metrics.mse;
    res->mv.mape = res->tm.metrics.mape;
    {
        json_t *m = trained_model_summary_json(&res->tm);
        res->mv.metrics = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(m);
    }
    res->mv.dataset = xstrdup(zd->name);
    res->mv.dataset_path = xstrdup(tr->dataset_path);
    res->mv.train_rows = (long long)res->tm.train_rows;
    res->mv.val_rows = (long long)res->tm.val_rows;
    res->mv.skipped_rows = (long long)res->tm.skipped_rows;
    res->mv.artifact_sha256 = xstrdup(sha);
    res->mv.job_ref = job_ref;
    res->mv.cluster = xstrdup("local");
    res->mv.scheduler = xstrdup("mock");
    res->mv.job_id = xstrdup(res->job.job_id);
    res->mv.run_uuid = xstrdup(uuid);
    pc.staging = staging;
    pc.model_dir = model_dir;
    if (store_model_register(st, &res->mv, publish, unpublish, &pc, err) < 0)
        goto fail_job;
    res->job.model_version = res->mv.version;
    step(req, "register", t0, "%s version %lld (%s) in '%s'", zm->name,
         res->mv.version, res->mv.stage, res->mv.artifact_path);

    /* 7. done. */
    finish_job(st, &res->job, "COMPLETED", NULL, wall0, cpu0);
    rc = 0;
    goto out;

fail_job:
    finish_job(st, &res->job, "FAILED", err ? err->text : "failed", wall0,
               cpu0);
out:
    if (rc < 0 && staging)
        atomic_dir_abort(staging);
    free(pc.final);
    free(staging);
    free(stage_name);
    free(model_dir);
    free(root);
    pm100_table_release(&t);
    store_close(st);
    return rc;
}

void pipeline_run_result_release(struct pipeline_run_result *res)
{
    job_rec_release(&res->job);
    model_version_release(&res->mv);
    trained_model_release(&res->tm);
    free(res->db_path);
    memset(res, 0, sizeof(*res));
}
