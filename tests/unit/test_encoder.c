/*
 * test_encoder.c - label encoders: sorted codes like scikit-learn's
 * LabelEncoder, one shared code for unseen values, and a JSON round trip
 * that rejects tampered files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libpipeline/encoder.h"

static void test_fit_and_codes(void **state)
{
    const char *vals[] = {"16", "2", "1", "2", "16", "1", "4"};
    struct cat_encoder e = CAT_ENCODER_INIT;
    cat_encoder_fit(&e, "num_nodes_req", vals, 7);
    /* Distinct and sorted as strings: "1" < "16" < "2" < "4". */
    assert_int_equal(e.n, 4);
    assert_string_equal(e.classes[0], "1");
    assert_string_equal(e.classes[1], "16");
    assert_string_equal(e.classes[2], "2");
    assert_string_equal(e.classes[3], "4");
    assert_int_equal(cat_encoder_code(&e, "1"), 0);
    assert_int_equal(cat_encoder_code(&e, "16"), 1);
    assert_int_equal(cat_encoder_code(&e, "4"), 3);
    /* Unseen values all get the code after the last class. */
    assert_int_equal(cat_encoder_code(&e, "8"), 4);
    assert_int_equal(cat_encoder_code(&e, "0"), 4);
    assert_int_equal(cat_encoder_code(&e, ""), 4);
    assert_int_equal(cat_encoder_code(&e, "10"), 4);
    cat_encoder_release(&e);
}

static void test_empty_fit(void **state)
{
    struct cat_encoder e = CAT_ENCODER_INIT;
    cat_encoder_fit(&e, "user_id", NULL, 0);
    assert_int_equal(e.n, 0);
    assert_int_equal(cat_encoder_code(&e, "u1"), 0);
    cat_encoder_release(&e);
}

static void test_json_roundtrip(void **state)
{
    const char *vals[] = {"u9", "u1", "u5"};
    struct cat_encoder e = CAT_ENCODER_INIT, back = CAT_ENCODER_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    json_t *j;
    char *s;

    cat_encoder_fit(&e, "user_id", vals, 3);
    j = cat_encoder_to_json(&e);
    s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"column\":\"user_id\",\"classes\":"
                           "[\"u1\",\"u5\",\"u9\"],\"unseen_code\":3}");
    free(s);
    assert_int_equal(cat_encoder_from_json(j, &back, &err), 0);
    assert_string_equal(back.column, "user_id");
    assert_int_equal(back.n, 3);
    assert_int_equal(cat_encoder_code(&back, "u5"), 1);
    assert_int_equal(cat_encoder_code(&back, "u7"), 3);
    json_decref(j);
    cat_encoder_release(&back);
    cat_encoder_release(&e);
}

static void test_json_rejects(void **state)
{
    static const struct {
        const char *doc;
        const char *msg;
    } cases[] = {
        {"{\"column\":\"c\",\"classes\":[\"a\",\"b\"],\"unseen_code\":3}",
         "encoder 'c': unseen_code 3 is not the class count 2"},
        {"{\"column\":\"c\",\"classes\":[\"b\",\"a\"],\"unseen_code\":2}",
         "encoder 'c': class 1 is not a string in sorted order"},
        {"{\"column\":\"c\",\"classes\":[\"a\",1],\"unseen_code\":2}",
         "encoder 'c': class 1 is not a string in sorted order"},
        {"{\"classes\":[],\"unseen_code\":0}",
         "encoder needs 'column', 'classes' and 'unseen_code'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cat_encoder e = CAT_ENCODER_INIT;
        exa_error_t err = EXA_ERROR_INIT;
        json_t *j = json_loads(cases[i].doc, 0, NULL);
        assert_non_null(j);
        assert_int_equal(cat_encoder_from_json(j, &e, &err), -1);
        assert_int_equal(err.code, EXA_EPARSE);
        assert_string_equal(err.text, cases[i].msg);
        assert_null(e.classes); /* untouched on failure */
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_and_codes),
        cmocka_unit_test(test_empty_fit),
        cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_json_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
