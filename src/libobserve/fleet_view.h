/*
 * fleet_view.h - the read-only view of the fleet that observability needs:
 * ACTIVE clusters with their saved node snapshots (platform.db `clusters`
 * and `nodes` tables, doc/design.md §4), and the per-cluster exporter
 * ports from clusters.yaml.
 *
 * It reads the tables with its own SQL so prometheus-sd and the exporter
 * do not depend on the fleet layer's accessors; the schema is migration 1
 * of src/libstore/store.c.
 */
#ifndef EXA_FLEET_VIEW_H
#define EXA_FLEET_VIEW_H

#include <stddef.h>

#include "libstore/store.h"
#include "libutil/error.h"

#define FV_NODE_EXPORTER_PORT 9100 /* node_exporter's registered port */
#define FV_DCGM_EXPORTER_PORT 9400 /* dcgm-exporter's default port */

struct fv_node {
    char *name;
    int cpus;
    long long mem_mb;
    int gpus;         /* 0 for a node without GPUs */
    int gpus_used;    /* -1 when unknown */
    char *gpu_model;  /* NULL when unknown */
    char *state;      /* normalized: idle, allocated, mixed, down, ... */
    char *flags;      /* NULL or text as stored */
    char *partitions; /* NULL or comma list */
    char *addr;       /* Slurm NodeAddr when it differs from name, or NULL */
};

struct fv_cluster {
    char *name;
    char *scheduler; /* slurm, flux, mock, unknown */
    char *transport; /* local, ssh */
    char *host;
    char *state;           /* PENDING, ACTIVE, REJECTED */
    int ssh_port;          /* as approved (the table's identity) */
    char *ssh_user;        /* or NULL */
    char *ssh_key;         /* a path, or NULL */
    int node_port;         /* node_exporter port (clusters.yaml override) */
    int dcgm_port;         /* dcgm-exporter port (clusters.yaml override) */
    char *tenant;          /* clusters.yaml `tenant`, or NULL */
    struct fv_node *nodes; /* sorted by name */
    size_t nr_nodes;
};

struct fv_fleet {
    struct fv_cluster *clusters; /* sorted by name */
    size_t nr;
};

/*
 * Load the clusters of st (all of them when all_states, else only ACTIVE
 * ones; only `only` when it is not NULL) with their node snapshots, and
 * apply fv_registry_apply() with registry (a clusters.yaml path, or NULL
 * for libfleet's default path).
 * Returns 0 with *out filled (free with fv_fleet_release()), or -1 with
 * err: EXA_ECONFIG for a database or registry error.
 */
int fv_fleet_load(store_t *st, const char *only, int all_states,
                  const char *registry, struct fv_fleet *out, exa_error_t *err);
/* Like fv_fleet_load(); with_nodes 0 leaves every cluster's nodes empty
 * (the exporter only needs the cluster list each interval). */
int fv_fleet_load_ex(store_t *st, const char *only, int all_states,
                     int with_nodes, const char *registry, struct fv_fleet *out,
                     exa_error_t *err);
void fv_fleet_release(struct fv_fleet *f);

/*
 * Apply the site facts of the clusters.yaml at path (libfleet registry:
 * node_exporter_port, dcgm_exporter_port, tenant) to every cluster of f;
 * a missing file means defaults (9100, 9400, no tenant). Returns 0 or -1
 * with err (EXA_ECONFIG) for an unreadable or invalid file.
 */
int fv_registry_apply(const char *path, struct fv_fleet *f, exa_error_t *err);

#endif
