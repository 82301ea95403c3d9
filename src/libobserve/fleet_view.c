/*
 * fleet_view.c - ACTIVE clusters and their node snapshots, read from
 * platform.db through libstore's accessors, plus the exporter-port
 * overrides of clusters.yaml.
 *
 * Observability only reads the fleet, and must keep working when the
 * scheduler is unreachable: everything here comes from the saved snapshot
 * (the `nodes` table written by discovery), ordered by name so that an
 * unchanged fleet always produces the same targets file. Connection
 * fields come from the table, which holds the identity a sysadmin
 * approved; clusters.yaml (read through libfleet's registry) only adds the
 * site facts that are not identity: exporter ports and tenant.
 */
#include "libobserve/fleet_view.h"

#include <stdlib.h>
#include <string.h>

#include "libfleet/governance.h"
#include "libfleet/registry.h"
#include "libstore/clusters.h"
#include "libstore/nodes.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* The snapshot of c from libstore's nodes accessor (strings moved). */
static int load_nodes(store_t *st, struct fv_cluster *c, exa_error_t *err)
{
    struct node_row *rows = NULL;
    size_t n = 0;
    if (store_nodes_list(st, c->name, &rows, &n, err) < 0)
        return -1;
    c->nodes = xcalloc(n ? n : 1, sizeof(*c->nodes));
    for (size_t i = 0; i < n; i++) {
        struct fv_node *d = &c->nodes[c->nr_nodes++];
        struct node_row *r = &rows[i];
        d->name = r->node ? r->node : xstrdup("");
        d->cpus = r->cpus > 0 ? r->cpus : 0;
        d->mem_mb = r->mem_mb > 0 ? r->mem_mb : 0;
        d->gpus = r->gpus > 0 ? r->gpus : 0;
        d->gpus_used = r->gpus_used;
        d->gpu_model = r->gpu_model;
        d->state = r->state;
        d->flags = r->flags;
        d->partitions = r->partitions;
        d->addr = r->addr;
        r->node = r->gpu_model = r->state = r->flags = r->partitions = NULL;
        r->addr = NULL;
    }
    node_rows_free(rows, n);
    return 0;
}

int fv_fleet_load(store_t *st, const char *only, int all_states,
                  const char *registry, struct fv_fleet *out, exa_error_t *err)
{
    return fv_fleet_load_ex(st, only, all_states, 1, registry, out, err);
}

int fv_fleet_load_ex(store_t *st, const char *only, int all_states,
                     int with_nodes, const char *registry, struct fv_fleet *out,
                     exa_error_t *err)
{
    size_t alloc = 0, nrows = 0;
    char *reg = registry ? xstrdup(registry) : registry_default_path(NULL);
    struct cluster_row *rows = NULL;

    memset(out, 0, sizeof(*out));
    if (store_cluster_list(st, &rows, &nrows, err) < 0) {
        free(reg);
        return -1;
    }
    for (size_t i = 0; i < nrows; i++) {
        struct cluster_row *r = &rows[i];
        struct fv_cluster *c;
        exa_error_t verr = EXA_ERROR_INIT;
        /* A row that disagrees with its audit chain (changed behind exa's
         * back) is PENDING here as at every gate: the exporter and the
         * file_sd targets never show it ACTIVE. */
        if (r->state && !strcmp(r->state, "ACTIVE") &&
            governance_verify_cluster(st, r, &verr) < 0 &&
            verr.code == EXA_ENOTAPPROVED) {
            free(r->state);
            r->state = xstrdup("PENDING");
        }
        if ((only && strcmp(r->name, only)) ||
            (!all_states && (!r->state || strcmp(r->state, "ACTIVE"))))
            continue;
        ALLOC_GROW(out->clusters, out->nr + 1, alloc);
        c = &out->clusters[out->nr++];
        memset(c, 0, sizeof(*c));
        c->name = r->name;
        c->scheduler = r->scheduler;
        c->transport = r->transport;
        c->host = r->host;
        c->state = r->state;
        c->ssh_port = r->port;
        c->ssh_user = r->ssh_user;
        c->ssh_key = r->ssh_key;
        r->name = r->scheduler = r->transport = r->host = r->state = NULL;
        r->ssh_user = r->ssh_key = NULL;
        c->node_port = FV_NODE_EXPORTER_PORT;
        c->dcgm_port = FV_DCGM_EXPORTER_PORT;
    }
    for (size_t i = 0; i < nrows; i++)
        cluster_row_release(&rows[i]);
    free(rows);
    for (size_t i = 0; i < out->nr; i++) {
        struct fv_cluster *c = &out->clusters[i];
        if (with_nodes && load_nodes(st, c, err) < 0)
            goto fail;
    }
    if (reg && fv_registry_apply(reg, out, err) < 0)
        goto fail;
    free(reg);
    return 0;
fail:
    free(reg);
    fv_fleet_release(out);
    return -1;
}

void fv_fleet_release(struct fv_fleet *f)
{
    for (size_t i = 0; i < f->nr; i++) {
        struct fv_cluster *c = &f->clusters[i];
        for (size_t j = 0; j < c->nr_nodes; j++) {
            struct fv_node *n = &c->nodes[j];
            free(n->name);
            free(n->gpu_model);
            free(n->state);
            free(n->flags);
            free(n->partitions);
            free(n->addr);
        }
        free(c->nodes);
        free(c->name);
        free(c->scheduler);
        free(c->transport);
        free(c->host);
        free(c->state);
        free(c->ssh_user);
        free(c->ssh_key);
        free(c->tenant);
    }
    free(f->clusters);
    memset(f, 0, sizeof(*f));
}

/* ---- clusters.yaml ---- */

int fv_registry_apply(const char *path, struct fv_fleet *f, exa_error_t *err)
{
    struct registry reg = REGISTRY_INIT;
    if (registry_load(path, &reg, err) < 0)
        return -1;
    for (size_t i = 0; i < f->nr; i++) {
        struct fv_cluster *c = &f->clusters[i];
        const struct cluster_def *d = registry_find(&reg, c->name);
        c->node_port = cluster_def_node_exporter_port(d);
        c->dcgm_port = cluster_def_dcgm_exporter_port(d);
        free(c->tenant);
        c->tenant = d && d->tenant && *d->tenant ? xstrdup(d->tenant) : NULL;
    }
    registry_release(&reg);
    return 0;
}
