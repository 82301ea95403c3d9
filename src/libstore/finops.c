/*
 * finops.c - model_costs, carbon_records and the job-hour sums (see
 * finops.h). Moved here from libfleet/cost.c, carbon.c, capacity.c and
 * libobserve/exporter.c so that SQL lives only in libstore.
 */
#include "libstore/finops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

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

static void bind_real(sqlite3_stmt *stmt, int idx, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(stmt, idx, v);
    else
        sqlite3_bind_null(stmt, idx);
}

/* ---- model_costs ---- */

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

/* ---- carbon_records ---- */

/*
 * The key is (model, COALESCE(version, -1), provider), as the UNIQUE index
 * of migration 2. The update only runs when a value differs ("IS NOT"
 * treats NULLs as equal), so recording the same thing again changes
 * nothing, not even ts.
 */
static const char carbon_put_sql[] =
    "INSERT INTO carbon_records (ts, model, version, run_id, provider,"
    "  gpu_hours, cpu_hours, kwh, co2e_g, grid_intensity, pue,"
    "  gpu_power_w, cpu_power_w, signal_type, signal_method, inputs)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
    "  ?14, ?15, ?16)"
    " ON CONFLICT (model, COALESCE(version, -1), provider) DO UPDATE SET"
    "  ts = excluded.ts, run_id = excluded.run_id,"
    "  gpu_hours = excluded.gpu_hours, cpu_hours = excluded.cpu_hours,"
    "  kwh = excluded.kwh, co2e_g = excluded.co2e_g,"
    "  grid_intensity = excluded.grid_intensity, pue = excluded.pue,"
    "  gpu_power_w = excluded.gpu_power_w,"
    "  cpu_power_w = excluded.cpu_power_w,"
    "  signal_type = excluded.signal_type,"
    "  signal_method = excluded.signal_method, inputs = excluded.inputs"
    " WHERE run_id IS NOT excluded.run_id"
    "  OR gpu_hours IS NOT excluded.gpu_hours"
    "  OR cpu_hours IS NOT excluded.cpu_hours OR kwh IS NOT excluded.kwh"
    "  OR co2e_g IS NOT excluded.co2e_g"
    "  OR grid_intensity IS NOT excluded.grid_intensity"
    "  OR pue IS NOT excluded.pue"
    "  OR gpu_power_w IS NOT excluded.gpu_power_w"
    "  OR cpu_power_w IS NOT excluded.cpu_power_w"
    "  OR signal_type IS NOT excluded.signal_type"
    "  OR signal_method IS NOT excluded.signal_method"
    "  OR inputs IS NOT excluded.inputs";

int store_carbon_put(store_t *st, const struct carbon_rec *r, long long *id,
                     int *changed, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(st, carbon_put_sql, err);
    char now[32];
    int rc;
    if (!stmt)
        return -1;
    store_now(now, sizeof(now));
    store_bind_text(stmt, 1, now);
    store_bind_text(stmt, 2, r->model);
    if (r->version >= 0)
        sqlite3_bind_int64(stmt, 3, r->version);
    else
        sqlite3_bind_null(stmt, 3);
    store_bind_text(stmt, 4, r->run_id);
    store_bind_text(stmt, 5, r->provider);
    bind_real(stmt, 6, r->gpu_hours);
    bind_real(stmt, 7, r->cpu_hours);
    bind_real(stmt, 8, r->kwh);
    bind_real(stmt, 9, r->co2e_g);
    bind_real(stmt, 10, r->grid_intensity);
    bind_real(stmt, 11, r->pue);
    bind_real(stmt, 12, r->gpu_power_w);
    bind_real(stmt, 13, r->cpu_power_w);
    store_bind_text(stmt, 14, r->signal_type);
    store_bind_text(stmt, 15, r->signal_method);
    store_bind_text(stmt, 16, r->inputs);
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return store_err(st, err, "recording carbon");
    if (changed)
        *changed = sqlite3_changes(st->db) > 0;
    if (!id)
        return 0;
    stmt = store_prepare(st,
                         "SELECT id FROM carbon_records WHERE model = ?1"
                         " AND COALESCE(version, -1) = ?2 AND provider = ?3",
                         err);
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, r->model);
    sqlite3_bind_int64(stmt, 2, r->version >= 0 ? r->version : -1);
    store_bind_text(stmt, 3, r->provider);
    if (sqlite3_step(stmt) != SQLITE_ROW) {
        store_err(st, err, "reading the carbon record back");
        sqlite3_finalize(stmt);
        return -1;
    }
    *id = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return 0;
}

