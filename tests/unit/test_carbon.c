/*
 * test_carbon.c - the three carbon providers against hand-computed values
 * (REFERENCE §4.12: 12 GPU-h under green-ai-default is 7.2 kWh and
 * 2160 g), input validation, provider resolution, signal-type
 * classification, the JSON shape, and carbon_records rows and totals.
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

#include "libfleet/carbon.h"
#include "libstore/store.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define EPS 1e-9

static const struct carbon_provider *prov(const char *name)
{
    const struct carbon_provider *p = carbon_provider_find(name);
    assert_non_null(p);
    return p;
}

static void test_green_ai_default(void **state)
{
    struct carbon_params p;
    struct carbon_result r;
    carbon_params_default(&p);
    assert_int_equal(
        carbon_estimate(prov("green-ai-default"), &p, 12, 0, &r, NULL), 0);
    /* 12 h x 400 W = 4.8 kWh x 1.5 PUE = 7.2 kWh x 300 g = 2160 g */
    assert_float_equal(r.kwh, 7.2, EPS);
    assert_float_equal(r.co2e_g, 2160.0, EPS);
    assert_float_equal(r.provider->uncertainty, 0.30, EPS);
    assert_string_equal(r.method, "static_default");
    assert_int_equal(r.signal_type, CARBON_SIGNAL_ACCOUNTING);
    assert_float_equal(r.gpu_power_w, 400, EPS);
    assert_float_equal(r.cpu_power_w, 120, EPS);
    assert_float_equal(r.pue, 1.5, EPS);
    /* with 10 CPU-h: (4800 + 1200) Wh / 1000 x 1.5 = 9 kWh -> 2700 g */
    assert_int_equal(
        carbon_estimate(prov("green-ai-default"), &p, 12, 10, &r, NULL), 0);
    assert_float_equal(r.kwh, 9.0, EPS);
    assert_float_equal(r.co2e_g, 2700.0, EPS);
    /* CPU only, operator grid 50 g: 10 x 120 / 1000 x 1.5 = 1.8 kWh, 90 g */
    p.grid_intensity = 50;
    assert_int_equal(
        carbon_estimate(prov("green-ai-default"), &p, 0, 10, &r, NULL), 0);
    assert_float_equal(r.kwh, 1.8, EPS);
    assert_float_equal(r.co2e_g, 90.0, EPS);
    assert_string_equal(r.method, "operator_supplied");
    assert_int_equal(r.signal_type, CARBON_SIGNAL_ACCOUNTING);
}

static void test_codecarbon_like(void **state)
{
    struct carbon_params p;
    struct carbon_result r;
    exa_error_t err = EXA_ERROR_INIT;
    carbon_params_default(&p);
    /* 400 + 120 + 32 x 0.3725 = 531.92 W; 12 h -> 6.38304 kWh x 1.5 */
    assert_int_equal(
        carbon_estimate(prov("codecarbon-like"), &p, 12, 0, &r, NULL), 0);
    assert_float_equal(r.kwh, 9.57456, EPS);
    assert_float_equal(r.co2e_g, 2872.368, EPS);
    assert_float_equal(r.provider->uncertainty, 0.25, EPS);
    /* a 300 W GPU at PUE 1.2: 2 h x 431.92 W = 0.86384 kWh x 1.2 */
    p.gpu_tdp_w = 300;
    p.pue = 1.2;
    assert_int_equal(
        carbon_estimate(prov("codecarbon-like"), &p, 2, 0, &r, NULL), 0);
    assert_float_equal(r.kwh, 1.036608, EPS);
    assert_float_equal(r.co2e_g, 310.9824, EPS);
    /* no CPU-hours term: CPU time is refused, not dropped */
    assert_int_equal(
        carbon_estimate(prov("codecarbon-like"), &p, 2, 3, &r, &err), -1);
    assert_int_equal(err.code, EXA_EFAIL);
    assert_non_null(strstr(err.text, "'codecarbon-like' has no CPU-hours"));
}

