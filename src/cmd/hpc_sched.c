/*
 * hpc_sched.c - `exa hpc submit|status|wait|cancel|logs`.
 *
 * Thin front end over libsched: build the transport and adapter from the
 * environment, translate flags into the neutral resource ask, and keep the
 * jobs table in step (cluster-scoped ids: --cluster or EXAMLOPS_HPC_CLUSTER,
 * default "default"). Status and wait ask the scheduler about all given
 * ids in one batch; wait shows state and elapsed time on a terminal.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/hpc_sched.h"
#include "cmd/pipeline_cluster.h"
#include "libsched/resources.h"
#include "libsched/runscript.h"
#include "libsched/sched.h"
#include "libsched/tracker.h"
#include "libstore/jobs.h"
#include "libstore/store.h"
#include "libtransport/transport.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/subprocess.h"
#include "libutil/xalloc.h"

struct sched_env {
    struct transport *t;
    struct sched *s;
    store_t *st;
    const char *cluster;
};

static const char *cluster_name(const char *flag)
{
    const char *c = getenv("EXAMLOPS_HPC_CLUSTER");

    if (flag && *flag)
        return flag;
    return c && *c ? c : "default";
}

static int env_open(struct exa_ctx *ctx, struct sched_env *e,
                    const char *cluster, int need_store)
{
    exa_error_t err = EXA_ERROR_INIT;

    memset(e, 0, sizeof(*e));
    e->cluster = cluster_name(cluster);
    e->t = transport_from_env(&err);
    if (!e->t)
        return out_error(ctx, &err, "check EXAMLOPS_HPC_TRANSPORT and "
                                    "EXAMLOPS_HPC_SSH_*");
    e->s = sched_new(sched_kind_from_env(), e->t, &err);
    if (!e->s) {
        transport_close(e->t);
        e->t = NULL;
        return out_error(ctx, &err, "set EXAMLOPS_HPC_SCHEDULER to slurm, "
                                    "flux or mock");
    }
    if (need_store) {
        e->st = store_open(NULL, &err);
        if (!e->st)
            return out_error(ctx, &err, NULL);
    }
    return 0;
}

static void env_close(struct sched_env *e)
{
    sched_free(e->s);
    transport_close(e->t);
    if (e->st)
        store_close(e->st);
}

/* Scheduler time (Slurm local ISO without zone, Flux epoch) -> UTC "Z". */
static int to_utc(const char *s, char *buf, size_t n, time_t *epoch)
{
    time_t t = time_parse_sched(s);

    if (t < 0)
        return -1;
    time_format_iso8601(t, buf, n);
    if (epoch)
        *epoch = t;
    return 0;
}

