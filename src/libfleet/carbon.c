/*
 * carbon.c - carbon providers, signal types and carbon_records.
 *
 * The three providers are the reference's static ones (REFERENCE §4.12):
 * each is a formula over hours and a handful of published defaults, so
 * they live in one table and share validation. A provider without a CPU
 * term refuses CPU-hours instead of dropping them: an estimate that
 * silently ignores part of its input would understate the footprint.
 */
#include "libfleet/carbon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libstore/audit.h"
#include "libstore/finops.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"

/* ---- signal types ---- */

static const char *const accounting_methods[] = {
    "average_grid_mix",
    "static_default",
    "operator_supplied",
    "residual_mix",
    NULL,
};
static const char *const decision_methods[] = {
    "locational_marginal",
    "marginal_emissions",
    "short_run_marginal",
    NULL,
};

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

enum carbon_signal_type carbon_signal_classify(const char *method)
{
    if (!method)
        return CARBON_SIGNAL_UNKNOWN;
    if (in_list(method, accounting_methods))
        return CARBON_SIGNAL_ACCOUNTING;
    if (in_list(method, decision_methods))
        return CARBON_SIGNAL_DECISION;
    return CARBON_SIGNAL_UNKNOWN;
}

const char *carbon_signal_type_name(enum carbon_signal_type t)
{
    switch (t) {
    case CARBON_SIGNAL_ACCOUNTING:
        return "accounting";
    case CARBON_SIGNAL_DECISION:
        return "decision";
    default:
        return "unknown";
    }
}

/* ---- providers ---- */

static double green_kwh(const struct carbon_params *p, double gpu_h,
                        double cpu_h)
{
    return (gpu_h * p->gpu_tdp_w + cpu_h * p->cpu_tdp_w) / 1000.0 * p->pue;
}

static void green_power(const struct carbon_params *p, double *gpu_w,
                        double *cpu_w)
{
    *gpu_w = p->gpu_tdp_w;
    *cpu_w = p->cpu_tdp_w;
}

/* Per GPU-hour the host draws GPU + CPU + RAM power (CodeCarbon's model
 * with TDP figures instead of measured ones). */
static double codecarbon_kwh(const struct carbon_params *p, double gpu_h,
                             double cpu_h)
{
    double watts = p->gpu_tdp_w + p->cpu_tdp_w + p->ram_gb * p->ram_w_per_gb;
    return gpu_h * watts / 1000.0 * p->pue;
}

static void codecarbon_power(const struct carbon_params *p, double *gpu_w,
                             double *cpu_w)
{
    *gpu_w = p->gpu_tdp_w;
    *cpu_w = p->cpu_tdp_w;
}

/* Cloud Carbon Footprint style: an energy coefficient per GPU-hour. */
static double ccf_kwh(const struct carbon_params *p, double gpu_h, double cpu_h)
{
    return gpu_h * p->kwh_per_gpu_h * p->pue;
}

static void ccf_power(const struct carbon_params *p, double *gpu_w,
                      double *cpu_w)
{
    *gpu_w = p->kwh_per_gpu_h * 1000.0; /* the coefficient as average W */
    *cpu_w = NAN;
}

static const struct carbon_provider green_ai = {
    "green-ai-default",
    "static",
    "(gpu_h x gpu_tdp + cpu_h x cpu_tdp) / 1000 x PUE x grid intensity",
    0.30,
    1,
    green_kwh,
    green_power,
};

static const struct carbon_provider codecarbon_like = {
    "codecarbon-like",
    "static",
    "gpu_h x (gpu_tdp + cpu_tdp + ram_gb x ram_w_per_gb) / 1000 x PUE x "
    "grid intensity",
    0.25,
    0,
    codecarbon_kwh,
    codecarbon_power,
};

static const struct carbon_provider ccf_like = {
    "ccf-like", "static", "gpu_h x kwh_per_gpu_h x PUE x grid intensity",
    0.30,       0,        ccf_kwh,
    ccf_power,
};

const struct carbon_provider *const carbon_providers[] = {
    &green_ai,
    &codecarbon_like,
    &ccf_like,
    NULL,
};

const struct carbon_provider *carbon_provider_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; carbon_providers[i]; i++)
        if (!strcmp(carbon_providers[i]->name, name))
            return carbon_providers[i];
    return NULL;
}

static void known_names(struct strbuf *sb)
{
    for (size_t i = 0; carbon_providers[i]; i++)
        strbuf_addf(sb, "%s%s", i ? ", " : "", carbon_providers[i]->name);
}

