/*
 * test_duration.c - Slurm printed durations, sbatch --time input, Flux
 * Standard Duration parse/format, Slurm formatting. Table-driven with the
 * exact second counts a wrong grammar would miss (MM:SS vs HH:MM, days).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "libutil/duration.h"

static void test_slurm_printed(void **state)
{
    static const struct {
        const char *in;
        int rc;
        double secs;
    } t[] = {
        {"2:43", 1, 163},   /* M:SS */
        {"20:00", 1, 1200}, /* MM:SS, not 20 hours */
        {"0:00", 1, 0},
        {"18:18", 1, 1098},
        {"3:05", 1, 185},
        {"1:00:00", 1, 3600}, /* H:MM:SS */
        {"01:09:48", 1, 4188},
        {"00:03:25", 1, 205},
        {"2-01:24:56", 1, 177896}, /* D-HH:MM:SS */
        {"7-15:37:35", 1, 661055},
        {"20-20:00:00", 1, 1800000},
        {"416-16:00:00", 1, 36000000},
        {"1-00:00:00", 1, 86400},
        {"04:27.386", 1, 267.386}, /* sacct TotalCPU MM:SS.mmm */
        {"03:44.623", 1, 224.623},
        {"1:02:03.5", 1, 3723.5},
        {"  35:16  ", 1, 2116},
        {"UNLIMITED", 0, 0},
        {"INVALID", 0, 0},
        {"Partition_Limit", 0, 0},
        {"N/A", 0, 0},
        {"", 0, 0},
        {"20", -1, 0}, /* bare numbers are not printed */
        {"1:2:3:4", -1, 0},
        {"5-", -1, 0},
        {"-3", -1, 0},
        {"1:60", -1, 0},
        {"abc", -1, 0},
        {"1:00:60", -1, 0},
        {"12:34.", -1, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        double s = -42;
        int rc = slurm_duration_parse(t[i].in, &s);
        if (rc != t[i].rc)
            fail_msg("'%s': rc %d, expected %d", t[i].in, rc, t[i].rc);
        if (rc == 1 && fabs(s - t[i].secs) > 1e-9)
            fail_msg("'%s': %f s, expected %f", t[i].in, s, t[i].secs);
        if (rc != 1 && s != -42)
            fail_msg("'%s': out-parameter written on rc %d", t[i].in, rc);
    }
}

static void test_time_arg(void **state)
{
    static const struct {
        const char *in;
        int rc;
        long long secs;
    } t[] = {
        {"20", 0, 1200},                           /* minutes */
        {"90", 0, 5400},         {"5:30", 0, 330}, /* minutes:seconds */
        {"1:00:00", 0, 3600},                      /* hours:minutes:seconds */
        {"2-0", 0, 172800},                        /* days-hours */
        {"1-12", 0, 129600},     {"1-2:30", 0, 95400}, /* days-hours:minutes */
        {"1-2:30:15", 0, 95415}, /* days-hours:minutes:seconds */
        {"UNLIMITED", 0, -1},    {"infinite", 0, -1},  {"", -1, 0},
        {"1:2:3:4", -1, 0},      {"1h", -1, 0},        {"-5", -1, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        long long s = -42;
        int rc = slurm_time_arg_parse(t[i].in, &s);
        if (rc != t[i].rc)
            fail_msg("'%s': rc %d, expected %d", t[i].in, rc, t[i].rc);
        if (rc == 0 && s != t[i].secs)
            fail_msg("'%s': %lld s, expected %lld", t[i].in, s, t[i].secs);
    }
}

static void test_fsd(void **state)
{
    static const struct {
        const char *in;
        int rc;
        double secs;
    } t[] = {
        {"0.057s", 0, 0.057},  {"1.765m", 0, 105.9}, {"11.61m", 0, 696.6},
        {"1.667h", 0, 6001.2}, {"1d", 0, 86400},     {"30", 0, 30},
        {"2.5", 0, 2.5},       {"0s", 0, 0},         {"", -1, 0},
        {"1.2.3s", -1, 0},     {"-1s", -1, 0},       {"5x", -1, 0},
        {"m", -1, 0},
    };
    double s;
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        int rc;
        s = -42;
        rc = fsd_parse(t[i].in, &s);
        if (rc != t[i].rc)
            fail_msg("'%s': rc %d, expected %d", t[i].in, rc, t[i].rc);
        if (rc == 0 && fabs(s - t[i].secs) > 1e-9 * (1 + t[i].secs))
            fail_msg("'%s': %f s, expected %f", t[i].in, s, t[i].secs);
    }
    assert_int_equal(fsd_parse("inf", &s), 0);
    assert_true(isinf(s));
}

static void test_format(void **state)
{
    char b[64];
    (void)state;
    fsd_format(0.057, b, sizeof(b));
    assert_string_equal(b, "0.057s");
    fsd_format(105.9, b, sizeof(b));
    assert_string_equal(b, "1.765m");
    fsd_format(6001.2, b, sizeof(b));
    assert_string_equal(b, "1.667h");
    fsd_format(86400, b, sizeof(b));
    assert_string_equal(b, "1d");
    fsd_format(30, b, sizeof(b));
    assert_string_equal(b, "30s");
    fsd_format(INFINITY, b, sizeof(b));
    assert_string_equal(b, "inf");
    slurm_duration_format(163, b, sizeof(b));
    assert_string_equal(b, "00:02:43");
    slurm_duration_format(177896, b, sizeof(b));
    assert_string_equal(b, "2-01:24:56");
    slurm_duration_format(86400, b, sizeof(b));
    assert_string_equal(b, "1-00:00:00");
    slurm_duration_format(-1, b, sizeof(b));
    assert_string_equal(b, "UNLIMITED");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_printed),
        cmocka_unit_test(test_time_arg),
        cmocka_unit_test(test_fsd),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
