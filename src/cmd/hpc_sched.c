/*
 * hpc_sched.c - `exa hpc submit|status|wait|cancel|logs`.
 *
 * Thin front end over the gate (libfleet/gate.h): it opens the cluster
 * (--cluster / EXAMLOPS_HPC_CLUSTER, the cluster the jobs table records an
 * id on, the environment target, or mock mode), refusing what is not
 * approved or whose host key changed; this file translates flags into the
 * neutral resource ask and renders. Status and wait ask the scheduler about
 * all given ids in one batch and write what it said through the gate's one
 * status writer (with accounting for ended jobs); wait shows state and
 * elapsed time on a terminal.
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
#include "libfleet/gate.h"
#include "libsched/jobid.h"
#include "libsched/resources.h"
#include "libsched/sched.h"
#include "libsched/tracker.h"
#include "libstore/jobs.h"
#include "libstore/store.h"
#include "libutil/json.h"
#include "libutil/shquote.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

struct sched_env {
    struct gate *g;
    struct sched *s;
    store_t *st;
    const char *cluster;
    char name[128];
};

/* --cluster, else EXAMLOPS_HPC_CLUSTER, else NULL. */
static const char *cluster_flag(const char *flag)
{
    const char *c = getenv("EXAMLOPS_HPC_CLUSTER");

    if (flag && *flag)
        return flag;
    return c && *c ? c : NULL;
}

/* Print a refused gate_open() with the hint that fits; the exit status. */
static int gate_refused(struct exa_ctx *ctx, exa_error_t *err, const char *name)
{
    char hint[256];
    if (err->code == EXA_ENOTAPPROVED && name && *name) {
        return out_error(ctx, err,
                         cmd_not_approved_hint(err, name, hint, sizeof(hint)));
    }
    if (err->code == EXA_ETRANSPORT && strstr(err->text, "was approved with"))
        return out_error(ctx, err,
                         "if the host was re-keyed on purpose, run "
                         "'exa hpc connect' again and have it "
                         "approved");
    if (err->code == EXA_ENOTFOUND)
        return out_error(ctx, err, "see 'exa hpc clusters'");
    return out_error(ctx, err, NULL);
}

/*
 * Open the cluster for purpose through the gate: cluster (a name, or NULL
 * for EXAMLOPS_HPC_CLUSTER / the environment target / mock); mock_label
 * non-NULL forces mock mode with that cluster label (a mock job's row).
 * st: an open store to use (borrowed) or NULL. 0 or an exit status.
 */
static int env_open(struct exa_ctx *ctx, struct sched_env *e,
                    const char *cluster, enum gate_purpose purpose,
                    const char *mock_label, store_t *st)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct gate_req req;

    memset(e, 0, sizeof(*e));
    memset(&req, 0, sizeof(req));
    req.cluster = mock_label ? mock_label : cluster;
    req.mock = mock_label != NULL;
    req.purpose = purpose;
    req.use_env = 1;
    req.st = st;
    req.cluster_out = e->name;
    req.cluster_out_len = sizeof(e->name);
    if (!(e->g = gate_open(&req, &err)))
        return gate_refused(ctx, &err, e->name);
    e->s = gate_sched(e->g);
    e->st = gate_store(e->g);
    e->cluster = gate_name(e->g);
    if (!e->s) {
        exa_err(&err, EXA_EUSAGE,
                "cluster '%s' has scheduler '%s': exa "
                "hpc %s needs slurm, flux or mock",
                e->cluster, gate_scheduler(e->g),
                purpose == GATE_READ ? "status" : "submit");
        return out_error(ctx, &err, NULL);
    }
    return 0;
}

static void env_close(struct sched_env *e)
{
    gate_close(e->g);
    e->g = NULL;
}

