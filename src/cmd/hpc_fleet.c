/*
 * hpc_fleet.c - the fleet commands of `exa hpc` (shared/REFERENCE.md
 * §2.1): names, flags, defaults and output shapes of the reference, with
 * its governance gaps closed: approval is bound to the connection
 * identity, `--json` alone never approves, placement only sees ACTIVE
 * clusters and never prints -Infinity, `nodes --save` only writes a
 * registered cluster's snapshot from that cluster's own host.
 *
 * Command functions parse flags, open the store and clusters.yaml, call
 * libfleet / libdiscovery and print through output.c; the decisions live
 * in the libraries so the server and MCP can reuse them.
 */
#include "cmd/hpc_fleet.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libfleet/capacity.h"
#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libstore/audit.h"
#include "libstore/nodes.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* ---- shared helpers ---- */

/* "✓ msg" in text mode, {"ok": true, "message": msg} in JSON mode. */
static void out_ok(struct exa_ctx *ctx, const char *msg)
{
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "ok", json_true());
        jx_set(d, "message", jx_str(msg));
        out_json(ctx, d);
    } else if (!ctx->quiet) {
        printf("\u2713 %s\n", msg);
    }
}

/* Open the store and resolve clusters.yaml; 0 or an exit status. */
static int open_fleet(struct exa_ctx *ctx, store_t **st, char **regpath)
{
    exa_error_t err = EXA_ERROR_INIT;
    *regpath = registry_default_path(&err);
    if (!*regpath)
        return out_error(ctx, &err, NULL);
    *st = store_open(NULL, &err);
    if (!*st) {
        free(*regpath);
        *regpath = NULL;
        return out_error(ctx, &err, NULL);
    }
    return 0;
}

static void close_fleet(store_t *st, char *regpath)
{
    store_close(st);
    free(regpath);
}

/* getopt_long over argv with a leading '+' behaviour off; reset first. */
static int next_opt(int argc, char **argv, const char *shortopts,
                    const struct option *longopts)
{
    return getopt_long(argc, argv, shortopts, longopts, NULL);
}

static int bad_option(struct exa_ctx *ctx, int argc, char **argv)
{
    const char *a = optind - 1 < argc && optind > 0 ? argv[optind - 1] : "?";
    return out_usage(ctx, "unknown or incomplete option '%s'", a);
}

static int parse_int_opt(struct exa_ctx *ctx, const char *opt, const char *s,
                         int *out)
{
    long long v;
    int rc = cmd_parse_uint(ctx, opt, s, &v);
    if (rc)
        return rc;
    if (v > 1000000)
        return out_usage(ctx, "option '%s' is too large: %s", opt, s);
    *out = (int)v;
    return 0;
}

/* ---- clusters ---- */

static json_t *caps_json(const char *text)
{
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    return j ? j : json_null();
}

static json_t *cluster_json(const struct fleet_cluster *c)
{
    json_t *o = json_object();
    const struct cluster_def *d = &c->def;
    jx_set(o, "name", jx_str(d->name));
    jx_set(o, "scheduler", jx_str(d->scheduler));
    jx_set(o, "transport", jx_str(d->transport));
    jx_set(o, "host", jx_str(d->host));
    jx_set(o, "ssh_user", jx_str(d->ssh_user));
    jx_set(o, "ssh_port", json_integer(d->ssh_port));
    jx_set(o, "ssh_key", jx_str(d->ssh_key));
    jx_set(o, "key_fingerprint", jx_str(c->row.key_fingerprint));
    jx_set(o, "host_key_fingerprint", jx_str(c->row.host_key_fingerprint));
    jx_set(o, "state", jx_str(cluster_state_name(c->state)));
    jx_set(o, "approved_by", jx_str(c->row.approved_by));
    jx_set(o, "requested_by", jx_str(c->row.requested_by));
    jx_set(o, "reason", jx_str(c->row.reason));
    jx_set(o, "capabilities", caps_json(c->row.capabilities));
    jx_set(o, "tenant", jx_str(d->tenant));
    jx_set(o, "node_exporter_port",
           json_integer(cluster_def_node_exporter_port(d)));
    jx_set(o, "dcgm_exporter_port",
           json_integer(cluster_def_dcgm_exporter_port(d)));
    jx_set(o, "carbon_intensity",
           d->has_carbon_intensity ? jx_real(d->carbon_intensity) : NULL);
    jx_set(o, "cost_per_gpu_hour",
           d->has_cost_per_gpu_hour ? jx_real(d->cost_per_gpu_hour) : NULL);
    jx_set(o, "in_registry", json_boolean(c->in_yaml));
    jx_set(o, "updated_at", jx_str(c->row.updated_at));
    return o;
}

