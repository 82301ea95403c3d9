/*
 * test_parse_num.c - libutil/parse.h: the overflow-checked number parsers
 * every scheduler-output parser uses. Table-driven over the edges a
 * strtoll-based or hand-rolled parser gets wrong: INT64_MAX and one past
 * it, UINT64_MAX and one past it, "-", "", '+', blanks, suffix overflow,
 * and the cursor (advanced only on success).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "libutil/parse.h"

static void test_i64(void **state)
{
    static const struct {
        const char *in;
        int rc;
        int64_t v;
    } t[] = {
        {"0", 0, 0},
        {"42", 0, 42},
        {"007", 0, 7},
        {"-0", 0, 0},
        {"-17", 0, -17},
        {"9223372036854775807", 0, INT64_MAX},
        {"9223372036854775808", -1, 0}, /* INT64_MAX + 1 */
        {"-9223372036854775808", 0, INT64_MIN},
        {"-9223372036854775809", -1, 0},
        {"99999999999999999999999", -1, 0},
        {"", -1, 0},
        {"-", -1, 0},
        {"+1", -1, 0}, /* no '+' */
        {" 1", -1, 0}, /* no blanks */
        {"1 ", -1, 0},
        {"0x10", -1, 0},
        {"1e3", -1, 0},
        {"--1", -1, 0},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        int64_t v = 12345;
        int rc = parse_i64_str(t[i].in, &v);
        if (rc != t[i].rc)
            fail_msg("'%s': rc %d, want %d", t[i].in, rc, t[i].rc);
        assert_int_equal(v, t[i].rc == 0 ? t[i].v : 12345); /* untouched */
    }
    {
        int64_t v;
        assert_int_equal(parse_i64_str(NULL, &v), -1);
    }
}

static void test_u64_count_int(void **state)
{
    uint64_t u = 1;
    int64_t c = 1;
    int n = 1;

    assert_int_equal(parse_u64_str("18446744073709551615", &u), 0);
    assert_true(u == UINT64_MAX);
    u = 1;
    assert_int_equal(parse_u64_str("18446744073709551616", &u), -1);
    assert_true(u == 1);
    assert_int_equal(parse_u64_str("-1", &u), -1);
    assert_int_equal(parse_count_str("9223372036854775807", &c), 0);
    assert_true(c == INT64_MAX);
    assert_int_equal(parse_count_str("9223372036854775808", &c), -1);
    assert_int_equal(parse_count_str("-1", &c), -1);
    assert_int_equal(parse_count_str("4611686018427387904", &c), 0);
    assert_true(c == (int64_t)1 << 62);
    assert_int_equal(parse_int_str("2147483647", &n), 0);
    assert_int_equal(n, INT_MAX);
    assert_int_equal(parse_int_str("2147483648", &n), -1);
    assert_int_equal(n, INT_MAX);
    assert_int_equal(parse_int_str("", &n), -1);
}

static void test_cursor(void **state)
{
    const char s[] = "12:34x";
    const char *p = s, *end = s + strlen(s);
    int64_t a = 0, b = 0;

    assert_int_equal(parse_i64(&p, end, &a), 0);
    assert_ptr_equal(p, s + 2);
    assert_int_equal(parse_char(&p, end, '-'), -1); /* no advance */
    assert_ptr_equal(p, s + 2);
    assert_int_equal(parse_char(&p, end, ':'), 0);
    assert_int_equal(parse_i64(&p, end, &b), 0);
    assert_int_equal(a, 12);
    assert_int_equal(b, 34);
    assert_ptr_equal(p, s + 5);
    assert_int_equal(parse_i64(&p, end, &b), -1); /* 'x': no advance */
    assert_ptr_equal(p, s + 5);
    assert_int_equal(b, 34);
    /* end bounds the read: "12" of "123" */
    p = "123";
    assert_int_equal(parse_count(&p, p + 2, &a), 0);
    assert_int_equal(a, 12);
    /* an overflowing run fails whole, the cursor stays */
    p = "99999999999999999999,1";
    assert_int_equal(parse_count(&p, p + 22, &a), -1);
    assert_int_equal(*p, '9');
    /* spans */
    assert_int_equal(parse_count_span("4096MB", 4, &a), 0);
    assert_int_equal(a, 4096);
    assert_int_equal(parse_count_span("4096MB", 5, &a), -1);
    assert_int_equal(parse_count_span("", 0, &a), -1);
}

