/*
 * sched_metrics.h - scheduler state (nodes and jobs of one cluster, as one
 * sinfo and one squeue saw them) turned into Prometheus families with the
 * names of the established Slurm exporters (vpenso/prometheus-slurm-exporter
 * and its SckyzO fork: slurm_nodes_*, slurm_cpus_*, slurm_gpus_*,
 * slurm_node_*, slurm_partition_*, slurm_queue_*, slurm_jobs_*,
 * slurm_account_*, slurm_user_*), so existing dashboards keep working, plus
 * slurm_job_info and slurm_node_job for joins with dcgm-exporter. Every
 * series carries a `cluster` label. Flux clusters get the same families
 * with the `flux_` prefix.
 *
 * The snapshot is scheduler-neutral and owned by the caller; the collector
 * fills it from whatever parser read the scheduler's output.
 */
#ifndef EXA_SCHED_METRICS_H
#define EXA_SCHED_METRICS_H

#include <stddef.h>

#include "libobserve/promtext.h"
#include "libutil/arena.h"
#include "libutil/strvec.h"

struct obs_node {
    char *name;
    char *state;     /* normalized: idle allocated mixed down drain unknown */
    char *raw_state; /* as printed (refines comp, maint, resv, ...), or NULL */
    struct strvec partitions;
    long long cpus;      /* total, -1 unknown */
    long long mem_mb;    /* configured, -1 unknown */
    long long gpus;      /* total, -1 unknown */
    long long gpus_used; /* -1 unknown */
    long long cpus_used; /* held by jobs (Flux's allocated set), -1 unknown */
    char *gpu_model;     /* or NULL */
};

struct obs_job {
    char *id;        /* as printed: "123", "123_4" */
    char *name;      /* or NULL */
    char *user;      /* or NULL */
    char *account;   /* or NULL */
    char *partition; /* as printed; pending jobs may list "a,b" */
    char *state;     /* normalized: PENDING RUNNING SUSPENDED COMPLETED ... */
    char *reason;    /* pending reason, or NULL */
    long long cpus;  /* -1 unknown */
    long long gpus;  /* -1 unknown */
    struct strvec nodes; /* expanded node names of a running job */
    /* 0: the strings above, the names in nodes and nodes.v are
     * malloc'ed, each freed by obs_snapshot_free(); 1: they live in the
     * snapshot's arena (strings) and go with it */
    int pooled;
};

struct obs_snapshot {
    struct obs_node *nodes;
    size_t nnodes, nodes_alloc;
    struct obs_job *jobs;
    size_t njobs, jobs_alloc;
    int have_nodes; /* the node command succeeded */
    int have_jobs;  /* the job command succeeded */
    /* the strings of pooled jobs: a collector of 100,000 jobs copies its
     * five short strings per job here instead of keeping five mallocs */
    struct arena strings;
};

/* Append a zeroed node/job (numbers -1, strvecs empty) and return it. */
struct obs_node *obs_snapshot_add_node(struct obs_snapshot *s);
struct obs_job *obs_snapshot_add_job(struct obs_snapshot *s);
/* Free what s owns; s is zeroed. */
void obs_snapshot_free(struct obs_snapshot *s);

/*
 * Add the families of one cluster's snapshot to set. prefix is "slurm"
 * or "flux". Node families are added only when s->have_nodes, job
 * families only when s->have_jobs, so a failed command leaves its series
 * out instead of reporting zeros. Metric names and labels are documented
 * in doc/observability-0242.md ("Metrics").
 */
void obs_render_sched(struct prom_set *set, const char *prefix,
                      const char *cluster, const struct obs_snapshot *s);

#endif
