/*
 * cost.c - cost providers (a small vtable, so a site's own price list is
 * one more entry) and the model_costs table.
 *
 * The reference appended a row on every `exa models cost --record` and
 * invented GPU-hours for mock jobs from an md5 of the model name
 * (shared/REFERENCE.md §6 item 16). Here a row is keyed by (model,
 * version, provider) and upserted, and hours are read from the job row
 * the scheduler's accounting filled in; a NULL stays NULL.
 */
#include "libfleet/cost.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the database ---- */

static char *col_str(sqlite3_stmt *stmt, int i)
{
    const unsigned char *s = sqlite3_column_text(stmt, i);
    return s && sqlite3_column_type(stmt, i) != SQLITE_NULL
               ? xstrdup((const char *)s)
               : NULL;
}

static int col_real(sqlite3_stmt *stmt, int i, double *out)
{
    if (sqlite3_column_type(stmt, i) == SQLITE_NULL)
        return 0;
    *out = sqlite3_column_double(stmt, i);
    return 1;
}

/*
 * One row per version. The job is the one job_ref names, else the one with
 * the version's (cluster, job_id): a version registered before job_ref was
 * filled in still finds its accounting.
 */
static const char usage_sql[] =
    "SELECT mv.version, COALESCE(j.cluster, mv.cluster),"
    "  COALESCE(j.scheduler, mv.scheduler), COALESCE(j.job_id, mv.job_id),"
    "  COALESCE(mv.run_uuid, j.run_uuid), j.id IS NOT NULL,"
    "  j.gpu_hours, j.cpu_hours, j.cpu_seconds"
    " FROM model_versions mv"
    " LEFT JOIN jobs j ON j.id = COALESCE(mv.job_ref,"
    "   (SELECT j2.id FROM jobs j2 WHERE j2.cluster = mv.cluster"
    "      AND j2.job_id = mv.job_id))"
    " WHERE mv.model = ?1 AND (?2 < 0 OR mv.version = ?2)"
    " ORDER BY mv.version";

int cost_usage_list(store_t *st, const char *model, long long version,
                    struct cost_usage **out, size_t *n, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(st, usage_sql, err);
    struct cost_usage *arr = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, model);
    sqlite3_bind_int64(stmt, 2, version);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        struct cost_usage *u;
        double cpu_s;
        arr = xgrow(arr, sizeof(*arr), nr + 1, &alloc);
        u = &arr[nr++];
        memset(u, 0, sizeof(*u));
        u->version = sqlite3_column_int64(stmt, 0);
        u->cluster = col_str(stmt, 1);
        u->scheduler = col_str(stmt, 2);
        u->job_id = col_str(stmt, 3);
        u->run_uuid = col_str(stmt, 4);
        u->linked = sqlite3_column_int(stmt, 5);
        if (!u->linked)
            continue;
        u->has_gpu = col_real(stmt, 6, &u->gpu_hours);
        u->has_cpu = col_real(stmt, 7, &u->cpu_hours);
        if (u->scheduler && !strcmp(u->scheduler, "mock")) {
            /* The mock scheduler runs on this host's CPUs: no GPU time. */
            if (!u->has_gpu) {
                u->has_gpu = 1;
                u->gpu_hours = 0.0;
            }
            if (!u->has_cpu && col_real(stmt, 8, &cpu_s)) {
                u->has_cpu = 1;
                u->cpu_hours = cpu_s / 3600.0;
            }
        }
    }
    if (rc != SQLITE_DONE) {
        store_err(st, err, "reading model versions");
        sqlite3_finalize(stmt);
        cost_usage_free(arr, nr);
        return -1;
    }
    sqlite3_finalize(stmt);
    *out = arr;
    *n = nr;
    return 0;
}

void cost_usage_free(struct cost_usage *u, size_t n)
{
    for (size_t i = 0; u && i < n; i++) {
        free(u[i].cluster);
        free(u[i].scheduler);
        free(u[i].job_id);
        free(u[i].run_uuid);
    }
    free(u);
}

/*
 * "IS NOT" compares NULLs as equal, so the WHERE clause of the upsert
 * skips the update (and keeps recorded_at) when nothing changed.
 */
static const char record_sql[] =
    "INSERT INTO model_costs (model, version, provider, cluster, job_id,"
    "  run_uuid, gpu_hours, cpu_hours, cost_usd, recorded_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    " ON CONFLICT (model, version, provider) DO UPDATE SET"
    "  cluster = excluded.cluster, job_id = excluded.job_id,"
    "  run_uuid = excluded.run_uuid, gpu_hours = excluded.gpu_hours,"
    "  cpu_hours = excluded.cpu_hours, cost_usd = excluded.cost_usd,"
    "  recorded_at = excluded.recorded_at"
    " WHERE cluster IS NOT excluded.cluster"
    "  OR job_id IS NOT excluded.job_id"
    "  OR run_uuid IS NOT excluded.run_uuid"
    "  OR gpu_hours IS NOT excluded.gpu_hours"
    "  OR cpu_hours IS NOT excluded.cpu_hours"
    "  OR cost_usd IS NOT excluded.cost_usd";