/*
 * Open the cluster the jobs ids belong to: --cluster/EXAMLOPS_HPC_CLUSTER
 * when given, else the cluster the jobs table records them on (one
 * cluster for all ids), else the environment target or mock. Checks each
 * id against the scheduler's grammar. 0 or an exit status.
 */
static int ids_open(struct exa_ctx *ctx, struct sched_env *e,
                    const char *cluster, enum gate_purpose purpose, char **ids,
                    size_t n)
{
    exa_error_t err = EXA_ERROR_INIT;
    char *found = NULL, *sched = NULL;
    const char *flag = cluster_flag(cluster);
    store_t *st;
    int rc = 0, mock;

    memset(e, 0, sizeof(*e));
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    for (size_t i = 0; i < n; i++) {
        char *c = NULL, *k = NULL;
        if (gate_job_cluster(st, ids[i], flag, &c, &k, &err) < 0) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        if (c && found && strcmp(c, found)) {
            rc = out_errorf(ctx, EXA_EUSAGE,
                            "ask about one cluster at a "
                            "time, or pass --cluster",
                            "jobs '%s' and '%s' "
                            "are on different clusters ('%s', '%s')",
                            ids[0], ids[i], found, c);
            free(c);
            free(k);
            goto out;
        }
        if (c && !found) {
            found = c;
            free(sched);
            sched = k;
        } else {
            free(c);
            free(k);
        }
    }
    mock = !flag && gate_is_mock_job(found, sched);
    store_close(st);
    st = NULL;
    if ((rc = env_open(ctx, e, found, purpose, mock ? found : NULL, NULL)))
        goto out;
    for (size_t i = 0; i < n; i++)
        if (sched_job_id_check(gate_scheduler(e->g), ids[i], &err) < 0) {
            /* a well-formed id of another scheduler that no cluster
             * records, asked in mock mode: unknown, not a usage error */
            if (gate_is_mock(e->g) && !found)
                rc = out_errorf(ctx, EXA_ENOTFOUND,
                                "pass --cluster C (see "
                                "'exa hpc clusters')",
                                "job '%s' is not "
                                "recorded on any cluster",
                                ids[i]);
            else
                rc = out_error(ctx, &err, NULL);
            goto out;
        }
out:
    if (st)
        store_close(st);
    free(found);
    free(sched);
    return rc;
}

static void format_elapsed(long long s, char *buf, size_t n)
{
    if (s < 0)
        xsnprintf(buf, n, "-");
    else if (s >= 86400)
        xsnprintf(buf, n, "%lld-%02lld:%02lld:%02lld", s / 86400, s / 3600 % 24,
                  s / 60 % 60, s % 60);
    else
        xsnprintf(buf, n, "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60,
                  s % 60);
}

static json_t *job_json(const struct sched_job *j, const char *cluster)
{
    json_t *o = json_object();

    jx_set(o, "job_id", jx_str(j->id));
    jx_set(o, "cluster", jx_str(cluster));
    jx_set(o, "state", jx_str(sched_state_name(j->state)));
    jx_set(o, "raw_state",
           j->raw_state[0] ? jx_str(j->raw_state) : json_null());
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
    static const char *const cols[] = {"JOBID", "STATE", "RAW_STATE", "EXIT",
                                       "START", "END",   "ELAPSED",   NULL};
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
            xsnprintf(ex, sizeof(ex), "%d:%d", jobs[i].exit_code,
                      jobs[i].signal);
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
    O_PARTITION = 256,
    O_QOS,
    O_ACCOUNT,
    O_CONSTRAINT,
    O_TIME,
    O_NODES,
    O_NTASKS,
    O_CPT,
    O_MEM,
    O_GPUS,
    O_JOBNAME,
    O_ARRAY,
    O_HOLD,
    O_CLUSTER,
    O_WAIT,
    O_ERR,
    O_DRYRUN,
};