const struct carbon_provider *carbon_provider_resolve(const char *flag,
                                                      exa_error_t *err)
{
    const char *env = getenv("EXAMLOPS_CARBON_PROVIDER");
    const struct carbon_provider *c;
    struct strbuf names = STRBUF_INIT;
    if (flag) {
        if ((c = carbon_provider_find(flag)))
            return c;
        known_names(&names);
        exa_err(err, EXA_EUSAGE,
                "unknown carbon provider '%s': expected one of %s", flag,
                names.buf);
        strbuf_release(&names);
        return NULL;
    }
    if (env && *env) {
        if ((c = carbon_provider_find(env)))
            return c;
        known_names(&names);
        exa_err(err, EXA_ECONFIG,
                "EXAMLOPS_CARBON_PROVIDER names unknown carbon provider "
                "'%s': expected one of %s",
                env, names.buf);
        strbuf_release(&names);
        return NULL;
    }
    return carbon_provider_find(CARBON_PROVIDER_DEFAULT);
}

void carbon_params_default(struct carbon_params *p)
{
    p->grid_intensity = CARBON_GRID_DEFAULT;
    p->pue = CARBON_PUE_DEFAULT;
    p->gpu_tdp_w = CARBON_GPU_TDP_DEFAULT;
    p->cpu_tdp_w = CARBON_CPU_TDP_DEFAULT;
    p->ram_gb = CARBON_RAM_GB_DEFAULT;
    p->ram_w_per_gb = CARBON_RAM_W_PER_GB_DEFAULT;
    p->kwh_per_gpu_h = CARBON_KWH_PER_GPU_H_DEFAULT;
    p->method = NULL;
}

static int check_nonneg(const char *what, double v, exa_error_t *err)
{
    if (!isfinite(v) || v < 0)
        return exa_err(err, EXA_EUSAGE, "%s must be a number >= 0, got %g",
                       what, v);
    return 0;
}

int carbon_estimate(const struct carbon_provider *prov,
                    const struct carbon_params *p, double gpu_h, double cpu_h,
                    struct carbon_result *out, exa_error_t *err)
{
    struct carbon_result r;
    double kwh;
    if (check_nonneg("GPU-hours", gpu_h, err) < 0 ||
        check_nonneg("CPU-hours", cpu_h, err) < 0 ||
        check_nonneg("grid intensity", p->grid_intensity, err) < 0 ||
        check_nonneg("GPU TDP", p->gpu_tdp_w, err) < 0 ||
        check_nonneg("CPU TDP", p->cpu_tdp_w, err) < 0 ||
        check_nonneg("RAM size", p->ram_gb, err) < 0 ||
        check_nonneg("RAM power", p->ram_w_per_gb, err) < 0 ||
        check_nonneg("energy coefficient", p->kwh_per_gpu_h, err) < 0)
        return -1;
    if (!isfinite(p->pue) || p->pue < 1.0)
        return exa_err(err, EXA_EUSAGE, "PUE must be a number >= 1, got %g",
                       p->pue);
    if (gpu_h <= 0 && cpu_h <= 0)
        return exa_err(err, EXA_EFAIL,
                       "nothing to account for: no GPU-hours and no "
                       "CPU-hours");
    if (cpu_h > 0 && !prov->has_cpu_term)
        return exa_err(err, EXA_EFAIL,
                       "carbon provider '%s' has no CPU-hours term: %g "
                       "CPU-hours would go unaccounted",
                       prov->name, cpu_h);
    kwh = prov->energy_kwh(p, gpu_h, cpu_h);
    /* Finite inputs can still overflow (1e308 GPU-hours): refuse rather
     * than print or store an estimate of null. */
    if (!isfinite(kwh) || !isfinite(kwh * p->grid_intensity))
        return exa_err(err, EXA_EUSAGE,
                       "the estimate is out of range: %g GPU-hours and %g "
                       "CPU-hours overflow",
                       gpu_h, cpu_h);
    memset(&r, 0, sizeof(r));
    r.provider = prov;
    r.gpu_hours = gpu_h;
    r.cpu_hours = cpu_h;
    /* Not rounded: a short job's few Wh must not round to 0; output
     * prints 15 significant digits, which hides binary noise. */
    r.kwh = kwh;
    r.co2e_g = kwh * p->grid_intensity;
    r.grid_intensity = p->grid_intensity;
    r.pue = p->pue;
    prov->power(p, &r.gpu_power_w, &r.cpu_power_w);
    r.params = *p;
    if (p->method && *p->method)
        snprintf(r.method, sizeof(r.method), "%s", p->method);
    else
        snprintf(r.method, sizeof(r.method), "%s",
                 p->grid_intensity == CARBON_GRID_DEFAULT
                     ? "static_default"
                     : "operator_supplied");
    r.params.method = NULL; /* borrowed pointer: do not keep it */
    r.signal_type = carbon_signal_classify(r.method);
    *out = r;
    return 0;
}

