/*
 * test_pipeline_task.c - the pure parts of `exa pipeline run --via
 * worker` (libtask/pipeline_task.h): the task spec built from a run
 * request (the batch payload's argv with --out=out, the four outputs
 * read from out/, cpus, gpus, the timeout from --time and its
 * refusals) and the lineage line, with and without a Slurm job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "libtask/pipeline_task.h"
#include "libutil/xalloc.h"

static void req_init(struct cluster_run_request *q,
                     const struct sched_resources *r)
{
    memset(q, 0, sizeof(*q));
    q->model = "jpcp"; /* zoo names are case-insensitive */
    q->dataset = "PM100Dataset";
    q->dataset_path = "/data/pm100.csv";
    q->cluster = "testa";
    q->via_worker = 1;
    q->res = r;
}

static void test_spec_payload(void **state)
{
    static const char *const want[] = {
        "/opt/exa/bin/exa", "train",        "--model",        "JPCP",
        "--dataset",        "PM100Dataset", "--dataset-path", "/data/pm100.csv",
        "--out=out",        "--dummy",      "--threads=3"};
    struct sched_resources r = SCHED_RESOURCES_INIT;
    struct cluster_run_request q;
    struct tp_spec s;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    r.cpus_per_task = 2;
    r.ntasks = 3;
    r.gpus = 1;
    r.time = (char *)"1:30:00";
    req_init(&q, &r);
    q.dummy = 1;
    q.nthread = 3;
    assert_int_equal(pipeline_task_spec(&q, "/opt/exa/bin/exa", &s, &err), 0);
    assert_int_equal(s.argc, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < s.argc; i++)
        assert_string_equal(s.argv[i], want[i]);
    assert_null(s.argv[s.argc]);
    assert_int_equal(s.noutputs, 4);
    assert_string_equal(s.outputs[0], "SHA256SUMS");
    assert_string_equal(s.outputs[1], "model.json");
    assert_string_equal(s.outputs[2], "encoders.json");
    assert_string_equal(s.outputs[3], "metrics.json");
    assert_string_equal(s.outputs_dir, PIPELINE_TASK_OUT_DIR);
    assert_null(s.cwd);
    assert_int_equal(s.cpus, 6);
    assert_int_equal(s.gpus, 1);
    assert_true(s.timeout_s == 5400);
    tp_spec_release(&s);
}

static void test_spec_defaults_and_refusals(void **state)
{
    struct sched_resources r = SCHED_RESOURCES_INIT;
    struct cluster_run_request q;
    struct tp_spec s;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    req_init(&q, NULL);
    assert_int_equal(pipeline_task_spec(&q, "exa", &s, &err), 0);
    assert_int_equal(s.cpus, 1);
    assert_int_equal(s.gpus, 0);
    assert_true(s.timeout_s == 3600);
    assert_int_equal(s.argc, 9); /* no --dummy, no --threads */
    tp_spec_release(&s);

    r.time = (char *)"UNLIMITED";
    req_init(&q, &r);
    assert_int_equal(pipeline_task_spec(&q, "exa", &s, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_non_null(strstr(err.text, "--time 'UNLIMITED'"));
    r.time = (char *)"2-x";
    assert_int_equal(pipeline_task_spec(&q, "exa", &s, &err), -1);
    r.time = NULL;
    q.dataset_path = "";
    assert_int_equal(pipeline_task_spec(&q, "exa", &s, &err), -1);
    assert_non_null(strstr(err.text, "--dataset-path"));
    req_init(&q, NULL);
    q.model = "nosuch";
    assert_int_equal(pipeline_task_spec(&q, "exa", &s, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
}

static void test_lineage_line(void **state)
{
    struct cluster_run_result r;
    struct strbuf sb = STRBUF_INIT;
    (void)state;
    cluster_run_result_init(&r);
    r.task_id = 7;
    r.task_attempt = 2;
    r.worker_id = xstrdup("w-ab12");
    r.worker_job_id = xstrdup("42");
    r.cluster = xstrdup("testa");
    memcpy(r.run_id, "3f2a", 5);
    pipeline_task_lineage_line(&r, &sb);
    assert_string_equal(sb.buf, "task 7 attempt 2 on worker w-ab12 (Slurm job "
                                "42) of cluster testa, run 3f2a");
    strbuf_reset(&sb);
    free(r.worker_job_id);
    r.worker_job_id = NULL;
    pipeline_task_lineage_line(&r, &sb);
    assert_string_equal(sb.buf, "task 7 attempt 2 on worker w-ab12 (no Slurm "
                                "job) of cluster testa, run 3f2a");
    strbuf_release(&sb);
    cluster_run_result_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_payload),
        cmocka_unit_test(test_spec_defaults_and_refusals),
        cmocka_unit_test(test_lineage_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
