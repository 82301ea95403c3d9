/*
 * hpc_place.c - the placement commands of `exa hpc` (shared/REFERENCE.md
 * §2.1): `place`, `capacity`, `preflight` and `queue`. Placement only sees
 * ACTIVE clusters, refreshes stale snapshots through each cluster's own
 * transport, never prints -Infinity and exits non-zero when nothing was
 * chosen; preflight and queue refuse a cluster that is not ACTIVE. Scoring,
 * capacity and the preflight checks live in libfleet / libdiscovery so the
 * server and `pipeline run --cluster auto` decide alike; this file parses
 * flags and prints.
 */
#include "cmd/hpc_fleet.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/hpc_fleet_int.h"
#include "libdiscovery/preflight.h"
#include "libdiscovery/probe.h"
#include "libfleet/capacity.h"
#include "libfleet/connect.h"
#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libsched/parse_flux.h"
#include "libsched/parse_slurm.h"
#include "libstore/nodes.h"
#include "libtransport/transport.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* ---- place ---- */

static void fmt_idle(char *buf, size_t n, int idle, int total)
{
    snprintf(buf, n, "%d/%d", idle, total);
}

static void print_explain(struct exa_ctx *ctx, const struct place_result *r)
{
    const struct place_candidate *ch =
        r->chosen >= 0 ? &r->cands[r->chosen] : NULL;
    printf("Scoring provider: %s  |  ask: gpus=%d cpus=%d nodes=%d  |  "
           "chosen: %s\n",
           r->scorer->name, r->ask.gpus, r->ask.cpus, r->ask.nodes,
           ch ? ch->name : "none");
    for (size_t i = 0; i < r->n; i++) {
        const struct place_candidate *c = &r->cands[i];
        printf("  #%zu %s: ", i + 1, c->name);
        if (c->fits && c->objective_available)
            printf("score %g (margin to best %g)", c->score, c->margin_to_best);
        else if (c->fits)
            printf("fits, but %s not declared - ranked after those that "
                   "declare it",
                   r->scorer->objective);
        else
            printf("cannot fit the ask - not scored");
        printf("; idle GPUs %d/%d, idle nodes %d/%d; %s\n", c->cap.idle_gpus,
               c->cap.total_gpus, c->cap.idle_nodes, c->cap.total_nodes,
               c->why);
    }
    if (r->objective_unavailable)
        printf("Objectives unavailable: %s\n", r->scorer->objective);
}

static int refresh_stale(struct exa_ctx *ctx, store_t *st,
                         const struct fleet *f,
                         const struct place_cluster *cands, size_t n,
                         int max_age_s)
{
    struct place_ask none = {0, 0, 1};
    time_t now = time(NULL);
    int refreshed = 0;
    for (size_t i = 0; i < n; i++) {
        struct place_capacity cap;
        const struct fleet_cluster *c = fleet_find(f, cands[i].name);
        struct transport *t;
        struct inventory inv;
        exa_error_t err = EXA_ERROR_INIT;
        place_capacity_of(cands[i].nodes, cands[i].nnodes, &none, now, &cap);
        if (!c || !probe_find(c->def.scheduler) ||
            (cands[i].nnodes && cap.age_s >= 0 && cap.age_s <= max_age_s))
            continue;
        memset(&inv, 0, sizeof(inv));
        t = fleet_cluster_transport(c, &err);
        if (t)
            t->timeout_s = 15;
        if (!t || probe_inventory(t, c->def.scheduler, &inv, &err) < 0 ||
            save_snapshot(st, c->def.name, &inv, &err) < 0)
            out_warn(ctx,
                     "snapshot of '%s' is stale and was not refreshed: "
                     "%s",
                     c->def.name, err.text);
        else
            refreshed++;
        inventory_release(&inv);
        transport_close(t);
    }
    return refreshed;
}

