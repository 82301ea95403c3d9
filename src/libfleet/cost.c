/*
 * cost.c - cost providers (a small vtable, so a site's own price list is
 * one more entry) and the model_costs table.
 *
 * The reference appended a row on every `exa models cost --record` and
 * invented GPU-hours for mock jobs from an md5 of the model name
 * (doc/reference.md §6 item 16). Here a row is keyed by (model,
 * version, provider) and upserted, and hours are read from the job row
 * the scheduler's accounting filled in; a NULL stays NULL.
 */
#include "libfleet/cost.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libstore/audit.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* ---- providers ---- */

static double flat_price(const struct cost_params *p, double gpu_h,
                         double cpu_h)
{
    return gpu_h * p->gpu_rate + cpu_h * p->cpu_rate;
}

static double tiered_price(const struct cost_params *p, double gpu_h,
                           double cpu_h)
{
    double billed = gpu_h;
    if (gpu_h > p->tier_threshold)
        billed = p->tier_threshold +
                 (gpu_h - p->tier_threshold) * (1.0 - p->tier_discount);
    return billed * p->gpu_rate + cpu_h * p->cpu_rate;
}

static const struct cost_provider flat_rate = {
    "flat-rate",
    NULL,
    "gpu_hours x GPU_COST_PER_HOUR + cpu_hours x CPU_COST_PER_HOUR",
    flat_price,
};

static const struct cost_provider tiered_example = {
    "tiered-example",
    "tiered",
    "flat rate, GPU-hours above 100 h discounted by 20%",
    tiered_price,
};

const struct cost_provider *const cost_providers[] = {
    &flat_rate,
    &tiered_example,
    NULL,
};

const struct cost_provider *cost_provider_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; cost_providers[i]; i++) {
        const struct cost_provider *c = cost_providers[i];
        if (!strcmp(c->name, name) || (c->alias && !strcmp(c->alias, name)))
            return c;
    }
    return NULL;
}

static void known_names(struct strbuf *sb)
{
    for (size_t i = 0; cost_providers[i]; i++)
        strbuf_addf(sb, "%s%s", i ? ", " : "", cost_providers[i]->name);
}

const struct cost_provider *cost_provider_resolve(const char *flag,
                                                  exa_error_t *err)
{
    const char *env = getenv("EXAMLOPS_COST_PROVIDER");
    const struct cost_provider *c;
    struct strbuf names = STRBUF_INIT;
    if (flag) {
        if ((c = cost_provider_find(flag)))
            return c;
        known_names(&names);
        exa_err(err, EXA_EUSAGE,
                "unknown cost provider '%s': expected one of %s", flag,
                names.buf);
        strbuf_release(&names);
        return NULL;
    }
    if (env && *env) {
        if ((c = cost_provider_find(env)))
            return c;
        known_names(&names);
        exa_err(err, EXA_ECONFIG,
                "EXAMLOPS_COST_PROVIDER names unknown cost provider '%s': "
                "expected one of %s",
                env, names.buf);
        strbuf_release(&names);
        return NULL;
    }
    return cost_provider_find(COST_PROVIDER_DEFAULT);
}

void cost_params_default(struct cost_params *p)
{
    p->gpu_rate = COST_GPU_RATE_DEFAULT;
    p->cpu_rate = COST_CPU_RATE_DEFAULT;
    p->tier_threshold = COST_TIER_THRESHOLD_DEFAULT;
    p->tier_discount = COST_TIER_DISCOUNT_DEFAULT;
}

