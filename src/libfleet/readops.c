/*
 * readops.c - queue, snapshot save and stale-snapshot refresh of a
 * registered cluster (see readops.h). Moved here from cmd/ (hpc_place.c,
 * hpc_fleet_common.c) so no front end builds a transport or runs a
 * scheduler command itself.
 */
#include "libfleet/readops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/preflight.h"
#include "libdiscovery/probe.h"
#include "libfleet/connect.h"
#include "libfleet/gate.h"
#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libstore/nodes.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

/* Open name for reading through the gate (pinned host key checked). */
static struct gate *open_read(store_t *st, const char *regpath,
                              const char *name, exa_error_t *err)
{
    struct gate_req req;
    memset(&req, 0, sizeof(req));
    req.cluster = name;
    req.purpose = GATE_READ;
    req.st = st;
    req.regpath = regpath;
    return gate_open(&req, err);
}

int fleet_cluster_queue(store_t *st, const char *regpath, const char *name,
                        struct sched_queue *out, exa_error_t *err)
{
    struct gate *g;
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (!(g = open_read(st, regpath, name, err)))
        return -1;
    if (gate_sched(g) && (rc = sched_queue(gate_sched(g), out, err)) < 0)
        gate_check_error(g, err);
    gate_close(g);
    return rc;
}

char *fleet_join(const struct strvec *v)
{
    struct strbuf sb = STRBUF_INIT;
    if (!v->nr)
        return NULL;
    for (size_t i = 0; i < v->nr; i++)
        strbuf_addf(&sb, "%s%s", i ? "," : "", v->v[i]);
    return strbuf_detach(&sb, NULL);
}

int fleet_snapshot_save(store_t *st, const char *cluster,
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
        rows[i].addr = n->addr;
        rows[i].partitions = fleet_join(&n->partitions);
    }
    rc = store_nodes_replace(st, cluster, inv->caps.scheduler, rows,
                             inv->nnodes, err);
    for (size_t i = 0; i < inv->nnodes; i++)
        free(rows[i].partitions);
    free(rows);
    return rc;
}

int fleet_snapshot_refresh(store_t *st, const char *regpath, const char *name,
                           double timeout_s, size_t *nnodes, exa_error_t *err)
{
    struct gate *g;
    struct inventory inv;
    int rc = -1;
    memset(&inv, 0, sizeof(inv));
    if (!(g = open_read(st, regpath, name, err)))
        return -1;
    if (timeout_s > 0)
        gate_transport(g)->timeout_s = timeout_s;
    if (probe_inventory(gate_transport(g), gate_cluster(g)->def.scheduler, &inv,
                        err) < 0)
        gate_check_error(g, err);
    else if (fleet_snapshot_save(st, name, &inv, err) == 0) {
        if (nnodes)
            *nnodes = inv.nnodes;
        rc = 0;
    }
    inventory_release(&inv);
    gate_close(g);
    return rc;
}

int fleet_refresh_stale_of(store_t *st, const char *regpath,
                           const struct place_cluster *cands, size_t ncands,
                           int max_age_s, time_t now,
                           struct strvec *failed_names,
                           struct strvec *failed_errors)
{
    struct place_ask none = {0, 0, 1, NULL};
    int refreshed = 0;
    if (max_age_s <= 0)
        return 0;
    for (size_t i = 0; i < ncands; i++) {
        const struct place_cluster *c = &cands[i];
        struct place_capacity cap;
        exa_error_t rerr = EXA_ERROR_INIT;
        if (!probe_find(c->scheduler))
            continue;
        place_capacity_of(c->nodes, c->nnodes, &none, now, &cap);
        if (c->nnodes && cap.age_s >= 0 && cap.age_s <= max_age_s)
            continue;
        if (fleet_snapshot_refresh(st, regpath, c->name, 15, NULL, &rerr) ==
            0) {
            refreshed++;
        } else {
            if (failed_names)
                strvec_push(failed_names, c->name);
            if (failed_errors)
                strvec_push(failed_errors, rerr.text);
        }
    }
    return refreshed;
}

int fleet_refresh_stale(store_t *st, const char *regpath, const struct fleet *f,
                        int max_age_s, time_t now, struct strvec *failed_names,
                        struct strvec *failed_errors, exa_error_t *err)
{
    struct place_cluster *cands = NULL;
    struct node_row *sum = NULL;
    size_t ncands = 0, nsum = 0;
    int refreshed;
    if (max_age_s <= 0)
        return 0;
    /* one read of the node summary for the whole fleet, not one query
     * per cluster */
    if (place_load_candidates(st, f, &cands, &ncands, &sum, &nsum, err) < 0)
        return -1;
    refreshed = fleet_refresh_stale_of(st, regpath, cands, ncands, max_age_s,
                                       now, failed_names, failed_errors);
    free(cands);
    node_rows_free(sum, nsum);
    return refreshed;
}

/* The preflight work directory (see fleet_cluster_preflight). */
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

int fleet_cluster_preflight(const struct fleet_cluster *c,
                            const struct preflight_ask *ask,
                            const char *remote_exa,
                            struct preflight_report *rep, exa_error_t *err)
{
    struct preflight_target tg;
    struct preflight_ask a = *ask;
    struct transport *t;
    char *kh = NULL, *pinned = NULL, *workdir;
    memset(&tg, 0, sizeof(tg));
    if (!(t = fleet_cluster_transport(c, err)))
        return -1;
    tg.cluster = c->def.name;
    tg.scheduler = c->def.scheduler;
    tg.ssh = strcmp(t->ops->kind, "local") != 0;
    if (tg.ssh) {
        struct strbuf text = STRBUF_INIT;
        FILE *fp;
        char buf[4096];
        size_t n;
        kh = fleet_known_hosts_path(c->def.name);
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
    tg.remote_exa = remote_exa && *remote_exa ? remote_exa : "exa";
    if (!a.user)
        a.user = c->def.ssh_user;
    preflight_run(t, &tg, &a, rep);
    transport_close(t);
    free(kh);
    free(pinned);
    free(workdir);
    return 0;
}