int store_carbon_totals(store_t *st, const char *model, long long *n,
                        double *kwh, double *co2e_g, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "SELECT count(*), COALESCE(sum(kwh), 0), COALESCE(sum(co2e_g), 0)"
        " FROM carbon_records WHERE ?1 IS NULL OR model = ?1",
        err);
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, model);
    if (sqlite3_step(stmt) != SQLITE_ROW) {
        store_err(st, err, "reading carbon records");
        sqlite3_finalize(stmt);
        return -1;
    }
    *n = sqlite3_column_int64(stmt, 0);
    *kwh = sqlite3_column_double(stmt, 1);
    *co2e_g = sqlite3_column_double(stmt, 2);
    sqlite3_finalize(stmt);
    return 0;
}

/* ---- sums ---- */

int store_job_hours(store_t *st, const char *cluster, double *gpu_hours,
                    double *cpu_hours, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT COALESCE(SUM(COALESCE(gpu_hours, "
        "  COALESCE(gpus, 0) * COALESCE(run_seconds, 0) / 3600.0)), 0), "
        "COALESCE(SUM(COALESCE(cpu_hours, "
        "  COALESCE(cpus, 0) * COALESCE(run_seconds, 0) / 3600.0)), 0) "
        "FROM jobs WHERE cluster = ?",
        err);
    int rc = 0;
    if (!s)
        return -1;
    store_bind_text(s, 1, cluster);
    if (sqlite3_step(s) == SQLITE_ROW) {
        *gpu_hours = sqlite3_column_double(s, 0);
        *cpu_hours = sqlite3_column_double(s, 1);
    } else {
        rc = store_err(st, err, "summing job hours");
    }
    sqlite3_finalize(s);
    return rc;
}

void store_groups_free(struct store_group *g, size_t n)
{
    for (size_t i = 0; g && i < n; i++)
        for (size_t k = 0; k < 3; k++)
            free(g[i].k[k]);
    free(g);
}

static char *group_key(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return xstrdup(t && *t ? (const char *)t : "unknown");
}

/* Run sql (no parameters): nk text columns, then nv numbers. */
static int groups(store_t *st, const char *sql, int nk, int nv,
                  const char *what, struct store_group **out, size_t *n,
                  exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st, sql, err);
    struct store_group *v = NULL;
    size_t nr = 0, alloc = 0;
    int rc;
    if (!s)
        return -1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct store_group *g;
        ALLOC_GROW(v, nr + 1, alloc);
        g = &v[nr++];
        memset(g, 0, sizeof(*g));
        for (int k = 0; k < nk; k++)
            g->k[k] = group_key(s, k);
        for (int k = 0; k < nv; k++)
            g->v[k] = sqlite3_column_double(s, nk + k);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        store_groups_free(v, nr);
        return store_err(st, err, what);
    }
    *out = v;
    *n = nr;
    return 0;
}

int store_cluster_state_counts(store_t *st, struct store_group **out, size_t *n,
                               exa_error_t *err)
{
    return groups(st, "SELECT state, COUNT(*) FROM clusters GROUP BY state", 1,
                  1, "counting clusters", out, n, err);
}

int store_job_state_counts(store_t *st, struct store_group **out, size_t *n,
                           exa_error_t *err)
{
    return groups(st,
                  "SELECT cluster, state, COUNT(*) FROM jobs"
                  " GROUP BY cluster, state",
                  2, 1, "counting jobs", out, n, err);
}

int store_job_gpu_seconds(store_t *st, struct store_group **out, size_t *n,
                          exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT 1 FROM pragma_table_info('jobs')"
                                    " WHERE name = 'account'",
                                    NULL);
    int has_account = 0;
    if (s) {
        has_account = sqlite3_step(s) == SQLITE_ROW;
        sqlite3_finalize(s);
    }
    return groups(st,
                  has_account ? "SELECT cluster, model, account,"
                                " SUM(gpu_hours) * 3600 FROM jobs"
                                " WHERE gpu_hours IS NOT NULL"
                                " GROUP BY cluster, model, account"
                              : "SELECT cluster, model, NULL,"
                                " SUM(gpu_hours) * 3600 FROM jobs"
                                " WHERE gpu_hours IS NOT NULL"
                                " GROUP BY cluster, model",
                  3, 1, "summing GPU-seconds", out, n, err);
}

int store_carbon_sums(store_t *st, struct store_group **out, size_t *n,
                      exa_error_t *err)
{
    return groups(st,
                  "SELECT model, provider, SUM(COALESCE(kwh, 0))"
                  " * 3600000, SUM(COALESCE(co2e_g, 0))"
                  " FROM carbon_records GROUP BY model, provider",
                  2, 2, "summing carbon records", out, n, err);
}