static void test_size(void **state)
{
    static const struct {
        const char *in;
        int rc;
        uint64_t bytes;
    } t[] = {
        {"0", 0, 0},
        {"500", 0, 500ULL << 20}, /* bare: default unit MiB */
        {"500M", 0, 500ULL << 20},
        {"500m", 0, 500ULL << 20},
        {"1G", 0, 1ULL << 30},
        {"16K", 0, 16384},
        {"2T", 0, 2ULL << 40},
        {"1P", 0, 1ULL << 50},
        {"15E", 0, 15ULL << 60},
        {"16E", -1, 0}, /* 2^64: suffix overflow */
        {"20000000T", -1, 0},
        {"17592186044416M", -1, 0}, /* 2^44 MiB = 2^64 B */
        {"17592186044415M", 0, 18446744073708503040ULL},
        {"3.91G", 0, 4198330531ULL}, /* fraction, truncated */
        {"1.5K", 0, 1536},
        {"0.5", 0, 1ULL << 19},
        {"1.", -1, 0},
        {".5G", -1, 0},
        {"G", -1, 0},
        {"", -1, 0},
        {"-1G", -1, 0},
        {"+1G", -1, 0},
        {"1G ", -1, 0},
        {"1X", -1, 0},
        {"18446744073709551616", -1, 0},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        uint64_t v = 7;
        int rc = parse_size_str(t[i].in, 1ULL << 20, &v);
        if (rc != t[i].rc)
            fail_msg("'%s': rc %d, want %d", t[i].in, rc, t[i].rc);
        if (rc == 0 && v != t[i].bytes)
            fail_msg("'%s': %llu bytes, want %llu", t[i].in,
                     (unsigned long long)v, (unsigned long long)t[i].bytes);
        if (rc < 0)
            assert_true(v == 7);
    }
    {
        uint64_t v;
        assert_int_equal(parse_size_str("1", 0, &v), -1); /* no unit */
        assert_int_equal(parse_size_str("1", 1, &v), 0);
        assert_true(v == 1);
    }
}

static void test_real(void **state)
{
    double d = 9;

    assert_int_equal(parse_real_str("81920", &d), 0);
    assert_true(d == 81920.0);
    assert_int_equal(parse_real_str("-3.25", &d), 0);
    assert_true(d == -3.25);
    assert_int_equal(parse_real_str("1e3", &d), 0);
    assert_true(d == 1000.0);
    assert_int_equal(parse_real_str(".5", &d), 0);
    assert_true(d == 0.5);
    d = 9;
    assert_int_equal(parse_real_str("1e999", &d), -1); /* not finite */
    assert_int_equal(parse_real_str("inf", &d), -1);
    assert_int_equal(parse_real_str("nan", &d), -1);
    assert_int_equal(parse_real_str("0x1p3", &d), -1);
    assert_int_equal(parse_real_str("+1", &d), -1);
    assert_int_equal(parse_real_str("", &d), -1);
    assert_int_equal(parse_real_str("-", &d), -1);
    assert_int_equal(parse_real_str(" 1", &d), -1);
    assert_true(d == 9);
}

static void test_count_sums(void **state)
{
    int64_t acc = 0;
    const int64_t big = (int64_t)1 << 62;

    assert_int_equal(count_add(&acc, big), 0);
    assert_int_equal(count_add(&acc, big - 1), 0);
    assert_true(acc == INT64_MAX);
    assert_int_equal(count_add(&acc, 1), -1); /* would overflow: untouched */
    assert_true(acc == INT64_MAX);
    acc = 0;
    assert_int_equal(count_add(&acc, big), 0);
    assert_int_equal(count_add(&acc, big), -1); /* 2^63 */
    assert_true(acc == big);
    assert_int_equal(count_add(&acc, -1), -1);
    acc = -1;
    assert_int_equal(count_add(&acc, 1), -1);
    acc = big;
    assert_int_equal(count_mul(&acc, 2), -1);
    assert_true(acc == big);
    acc = 3;
    assert_int_equal(count_mul(&acc, 4), 0);
    assert_int_equal(acc, 12);
    assert_int_equal(count_mul(&acc, 0), 0);
    assert_int_equal(acc, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_i64),    cmocka_unit_test(test_u64_count_int),
        cmocka_unit_test(test_cursor), cmocka_unit_test(test_size),
        cmocka_unit_test(test_real),   cmocka_unit_test(test_count_sums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