static const struct option submit_opts[] = {
    {"partition", required_argument, NULL, O_PARTITION},
    {"qos", required_argument, NULL, O_QOS},
    {"account", required_argument, NULL, O_ACCOUNT},
    {"constraint", required_argument, NULL, O_CONSTRAINT},
    {"time", required_argument, NULL, O_TIME},
    {"nodes", required_argument, NULL, O_NODES},
    {"ntasks", required_argument, NULL, O_NTASKS},
    {"cpus-per-task", required_argument, NULL, O_CPT},
    {"mem", required_argument, NULL, O_MEM},
    {"gpus", required_argument, NULL, O_GPUS},
    {"job-name", required_argument, NULL, O_JOBNAME},
    {"array", required_argument, NULL, O_ARRAY},
    {"hold", no_argument, NULL, O_HOLD},
    {"cluster", required_argument, NULL, O_CLUSTER},
    {"wait", no_argument, NULL, O_WAIT},
    {"dry-run", no_argument, NULL, O_DRYRUN},
    {NULL, 0, NULL, 0},
};

static const char *const opt_key[] = {
    "partition", "qos",           "account", "constraint", "time",     "nodes",
    "ntasks",    "cpus_per_task", "mem",     "gpus",       "job_name", "array",
};

static int do_wait(struct exa_ctx *ctx, struct sched_env *e, char **ids,
                   size_t n);

/* --dry-run: the resolved cluster, the submit command (shell-quoted, as
 * one could paste it on the cluster), run.sh, and what the translation
 * dropped (the same warnings a submit prints); nothing was submitted. */
static int print_dry_run(struct exa_ctx *ctx, const struct sched_env *e,
                         const struct gate_submit_out *so)
{
    struct strbuf cmd = STRBUF_INIT;
    shquote_argv(&cmd, (const char *const *)so->command.v);
    for (size_t i = 0; i < so->sr.warnings.nr; i++)
        out_warn(ctx, "%s", so->sr.warnings.v[i]);
    if (ctx->out == OUT_JSON) {
        json_t *o = json_object(), *a = json_array(), *w = json_array();
        for (size_t i = 0; i < so->command.nr; i++)
            json_array_append_new(a, jx_str(so->command.v[i]));
        for (size_t i = 0; i < so->sr.warnings.nr; i++)
            json_array_append_new(w, jx_str(so->sr.warnings.v[i]));
        jx_set(o, "warnings", w);
        jx_set(o, "dry_run", json_true());
        jx_set(o, "cluster", jx_str(e->cluster));
        jx_set(o, "scheduler", jx_str(sched_name(e->s)));
        jx_set(o, "remote_dir", jx_str(so->remote_dir));
        jx_set(o, "command", a);
        jx_set(o, "command_line", jx_str(cmd.buf));
        jx_set(o, "script", jx_str(so->script));
        out_json(ctx, o);
    } else {
        printf("Dry run: nothing was copied or submitted.\n");
        printf("cluster:   %s (%s)\n", e->cluster, sched_name(e->s));
        printf("directory: %s\n", so->remote_dir);
        printf("command:   %s\n", cmd.buf);
        printf("run.sh:\n%s", so->script ? so->script : "");
    }
    strbuf_release(&cmd);
    return 0;
}