int cost_record(store_t *st, const char *model, const struct cost_usage *u,
                const char *provider, double usd, int *changed,
                exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(st, record_sql, err);
    char now[32];
    if (!stmt)
        return -1;
    store_now(now, sizeof(now));
    store_bind_text(stmt, 1, model);
    sqlite3_bind_int64(stmt, 2, u->version);
    store_bind_text(stmt, 3, provider);
    store_bind_text(stmt, 4, u->cluster);
    store_bind_text(stmt, 5, u->job_id);
    store_bind_text(stmt, 6, u->run_uuid);
    if (u->has_gpu)
        sqlite3_bind_double(stmt, 7, u->gpu_hours);
    else
        sqlite3_bind_null(stmt, 7);
    if (u->has_cpu)
        sqlite3_bind_double(stmt, 8, u->cpu_hours);
    else
        sqlite3_bind_null(stmt, 8);
    sqlite3_bind_double(stmt, 9, usd);
    store_bind_text(stmt, 10, now);
    if (sqlite3_step(stmt) != SQLITE_DONE) {
        store_err(st, err, "recording model cost");
        sqlite3_finalize(stmt);
        return -1;
    }
    if (changed)
        *changed = sqlite3_changes(st->db) > 0;
    sqlite3_finalize(stmt);
    return 0;
}

int cost_rows_list(store_t *st, const char *model, struct cost_row **out,
                   size_t *n, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "SELECT model, version, provider, cluster, job_id, run_uuid,"
        "  recorded_at, gpu_hours, cpu_hours, cost_usd FROM model_costs"
        " WHERE model = ?1 ORDER BY version, provider",
        err);
    struct cost_row *arr = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, model);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        struct cost_row *r;
        arr = xgrow(arr, sizeof(*arr), nr + 1, &alloc);
        r = &arr[nr++];
        memset(r, 0, sizeof(*r));
        r->model = col_str(stmt, 0);
        r->version = sqlite3_column_int64(stmt, 1);
        r->provider = col_str(stmt, 2);
        r->cluster = col_str(stmt, 3);
        r->job_id = col_str(stmt, 4);
        r->run_uuid = col_str(stmt, 5);
        r->recorded_at = col_str(stmt, 6);
        r->has_gpu = col_real(stmt, 7, &r->gpu_hours);
        r->has_cpu = col_real(stmt, 8, &r->cpu_hours);
        r->cost_usd = sqlite3_column_double(stmt, 9);
    }
    if (rc != SQLITE_DONE) {
        store_err(st, err, "reading model costs");
        sqlite3_finalize(stmt);
        cost_rows_free(arr, nr);
        return -1;
    }
    sqlite3_finalize(stmt);
    *out = arr;
    *n = nr;
    return 0;
}

void cost_rows_free(struct cost_row *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) {
        free(r[i].model);
        free(r[i].provider);
        free(r[i].cluster);
        free(r[i].job_id);
        free(r[i].run_uuid);
        free(r[i].recorded_at);
    }
    free(r);
}

int cost_summary_list(store_t *st, struct cost_summary **out, size_t *n,
                      exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "SELECT model, provider, count(*), COALESCE(sum(gpu_hours), 0),"
        "  COALESCE(sum(cost_usd), 0) FROM model_costs"
        " GROUP BY model, provider ORDER BY model, provider",
        err);
    struct cost_summary *arr = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!stmt)
        return -1;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        struct cost_summary *s;
        arr = xgrow(arr, sizeof(*arr), nr + 1, &alloc);
        s = &arr[nr++];
        s->model = col_str(stmt, 0);
        s->provider = col_str(stmt, 1);
        s->n_runs = sqlite3_column_int64(stmt, 2);
        s->total_gpu_hours = sqlite3_column_double(stmt, 3);
        s->total_cost_usd = sqlite3_column_double(stmt, 4);
    }
    if (rc != SQLITE_DONE) {
        store_err(st, err, "reading model costs");
        sqlite3_finalize(stmt);
        cost_summary_free(arr, nr);
        return -1;
    }
    sqlite3_finalize(stmt);
    *out = arr;
    *n = nr;
    return 0;
}

void cost_summary_free(struct cost_summary *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        free(s[i].model);
        free(s[i].provider);
    }
    free(s);
}
