/*
 * test_train.c - JPCP training end to end in-process on the bundled
 * sample: deterministic artifacts, a saved model that predicts what the
 * in-memory one did, SHA256SUMS that match the files, and failures that
 * leave no artifact directory.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "libpipeline/train.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

static const struct train_request dummy_req = {
    "JPCP", "PM100Dataset", "data/pm100-sample.csv", 1, 2, NULL, NULL, NULL, 0,
    0,
};

static char *read_in(const char *dir, const char *name)
{
    char *p = xstrfmt("%s/%s", dir, name);
    char *s = tu_read_file(p, NULL);
    free(p);
    assert_non_null(s);
    return s;
}

static void test_deterministic_and_verifiable(void **state)
{
    char *dir = tu_mkdtemp();
    char *a = xstrfmt("%s/a", dir), *b = xstrfmt("%s/b", dir);
    struct trained_model tm1, tm2;
    exa_error_t err = EXA_ERROR_INIT;
    char sha1[65], sha2[65];
    char *sums_a, *sums_b;

    if (pipeline_train_to_dir(&dummy_req, a, &tm1, sha1, &err) < 0)
        fail_msg("%s", err.text);
    if (pipeline_train_to_dir(&dummy_req, b, &tm2, sha2, &err) < 0)
        fail_msg("%s", err.text);
    assert_string_equal(sha1, sha2);
    assert_int_equal(tm1.train_rows, 50);
    assert_int_equal(tm1.val_rows, 50);
    assert_int_equal(tm1.skipped_rows, 7);
    assert_true(isfinite(tm1.metrics.rmse) && tm1.metrics.rmse > 0);
    assert_string_equal(tm1.stage, metrics_stage(tm1.metrics.rmse));
    /* Encoders saw only training rows: 50 rows cannot hold 51 users. */
    assert_true(tm1.enc[1].n <= 50);

    sums_a = read_in(a, "SHA256SUMS");
    sums_b = read_in(b, "SHA256SUMS");
    assert_string_equal(sums_a, sums_b);
    {
        /* Each line is "<sha256 of the file>  <name>", names sorted. */
        const char *names[] = {"encoders.json", "metrics.json", "model.json"};
        struct strbuf want = STRBUF_INIT;
        char hex[65];
        for (size_t i = 0; i < 3; i++) {
            size_t len;
            char *p = xstrfmt("%s/%s", a, names[i]);
            char *body = tu_read_file(p, &len);
            assert_non_null(body);
            sha256_hex(body, len, hex);
            strbuf_addf(&want, "%s  %s\n", hex, names[i]);
            free(body);
            free(p);
        }
        assert_string_equal(sums_a, want.buf);
        sha256_hex(sums_a, strlen(sums_a), hex);
        assert_string_equal(hex, sha1);
        strbuf_release(&want);
    }
    free(sums_a);
    free(sums_b);

    {
        /* The saved model predicts exactly what the trained one does. */
        size_t len;
        char *p = xstrfmt("%s/model.json", a);
        char *body = tu_read_file(p, &len);
        rf_model_t *m = rf_load_json(body, len, &err);
        float X[6] = {0, 0, 1, 2, (float)tm1.enc[0].n, (float)tm1.enc[1].n};
        double p1[3], p2[3];
        assert_non_null(m);
        assert_int_equal(rf_predict(tm1.forest, X, 3, 2, p1, &err), 0);
        assert_int_equal(rf_predict(m, X, 3, 2, p2, &err), 0);
        for (int i = 0; i < 3; i++) {
            assert_true(isfinite(p1[i]));
            assert_float_equal(p1[i], p2[i], 1e-6);
        }
        rf_destroy(m);
        free(body);
        free(p);
    }
    {
        char *enc = read_in(a, "encoders.json");
        assert_non_null(strstr(enc, "\"num_nodes_req_cat\""));
        assert_non_null(strstr(enc, "\"unseen_code\""));
        free(enc);
    }
    trained_model_release(&tm1);
    trained_model_release(&tm2);
    tu_rmtree(dir);
    free(a);
    free(b);
    free(dir);
}

static void test_failure_leaves_nothing(void **state)
{
    char *dir = tu_mkdtemp();
    char *csv = xstrfmt("%s/october.csv", dir);
    char *out = xstrfmt("%s/out", dir);
    struct train_request req = dummy_req;
    struct trained_model tm;
    exa_error_t err = EXA_ERROR_INIT;
    char sha[65];
    struct stat st;

    /* Usable rows, but none in the training window. */
    tu_write_file(csv, "job_id,user_id,num_nodes_req,num_nodes_alloc,"
                       "submit_time,node_power_consumption\n"
                       "1,u,1,1,2020-10-02T00:00:00Z,300\n");
    req.dataset_path = csv;
    assert_int_equal(pipeline_train_to_dir(&req, out, &tm, sha, &err), -1);
    assert_int_equal(err.code, EXA_EFAIL);
    assert_string_equal(err.text,
                        "no usable training rows: none of the 1 usable "
                        "records has submit_time in [2020-05-01, "
                        "2020-09-01) UTC");
    trained_model_release(&tm);
    assert_int_equal(stat(out, &st), -1);
    /* Only the CSV: no temporary directory left behind. */
    assert_int_equal(tu_count_entries(dir), 1);

    req.model = "GPT9";
    assert_int_equal(pipeline_train_to_dir(&req, out, &tm, sha, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_string_equal(err.text, "unknown model 'GPT9': known models: JPCP");
    trained_model_release(&tm);
    req.model = "jpcp"; /* names match case-insensitively */
    req.dataset = "PM200";
    assert_int_equal(pipeline_train_to_dir(&req, out, &tm, sha, &err), -1);
    assert_string_equal(err.text, "unknown dataset 'PM200': known datasets: "
                                  "PM100Dataset");
    trained_model_release(&tm);
    assert_int_equal(tu_count_entries(dir), 1);
    tu_rmtree(dir);
    free(csv);
    free(out);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic_and_verifiable),
        cmocka_unit_test(test_failure_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
