/* test_target.c - the one "is this target local" rule (libutil/target.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "libutil/target.h"

static void test_rule(void **state)
{
    (void)state;
    /* no remote host named: local, whatever the kind */
    assert_int_equal(target_is_local(NULL, NULL), 1);
    assert_int_equal(target_is_local(NULL, ""), 1);
    assert_int_equal(target_is_local(NULL, "local"), 1);
    assert_int_equal(target_is_local("ssh", NULL), 1);
    assert_int_equal(target_is_local("ssh", ""), 1);
    assert_int_equal(target_is_local("", "local"), 1);
    /* localhost: local unless a kind is asked for */
    assert_int_equal(target_is_local(NULL, "localhost"), 1);
    assert_int_equal(target_is_local("", "localhost"), 1);
    assert_int_equal(target_is_local("local", "localhost"), 1);
    assert_int_equal(target_is_local("ssh", "localhost"), 0);
    /* a named host: remote unless the kind is local */
    assert_int_equal(target_is_local(NULL, "127.0.0.1"), 0);
    assert_int_equal(target_is_local("ssh", "login1"), 0);
    assert_int_equal(target_is_local("local", "login1"), 1);
    assert_int_equal(target_is_local(NULL, "localhost.example"), 0);
    assert_int_equal(target_is_local(NULL, "Local"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rule)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
