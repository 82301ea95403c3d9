/*
 * test_cost.c - cost providers (flat-rate, tiered-example) with hand-
 * computed values, rate and provider resolution from the environment,
 * and model_costs: hours read from the version's job row (NULL stays
 * "not recorded", mock jobs cost no GPU time) and an idempotent upsert.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "libfleet/cost.h"
#include "libstore/store.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define EPS 1e-9

static const struct cost_provider *flat(void)
{
    return cost_provider_find("flat-rate");
}

static const struct cost_provider *tiered(void)
{
    return cost_provider_find("tiered-example");
}

static void test_flat_rate(void **state)
{
    struct cost_params p;
    double usd = -1;
    cost_params_default(&p);
    assert_float_equal(p.gpu_rate, 2.50, EPS);
    assert_float_equal(p.cpu_rate, 0.05, EPS);
    /* 12 x 2.50 + 10 x 0.05 */
    assert_int_equal(cost_compute(flat(), &p, 12.0, 10.0, &usd, NULL), 0);
    assert_float_equal(usd, 30.5, EPS);
    /* 10/3 x 2.50 = 8.33333.. rounds to 4 places */
    assert_int_equal(cost_compute(flat(), &p, 10.0 / 3.0, 0, &usd, NULL), 0);
    assert_float_equal(usd, 8.3333, EPS);
    /* CPU only: 7 CPU-h x 0.05 */
    assert_int_equal(cost_compute(flat(), &p, 0, 7.0, &usd, NULL), 0);
    assert_float_equal(usd, 0.35, EPS);
    assert_int_equal(cost_compute(flat(), &p, 0, 0, &usd, NULL), 0);
    assert_float_equal(usd, 0.0, EPS);
}

static void test_tiered(void **state)
{
    struct cost_params p;
    double usd = -1;
    cost_params_default(&p);
    /* below the threshold: the flat rate */
    assert_int_equal(cost_compute(tiered(), &p, 50.0, 0, &usd, NULL), 0);
    assert_float_equal(usd, 125.0, EPS);
    /* exactly at it: no discount */
    assert_int_equal(cost_compute(tiered(), &p, 100.0, 0, &usd, NULL), 0);
    assert_float_equal(usd, 250.0, EPS);
    /* 150 h: 100 full + 50 x 0.8 = 140 billed x 2.50, + 10 CPU-h x 0.05 */
    assert_int_equal(cost_compute(tiered(), &p, 150.0, 10.0, &usd, NULL), 0);
    assert_float_equal(usd, 350.5, EPS);
    /* the same hours at the flat rate cost more */
    assert_int_equal(cost_compute(flat(), &p, 150.0, 10.0, &usd, NULL), 0);
    assert_float_equal(usd, 375.5, EPS);
}

