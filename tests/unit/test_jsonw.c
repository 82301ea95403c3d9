/*
 * test_jsonw.c - the streaming writer gives jx_dumpf's bytes: the same
 * document built as json_t and written with jsonw, pretty and compact,
 * with escapes, control bytes, non-ASCII and invalid UTF-8, nulls,
 * negative and large integers, empty and nested containers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libutil/json.h"
#include "libutil/jsonw.h"

static const char *const strs[] = {"plain",
                                   "",
                                   "q\"uote\\back/slash",
                                   "tab\there\nnl\rcr\bbs\ffeed",
                                   "\x01\x1f ctl",
                                   "caf\xc3\xa9 \xe2\x82\xac",
                                   "bad \xff\xfe utf8 \xc3",
                                   "gpu:a100:4(S:0-1)"};

static char *slurp_stream(FILE *f)
{
    long n;
    char *b;
    fflush(f);
    n = ftell(f);
    rewind(f);
    b = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    return b;
}

static void check(int pretty)
{
    FILE *a = tmpfile(), *b = tmpfile();
    json_t *doc = json_object(), *arr = json_array();
    struct jsonw w;
    char *x, *y;
    size_t ns = sizeof(strs) / sizeof(strs[0]);

    /* the json_t way */
    for (size_t i = 0; i < ns; i++) {
        json_t *o = json_object(), *inner = json_array();
        jx_set(o, "s", jx_str(strs[i]));
        if (i != 6) /* jansson refuses a key that is not UTF-8 */
            jx_set(o, strs[i], json_integer(-(long long)i * 1000000007LL));
        jx_set(o, "null", jx_str(NULL));
        jx_set(o, "maybe", jx_int_or_null((int)(i % 2), 9223372036854775807LL));
        jx_set(o, "empty_a", json_array());
        jx_set(o, "empty_o", json_object());
        for (size_t k = 0; k < i; k++)
            json_array_append_new(inner, jx_str(strs[k]));
        jx_set(o, "inner", inner);
        json_array_append_new(arr, o);
    }
    jx_set(doc, "items", arr);
    jx_set(doc, "n", json_integer(0));
    assert_int_equal(jx_dumpf(doc, a, pretty), 0);
    json_decref(doc);

    /* the streaming way */
    jsonw_init(&w, b, pretty);
    jsonw_obj_begin(&w);
    jsonw_key(&w, "items");
    jsonw_arr_begin(&w);
    for (size_t i = 0; i < ns; i++) {
        jsonw_obj_begin(&w);
        jsonw_key(&w, "s");
        jsonw_str(&w, strs[i]);
        if (i != 6) {
            jsonw_key(&w, strs[i]);
            jsonw_int(&w, -(long long)i * 1000000007LL);
        }
        jsonw_key(&w, "null");
        jsonw_str(&w, NULL);
        jsonw_key(&w, "maybe");
        jsonw_int_or_null(&w, (int)(i % 2), 9223372036854775807LL);
        jsonw_key(&w, "empty_a");
        jsonw_arr_begin(&w);
        jsonw_arr_end(&w);
        jsonw_key(&w, "empty_o");
        jsonw_obj_begin(&w);
        jsonw_obj_end(&w);
        jsonw_key(&w, "inner");
        jsonw_arr_begin(&w);
        for (size_t k = 0; k < i; k++)
            jsonw_str(&w, strs[k]);
        jsonw_arr_end(&w);
        jsonw_obj_end(&w);
    }
    jsonw_arr_end(&w);
    jsonw_key(&w, "n");
    jsonw_int(&w, 0);
    jsonw_obj_end(&w);
    assert_int_equal(jsonw_finish(&w), 0);

    x = slurp_stream(a);
    y = slurp_stream(b);
    assert_string_equal(y, x);
    free(x);
    free(y);
    fclose(a);
    fclose(b);
}

static void test_pretty_matches_jansson(void **state)
{
    (void)state;
    check(1);
}

static void test_compact_matches_jansson(void **state)
{
    (void)state;
    check(0);
}

/* an unbalanced document is an error, not silent garbage */
static void test_unbalanced_fails(void **state)
{
    FILE *f = tmpfile();
    struct jsonw w;
    (void)state;
    jsonw_init(&w, f, 1);
    jsonw_arr_begin(&w);
    assert_int_equal(jsonw_finish(&w), -1);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pretty_matches_jansson),
        cmocka_unit_test(test_compact_matches_jansson),
        cmocka_unit_test(test_unbalanced_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
