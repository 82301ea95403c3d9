/*
 * hpc_place.c - the placement commands of `exa hpc` (doc/reference.md
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
#include "libfleet/readops.h"
#include "libfleet/registry.h"
#include "libsched/resources.h"
#include "libstore/nodes.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"
#include "libview/view.h"

/* ---- place ---- */

static void fmt_idle(char *buf, size_t n, int idle, int total)
{
    snprintf(buf, n, "%d/%d", idle, total);
}

static void print_explain(struct exa_ctx *ctx, const struct place_result *r)
{
    const struct place_candidate *ch =
        r->chosen >= 0 ? &r->cands[r->chosen] : NULL;
    printf("Scoring provider: %s  |  ask: gpus=%d cpus=%d nodes=%d%s%s  |  "
           "chosen: %s\n",
           r->scorer->name, r->ask.gpus, r->ask.cpus, r->ask.nodes,
           r->ask.partition ? " partition=" : "",
           r->ask.partition ? r->ask.partition : "", ch ? ch->name : "none");
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

/* One warning per snapshot a refresh could not bring up to date. */
static void warn_unrefreshed(struct exa_ctx *ctx, const struct strvec *failed,
                             const struct strvec *errors)
{
    for (size_t i = 0; i < failed->nr; i++)
        out_warn(ctx, "snapshot of '%s' is stale and was not refreshed: %s",
                 failed->v[i], errors->v[i]);
}

/*
 * Refresh the stale or missing snapshots of the ACTIVE clusters cands
 * (place_load_candidates, whose summary rows the check reuses) through
 * each cluster's own connection (libfleet readops); what cannot be
 * refreshed is warned about and its error kept in failed (name -> error,
 * same index) for the JSON "stale_error". Returns the number refreshed.
 */
static int refresh_stale(struct exa_ctx *ctx, store_t *st, const char *regpath,
                         const struct place_cluster *cands, size_t ncands,
                         int max_age_s, struct strvec *failed,
                         struct strvec *errors)
{
    int n = fleet_refresh_stale_of(st, regpath, cands, ncands, max_age_s,
                                   time(NULL), failed, errors);
    warn_unrefreshed(ctx, failed, errors);
    return n;
}

/* "12 s", "3 min", "2.5 h", "unknown". */
static void fmt_age(char *buf, size_t n, double age_s, int stale)
{
    if (age_s < 0)
        snprintf(buf, n, "unknown%s", stale ? " (stale)" : "");
    else if (age_s < 120)
        snprintf(buf, n, "%.0f s%s", age_s, stale ? " (stale)" : "");
    else if (age_s < 7200)
        snprintf(buf, n, "%.0f min%s", age_s / 60, stale ? " (stale)" : "");
    else
        snprintf(buf, n, "%.1f h%s", age_s / 3600, stale ? " (stale)" : "");
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
        {"partition", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0}};
    static const char *const cols[] = {"Cluster",      "Scheduler",  "Fits",
                                       "Idle GPUs",    "Idle nodes", "Score",
                                       "Snapshot age", NULL};
    struct strvec failed = STRVEC_INIT, errors = STRVEC_INIT;
    struct place_ask ask = {0, 0, 1, NULL};
    const char *provider = getenv("EXAMLOPS_PLACEMENT_PROVIDER");
    const struct place_scorer *scorer;
    int explain = 0, refresh = 1, max_age = place_max_age_from_env(), rc, o;
    store_t *st;
    char *regpath;
    struct fleet f = {NULL, 0};
    struct place_cluster *cands = NULL;
    size_t ncands = 0, nnodes = 0;
    struct node_row *nodes = NULL, *pnodes = NULL;
    size_t npnodes = 0;
    struct place_result res;
    const char *pvar = NULL;
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
        case 'p':
            ask.partition = optarg;
            break;
        default:
            return bad_option(ctx, argc, argv);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    /* the partition `hpc submit` and `pipeline run` default to
     * (EXAMLOPS_HPC_PARTITION, else EXAMLOPS_SLURM_PARTITION), read the
     * same way, so that placement counts the nodes the job can go to */
    if (!ask.partition)
        ask.partition = sched_partition_from_env(&pvar);
    if (ask.partition && place_partition_check(ask.partition, &err) < 0) {
        if (pvar)
            exa_err_prefix(&err, "%s", pvar);
        return out_error(ctx, &err, NULL);
    }
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
        refresh_stale(ctx, st, regpath, cands, ncands, max_age, &failed,
                      &errors) > 0) {
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
    /* the asked partition, else each cluster's default: its nodes there
     * (the refresh above judged whole snapshots) */
    if (place_restrict_partition(&f, ask.partition, cands, ncands, &pnodes,
                                 &npnodes, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
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
        /* place_result_json() marked by place_json_mark_stale(), as the
         * REST API and MCP views build it, streamed (the same bytes) */
        struct jsonw w;
        jsonw_init(&w, stdout, 1);
        jsonw_obj_begin(&w);
        place_result_write(&w, &res, explain, &failed, &errors);
        if (rc) {
            jsonw_key_lit(&w, "error");
            jsonw_str(&w, res.reason);
            jsonw_key_lit(&w, "exit_code");
            jsonw_int(&w, rc);
            jsonw_key_lit(&w, "hint");
            jsonw_str(&w, rc == 6 ? "approve a cluster: exa hpc approve NAME"
                                  : "ask for fewer GPUs or nodes, or see "
                                    "'exa hpc place --explain'");
        }
        jsonw_obj_end(&w);
        out_jsonw_finish(ctx, &w);
    } else {
        struct out_table *t = out_table_create(cols);
        if (res.chosen >= 0)
            printf("\u2713 %s\n", res.reason);
        else
            out_warn(ctx, "%s", res.reason);
        for (size_t i = 0; i < res.n; i++) {
            const struct place_candidate *c = &res.cands[i];
            char ig[32], in[32], sc[64], age[48];
            fmt_age(age, sizeof(age), c->cap.age_s, c->stale);
            fmt_idle(ig, sizeof(ig), c->cap.idle_gpus, c->cap.total_gpus);
            fmt_idle(in, sizeof(in), c->cap.idle_nodes, c->cap.total_nodes);
            if (c->fits && c->objective_available)
                snprintf(sc, sizeof(sc), "%g", c->score);
            else
                snprintf(sc, sizeof(sc), "\u2014");
            const char *v[] = {
                c->name, c->scheduler, c->fits ? "yes" : "no", ig, in, sc, age};
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
    strvec_clear(&failed);
    strvec_clear(&errors);
    free(cands);
    node_rows_free(nodes, nnodes);
    free(pnodes);
    fleet_release(&f);
    close_fleet(st, regpath);
    return rc;
}

/* ---- capacity ---- */

int cmd_hpc_capacity(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"no-refresh", no_argument, NULL, 'R'}, {NULL, 0, NULL, 0}};
    static const char *const cols[] = {
        "Cluster",   "Scheduler", "GPUs (idle/total)", "Util %",
        "GPU-hours", "Cost $",    "Snapshot age",      NULL};
    store_t *st;
    char *regpath;
    struct capacity_row *rows = NULL;
    struct fleet f = {NULL, 0};
    struct strvec failed = STRVEC_INIT, errors = STRVEC_INIT;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    int rc, o, refresh = 1, max_age = place_max_age_from_env();
    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, "", longopts)) != -1) {
        if (o == 'R')
            refresh = 0;
        else
            return bad_option(ctx, argc, argv);
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    /* Stale or missing snapshots are refreshed first, as place does. */
    if (refresh && max_age > 0) {
        if (fleet_load(st, regpath, &f, &err) < 0) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        if (fleet_refresh_stale(st, regpath, &f, max_age, time(NULL), &failed,
                                &errors, &err) < 0)
            out_warn(ctx, "stale snapshots were not refreshed: %s", err.text);
        warn_unrefreshed(ctx, &failed, &errors);
    }
    if (capacity_report(st, regpath, &rows, &n, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (ctx->out == OUT_JSON) {
        json_t *doc = capacity_json(rows, n);
        place_json_mark_stale(doc, "name", &failed, &errors);
        out_json(ctx, doc);
    } else if (!n) {
        out_info(ctx, "No ACTIVE clusters. Approve one with 'exa hpc approve "
                      "<name>'.");
    } else {
        struct out_table *t = out_table_create(cols);
        out_info(ctx, "HPC capacity");
        for (size_t i = 0; i < n; i++) {
            char g[48], u[32], h[32], c[32], age[48];
            snprintf(g, sizeof(g), "%d/%d", rows[i].idle_gpus,
                     rows[i].total_gpus);
            snprintf(u, sizeof(u), "%.1f", rows[i].utilization_pct);
            snprintf(h, sizeof(h), "%.2f", rows[i].gpu_hours_used);
            snprintf(c, sizeof(c), "%.2f", rows[i].cost_usd);
            fmt_age(age, sizeof(age), rows[i].age_s, rows[i].stale);
            const char *v[] = {rows[i].name, rows[i].scheduler, g, u, h, c,
                               age};
            out_table_row(t, v);
        }
        out_table_print(ctx, t);
        out_detail(ctx, "Carbon/energy accounting: exa finops carbon");
    }
out:
    strvec_clear(&failed);
    strvec_clear(&errors);
    fleet_release(&f);
    capacity_rows_free(rows, n);
    close_fleet(st, regpath);
    return rc;
}

/* ---- preflight ---- */

int cmd_hpc_preflight(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"gpus", required_argument, NULL, 'g'},
        {"nodes", required_argument, NULL, 'N'},
        {"ntasks", required_argument, NULL, 'n'},
        {"partition", required_argument, NULL, 'P'},
        {"account", required_argument, NULL, 'A'},
        {"qos", required_argument, NULL, 'Q'},
        {NULL, 0, NULL, 0}};
    struct preflight_ask ask = {0, 0, NULL, NULL, NULL, NULL, 0};
    struct preflight_report rep = {0};
    struct sched_resources env = SCHED_RESOURCES_INIT;
    struct fleet f = {NULL, 0};
    store_t *st;
    char *regpath;
    const char *name, *rexa = getenv("EXAMLOPS_HPC_REMOTE_EXA");
    exa_error_t err = EXA_ERROR_INIT;
    int rc, o;

    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, "g:N:n:", longopts)) != -1) {
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
        case 'n': /* Flux slots (the slots check) */
            if ((rc = parse_int_opt(ctx, "--ntasks", optarg, &ask.ntasks)))
                return rc;
            if (ask.ntasks < 1)
                return out_usage(ctx, "--ntasks must be at least 1");
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
    if (cluster_name_check(name, "NAME", &err) < 0)
        return out_error(ctx, &err, NULL);
    /* the defaults `hpc submit` and `pipeline run` take, read the same
     * way (EXAMLOPS_HPC_*, else the older EXAMLOPS_SLURM_*), so that
     * preflight checks the partition the job goes to */
    if (sched_resources_from_env(&env, &err) < 0) {
        sched_resources_release(&env);
        return out_error(ctx, &err, NULL);
    }
    if (!ask.partition)
        ask.partition = env.partition;
    if (!ask.account)
        ask.account = env.account;
    if (!ask.qos)
        ask.qos = env.qos;
    if ((rc = open_fleet(ctx, &st, &regpath))) {
        sched_resources_release(&env);
        return rc;
    }
    {
        struct view_ctx vc = {st, regpath, 0};
        if (view_preflight(&vc, name, &ask, rexa, &rep, &err) < 0) {
            char hint[256];
            rc = out_error(
                ctx, &err,
                err.code == EXA_ENOTAPPROVED
                    ? cmd_not_approved_hint(&err, name, hint, sizeof(hint))
                    : NULL);
            goto out;
        }
    }
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
    fleet_release(&f);
    close_fleet(st, regpath);
    sched_resources_release(&env);
    return rc;
}

