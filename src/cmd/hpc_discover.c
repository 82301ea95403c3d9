/*
 * hpc_discover.c - the discovery commands of `exa hpc` (doc/reference.md
 * §2.1): `detect`, `nodes`, `gpus` and `connect`. Discovery is read-only:
 * an ad-hoc --host is probed with the key it offers now, trusted for that
 * run only, and its fingerprint is reported; only `connect` pins a host
 * key (under fleet_known_hosts_dir()) and registers the cluster, which
 * runs nothing until approved. `nodes --save` only writes a registered
 * cluster's snapshot from that cluster's own host. Probing lives in
 * libdiscovery and registration in libfleet/governance.c; this file parses
 * flags and prints.
 */
#include "cmd/hpc_fleet.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/hpc_fleet_int.h"
#include "libdiscovery/probe.h"
#include "libfleet/connect.h"
#include "libfleet/governance.h"
#include "libfleet/readops.h"
#include "libfleet/trust.h"
#include "libstore/audit.h"
#include "libutil/json.h"
#include "libutil/shquote.h"
#include "libutil/strbuf.h"
#include "libutil/target.h"
#include "libutil/xalloc.h"

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
    exa_error_t err = EXA_ERROR_INIT;
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
            if (o->port < 1 || o->port > 65535)
                return out_usage(ctx, "--port must be in 1..65535");
            break;
        case 's':
            o->sched = optarg;
            break;
        case 'c':
            o->cluster = optarg;
            if (cluster_name_check(o->cluster, "--cluster", &err) < 0)
                return out_error(ctx, &err, NULL);
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
    exa_error_t err = EXA_ERROR_INIT;
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
        *target = c->def.host ? c->def.host : "local";
        if (fleet_probe_cluster(st, regpath, o->cluster, o->sched, inv, &err) <
            0)
            rc = out_error(ctx, &err, NULL);
    } else {
        *target = target_is_local(NULL, o->host) ? "local" : o->host;
        if (fleet_probe_adhoc(o->host, o->user, o->key, o->port, &f, o->sched,
                              inv, fpr, &err) < 0)
            rc = out_error(ctx, &err, NULL);
    }
out:
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
        int remote = !target_is_local(NULL, o.host);
        json_t *sug = json_object(), *env = json_object();
        jx_set(env, "EXAMLOPS_HPC_SCHEDULER", jx_str(env_sched));
        if (remote) {
            jx_set(env, "EXAMLOPS_HPC_TRANSPORT", jx_str("ssh"));
            jx_set(env, "EXAMLOPS_HPC_SSH_HOST", jx_str(o.host));
            if (o.user)
                jx_set(env, "EXAMLOPS_HPC_SSH_USER", jx_str(o.user));
            if (o.key)
                jx_set(env, "EXAMLOPS_HPC_SSH_KEY", jx_str(o.key));
            if (o.port != 22)
                jx_set(env, "EXAMLOPS_HPC_SSH_PORT", json_integer(o.port));
        }
        struct cluster_def def = {0};
        struct registry reg = REGISTRY_INIT;
        char *connect_line, *yaml;
        /* The cluster as `connect` would register it: every option that
         * reached this host (user, key, port), so the line is copyable. */
        def.name = (char *)(remote ? o.host : "local");
        if (cluster_name_check(def.name, NULL, NULL) < 0)
            def.name = (char *)"NAME";
        def.scheduler = (char *)env_sched;
        def.transport = (char *)(remote ? "ssh" : "local");
        def.host = (char *)(remote ? o.host : NULL);
        def.ssh_user = (char *)(remote ? o.user : NULL);
        def.ssh_key = (char *)(remote ? o.key : NULL);
        def.ssh_port = remote ? o.port : 0;
        connect_line = fleet_connect_command(&def);
        reg.defs = &def;
        reg.nr = 1;
        yaml = registry_format(&reg);
        jx_set(sug, "scheduler", jx_str(s));
        jx_set(sug, "transport", jx_str(remote ? "ssh" : "local"));
        jx_set(sug, "host", jx_str(remote ? o.host : NULL));
        jx_set(sug, "ssh_user", jx_str(def.ssh_user));
        jx_set(sug, "ssh_key", jx_str(def.ssh_key));
        jx_set(sug, "ssh_port", remote ? json_integer(o.port) : json_null());
        jx_set(sug, "connect_command", jx_str(connect_line));
        jx_set(sug, "clusters_yaml", jx_str(yaml));
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
            printf("Nothing was registered. To register it (PENDING "
                   "until a sysadmin approves it):\n  %s\n",
                   connect_line);
            printf("or add this entry to clusters.yaml (then 'exa hpc "
                   "approve %s'):\n",
                   def.name);
            /* indented two blanks, as the lines above */
            for (const char *p = yaml; *p; p++) {
                if (p == yaml || p[-1] == '\n')
                    fputs("  ", stdout);
                putchar(*p);
            }
            printf("or, for one shell, the environment:\n");
            json_object_foreach(env, k, v)
            {
                struct strbuf q = STRBUF_INIT;
                if (json_is_integer(v))
                    strbuf_addf(&q, "%lld", (long long)json_integer_value(v));
                else
                    shquote_append(&q, json_string_value(v));
                printf("  export %s=%s\n", k, q.buf);
                strbuf_release(&q);
            }
            json_decref(sug);
        }
        free(connect_line);
        free(yaml);
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
        if (fleet_snapshot_save(st, o.cluster, &inv, &err) < 0) {
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
            char c[32], m[32], g[32], *parts = fleet_join(&n->partitions);
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

/* ---- connect ---- */

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
    exa_error_t err = EXA_ERROR_INIT;
    if (sched && !strcmp(sched, "mock")) {
        inv->caps.scheduler = xstrdup("mock");
        inv->caps.available = 1;
        strvec_push(&inv->caps.notes, "mock scheduler: nothing probed");
        return 0;
    }
    if (fleet_probe_scanned(host, user, key, port, scan, sched, inv, &err) < 0)
        return out_error(ctx, &err, NULL);
    if (!inv->caps.available)
        return out_errorf(ctx, EXA_ESCHED,
                          "pass --scheduler slurm|flux|nvidia-smi|mock to "
                          "force one",
                          "no known scheduler or GPUs detected on '%s'; "
                          "nothing registered",
                          host);
    return 0;
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
    char *khpath = NULL, *caps = NULL;
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
    if (cluster_name_check(name ? name : host, name ? "--name" : "HOST", &err) <
        0)
        return out_error(ctx, &err,
                         name ? NULL : "name the cluster with --name NAME");
    if (!name)
        name = host;

    if (key && !(kfpr = fleet_client_key_fingerprint(key, &err))) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (!target_is_local(NULL, host) &&
        fleet_keyscan(host, port, &scan, &hfpr, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
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
    req.transport = target_is_local(NULL, host) ? "local" : "ssh";
    req.host = host;
    req.ssh_user = user;
    req.ssh_port = port;
    req.ssh_key = key;
    req.key_fingerprint = kfpr;
    req.host_key_fingerprint = hfpr;
    req.capabilities = caps;
    /* Pin the host key before the row says so. */
    if (hfpr && !(khpath = fleet_pin_host_key(name, &scan, &err))) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (gov_connect(st, regpath, &req, actor, &res, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    /* The inventory just probed is this cluster's, from its own host. */
    if (inv.nnodes && fleet_snapshot_save(st, name, &inv, &err) < 0)
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
    free(khpath);
    free(caps);
    inventory_release(&inv);
    if (st)
        close_fleet(st, regpath);
    else
        free(regpath);
    return rc;
}