int cmd_hpc_submit(struct exa_ctx *ctx, int argc, char **argv)
{
    struct sched_resources res = SCHED_RESOURCES_INIT;
    struct gate_submit_out so;
    struct sched_submit_result *sr;
    struct sched_env e;
    exa_error_t err = EXA_ERROR_INIT;
    const char *cluster = NULL, *script, *rdir, *run_id;
    int c, wait = 0, rc, dry = 0;

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
        } else if (c == O_DRYRUN) {
            dry = 1;
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
    if ((rc = env_open(ctx, &e, cluster_flag(cluster), GATE_SCHEDULE, NULL,
                       NULL)) != 0) {
        sched_resources_release(&res);
        env_close(&e);
        return rc;
    }
    {
        struct gate_submit_req req = {
            script, (const char *const *)argv + optind, &res, "batch", dry};
        if (gate_submit(e.g, &req, &so, &err) < 0) {
            rc = gate_refused(ctx, &err, e.cluster);
            goto done;
        }
    }
    if (dry) {
        rc = print_dry_run(ctx, &e, &so);
        goto done;
    }
    sr = &so.sr;
    rdir = so.remote_dir;
    run_id = so.run_id;
    for (size_t i = 0; i < sr->warnings.nr; i++)
        out_warn(ctx, "%s", sr->warnings.v[i]);
    if (!wait) {
        if (ctx->out == OUT_JSON) {
            json_t *o = json_object(), *ids = json_array(), *w = json_array();
            for (size_t i = 0; i < sr->ids.nr; i++)
                json_array_append_new(ids, jx_str(sr->ids.v[i]));
            for (size_t i = 0; i < sr->warnings.nr; i++)
                json_array_append_new(w, jx_str(sr->warnings.v[i]));
            jx_set(o, "job_id", jx_str(sr->job_id));
            jx_set(o, "job_ids", ids);
            jx_set(o, "cluster", jx_str(e.cluster));
            jx_set(o, "scheduler", jx_str(sched_name(e.s)));
            jx_set(o, "run_id", jx_str(run_id));
            jx_set(o, "remote_dir", jx_str(rdir));
            jx_set(o, "reused", json_boolean(sr->reused));
            jx_set(o, "warnings", w);
            out_json(ctx, o);
        } else {
            out_info(ctx, "Submitted job %s on cluster '%s' (%s, run %s)",
                     sr->job_id, e.cluster, sched_name(e.s), run_id);
            out_detail(ctx, "job directory: %s", rdir);
        }
        rc = 0;
    } else {
        char *ids[1] = {sr->job_id};
        out_info(ctx, "Submitted job %s on cluster '%s' (%s, run %s)",
                 sr->job_id, e.cluster, sched_name(e.s), run_id);
        rc = do_wait(ctx, &e, ids, 1);
    }
done:
    gate_submit_out_release(&so);
    sched_resources_release(&res);
    env_close(&e);
    return rc;
}

/* ---- status, wait, cancel, logs ---- */

static const struct option id_opts[] = {
    {"cluster", required_argument, NULL, O_CLUSTER},
    {"err", no_argument, NULL, O_ERR},
    {NULL, 0, NULL, 0},
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
    for (size_t i = 0; i < *n; i++) {
        exa_error_t err = EXA_ERROR_INIT;
        /* any scheduler's grammar first: nothing that could be an option
         * or a list reaches the job lookup (the cluster's own grammar is
         * checked once it is known) */
        if (sched_job_id_check(NULL, (*ids)[i], &err) < 0)
            return out_usage(ctx, "%s", err.text);
    }
    return 0;
}

/* 1 (err set to the failure) when a query of the last batch failed and
 * left a job UNKNOWN: its state was not observed. */
static int unobserved(const struct sched *s, const struct sched_job *jobs,
                      size_t n, exa_error_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (jobs[i].state == SCHED_UNKNOWN)
            return sched_status_failed(s, err);
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
    if ((rc = ids_open(ctx, &e, cluster, GATE_READ, ids, n)) != 0) {
        env_close(&e);
        return rc;
    }
    set_since(&e, ids, n);
    jobs = xcalloc(n, sizeof(*jobs));
    if (sched_status_batch(e.s, (const char *const *)ids, n, jobs, &err) < 0) {
        gate_check_error(e.g, &err);
        rc = out_error(ctx, &err, NULL);
    } else if (unobserved(e.s, jobs, n, &err)) {
        /* a failed query is not "the scheduler does not know it" */
        rc = out_error(ctx, &err, NULL);
    } else {
        size_t unknown = 0, first = 0;
        /* one sacct per 200 ended jobs for their accounting */
        gate_job_record_batch(e.g, jobs, n, 2, NULL);
        for (size_t i = 0; i < n; i++)
            if (jobs[i].state == SCHED_UNKNOWN && !unknown++)
                first = i;
        print_jobs(ctx, jobs, n, e.cluster);
        rc = 0;
        /* The scheduler answered and has no record of a job: that is an
         * answer ("not known"), and a failure of the command, as for
         * cancel. The list above still shows every id. */
        if (unknown)
            rc = out_errorf(ctx, EXA_ENOTFOUND, NULL,
                            "job '%s'%s not found on cluster '%s'",
                            jobs[first].id, unknown > 1 ? " (and others)" : "",
                            e.cluster);
    }
    free(jobs);
    env_close(&e);
    return rc;
}

