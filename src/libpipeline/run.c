/*
 * run.c - the mock-mode main job (see run.h for the order of steps and
 * why it is that order).
 *
 * The staging directory lives next to the final version directories
 * (models/<model>/run-<uuid>.tmp-XXXXXX) so publishing is one rename on
 * one file system, done inside the registration transaction: a version
 * row exists exactly when its directory does.
 *
 * When the caller can be interrupted (req->interrupted), training and
 * the artifact write run in a forked child: XGBoost's training call
 * cannot be stopped half way, and Ctrl-C on the real PM100 must not wait
 * a minute for it. The parent polls the pipe that carries the child's
 * small JSON result, kills the child when the flag is raised, removes the
 * staging directory and records the job FAILED. The child never touches
 * platform.db and leaves with _exit().
 */
#include "libpipeline/run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libutil/atomic.h"
#include "libutil/json.h"
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
            exa_err_prefix(err,
                           "version %lld of %s is not registered but "
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
    req->train.progress(req->train.progress_arg, name, time_monotonic() - t0,
                        detail);
}

/* The signal that interrupted the run (and err set), or 0. */
static int interrupted(const struct pipeline_run_request *req, exa_error_t *err)
{
    int sig = req->interrupted ? (int)*req->interrupted : 0;
    if (sig)
        exa_err(err, EXA_EFAIL, "interrupted by signal %d", sig);
    return sig;
}

/* Largest result a training child may send back (it is ~300 bytes). */
#define CHILD_MSG_MAX ((size_t)64 << 10)

static void write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

/* Child side: fit, write the artifacts, send the numbers back, _exit. */
static void child_fit(const struct pipeline_run_request *req,
                      const struct pm100_table *t, const char *staging, int fd)
    __attribute__((noreturn));
static void child_fit(const struct pipeline_run_request *req,
                      const struct pm100_table *t, const char *staging, int fd)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    struct trained_model tm;
    exa_error_t e = EXA_ERROR_INIT;
    char sha[65];
    json_t *o = json_object();
    char *s;

    /* Die with the parent, and by the default action of a signal the
     * parent catches (one it ignores stays ignored). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction sa;
        if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
            signal(sigs[i], SIG_DFL);
    }
    if (pipeline_fit(&req->train, t, &tm, &e) == 0 &&
        pipeline_write_artifacts(&tm, staging, sha, &e) == 0) {
        jx_set(o, "sha256", jx_str(sha));
        jx_set(o, "rmse", jx_real(tm.metrics.rmse));
        jx_set(o, "mse", jx_real(tm.metrics.mse));
        jx_set(o, "mape", jx_real(tm.metrics.mape));
        jx_set(o, "n", json_integer((json_int_t)tm.metrics.n));
        jx_set(o, "n_mape", json_integer((json_int_t)tm.metrics.n_mape));
        jx_set(o, "records", json_integer((json_int_t)tm.records));
        jx_set(o, "skipped_rows", json_integer((json_int_t)tm.skipped_rows));
        jx_set(o, "train_rows", json_integer((json_int_t)tm.train_rows));
        jx_set(o, "val_rows", json_integer((json_int_t)tm.val_rows));
        jx_set(o, "unseen_val", json_integer((json_int_t)tm.unseen_val));
    } else {
        jx_set(o, "code", json_integer(e.code ? e.code : EXA_EFAIL));
        jx_set(o, "error", jx_str(e.text[0] ? e.text : "training failed"));
    }
    s = json_dumps(o, JSON_COMPACT);
    if (s)
        write_all(fd, s, strlen(s));
    _exit(s ? 0 : 1);
}

/* Parent side: rebuild *tm from the child's numbers (no forest kept). */
static int child_result(const struct pipeline_run_request *req, const char *msg,
                        struct trained_model *tm, char sha[65],
                        exa_error_t *err)
{
    const struct train_request *tr = &req->train;
    struct rf_params params = RF_PARAMS_DEFAULT;
    json_error_t je;
    json_t *o = json_loads(msg, 0, &je);
    const char *s;

    if (!json_is_object(o)) {
        json_decref(o);
        return exa_err(err, EXA_EFAIL,
                       "training process sent an "
                       "unreadable result: %s",
                       je.text);
    }
    if ((s = jx_get_str(o, "error", NULL))) {
        long long code = jx_get_int(o, "code", EXA_EFAIL);
        exa_err(err,
                code > EXA_OK && code <= EXA_ETIMEOUT ? (enum exa_errc)code
                                                      : EXA_EFAIL,
                "%s", s);
        json_decref(o);
        return -1;
    }
    s = jx_get_str(o, "sha256", "");
    if (strlen(s) != 64) {
        json_decref(o);
        return exa_err(err, EXA_EFAIL, "training process sent no checksum");
    }
    memcpy(sha, s, 65);
    tm->model = zoo_model_find(tr->model, NULL);
    tm->dataset = zoo_dataset_find(tr->dataset, NULL);
    tm->dataset_path = xstrdup(tr->dataset_path ? tr->dataset_path : "");
    tm->dummy = tr->dummy;
    if (tr->nthread > 0)
        params.nthread = tr->nthread;
    tm->params = params;
    tm->metrics.rmse = jx_get_num(o, "rmse", NAN);
    tm->metrics.mse = jx_get_num(o, "mse", NAN);
    tm->metrics.mape = jx_get_num(o, "mape", NAN);
    tm->metrics.n = (size_t)jx_get_int(o, "n", 0);
    tm->metrics.n_mape = (size_t)jx_get_int(o, "n_mape", 0);
    tm->stage = metrics_stage(tm->metrics.rmse);
    tm->records = (size_t)jx_get_int(o, "records", 0);
    tm->skipped_rows = (size_t)jx_get_int(o, "skipped_rows", 0);
    tm->train_rows = (size_t)jx_get_int(o, "train_rows", 0);
    tm->val_rows = (size_t)jx_get_int(o, "val_rows", 0);
    tm->unseen_val = (size_t)jx_get_int(o, "unseen_val", 0);
    json_decref(o);
    return 0;
}

