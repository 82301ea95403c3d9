/*
 * placement.h - choose the ACTIVE cluster a job should run on, and say
 * why (doc/reference.md §4.8, with the fixes of §6.5, §6.11).
 *
 * Capacity comes from the latest inventory snapshot (libstore/nodes.h),
 * judged per node:
 *   - only `idle` and `mixed` nodes offer anything (`down`, `drain`,
 *     `allocated`, `unknown` offer nothing; a not-responding `idle*` is
 *     already `down` after normalization, doc/formats.md);
 *   - a node's free GPUs are gpus - gpus_used (GresUsed); a `mixed` node
 *     whose use is unknown offers none; an `idle` node offers all;
 *   - an ask of G GPUs on N nodes fits when at least N usable nodes each
 *     have ceil(G/N) free GPUs (and ceil(C/N) CPUs when their count is
 *     known), so 8 one-GPU nodes do not fit an 8-GPU single-node job.
 * Scorers are a small vtable; the ranking is: fitting before not fitting,
 * scorer objective available before unavailable, score descending, then
 * the least-loaded score, then name. JSON never carries NaN or Infinity
 * (a non-fitting candidate's score is null).
 */
#ifndef EXA_PLACEMENT_H
#define EXA_PLACEMENT_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "libstore/nodes.h"
#include "libstore/store.h"
#include "libutil/error.h"

struct fleet; /* libfleet/governance.h */

#define PLACE_DEFAULT_MAX_AGE_S 300

struct place_ask {
    int gpus;  /* job total */
    int cpus;  /* job total */
    int nodes; /* >= 1 */
    /* the partition (Flux: queue) the job is submitted to, borrowed, or
     * NULL: the whole cluster. The caller restricts each candidate's nodes
     * to it (place_restrict_partition()); place_choose() only names it. */
    const char *partition;
};

/* One ACTIVE cluster with its snapshot (all borrowed). */
struct place_cluster {
    const char *name;
    const char *scheduler;
    const struct node_row *nodes;
    size_t nnodes;
    int has_carbon_intensity; /* declared in clusters.yaml */
    double carbon_intensity;  /* gCO2e/kWh */
    int has_cost_per_gpu_hour;
    double cost_per_gpu_hour; /* USD */
    /* nodes in the cluster's whole snapshot (place_load_candidates()), so
     * that a cluster with none in the asked partition is not taken for
     * one without a snapshot; 0 unknown */
    long long snapshot_nodes;
    /* the partition nodes were restricted to (place_restrict_partition()),
     * "" for the whole snapshot; partition_default: it is the cluster's
     * default partition, not one the ask named */
    char partition[256];
    int partition_default;
};

/* Capacity of one snapshot, per the node rules above. */
struct place_capacity {
    int total_nodes, idle_nodes, usable_nodes;
    int total_gpus, idle_gpus; /* idle_gpus: free GPUs on usable nodes */
    int fit_nodes;             /* usable nodes that fit the per-node ask */
    int per_node_gpus;         /* ceil(G/N) */
    int per_node_cpus;         /* ceil(C/N) */
    double age_s;              /* now - oldest captured_at; -1 unknown */
    time_t captured_at;        /* oldest captured_at (epoch s); 0 unknown */
};

struct place_candidate {
    char *name;
    char *scheduler;
    struct place_capacity cap;
    int fits;
    int objective_available;  /* the scorer's input was declared */
    double score;             /* NAN when it does not fit */
    double headroom;          /* least-loaded score, the tie-break */
    double margin_to_best;    /* best score - score; NAN when no score */
    int stale;                /* snapshot older than max_age_s */
    long long snapshot_nodes; /* place_cluster's */
    char *partition;          /* place_cluster's, or NULL (whole cluster) */
    int partition_default;    /* place_cluster's */
    char *why;                /* one line: why it fits / does not */
};