static void format_elapsed(long long s, char *buf, size_t n)
{
    if (s < 0)
        xsnprintf(buf, n, "-");
    else if (s >= 86400)
        xsnprintf(buf, n, "%lld-%02lld:%02lld:%02lld", s / 86400,
                  s / 3600 % 24, s / 60 % 60, s % 60);
    else
        xsnprintf(buf, n, "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
}

/* Record what the scheduler said about j in the jobs table (if tracked). */
static void record_status(struct sched_env *e, const struct sched_job *j)
{
    struct job_rec ch;
    char sub[32], start[32], end[32];
    time_t ts = 0, tst = 0, te = 0;
    int has_sub, has_start, has_end;

    if (!e->st || j->state == SCHED_UNKNOWN)
        return;
    job_rec_init(&ch);
    ch.state = (char *)sched_state_name(j->state);
    ch.raw_state = j->raw_state[0] ? (char *)j->raw_state : NULL;
    ch.reason = j->reason[0] ? (char *)j->reason : NULL;
    if (j->exit_code >= 0)
        ch.exit_code = j->exit_code;
    if (j->signal >= 0 && sched_state_terminal(j->state))
        ch.signal = j->signal;
    has_sub = to_utc(j->submit, sub, sizeof(sub), &ts) == 0;
    has_start = to_utc(j->start, start, sizeof(start), &tst) == 0;
    has_end = to_utc(j->end, end, sizeof(end), &te) == 0;
    if (has_sub)
        ch.submit_time = sub;
    if (has_start)
        ch.start_time = start;
    if (has_end)
        ch.end_time = end;
    if (has_sub && has_start && tst >= ts)
        ch.queue_seconds = (double)(tst - ts);
    if (j->elapsed_s >= 0 && sched_state_terminal(j->state))
        ch.run_seconds = (double)j->elapsed_s;
    else if (has_start && has_end && te >= tst)
        ch.run_seconds = (double)(te - tst);
    if (j->gpus >= 0)
        ch.gpus = j->gpus;
    if (j->cpus >= 0)
        ch.cpus = j->cpus;
    if (j->nodes >= 0)
        ch.nodes = j->nodes;
    if (ch.run_seconds == ch.run_seconds) { /* not NaN */
        if (j->gpus >= 0)
            ch.gpu_hours = j->gpus * ch.run_seconds / 3600.0;
        if (j->cpus >= 0)
            ch.cpu_hours = j->cpus * ch.run_seconds / 3600.0;
    }
    store_job_update(e->st, e->cluster, j->id, &ch, NULL);
    /* ch borrows every string: nothing to release */
}

static json_t *job_json(const struct sched_job *j, const char *cluster)
{
    json_t *o = json_object();

    jx_set(o, "job_id", jx_str(j->id));
    jx_set(o, "cluster", jx_str(cluster));
    jx_set(o, "state", jx_str(sched_state_name(j->state)));
    jx_set(o, "raw_state", j->raw_state[0] ? jx_str(j->raw_state) : json_null());
    jx_set(o, "reason", j->reason[0] ? jx_str(j->reason) : json_null());
    jx_set(o, "exit_code", jx_int_or_null(j->exit_code >= 0, j->exit_code));
    jx_set(o, "signal", jx_int_or_null(j->signal >= 0, j->signal));
    jx_set(o, "start", j->start[0] ? jx_str(j->start) : json_null());
    jx_set(o, "end", j->end[0] ? jx_str(j->end) : json_null());
    jx_set(o, "elapsed_s", jx_int_or_null(j->elapsed_s >= 0, j->elapsed_s));
    jx_set(o, "gpus", jx_int_or_null(j->gpus >= 0, j->gpus));
    return o;
}

static void print_jobs(struct exa_ctx *ctx, const struct sched_job *jobs,
                       size_t n, const char *cluster)
{
    static const char *const cols[] = { "JOBID", "STATE", "RAW_STATE", "EXIT",
                                        "START", "END", "ELAPSED", NULL };
    struct out_table *tb;

    if (ctx->out == OUT_JSON) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(arr, job_json(&jobs[i], cluster));
        out_json(ctx, arr);
        return;
    }
    tb = out_table_create(cols);
    for (size_t i = 0; i < n; i++) {
        char ex[32], el[32];
        const char *row[8];
        if (jobs[i].exit_code >= 0 && jobs[i].signal > 0)
            xsnprintf(ex, sizeof(ex), "%d:%d", jobs[i].exit_code, jobs[i].signal);
        else if (jobs[i].exit_code >= 0)
            xsnprintf(ex, sizeof(ex), "%d", jobs[i].exit_code);
        else if (jobs[i].signal > 0)
            xsnprintf(ex, sizeof(ex), "signal %d", jobs[i].signal);
        else
            xsnprintf(ex, sizeof(ex), "-");
        format_elapsed(jobs[i].elapsed_s, el, sizeof(el));
        row[0] = jobs[i].id;
        row[1] = sched_state_name(jobs[i].state);
        row[2] = jobs[i].raw_state[0] ? jobs[i].raw_state : NULL;
        row[3] = ex;
        row[4] = jobs[i].start[0] ? jobs[i].start : NULL;
        row[5] = jobs[i].end[0] ? jobs[i].end : NULL;
        row[6] = el;
        row[7] = NULL;
        out_table_row(tb, row);
    }
    out_table_print(ctx, tb);
}