struct progress {
    struct exa_ctx *ctx;
    int tty;
    const char *cluster;
};

/* An outage is shown on stderr in every output mode (stdout stays the
 * one JSON document); -q silences it. */
static void on_outage(void *arg, const struct tracker_outage *ev)
{
    struct progress *p = arg;
    char since[16];
    time_t t = (time_t)ev->since;
    struct tm tm;

    if (p->ctx->quiet)
        return;
    gmtime_r(&t, &tm);
    strftime(since, sizeof(since), "%H:%M:%S", &tm);
    if (ev->active)
        fprintf(stderr,
                "%s%s unreachable since %s, retrying in %g s (%d failed "
                "poll%s: %s)\n",
                p->tty ? "\r\033[K" : "", p->cluster, since, ev->retry_in_s,
                ev->failures, ev->failures == 1 ? "" : "s", ev->error->text);
    else
        fprintf(stderr,
                "%s%s reachable again after %.0f s (unreachable since %s, "
                "%d failed poll%s)\n",
                p->tty ? "\r\033[K" : "", p->cluster, ev->lasted_s, since,
                ev->failures, ev->failures == 1 ? "" : "s");
    fflush(stderr);
}

/* The exact command that resumes a wait: "exa hpc wait ID... --cluster C". */
static void resume_hint(char *buf, size_t len, char **ids, size_t n,
                        const char *cluster)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "exa hpc wait");
    for (size_t i = 0; i < n; i++)
        strbuf_addf(&sb, " %s", ids[i]);
    strbuf_addf(&sb, " --cluster %s", cluster);
    xsnprintf(buf, len, "%s", sb.buf);
    strbuf_release(&sb);
}

