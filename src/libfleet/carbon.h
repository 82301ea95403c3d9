/*
 * carbon.h - energy and CO2e of training: carbon providers, grid signal
 * types and the carbon_records table (doc/reference.md §2.4, §4.12;
 * doc/finops.md).
 *
 * A provider turns GPU-hours (and, if it has the term, CPU-core-hours)
 * into kWh; CO2e is kWh x grid intensity. Every record keeps the inputs
 * it was computed from (grid intensity, PUE, power figures) and the kind
 * of grid signal, so a report can be re-derived and audited later.
 *
 * Signal types follow the GHG Protocol split between accounting and
 * decision signals: reporting needs an accounting signal (an average or
 * residual mix, a static default, an operator figure); placement needs a
 * decision signal (marginal emissions). The type is derived from the
 * method name, never declared separately, so it cannot disagree with it.
 */
#ifndef EXA_CARBON_H
#define EXA_CARBON_H

#include <jansson.h>
#include <stddef.h>

#include "libstore/store.h"
#include "libutil/error.h"

/* Published defaults of the providers (REFERENCE §4.12). */
#define CARBON_GRID_DEFAULT 300.0    /* gCO2e per kWh */
#define CARBON_PUE_DEFAULT 1.5       /* facility overhead factor */
#define CARBON_GPU_TDP_DEFAULT 400.0 /* W per GPU */
#define CARBON_CPU_TDP_DEFAULT 120.0 /* W */
#define CARBON_RAM_GB_DEFAULT 32.0   /* codecarbon-like */
#define CARBON_RAM_W_PER_GB_DEFAULT 0.3725
#define CARBON_KWH_PER_GPU_H_DEFAULT 0.4 /* ccf-like energy coefficient */

/* The provider used when neither --provider nor EXAMLOPS_CARBON_PROVIDER
 * names one. */
#define CARBON_PROVIDER_DEFAULT "green-ai-default"

enum carbon_signal_type {
    CARBON_SIGNAL_UNKNOWN = 0,
    CARBON_SIGNAL_ACCOUNTING, /* average_grid_mix, static_default,
                                 operator_supplied, residual_mix */
    CARBON_SIGNAL_DECISION,   /* locational_marginal, marginal_emissions,
                                 short_run_marginal */
};

/* Type of a grid-signal method name; NULL or anything not listed above is
 * CARBON_SIGNAL_UNKNOWN, which passes neither guard. */
enum carbon_signal_type carbon_signal_classify(const char *method);
/* "accounting", "decision" or "unknown". */
const char *carbon_signal_type_name(enum carbon_signal_type t);

struct carbon_params {
    double grid_intensity; /* gCO2e per kWh, >= 0 */
    double pue;            /* >= 1 */
    double gpu_tdp_w;      /* W per GPU, >= 0 */
    double cpu_tdp_w;      /* W, >= 0 */
    double ram_gb;         /* codecarbon-like */
    double ram_w_per_gb;   /* codecarbon-like */
    double kwh_per_gpu_h;  /* ccf-like */
    /*
     * Grid-signal method (borrowed), or NULL: then "static_default" when
     * grid_intensity is the 300 g default, else "operator_supplied".
     */
    const char *method;
};

/* The defaults above, method NULL. */
void carbon_params_default(struct carbon_params *p);

struct carbon_provider {
    const char *name;        /* stored in carbon_records.provider */
    const char *kind;        /* "static" (no live feed) */
    const char *methodology; /* the formula, one line */
    double uncertainty;      /* relative, 0.30 = +-30% */
    int has_cpu_term;        /* accounts CPU-hours separately */
    /* kWh for finite hours >= 0 (checked by carbon_estimate()). */
    double (*energy_kwh)(const struct carbon_params *p, double gpu_h,
                         double cpu_h);
    /* Power figures the formula used (W); NAN where none applies. */
    void (*power)(const struct carbon_params *p, double *gpu_w, double *cpu_w);
};

/* The providers, NULL-terminated, in display order. */
extern const struct carbon_provider *const carbon_providers[];

