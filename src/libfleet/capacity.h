/*
 * capacity.h - per ACTIVE cluster: total and idle GPUs and nodes from the
 * inventory snapshot (the placement node rules), utilization, and the
 * GPU-/CPU-hours recorded in the jobs table for that cluster (by cluster,
 * not by scheduler name: two Slurm clusters never share hours), priced at
 * GPU_COST_PER_HOUR (2.50) and CPU_COST_PER_HOUR (0.05)
 * (doc/reference.md §4.9, §4.11).
 */
#ifndef EXA_CAPACITY_H
#define EXA_CAPACITY_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "libstore/store.h"
#include "libutil/error.h"

#define CAPACITY_GPU_COST_PER_HOUR 2.50
#define CAPACITY_CPU_COST_PER_HOUR 0.05

struct capacity_row {
    char *name;
    char *scheduler;
    int total_gpus, idle_gpus;
    int total_nodes, idle_nodes;
    double utilization_pct; /* 100 * (total - idle) / total, 1 dp; 0 */
    double gpu_hours_used;  /* 2 dp */
    double cpu_hours_used;  /* 2 dp */
    double cost_usd;        /* gpu_h * gpu rate + cpu_h * cpu rate, 2 dp */
    double age_s;           /* age of the node snapshot in seconds; -1
                               unknown (no snapshot or no captured_at) */
    time_t captured_at;     /* oldest captured_at of the snapshot; 0 */
    int stale;              /* no snapshot, unknown age, or older than the
                               limit (place_max_age_from_env()) */
};

/*
 * A rate from the environment variable name: a finite non-negative number,
 * else def (the reference's fallback for invalid values).
 */
double capacity_rate_from_env(const char *name, double def);

/*
 * The GPU-hours and CPU-hours recorded for cluster: per job, gpu_hours
 * when recorded, else gpus * run_seconds / 3600 (likewise CPUs). 0 or -1.
 */
int capacity_hours(store_t *st, const char *cluster, double *gpu_hours,
                   double *cpu_hours, exa_error_t *err);

/*
 * Capacity of every ACTIVE cluster of the merged fleet at regpath (NULL:
 * the default), sorted by name. *rows caller-freed with
 * capacity_rows_free. 0 or -1 with err.
 */
int capacity_report(store_t *st, const char *regpath,
                    struct capacity_row **rows, size_t *n, exa_error_t *err);
void capacity_rows_free(struct capacity_row *rows, size_t n);

/* The list of `exa hpc capacity --json` (new reference): per cluster
 * name, scheduler, total/idle GPUs and nodes, utilization_pct,
 * gpu_hours_used, cpu_hours_used, cost_usd, snapshot_age_s (integer
 * seconds or null), captured_at (ISO-8601 UTC or null) and stale. */
json_t *capacity_json(const struct capacity_row *rows, size_t n);

#endif
