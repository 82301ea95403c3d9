/*
 * fleet_view.c - ACTIVE clusters and their node snapshots, read with plain
 * SQL from platform.db, plus the exporter-port overrides of clusters.yaml.
 *
 * Observability only reads the fleet, and must keep working when the
 * scheduler is unreachable: everything here comes from the saved snapshot
 * (the `nodes` table written by discovery), ordered by name so that an
 * unchanged fleet always produces the same targets file. The YAML reader
 * looks up two optional integer keys and ignores everything else, so the
 * registry's own fields stay the fleet layer's business.
 */
#include "libobserve/fleet_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

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

static char *default_registry(void)
{
    const char *e = getenv("EXAMLOPS_HPC_REGISTRY");
    const char *home = getenv("HOME");
    if (e && *e)
        return xstrdup(e);
    if (home && *home)
        return xstrfmt("%s/.config/examlops/clusters.yaml", home);
    return NULL;
}

int fv_fleet_load(store_t *st, const char *only, int all_states,
                  const char *registry, struct fv_fleet *out,
                  exa_error_t *err)
{
    size_t alloc = 0;
    int rc;
    char *reg = registry ? xstrdup(registry) : default_registry();
    sqlite3_stmt *s;

    memset(out, 0, sizeof(*out));
    s = store_prepare(st,
                      "SELECT name, scheduler, transport, host, state"
                      " FROM clusters WHERE (?1 IS NULL OR name = ?1)"
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
        if (load_nodes(st, c, err) < 0)
            goto fail;
        if (reg && fv_registry_ports(reg, c->name, &c->node_port,
                                     &c->dcgm_port, err) < 0)
            goto fail;
    }
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
    }
    free(f->clusters);
    memset(f, 0, sizeof(*f));
}

/* ---- clusters.yaml ---- */

static int scalar_is(yaml_node_t *n, const char *s)
{
    return n && n->type == YAML_SCALAR_NODE &&
           n->data.scalar.length == strlen(s) &&
           !memcmp(n->data.scalar.value, s, n->data.scalar.length);
}

/* Value node of key in mapping m, or NULL. */
static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *m,
                            const char *key)
{
    if (!m || m->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
         p < m->data.mapping.pairs.top; p++)
        if (scalar_is(yaml_document_get_node(d, p->key), key))
            return yaml_document_get_node(d, p->value);
    return NULL;
}

/* The definition mapping of cluster name, or NULL. */
static yaml_node_t *find_cluster(yaml_document_t *d, const char *name)
{
    yaml_node_t *root = yaml_document_get_root_node(d);
    yaml_node_t *c = map_get(d, root, "clusters");
    if (!c)
        c = root;
    if (!c)
        return NULL;
    if (c->type == YAML_MAPPING_NODE)
        return map_get(d, c, name);
    if (c->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = c->data.sequence.items.start;
             it < c->data.sequence.items.top; it++) {
            yaml_node_t *item = yaml_document_get_node(d, *it);
            if (scalar_is(map_get(d, item, "name"), name))
                return item;
        }
    }
    return NULL;
}

static int read_port(yaml_document_t *d, yaml_node_t *def, const char *key,
                     const char *path, int *port, exa_error_t *err)
{
    yaml_node_t *v = map_get(d, def, key);
    char buf[32], *end;
    long x;
    if (!v)
        return 0;
    if (v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0 ||
        v->data.scalar.length >= sizeof(buf))
        return exa_err(err, EXA_ECONFIG, "registry '%s': '%s' is not a port",
                       path, key);
    memcpy(buf, v->data.scalar.value, v->data.scalar.length);
    buf[v->data.scalar.length] = '\0';
    errno = 0;
    x = strtol(buf, &end, 10);
    if (errno || *end || x < 1 || x > 65535)
        return exa_err(err, EXA_ECONFIG,
                       "registry '%s': %s '%s' is not a port (1-65535)",
                       path, key, buf);
    *port = (int)x;
    return 0;
}

int fv_registry_ports(const char *path, const char *name, int *node_port,
                      int *dcgm_port, exa_error_t *err)
{
    FILE *fp = fopen(path, "rb");
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_node_t *def;
    int rc = 0;

    if (!fp) {
        if (errno == ENOENT)
            return 0;
        return exa_err(err, EXA_ECONFIG, "cannot read registry '%s': %s",
                       path, strerror(errno));
    }
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, fp);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = exa_err(err, EXA_ECONFIG, "registry '%s' line %zu: %s", path,
                     parser.problem_mark.line + 1,
                     parser.problem ? parser.problem : "invalid YAML");
        yaml_parser_delete(&parser);
        fclose(fp);
        return rc;
    }
    def = find_cluster(&doc, name);
    if (def) {
        if (read_port(&doc, def, "node_exporter_port", path, node_port,
                      err) < 0 ||
            read_port(&doc, def, "dcgm_exporter_port", path, dcgm_port,
                      err) < 0)
            rc = -1;
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(fp);
    return rc;
}