int cmd_hpc_place(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"gpus", required_argument, NULL, 'g'},
        {"cpus", required_argument, NULL, 'C'},
        {"nodes", required_argument, NULL, 'N'},
        {"placement-provider", required_argument, NULL, 'P'},
        {"explain", no_argument, NULL, 'E'},
        {"no-refresh", no_argument, NULL, 'R'},
        {NULL, 0, NULL, 0}};
    static const char *const cols[] = {"Cluster",   "Scheduler",  "Fits",
                                       "Idle GPUs", "Idle nodes", "Score",
                                       NULL};
    struct place_ask ask = {0, 0, 1};
    const char *provider = getenv("EXAMLOPS_PLACEMENT_PROVIDER");
    const struct place_scorer *scorer;
    int explain = 0, refresh = 1, max_age = place_max_age_from_env(), rc, o;
    store_t *st;
    char *regpath;
    struct fleet f = {NULL, 0};
    struct place_cluster *cands = NULL;
    size_t ncands = 0, nnodes = 0;
    struct node_row *nodes = NULL;
    struct place_result res;
    exa_error_t err = EXA_ERROR_INIT;

    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, "g:N:", longopts)) != -1) {
        switch (o) {
        case 'g':
            if ((rc = parse_int_opt(ctx, "--gpus", optarg, &ask.gpus)))
                return rc;
            break;
        case 'C':
            if ((rc = parse_int_opt(ctx, "--cpus", optarg, &ask.cpus)))
                return rc;
            break;
        case 'N':
            if ((rc = parse_int_opt(ctx, "--nodes", optarg, &ask.nodes)))
                return rc;
            if (ask.nodes < 1)
                return out_usage(ctx, "--nodes must be at least 1");
            break;
        case 'P':
            provider = optarg;
            break;
        case 'E':
            explain = 1;
            break;
        case 'R':
            refresh = 0;
            break;
        default:
            return bad_option(ctx, argc, argv);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    scorer = place_scorer_find(provider);
    if (!scorer) {
        struct strbuf names = STRBUF_INIT;
        const struct place_scorer *const *all = place_scorers();
        for (size_t i = 0; all[i]; i++)
            strbuf_addf(&names, "%s%s", i ? ", " : "", all[i]->name);
        rc = out_usage(ctx, "unknown placement provider '%s' (known: %s)",
                       provider, names.buf);
        strbuf_release(&names);
        return rc;
    }
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if (fleet_load(st, regpath, &f, &err) < 0 ||
        place_load_candidates(st, &f, &cands, &ncands, &nodes, &nnodes, &err) <
            0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    /* Stale or missing snapshots are refreshed through the cluster's own
     * transport; what cannot be refreshed stays flagged. */
    if (refresh && max_age > 0 &&
        refresh_stale(ctx, st, &f, cands, ncands, max_age) > 0) {
        free(cands);
        node_rows_free(nodes, nnodes);
        cands = NULL;
        nodes = NULL;
        ncands = nnodes = 0;
        if (place_load_candidates(st, &f, &cands, &ncands, &nodes, &nnodes,
                                  &err) < 0) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
    }
    if (place_choose(cands, ncands, &ask, scorer, max_age, time(NULL), &res,
                     &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    /* Unlike the reference (always 0), a placement that chose nothing
     * fails, so scripts and CI gates can rely on the exit status: 6 when
     * no cluster is ACTIVE (nothing approved), 1 when none fits. */
    rc = res.chosen >= 0 ? 0 : ncands == 0 ? 6 : 1;
    if (ctx->out == OUT_JSON) {
        json_t *doc = place_result_json(&res, explain);
        if (rc) {
            jx_set(doc, "error", jx_str(res.reason));
            jx_set(doc, "exit_code", json_integer(rc));
            jx_set(doc, "hint",
                   jx_str(rc == 6 ? "approve a cluster: exa hpc approve NAME"
                                  : "ask for fewer GPUs or nodes, or see "
                                    "'exa hpc place --explain'"));
        }
        out_json(ctx, doc);
    } else {
        struct out_table *t = out_table_create(cols);
        if (res.chosen >= 0)
            printf("\u2713 %s\n", res.reason);
        else
            out_warn(ctx, "%s", res.reason);
        for (size_t i = 0; i < res.n; i++) {
            const struct place_candidate *c = &res.cands[i];
            char ig[32], in[32], sc[64];
            fmt_idle(ig, sizeof(ig), c->cap.idle_gpus, c->cap.total_gpus);
            fmt_idle(in, sizeof(in), c->cap.idle_nodes, c->cap.total_nodes);
            if (c->fits && c->objective_available)
                snprintf(sc, sizeof(sc), "%g", c->score);
            else
                snprintf(sc, sizeof(sc), "\u2014");
            const char *v[] = {c->name, c->scheduler, c->fits ? "yes" : "no",
                               ig,      in,           sc};
            out_table_row(t, v);
        }
        if (res.n) {
            out_info(ctx, "Placement candidates");
            out_table_print(ctx, t);
        } else {
            out_table_destroy(t);
        }
        if (explain)
            print_explain(ctx, &res);
    }
    place_result_release(&res);
out:
    free(cands);
    node_rows_free(nodes, nnodes);
    fleet_release(&f);
    close_fleet(st, regpath);
    return rc;
}

/* ---- capacity ---- */

int cmd_hpc_capacity(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {
        "Cluster", "Scheduler", "GPUs (idle/total)", "Util %", "GPU-hours",
        "Cost $",  NULL};
    store_t *st;
    char *regpath;
    struct capacity_row *rows = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    int rc;
    if (argc > 1)
        return out_usage(ctx, "unexpected argument '%s'", argv[1]);
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if (capacity_report(st, regpath, &rows, &n, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (ctx->out == OUT_JSON) {
        out_json(ctx, capacity_json(rows, n));
    } else if (!n) {
        out_info(ctx, "No ACTIVE clusters. Approve one with 'exa hpc approve "
                      "<name>'.");
    } else {
        struct out_table *t = out_table_create(cols);
        out_info(ctx, "HPC capacity");
        for (size_t i = 0; i < n; i++) {
            char g[48], u[32], h[32], c[32];
            snprintf(g, sizeof(g), "%d/%d", rows[i].idle_gpus,
                     rows[i].total_gpus);
            snprintf(u, sizeof(u), "%.1f", rows[i].utilization_pct);
            snprintf(h, sizeof(h), "%.2f", rows[i].gpu_hours_used);
            snprintf(c, sizeof(c), "%.2f", rows[i].cost_usd);
            const char *v[] = {rows[i].name, rows[i].scheduler, g, u, h, c};
            out_table_row(t, v);
        }
        out_table_print(ctx, t);
        out_detail(ctx, "Carbon/energy accounting: exa finops carbon");
    }
out:
    capacity_rows_free(rows, n);
    close_fleet(st, regpath);
    return rc;
}

/* ---- preflight ---- */

/* Default remote work directory: EXAMLOPS_HPC_REMOTE_WORKDIR, else (local)
 * EXAMLOPS_HPC_WORKDIR or ${XDG_DATA_HOME:-~/.local/share}/examlops/runs,
 * else (ssh) "exa-runs" under the remote home. Caller frees. */
static char *default_workdir(int local)
{
    const char *r = getenv("EXAMLOPS_HPC_REMOTE_WORKDIR");
    const char *w = getenv("EXAMLOPS_HPC_WORKDIR");
    const char *x = getenv("XDG_DATA_HOME"), *h = getenv("HOME");
    if (r && *r)
        return xstrdup(r);
    if (!local)
        return xstrdup("exa-runs");
    if (w && *w)
        return xstrdup(w);
    if (x && *x)
        return xstrfmt("%s/examlops/runs", x);
    return xstrfmt("%s/.local/share/examlops/runs", h && *h ? h : "/tmp");
}

int cmd_hpc_preflight(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"gpus", required_argument, NULL, 'g'},
        {"nodes", required_argument, NULL, 'N'},
        {"partition", required_argument, NULL, 'P'},
        {"account", required_argument, NULL, 'A'},
        {"qos", required_argument, NULL, 'Q'},
        {NULL, 0, NULL, 0}};
    struct preflight_ask ask = {0, 1, NULL, NULL, NULL, NULL};
    struct preflight_target tg = {0};
    struct preflight_report rep = {0};
    struct fleet f = {NULL, 0};
    const struct fleet_cluster *c;
    struct transport *t = NULL;
    store_t *st;
    char *regpath, *kh = NULL, *pinned = NULL, *workdir = NULL;
    const char *name, *rexa = getenv("EXAMLOPS_HPC_REMOTE_EXA");
    exa_error_t err = EXA_ERROR_INIT;
    int rc, o;

    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, "g:N:", longopts)) != -1) {
        switch (o) {
        case 'g':
            if ((rc = parse_int_opt(ctx, "--gpus", optarg, &ask.gpus)))
                return rc;
            break;
        case 'N':
            if ((rc = parse_int_opt(ctx, "--nodes", optarg, &ask.nodes)))
                return rc;
            if (ask.nodes < 1)
                return out_usage(ctx, "--nodes must be at least 1");
            break;
        case 'P':
            ask.partition = optarg;
            break;
        case 'A':
            ask.account = optarg;
            break;
        case 'Q':
            ask.qos = optarg;
            break;
        default:
            return bad_option(ctx, argc, argv);
        }
    }
    if (optind + 1 != argc)
        return out_usage(ctx, "expected one cluster NAME");
    name = argv[optind];
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if (fleet_load(st, regpath, &f, &err) < 0 ||
        fleet_require_active(&f, name, &err) < 0) {
        rc = out_error(ctx, &err,
                       err.code == EXA_ENOTAPPROVED
                           ? "a sysadmin runs 'exa hpc approve'"
                           : NULL);
        goto out;
    }
    c = fleet_find(&f, name);
    if (!(t = fleet_cluster_transport(c, &err))) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    tg.cluster = name;
    tg.scheduler = c->def.scheduler;
    tg.ssh = strcmp(t->ops->kind, "local") != 0;
    if (tg.ssh) {
        struct strbuf text = STRBUF_INIT;
        FILE *fp;
        char buf[4096];
        size_t n;
        kh = fleet_known_hosts_path(name);
        if ((fp = fopen(kh, "re"))) {
            while ((n = fread(buf, 1, sizeof(buf), fp)) > 0 &&
                   text.len < (1u << 20))
                strbuf_add(&text, buf, n);
            fclose(fp);
            pinned = fleet_host_key_fingerprint(text.buf, NULL);
        }
        strbuf_release(&text);
    }
    tg.known_hosts = kh;
    tg.pinned_fingerprint = pinned;
    tg.host_key_fingerprint = c->row.host_key_fingerprint;
    workdir = default_workdir(!tg.ssh);
    tg.workdir = workdir;
    tg.remote_exa = rexa && *rexa ? rexa : "exa";
    ask.user = c->def.ssh_user;
    preflight_run(t, &tg, &ask, &rep);
    if (ctx->out == OUT_JSON) {
        out_json(ctx, preflight_report_json(name, &rep));
    } else {
        for (size_t i = 0; i < rep.n; i++)
            printf("  %s %s: %s\n", rep.checks[i].ok ? "\u2713" : "\u2717",
                   rep.checks[i].check, rep.checks[i].detail);
        if (rep.ok)
            printf("\u2713 Preflight passed for '%s'\n", name);
        else
            fprintf(stderr, "exa: error: Preflight FAILED for '%s'\n", name);
    }
    rc = rep.ok ? 0 : 1;
out:
    preflight_report_release(&rep);
    transport_close(t);
    free(kh);
    free(pinned);
    free(workdir);
    fleet_release(&f);
    close_fleet(st, regpath);
    return rc;
}

/* ---- queue ---- */

int cmd_hpc_queue(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"cluster", required_argument, NULL, 'c'}, {NULL, 0, NULL, 0}};
    static const char *const cols[] = {"Job",   "Name",  "User",
                                       "State", "Nodes", NULL};
    const char *name = getenv("EXAMLOPS_HPC_CLUSTER");
    struct fleet f = {NULL, 0};
    const struct fleet_cluster *c;
    struct transport *t = NULL;
    struct transport_result r = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    char *regpath;
    json_t *jobs = json_array();
    int rc, o;

    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, "c:", longopts)) != -1) {
        if (o == 'c')
            name = optarg;
        else {
            json_decref(jobs);
            return bad_option(ctx, argc, argv);
        }
    }
    if (optind < argc) {
        json_decref(jobs);
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    }
    if (!name || !*name) {
        json_decref(jobs);
        return out_errorf(ctx, EXA_EFAIL,
                          "exa hpc queue --cluster <name>  (or set "
                          "EXAMLOPS_HPC_CLUSTER)",
                          "No cluster given");
    }
    if ((rc = open_fleet(ctx, &st, &regpath))) {
        json_decref(jobs);
        return rc;
    }
    if (fleet_load(st, regpath, &f, &err) < 0 ||
        fleet_require_active(&f, name, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    c = fleet_find(&f, name);
    if (!(t = fleet_cluster_transport(c, &err))) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (!strcmp(c->def.scheduler, "slurm")) {
        const char *argv_sq[] = {"squeue", "-h", "-o",
                                 "%i|%P|%j|%u|%T|%M|%l|%D|%R|%b", NULL};
        struct slurm_jobs sj;
        const char *kind = NULL;
        memset(&sj, 0, sizeof(sj));
        if (transport_run_ok(t, argv_sq, NULL, 0, &r, &err) < 0 ||
            (r.out.len &&
             squeue_parse(r.out.buf, r.out.len, &sj, &kind, &err) < 0)) {
            slurm_jobs_free(&sj);
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        for (size_t i = 0; i < sj.njobs; i++) {
            json_t *j = json_object();
            jx_set(j, "job_id", jx_str(sj.jobs[i].id));
            jx_set(j, "name", jx_str(sj.jobs[i].name));
            jx_set(j, "user", jx_str(sj.jobs[i].user));
            jx_set(j, "state", jx_str(sj.jobs[i].state));
            jx_set(j, "raw_state", jx_str(sj.jobs[i].raw_state));
            jx_set(j, "nodes",
                   sj.jobs[i].nodelist.nr
                       ? json_integer((long long)sj.jobs[i].nodelist.nr)
                       : NULL);
            json_array_append_new(jobs, j);
        }
        slurm_jobs_free(&sj);
    } else if (!strcmp(c->def.scheduler, "flux")) {
        const char *argv_fj[] = {"flux", "jobs", "-A", NULL};
        const char *kind = NULL;
        json_t *doc;
        if (transport_run_ok(t, argv_fj, NULL, 0, &r, &err) < 0 ||
            !(doc = flux_jobs_parse(r.out.buf, r.out.len, &kind, &err))) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        for (size_t i = 0; i < json_array_size(json_object_get(doc, "jobs"));
             i++) {
            json_t *s = json_array_get(json_object_get(doc, "jobs"), i);
            json_t *j = json_object();
            jx_set(j, "job_id", jx_str(jx_get_str(s, "id", NULL)));
            jx_set(j, "name", jx_str(jx_get_str(s, "name", NULL)));
            jx_set(j, "user", jx_str(jx_get_str(s, "user", NULL)));
            jx_set(j, "state", jx_str(jx_get_str(s, "state", NULL)));
            jx_set(j, "nodes",
                   json_object_get(s, "nodes")
                       ? json_copy(json_object_get(s, "nodes"))
                       : NULL);
            json_array_append_new(jobs, j);
        }
        json_decref(doc);
    }
    rc = 0;
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "cluster", jx_str(name));
        jx_set(d, "jobs", json_incref(jobs));
        out_json(ctx, d);
    } else if (!json_array_size(jobs)) {
        out_info(ctx,
                 "No jobs in the queue on '%s' (or scheduler not "
                 "queryable).",
                 name);
    } else {
        struct out_table *tb = out_table_create(cols);
        out_info(ctx, "Queue \u2014 %s (%s)", name, c->def.scheduler);
        for (size_t i = 0; i < json_array_size(jobs); i++) {
            json_t *j = json_array_get(jobs, i);
            char nb[32] = "";
            if (json_is_integer(json_object_get(j, "nodes")))
                snprintf(
                    nb, sizeof(nb), "%lld",
                    (long long)json_integer_value(json_object_get(j, "nodes")));
            const char *v[] = {jx_get_str(j, "job_id", NULL),
                               jx_get_str(j, "name", NULL),
                               jx_get_str(j, "user", NULL),
                               jx_get_str(j, "state", NULL), *nb ? nb : NULL};
            out_table_row(tb, v);
        }
        out_table_print(ctx, tb);
    }
out:
    json_decref(jobs);
    transport_result_release(&r);
    transport_close(t);
    fleet_release(&f);
    close_fleet(st, regpath);
    return rc;
}
