/*
 * test_store_jobs.c - jobs and model_versions accessors on a scratch
 * platform.db: cluster-scoped job ids, partial updates, list order and
 * filters, gap-free version numbers, a failed publish registering
 * nothing, and job_rec_write_json giving job_rec_to_json's bytes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libstore/jobs.h"
#include "libstore/models.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

struct fixture {
    char *dir;
    store_t *st;
};

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof(*f));
    char *path;
    exa_error_t err = EXA_ERROR_INIT;
    f->dir = tu_mkdtemp();
    path = xstrfmt("%s/platform.db", f->dir);
    f->st = store_open(path, &err);
    free(path);
    if (!f->st)
        fail_msg("store_open: %s", err.text);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_close(f->st);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void insert(store_t *st, const char *cluster, const char *job_id,
                   const char *model, long long *id)
{
    struct job_rec j;
    exa_error_t err = EXA_ERROR_INIT;
    job_rec_init(&j);
    j.cluster = (char *)cluster;
    j.scheduler = (char *)"slurm";
    j.job_id = (char *)job_id;
    j.model = (char *)model;
    j.nodes = 2;
    if (store_job_insert(st, &j, id, &err) < 0)
        fail_msg("insert: %s", err.text);
}

static void test_cluster_scoped_ids(void **state)
{
    struct fixture *f = *state;
    struct job_rec j, got;
    exa_error_t err = EXA_ERROR_INIT;
    long long a = 0, b = 0;

    insert(f->st, "alpha", "42", "JPCP", &a);
    insert(f->st, "beta", "42", "JPCP", &b); /* same id, other cluster */
    assert_int_not_equal(a, b);

    job_rec_init(&j);
    j.cluster = (char *)"alpha";
    j.scheduler = (char *)"slurm";
    j.job_id = (char *)"42";
    assert_int_equal(store_job_insert(f->st, &j, NULL, &err), -1);
    assert_int_equal(err.code, EXA_EFAIL);
    assert_string_equal(err.text,
                        "job '42' on cluster 'alpha' is already recorded");

    assert_int_equal(store_job_get(f->st, "beta", "42", &got, &err), 0);
    assert_int_equal(got.id, b);
    assert_string_equal(got.cluster, "beta");
    assert_string_equal(got.state, "PENDING"); /* default */
    assert_string_equal(got.kind, "train");
    assert_int_equal(got.nodes, 2);
    assert_true(got.exit_code == JOB_NULL_INT);
    assert_true(isnan(got.run_seconds));
    assert_non_null(got.created_at);
    job_rec_release(&got);

    assert_int_equal(store_job_get(f->st, "gamma", "42", &got, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
}

static void test_partial_update(void **state)
{
    struct fixture *f = *state;
    struct job_rec ch, got;
    exa_error_t err = EXA_ERROR_INIT;

    insert(f->st, "alpha", "7", "JPCP", NULL);
    job_rec_init(&ch);
    ch.state = (char *)"COMPLETED";
    ch.exit_code = 0;
    ch.run_seconds = 12.5;
    ch.gpu_hours = 0.0;
    assert_int_equal(store_job_update(f->st, "alpha", "7", &ch, &err), 0);
    assert_int_equal(store_job_get(f->st, "alpha", "7", &got, &err), 0);
    assert_string_equal(got.state, "COMPLETED");
    assert_int_equal(got.exit_code, 0);
    assert_true(got.run_seconds == 12.5);
    assert_true(got.gpu_hours == 0.0);
    assert_int_equal(got.nodes, 2);         /* untouched */
    assert_string_equal(got.model, "JPCP"); /* untouched */
    assert_true(isnan(got.cpu_hours));
    job_rec_release(&got);

    assert_int_equal(store_job_update(f->st, "beta", "7", &ch, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
}

static void test_upsert(void **state)
{
    struct fixture *f = *state;
    struct job_rec j, got;
    exa_error_t err = EXA_ERROR_INIT;
    long long id1 = 0, id2 = 0;

    insert(f->st, "alpha", "9", "JPCP", &id1);
    job_rec_init(&j);
    j.cluster = (char *)"alpha";
    j.scheduler = (char *)"slurm";
    j.job_id = (char *)"9";
    j.state = (char *)"RUNNING";
    j.gpus = 4;
    assert_int_equal(store_job_upsert(f->st, &j, &id2, &err), 0);
    assert_int_equal(id2, id1); /* the same row, updated */
    assert_int_equal(store_job_get(f->st, "alpha", "9", &got, &err), 0);
    assert_string_equal(got.state, "RUNNING");
    assert_int_equal(got.gpus, 4);
    assert_int_equal(got.nodes, 2);         /* kept */
    assert_string_equal(got.model, "JPCP"); /* kept */
    job_rec_release(&got);
    j.job_id = (char *)"10";
    assert_int_equal(store_job_upsert(f->st, &j, &id2, &err), 0);
    assert_true(id2 > id1); /* a new row */
}

static void test_list_order_filter_limit(void **state)
{
    struct fixture *f = *state;
    struct job_rec *list = NULL;
    struct job_filter flt = {0};
    exa_error_t err = EXA_ERROR_INIT;
    size_t n = 0;
    json_t *js;

    insert(f->st, "c", "1", "JPCP", NULL);
    insert(f->st, "c", "2", "OTHER", NULL);
    insert(f->st, "c", "3", "JPCP", NULL);
    insert(f->st, "c", "4", "JPCP", NULL);

    assert_int_equal(store_job_list(f->st, NULL, &list, &n, &err), 0);
    assert_int_equal(n, 4);
    assert_string_equal(list[0].job_id, "4"); /* newest first */
    assert_string_equal(list[3].job_id, "1");
    job_rec_free_list(list, n);

    flt.model = "JPCP";
    flt.limit = 2;
    assert_int_equal(store_job_list(f->st, &flt, &list, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(list[0].job_id, "4");
    assert_string_equal(list[1].job_id, "3");
    js = job_rec_to_json(&list[0]);
    assert_string_equal(json_string_value(json_object_get(js, "job_id")), "4");
    assert_true(json_is_null(json_object_get(js, "run_seconds")));
    assert_int_equal(json_integer_value(json_object_get(js, "nodes")), 2);
    json_decref(js);
    job_rec_free_list(list, n);

    flt.model = "NOPE";
    flt.limit = 0;
    list = (struct job_rec *)&flt; /* must be overwritten */
    assert_int_equal(store_job_list(f->st, &flt, &list, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_null(list);
}

static int publish_ok(struct model_version *mv, void *arg, exa_error_t *err)
{
    int *calls = arg;
    (*calls)++;
    free(mv->artifact_path);
    mv->artifact_path = xstrfmt("/models/%s/%lld", mv->model, mv->version);
    return 0;
}

static int publish_fail(struct model_version *mv, void *arg, exa_error_t *err)
{
    return exa_err(err, EXA_ECONFIG, "disk full");
}

static void test_model_versions(void **state)
{
    struct fixture *f = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct model_version mv, *list = NULL;
    struct model_summary *sum = NULL;
    struct job_rec got;
    long long jid = 0;
    size_t n = 0;
    int calls = 0;
    json_t *js;

    insert(f->st, "local", "mock-1", "JPCP", &jid);
    for (int i = 0; i < 2; i++) {
        model_version_init(&mv);
        mv.model = xstrdup("JPCP");
        mv.stage = xstrdup(i ? "Canary" : "Staging");
        mv.rmse = i ? 90.0 : 150.0;
        mv.metrics = xstrdup(i ? "{\"rmse\":90.0}" : "{\"rmse\":150.0}");
        mv.job_ref = jid;
        mv.job_id = xstrdup("mock-1");
        mv.cluster = xstrdup("local");
        mv.train_rows = 50;
        if (store_model_register(f->st, &mv, publish_ok, NULL, &calls, &err) <
            0)
            fail_msg("register: %s", err.text);
        assert_int_equal(mv.version, i + 1);
        assert_string_equal(mv.artifact_path,
                            i ? "/models/JPCP/2" : "/models/JPCP/1");
        model_version_release(&mv);
    }
    assert_int_equal(calls, 2);

    /* A failing publish registers nothing and keeps numbering gap-free. */
    model_version_init(&mv);
    mv.model = xstrdup("JPCP");
    assert_int_equal(
        store_model_register(f->st, &mv, publish_fail, NULL, NULL, &err), -1);
    assert_string_equal(err.text, "disk full");
    assert_int_equal(mv.version, 0);
    model_version_release(&mv);

    assert_int_equal(store_model_versions(f->st, "JPCP", 0, &list, &n, &err),
                     0);
    assert_int_equal(n, 2);
    assert_int_equal(list[0].version, 1);
    assert_int_equal(list[1].version, 2);
    assert_string_equal(list[1].stage, "Canary");
    assert_int_equal(list[1].job_ref, jid);
    assert_int_equal(list[1].train_rows, 50);
    assert_true(list[1].val_rows == JOB_NULL_INT);
    js = model_version_to_json(&list[1]);
    assert_true(json_real_value(json_object_get(json_object_get(js, "metrics"),
                                                "rmse")) == 90.0);
    assert_true(json_real_value(json_object_get(
                    json_object_get(js, "evaluation"), "rmse")) == 90.0);
    assert_true(
        json_is_null(json_object_get(json_object_get(js, "metrics"), "mse")));
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(js, "lineage"), "job_id")),
                        "mock-1");
    json_decref(js);
    model_version_free_list(list, n);

    assert_int_equal(store_model_versions(f->st, "JPCP", 1, &list, &n, &err),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(list[0].stage, "Staging");
    model_version_free_list(list, n);

    /* The producing job learned its version. */
    assert_int_equal(store_job_get(f->st, "local", "mock-1", &got, &err), 0);
    assert_int_equal(got.model_version, 2);
    job_rec_release(&got);

    assert_int_equal(store_model_list(f->st, &sum, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(sum[0].model, "JPCP");
    assert_int_equal(sum[0].versions, 2);
    assert_int_equal(sum[0].latest_version, 2);
    assert_string_equal(sum[0].latest_stage, "Canary");
    model_summary_free_list(sum, n);
}

static char *slurp(FILE *f)
{
    long n;
    char *b;
    fflush(f);
    n = ftell(f);
    rewind(f);
    b = xcalloc(1, (size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return b;
}

/* the streamed rows of `exa --json hpc jobs` are the json_t path's bytes:
 * nulls of every type, escapes, non-ASCII and invalid UTF-8, integral
 * and fractional reals, negative integers */
static void test_write_json_same_bytes(void **state)
{
    struct job_rec j[3];
    FILE *a = tmpfile(), *b = tmpfile();
    json_t *arr = json_array();
    struct jsonw w;
    char *x, *y;
    (void)state;
    for (int i = 0; i < 3; i++)
        job_rec_init(&j[i]);
    j[0].id = 7;
    j[0].cluster = xstrdup("testa");
    j[0].job_id = xstrdup("123_[1-5%2]");
    j[0].reason = xstrdup("caf\xc3\xa9 \"quoted\"\n\ttab \x01");
    j[0].raw_state = xstrdup("bad \xff utf8");
    j[0].exit_code = -1;
    j[0].signal = 9;
    j[0].run_seconds = 3600.0;
    j[0].cpu_seconds = 7100.5;
    j[0].gpu_hours = 0.1;
    j[0].cpu_hours = -0.0;
    j[0].queue_seconds = 1e20;
    j[0].nodes = 0;
    j[1].id = 8; /* everything else null */
    j[2].id = 9;
    j[2].gpu_hours = 999999999999999.0;
    j[2].run_seconds = 1e15;
    for (int i = 0; i < 3; i++)
        json_array_append_new(arr, job_rec_to_json(&j[i]));
    assert_int_equal(jx_dumpf(arr, a, 1), 0);
    jsonw_init(&w, b, 1);
    jsonw_arr_begin(&w);
    for (int i = 0; i < 3; i++)
        job_rec_write_json(&j[i], &w);
    jsonw_arr_end(&w);
    assert_int_equal(jsonw_finish(&w), 0);
    x = slurp(a);
    y = slurp(b);
    assert_string_equal(y, x);
    assert_non_null(strstr(x, "\"run_seconds\": 3600.0"));
    free(x);
    free(y);
    json_decref(arr);
    for (int i = 0; i < 3; i++)
        job_rec_release(&j[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cluster_scoped_ids, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_partial_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upsert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_order_filter_limit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_model_versions, setup, teardown),
        cmocka_unit_test(test_write_json_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
