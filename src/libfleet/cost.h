/*
 * cost.h - what a model version cost: cost providers and the model_costs
 * table (doc/reference.md §2.3, §4.11; doc/finops.md).
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

#include "libstore/finops.h"
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

/* What cost_record_model() did with one version. */
enum cost_outcome {
    COST_RECORDED = 0, /* costed from GPU- and CPU-hours */
    COST_GPU_ONLY,     /* CPU-hours not recorded: GPU-hours only */
    COST_CPU_ONLY,     /* GPU-hours not recorded: CPU-hours only */
    COST_NO_JOB,       /* no job on record: skipped */
    COST_NO_HOURS,     /* neither hours recorded: skipped */
};

struct cost_version_outcome {
    long long version;
    enum cost_outcome outcome;
    int changed;         /* the row was added or a value changed */
    double usd;          /* the cost recorded (not for skipped ones) */
    const char *job_id;  /* borrowed from the report; may be NULL */
    const char *cluster; /* likewise */
};

struct cost_record_report {
    struct cost_version_outcome *v; /* one per version, ascending */
    size_t n;
    size_t recorded, changed; /* versions costed / of them changed */
    struct cost_usage *usage; /* owned: what v[] borrows from */
    size_t nusage;
};
/* Free r's arrays (r itself is not freed); safe after any return. */
void cost_record_report_release(struct cost_record_report *r);

/*
 * Cost every version of model with prov and params p and store the rows
 * (cost_record(), one per version and provider) in one transaction that
 * also appends one audit event "cost_recorded" (source, actor; details:
 * provider, changed versions, rates) when something changed. Versions
 * without a job or without hours are skipped and reported in out (which
 * this initialises). Returns 0, or -1 with err: EXA_ENOTFOUND when model
 * has no version, EXA_EFAIL when no version has recorded hours (nothing
 * stored), EXA_ECONFIG on a database error (everything rolled back).
 */
int cost_record_model(store_t *st, const char *model,
                      const struct cost_provider *prov,
                      const struct cost_params *p, const char *source,
                      const char *actor, struct cost_record_report *out,
                      exa_error_t *err);

/* The model_costs accessors (struct cost_usage, cost_usage_list(),
 * cost_record(), cost_rows_list(), cost_summary_list()) are in
 * libstore/finops.h, included above. */

#endif
