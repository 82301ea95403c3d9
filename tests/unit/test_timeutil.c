/*
 * test_timeutil.c - ISO-8601 parsing against epoch values computed
 * independently (`date -u -d ... +%s`), and the formats it must refuse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libutil/timeutil.h"

static const struct {
    const char *in;
    long long epoch;
} good[] = {
    {"2020-05-01T00:00:00Z", 1588291200},
    {"2020-05-01 00:00:00", 1588291200},
    {"2020-05-01T00:00:00+00:00", 1588291200},
    {"2020-05-01T00:00:00.999999Z", 1588291200},
    {"2020-09-01T00:00:00Z", 1598918400},
    {"2020-08-31T23:59:59Z", 1598918399},
    {"2020-05-01T02:00:00+02:00", 1588291200},
    {"2020-04-30T19:00:00-05:00", 1588291200},
    {"2020-02-29T12:00:00", 1582977600},
    {"2020-10-01", 1601510400},
    {"1970-01-01T00:00:00Z", 0},
};

static const char *const bad[] = {
    "",
    "2020-5-01",
    "2020-13-01",
    "2021-02-29",
    "2020-05-01T24:00:00",
    "2020-05-01T12:60:00",
    "2020-05-01X12:00:00",
    "2020-05-01T12:00:00Q",
    "2020-05-01T12:00:00.",
    " 2020-05-01",
    "2020-05-01T12:00:00+25:00",
    "2020-05-01T0200+0200",
    "yesterday",
};

static void test_parse_good(void **state)
{
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        time_t t = 0;
        exa_error_t err = EXA_ERROR_INIT;
        if (time_parse_iso8601(good[i].in, &t, &err) < 0)
            fail_msg("'%s': %s", good[i].in, err.text);
        assert_int_equal((long long)t, good[i].epoch);
    }
}

static void test_parse_bad(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        time_t t = 12345;
        exa_error_t err = EXA_ERROR_INIT;
        if (time_parse_iso8601(bad[i], &t, &err) == 0)
            fail_msg("'%s' was accepted as %lld", bad[i], (long long)t);
        assert_int_equal(err.code, EXA_EPARSE);
        assert_int_equal((long long)t, 12345); /* untouched */
    }
}

static void test_parse_sched(void **state)
{
    /* Slurm prints local time without a zone: pin the zone to see it. */
    setenv("TZ", "UTC", 1);
    tzset();
    assert_int_equal(time_parse_sched("2022-07-05T16:21:22"), 1657038082);
    setenv("TZ", "CET-1", 1); /* UTC+1, no DST rule */
    tzset();
    assert_int_equal(time_parse_sched("2022-07-05T16:21:22"),
                     1657038082 - 3600);
    setenv("TZ", "UTC", 1);
    tzset();
    /* epoch seconds, as SLURM_TIME_FORMAT=%s or Flux print them */
    assert_int_equal(time_parse_sched("1738774194"), 1738774194);
    assert_int_equal(time_parse_sched("1738774194.078433"), 1738774194);
    assert_int_equal(time_parse_sched("Unknown"), -1);
    assert_int_equal(time_parse_sched("None"), -1);
    assert_int_equal(time_parse_sched(""), -1);
    assert_int_equal(time_parse_sched(NULL), -1);
    assert_int_equal(time_parse_sched("1e300"), -1);
    assert_int_equal(time_parse_sched("-5"), -1);
    /* a trailing Z is UTC whatever TZ says (Flux times as exa records
     * them, mock's) */
    assert_int_equal(time_parse_sched("2022-07-05T16:21:22Z"), 1657038082);
    setenv("TZ", "Europe/London", 1);
    tzset();
    assert_int_equal(time_parse_sched("2022-07-05T16:21:22Z"), 1657038082);
    setenv("TZ", "UTC", 1);
    tzset();
    assert_int_equal(time_parse_sched("2022-07-05T16:21:22+01"), -1);
}

static void test_format_roundtrip(void **state)
{
    char buf[TIME_ISO_MAX];
    time_t t;
    time_format_iso8601(1598918399, buf, sizeof(buf));
    assert_string_equal(buf, "2020-08-31T23:59:59Z");
    assert_int_equal(time_parse_iso8601(buf, &t, NULL), 0);
    assert_int_equal((long long)t, 1598918399);
}

static void test_clocks(void **state)
{
    double a = time_monotonic(), b;
    volatile double x = 0;
    for (int i = 0; i < 1000000; i++)
        x += i;
    b = time_monotonic();
    assert_true(b >= a);
    assert_true(time_cpu_seconds(0) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_format_roundtrip),
        cmocka_unit_test(test_parse_sched),
        cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