/* Read a rate from env var name into *out (unchanged when unset). */
static int env_rate(const char *name, double *out, exa_error_t *err)
{
    const char *s = getenv(name);
    char *end;
    double v;
    if (!s || !*s)
        return 0;
    errno = 0;
    v = strtod(s, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (errno || end == s || *end || !isfinite(v) || v < 0)
        return exa_err(err, EXA_ECONFIG,
                       "%s='%s' is not a number of USD per hour >= 0", name, s);
    *out = v;
    return 0;
}

int cost_params_from_env(struct cost_params *p, exa_error_t *err)
{
    struct cost_params q;
    cost_params_default(&q);
    if (env_rate("GPU_COST_PER_HOUR", &q.gpu_rate, err) < 0 ||
        env_rate("CPU_COST_PER_HOUR", &q.cpu_rate, err) < 0)
        return -1;
    *p = q;
    return 0;
}

double cost_round(double x, int dp)
{
    double scale = 1.0;
    double r;
    if (!isfinite(x))
        return x;
    for (int i = 0; i < dp && i < 9; i++)
        scale *= 10.0;
    r = round(x * scale) / scale;
    /* Avoid "-0" in output. */
    return r == 0.0 ? 0.0 : r;
}

int cost_compute(const struct cost_provider *prov, const struct cost_params *p,
                 double gpu_h, double cpu_h, double *usd, exa_error_t *err)
{
    if (!isfinite(gpu_h) || gpu_h < 0)
        return exa_err(err, EXA_EUSAGE,
                       "GPU-hours must be a number >= 0, got %g", gpu_h);
    if (!isfinite(cpu_h) || cpu_h < 0)
        return exa_err(err, EXA_EUSAGE,
                       "CPU-hours must be a number >= 0, got %g", cpu_h);
    *usd = cost_round(prov->price(p, gpu_h, cpu_h), 4);
    return 0;
}

/* ---- recording ---- */

void cost_record_report_release(struct cost_record_report *r)
{
    free(r->v);
    cost_usage_free(r->usage, r->nusage);
    memset(r, 0, sizeof(*r));
}

int cost_record_model(store_t *st, const char *model,
                      const struct cost_provider *prov,
                      const struct cost_params *p, const char *source,
                      const char *actor, struct cost_record_report *out,
                      exa_error_t *err)
{
    json_t *versions = NULL, *details = NULL;
    int rc = -1;
    memset(out, 0, sizeof(*out));
    if (cost_usage_list(st, model, -1, &out->usage, &out->nusage, err) < 0)
        return -1;
    if (!out->nusage)
        return exa_err(err, EXA_ENOTFOUND, "no versions found for model '%s'",
                       model);
    out->v = xcalloc(out->nusage, sizeof(*out->v));
    if (store_begin(st, err) < 0)
        return -1;
    versions = json_array();
    for (size_t i = 0; i < out->nusage; i++) {
        const struct cost_usage *u = &out->usage[i];
        struct cost_version_outcome *o = &out->v[out->n++];
        o->version = u->version;
        o->job_id = u->job_id;
        o->cluster = u->cluster;
        if (!u->linked) {
            o->outcome = COST_NO_JOB;
            continue;
        }
        if (!u->has_gpu && !u->has_cpu) {
            o->outcome = COST_NO_HOURS;
            continue;
        }
        o->outcome = !u->has_cpu   ? COST_GPU_ONLY
                     : !u->has_gpu ? COST_CPU_ONLY
                                   : COST_RECORDED;
        if (cost_compute(prov, p, u->has_gpu ? u->gpu_hours : 0,
                         u->has_cpu ? u->cpu_hours : 0, &o->usd, err) < 0 ||
            cost_record(st, model, u, prov->name, o->usd, &o->changed, err) < 0)
            goto fail;
        out->recorded++;
        if (o->changed) {
            out->changed++;
            json_array_append_new(versions, json_integer(u->version));
        }
    }
    if (!out->recorded) {
        exa_err(err, EXA_EFAIL,
                "no version of '%s' has recorded GPU- or CPU-hours; nothing "
                "to cost",
                model);
        goto fail;
    }
    if (out->changed) {
        details = json_object();
        jx_set(details, "provider", jx_str(prov->name));
        jx_set(details, "versions", json_incref(versions));
        jx_set(details, "gpu_rate_usd", jx_real(p->gpu_rate));
        jx_set(details, "cpu_rate_usd", jx_real(p->cpu_rate));
        if (audit_append(st, source, actor, "cost_recorded", model, details,
                         err) < 0)
            goto fail;
    }
    if (store_commit(st, err) < 0)
        goto fail;
    rc = 0;
    goto out;
fail:
    store_rollback(st);
out:
    json_decref(versions);
    json_decref(details);
    return rc;
}