/* Provider by name; NULL when unknown. */
const struct carbon_provider *carbon_provider_find(const char *name);

/*
 * The provider to use: flag (--provider) when not NULL, else
 * $EXAMLOPS_CARBON_PROVIDER when set and non-empty, else green-ai-default.
 * NULL with err: EXA_EUSAGE for an unknown flag value, EXA_ECONFIG for an
 * unknown env value, listing the known names.
 */
const struct carbon_provider *carbon_provider_resolve(const char *flag,
                                                      exa_error_t *err);

/* One estimate, with everything a record stores. */
struct carbon_result {
    const struct carbon_provider *provider;
    double gpu_hours, cpu_hours;
    double kwh;    /* energy, unrounded */
    double co2e_g; /* kwh x grid intensity, unrounded */
    double grid_intensity, pue;
    double gpu_power_w, cpu_power_w; /* NAN: not an input of the formula */
    struct carbon_params params;     /* the inputs, method resolved */
    char method[64];
    enum carbon_signal_type signal_type;
};

/*
 * Estimate energy and CO2e. Returns 0 and fills *out, or -1 with err:
 * EXA_EUSAGE when an hour value or parameter is negative or not finite
 * (or PUE < 1); EXA_EFAIL "nothing to account for: ..." when both hour
 * values are 0; EXA_EFAIL when cpu_h > 0 and the provider has no CPU term
 * (the CPU time would silently go unaccounted); EXA_EUSAGE when finite
 * inputs overflow the kWh or grams (never a non-finite result).
 */
int carbon_estimate(const struct carbon_provider *prov,
                    const struct carbon_params *p, double gpu_h, double cpu_h,
                    struct carbon_result *out, exa_error_t *err);

/*
 * New JSON object of the estimate, the reference's shape: {gpu_hours,
 * cpu_hours, kwh, co2e_g, provider, methodology, uncertainty, signal:
 * {grams_per_kwh, signal_type, method, zone, source, fetched_at}} plus
 * "inputs" (carbon_inputs_json). Non-finite numbers become null.
 */
json_t *carbon_result_json(const struct carbon_result *r);

/* New JSON object of the inputs: {grid_intensity, pue, gpu_tdp_w,
 * cpu_tdp_w, ram_gb, ram_w_per_gb, kwh_per_gpu_h} as the provider used
 * them (the ones its formula does not read are omitted). */
json_t *carbon_inputs_json(const struct carbon_result *r);

/*
 * Record the estimate r for model (version < 0: none; run_id may be NULL)
 * in carbon_records through store_carbon_put(): one row per (model,
 * version, provider), so recording the same version with the same
 * provider again adds no row (its values are replaced when they differ).
 * The caller may wrap it in store_begin()/store_commit() together with an
 * audit event. *id (may be NULL) gets the row id; *changed (may be NULL)
 * 1 when a row was added or changed. -1 with err (EXA_ECONFIG).
 */
int carbon_record_insert(store_t *st, const char *model, long long version,
                         const char *run_id, const struct carbon_result *r,
                         long long *id, int *changed, exa_error_t *err);

/*
 * Record the estimate r for model version (version < 0: none) as
 * carbon_record_insert() does, in one transaction with the audit event
 * "carbon_recorded" (source, actor; details: the estimate's JSON without
 * methodology, plus version), appended only when a row was added or
 * changed: recording the same version with the same provider and inputs
 * again changes nothing and adds no event. *id and *changed may be NULL.
 * -1 with err (EXA_ECONFIG), everything rolled back.
 */
int carbon_record(store_t *st, const char *model, long long version,
                  const char *run_id, const struct carbon_result *r,
                  const char *source, const char *actor, long long *id,
                  int *changed, exa_error_t *err);

struct carbon_totals {
    long long n;   /* records */
    double kwh;    /* sum of kwh */
    double co2e_g; /* sum of co2e_g */
};

/* Sum the records of model (NULL: all). -1 with err (EXA_ECONFIG). */
int carbon_totals_get(store_t *st, const char *model, struct carbon_totals *out,
                      exa_error_t *err);

#endif