/* A scorer: name and the score of a fitting candidate. */
struct place_scorer {
    const char *name;      /* "least-loaded", "carbon-aware", ... */
    const char *objective; /* "headroom", "carbon", "cost" */
    /* Higher is better; set *available = 0 when the input is missing. */
    double (*score)(const struct place_candidate *c,
                    const struct place_cluster *cl, const struct place_ask *ask,
                    int *available);
};

/* The scorer named name (NULL or "" gives least-loaded), or NULL. */
const struct place_scorer *place_scorer_find(const char *name);
/* NULL-terminated list of all scorers (for help and errors). */
const struct place_scorer *const *place_scorers(void);

/*
 * Capacity of one snapshot for ask at time now (captured_at parsed as
 * ISO-8601 UTC). Pure.
 */
void place_capacity_of(const struct node_row *nodes, size_t n,
                       const struct place_ask *ask, time_t now,
                       struct place_capacity *out);

struct place_result {
    struct place_candidate *cands; /* ranked, best first */
    size_t n;
    int chosen;   /* index into cands, -1 when nothing fits */
    char *reason; /* "chose slurm@testa — 3/4 idle GPUs, 1/1 idle nodes" */
    const struct place_scorer *scorer;
    struct place_ask ask;
    int max_age_s;
    int objective_unavailable; /* count of fitting candidates without it */
};

/*
 * Rank clusters[0..n) (ACTIVE ones only; the caller filters) for ask with
 * scorer (NULL: least-loaded). max_age_s <= 0 disables the age check;
 * stale snapshots are flagged in the candidate's why and the reason, and
 * still scored. Returns 0, or -1 with err (EXA_EUSAGE) for a bad ask.
 * Release res with place_result_release().
 */
int place_choose(const struct place_cluster *clusters, size_t n,
                 const struct place_ask *ask, const struct place_scorer *scorer,
                 int max_age_s, time_t now, struct place_result *res,
                 exa_error_t *err);
void place_result_release(struct place_result *res);

/*
 * The JSON document of `exa hpc place --json`: {"cluster" (or null),
 * "reason", "candidates": [...], "objectives_unavailable": [...],
 * "objectives": {...}} plus "explain" when explain. New reference.
 */
json_t *place_result_json(const struct place_result *res, int explain);

struct strvec;
struct jsonw;
/*
 * The members of place_result_json(res, explain) after
 * place_json_mark_stale(..., failed, errors) has marked its "candidates"
 * (key "name") and, with explain, those of "explain" (key "cluster"),
 * written to w inside an object the caller opened (and closes, after any
 * members of its own): the bytes jx_dumpf() writes for that document,
 * without a json_t per value (1,000 candidates were a fifth of `exa hpc
 * place`). failed and errors as for place_json_mark_stale.
 */
void place_result_write(struct jsonw *w, const struct place_result *res,
                        int explain, const struct strvec *failed,
                        const struct strvec *errors);

/*
 * Mark the clusters a stale-snapshot refresh could not refresh: for each
 * object of the JSON array arr (borrowed; NULL or a non-array is a no-op)
 * whose member key names a cluster in failed, set "stale": true and
 * "stale_error" to the matching entry of errors (failed->v[i] pairs with
 * errors->v[i], as fleet_refresh_stale() fills them); every other object
 * gets "stale_error": null. Used by `exa hpc place|capacity --json` and by
 * the views the REST API and MCP serve, so all show the same document.
 */
void place_json_mark_stale(json_t *arr, const char *key,
                           const struct strvec *failed,
                           const struct strvec *errors);

/*
 * The snapshot age limit: $EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S when a
 * non-negative integer, else 300.
 */
int place_max_age_from_env(void);

/* t (epoch seconds) as a JSON string "YYYY-MM-DDTHH:MM:SSZ" (UTC), or
 * JSON null when t <= 0 (unknown). New reference. */
json_t *place_iso_or_null(time_t t);

