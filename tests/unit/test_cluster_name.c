/* test_cluster_name.c - the cluster-name rule (libfleet/registry.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "libfleet/registry.h"

static int check(const char *name, const char *source, exa_error_t *err)
{
    *err = (exa_error_t)EXA_ERROR_INIT;
    return cluster_name_check(name, source, err);
}

static void test_valid(void **state)
{
    exa_error_t err;
    char n63[64];
    (void)state;
    memset(n63, 'a', 63);
    n63[63] = '\0';
    assert_int_equal(check("testa", NULL, &err), 0);
    assert_int_equal(check("0", NULL, &err), 0);
    assert_int_equal(check("env-slurm-127.0.0.1-2222", NULL, &err), 0);
    assert_int_equal(check("a_b.c-d", NULL, &err), 0);
    assert_int_equal(check(n63, NULL, &err), 0);
}

static void test_invalid(void **state)
{
    exa_error_t err;
    char n64[65], n300[301];
    (void)state;
    memset(n64, 'a', 64);
    n64[64] = '\0';
    memset(n300, 'b', 300);
    n300[300] = '\0';
    assert_int_equal(check("testa ", "--cluster", &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_string_equal(err.text,
                        "invalid cluster name 'testa ' (from --cluster): "
                        "expected [A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    assert_int_equal(check("te\nst\ta", NULL, &err), -1);
    assert_string_equal(err.text, "invalid cluster name 'te\\nst\\ta': "
                                  "expected [A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    assert_int_equal(check("it's", NULL, &err), -1);
    assert_non_null(strstr(err.text, "'it\\'s'"));
    assert_int_equal(check("\x01x", NULL, &err), -1);
    assert_non_null(strstr(err.text, "'\\x01x'"));
    assert_int_equal(check(n64, NULL, &err), -1);
    assert_int_equal(check(n300, "EXAMLOPS_HPC_CLUSTER", &err), -1);
    assert_non_null(strstr(err.text, "bbb...' (too long) (from "
                                     "EXAMLOPS_HPC_CLUSTER): expected "));
    assert_null(strchr(err.text, '\n'));
    assert_int_equal(check("", NULL, &err), -1);
    assert_int_equal(check(NULL, NULL, &err), -1);
    assert_int_equal(check(".hidden", NULL, &err), -1);
    assert_int_equal(check("-rf", NULL, &err), -1);
    assert_int_equal(check("a/b", NULL, &err), -1);
    assert_int_equal(check("a:b", NULL, &err), -1);
    assert_int_equal(check("caf\xc3\xa9", NULL, &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