/*
 * Steps 5 (fit, evaluate, write into staging): in this process, or in a
 * child that is killed when req->interrupted is raised. tm is zeroed
 * here; 0 or -1 with err.
 */
static int fit_and_write(const struct pipeline_run_request *req,
                         const struct pm100_table *t, const char *staging,
                         struct trained_model *tm, char sha[65],
                         exa_error_t *err)
{
    struct strbuf msg = STRBUF_INIT;
    int fds[2], status = 0, rc = -1, stopped = 0;
    pid_t pid;

    memset(tm, 0, sizeof(*tm));
    if (!req->interrupted) {
        if (pipeline_fit(&req->train, t, tm, err) < 0)
            return -1;
        return pipeline_write_artifacts(tm, staging, sha, err);
    }
    if (pipe2(fds, O_CLOEXEC) < 0)
        return exa_err(err, EXA_EFAIL, "cannot create a pipe: %s",
                       strerror(errno));
    fflush(stdout); /* nothing buffered may be written twice */
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        exa_err(err, EXA_EFAIL, "cannot start the training process: %s",
                strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_fit(req, t, staging, fds[1]);
    }
    close(fds[1]);
    for (;;) {
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        char buf[4096];
        ssize_t n;
        if (interrupted(req, err)) {
            kill(pid, SIGKILL);
            stopped = 1;
            break;
        }
        if (poll(&pfd, 1, 100) <= 0)
            continue; /* timeout or EINTR: look at the flag again */
        n = read(fds[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (msg.len + (size_t)n > CHILD_MSG_MAX) {
            exa_err(err, EXA_EFAIL,
                    "training process sent more than %zu "
                    "bytes",
                    CHILD_MSG_MAX);
            kill(pid, SIGKILL);
            stopped = 1;
            break;
        }
        strbuf_add(&msg, buf, (size_t)n);
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (stopped)
        goto out; /* interrupted, or too much output: err is set */
    if (interrupted(req, err))
        goto out; /* the child got the terminal's Ctrl-C too */
    if (WIFSIGNALED(status)) {
        exa_err(err, EXA_EFAIL, "training process killed by signal %d",
                WTERMSIG(status));
        goto out;
    }
    if (!msg.len) {
        exa_err(err, EXA_EFAIL,
                "training process exited %d without a "
                "result",
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        goto out;
    }
    rc = child_result(req, msg.buf, tm, sha, err);
out:
    strbuf_release(&msg);
    return rc;
}

/* Record the end of the job: state, exit, times and resources used (CPU
 * seconds include the training child's, which has been waited for). */
static void finish_job(store_t *st, struct job_rec *job, const char *state,
                       const char *reason, double wall0, double cpu0)
{
    struct job_rec ch;
    char end[TIME_ISO_MAX];
    double cpu = time_cpu_seconds(1) - cpu0;
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
    struct publish_ctx pc = {0};
    char *root = NULL, *model_dir = NULL, *stage_name = NULL;
    char *staging = NULL;
    char hex8[16], uuid[16], start[TIME_ISO_MAX], sha[65];
    const struct zoo_model *zm;
    const struct zoo_dataset *zd;
    store_t *st = NULL;
    double wall0 = time_monotonic(), cpu0 = time_cpu_seconds(1), t0;
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
    if (pipeline_load(tr, &t, err) < 0 || interrupted(req, err))
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

    /* 5. train, evaluate, write; past this check nothing is undone. */
    if (interrupted(req, err) ||
        fit_and_write(req, &t, staging, &res->tm, sha, err) < 0 ||
        interrupted(req, err))
        goto fail_job;
    t0 = time_monotonic();

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
