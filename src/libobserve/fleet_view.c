/*
 * fleet_view.c - ACTIVE clusters and their node snapshots, read with plain
 * SQL from platform.db, plus the exporter-port overrides of clusters.yaml.
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

#include "libfleet/registry.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static int load_nodes(store_t *st, struct fv_cluster *c, exa_error_t *err)
{
    size_t alloc = 0;
    int rc;
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT node, cpus, mem_mb, gpus, gpus_used, gpu_model, state,"
        " flags, partitions FROM nodes WHERE cluster = ?1 ORDER BY node",
        err);
    if (!s)
        return -1;
    store_bind_text(s, 1, c->name);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct fv_node *n;
        ALLOC_GROW(c->nodes, c->nr_nodes + 1, alloc);
        n = &c->nodes[c->nr_nodes++];
        memset(n, 0, sizeof(*n));
        n->name = col_dup(s, 0);
        if (!n->name)
            n->name = xstrdup("");
        n->cpus = sqlite3_column_int(s, 1);
        n->mem_mb = sqlite3_column_int64(s, 2);
        n->gpus = sqlite3_column_int(s, 3);
        n->gpus_used = sqlite3_column_type(s, 4) == SQLITE_NULL
                           ? -1
                           : sqlite3_column_int(s, 4);
        n->gpu_model = col_dup(s, 5);
        n->state = col_dup(s, 6);
        n->flags = col_dup(s, 7);
        n->partitions = col_dup(s, 8);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "reading nodes");
    return 0;
}

int fv_fleet_load(store_t *st, const char *only, int all_states,
                  const char *registry, struct fv_fleet *out, exa_error_t *err)
{
    return fv_fleet_load_ex(st, only, all_states, 1, registry, out, err);
}

int fv_fleet_load_ex(store_t *st, const char *only, int all_states,
                     int with_nodes, const char *registry,
                     struct fv_fleet *out, exa_error_t *err)
{
    size_t alloc = 0;
    int rc;
    char *reg = registry ? xstrdup(registry) : registry_default_path(NULL);
    sqlite3_stmt *s;

    memset(out, 0, sizeof(*out));
    s = store_prepare(
        st,
        "SELECT name, scheduler, transport, host, state,"
        " port, ssh_user, ssh_key FROM clusters WHERE (?1 IS NULL OR name = ?1)"
        " AND (?2 OR state = 'ACTIVE') ORDER BY name",
        err);
    if (!s) {
        free(reg);
        return -1;
    }
    store_bind_text(s, 1, only);
    sqlite3_bind_int(s, 2, all_states);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct fv_cluster *c;
        ALLOC_GROW(out->clusters, out->nr + 1, alloc);
        c = &out->clusters[out->nr++];
        memset(c, 0, sizeof(*c));
        c->name = col_dup(s, 0);
        c->scheduler = col_dup(s, 1);
        c->transport = col_dup(s, 2);
        c->host = col_dup(s, 3);
        c->state = col_dup(s, 4);
        c->ssh_port = sqlite3_column_int(s, 5);
        c->ssh_user = col_dup(s, 6);
        c->ssh_key = col_dup(s, 7);
        c->node_port = FV_NODE_EXPORTER_PORT;
        c->dcgm_port = FV_DCGM_EXPORTER_PORT;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        store_err(st, err, "reading clusters");
        goto fail;
    }
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
