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
 * gpus, gpus_used, cpus, partitions: the nodes' list as saved, "" for
 * none), each with count = the nodes it stands for,
 * grouped from the node rows themselves (migration 7's grouping), so it
 * always agrees with the rows: a state other than idle or mixed
 * reads as "other" with gpus_used and cpus -1 (placement only counts
 * such a node and its GPUs), a NULL number as -1. node, scheduler and
 * the other text fields are NULL. A row's cluster, captured_at, state
 * and partitions may be the very string of the row before it (one copy
 * per run of equal values): free the array with node_rows_free(), never
 * a row alone. 0 or -1 with err.
 *
 * For every cluster (cluster NULL) the rows come from
 * cluster_node_summary (migrations 12 to 14): one row per cluster
 * holding its summary rows as text, written by
 * store_cluster_summary_save() when a snapshot is saved and set to NULL
 * by triggers on any other write to the cluster's node rows (whoever
 * writes them); a cluster whose text is NULL (or not of that form) has
 * its node rows grouped, so the result is always the summary the node
 * rows give.
 */
int store_node_summary_list(store_t *st, const char *cluster,
                            struct node_row **rows, size_t *n,
                            exa_error_t *err);

/*
 * Write cluster's summary text (cluster_node_summary.rows, the form is
 * in nodes.c) from its node rows as they are now; NULL when a
 * row's strings hold a TAB or LF. store_nodes_replace() calls it inside
 * its transaction; call it inside one too, or the text may describe an
 * older snapshot than a concurrent writer's (the triggers then set it
 * NULL again). 0 or -1 with err.
 */
int store_cluster_summary_save(store_t *st, const char *cluster,
                               exa_error_t *err);

/*
 * The summary text of one cluster (cluster_node_summary.rows): rows[0..n)
 * (summary rows of one cluster, in key order) appended to sb as lines
 *   "@" CAPTURED_AT LF            before each run of one captured_at
 *   STATE TAB GPUS TAB GPUS_USED TAB CPUS TAB N TAB PARTITIONS LF
 * (a line per row; PARTITIONS the row's list, empty for NULL) with
 * decimal numbers. 0; -1 when a captured_at or state is NULL, a
 * captured_at, state or partitions holds a TAB or LF, or a state begins
 * with '@' (sb then holds part of a text: discard it).
 */
struct strbuf;
int node_summary_encode(const struct node_row *rows, size_t n,
                        struct strbuf *sb);

/*
 * Append the rows of summary text t[0..len) to (*v)[*nr..) (an
 * ALLOC_GROW array of *alloc rows), each with cluster a copy of
 * cluster_name shared by the cluster's rows (one copy, freed by
 * node_rows_free), captured_at, state and partitions shared along runs,
 * mem_mb -1, the other text fields NULL. 0; -1 when t is not
 * node_summary_encode's form (a row before any "@" line, an "@" line
 * with no row after it, a TAB in an "@" line, a NUL in a string, a
 * missing or extra field, a number out of range for its field, no LF at
 * the end), with *nr unchanged and nothing left allocated but *v.
 */
int node_summary_decode(const char *t, size_t len, const char *cluster_name,
                        struct node_row **v, size_t *nr, size_t *alloc);

/* store_cluster_summary_save() for every cluster that has a
 * cluster_node_summary row (the migration that adds the table). 0 or -1
 * with err. */
int store_cluster_summaries_rebuild(store_t *st, exa_error_t *err);
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