/* ---- queue ---- */

int cmd_hpc_queue(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"cluster", required_argument, NULL, 'c'}, {NULL, 0, NULL, 0}};
    static const char *const cols[] = {"Job",   "Name",   "User", "State",
                                       "Nodes", "Reason", NULL};
    const char *name = getenv("EXAMLOPS_HPC_CLUSTER");
    const char *source = "EXAMLOPS_HPC_CLUSTER";
    struct fleet f = {NULL, 0};
    const struct fleet_cluster *c;
    struct sched_queue q = {NULL, 0, 0};
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    char *regpath;
    int rc, o;

    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, "c:", longopts)) != -1) {
        if (o != 'c')
            return bad_option(ctx, argc, argv);
        name = optarg;
        source = "--cluster";
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (!name || !*name)
        return out_errorf(ctx, EXA_EFAIL,
                          "exa hpc queue --cluster <name>  (or set "
                          "EXAMLOPS_HPC_CLUSTER)",
                          "No cluster given");
    if (cluster_name_check(name, source, &err) < 0)
        return out_error(ctx, &err, NULL);
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if (fleet_load(st, regpath, &f, &err) < 0 ||
        fleet_require_active(&f, name, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    c = fleet_find(&f, name);
    if (ctx->out == OUT_JSON) {
        struct view_ctx vc = {st, regpath, 0};
        json_t *d = view_queue(&vc, name, &err);
        if (!d) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        out_json(ctx, d);
        rc = 0;
        goto out;
    }
    if (fleet_cluster_queue(st, regpath, name, &q, &err) < 0) {
        /* never "empty": the scheduler did not answer */
        exa_err_prefix(&err, "queue of '%s': query failed", name);
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    rc = 0;
    if (q.refused)
        out_warn(ctx,
                 "%zu record(s) of the queue not believed: cut short or "
                 "made up by a job name (a job whose name is in doubt is "
                 "listed without one)",
                 q.refused);
    if (!q.n) {
        out_info(ctx,
                 "Queue of '%s' (%s) is empty: the scheduler lists no jobs.",
                 name, c->def.scheduler);
    } else {
        struct out_table *tb = out_table_create(cols);
        out_info(ctx, "Queue \u2014 %s (%s)", name, c->def.scheduler);
        for (size_t i = 0; i < q.n; i++) {
            char nb[32] = "";
            if (q.v[i].nodes >= 0)
                snprintf(nb, sizeof(nb), "%lld", q.v[i].nodes);
            const char *v[] = {q.v[i].id,    q.v[i].name,     q.v[i].user,
                               q.v[i].state, *nb ? nb : NULL, q.v[i].reason};
            out_table_row(tb, v);
        }
        out_table_print(ctx, tb);
    }
out:
    sched_queue_release(&q);
    fleet_release(&f);
    close_fleet(st, regpath);
    return rc;
}
