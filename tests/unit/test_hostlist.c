/*
 * test_hostlist.c - Slurm hostlist expansion and compression: padding from
 * the low bound, cartesian products, duplicates kept, and every error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libhostlist/hostlist.h"
#include "libutil/arena.h"
#include "libutil/strbuf.h"

/* Expand expr and return the hosts joined by ' ' (static buffer). */
static const char *expand(const char *expr, long *n)
{
    static struct strbuf sb = STRBUF_INIT;
    struct strvec v = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    strbuf_reset(&sb);
    *n = hostlist_expand(expr, &v, 0, &err);
    if (*n < 0) {
        strbuf_addf(&sb, "ERR:%s", err.text);
        return sb.buf;
    }
    for (size_t i = 0; i < v.nr; i++)
        strbuf_addf(&sb, "%s%s", i ? " " : "", v.v[i]);
    strvec_clear(&v);
    return sb.buf;
}

static void test_expand(void **state)
{
    static const struct {
        const char *in, *out;
    } t[] = {
        {"node[001-004,010]", "node001 node002 node003 node004 node010"},
        {"p[00-3]p", "p00p p01p p02p p03p"},
        {"b04-[09-10]", "b04-09 b04-10"},
        {"n[8-11]", "n8 n9 n10 n11"},
        {"rack[0-1]_blade[0-1]",
         "rack0_blade0 rack0_blade1 rack1_blade0 rack1_blade1"},
        {"a[1-2],b3", "a1 a2 b3"},
        {"fluke[108,108]", "fluke108 fluke108"},
        {"nodeA,nodeB[001,003],nodeC", "nodeA nodeB001 nodeB003 nodeC"},
        {"c457-[011-012],c427-032", "c457-011 c457-012 c427-032"},
        {"single", "single"},
        {"x[7]", "x7"},
        {"  h[1-2]\n", "h1 h2"},
        {"", ""},
        {"\n", ""},
        {"a1, b[2-3] c4", "a1 b2 b3 c4"},
        {"a,,b", "a b"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        long n;
        const char *got = expand(t[i].in, &n);
        if (strcmp(got, t[i].out))
            fail_msg("'%s': got '%s', expected '%s'", t[i].in, got, t[i].out);
    }
}

static void test_errors(void **state)
{
    static const char *bad[] = {
        "gpu-[1-3]-[a-b]", "node[3-1]", "node[1-3",
        "node1-3]",        "n[[1-2]]",  "n[]",
        "n[1-]",           "n[,1]",     "n[0-999999]x[0-999999]",
        "n[0-1000000]",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        long n;
        const char *got = expand(bad[i], &n);
        if (n != -1 || strncmp(got, "ERR:", 4))
            fail_msg("'%s' should fail, got '%.60s'", bad[i], got);
    }
}

static void test_error_leaves_output(void **state)
{
    struct strvec v = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    strvec_push(&v, "keep");
    assert_int_equal(hostlist_expand("a[1-2],b[2-1]", &v, 0, &err), -1);
    assert_int_equal(v.nr, 1);
    assert_string_equal(v.v[0], "keep");
    assert_non_null(strstr(err.text, "low bound"));
    strvec_clear(&v);
    assert_int_equal(hostlist_expand("n[1-10]", &v, 5, &err), -1);
    assert_int_equal(v.nr, 0);
}

static void test_compress(void **state)
{
    const char *a[] = {"n1", "n2", "n3", "n5", "x", "gpu01", "gpu02"};
    const char *b[] = {"node001", "node002", "node010"};
    char *s;
    (void)state;
    s = hostlist_compress(a, 7);
    assert_string_equal(s, "n[1-3,5],x,gpu[01-02]");
    free(s);
    s = hostlist_compress(b, 3);
    assert_string_equal(s, "node[001-002,010]");
    free(s);
    s = hostlist_compress(a, 1);
    assert_string_equal(s, "n1");
    free(s);
    s = hostlist_compress(a, 0);
    assert_string_equal(s, "");
    free(s);
}

/*
 * hostlist_expand_arena gives hostlist_expand's names, count and error
 * text, on the forms its fast path takes ("p[lo-hi]s", a plain name) and
 * on their near misses that it leaves to the general expansion.
 */
static void test_arena_same(void **state)
{
    static const char *const exprs[] = {
        "n1",
        "gpu-00001",
        "gpu-[00001-00002]",
        "n[1-3]",
        "a[01-10]b",
        "n[8-12]",
        "n[9-11]",
        "n[099-101]",
        "n[0-0]",
        "n[5]",
        "n[05]x",
        "[1-2]",
        "[7]",
        "n[999999999999999998-999999999999999999]",
        "n[1234567890123456789]",
        "n[1-1234567890123456789]",
        "n[3-1]",
        "n[]",
        "n[1-]",
        "n[-1]",
        "n[1,3]",
        "n[1-2],m[3]",
        " n[1-2]",
        "n[1-2] ",
        "n[1-2]]",
        "n[1-2][3-4]",
        "n[1-3",
        "caf\xc3\xa9[1-2]",
        "n[1-200000]",
        "n[1-4]",
        "",
        "n~[1-2]_x",
        "a b",
        "n\x7f[1-2]"};
    (void)state;
    for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++)
        for (size_t cap = 0; cap < 5; cap += 3) {
            struct strvec v = STRVEC_INIT;
            struct arena a = {0};
            const char **names = NULL;
            exa_error_t e1 = EXA_ERROR_INIT, e2 = EXA_ERROR_INIT;
            long n = hostlist_expand(exprs[i], &v, cap, &e1);
            long na = hostlist_expand_arena(exprs[i], &a, &names, cap, &e2);
            if (n != na)
                fail_msg("'%s' cap %zu: %ld vs %ld", exprs[i], cap, n, na);
            if (n < 0) {
                assert_string_equal(e2.text, e1.text);
                assert_null(names);
            } else {
                for (long k = 0; k < n; k++)
                    assert_string_equal(names[k], v.v[k]);
                assert_null(names[n]);
            }
            strvec_clear(&v);
            arena_release(&a);
        }
}

static void test_roundtrip(void **state)
{
    struct strvec v = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    char *s;
    (void)state;
    assert_int_equal(hostlist_expand("mcr[336-359,488-550,553]", &v, 0, &err),
                     24 + 63 + 1);
    s = hostlist_compress(v.v, v.nr);
    assert_string_equal(s, "mcr[336-359,488-550,553]");
    free(s);
    strvec_clear(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_error_leaves_output),
        cmocka_unit_test(test_compress),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_arena_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
