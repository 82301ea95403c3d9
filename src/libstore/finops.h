/*
 * finops.h - typed access to the FinOps tables of platform.db:
 * model_costs, carbon_records, and the job-hour sums that capacity,
 * costing and the exporter read (doc/design.md §4; doc/finops.md).
 *
 * All SQL of cost, carbon, capacity and the exporter's store families is
 * here, so libfleet and libobserve hold none (doc/architecture.md). Every
 * function returns 0, or -1 with err (EXA_ECONFIG, "database 'PATH':
 * WHAT: <sqlite message>"); out arrays are malloc'ed and owned by the
 * caller, freed with the matching *_free().
 */
#ifndef EXA_STORE_FINOPS_H
#define EXA_STORE_FINOPS_H

#include <stddef.h>

#include "libstore/store.h"
#include "libutil/error.h"

/* ---- model_costs ---- */

/*
 * The hours of one model version, from its job row. Strings are owned
 * (NULL when unknown). For a mock job, GPU-hours are 0 by construction
 * and CPU-hours fall back to cpu_seconds / 3600 when that was recorded.
 */
struct cost_usage {
    long long version;
    char *cluster, *scheduler, *job_id, *run_uuid;
    int linked;           /* a job row was found for the version */
    int has_gpu, has_cpu; /* the value below was recorded */
    double gpu_hours, cpu_hours;
};

/*
 * The versions of model (all when version < 0, else that one), ascending,
 * each with its hours. The job row is the one model_versions.job_ref
 * names, else the one matching the version's (cluster, job_id). *out is a
 * malloc'ed array (cost_usage_free) of *n entries; *n is 0 when the model
 * has no such version.
 */
int cost_usage_list(store_t *st, const char *model, long long version,
                    struct cost_usage **out, size_t *n, exa_error_t *err);
void cost_usage_free(struct cost_usage *u, size_t n);

/*
 * Record (model, u->version, provider) with usd (USD) in model_costs, with
 * INSERT ... ON CONFLICT DO UPDATE on the table's UNIQUE key, so
 * recording again never adds a row; recorded_at changes only when a value
 * did. Unrecorded hours are stored as NULL. *changed (may be NULL) is set
 * to 1 when a row was added or a value changed.
 */
int cost_record(store_t *st, const char *model, const struct cost_usage *u,
                const char *provider, double usd, int *changed,
                exa_error_t *err);

/* One model_costs row; strings owned (NULL when the column is NULL). */
struct cost_row {
    char *model;
    long long version;
    char *provider, *cluster, *job_id, *run_uuid, *recorded_at;
    int has_gpu, has_cpu;
    double gpu_hours, cpu_hours, cost_usd;
};

/* The model_costs rows of model, by version then provider; *n may be 0. */
int cost_rows_list(store_t *st, const char *model, struct cost_row **out,
                   size_t *n, exa_error_t *err);
void cost_rows_free(struct cost_row *r, size_t n);

/* Totals per (model, provider), so two providers never add up. */
struct cost_summary {
    char *model, *provider;
    long long n_runs; /* versions with a cost row */
    double total_gpu_hours, total_cost_usd;
};

/* All (model, provider) totals, sorted by model then provider. */
int cost_summary_list(store_t *st, struct cost_summary **out, size_t *n,
                      exa_error_t *err);
void cost_summary_free(struct cost_summary *s, size_t n);

/* ---- carbon_records ---- */

/*
 * One carbon record as stored. Strings are borrowed by store_carbon_put();
 * numbers that are not finite are stored as NULL. version < 0: none.
 */
struct carbon_rec {
    const char *model;    /* required */
    long long version;    /* model version, < 0: none */
    const char *run_id;   /* may be NULL */
    const char *provider; /* required: the carbon provider's name */
    double gpu_hours, cpu_hours, kwh, co2e_g;
    double grid_intensity; /* gCO2e/kWh */
    double pue;
    double gpu_power_w, cpu_power_w;
    const char *signal_type;   /* "accounting", ... */
    const char *signal_method; /* "average_grid_mix", ... */
    const char *inputs;        /* canonical JSON text of the inputs */
};

/*
 * Record r: one row per (model, version, provider), version none counting
 * as one value (the UNIQUE index of migration 2), so recording the same
 * version with the same provider again never adds a row: the row's values
 * and ts are replaced when a value changed, else left as they are.
 * *id (may be NULL) gets the row's id; *changed (may be NULL) 1 when a
 * row was added or a value changed, 0 when everything was already so.
 */
int store_carbon_put(store_t *st, const struct carbon_rec *r, long long *id,
                     int *changed, exa_error_t *err);

/* Number of records and their summed kWh and gCO2e, of model (NULL: all). */
int store_carbon_totals(store_t *st, const char *model, long long *n,
                        double *kwh, double *co2e_g, exa_error_t *err);

/* ---- sums for capacity and the exporter ---- */

/*
 * The GPU-hours and CPU-hours recorded for cluster's jobs: per job,
 * gpu_hours when recorded, else gpus * run_seconds / 3600 (likewise CPUs);
 * 0 when none.
 */
int store_job_hours(store_t *st, const char *cluster, double *gpu_hours,
                    double *cpu_hours, exa_error_t *err);

/* One group of a GROUP BY count or sum; strings owned, "unknown" when the
 * column is NULL or empty. */
struct store_group {
    char *k[3];  /* the grouping columns (unused ones NULL) */
    double v[2]; /* the aggregates */
};
void store_groups_free(struct store_group *g, size_t n);

/* Clusters by state: k[0] state, v[0] count. */
int store_cluster_state_counts(store_t *st, struct store_group **out, size_t *n,
                               exa_error_t *err);
/* Jobs by cluster and state: k[0] cluster, k[1] state, v[0] count. */
int store_job_state_counts(store_t *st, struct store_group **out, size_t *n,
                           exa_error_t *err);
/* GPU-seconds of jobs with recorded gpu_hours, by cluster, model and
 * account (when the jobs table has an account column, else "unknown"):
 * k[0] cluster, k[1] model, k[2] account, v[0] seconds. */
int store_job_gpu_seconds(store_t *st, struct store_group **out, size_t *n,
                          exa_error_t *err);
/* Carbon records by model and provider: k[0] model, k[1] provider, v[0]
 * energy in joules (kWh * 3.6e6), v[1] gCO2e. */
int store_carbon_sums(store_t *st, struct store_group **out, size_t *n,
                      exa_error_t *err);

#endif
