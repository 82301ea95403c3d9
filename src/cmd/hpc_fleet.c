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
#include <math.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libdiscovery/preflight.h"
#include "libdiscovery/probe.h"
#include "libfleet/capacity.h"
#include "libfleet/connect.h"
#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libstore/audit.h"
#include "libsched/parse_flux.h"
#include "libsched/parse_slurm.h"
#include "libstore/nodes.h"
#include "libtransport/transport.h"
#include "libutil/atomic.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/subprocess.h"
#include "libutil/xalloc.h"

/* ---- shared helpers ---- */

struct inventory;
static int refresh_stale(struct exa_ctx *ctx, store_t *st,
                         const struct fleet *f,
                         const struct place_cluster *cands, size_t n,
                         int max_age_s);

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
    static const char *const cols[] = {
        "Name", "Scheduler", "Transport", "Host", "State", "Approved by", NULL};
    store_t *st;
    char *regpath;
    struct fleet f = {NULL, 0};
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
            const char *v[] = {c->def.name,
                               c->def.scheduler,
                               c->def.transport,
                               c->def.host,
                               cluster_state_name(c->state),
                               c->row.approved_by};
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

static int decide_cmd(struct exa_ctx *ctx, int argc, char **argv, int approve)
{
    static const struct option longopts[] = {
        {"reason", required_argument, NULL, 'r'}, {NULL, 0, NULL, 0}};
    const char *reason = NULL, *name;
    store_t *st;
    char *regpath, *actor = NULL;
    struct fleet f = {NULL, 0};
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
        strbuf_addf(&msg,
                    "Approve cluster '%s' (%s @ %s, user %s, port %d, "
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
        strbuf_addf(&msg,
                    "Cluster %s is now ACTIVE \u2014 jobs may be "
                    "scheduled on it.",
                    name);
    else
        strbuf_addf(&msg,
                    "Cluster %s is now REJECTED \u2014 scheduling "
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
        place_load_candidates(st, &f, &cands, &ncands, &nodes, &nnodes, &err) < 0) {
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
        if (place_load_candidates(st, &f, &cands, &ncands, &nodes, &nnodes, &err) <
            0) {
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
        snprintf(msg, sizeof(msg), "Audit chain intact: %lld event(s)", count);
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

/* ---- connect ---- */

/*
 * Run a local helper program (ssh-keyscan, ssh-keygen) with argv, no
 * shell, stdin /dev/null, capturing up to 1 MiB of stdout; a wall-clock
 * cap of timeout_s. Returns its exit status, or -1 with err.
 */
static int run_local(const char *const *argv, double timeout_s,
                     struct strbuf *out, exa_error_t *err)
{
    struct subprocess_opts o = {0};
    struct subprocess_result r = SUBPROCESS_RESULT_INIT;
    int rc;
    o.timeout_s = timeout_s;
    o.max_output = 1u << 20;
    if (subprocess_run(argv, &o, &r, err) < 0) {
        subprocess_result_release(&r);
        return -1;
    }
    strbuf_addbuf(out, &r.out);
    rc = r.exit_code;
    if (rc != 0) {
        strbuf_rtrim(&r.err);
        exa_err(err, EXA_ETRANSPORT, "'%s' exited %d%s%s", argv[0], rc,
                r.err.len ? ": " : "", r.err.buf);
    }
    subprocess_result_release(&r);
    return rc;
}

/* The OpenSSH fingerprint of the client key at key (path): from
 * "<key>.pub", else from `ssh-keygen -y -f KEY` (unencrypted keys). */
static char *client_key_fingerprint(const char *key, exa_error_t *err)
{
    char *pub = xstrfmt("%s.pub", key), *fpr;
    struct strbuf out = STRBUF_INIT;
    const char *argv[] = {"ssh-keygen", "-y", "-P", "", "-f", key, NULL};
    fpr = fleet_pubkey_file_fingerprint(pub, NULL);
    free(pub);
    if (fpr)
        return fpr;
    if (access(key, R_OK)) {
        exa_err(err, EXA_ECONFIG, "cannot read ssh key '%s': %s", key,
                strerror(errno));
        return NULL;
    }
    if (run_local(argv, 10, &out, err) == 0)
        fpr = fleet_pubkey_fingerprint(out.buf, err);
    else
        exa_err_prefix(err, "cannot derive the public key of '%s'", key);
    strbuf_release(&out);
    return fpr;
}

/* ---- transports and snapshots ---- */

static int is_local_host(const char *h)
{
    return !h || !*h || !strcmp(h, "local") || !strcmp(h, "localhost");
}

/*
 * A transport for an ad-hoc --host (detect, nodes, gpus). A host that a
 * registered cluster names (same host and port) uses that cluster's
 * pinned key. Otherwise discovery is read-only, so the key offered now is
 * trusted for this run only (ssh-keyscan into a temporary file) and its
 * fingerprint is reported through *fpr; it is pinned only by connect.
 */
static struct transport *adhoc_transport(const char *host, const char *user,
                                         const char *key, int port,
                                         const struct fleet *f, char **tmpfile,
                                         char **fpr, exa_error_t *err)
{
    struct ssh_config cfg = {0};
    struct transport *t;
    char *kh = NULL;
    *tmpfile = NULL;
    *fpr = NULL;
    if (is_local_host(host))
        return transport_local_new();
    for (size_t i = 0; f && i < f->nr; i++)
        if (f->v[i].def.host && !strcmp(f->v[i].def.host, host) &&
            f->v[i].def.ssh_port == port && f->v[i].row.host_key_fingerprint)
            kh = fleet_known_hosts_path(f->v[i].def.name);
    if (!kh) {
        struct strbuf scan = STRBUF_INIT;
        char portbuf[16], tmpl[] = "/tmp/exa-known-hosts-XXXXXX";
        const char *kargv[] = {"ssh-keyscan", "-p", portbuf, host, NULL};
        int fd;
        snprintf(portbuf, sizeof(portbuf), "%d", port);
        if (run_local(kargv, 30, &scan, err) != 0 || !scan.len) {
            if (!err->text[0])
                exa_err(err, EXA_ETRANSPORT, "no host key offered");
            exa_err_prefix(err,
                           "ssh to '%s' failed: cannot read its host "
                           "key",
                           host);
            strbuf_release(&scan);
            return NULL;
        }
        *fpr = fleet_host_key_fingerprint(scan.buf, NULL);
        fd = mkstemp(tmpl);
        if (fd < 0 || write(fd, scan.buf, scan.len) != (ssize_t)scan.len) {
            exa_err(err, EXA_ECONFIG, "cannot write a temporary known_hosts");
            if (fd >= 0)
                close(fd);
            strbuf_release(&scan);
            return NULL;
        }
        close(fd);
        strbuf_release(&scan);
        kh = xstrdup(tmpl);
        *tmpfile = xstrdup(tmpl);
    }
    cfg.host = host;
    cfg.user = user;
    cfg.key = key;
    cfg.port = port;
    cfg.known_hosts = kh;
    t = transport_ssh_new(&cfg, err);
    free(kh);
    return t;
}

static void drop_tmpfile(char *p)
{
    if (p)
        unlink(p);
    free(p);
}

/* Join a strvec with ','; NULL when empty. Caller frees. */
static char *join_parts(const struct strvec *v)
{
    struct strbuf sb = STRBUF_INIT;
    if (!v->nr)
        return NULL;
    for (size_t i = 0; i < v->nr; i++)
        strbuf_addf(&sb, "%s%s", i ? "," : "", v->v[i]);
    return strbuf_detach(&sb, NULL);
}

/* Replace cluster's snapshot with the probed nodes. */
static int save_snapshot(store_t *st, const char *cluster,
                         const struct inventory *inv, exa_error_t *err)
{
    struct node_row *rows =
        xcalloc(inv->nnodes ? inv->nnodes : 1, sizeof(*rows));
    int rc;
    for (size_t i = 0; i < inv->nnodes; i++) {
        const struct node_info *n = &inv->nodes[i];
        rows[i].node = n->name;
        rows[i].cpus = n->cpus >= 0 ? (int)n->cpus : -1;
        rows[i].mem_mb = n->mem_mb;
        rows[i].gpus = n->gpus > 0 ? (int)n->gpus : 0;
        rows[i].gpus_used = n->gpus_used >= 0 ? (int)n->gpus_used : -1;
        rows[i].gpu_model = n->gpu_model;
        rows[i].state = n->state;
        rows[i].raw_state = n->raw_state;
        rows[i].partitions = join_parts(&n->partitions);
    }
    rc = store_nodes_replace(st, cluster, inv->caps.scheduler, rows,
                             inv->nnodes, err);
    for (size_t i = 0; i < inv->nnodes; i++)
        free(rows[i].partitions);
    free(rows);
    return rc;
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

/* ---- detect / nodes / gpus ---- */

struct host_opts {
    const char *host, *user, *key, *sched, *cluster;
    int port, save;
};

/* Parse the shared host options; returns 0 or an exit status. */
static int parse_host_opts(struct exa_ctx *ctx, int argc, char **argv,
                           struct host_opts *o, int allow_save,
                           int positional_host)
{
    static const struct option longopts[] = {
        {"host", required_argument, NULL, 'H'},
        {"user", required_argument, NULL, 'u'},
        {"key", required_argument, NULL, 'k'},
        {"port", required_argument, NULL, 'p'},
        {"scheduler", required_argument, NULL, 's'},
        {"cluster", required_argument, NULL, 'c'},
        {"save", no_argument, NULL, 'S'},
        {NULL, 0, NULL, 0}};
    int c, rc;
    memset(o, 0, sizeof(*o));
    o->port = 22;
    optind = 0;
    opterr = 0;
    while ((c = next_opt(argc, argv, "H:u:k:p:s:c:", longopts)) != -1) {
        switch (c) {
        case 'H':
            o->host = optarg;
            break;
        case 'u':
            o->user = optarg;
            break;
        case 'k':
            o->key = optarg;
            break;
        case 'p':
            if ((rc = parse_int_opt(ctx, "--port", optarg, &o->port)))
                return rc;
            break;
        case 's':
            o->sched = optarg;
            break;
        case 'c':
            o->cluster = optarg;
            break;
        case 'S':
            if (!allow_save)
                return bad_option(ctx, argc, argv);
            o->save = 1;
            break;
        default:
            return bad_option(ctx, argc, argv);
        }
    }
    if (positional_host && optind < argc)
        o->host = argv[optind++];
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (o->sched && strcmp(o->sched, "auto") && !probe_find(o->sched))
        return out_errorf(ctx, EXA_EFAIL, NULL, "unknown scheduler probe: '%s'",
                          o->sched);
    return 0;
}

/*
 * Probe what the options name: --cluster without --host uses that
 * cluster's registered connection; otherwise --host (or local). Fills inv;
 * returns 0 or an exit status (transport failures: 4).
 */
static int probe_target(struct exa_ctx *ctx, const struct host_opts *o,
                        store_t *st, const char *regpath, struct inventory *inv,
                        const char **target, char **fpr)
{
    struct fleet f = {NULL, 0};
    struct transport *t = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    char *tmp = NULL;
    const char *sched = o->sched;
    int rc = 0;
    if (fleet_load(st, regpath, &f, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (o->cluster && !o->host) {
        const struct fleet_cluster *c = fleet_find(&f, o->cluster);
        if (!c) {
            rc = out_errorf(ctx, EXA_EFAIL, "exa hpc clusters",
                            "unknown cluster: '%s' (run 'exa hpc connect' "
                            "first)",
                            o->cluster);
            goto out;
        }
        t = fleet_cluster_transport(c, &err);
        if (!sched && strcmp(c->def.scheduler, "unknown") &&
            probe_find(c->def.scheduler))
            sched = c->def.scheduler;
        *target = c->def.host ? c->def.host : "local";
    } else {
        t = adhoc_transport(o->host, o->user, o->key, o->port, &f, &tmp, fpr,
                            &err);
        *target = is_local_host(o->host) ? "local" : o->host;
    }
    if (!t) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (probe_inventory(t, sched, inv, &err) < 0)
        rc = out_error(ctx, &err, NULL);
out:
    transport_close(t);
    drop_tmpfile(tmp);
    fleet_release(&f);
    return rc;
}

int cmd_hpc_detect(struct exa_ctx *ctx, int argc, char **argv)
{
    struct host_opts o;
    struct inventory inv;
    store_t *st;
    char *regpath, *fpr = NULL;
    const char *target = "local";
    int rc;
    memset(&inv, 0, sizeof(inv));
    if ((rc = parse_host_opts(ctx, argc, argv, &o, 0, 1)))
        return rc;
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if ((rc = probe_target(ctx, &o, st, regpath, &inv, &target, &fpr)))
        goto out;
    {
        const char *s = inv.caps.scheduler;
        const char *env_sched =
            !strcmp(s, "slurm") || !strcmp(s, "flux") ? s : "mock";
        int remote = !is_local_host(o.host);
        json_t *sug = json_object(), *env = json_object();
        jx_set(env, "EXAMLOPS_HPC_SCHEDULER", jx_str(env_sched));
        if (remote) {
            jx_set(env, "EXAMLOPS_HPC_TRANSPORT", jx_str("ssh"));
            jx_set(env, "EXAMLOPS_HPC_SSH_HOST", jx_str(o.host));
        }
        jx_set(sug, "scheduler", jx_str(s));
        jx_set(sug, "transport", jx_str(remote ? "ssh" : "local"));
        jx_set(sug, "host", jx_str(remote ? o.host : NULL));
        jx_set(sug, "env", env);
        if (ctx->out == OUT_JSON) {
            json_t *d = json_object();
            jx_set(d, "host", jx_str(remote ? o.host : "local"));
            jx_set(d, "capabilities", cluster_caps_json(&inv.caps));
            jx_set(d, "host_key_fingerprint", jx_str(fpr));
            jx_set(d, "suggested", sug);
            out_json(ctx, d);
        } else {
            const char *k;
            json_t *v;
            if (inv.caps.available)
                printf("\u2713 Detected %s on %s\n", s, target);
            else
                out_warn(ctx,
                         "No known scheduler detected on %s "
                         "(scheduler=%s)",
                         target, s);
            printf("Scheduler:    %s\n", s);
            printf("Version:      %s\n",
                   inv.caps.version ? inv.caps.version : "\u2014");
            printf("Accounting:   %s\n", inv.caps.accounting ? "yes" : "no");
            printf("GPUs present: %s\n", inv.caps.gpus_present ? "yes" : "no");
            printf("Nodes:        %lld\n", inv.caps.total_nodes);
            printf("CPUs:         %lld\n", inv.caps.total_cpus);
            printf("GPUs:         %lld\n", inv.caps.total_gpus);
            if (fpr)
                printf("Host key:     %s (not pinned; 'exa hpc connect' "
                       "pins it)\n",
                       fpr);
            for (size_t i = 0; i < inv.caps.notes.nr; i++)
                out_detail(ctx, "%s", inv.caps.notes.v[i]);
            printf("Suggested config (nothing connected \u2014 approve via "
                   "'exa hpc connect' later):\n");
            json_object_foreach(env, k, v)
                printf("  export %s=%s\n", k, json_string_value(v));
            json_decref(sug);
        }
    }
out:
    free(fpr);
    inventory_release(&inv);
    close_fleet(st, regpath);
    return rc;
}

int cmd_hpc_nodes(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {"Node",      "State", "CPUs",
                                       "Mem (MB)",  "GPUs",  "GPU model",
                                       "Partition", NULL};
    struct host_opts o;
    struct inventory inv;
    store_t *st;
    char *regpath, *fpr = NULL;
    const char *target = "local";
    exa_error_t err = EXA_ERROR_INIT;
    int rc;
    memset(&inv, 0, sizeof(inv));
    if ((rc = parse_host_opts(ctx, argc, argv, &o, 1, 0)))
        return rc;
    if (o.save && !o.cluster)
        return out_usage(ctx, "--save needs --cluster NAME (a registered "
                              "cluster)");
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if (o.save) {
        /* A snapshot is only ever taken from the cluster's own host. */
        struct fleet f = {NULL, 0};
        const struct fleet_cluster *c;
        if (fleet_load(st, regpath, &f, &err) < 0) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        c = fleet_find(&f, o.cluster);
        if (!c)
            rc = out_errorf(ctx, EXA_EFAIL, "exa hpc connect HOST --name C",
                            "cannot save a snapshot for unknown cluster "
                            "'%s'",
                            o.cluster);
        else if (o.host && (!c->def.host || strcmp(o.host, c->def.host) ||
                            o.port != c->def.ssh_port))
            rc = out_errorf(ctx, EXA_EFAIL, NULL,
                            "--host '%s' port %d is not the host of cluster "
                            "'%s' (%s port %d); a snapshot is only taken "
                            "from the cluster's own host",
                            o.host, o.port, o.cluster,
                            c->def.host ? c->def.host : "-", c->def.ssh_port);
        fleet_release(&f);
        if (rc)
            goto out;
        o.host = NULL; /* use the registered connection */
    }
    if ((rc = probe_target(ctx, &o, st, regpath, &inv, &target, &fpr)))
        goto out;
    if (o.save) {
        char msg[256];
        if (save_snapshot(st, o.cluster, &inv, &err) < 0) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        snprintf(msg, sizeof(msg),
                 "Saved snapshot: %zu nodes for cluster "
                 "'%s' (%s)",
                 inv.nnodes, o.cluster, inv.caps.scheduler);
        if (ctx->out != OUT_JSON)
            printf("\u2713 %s\n", msg);
    }
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "capabilities", cluster_caps_json(&inv.caps));
        jx_set(d, "nodes", node_infos_json(inv.nodes, inv.nnodes));
        jx_set(d, "gpus", gpu_infos_json(inv.gpus, inv.ngpus));
        if (o.save)
            jx_set(d, "saved", jx_str(o.cluster));
        out_json(ctx, d);
    } else if (!inv.nnodes) {
        out_warn(ctx,
                 "No nodes discovered (scheduler=%s). Is the host "
                 "reachable?",
                 inv.caps.scheduler);
    } else {
        struct out_table *t = out_table_create(cols);
        out_info(ctx, "HPC nodes (%s)", inv.caps.scheduler);
        for (size_t i = 0; i < inv.nnodes; i++) {
            const struct node_info *n = &inv.nodes[i];
            char c[32], m[32], g[32], *parts = join_parts(&n->partitions);
            snprintf(c, sizeof(c), "%lld", n->cpus);
            snprintf(m, sizeof(m), "%lld", n->mem_mb);
            snprintf(g, sizeof(g), "%lld", n->gpus);
            const char *v[] = {n->name,
                               n->raw_state ? n->raw_state : n->state,
                               n->cpus >= 0 ? c : NULL,
                               n->mem_mb >= 0 ? m : NULL,
                               n->gpus >= 0 ? g : NULL,
                               n->gpu_model,
                               parts};
            out_table_row(t, v);
            free(parts);
        }
        out_table_print(ctx, t);
    }
out:
    free(fpr);
    inventory_release(&inv);
    close_fleet(st, regpath);
    return rc;
}

int cmd_hpc_gpus(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {"Node",     "Idx",       "Model",
                                       "Mem (MB)", "Used (MB)", "Util %",
                                       "State",    NULL};
    struct host_opts o;
    struct inventory inv;
    store_t *st;
    char *regpath, *fpr = NULL;
    const char *target = "local";
    int rc;
    memset(&inv, 0, sizeof(inv));
    if ((rc = parse_host_opts(ctx, argc, argv, &o, 0, 0)))
        return rc;
    if ((rc = open_fleet(ctx, &st, &regpath)))
        return rc;
    if ((rc = probe_target(ctx, &o, st, regpath, &inv, &target, &fpr)))
        goto out;
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "capabilities", cluster_caps_json(&inv.caps));
        jx_set(d, "gpus", gpu_infos_json(inv.gpus, inv.ngpus));
        out_json(ctx, d);
    } else if (!inv.ngpus) {
        out_info(ctx, "No GPUs discovered (0 enrolled, or nvidia-smi "
                      "unavailable on this host).");
    } else {
        struct out_table *t = out_table_create(cols);
        out_info(ctx, "GPU devices");
        for (size_t i = 0; i < inv.ngpus; i++) {
            const struct gpu_info *g = &inv.gpus[i];
            char ix[32], m[32], u[32], ut[32];
            snprintf(ix, sizeof(ix), "%lld", g->index);
            snprintf(m, sizeof(m), "%lld", g->mem_total_mb);
            snprintf(u, sizeof(u), "%lld", g->mem_used_mb);
            snprintf(ut, sizeof(ut), "%.0f", g->util_pct);
            const char *v[] = {g->node,
                               ix,
                               g->name,
                               g->mem_total_mb >= 0 ? m : NULL,
                               g->mem_used_mb >= 0 ? u : NULL,
                               isnan(g->util_pct) ? NULL : ut,
                               g->state};
            out_table_row(t, v);
        }
        out_table_print(ctx, t);
    }
out:
    free(fpr);
    inventory_release(&inv);
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

/*
 * connect's probe: mock needs none; otherwise probe through a transport
 * trusting the keys just scanned (the same ones about to be pinned).
 * Fills inv; returns 0 or an exit status. A transport failure is exit 4;
 * a host with no scheduler, GPUs or forced probe is refused (exit 5).
 */
static int probe_for_connect(struct exa_ctx *ctx, const char *host,
                             const char *user, const char *key, int port,
                             const struct strbuf *scan, const char *sched,
                             struct inventory *inv)
{
    struct transport *t = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    char tmpl[] = "/tmp/exa-known-hosts-XXXXXX";
    int fd = -1, rc = 0;
    if (sched && !strcmp(sched, "mock")) {
        inv->caps.scheduler = xstrdup("mock");
        inv->caps.available = 1;
        strvec_push(&inv->caps.notes, "mock scheduler: nothing probed");
        return 0;
    }
    if (is_local_host(host)) {
        t = transport_local_new();
    } else {
        struct ssh_config cfg = {0};
        fd = mkstemp(tmpl);
        if (fd < 0 || write(fd, scan->buf, scan->len) != (ssize_t)scan->len) {
            rc = out_errorf(ctx, EXA_ECONFIG, NULL,
                            "cannot write a temporary known_hosts");
            goto out;
        }
        cfg.host = host;
        cfg.user = user;
        cfg.key = key;
        cfg.port = port;
        cfg.known_hosts = tmpl;
        if (!(t = transport_ssh_new(&cfg, &err))) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
    }
    if (probe_inventory(t, sched, inv, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (!inv->caps.available) {
        rc = out_errorf(ctx, EXA_ESCHED,
                        "pass --scheduler slurm|flux|nvidia-smi|mock to "
                        "force one",
                        "no known scheduler or GPUs detected on '%s'; "
                        "nothing registered",
                        host);
        goto out;
    }
out:
    transport_close(t);
    if (fd >= 0) {
        close(fd);
        unlink(tmpl);
    }
    return rc;
}

int cmd_hpc_connect(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"name", required_argument, NULL, 'n'},
        {"user", required_argument, NULL, 'u'},
        {"key", required_argument, NULL, 'k'},
        {"port", required_argument, NULL, 'p'},
        {"scheduler", required_argument, NULL, 's'},
        {NULL, 0, NULL, 0}};
    const char *name = NULL, *user = NULL, *key = NULL, *sched = NULL;
    const char *host;
    int port = 22, rc, o;
    store_t *st = NULL;
    char *regpath = NULL, *actor = NULL, *kfpr = NULL, *hfpr = NULL;
    char *khdir = NULL, *khpath = NULL, *caps = NULL;
    const char *probed_sched;
    struct inventory inv;
    struct strbuf scan = STRBUF_INIT, msg = STRBUF_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    struct gov_connect_req req = {0};
    struct gov_result res = {0};

    memset(&inv, 0, sizeof(inv));
    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, "n:u:k:p:s:", longopts)) != -1) {
        switch (o) {
        case 'n':
            name = optarg;
            break;
        case 'u':
            user = optarg;
            break;
        case 'k':
            key = optarg;
            break;
        case 'p':
            if ((rc = parse_int_opt(ctx, "--port", optarg, &port)))
                return rc;
            if (port < 1 || port > 65535)
                return out_usage(ctx, "--port must be in 1..65535");
            break;
        case 's':
            sched = optarg;
            break;
        default:
            return bad_option(ctx, argc, argv);
        }
    }
    if (optind + 1 != argc)
        return out_usage(ctx, "expected one HOST");
    host = argv[optind];
    if (!name)
        name = host;
    if (!*name || strchr(name, '/') || name[0] == '.')
        return out_usage(ctx, "invalid cluster name '%s'", name);

    if (key && !(kfpr = client_key_fingerprint(key, &err))) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (!is_local_host(host)) {
        char portbuf[16];
        const char *kargv[] = {"ssh-keyscan", "-p", portbuf, host, NULL};
        snprintf(portbuf, sizeof(portbuf), "%d", port);
        if (run_local(kargv, 30, &scan, &err) != 0 || !scan.len) {
            if (!err.text[0])
                exa_err(&err, EXA_ETRANSPORT, "ssh-keyscan returned no key");
            exa_err_prefix(&err, "cannot read the host key of '%s' port %d",
                           host, port);
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        if (!(hfpr = fleet_host_key_fingerprint(scan.buf, &err))) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
    }
    if (sched && strcmp(sched, "mock") && !probe_find(sched)) {
        rc = out_errorf(ctx, EXA_EFAIL, NULL, "unknown scheduler probe: '%s'",
                        sched);
        goto out;
    }
    if ((rc =
             probe_for_connect(ctx, host, user, key, port, &scan, sched, &inv)))
        goto out;
    probed_sched = inv.caps.scheduler;
    {
        json_t *cj = cluster_caps_json(&inv.caps);
        caps = jx_dumps_canonical(cj);
        json_decref(cj);
    }
    if ((rc = open_fleet(ctx, &st, &regpath)))
        goto out;
    actor = audit_actor();
    req.name = name;
    req.scheduler = probed_sched;
    req.transport = is_local_host(host) ? "local" : "ssh";
    req.host = host;
    req.ssh_user = user;
    req.ssh_port = port;
    req.ssh_key = key;
    req.key_fingerprint = kfpr;
    req.host_key_fingerprint = hfpr;
    req.capabilities = caps;
    /* Pin the host key before the row says so. */
    if (hfpr) {
        khdir = fleet_known_hosts_dir();
        khpath = xstrfmt("%s/%s", khdir, name);
        if (mkdir_p(khdir, 0700, &err) < 0 ||
            atomic_write_file(khpath, scan.buf, scan.len, 0600, &err) < 0) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
    }
    if (gov_connect(st, regpath, &req, actor, &res, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    /* The inventory just probed is this cluster's, from its own host. */
    if (inv.nnodes && save_snapshot(st, name, &inv, &err) < 0)
        out_warn(ctx, "%s", err.text);
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "cluster", jx_str(name));
        jx_set(d, "state", jx_str(cluster_state_name(res.to)));
        jx_set(d, "previous_state",
               res.from == CLUSTER_NONE ? NULL
                                        : jx_str(cluster_state_name(res.from)));
        jx_set(d, "host", jx_str(host));
        jx_set(d, "scheduler", jx_str(probed_sched));
        jx_set(d, "key_fingerprint", jx_str(kfpr));
        jx_set(d, "host_key_fingerprint", jx_str(hfpr));
        jx_set(d, "known_hosts", jx_str(khpath));
        jx_set(d, "identity_changed", json_boolean(res.identity_changed));
        jx_set(d, "capabilities", caps_json(caps));
        out_json(ctx, d);
    } else {
        if (res.identity_changed)
            out_warn(ctx,
                     "connection identity of '%s' changed: it needs a "
                     "new approval",
                     name);
        if (res.to == CLUSTER_ACTIVE)
            strbuf_addf(&msg,
                        "Re-probed cluster %s (state: ACTIVE); "
                        "capabilities refreshed",
                        name);
        else
            strbuf_addf(&msg, "Registered cluster %s (state: %s)", name,
                        cluster_state_name(res.to));
        out_ok(ctx, msg.buf);
        if (hfpr)
            out_info(ctx, "host key: %s (pinned in %s)", hfpr, khpath);
        if (kfpr)
            out_info(ctx, "client key: %s (%s)", kfpr, key);
        out_detail(ctx, "scheduler: %s  host: %s", probed_sched, host);
        if (res.to == CLUSTER_PENDING)
            out_info(ctx,
                     "No jobs will run here until approved. Sysadmin: "
                     "exa hpc approve %s",
                     name);
    }
    rc = 0;
out:
    strbuf_release(&scan);
    strbuf_release(&msg);
    free(actor);
    free(kfpr);
    free(hfpr);
    free(khdir);
    free(khpath);
    free(caps);
    inventory_release(&inv);
    if (st)
        close_fleet(st, regpath);
    else
        free(regpath);
    return rc;
}
