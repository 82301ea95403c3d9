/*
 * hpc_govern.c - the governance commands of `exa hpc` (shared/REFERENCE.md
 * §2.1): `clusters`, `approve`, `reject` and `audit verify`. Approval is
 * bound to the connection identity (user, port, client and host key
 * fingerprints are shown in the prompt) and `--json` alone never approves:
 * without --yes, a --json or non-terminal run fails and leaves the cluster
 * unchanged.
 * The state changes themselves live in libfleet/governance.c, shared with
 * the server and MCP; this file parses flags, asks and prints.
 */
#include "cmd/hpc_fleet.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/hpc_fleet_int.h"
#include "libfleet/governance.h"
#include "libstore/audit.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"

/* ---- clusters ---- */

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
    if (!c || !c->in_db) { /* refuse before asking, not after */
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
