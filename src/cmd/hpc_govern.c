/*
 * hpc_govern.c - the governance commands of `exa hpc` (doc/reference.md
 * §2.1): `clusters`, `approve`, `reject` and `audit` (list, --verify). Approval
 * is bound to the connection identity (user, port, client and host key
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
#include <time.h>
#include <unistd.h>

#include "cmd/hpc_fleet_int.h"
#include "libfleet/governance.h"
#include "libstore/audit.h"
#include "libstore/hostkeys.h"
#include "libutil/duration.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"
#include "libview/view.h"

/* ---- clusters ---- */

int cmd_hpc_clusters(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {
        "Name", "Scheduler", "Transport",   "Host",     "Port",
        "User", "State",     "Approved by", "Host key", NULL};
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
        struct view_ctx vc = {st, regpath, 0};
        json_t *a = view_clusters(&vc, &err);
        if (!a) {
            rc = out_error(ctx, &err, NULL);
            goto out;
        }
        out_json(ctx, a);
    } else if (!f.nr) {
        out_info(ctx, "No clusters registered. Add one with 'exa hpc "
                      "connect <host> --name <n>'.");
    } else {
        struct out_table *t = out_table_create(cols);
        out_info(ctx, "HPC clusters");
        for (size_t i = 0; i < f.nr; i++) {
            const struct fleet_cluster *c = &f.v[i];
            struct hostkey_mismatch m;
            int bad =
                store_hostkey_mismatch_get(st, c->def.name, &m, NULL) == 1;
            int ssh = c->def.transport && !strcmp(c->def.transport, "ssh");
            char port[16];
            snprintf(port, sizeof(port), "%d",
                     c->def.ssh_port ? c->def.ssh_port : 22);
            const char *v[] = {c->def.name,
                               c->def.scheduler,
                               c->def.transport,
                               c->def.host,
                               ssh ? port : NULL,
                               ssh ? c->def.ssh_user : NULL,
                               cluster_state_name(c->state),
                               c->row.approved_by,
                               bad ? "MISMATCH" : "ok"};
            out_table_row(t, v);
            if (bad)
                out_warn(ctx,
                         "host key of '%s' does not match its approval "
                         "(approved %s, seen %s at %s): exa refuses it",
                         c->def.name, m.approved ? m.approved : "none",
                         m.seen ? m.seen : "none", m.seen_at);
            hostkey_mismatch_release(&m);
        }
        out_table_print(ctx, t);
    }
    for (size_t i = 0; i < f.nr; i++)
        if (f.v[i].audit_mismatch)
            out_warn(ctx, "%s", f.v[i].audit_mismatch);
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
    if (approve && c->state == CLUSTER_REJECTED) {
        char *next = fleet_next_step(c);
        rc = out_errorf(ctx, EXA_EFAIL, next,
                        "cluster '%s' is REJECTED; only a new 'exa hpc "
                        "connect' returns it to PENDING",
                        name);
        free(next);
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
            /* A refused prompt is a failure (doc/exit-codes.md), as
             * apt-get's "Abort." is: scripts must not read it as done. */
            rc = out_errorf(ctx, EXA_EFAIL, NULL,
                            "aborted: cluster '%s' left unchanged", name);
        }
        goto out;
    }
    actor = audit_actor();
    if ((approve ? gov_approve(st, regpath, name, &c->row, actor, NULL, &err)
                 : gov_reject(st, regpath, name, reason, &c->row, actor, NULL,
                              &err)) < 0) {
        char *next = approve ? fleet_next_step(c) : NULL;
        rc = out_error(ctx, &err, next ? next : "exa hpc clusters");
        free(next);
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

/* ---- audit ---- */

/* --since T (view_parse_since): the UTC text to compare ts with into
 * *out (caller frees); 0 or the usage exit status. */
static int parse_since(struct exa_ctx *ctx, const char *s, char **out)
{
    exa_error_t err = EXA_ERROR_INIT;
    if (view_parse_since(s, out, &err) < 0)
        return out_usage(ctx, "--%s", err.text);
    return 0;
}

static int audit_list_cmd(struct exa_ctx *ctx, store_t *st, const char *cluster,
                          const char *since)
{
    static const char *const cols[] = {"ID",     "Time",  "Actor", "Action",
                                       "Target", "State", NULL};
    struct audit_event *v = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    size_t n = 0;
    if (ctx->out == OUT_JSON) {
        struct view_ctx vc = {st, NULL, 0};
        struct view_audit_filter af = {cluster, since, 0};
        json_t *a = view_audit(&vc, &af, &err);
        if (!a)
            return out_error(ctx, &err, NULL);
        out_json(ctx, a);
        return 0;
    }
    if (audit_list(st, cluster, since, &v, &n, &err) < 0)
        return out_error(ctx, &err, NULL);
    if (!n) {
        out_info(ctx, "No audit events%s%s%s%s.", cluster ? " for " : "",
                 cluster ? cluster : "", since ? " since " : "",
                 since ? since : "");
    } else {
        struct out_table *t = out_table_create(cols);
        for (size_t i = 0; i < n; i++) {
            char id[32];
            json_t *d = v[i].details ? json_loads(v[i].details, 0, NULL) : NULL;
            const char *state = jx_get_str(d, "state", NULL);
            if (!state)
                state = jx_get_str(d, "to_state", NULL);
            snprintf(id, sizeof(id), "%lld", v[i].id);
            const char *row[] = {id,          v[i].ts,     v[i].actor,
                                 v[i].action, v[i].target, state};
            out_table_row(t, row);
            json_decref(d);
        }
        out_table_print(ctx, t);
    }
    audit_events_free(v, n);
    return 0;
}

static int audit_verify_cmd(struct exa_ctx *ctx, store_t *st)
{
    struct gov_audit_report rep = {0, 0, NULL, 0};
    exa_error_t err = EXA_ERROR_INIT;
    long long bad = 0;
    if (gov_audit_verify(st, &rep, &err) < 0)
        return out_error(ctx, &err, NULL);
    for (size_t i = 0; i < rep.nr && !bad; i++)
        bad = rep.v[i].event_id;
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object(), *a = json_array(), *names = json_array();
        for (size_t i = 0; i < rep.nr; i++) {
            json_t *p = json_object();
            jx_set(p, "cluster", jx_str(rep.v[i].cluster));
            jx_set(p, "event_id",
                   rep.v[i].event_id ? json_integer(rep.v[i].event_id) : NULL);
            jx_set(p, "message", jx_str(rep.v[i].message));
            json_array_append_new(a, p);
            if (rep.v[i].cluster)
                json_array_append_new(names, jx_str(rep.v[i].cluster));
        }
        jx_set(d, "ok", json_boolean(rep.nr == 0));
        jx_set(d, "events", json_integer(rep.events));
        jx_set(d, "clusters_checked",
               json_integer((json_int_t)rep.clusters_checked));
        jx_set(d, "problems", a);
        jx_set(d, "clusters_mismatched", names);
        if (rep.nr) {
            jx_set(d, "error", jx_str(rep.v[0].message));
            jx_set(d, "exit_code", json_integer(1));
            jx_set(d, "bad_event_id", bad ? json_integer(bad) : NULL);
        } else {
            char msg[160];
            snprintf(msg, sizeof(msg),
                     "Audit chain intact: %lld event(s), %zu cluster "
                     "row(s) agree with it",
                     rep.events, rep.clusters_checked);
            jx_set(d, "message", jx_str(msg));
        }
        out_json(ctx, d);
    } else if (rep.nr) {
        for (size_t i = 0; i < rep.nr; i++)
            fprintf(stderr, "exa: error: %s\n", rep.v[i].message);
    } else {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "Audit chain intact: %lld event(s), %zu cluster row(s) "
                 "agree with it",
                 rep.events, rep.clusters_checked);
        out_ok(ctx, msg);
    }
    {
        int rc = rep.nr ? 1 : 0;
        gov_audit_report_release(&rep);
        return rc;
    }
}