/* sacct -S: the earliest recorded submit time of the ids, if any. */
static void set_since(struct sched_env *e, char **ids, size_t n)
{
    long long since = 0;

    for (size_t i = 0; e->st && i < n; i++) {
        struct job_rec r;
        time_t t;
        if (store_job_get(e->st, e->cluster, ids[i], &r, NULL) < 0)
            continue;
        /* Stored times are UTC "…Z" (timeutil.h). */
        if ((r.submit_time &&
             time_parse_iso8601(r.submit_time, &t, NULL) == 0) ||
            (r.created_at && time_parse_iso8601(r.created_at, &t, NULL) == 0)) {
            if (!since || (long long)t < since)
                since = (long long)t;
        }
        job_rec_release(&r);
    }
    e->s->sacct_since = since;
}

/* ---- submit ---- */

enum {
    O_PARTITION = 256, O_QOS, O_ACCOUNT, O_CONSTRAINT, O_TIME, O_NODES,
    O_NTASKS, O_CPT, O_MEM, O_GPUS, O_JOBNAME, O_ARRAY, O_HOLD, O_CLUSTER,
    O_WAIT, O_ERR,
};

static const struct option submit_opts[] = {
    { "partition", required_argument, NULL, O_PARTITION },
    { "qos", required_argument, NULL, O_QOS },
    { "account", required_argument, NULL, O_ACCOUNT },
    { "constraint", required_argument, NULL, O_CONSTRAINT },
    { "time", required_argument, NULL, O_TIME },
    { "nodes", required_argument, NULL, O_NODES },
    { "ntasks", required_argument, NULL, O_NTASKS },
    { "cpus-per-task", required_argument, NULL, O_CPT },
    { "mem", required_argument, NULL, O_MEM },
    { "gpus", required_argument, NULL, O_GPUS },
    { "job-name", required_argument, NULL, O_JOBNAME },
    { "array", required_argument, NULL, O_ARRAY },
    { "hold", no_argument, NULL, O_HOLD },
    { "cluster", required_argument, NULL, O_CLUSTER },
    { "wait", no_argument, NULL, O_WAIT },
    { NULL, 0, NULL, 0 },
};

static const char *const opt_key[] = {
    "partition", "qos", "account", "constraint", "time", "nodes",
    "ntasks", "cpus_per_task", "mem", "gpus", "job_name", "array",
};

static int do_wait(struct exa_ctx *ctx, struct sched_env *e, char **ids,
                   size_t n);