static void test_ccf_like(void **state)
{
    struct carbon_params p;
    struct carbon_result r;
    exa_error_t err = EXA_ERROR_INIT;
    carbon_params_default(&p);
    /* 12 x 0.4 kWh x 1.5 = 7.2 kWh */
    assert_int_equal(carbon_estimate(prov("ccf-like"), &p, 12, 0, &r, NULL), 0);
    assert_float_equal(r.kwh, 7.2, EPS);
    assert_float_equal(r.co2e_g, 2160.0, EPS);
    assert_true(isnan(r.cpu_power_w));
    /* PUE 1.2, grid 250: 12 x 0.4 x 1.2 = 5.76 kWh -> 1440 g */
    p.pue = 1.2;
    p.grid_intensity = 250;
    assert_int_equal(carbon_estimate(prov("ccf-like"), &p, 12, 0, &r, NULL), 0);
    assert_float_equal(r.kwh, 5.76, EPS);
    assert_float_equal(r.co2e_g, 1440.0, EPS);
    assert_string_equal(r.method, "operator_supplied");
    /* the GPU TDP is not an input of this formula */
    p.gpu_tdp_w = 700;
    assert_int_equal(carbon_estimate(prov("ccf-like"), &p, 12, 0, &r, NULL), 0);
    assert_float_equal(r.kwh, 5.76, EPS);
    assert_int_equal(carbon_estimate(prov("ccf-like"), &p, 1, 1, &r, &err), -1);
}