/* ---- JSON ---- */

json_t *carbon_inputs_json(const struct carbon_result *r)
{
    const struct carbon_params *p = &r->params;
    const char *name = r->provider->name;
    json_t *o = json_object();
    jx_set(o, "grid_intensity", jx_real(r->grid_intensity));
    jx_set(o, "pue", jx_real(r->pue));
    if (!strcmp(name, "ccf-like")) {
        jx_set(o, "kwh_per_gpu_h", jx_real(p->kwh_per_gpu_h));
        return o;
    }
    jx_set(o, "gpu_tdp_w", jx_real(p->gpu_tdp_w));
    jx_set(o, "cpu_tdp_w", jx_real(p->cpu_tdp_w));
    if (!strcmp(name, "codecarbon-like")) {
        jx_set(o, "ram_gb", jx_real(p->ram_gb));
        jx_set(o, "ram_w_per_gb", jx_real(p->ram_w_per_gb));
    }
    return o;
}

json_t *carbon_result_json(const struct carbon_result *r)
{
    json_t *o = json_object(), *sig = json_object();
    int is_default = !strcmp(r->method, "static_default");
    jx_set(o, "gpu_hours", jx_real(r->gpu_hours));
    jx_set(o, "cpu_hours", jx_real(r->cpu_hours));
    jx_set(o, "kwh", jx_real(r->kwh));
    jx_set(o, "co2e_g", jx_real(r->co2e_g));
    jx_set(o, "provider", jx_str(r->provider->name));
    jx_set(o, "methodology", jx_str(r->provider->methodology));
    jx_set(o, "uncertainty", jx_real(r->provider->uncertainty));
    jx_set(sig, "grams_per_kwh", jx_real(r->grid_intensity));
    jx_set(sig, "signal_type", jx_str(carbon_signal_type_name(r->signal_type)));
    jx_set(sig, "method", jx_str(r->method));
    jx_set(sig, "zone", NULL);
    jx_set(sig, "source", jx_str(is_default ? "default" : "operator"));
    jx_set(sig, "fetched_at", NULL);
    jx_set(o, "signal", sig);
    jx_set(o, "inputs", carbon_inputs_json(r));
    return o;
}

/* ---- the database ---- */

int carbon_record_insert(store_t *st, const char *model, long long version,
                         const char *run_id, const struct carbon_result *r,
                         long long *id, int *changed, exa_error_t *err)
{
    struct carbon_rec rec;
    json_t *inputs = carbon_inputs_json(r);
    char *inputs_s = jx_dumps_canonical(inputs);
    int rc;
    json_decref(inputs);
    memset(&rec, 0, sizeof(rec));
    rec.model = model;
    rec.version = version;
    rec.run_id = run_id;
    rec.provider = r->provider->name;
    rec.gpu_hours = r->gpu_hours;
    rec.cpu_hours = r->cpu_hours;
    rec.kwh = r->kwh;
    rec.co2e_g = r->co2e_g;
    rec.grid_intensity = r->grid_intensity;
    rec.pue = r->pue;
    rec.gpu_power_w = r->gpu_power_w;
    rec.cpu_power_w = r->cpu_power_w;
    rec.signal_type = carbon_signal_type_name(r->signal_type);
    rec.signal_method = r->method;
    rec.inputs = inputs_s;
    rc = store_carbon_put(st, &rec, id, changed, err);
    free(inputs_s);
    return rc;
}

int carbon_totals_get(store_t *st, const char *model, struct carbon_totals *out,
                      exa_error_t *err)
{
    return store_carbon_totals(st, model, &out->n, &out->kwh, &out->co2e_g,
                               err);
}

int carbon_record(store_t *st, const char *model, long long version,
                  const char *run_id, const struct carbon_result *r,
                  const char *source, const char *actor, long long *id,
                  int *changed, exa_error_t *err)
{
    json_t *details;
    int ch = 0;
    if (store_begin(st, err) < 0)
        return -1;
    if (carbon_record_insert(st, model, version, run_id, r, id, &ch, err) < 0)
        goto fail;
    if (ch) {
        details = carbon_result_json(r);
        json_object_del(details, "methodology");
        jx_set(details, "version", jx_int_or_null(version >= 0, version));
        if (audit_append(st, source, actor, "carbon_recorded", model, details,
                         err) < 0) {
            json_decref(details);
            goto fail;
        }
        json_decref(details);
    }
    if (store_commit(st, err) < 0)
        goto fail;
    if (changed)
        *changed = ch;
    return 0;
fail:
    store_rollback(st);
    return -1;
}
