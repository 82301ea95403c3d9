/*
 * provreq.h - typed access to provision_requests (migration 6;
 * shared/WORKERS.md §9.3): one row per batch job the provisioner asks
 * for, written as an intent before sbatch runs, so a crash between the
 * two leaves a row whose unique job name finds the job again.
 */
#ifndef EXA_STORE_PROVREQ_H
#define EXA_STORE_PROVREQ_H

#include <stddef.h>

#include "libstore/store.h"

struct provreq {
    char *id, *provisioner, *cluster, *profile, *worker_id, *job_name, *jti;
    char *state; /* intent submitted attached failed timeout cancelled */
    char *job_id;
    double created_at, submitted_at, deadline_at, ended_at;
    char *reason, *detail;
};
void provreq_release(struct provreq *r);
void provreq_free_list(struct provreq *v, size_t n);

/* Insert r (borrowed) as an intent row. 0 or -1 with err. */
int store_provreq_insert(store_t *st, const struct provreq *r,
                         exa_error_t *err);
/* Set state (and job_id, submitted_at, ended_at when not NULL/0; reason
 * and detail when not NULL) of request id. 0 or -1. */
int store_provreq_update(store_t *st, const char *id, const char *state,
                         const char *job_id, double submitted_at,
                         double ended_at, const char *reason,
                         const char *detail, exa_error_t *err);
/* Requests of provisioner (NULL: all) in state (NULL: all; "live": intent
 * or submitted), newest first, at most limit (0: all). */
int store_provreq_list(store_t *st, const char *provisioner, const char *state,
                       long long limit, struct provreq **v, size_t *n,
                       exa_error_t *err);
/* The latest requests of one profile, newest first (the breaker reads
 * them). */
int store_provreq_recent(store_t *st, const char *provisioner,
                         const char *profile, long long limit,
                         struct provreq **v, size_t *n, exa_error_t *err);
/* 1 and *out when a request has job name name, 0 none, -1 err. */
int store_provreq_by_name(store_t *st, const char *name, struct provreq *out,
                          exa_error_t *err);
/* Mark request id attached (from intent or submitted); 0 or -1. */
int store_provreq_attach(store_t *st, const char *id, exa_error_t *err);

/*
 * Black-hole nodes (migration 10; WORKERS.md §9.4). A strike: kind
 * "failed_start" (ref: the request id) or "black_hole" (ref: the worker
 * id) on node (hostlist_node_ok) for (cluster, profile) at time at (s).
 * Refused with EXA_EUSAGE naming the node when it is not a node name or
 * kind is neither. 0 or -1 with err.
 */
int store_node_strike_add(store_t *st, const char *cluster, const char *profile,
                          const char *node, const char *kind, const char *ref,
                          double at, exa_error_t *err);

/* Strikes of one node: how many, their kinds ("black_hole,failed_start",
 * distinct, sorted) and the latest time. */
struct node_strikes {
    char *node, *kinds;
    long long count;
    double last_at;
};
void node_strikes_free(struct node_strikes *v, size_t n);
/*
 * The strikes of (cluster, profile) later than since and later than the
 * start of the node's latest exclusion (a strike counts toward one
 * exclusion only), grouped by node, ordered by node. *v caller-freed with
 * node_strikes_free. 0 or -1.
 */
int store_node_strikes_since(store_t *st, const char *cluster,
                             const char *profile, double since,
                             struct node_strikes **v, size_t *n,
                             exa_error_t *err);

/* One exclusion; strings owned. */
struct node_exclusion {
    char *cluster, *profile, *node, *reason;
    double since, until; /* s since the epoch */
};
void node_exclusions_free(struct node_exclusion *v, size_t n);
/* Exclude node from (cluster, profile) from since to until, replacing an
 * earlier exclusion of the same node. 0 or -1. */
int store_node_exclude(store_t *st, const char *cluster, const char *profile,
                       const char *node, const char *reason, double since,
                       double until, exa_error_t *err);
/* The exclusions in force at now (until > now) of cluster and profile
 * (NULL: any), ordered by cluster, profile, node. 0 or -1. */
int store_node_exclusions(store_t *st, const char *cluster, const char *profile,
                          double now, struct node_exclusion **v, size_t *n,
                          exa_error_t *err);
/* Forget strikes older than before and exclusions that ended before it.
 * 0 or -1. */
int store_node_strikes_prune(store_t *st, double before, exa_error_t *err);

/* One group of queued tasks of the same shape (WORKERS.md §9.2). */
struct task_shape {
    long long cpus, gpus, ram_mb, count;
    double timeout_s;
    char *labels;
    char *cluster; /* NULL: any cluster; else only this one's workers */
};
/* Queued tasks queued at or before since, grouped by shape. */
int store_task_shapes(store_t *st, double since, struct task_shape **v,
                      size_t *n, exa_error_t *err);
void task_shapes_free(struct task_shape *v, size_t n);
/* Set reason on the queued tasks of shape s (NULL reason clears). */
int store_task_shape_reason(store_t *st, const struct task_shape *s,
                            const char *reason, exa_error_t *err);

#endif
