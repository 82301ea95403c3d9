/*
 * cost.h - what a model version cost: cost providers and the model_costs
 * table (shared/REFERENCE.md §2.3, §4.11; doc/finops.md).
 *
 * A cost provider turns GPU-hours and CPU-core-hours into US dollars. The
 * hours are never estimated here: they come from the job row the version
 * was trained by (model_versions.job_ref -> jobs.gpu_hours, cpu_hours),
 * which the scheduler's own accounting filled in (sacct, Flux eventlog).
 * A NULL there means "not recorded" and stays so: such a version gets no
 * cost row rather than a made-up number.
 */
#ifndef EXA_COST_H
#define EXA_COST_H

#include <stddef.h>

#include "libstore/store.h"
#include "libutil/error.h"

/* Defaults of the reference, USD per hour, overridden by the env vars
 * GPU_COST_PER_HOUR and CPU_COST_PER_HOUR. */
#define COST_GPU_RATE_DEFAULT 2.50
#define COST_CPU_RATE_DEFAULT 0.05
/* tiered-example: GPU-hours above the threshold are discounted. */
#define COST_TIER_THRESHOLD_DEFAULT 100.0
#define COST_TIER_DISCOUNT_DEFAULT 0.2

/* The provider used when neither --provider nor EXAMLOPS_COST_PROVIDER
 * names one. */
#define COST_PROVIDER_DEFAULT "flat-rate"

struct cost_params {
    double gpu_rate;       /* USD per GPU-hour, >= 0 */
    double cpu_rate;       /* USD per CPU-core-hour, >= 0 */
    double tier_threshold; /* GPU-hours billed at the full rate (tiered) */
    double tier_discount;  /* fraction off above the threshold, 0..1 */
};

struct cost_provider {
    const char *name;        /* canonical name, stored in model_costs */
    const char *alias;       /* another accepted name, or NULL */
    const char *methodology; /* one line for `exa finops cost providers` */
    /*
     * Unrounded USD for gpu_h GPU-hours and cpu_h CPU-core-hours, both
     * finite and >= 0 (cost_compute() checks before calling).
     */
    double (*price)(const struct cost_params *p, double gpu_h, double cpu_h);
};

/* The providers, NULL-terminated, in display order. */
extern const struct cost_provider *const cost_providers[];

/* Provider by canonical name or alias; NULL when unknown. */
const struct cost_provider *cost_provider_find(const char *name);

/*
 * The provider to use: flag (--provider) when not NULL, else
 * $EXAMLOPS_COST_PROVIDER when set and non-empty, else flat-rate. Returns
 * NULL with err: EXA_EUSAGE for an unknown flag value, EXA_ECONFIG for an
 * unknown env value. The message lists the known names.
 */
const struct cost_provider *cost_provider_resolve(const char *flag,
                                                  exa_error_t *err);

/* The reference defaults (2.50, 0.05, 100 h, 0.2). */
void cost_params_default(struct cost_params *p);

/*
 * Defaults overridden by $GPU_COST_PER_HOUR and $CPU_COST_PER_HOUR (USD
 * per hour, decimal). Returns 0, or -1 with err (EXA_ECONFIG) naming the
 * variable when a value is not a finite number >= 0; p is then untouched.
 */
int cost_params_from_env(struct cost_params *p, exa_error_t *err);

/*
 * *usd = round(prov->price(p, gpu_h, cpu_h), 4). Returns 0, or -1 with
 * err (EXA_EUSAGE) when an hour value is negative or not finite; *usd is
 * then untouched.
 */
int cost_compute(const struct cost_provider *prov, const struct cost_params *p,
                 double gpu_h, double cpu_h, double *usd, exa_error_t *err);

/* x rounded half away from zero to dp decimal places (0..9). */
double cost_round(double x, int dp);

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
 * has no such version. -1 with err (EXA_ECONFIG) on a database error.
 */
int cost_usage_list(store_t *st, const char *model, long long version,
                    struct cost_usage **out, size_t *n, exa_error_t *err);
void cost_usage_free(struct cost_usage *u, size_t n);

/*
 * Record (model, u->version, provider) with usd in model_costs, with
 * INSERT ... ON CONFLICT DO UPDATE on the table's UNIQUE key, so
 * recording again never adds a row; recorded_at changes only when a value
 * did. Unrecorded hours are stored as NULL. *changed (may be NULL) is set
 * to 1 when a row was added or a value changed. -1 with err (EXA_ECONFIG).
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

/*
 * The model_costs rows of model, by version then provider. *out is
 * malloc'ed (cost_rows_free), *n may be 0. -1 with err (EXA_ECONFIG).
 */
int cost_rows_list(store_t *st, const char *model, struct cost_row **out,
                   size_t *n, exa_error_t *err);
void cost_rows_free(struct cost_row *r, size_t n);

/* Totals per (model, provider), so two providers never add up. */
struct cost_summary {
    char *model, *provider;
    long long n_runs; /* versions with a cost row */
    double total_gpu_hours, total_cost_usd;
};

/* All (model, provider) totals, sorted by model then provider. *out is
 * malloc'ed (cost_summary_free). -1 with err (EXA_ECONFIG). */
int cost_summary_list(store_t *st, struct cost_summary **out, size_t *n,
                      exa_error_t *err);
void cost_summary_free(struct cost_summary *s, size_t n);

#endif
