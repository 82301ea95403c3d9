/*
 * test_duration.c - Slurm printed durations, sbatch --time input, Flux
 * Standard Duration parse/format, Slurm formatting. Table-driven with the
 * exact second counts a wrong grammar would miss (MM:SS vs HH:MM, days).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
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

/* One string both ways: the same return value and seconds. */
static void same_both_ways(const char *in)
{
    double a = -7, b = -7;
    int ra = slurm_duration_parse(in, &a);
    int rb = slurm_duration_parse_unfixed(in, &b);
    if (ra != rb || a != b)
        fail_msg("'%s': %d %.17g fast, %d %.17g general", in, ra, a, rb, b);
}

/* slurm_duration_parse's path for the exact printed shapes gives what
 * the general reading gives: every string of up to 8 characters over
 * digits at the 59/60 boundaries and both separators, then longer ones
 * (to 12, blanks and letters too) drawn by a fixed generator, each in a
 * heap block of its exact size (ASan sees any read past the NUL). */
static void test_fixed_same_as_unfixed(void **state)
{
    static const char abc[] = "0569:-";
    static const char wide[] = "0123456789:-:- x.";
    char buf[16];
    unsigned long long seed = 14;
    (void)state;
    for (size_t len = 1; len <= 8; len++) {
        size_t idx[8] = {0};
        for (;;) {
            size_t k;
            for (k = 0; k < len; k++)
                buf[k] = abc[idx[k]];
            buf[len] = '\0';
            same_both_ways(buf);
            for (k = 0; k < len && ++idx[k] == sizeof(abc) - 1; k++)
                idx[k] = 0;
            if (k == len)
                break;
        }
    }
    for (int i = 0; i < 300000; i++) {
        size_t len = 1 + (size_t)((seed >> 33) % 12);
        char *heap = malloc(len + 1);
        assert_non_null(heap);
        for (size_t k = 0; k < len; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            heap[k] = wide[(seed >> 33) % (sizeof(wide) - 1)];
        }
        heap[len] = '\0';
        same_both_ways(heap);
        free(heap);
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
        cmocka_unit_test(test_fixed_same_as_unfixed),
        cmocka_unit_test(test_time_arg),
        cmocka_unit_test(test_fsd),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