static void on_progress(void *arg, const struct sched_job *jobs, size_t n,
                        double elapsed, int poll)
{
    struct progress *p = arg;
    char el[32];

    if (p->ctx->out == OUT_JSON || p->ctx->quiet)
        return;
    format_elapsed((long long)elapsed, el, sizeof(el));
    if (n == 1) {
        fprintf(stderr, "%sjob %s %s%s%s, waited %s%s",
                p->tty ? "\r\033[K" : "", jobs[0].id,
                sched_state_name(jobs[0].state), jobs[0].reason[0] ? " " : "",
                jobs[0].reason, el, p->tty ? "" : "\n");
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
    struct progress p = {ctx, isatty(2), e->cluster};
    char hint[512];
    struct sched_job *jobs = xcalloc(n, sizeof(*jobs));
    exa_error_t err = EXA_ERROR_INIT;
    int rc, polls = 0, all_ok = 1;

    if (tracker_opts_from_env(&o, &err) < 0) {
        free(jobs);
        return out_error(ctx, &err, NULL);
    }
    o.progress = on_progress;
    o.outage = on_outage;
    o.arg = &p;
    set_since(e, ids, n);
    rc =
        tracker_wait(e->s, (const char *const *)ids, n, &o, jobs, &polls, &err);
    if (p.tty && ctx->out != OUT_JSON && !ctx->quiet)
        fputc('\n', stderr);
    gate_job_record_batch(e->g, jobs, n, 10, NULL);
    for (size_t i = 0; i < n; i++)
        if (jobs[i].state != SCHED_COMPLETED)
            all_ok = 0;
    if (rc < 0) {
        int ec;
        /* the wait's own deadline is a failure of the wait (1), not a
         * command past its cap (4) */
        if (err.code == EXA_ETIMEOUT)
            err.code = EXA_EFAIL;
        resume_hint(hint, sizeof(hint), ids, n, e->cluster);
        ec = out_error(ctx, &err, hint);
        free(jobs);
        return ec;
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
    if ((rc = ids_open(ctx, &e, cluster, GATE_READ, ids, n)) != 0) {
        env_close(&e);
        return rc;
    }
    /* Waiting is for jobs exa submitted: an id platform.db never recorded
     * on this cluster is an error now, not after the scheduler's polls
     * (`exa hpc status` asks the scheduler about any id). */
    for (size_t i = 0; i < n; i++) {
        struct job_rec r;
        char hint[256];
        if (store_job_get(e.st, e.cluster, ids[i], &r, NULL) == 0) {
            job_rec_release(&r);
            continue;
        }
        xsnprintf(hint, sizeof(hint),
                  "'exa hpc status %s --cluster %s' asks the scheduler; "
                  "'exa hpc jobs --cluster %s' lists the recorded jobs",
                  ids[i], e.cluster, e.cluster);
        rc = out_errorf(ctx, EXA_ENOTFOUND, hint,
                        "job '%s' is not recorded on cluster '%s': exa "
                        "waits only for jobs it submitted",
                        ids[i], e.cluster);
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
    if ((rc = ids_open(ctx, &e, cluster, GATE_SCHEDULE, ids, n)) != 0) {
        json_decref(arr);
        env_close(&e);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        jx_set(o, "job_id", jx_str(ids[i]));
        if (gate_cancel(e.g, ids[i], &err) < 0) {
            if (!failed++)
                first = err;
            jx_set(o, "cancelled", json_false());
            jx_set(o, "error", jx_str(err.text));
            if (ctx->out != OUT_JSON && n > 1)
                out_warn(ctx, "%s", err.text);
        } else {
            jx_set(o, "cancelled", json_true());
            out_info(ctx, "Cancelled job %s on cluster '%s'", ids[i],
                     e.cluster);
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
                       "number of bytes",
                       v);
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
        return out_error(ctx, &err,
                         "set it to a positive number of bytes "
                         "(default 8388608)");
    if ((rc = ids_open(ctx, &e, cluster, GATE_READ, ids, n)) != 0) {
        env_close(&e);
        return rc;
    }
    e.s->log_max_bytes = max;
    have_rec = store_job_get(e.st, e.cluster, ids[0], &r, NULL) == 0;
    if (want_err) {
        if (!have_rec || !r.remote_dir) {
            exa_err(&err, EXA_ENOTFOUND,
                    "job '%s' has no recorded job directory on cluster "
                    "'%s', so no separate stderr file exa knows of; "
                    "'exa hpc logs %s' reads its output file, where sbatch "
                    "and flux batch put stderr too unless --error was given",
                    ids[0], e.cluster, ids[0]);
            rc = -1;
        } else {
            char *path = xstrfmt("%s/%s.err", r.remote_dir, ids[0]);
            rc = sched_fetch_tail(e.s, path, max, &log, &err);
            free(path);
        }
    } else {
        rc =
            sched_logs(e.s, ids[0], have_rec ? r.remote_dir : NULL, &log, &err);
    }
    if (have_rec)
        job_rec_release(&r);
    if (rc == 0 && e.s->log_truncated)
        out_warn(ctx,
                 "log of job '%s' truncated: showing its last %zu bytes "
                 "(EXAMLOPS_HPC_LOG_MAX_BYTES)",
                 ids[0], max);
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