/*
 * The placement candidates of fleet f (governance.h fleet_load()): one
 * place_cluster per ACTIVE cluster, in f's order (sorted by name), carrying
 * the clusters.yaml carbon/cost declarations and its rows of the latest
 * inventory snapshot in st. The rows are the node summary
 * (store_node_summary_list over all clusters: a few rows per cluster, each
 * standing for count nodes, which place_capacity_of weighs), ordered by
 * cluster (SQLite's BINARY collation, i.e. strcmp order, the same order
 * as f) and split among the clusters in one merge pass; the capacities,
 * choice and explanations are those of the node rows themselves. `exa hpc
 * place` and `exa pipeline run --cluster auto` both build their candidates
 * here, so they choose alike. Returns 0 with *out (n = *nout, possibly 0 and
 * NULL) and *nodes (n = *nnodes); the names in *out are borrowed from f and the
 * node pointers from *nodes: free *out with free() and *nodes with
 * node_rows_free() after the last use of *out. -1 with err (database
 * error) and nothing to free.
 */
int place_load_candidates(store_t *st, const struct fleet *f,
                          struct place_cluster **out, size_t *nout,
                          struct node_row **nodes, size_t *nnodes,
                          exa_error_t *err);

/* The most names a partition list may hold (sbatch -p a,b,...). */
#define PLACE_PARTITIONS_MAX 16

/*
 * Restrict each candidate of cands[0..n) (place_load_candidates() of the
 * fleet f) to the nodes a job asking for partition goes to, by the
 * partitions list of each of its summary rows (store_node_summary_list():
 * the nodes' own lists as sinfo printed them, or Flux's queues):
 *   - partition given (a Slurm partition or Flux queue name): its nodes
 *     there; none when the cluster has no node in it (it then fits
 *     nothing, and its why says so);
 *   - partition a list "a,b" (sbatch -p: the job starts in whichever
 *     can run it first): the nodes in any of them (a job runs in one
 *     partition, so a multi-node ask may be over-counted across two);
 *   - partition NULL: the cluster's default partition, where sbatch (or
 *     flux batch) puts a job that names none: the partition its recorded
 *     capabilities (clusters.capabilities, from discovery) mark default,
 *     when that partition did not hold every node of the cluster; else
 *     (no partitions recorded, none marked default, or a default holding
 *     them all) the whole snapshot stays. A site's job_submit plugin may
 *     route such a job elsewhere: `hpc preflight` checks that live.
 * The node rules are unchanged, so the choice is the one the partition's
 * own node rows give. Each restricted candidate's partition names it
 * (partition_default set for a default); snapshot_nodes is kept. *rows
 * (n = *nrows) holds the restricted rows, copies whose strings are the
 * summary rows': free it with free() (not node_rows_free()) after the
 * last use of cands; the strings go with the rows of
 * place_load_candidates(). 0, or -1 with err (EXA_EUSAGE: partition is
 * not place_partition_check()'s; cands unchanged, nothing to free).
 * SBATCH_PARTITION, which sbatch takes for a job naming none, is not
 * seen here (`hpc preflight` reads it where sbatch runs).
 */
int place_restrict_partition(const struct fleet *f, const char *partition,
                             struct place_cluster *cands, size_t n,
                             struct node_row **rows, size_t *nrows,
                             exa_error_t *err);

/*
 * Check the partition an ask names: 1 to 255 bytes, a name or at most
 * PLACE_PARTITIONS_MAX names separated by ',' (sbatch(1) --partition
 * takes a list), each non-empty, without a space or control byte. 0, or -1 with
 * err (EXA_EUSAGE: "partition 'X' is not a partition name: ...").
 */
int place_partition_check(const char *partition, exa_error_t *err);

/* Parse "YYYY-MM-DDTHH:MM:SSZ" (or with a space, no Z) as UTC; -1 bad. */
time_t place_parse_utc(const char *s);

#endif