int cmd_hpc_clusters(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = { "Name",  "Scheduler", "Transport",
                                        "Host",  "State",     "Approved by",
                                        NULL };
    store_t *st;
    char *regpath;
    struct fleet f = { NULL, 0 };
    exa_error_t err = EXA_ERROR_INIT;
    int rc;
    if (argc > 1)
        return out_usage(ctx, "unexpected argument '%s'", argv[1]);
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if (fleet_load(st, regpath, &f, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (ctx->out == OUT_JSON) {
        json_t *a = json_array();
        for (size_t i = 0; i < f.nr; i++)
            json_array_append_new(a, cluster_json(&f.v[i]));
        out_json(ctx, a);
    } else if (!f.nr) {
        out_info(ctx, "No clusters registered. Add one with 'exa hpc "
                      "connect <host> --name <n>'.");
    } else {
        struct out_table *t = out_table_create(cols);
        out_info(ctx, "HPC clusters");
        for (size_t i = 0; i < f.nr; i++) {
            const struct fleet_cluster *c = &f.v[i];
            const char *v[] = { c->def.name,
                                c->def.scheduler,
                                c->def.transport,
                                c->def.host,
                                cluster_state_name(c->state),
                                c->row.approved_by };
            out_table_row(t, v);
        }
        out_table_print(ctx, t);
    }
out:
    fleet_release(&f);
    close_fleet(st, regpath);
    return rc;
}

/* ---- approve / reject ---- */

static int decide_cmd(struct exa_ctx *ctx, int argc, char **argv,
                      int approve)
{
    static const struct option longopts[] = {
        { "reason", required_argument, NULL, 'r' }, { NULL, 0, NULL, 0 }
    };
    const char *reason = NULL, *name;
    store_t *st;
    char *regpath, *actor = NULL;
    struct fleet f = { NULL, 0 };
    struct fleet_cluster *c;
    exa_error_t err = EXA_ERROR_INIT;
    struct strbuf msg = STRBUF_INIT;
    int rc, o;

    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, approve ? "" : "r:", longopts)) != -1) {
        if (o == 'r' && !approve)
            reason = optarg;
        else
            return bad_option(ctx, argc, argv);
    }
    if (optind + 1 != argc)
        return out_usage(ctx, "expected one cluster NAME");
    name = argv[optind];
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if (fleet_load(st, regpath, &f, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    c = fleet_find(&f, name);
    if (!c) {
        rc = out_errorf(ctx, EXA_EFAIL, "exa hpc clusters",
                        "Unknown cluster: %s", name);
        goto out;
    }
    if (approve)
        strbuf_addf(&msg, "Approve cluster '%s' (%s @ %s, user %s, port %d, "
                          "key %s, host key %s) for scheduling?",
                    name, c->def.scheduler, c->def.host ? c->def.host : "-",
                    c->def.ssh_user ? c->def.ssh_user : "-", c->def.ssh_port,
                    c->row.key_fingerprint ? c->row.key_fingerprint : "-",
                    c->row.host_key_fingerprint ? c->row.host_key_fingerprint
                                                : "-");
    else
        strbuf_addf(&msg, "Reject cluster '%s'?", name);
    if (!out_confirm(ctx, "%s", msg.buf)) {
        if (ctx->out == OUT_JSON || !isatty(STDIN_FILENO)) {
            rc = out_errorf(ctx, EXA_EFAIL,
                            approve ? "exa --yes hpc approve NAME"
                                    : "exa --yes hpc reject NAME",
                            "cluster '%s' left unchanged: %s needs "
                            "confirmation (answer the prompt on a terminal "
                            "or pass --yes)",
                            name, approve ? "approval" : "rejection");
        } else {
            out_info(ctx, "Aborted \u2014 cluster left unchanged.");
            rc = 0;
        }
        goto out;
    }
    actor = audit_actor();
    if (!c->in_db) {
        rc = out_errorf(ctx, EXA_EFAIL, NULL, "Unknown cluster: %s", name);
        goto out;
    }
    if ((approve ? gov_approve(st, regpath, name, &c->row, actor, NULL, &err)
                 : gov_reject(st, regpath, name, reason, &c->row, actor, NULL,
                              &err)) < 0) {
        rc = out_error(ctx, &err, "exa hpc clusters");
        goto out;
    }
    strbuf_reset(&msg);
    if (approve)
        strbuf_addf(&msg, "Cluster %s is now ACTIVE \u2014 jobs may be "
                          "scheduled on it.",
                    name);
    else
        strbuf_addf(&msg, "Cluster %s is now REJECTED \u2014 scheduling "
                          "blocked.",
                    name);
    out_ok(ctx, msg.buf);
    rc = 0;
out:
    free(actor);
    strbuf_release(&msg);
    fleet_release(&f);
    close_fleet(st, regpath);
    return rc;
}

int cmd_hpc_approve(struct exa_ctx *ctx, int argc, char **argv)
{
    return decide_cmd(ctx, argc, argv, 1);
}

int cmd_hpc_reject(struct exa_ctx *ctx, int argc, char **argv)
{
    return decide_cmd(ctx, argc, argv, 0);
}

/* ---- place ---- */

/*
 * Load the ACTIVE clusters and their snapshots into a place_cluster array.
 * *nodes owns the rows (one query for all clusters). 0 or -1 with err.
 */
static int load_candidates(store_t *st, const struct fleet *f,
                           struct place_cluster **out, size_t *nout,
                           struct node_row **nodes, size_t *nnodes,
                           exa_error_t *err)
{
    struct place_cluster *v = NULL;
    size_t nr = 0, alloc = 0, j = 0;
    if (store_nodes_list(st, NULL, nodes, nnodes, err) < 0)
        return -1;
    for (size_t i = 0; i < f->nr; i++) {
        const struct fleet_cluster *c = &f->v[i];
        struct place_cluster *p;
        if (c->state != CLUSTER_ACTIVE)
            continue;
        ALLOC_GROW(v, nr + 1, alloc);
        p = &v[nr++];
        memset(p, 0, sizeof(*p));
        p->name = c->def.name;
        p->scheduler = c->def.scheduler;
        p->has_carbon_intensity = c->def.has_carbon_intensity;
        p->carbon_intensity = c->def.carbon_intensity;
        p->has_cost_per_gpu_hour = c->def.has_cost_per_gpu_hour;
        p->cost_per_gpu_hour = c->def.cost_per_gpu_hour;
        /* rows are sorted by cluster: find this cluster's run */
        for (j = 0; j < *nnodes && strcmp((*nodes)[j].cluster, p->name); j++)
            ;
        p->nodes = *nodes + j;
        while (j < *nnodes && !strcmp((*nodes)[j].cluster, p->name)) {
            p->nnodes++;
            j++;
        }
    }
    *out = v;
    *nout = nr;
    return 0;
}

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
            printf("score %g (margin to best %g)", c->score,
                   c->margin_to_best);
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

int cmd_hpc_place(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "gpus", required_argument, NULL, 'g' },
        { "cpus", required_argument, NULL, 'C' },
        { "nodes", required_argument, NULL, 'N' },
        { "placement-provider", required_argument, NULL, 'P' },
        { "explain", no_argument, NULL, 'E' },
        { NULL, 0, NULL, 0 }
    };
    static const char *const cols[] = { "Cluster",    "Scheduler",
                                        "Fits",       "Idle GPUs",
                                        "Idle nodes", "Score",
                                        NULL };
    struct place_ask ask = { 0, 0, 1 };
    const char *provider = getenv("EXAMLOPS_PLACEMENT_PROVIDER");
    const struct place_scorer *scorer;
    int explain = 0, rc, o;
    store_t *st;
    char *regpath;
    struct fleet f = { NULL, 0 };
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
        load_candidates(st, &f, &cands, &ncands, &nodes, &nnodes, &err) < 0 ||
        place_choose(cands, ncands, &ask, scorer, place_max_age_from_env(),
                     time(NULL), &res, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    rc = 0;
    if (ctx->out == OUT_JSON) {
        out_json(ctx, place_result_json(&res, explain));
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
            const char *v[] = { c->name, c->scheduler, c->fits ? "yes" : "no",
                                ig,      in,           sc };
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
    static const char *const cols[] = { "Cluster", "Scheduler",
                                        "GPUs (idle/total)", "Util %",
                                        "GPU-hours", "Cost $", NULL };
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
            const char *v[] = { rows[i].name, rows[i].scheduler, g, u, h, c };
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

/* ---- audit verify ---- */

int cmd_hpc_audit(struct exa_ctx *ctx, int argc, char **argv)
{
    store_t *st;
    exa_error_t err = EXA_ERROR_INIT;
    long long count = 0, bad = 0;
    int rc;
    if (argc != 2 || strcmp(argv[1], "verify"))
        return out_usage(ctx, "expected 'verify'");
    st = store_open(NULL, &err);
    if (!st)
        return out_error(ctx, &err, NULL);
    if (audit_verify(st, &count, &bad, &err) < 0) {
        if (ctx->out == OUT_JSON) {
            json_t *d = json_object();
            jx_set(d, "ok", json_false());
            jx_set(d, "error", jx_str(err.text));
            jx_set(d, "exit_code", json_integer(1));
            jx_set(d, "bad_event_id", bad ? json_integer(bad) : NULL);
            out_json(ctx, d);
            rc = 1;
        } else {
            rc = out_error(ctx, &err, NULL);
        }
    } else {
        char msg[128];
        snprintf(msg, sizeof(msg), "Audit chain intact: %lld event(s)",
                 count);
        if (ctx->out == OUT_JSON) {
            json_t *d = json_object();
            jx_set(d, "ok", json_true());
            jx_set(d, "events", json_integer(count));
            jx_set(d, "message", jx_str(msg));
            out_json(ctx, d);
        } else {
            out_ok(ctx, msg);
        }
        rc = 0;
    }
    store_close(st);
    return rc;
}

