/*
 * test_dlib.c - dlib_open (libutil/dlib.h) against libm.so.6, which every
 * glibc system has: a table is filled from a real library; a missing
 * library and a missing symbol are one error each, naming the soname and
 * the remedy, with no slot written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "libutil/dlib.h"

static struct {
    __typeof__(&cos) cos_fn;
    __typeof__(&sqrt) sqrt_fn;
} t;

static struct dlib_spec spec(const char *soname, const struct dlib_sym *s,
                             size_t n)
{
    struct dlib_spec sp = {"libm",
                           soname,
                           "install Debian's libc6",
                           "glibc 2.34 or later",
                           EXA_ECONFIG,
                           s,
                           n};
    return sp;
}

static void test_fills_the_table(void **state)
{
    const struct dlib_sym syms[] = {DLIB_SYM(t, cos_fn, cos),
                                    DLIB_SYM(t, sqrt_fn, sqrt)};
    struct dlib_spec sp = spec("libm.so.6", syms, 2);
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    memset(&t, 0, sizeof(t));
    assert_int_equal(dlib_open(&sp, &err), 0);
    assert_string_equal(err.text, "");
    assert_non_null(t.cos_fn);
    assert_true(t.cos_fn(0.0) == 1.0);
    assert_true(t.sqrt_fn(81.0) == 9.0);
}

static void test_missing_library(void **state)
{
    const struct dlib_sym syms[] = {DLIB_SYM(t, cos_fn, cos)};
    struct dlib_spec sp = spec("/nonexistent/libm.so.6", syms, 1);
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    memset(&t, 0, sizeof(t));
    assert_int_equal(dlib_open(&sp, &err), -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_non_null(strstr(err.text, "cannot load libm library "
                                     "'/nonexistent/libm.so.6': "));
    assert_non_null(strstr(err.text, "(install Debian's libc6)"));
    assert_null(t.cos_fn);
    /* a NULL err is allowed (exa_err) */
    assert_int_equal(dlib_open(&sp, NULL), -1);
}

static void test_missing_symbol(void **state)
{
    const struct dlib_sym syms[] = {
        DLIB_SYM(t, cos_fn, cos),
        DLIB_SYM(t, sqrt_fn, exa_no_such_function),
    };
    struct dlib_spec sp = spec("libm.so.6", syms, 2);
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    memset(&t, 0, sizeof(t));
    assert_int_equal(dlib_open(&sp, &err), -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_string_equal(err.text, "libm library 'libm.so.6' lacks "
                                  "'exa_no_such_function' (glibc 2.34 or "
                                  "later expected)");
    /* cos resolved, but nothing is written unless every symbol is */
    assert_null(t.cos_fn);
    assert_null(t.sqrt_fn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fills_the_table),
        cmocka_unit_test(test_missing_library),
        cmocka_unit_test(test_missing_symbol),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