int cmd_hpc_audit(struct exa_ctx *ctx, int argc, char **argv)
{
    enum { O_CLUSTER = 256, O_SINCE, O_VERIFY };
    static const struct option longopts[] = {
        {"cluster", required_argument, NULL, O_CLUSTER},
        {"since", required_argument, NULL, O_SINCE},
        {"verify", no_argument, NULL, O_VERIFY},
        {NULL, 0, NULL, 0}};
    const char *cluster = NULL;
    char *since = NULL;
    int verify = 0, rc, o;
    store_t *st;
    exa_error_t err = EXA_ERROR_INIT;

    optind = 0;
    opterr = 0;
    while ((o = next_opt(argc, argv, "c:", longopts)) != -1) {
        if (o == O_CLUSTER || o == 'c') {
            cluster = optarg;
        } else if (o == O_SINCE) {
            free(since);
            since = NULL;
            if ((rc = parse_since(ctx, optarg, &since)))
                return rc;
        } else if (o == O_VERIFY) {
            verify = 1;
        } else {
            free(since);
            return bad_option(ctx, argc, argv);
        }
    }
    /* `exa hpc audit verify`, the first form, stays accepted. */
    if (optind < argc && !strcmp(argv[optind], "verify")) {
        verify = 1;
        optind++;
    }
    if (optind < argc) {
        free(since);
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    }
    if (verify && (cluster || since)) {
        free(since);
        return out_usage(ctx, "--verify checks the whole log; it takes no "
                              "--cluster or --since");
    }
    st = store_open(NULL, &err);
    if (!st) {
        free(since);
        return out_error(ctx, &err, NULL);
    }
    rc = verify ? audit_verify_cmd(ctx, st)
                : audit_list_cmd(ctx, st, cluster, since);
    store_close(st);
    free(since);
    return rc;
}
