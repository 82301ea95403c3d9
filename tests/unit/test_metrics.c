/*
 * test_metrics.c - rmse/mse/mape against values computed by hand, the
 * handling of non-finite pairs and zero targets, and the stage gates at
 * their boundaries.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libpipeline/metrics.h"

static void test_hand_computed(void **state)
{
    /* errors -10, 20, -10 over y = 100, 200, 0; the NaN pair is left out.
     * mse = (100 + 400 + 100) / 3 = 200; rmse = sqrt(200);
     * mape skips y = 0: (10/100 + 20/200) / 2 = 0.1 -> 10 %. */
    const double y[] = {100, 200, 0, 50};
    const double p[] = {110, 180, 10, NAN};
    struct reg_metrics m;
    metrics_compute(y, p, 4, &m);
    assert_int_equal(m.n, 3);
    assert_int_equal(m.n_mape, 2);
    assert_float_equal(m.mse, 200.0, 1e-12);
    assert_float_equal(m.rmse, 14.142135623730951, 1e-12);
    assert_float_equal(m.mape, 10.0, 1e-12);
}

static void test_second_case(void **state)
{
    /* y = 400, 500, 800; p = 300, 550, 800: errors 100, -50, 0.
     * mse = (10000 + 2500 + 0) / 3 = 4166.666...; rmse = 64.549...;
     * mape = (0.25 + 0.1 + 0) / 3 * 100 = 11.666... */
    const double y[] = {400, 500, 800};
    const double p[] = {300, 550, 800};
    struct reg_metrics m;
    metrics_compute(y, p, 3, &m);
    assert_float_equal(m.mse, 12500.0 / 3.0, 1e-9);
    assert_float_equal(m.rmse, sqrt(12500.0 / 3.0), 1e-9);
    assert_float_equal(m.rmse, 64.54972243679028, 1e-9);
    assert_float_equal(m.mape, 35.0 / 3.0, 1e-9);
}

static void test_nothing_to_score(void **state)
{
    const double y[] = {0, INFINITY};
    const double p[] = {5, 1};
    struct reg_metrics m;
    metrics_compute(y, p, 2, &m);
    assert_int_equal(m.n, 1);
    assert_float_equal(m.rmse, 5.0, 1e-12);
    assert_true(isnan(m.mape)); /* only a zero target */
    metrics_compute(y, p, 0, &m);
    assert_true(isnan(m.rmse) && isnan(m.mse) && isnan(m.mape));
}

static void test_gates(void **state)
{
    assert_string_equal(metrics_stage(0.0), "Production");
    assert_string_equal(metrics_stage(50.0), "Production");
    assert_string_equal(metrics_stage(50.01), "Canary");
    assert_string_equal(metrics_stage(100.0), "Canary");
    assert_string_equal(metrics_stage(100.5), "Staging");
    assert_string_equal(metrics_stage(200.0), "Staging");
    assert_string_equal(metrics_stage(200.1), "None");
    assert_string_equal(metrics_stage(NAN), "None");
    assert_string_equal(metrics_stage(INFINITY), "None");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_second_case),
        cmocka_unit_test(test_nothing_to_score),
        cmocka_unit_test(test_gates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
