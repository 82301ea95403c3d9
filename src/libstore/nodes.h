/*
 * nodes.h - typed access to the `nodes` table: the latest inventory
 * snapshot of each cluster, one row per (cluster, node).
 *
 * A snapshot replaces all of a cluster's rows in one transaction, so a
 * reader sees the old or the new inventory, never a mix. Placement reads
 * these rows; captured_at lets it refuse or flag stale data.
 */
#ifndef EXA_STORE_NODES_H
#define EXA_STORE_NODES_H

#include <stddef.h>

#include "libstore/store.h"

/* One node. Strings owned or NULL; integers -1 when unknown (NULL). */
struct node_row {
    char *cluster;
    char *node;
    char *scheduler;
    int cpus;
    long long mem_mb;
    int gpus;      /* total GPUs (0 when none) */
    int gpus_used; /* from GresUsed; -1 unknown */
    char *gpu_model;
    char *state;       /* idle|allocated|mixed|down|drain|unknown */
    char *raw_state;   /* scheduler's token, e.g. "idle*" */
    char *flags;       /* comma-separated flag words, or NULL */
    char *partitions;  /* comma-separated, or NULL */
    char *addr;        /* where the node is reached (Slurm NodeAddr), or
                        * NULL: its name */
    char *captured_at; /* ISO-8601 UTC */
    /* Nodes this row stands for: 1 (or 0) for a node row, the count of a
     * store_node_summary_list() row. */
    long long count;
};

void node_row_release(struct node_row *row);

/*
 * The node summary of one cluster (NULL: every cluster), ordered by
 * cluster: node rows grouped by what placement reads (captured_at, state,
 * gpus, gpus_used, cpus), each with count = the nodes it stands for. The
 * summary is kept current by triggers on the nodes table (migration 7),
 * so it always agrees with the rows: a state other than idle or mixed
 * reads as "other" with gpus_used and cpus -1 (placement only counts
 * such a node and its GPUs), a NULL number as -1. node, scheduler and
 * the other text fields are NULL. A row's cluster, captured_at and
 * state may be the very string of the row before it (one copy per run of
 * equal values): free the array with node_rows_free(), never a row
 * alone. 0 or -1 with err.
 */
int store_node_summary_list(store_t *st, const char *cluster,
                            struct node_row **rows, size_t *n,
                            exa_error_t *err);
/* Release n rows and free the array (a cluster, captured_at or state
 * string a row shares with the row before it is freed once). */
void node_rows_free(struct node_row *rows, size_t n);

/*
 * Replace cluster's snapshot with rows[0..n) (their cluster field is
 * ignored; captured_at NULL means now). Runs its own transaction unless
 * one is open. 0 or -1 with err.
 */
int store_nodes_replace(store_t *st, const char *cluster, const char *scheduler,
                        const struct node_row *rows, size_t n,
                        exa_error_t *err);

/*
 * The snapshot of cluster (all clusters when NULL), ordered by cluster then
 * node. *rows is caller-freed with node_rows_free. 0 or -1.
 */
int store_nodes_list(store_t *st, const char *cluster, struct node_row **rows,
                     size_t *n, exa_error_t *err);

#endif