int cmd_hpc_submit(struct exa_ctx *ctx, int argc, char **argv)
{
    struct sched_resources res = SCHED_RESOURCES_INIT;
    struct sched_submit_result sr;
    struct sched_env e;
    exa_error_t err = EXA_ERROR_INIT;
    const char *cluster = NULL, *script;
    char run_id[13], tmpdir[] = "/tmp/exa-submit-XXXXXX";
    char *rdir = NULL, *payload_remote = NULL, *runsh = NULL, *base;
    struct strvec payload = STRVEC_INIT;
    struct strbuf text = STRBUF_INIT;
    int c, wait = 0, rc;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", submit_opts, NULL)) != -1) {
        if (c >= O_PARTITION && c <= O_ARRAY) {
            if (sched_resources_set(&res, opt_key[c - O_PARTITION], optarg,
                                    &err) < 0) {
                sched_resources_release(&res);
                return out_usage(ctx, "%s", err.text);
            }
        } else if (c == O_HOLD) {
            res.hold = 1;
        } else if (c == O_CLUSTER) {
            cluster = optarg;
        } else if (c == O_WAIT) {
            wait = 1;
        } else {
            sched_resources_release(&res);
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        sched_resources_release(&res);
        return out_usage(ctx, "missing SCRIPT");
    }
    script = argv[optind++];
    if (access(script, R_OK) < 0) {
        /* a missing or unreadable file is configuration (doc/exit-codes.md) */
        int eno = errno;
        sched_resources_release(&res);
        return out_errorf(ctx, EXA_ECONFIG, NULL, "cannot read script '%s': %s",
                          script, strerror(eno));
    }
    if (sched_resources_from_env(&res, &err) < 0) {
        sched_resources_release(&res);
        return out_error(ctx, &err, NULL);
    }
    if ((rc = env_open(ctx, &e, cluster, 1)) != 0) {
        sched_resources_release(&res);
        env_close(&e);
        return rc;
    }
    sched_new_run_id(run_id);
    rdir = sched_remote_jobdir(e.s, run_id, &err);
    if (!rdir)
        goto fail;
    base = strrchr(script, '/');
    base = base ? base + 1 : (char *)script;
    payload_remote = xstrfmt("%s/payload-%s", rdir, base);
    if (transport_put(e.t, script, payload_remote, &err) < 0)
        goto fail;
    strvec_pushl(&payload, "bash", payload_remote, NULL);
    for (; optind < argc; optind++)
        strvec_push(&payload, argv[optind]);
    {
        char *title = xstrfmt("exa hpc submit %s (run %s)", base, run_id);
        struct runscript rs = { title, rdir, NULL, payload.v };
        rc = runscript_render(&rs, &text, &err);
        free(title);
        if (rc < 0)
            goto fail;
    }
    if (!mkdtemp(tmpdir)) {
        exa_err(&err, EXA_ECONFIG, "cannot create a temporary directory");
        goto fail;
    }
    runsh = xstrfmt("%s/run.sh", tmpdir);
    if (runscript_write(runsh, text.buf, &err) < 0)
        goto fail;
    {
        struct sched_submit_req req = { runsh, rdir, run_id, &res };
        rc = sched_submit(e.s, &req, &sr, &err);
        unlink(runsh);
        rmdir(tmpdir);
        if (rc < 0) {
            sched_submit_result_release(&sr);
            goto fail;
        }
    }
    for (size_t i = 0; i < sr.warnings.nr; i++)
        out_warn(ctx, "%s", sr.warnings.v[i]);
    for (size_t i = 0; i < sr.ids.nr; i++) {
        struct job_rec j;
        char now[32];
        char *name = sched_job_name(res.job_name, run_id);
        job_rec_init(&j);
        store_now(now, sizeof(now));
        j.cluster = (char *)e.cluster;
        j.scheduler = (char *)sched_name(e.s);
        j.job_id = (char *)sr.ids.v[i];
        j.run_uuid = run_id;
        j.job_name = name;
        j.kind = "batch";
        j.state = "PENDING";
        j.submit_time = now;
        j.remote_dir = rdir;
        if (res.nodes)
            j.nodes = res.nodes;
        if (res.gpus)
            j.gpus = res.gpus;
        if (res.cpus_per_task)
            j.cpus = res.cpus_per_task * (res.ntasks ? res.ntasks : 1);
        if (store_job_insert(e.st, &j, NULL, &err) < 0 && err.code != EXA_EFAIL)
            out_warn(ctx, "job %s not recorded: %s", sr.ids.v[i], err.text);
        free(name);
    }
    if (!wait) {
        if (ctx->out == OUT_JSON) {
            json_t *o = json_object(), *ids = json_array(), *w = json_array();
            for (size_t i = 0; i < sr.ids.nr; i++)
                json_array_append_new(ids, jx_str(sr.ids.v[i]));
            for (size_t i = 0; i < sr.warnings.nr; i++)
                json_array_append_new(w, jx_str(sr.warnings.v[i]));
            jx_set(o, "job_id", jx_str(sr.job_id));
            jx_set(o, "job_ids", ids);
            jx_set(o, "cluster", jx_str(e.cluster));
            jx_set(o, "scheduler", jx_str(sched_name(e.s)));
            jx_set(o, "run_id", jx_str(run_id));
            jx_set(o, "remote_dir", jx_str(rdir));
            jx_set(o, "reused", json_boolean(sr.reused));
            jx_set(o, "warnings", w);
            out_json(ctx, o);
        } else {
            out_info(ctx, "Submitted job %s on cluster '%s' (%s, run %s)",
                     sr.job_id, e.cluster, sched_name(e.s), run_id);
            out_detail(ctx, "job directory: %s", rdir);
        }
        rc = 0;
    } else {
        char *ids[1] = { sr.job_id };
        out_info(ctx, "Submitted job %s on cluster '%s' (%s, run %s)",
                 sr.job_id, e.cluster, sched_name(e.s), run_id);
        rc = do_wait(ctx, &e, ids, 1);
    }
    sched_submit_result_release(&sr);
    goto done;
fail:
    rc = out_error(ctx, &err, NULL);
done:
    strvec_clear(&payload);
    strbuf_release(&text);
    free(rdir);
    free(payload_remote);
    free(runsh);
    sched_resources_release(&res);
    env_close(&e);
    return rc;
}