static void test_invalid_inputs(void **state)
{
    struct carbon_params p;
    struct carbon_result r;
    exa_error_t err = EXA_ERROR_INIT;
    const struct carbon_provider *g = prov("green-ai-default");
    carbon_params_default(&p);
    r.kwh = 42;
    assert_int_equal(carbon_estimate(g, &p, 0, 0, &r, &err), -1);
    assert_int_equal(err.code, EXA_EFAIL);
    assert_string_equal(err.text, "nothing to account for: no GPU-hours and "
                                  "no CPU-hours");
    assert_float_equal(r.kwh, 42, EPS); /* untouched */
    assert_int_equal(carbon_estimate(g, &p, -1, 0, &r, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_int_equal(carbon_estimate(g, &p, INFINITY, 0, &r, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    r.kwh = 42;
    assert_int_equal(carbon_estimate(g, &p, 1e308, 0, &r, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_string_equal(err.text, "the estimate is out of range: 1e+308 "
                                  "GPU-hours and 0 CPU-hours overflow");
    assert_float_equal(r.kwh, 42, EPS); /* untouched */
    p.pue = 0.9;
    assert_int_equal(carbon_estimate(g, &p, 1, 0, &r, &err), -1);
    assert_non_null(strstr(err.text, "PUE"));
    p.pue = 1.5;
    p.grid_intensity = -3;
    assert_int_equal(carbon_estimate(g, &p, 1, 0, &r, &err), -1);
    assert_non_null(strstr(err.text, "grid intensity"));
}

static void test_signal_types(void **state)
{
    static const struct {
        const char *method;
        enum carbon_signal_type t;
    } cases[] = {
        {"average_grid_mix", CARBON_SIGNAL_ACCOUNTING},
        {"static_default", CARBON_SIGNAL_ACCOUNTING},
        {"operator_supplied", CARBON_SIGNAL_ACCOUNTING},
        {"residual_mix", CARBON_SIGNAL_ACCOUNTING},
        {"locational_marginal", CARBON_SIGNAL_DECISION},
        {"marginal_emissions", CARBON_SIGNAL_DECISION},
        {"short_run_marginal", CARBON_SIGNAL_DECISION},
        {"marginal", CARBON_SIGNAL_UNKNOWN},
        {"Average_Grid_Mix", CARBON_SIGNAL_UNKNOWN},
        {"", CARBON_SIGNAL_UNKNOWN},
        {NULL, CARBON_SIGNAL_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(carbon_signal_classify(cases[i].method), cases[i].t);
    assert_string_equal(carbon_signal_type_name(CARBON_SIGNAL_ACCOUNTING),
                        "accounting");
    assert_string_equal(carbon_signal_type_name(CARBON_SIGNAL_DECISION),
                        "decision");
    assert_string_equal(carbon_signal_type_name(CARBON_SIGNAL_UNKNOWN),
                        "unknown");
}

static void test_declared_method(void **state)
{
    struct carbon_params p;
    struct carbon_result r;
    carbon_params_default(&p);
    p.method = "locational_marginal";
    assert_int_equal(
        carbon_estimate(prov("green-ai-default"), &p, 1, 0, &r, NULL), 0);
    assert_string_equal(r.method, "locational_marginal");
    assert_int_equal(r.signal_type, CARBON_SIGNAL_DECISION);
    assert_null(r.params.method); /* the borrowed pointer is not kept */
}

static void test_resolution(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    unsetenv("EXAMLOPS_CARBON_PROVIDER");
    assert_string_equal(carbon_provider_resolve(NULL, &err)->name,
                        "green-ai-default");
    setenv("EXAMLOPS_CARBON_PROVIDER", "ccf-like", 1);
    assert_string_equal(carbon_provider_resolve(NULL, &err)->name, "ccf-like");
    assert_string_equal(carbon_provider_resolve("codecarbon-like", &err)->name,
                        "codecarbon-like");
    assert_null(carbon_provider_resolve("watttime", &err));
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_non_null(
        strstr(err.text, "green-ai-default, codecarbon-like, ccf-like"));
    setenv("EXAMLOPS_CARBON_PROVIDER", "nope", 1);
    assert_null(carbon_provider_resolve(NULL, &err));
    assert_int_equal(err.code, EXA_ECONFIG);
    unsetenv("EXAMLOPS_CARBON_PROVIDER");
}

static void test_json_shape(void **state)
{
    struct carbon_params p;
    struct carbon_result r;
    json_t *o, *sig, *in;
    char *s;
    carbon_params_default(&p);
    assert_int_equal(carbon_estimate(prov("ccf-like"), &p, 12, 0, &r, NULL), 0);
    o = carbon_result_json(&r);
    assert_float_equal(jx_get_num(o, "kwh", -1), 7.2, EPS);
    assert_float_equal(jx_get_num(o, "co2e_g", -1), 2160, EPS);
    assert_float_equal(jx_get_num(o, "gpu_hours", -1), 12, EPS);
    assert_float_equal(jx_get_num(o, "cpu_hours", -1), 0, EPS);
    assert_string_equal(jx_get_str(o, "provider", ""), "ccf-like");
    assert_float_equal(jx_get_num(o, "uncertainty", -1), 0.3, EPS);
    sig = json_object_get(o, "signal");
    assert_non_null(sig);
    assert_float_equal(jx_get_num(sig, "grams_per_kwh", -1), 300, EPS);
    assert_string_equal(jx_get_str(sig, "signal_type", ""), "accounting");
    assert_string_equal(jx_get_str(sig, "method", ""), "static_default");
    assert_true(json_is_null(json_object_get(sig, "zone")));
    in = json_object_get(o, "inputs");
    assert_float_equal(jx_get_num(in, "kwh_per_gpu_h", -1), 0.4, EPS);
    assert_null(json_object_get(in, "gpu_tdp_w"));
    s = jx_dumps_canonical(o);
    assert_null(strstr(s, "NaN"));
    assert_null(strstr(s, "nfinity"));
    free(s);
    json_decref(o);
}

static void test_records(void **state)
{
    char dir[] = "/tmp/exa-test-carbon-XXXXXX";
    char *path, *cmd;
    store_t *st;
    struct carbon_params p;
    struct carbon_result r;
    struct carbon_totals t;
    exa_error_t err = EXA_ERROR_INIT;
    sqlite3_stmt *stmt;
    long long id = 0, id2 = 0;
    int changed = -1;
    assert_non_null(mkdtemp(dir));
    path = xstrfmt("%s/platform.db", dir);
    st = store_open(path, &err);
    assert_non_null(st);
    carbon_params_default(&p);
    assert_int_equal(
        carbon_estimate(prov("green-ai-default"), &p, 12, 0, &r, NULL), 0);
    assert_int_equal(
        carbon_record_insert(st, "JPCP", 2, "run-a", &r, &id, &changed, &err),
        0);
    assert_true(id > 0);
    assert_int_equal(changed, 1);
    assert_int_equal(carbon_estimate(prov("ccf-like"), &p, 1, 0, &r, NULL), 0);
    assert_int_equal(
        carbon_record_insert(st, "JPCP", -1, NULL, &r, NULL, NULL, &err), 0);
    assert_int_equal(
        carbon_record_insert(st, "Other", -1, NULL, &r, NULL, NULL, &err), 0);
    assert_int_equal(carbon_totals_get(st, "JPCP", &t, &err), 0);
    assert_int_equal(t.n, 2);
    assert_float_equal(t.kwh, 7.2 + 0.6, EPS);
    assert_float_equal(t.co2e_g, 2160 + 180, EPS);
    assert_int_equal(carbon_totals_get(st, NULL, &t, &err), 0);
    assert_int_equal(t.n, 3);
    assert_int_equal(carbon_totals_get(st, "None", &t, &err), 0);
    assert_int_equal(t.n, 0);
    assert_float_equal(t.kwh, 0, EPS);
    /* the stored inputs and signal */
    stmt = store_prepare(st,
                         "SELECT provider, version, run_id, grid_intensity,"
                         " pue, gpu_power_w, cpu_power_w, signal_type,"
                         " signal_method, inputs FROM carbon_records"
                         " ORDER BY id",
                         &err);
    assert_non_null(stmt);
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(stmt, 0),
                        "green-ai-default");
    assert_int_equal(sqlite3_column_int(stmt, 1), 2);
    assert_string_equal((const char *)sqlite3_column_text(stmt, 2), "run-a");
    assert_float_equal(sqlite3_column_double(stmt, 3), 300, EPS);
    assert_float_equal(sqlite3_column_double(stmt, 4), 1.5, EPS);
    assert_float_equal(sqlite3_column_double(stmt, 5), 400, EPS);
    assert_float_equal(sqlite3_column_double(stmt, 6), 120, EPS);
    assert_string_equal((const char *)sqlite3_column_text(stmt, 7),
                        "accounting");
    assert_string_equal((const char *)sqlite3_column_text(stmt, 8),
                        "static_default");
    assert_string_equal((const char *)sqlite3_column_text(stmt, 9),
                        "{\"cpu_tdp_w\":120.0,\"gpu_tdp_w\":400.0,"
                        "\"grid_intensity\":300.0,\"pue\":1.5}");
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    assert_int_equal(sqlite3_column_type(stmt, 1), SQLITE_NULL);
    assert_int_equal(sqlite3_column_type(stmt, 6), SQLITE_NULL);
    sqlite3_finalize(stmt);

    /* Idempotent per (model, version, provider): the same record again
     * adds no row and reports no change; another provider is a new row;
     * new hours for the same key replace the row (same id). */
    assert_int_equal(
        carbon_estimate(prov("green-ai-default"), &p, 12, 0, &r, NULL), 0);
    assert_int_equal(
        carbon_record_insert(st, "JPCP", 2, "run-a", &r, &id2, &changed, &err),
        0);
    assert_int_equal(id2, id);
    assert_int_equal(changed, 0);
    assert_int_equal(carbon_totals_get(st, NULL, &t, &err), 0);
    assert_int_equal(t.n, 3);
    assert_int_equal(
        carbon_estimate(prov("green-ai-default"), &p, 24, 0, &r, NULL), 0);
    assert_int_equal(
        carbon_record_insert(st, "JPCP", 2, "run-a", &r, &id2, &changed, &err),
        0);
    assert_int_equal(id2, id);
    assert_int_equal(changed, 1);
    assert_int_equal(carbon_totals_get(st, "JPCP", &t, &err), 0);
    assert_int_equal(t.n, 2);
    assert_float_equal(t.co2e_g, 2 * 2160 + 180, EPS);
    /* "no version" is one key too */
    assert_int_equal(carbon_estimate(prov("ccf-like"), &p, 1, 0, &r, NULL), 0);
    assert_int_equal(
        carbon_record_insert(st, "JPCP", -1, NULL, &r, NULL, &changed, &err),
        0);
    assert_int_equal(changed, 0);
    /* carbon_record: an audit event only when something changed */
    assert_int_equal(carbon_record(st, "JPCP", 7, NULL, &r, "test", "tester",
                                   &id2, &changed, &err),
                     0);
    assert_int_equal(changed, 1);
    assert_int_equal(carbon_record(st, "JPCP", 7, NULL, &r, "test", "tester",
                                   NULL, &changed, &err),
                     0);
    assert_int_equal(changed, 0);
    stmt = store_prepare(st,
                         "SELECT count(*), max(target) FROM audit_events"
                         " WHERE action = 'carbon_recorded'",
                         &err);
    assert_non_null(stmt);
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(stmt, 0), 1);
    assert_string_equal((const char *)sqlite3_column_text(stmt, 1), "JPCP");
    sqlite3_finalize(stmt);
    assert_int_equal(carbon_totals_get(st, NULL, &t, &err), 0);
    assert_int_equal(t.n, 4);
    store_close(st);
    cmd = xstrfmt("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_green_ai_default),
        cmocka_unit_test(test_codecarbon_like),
        cmocka_unit_test(test_ccf_like),
        cmocka_unit_test(test_invalid_inputs),
        cmocka_unit_test(test_signal_types),
        cmocka_unit_test(test_declared_method),
        cmocka_unit_test(test_resolution),
        cmocka_unit_test(test_json_shape),
        cmocka_unit_test(test_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