static void test_negative_hours(void **state)
{
    struct cost_params p;
    double usd = 42;
    exa_error_t err = EXA_ERROR_INIT;
    cost_params_default(&p);
    assert_int_equal(cost_compute(flat(), &p, -1.0, 0, &usd, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_non_null(strstr(err.text, "GPU-hours"));
    assert_float_equal(usd, 42, EPS);
    assert_int_equal(cost_compute(tiered(), &p, 1.0, -0.5, &usd, &err), -1);
    assert_non_null(strstr(err.text, "CPU-hours"));
    assert_int_equal(cost_compute(flat(), &p, NAN, 0, &usd, &err), -1);
    assert_float_equal(usd, 42, EPS);
}

static void test_provider_resolution(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    unsetenv("EXAMLOPS_COST_PROVIDER");
    assert_ptr_equal(cost_provider_resolve(NULL, &err), flat());
    assert_ptr_equal(cost_provider_find("tiered"), tiered());
    assert_string_equal(cost_provider_resolve("tiered", &err)->name,
                        "tiered-example");
    setenv("EXAMLOPS_COST_PROVIDER", "tiered-example", 1);
    assert_ptr_equal(cost_provider_resolve(NULL, &err), tiered());
    /* the flag wins over the environment */
    assert_ptr_equal(cost_provider_resolve("flat-rate", &err), flat());
    assert_null(cost_provider_resolve("spot", &err));
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_non_null(strstr(err.text, "'spot'"));
    assert_non_null(strstr(err.text, "flat-rate, tiered-example"));
    setenv("EXAMLOPS_COST_PROVIDER", "bogus", 1);
    assert_null(cost_provider_resolve(NULL, &err));
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_non_null(strstr(err.text, "EXAMLOPS_COST_PROVIDER"));
    unsetenv("EXAMLOPS_COST_PROVIDER");
}

static void test_rates_from_env(void **state)
{
    struct cost_params p;
    double usd;
    exa_error_t err = EXA_ERROR_INIT;
    setenv("GPU_COST_PER_HOUR", "3", 1);
    setenv("CPU_COST_PER_HOUR", "0.1", 1);
    assert_int_equal(cost_params_from_env(&p, &err), 0);
    assert_int_equal(cost_compute(flat(), &p, 12.0, 10.0, &usd, NULL), 0);
    assert_float_equal(usd, 37.0, EPS);
    p.gpu_rate = 99;
    setenv("GPU_COST_PER_HOUR", "2.5 dollars", 1);
    assert_int_equal(cost_params_from_env(&p, &err), -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_non_null(strstr(err.text, "GPU_COST_PER_HOUR='2.5 dollars'"));
    assert_float_equal(p.gpu_rate, 99, EPS); /* untouched on failure */
    setenv("GPU_COST_PER_HOUR", "-1", 1);
    assert_int_equal(cost_params_from_env(&p, &err), -1);
    unsetenv("GPU_COST_PER_HOUR");
    unsetenv("CPU_COST_PER_HOUR");
    assert_int_equal(cost_params_from_env(&p, &err), 0);
    assert_float_equal(p.gpu_rate, 2.50, EPS);
    assert_float_equal(p.cpu_rate, 0.05, EPS);
}

static void test_round(void **state)
{
    assert_float_equal(cost_round(1.23455, 4), 1.2346, EPS);
    assert_float_equal(cost_round(2.5, 0), 3.0, EPS);
    assert_float_equal(cost_round(-0.00001, 4), 0.0, EPS);
}

/* ---- database ---- */

struct dbfix {
    char dir[64];
    store_t *st;
};

static int db_setup(void **state)
{
    struct dbfix *f = xcalloc(1, sizeof(*f));
    char *path;
    exa_error_t err = EXA_ERROR_INIT;
    xsnprintf(f->dir, sizeof(f->dir), "/tmp/exa-test-cost-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    path = xstrfmt("%s/platform.db", f->dir);
    f->st = store_open(path, &err);
    free(path);
    assert_non_null(f->st);
    /*
     * JPCP v1: a slurm job with hours; v2: a slurm job whose accounting
     * was never recorded; v3: a mock job with cpu_seconds only, linked by
     * (cluster, job_id) instead of job_ref; v4: no job at all.
     */
    assert_int_equal(
        store_exec(
            f->st,
            "INSERT INTO jobs (id, cluster, scheduler, job_id, model,"
            " state, gpu_hours, cpu_hours, cpu_seconds, created_at,"
            " updated_at) VALUES"
            " (1, 'testb', 'slurm', '41', 'JPCP', 'COMPLETED', 3.5, 10,"
            "  NULL, 'x', 'x'),"
            " (2, 'testb', 'slurm', '42', 'JPCP', 'COMPLETED', NULL, NULL,"
            "  NULL, 'x', 'x'),"
            " (3, 'local', 'mock', 'mock-1', 'JPCP', 'COMPLETED', NULL,"
            "  NULL, 1800, 'x', 'x');"
            "INSERT INTO model_versions (model, version, job_ref, cluster,"
            " scheduler, job_id, run_uuid, created_at) VALUES"
            " ('JPCP', 1, 1, 'testb', 'slurm', '41', 'run-a', 'x'),"
            " ('JPCP', 2, 2, 'testb', 'slurm', '42', 'run-b', 'x'),"
            " ('JPCP', 3, NULL, 'local', 'mock', 'mock-1', 'run-c', 'x'),"
            " ('JPCP', 4, NULL, NULL, NULL, NULL, NULL, 'x'),"
            " ('Other', 1, NULL, NULL, NULL, NULL, NULL, 'x');",
            &err),
        0);
    *state = f;
    return 0;
}

static int db_teardown(void **state)
{
    struct dbfix *f = *state;
    char *cmd = xstrfmt("rm -rf '%s'", f->dir);
    store_close(f->st);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(f);
    return 0;
}

static int scalar_int(store_t *st, const char *sql)
{
    sqlite3_stmt *stmt = store_prepare(st, sql, NULL);
    int v;
    assert_non_null(stmt);
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    v = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    return v;
}

static void test_usage_from_jobs(void **state)
{
    struct dbfix *f = *state;
    struct cost_usage *u = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(cost_usage_list(f->st, "JPCP", -1, &u, &n, &err), 0);
    assert_int_equal(n, 4);
    /* v1: recorded hours */
    assert_int_equal(u[0].version, 1);
    assert_true(u[0].linked && u[0].has_gpu && u[0].has_cpu);
    assert_float_equal(u[0].gpu_hours, 3.5, EPS);
    assert_float_equal(u[0].cpu_hours, 10, EPS);
    assert_string_equal(u[0].job_id, "41");
    assert_string_equal(u[0].cluster, "testb");
    assert_string_equal(u[0].run_uuid, "run-a");
    /* v2: linked, but nothing recorded, and nothing invented */
    assert_true(u[1].linked);
    assert_false(u[1].has_gpu);
    assert_false(u[1].has_cpu);
    /* v3: mock, found by (cluster, job_id): 0 GPU-h, 1800 s = 0.5 CPU-h */
    assert_true(u[2].linked);
    assert_true(u[2].has_gpu && u[2].has_cpu);
    assert_float_equal(u[2].gpu_hours, 0, EPS);
    assert_float_equal(u[2].cpu_hours, 0.5, EPS);
    assert_string_equal(u[2].scheduler, "mock");
    /* v4: no job */
    assert_false(u[3].linked);
    assert_false(u[3].has_gpu);
    assert_null(u[3].job_id);
    cost_usage_free(u, n);
    /* one version */
    assert_int_equal(cost_usage_list(f->st, "JPCP", 3, &u, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(u[0].version, 3);
    cost_usage_free(u, n);
    assert_int_equal(cost_usage_list(f->st, "NoSuch", -1, &u, &n, &err), 0);
    assert_int_equal(n, 0);
    cost_usage_free(u, n);
}

static void test_record_idempotent(void **state)
{
    struct dbfix *f = *state;
    struct cost_usage *u = NULL;
    struct cost_row *rows = NULL;
    struct cost_summary *sum = NULL;
    struct cost_params p;
    size_t n = 0, nrows = 0, nsum = 0;
    exa_error_t err = EXA_ERROR_INIT;
    double usd;
    int changed = -1;
    cost_params_default(&p);
    assert_int_equal(cost_usage_list(f->st, "JPCP", -1, &u, &n, &err), 0);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            if (!u[i].has_gpu && !u[i].has_cpu)
                continue;
            assert_int_equal(
                cost_compute(flat(), &p, u[i].has_gpu ? u[i].gpu_hours : 0,
                             u[i].has_cpu ? u[i].cpu_hours : 0, &usd, &err),
                0);
            assert_int_equal(cost_record(f->st, "JPCP", &u[i], "flat-rate", usd,
                                         &changed, &err),
                             0);
            /* the second pass changes nothing */
            assert_int_equal(changed, pass == 0);
        }
    }
    assert_int_equal(scalar_int(f->st, "SELECT count(*) FROM model_costs"), 2);
    assert_int_equal(cost_rows_list(f->st, "JPCP", &rows, &nrows, &err), 0);
    assert_int_equal(nrows, 2);
    assert_int_equal(rows[0].version, 1);
    assert_string_equal(rows[0].provider, "flat-rate");
    assert_float_equal(rows[0].cost_usd, 9.25, EPS); /* 3.5x2.5 + 10x0.05 */
    assert_string_equal(rows[0].job_id, "41");
    assert_int_equal(rows[1].version, 3);
    assert_float_equal(rows[1].cost_usd, 0.025, EPS); /* 0.5 x 0.05 */
    assert_float_equal(rows[1].gpu_hours, 0, EPS);
    cost_rows_free(rows, nrows);

    /* a changed rate updates the row in place */
    p.gpu_rate = 3.0;
    assert_int_equal(cost_compute(flat(), &p, 3.5, 10, &usd, &err), 0);
    assert_int_equal(
        cost_record(f->st, "JPCP", &u[0], "flat-rate", usd, &changed, &err), 0);
    assert_int_equal(changed, 1);
    assert_int_equal(scalar_int(f->st, "SELECT count(*) FROM model_costs"), 2);
    /* another provider is another row */
    assert_int_equal(cost_record(f->st, "JPCP", &u[0], "tiered-example", 9.25,
                                 &changed, &err),
                     0);
    assert_int_equal(scalar_int(f->st, "SELECT count(*) FROM model_costs"), 3);
    assert_int_equal(cost_summary_list(f->st, &sum, &nsum, &err), 0);
    assert_int_equal(nsum, 2);
    assert_string_equal(sum[0].model, "JPCP");
    assert_string_equal(sum[0].provider, "flat-rate");
    assert_int_equal(sum[0].n_runs, 2);
    assert_float_equal(sum[0].total_gpu_hours, 3.5, EPS);
    assert_float_equal(sum[0].total_cost_usd, 11.0 + 0.025, EPS);
    assert_string_equal(sum[1].provider, "tiered-example");
    assert_int_equal(sum[1].n_runs, 1);
    cost_summary_free(sum, nsum);
    cost_usage_free(u, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_rate),
        cmocka_unit_test(test_tiered),
        cmocka_unit_test(test_negative_hours),
        cmocka_unit_test(test_provider_resolution),
        cmocka_unit_test(test_rates_from_env),
        cmocka_unit_test(test_round),
        cmocka_unit_test_setup_teardown(test_usage_from_jobs, db_setup,
                                        db_teardown),
        cmocka_unit_test_setup_teardown(test_record_idempotent, db_setup,
                                        db_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
