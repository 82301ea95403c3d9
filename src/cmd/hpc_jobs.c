/*
 * hpc_jobs.c - `exa hpc jobs`: recorded jobs from platform.db. Unlike the
 * reference's hpc_jobs table, every row carries its cluster, and the
 * run/GPU figures are what was measured, not placeholders. --refresh first
 * moves every cluster's stale non-terminal rows forward through the gate
 * (one batched status query per cluster, accounting for ended jobs).
 */
#include "cmd/hpc_jobs.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfleet/gate.h"
#include "libfleet/governance.h"
#include "libstore/jobs.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strvec.h"
#include "libview/view.h"

static void fmt_real(char *buf, size_t n, double v, int prec)
{
    if (isfinite(v))
        snprintf(buf, n, "%.*f", prec, v);
    else
        snprintf(buf, n, "-");
}

/*
 * gate_reconcile() for every cluster with open rows; a cluster that
 * cannot be opened or asked is warned about. Returns 0, or the exit
 * status of the first failure.
 */
static int refresh(struct exa_ctx *ctx, store_t *st, const char *only)
{
    struct strvec cl = STRVEC_INIT, sc = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    int rc = 0;

    if (store_job_open_clusters(st, &cl, &sc, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    for (size_t i = 0; i < cl.nr; i++) {
        struct gate_req req = {0};
        struct gate *g;
        size_t moved = 0;
        exa_error_t e = EXA_ERROR_INIT;
        if ((only && strcmp(only, cl.v[i])) ||
            (i && !strcmp(cl.v[i], cl.v[i - 1])))
            continue;
        req.cluster = cl.v[i];
        req.purpose = GATE_READ;
        req.mock = gate_is_mock_job(cl.v[i], sc.v[i]);
        req.st = st;
        if (!(g = gate_open(&req, &e)) || gate_reconcile(g, &moved, &e) < 0) {
            out_warn(ctx, "jobs of cluster '%s' not refreshed: %s", cl.v[i],
                     e.text);
            if (!rc)
                rc = exa_errc_exit(e.code ? e.code : EXA_EFAIL);
        } else {
            out_detail(ctx, "cluster '%s': %zu job(s) ended", cl.v[i], moved);
        }
        gate_close(g);
    }
out:
    strvec_clear(&cl);
    strvec_clear(&sc);
    return rc;
}

/* 1 when name is a cluster exa knows (clusters.yaml or platform.db, or
 * the mock labels "default"/"local"), else 0. */
static int cluster_known(store_t *st, const char *name)
{
    struct fleet f = {NULL, 0};
    char *regpath;
    int found = 0;
    if (!strcmp(name, "default") || !strcmp(name, "local"))
        return 1;
    if (!(regpath = registry_default_path(NULL)))
        return 0;
    if (fleet_load(st, regpath, &f, NULL) == 0)
        found = fleet_find(&f, name) != NULL;
    fleet_release(&f);
    free(regpath);
    return found;
}

/* 1 when platform.db records a job on cluster (one that was removed
 * from clusters.yaml keeps its history). */
static int has_jobs(store_t *st, const char *cluster)
{
    struct job_filter g = {0};
    struct job_rec *list = NULL;
    size_t n = 0;
    g.cluster = cluster;
    g.limit = 1;
    if (store_job_list(st, &g, &list, &n, NULL) < 0)
        return 1; /* let the listing itself report the error */
    job_rec_free_list(list, n);
    return n > 0;
}

int cmd_hpc_jobs(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"cluster", required_argument, NULL, 'c'},
        {"state", required_argument, NULL, 's'},
        {"limit", required_argument, NULL, 'n'},
        {"refresh", no_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    static const char *const cols[] = {
        "Cluster", "Job",   "Scheduler", "Model", "State", "Exit",
        "Run (s)", "GPU-h", "Start",     "End",   NULL,
    };
    struct job_filter f = {0};
    struct job_rec *list = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    size_t n = 0;
    store_t *st;
    int c, rc, do_refresh = 0, refresh_rc = 0;

    f.limit = 20;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "m:c:s:n:", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            f.model = optarg;
            break;
        case 'c':
            f.cluster = optarg;
            break;
        case 's':
            f.state = optarg;
            break;
        case 'n':
            if ((rc = cmd_parse_uint(ctx, "--limit", optarg, &f.limit)))
                return rc;
            break;
        case 'r':
            do_refresh = 1;
            break;
        default:
            return out_usage(ctx, "option '%s' is unknown or needs a value",
                             argv[optind - 1]);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    if (do_refresh)
        refresh_rc = refresh(ctx, st, f.cluster);
    if (f.cluster && !cluster_known(st, f.cluster) &&
        !has_jobs(st, f.cluster)) {
        /* as sacct -M does: a name that is no cluster is an error, not
         * an empty list */
        store_close(st);
        return out_errorf(ctx, EXA_ENOTFOUND, "see 'exa hpc clusters'",
                          "unknown cluster '%s'", f.cluster);
    }
    if (ctx->out == OUT_JSON) {
        struct view_ctx vc = {st, NULL, 0};
        struct view_job_filter vf = {f.cluster, f.model, f.state,
                                     NULL,      f.limit, 0};
        struct jsonw w;
        /* streamed: 1,000 jobs through json_t and jansson's dump were
         * four fifths of the command (bench/cli-latency.sh) */
        jsonw_init(&w, stdout, 1);
        rc = view_jobs_write(&vc, &vf, &w, &err);
        store_close(st);
        if (rc < 0) {
            jsonw_discard(&w);
            return out_error(ctx, &err, NULL);
        }
        out_jsonw_finish(ctx, &w);
        return refresh_rc;
    }
    rc = store_job_list(st, &f, &list, &n, &err);
    store_close(st);
    if (rc < 0)
        return out_error(ctx, &err, NULL);
    if (!n) {
        if (f.cluster || f.model || f.state)
            out_info(ctx, "No HPC jobs match%s%s%s%s%s%s.",
                     f.cluster ? " cluster " : "", f.cluster ? f.cluster : "",
                     f.model ? " model " : "", f.model ? f.model : "",
                     f.state ? " state " : "", f.state ? f.state : "");
        else
            out_info(ctx, "No HPC jobs tracked yet.");
    } else {
        struct out_table *t = out_table_create(cols);
        for (size_t i = 0; i < n; i++) {
            const struct job_rec *j = &list[i];
            char ex[32], run[32], gpuh[32];
            const char *row[10];
            if (j->exit_code == JOB_NULL_INT)
                snprintf(ex, sizeof(ex), "-");
            else
                snprintf(ex, sizeof(ex), "%lld", j->exit_code);
            fmt_real(run, sizeof(run), j->run_seconds, 2);
            fmt_real(gpuh, sizeof(gpuh), j->gpu_hours, 2);
            row[0] = j->cluster;
            row[1] = j->job_id;
            row[2] = j->scheduler;
            row[3] = j->model;
            row[4] = j->state;
            row[5] = ex;
            row[6] = run;
            row[7] = gpuh;
            row[8] = j->start_time;
            row[9] = j->end_time;
            out_table_row(t, row);
        }
        out_table_print(ctx, t);
    }
    job_rec_free_list(list, n);
    return refresh_rc;
}
