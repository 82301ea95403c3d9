/*
 * test_etag.c - If-None-Match (RFC 9110 §13.1.2) against one strong tag:
 * the forms browsers and proxies send, weak comparison, "*", and field
 * values that are not a list (which must never match).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libutil/etag.h"

#define TAG "\"4aea608b783dedce\""

static int m(const char *inm)
{
    return etag_if_none_match(inm, inm ? strlen(inm) : 0, TAG);
}

static void test_matches(void **state)
{
    (void)state;
    assert_true(m(TAG));
    assert_true(m("W/" TAG));
    assert_true(m("*"));
    assert_true(m("  *\t"));
    assert_true(m("\"0123\", " TAG));
    assert_true(m("\"0123\",W/" TAG ",\"x\""));
    assert_true(m(" , ," TAG " ,"));
    assert_true(m("\t" TAG "\t"));
}

static void test_no_match(void **state)
{
    (void)state;
    assert_false(m(NULL));
    assert_false(m(""));
    assert_false(m("   "));
    assert_false(m("\"0123456789abcdef\""));
    assert_false(m("\"4aea608b783dedc\""));   /* a prefix */
    assert_false(m("\"4aea608b783dedcee\"")); /* longer */
    assert_false(m("4aea608b783dedce"));      /* no quotes */
    assert_false(m("w/" TAG));                /* W is upper case */
    assert_false(m("*, " TAG "x"));
}

static void test_not_a_list(void **state)
{
    (void)state;
    /* a malformed value matches nothing, even when the tag is in it */
    assert_false(m(TAG " junk"));
    assert_false(m(TAG "\""));
    assert_false(m("\"4aea608b783dedce"));
    assert_false(m("\"a b\", " TAG)); /* space inside a tag */
    assert_false(m("x, " TAG));
    assert_false(m("*, " TAG));        /* "*" only alone */
    assert_false(m("\"\x01\", " TAG)); /* control byte */
}

static void test_length_bounded(void **state)
{
    const char buf[] = TAG "\"ignored";
    (void)state;
    /* only len bytes are read: the tag, not what follows it */
    assert_true(etag_if_none_match(buf, strlen(TAG), TAG));
    assert_false(etag_if_none_match(buf, strlen(TAG) - 1, TAG));
    /* a bad own tag never matches */
    assert_false(etag_if_none_match("*x", 2, "nope"));
    assert_false(etag_if_none_match("\"\"", 2, "\""));
    assert_true(etag_if_none_match("\"\"", 2, "\"\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_no_match),
        cmocka_unit_test(test_not_a_list),
        cmocka_unit_test(test_length_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