/* ---- status, wait, cancel, logs ---- */

static const struct option id_opts[] = {
    { "cluster", required_argument, NULL, O_CLUSTER },
    { "err", no_argument, NULL, O_ERR },
    { NULL, 0, NULL, 0 },
};

/* Parse [--cluster NAME] [--err] JOBID...; returns 0 or an exit status. */
static int parse_ids(struct exa_ctx *ctx, int argc, char **argv,
                     const char **cluster, int *want_err, char ***ids,
                     size_t *n)
{
    int c;

    optind = 0;
    opterr = 0;
    *cluster = NULL;
    while ((c = getopt_long(argc, argv, "", id_opts, NULL)) != -1) {
        if (c == O_CLUSTER)
            *cluster = optarg;
        else if (c == O_ERR && want_err)
            *want_err = 1;
        else
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
    }
    if (optind >= argc)
        return out_usage(ctx, "missing JOBID");
    *ids = argv + optind;
    *n = (size_t)(argc - optind);
    for (size_t i = 0; i < *n; i++)
        if (!(*ids)[i][0] || strchr((*ids)[i], ',') || strchr((*ids)[i], ' '))
            return out_usage(ctx, "invalid job id '%s'", (*ids)[i]);
    return 0;
}

int cmd_hpc_status(struct exa_ctx *ctx, int argc, char **argv)
{
    const char *cluster;
    char **ids;
    size_t n;
    struct sched_env e;
    struct sched_job *jobs;
    exa_error_t err = EXA_ERROR_INIT;
    int rc;

    if ((rc = parse_ids(ctx, argc, argv, &cluster, NULL, &ids, &n)) != 0)
        return rc;
    if ((rc = env_open(ctx, &e, cluster, 1)) != 0) {
        env_close(&e);
        return rc;
    }
    set_since(&e, ids, n);
    jobs = xcalloc(n, sizeof(*jobs));
    if (sched_status_batch(e.s, (const char *const *)ids, n, jobs, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
    } else {
        for (size_t i = 0; i < n; i++)
            record_status(&e, &jobs[i]);
        print_jobs(ctx, jobs, n, e.cluster);
        rc = 0;
    }
    free(jobs);
    env_close(&e);
    return rc;
}

struct progress {
    struct exa_ctx *ctx;
    int tty;
};

static void on_progress(void *arg, const struct sched_job *jobs, size_t n,
                        double elapsed, int poll)
{
    struct progress *p = arg;
    char el[32];

    if (p->ctx->out == OUT_JSON || p->ctx->quiet)
        return;
    format_elapsed((long long)elapsed, el, sizeof(el));
    if (n == 1) {
        fprintf(stderr, "%sjob %s %s%s%s, waited %s%s", p->tty ? "\r\033[K" : "",
                jobs[0].id, sched_state_name(jobs[0].state),
                jobs[0].reason[0] ? " " : "", jobs[0].reason, el,
                p->tty ? "" : "\n");
    } else {
        size_t done = 0, run = 0;
        for (size_t i = 0; i < n; i++) {
            done += sched_state_terminal(jobs[i].state);
            run += jobs[i].state == SCHED_RUNNING;
        }
        fprintf(stderr, "%s%zu job(s): %zu done, %zu running, waited %s%s",
                p->tty ? "\r\033[K" : "", n, done, run, el, p->tty ? "" : "\n");
    }
    fflush(stderr);
}

static int do_wait(struct exa_ctx *ctx, struct sched_env *e, char **ids,
                   size_t n)
{
    struct tracker_opts o;
    struct progress p = { ctx, isatty(2) };
    struct sched_job *jobs = xcalloc(n, sizeof(*jobs));
    exa_error_t err = EXA_ERROR_INIT;
    int rc, polls = 0, all_ok = 1;

    if (tracker_opts_from_env(&o, &err) < 0) {
        free(jobs);
        return out_error(ctx, &err, NULL);
    }
    o.progress = on_progress;
    o.arg = &p;
    set_since(e, ids, n);
    rc = tracker_wait(e->s, (const char *const *)ids, n, &o, jobs, &polls, &err);
    if (p.tty && ctx->out != OUT_JSON && !ctx->quiet)
        fputc('\n', stderr);
    for (size_t i = 0; i < n; i++) {
        record_status(e, &jobs[i]);
        if (jobs[i].state != SCHED_COMPLETED)
            all_ok = 0;
    }
    if (rc < 0) {
        int ec = out_error(ctx, &err, err.code == EXA_ENOTFOUND
                                          ? "the job stays UNKNOWN; check the "
                                            "scheduler with 'exa hpc status'"
                                          : NULL);
        free(jobs);
        return ec == 4 && err.code == EXA_ETIMEOUT ? 1 : ec;
    }
    print_jobs(ctx, jobs, n, e->cluster);
    free(jobs);
    return all_ok ? 0 : 1;
}

int cmd_hpc_wait(struct exa_ctx *ctx, int argc, char **argv)
{
    const char *cluster;
    char **ids;
    size_t n;
    struct sched_env e;
    int rc;

    if ((rc = parse_ids(ctx, argc, argv, &cluster, NULL, &ids, &n)) != 0)
        return rc;
    /* a run of `exa pipeline run --cluster` finishes its registration */
    if ((rc = pipeline_cluster_wait_hook(ctx, cluster, ids, n)) >= 0)
        return rc;
    if ((rc = env_open(ctx, &e, cluster, 1)) != 0) {
        env_close(&e);
        return rc;
    }
    rc = do_wait(ctx, &e, ids, n);
    env_close(&e);
    return rc;
}

int cmd_hpc_cancel(struct exa_ctx *ctx, int argc, char **argv)
{
    const char *cluster;
    char **ids;
    size_t n;
    struct sched_env e;
    exa_error_t err = EXA_ERROR_INIT, first = EXA_ERROR_INIT;
    json_t *arr = json_array();
    int rc, failed = 0;

    if ((rc = parse_ids(ctx, argc, argv, &cluster, NULL, &ids, &n)) != 0) {
        json_decref(arr);
        return rc;
    }
    if ((rc = env_open(ctx, &e, cluster, 0)) != 0) {
        json_decref(arr);
        env_close(&e);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        jx_set(o, "job_id", jx_str(ids[i]));
        if (sched_cancel(e.s, ids[i], &err) < 0) {
            if (!failed++)
                first = err;
            jx_set(o, "cancelled", json_false());
            jx_set(o, "error", jx_str(err.text));
            if (ctx->out != OUT_JSON && n > 1)
                out_warn(ctx, "%s", err.text);
        } else {
            jx_set(o, "cancelled", json_true());
            out_info(ctx, "Cancelled job %s on cluster '%s'", ids[i], e.cluster);
        }
        json_array_append_new(arr, o);
    }
    if (!failed) {
        if (ctx->out == OUT_JSON)
            out_json(ctx, arr);
        else
            json_decref(arr);
        env_close(&e);
        return 0;
    }
    /* Any failure follows the error convention ({error, exit_code, hint});
     * in JSON mode the same document also carries every id's outcome. The
     * exit code is the first failure's. */
    {
        const char *hint = first.code == EXA_ENOTFOUND
                               ? "the job may have ended or never existed; "
                                 "see 'exa hpc status JOBID'"
                               : NULL;
        int code = exa_errc_exit(first.code ? first.code : EXA_EFAIL);
        if (n > 1) {
            char text[sizeof(first.text)];
            xsnprintf(text, sizeof(text), "%d of %zu cancels failed: %.400s",
                      failed, n, first.text);
            xsnprintf(first.text, sizeof(first.text), "%s", text);
        }
        if (ctx->out == OUT_JSON) {
            json_t *doc = json_object();
            jx_set(doc, "error", jx_str(first.text));
            jx_set(doc, "exit_code", json_integer(code));
            if (hint)
                jx_set(doc, "hint", jx_str(hint));
            jx_set(doc, "results", arr);
            out_json(ctx, doc);
        } else {
            json_decref(arr);
            out_error(ctx, &first, hint);
        }
        env_close(&e);
        return code;
    }
}

/* EXAMLOPS_HPC_LOG_MAX_BYTES: the cap of a shown log, default 8 MiB. */
static int log_max_from_env(size_t *max, exa_error_t *err)
{
    const char *v = getenv("EXAMLOPS_HPC_LOG_MAX_BYTES");
    char *end;
    unsigned long long n;

    *max = SCHED_LOG_MAX_DEFAULT;
    if (!v || !*v)
        return 0;
    errno = 0;
    n = strtoull(v, &end, 10);
    if (errno || end == v || *end || n == 0 || v[0] == '-' ||
        n > ((unsigned long long)1 << 40))
        return exa_err(err, EXA_ECONFIG,
                       "EXAMLOPS_HPC_LOG_MAX_BYTES '%s' is not a positive "
                       "number of bytes", v);
    *max = (size_t)n;
    return 0;
}

int cmd_hpc_logs(struct exa_ctx *ctx, int argc, char **argv)
{
    const char *cluster;
    char **ids;
    size_t n;
    struct sched_env e;
    exa_error_t err = EXA_ERROR_INIT;
    struct strbuf log = STRBUF_INIT;
    struct job_rec r;
    int rc, want_err = 0, have_rec;
    size_t max;

    if ((rc = parse_ids(ctx, argc, argv, &cluster, &want_err, &ids, &n)) != 0)
        return rc;
    if (n != 1)
        return out_usage(ctx, "logs takes one JOBID");
    if (log_max_from_env(&max, &err) < 0)
        return out_error(ctx, &err, "set it to a positive number of bytes "
                                    "(default 8388608)");
    if ((rc = env_open(ctx, &e, cluster, 1)) != 0) {
        env_close(&e);
        return rc;
    }
    e.s->log_max_bytes = max;
    have_rec = store_job_get(e.st, e.cluster, ids[0], &r, NULL) == 0;
    if (want_err) {
        if (!have_rec || !r.remote_dir) {
            exa_err(&err, EXA_ENOTFOUND, "job '%s' has no recorded job directory "
                    "on cluster '%s'", ids[0], e.cluster);
            rc = -1;
        } else {
            char *path = xstrfmt("%s/%s.err", r.remote_dir, ids[0]);
            rc = sched_fetch_tail(e.s, path, max, &log, &err);
            free(path);
        }
    } else {
        rc = sched_logs(e.s, ids[0], have_rec ? r.remote_dir : NULL, &log, &err);
    }
    if (have_rec)
        job_rec_release(&r);
    if (rc == 0 && e.s->log_truncated)
        out_warn(ctx, "log of job '%s' truncated: showing its last %zu bytes "
                 "(EXAMLOPS_HPC_LOG_MAX_BYTES)", ids[0], max);
    if (rc < 0) {
        rc = out_error(ctx, &err, NULL);
    } else if (ctx->out == OUT_JSON) {
        json_t *o = json_object();
        jx_set(o, "job_id", jx_str(ids[0]));
        jx_set(o, "cluster", jx_str(e.cluster));
        jx_set(o, "log", jx_str(log.buf));
        jx_set(o, "truncated", json_boolean(e.s->log_truncated));
        out_json(ctx, o);
        rc = 0;
    } else {
        fwrite(log.buf, 1, log.len, stdout);
        rc = 0;
    }
    strbuf_release(&log);
    env_close(&e);
    return rc;
}
