/*
 * test_slurm_fixtures.c - the parsers over real Slurm 22.05 captures in
 * tests/fixtures/slurm/ (see its README.md for each command line), with
 * the exact values the testbed printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libdiscovery/parse_sinfo.h"
#include "libsched/parse_slurm.h"
#include "libutil/strbuf.h"

static char *slurp(const char *name, size_t *len)
{
    char path[512];
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    FILE *fp;
    xsnprintf(path, sizeof(path), "tests/fixtures/slurm/%s", name);
    fp = fopen(path, "rb");
    if (!fp)
        fail_msg("cannot open %s", path);
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        strbuf_add(&sb, buf, n);
    fclose(fp);
    return strbuf_detach(&sb, len);
}

static void sinfo_file(const char *name, struct sinfo_result *res)
{
    size_t len;
    char *buf = slurp(name, &len);
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;
    memset(res, 0, sizeof(*res));
    if (sinfo_parse(buf, len, res, &kind, &err) < 0)
        fail_msg("%s: %s", name, err.text);
    free(buf);
}

static void test_sinfo_pipe(void **state)
{
    const char *files[] = {"sinfo-pipe-header.out", "sinfo-pipe-noheader.out"};
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct sinfo_result r;
        sinfo_file(files[i], &r);
        assert_int_equal(r.nnodes, 1);
        assert_string_equal(r.nodes[0].name, "testa-n1");
        assert_int_equal(r.nodes[0].cpus, 4);
        assert_int_equal(r.nodes[0].mem_mb, 8000);
        assert_int_equal(r.nodes[0].gpus, 4);
        assert_string_equal(r.nodes[0].gpu_type, "a100");
        assert_string_equal(r.nodes[0].state, "idle");
        assert_int_equal(r.nodes[0].partitions.nr, 1);
        assert_string_equal(r.nodes[0].partitions.v[0], "debug");
        sinfo_result_free(&r);
    }
}

static void test_sinfo_multicluster(void **state)
{
    struct sinfo_result r;
    (void)state;
    sinfo_file("sinfo-multicluster.out", &r);
    assert_int_equal(r.nnodes, 2);
    assert_string_equal(r.nodes[1].name, "testb-n1");
    assert_int_equal(r.nodes[1].cpus, 8);
    assert_int_equal(r.nodes[1].mem_mb, 16000);
    assert_int_equal(r.nodes[1].gpus, 2);
    assert_string_equal(r.nodes[1].gpu_type, "h100");
    sinfo_result_free(&r);
}

static void test_sinfo_padded_and_default(void **state)
{
    struct sinfo_result r;
    (void)state;
    sinfo_file("sinfo-O-padded.out", &r);
    assert_int_equal(r.nnodes, 1);
    assert_int_equal(r.nodes[0].cpus, 4);
    assert_int_equal(r.nodes[0].mem_mb, 8000);
    assert_int_equal(r.nodes[0].gpus, 4);
    assert_true(r.nodes[0].has_gres_used);
    assert_int_equal(r.nodes[0].gpus_used, 0);
    assert_string_equal(r.nodes[0].raw_state, "idle");
    sinfo_result_free(&r);

    sinfo_file("sinfo-default.out", &r);
    assert_int_equal(r.nnodes, 1);
    assert_string_equal(r.nodes[0].name, "testa-n1");
    assert_false(r.nodes[0].has_cpus);
    assert_false(r.nodes[0].has_gres);
    assert_string_equal(r.nodes[0].state, "idle");
    assert_string_equal(r.nodes[0].partitions.v[0], "debug");
    sinfo_result_free(&r);
}

typedef int (*jobs_parse_f)(const char *, size_t, struct slurm_jobs *,
                            const char **, exa_error_t *);

static void jobs_file(jobs_parse_f fn, const char *name, struct slurm_jobs *j)
{
    size_t len;
    char *buf = slurp(name, &len);
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;
    memset(j, 0, sizeof(*j));
    if (fn(buf, len, j, &kind, &err) < 0)
        fail_msg("%s: %s", name, err.text);
    free(buf);
}

static void test_squeue(void **state)
{
    struct slurm_jobs j;
    (void)state;
    jobs_file(squeue_parse, "squeue-pipe-noheader.out", &j);
    assert_int_equal(j.njobs, 2);
    assert_string_equal(j.jobs[0].id, "1");
    assert_string_equal(j.jobs[0].name, "timeout-job");
    assert_string_equal(j.jobs[0].state, "RUNNING");
    assert_int_equal((long long)j.jobs[0].elapsed_s, 3);
    assert_int_equal(j.jobs[0].time_limit_s, 60);
    assert_false(j.jobs[1].has_time_limit); /* UNLIMITED */
    assert_false(j.jobs[1].has_gpus);       /* %b is N/A for --gpus */
    assert_string_equal(j.jobs[1].nodelist.v[0], "testa-n1");
    slurm_jobs_free(&j);

    jobs_file(squeue_parse, "squeue-default.out", &j);
    assert_int_equal(j.njobs, 2);
    assert_string_equal(j.jobs[0].raw_state, "R");
    assert_string_equal(j.jobs[0].name, "timeout-");
    assert_null(j.jobs[0].start); /* not printed */
    slurm_jobs_free(&j);

    jobs_file(squeue_parse, "squeue-O-tres.out", &j);
    assert_int_equal(j.njobs, 1);
    assert_true(j.jobs[0].has_gpus);
    assert_int_equal(j.jobs[0].gpus, 1);
    slurm_jobs_free(&j);

    jobs_file(squeue_parse, "squeue-held.out", &j);
    assert_string_equal(j.jobs[0].state, "PENDING");
    assert_string_equal(j.jobs[0].reason, "JobHeldUser");
    slurm_jobs_free(&j);

    jobs_file(squeue_parse, "squeue-O-cluster.out", &j);
    assert_int_equal(j.njobs, 2);
    assert_string_equal(j.jobs[1].cluster, "testb");
    assert_string_equal(j.jobs[1].id, "2");
    assert_string_equal(j.jobs[1].state, "PENDING");
    assert_string_equal(j.jobs[1].name, "wrap");
    slurm_jobs_free(&j);
}

static void test_scontrol(void **state)
{
    struct slurm_jobs j;
    (void)state;
    jobs_file(squeue_parse, "scontrol-job-running.out", &j);
    assert_int_equal(j.njobs, 1);
    assert_string_equal(j.jobs[0].id, "2");
    assert_string_equal(j.jobs[0].state, "RUNNING");
    assert_string_equal(j.jobs[0].start, "2026-11-30T00:59:46");
    assert_null(j.jobs[0].end);          /* EndTime=Unknown */
    assert_int_equal(j.jobs[0].gpus, 1); /* never 2 from both TRES */
    assert_string_equal(j.jobs[0].user, "root");
    slurm_jobs_free(&j);

    jobs_file(scontrol_jobs_parse, "scontrol-job-completed.out", &j);
    assert_string_equal(j.jobs[0].state, "COMPLETED");
    assert_string_equal(j.jobs[0].end, "2026-11-30T00:59:48");
    assert_int_equal((long long)j.jobs[0].elapsed_s, 2);
    assert_int_equal(j.jobs[0].exit_code, 0);
    assert_string_equal(j.jobs[0].account, "research");
    slurm_jobs_free(&j);
}

static void test_sacct(void **state)
{
    struct slurm_jobs j;
    (void)state;
    jobs_file(sacct_parse, "sacct-exa-format.out", &j);
    assert_int_equal(j.njobs, 1);
    assert_int_equal(j.nsteps, 1);
    assert_string_equal(j.jobs[0].start, "2026-11-30T00:59:46");
    assert_string_equal(j.jobs[0].end, "2026-11-30T00:59:48");
    assert_int_equal((long long)j.jobs[0].elapsed_s, 2);
    assert_int_equal(j.jobs[0].gpus, 1);
    assert_string_equal(j.steps[0].job_id, "2");
    assert_string_equal(j.steps[0].step, "batch");
    slurm_jobs_free(&j);

    jobs_file(sacct_parse, "sacct-cancelled.out", &j);
    assert_string_equal(j.jobs[0].state, "CANCELLED");
    assert_string_equal(j.jobs[0].raw_state, "CANCELLED by 0");
    assert_int_equal(j.jobs[0].gpus, 0);
    assert_int_equal(j.steps[0].signal, 15);
    slurm_jobs_free(&j);

    jobs_file(sacct_parse, "sacct-timeout.out", &j);
    assert_string_equal(j.jobs[0].state, "TIMEOUT");
    assert_int_equal(j.jobs[0].time_limit_s, 60);
    assert_int_equal((long long)j.jobs[0].elapsed_s, 83);
    assert_string_equal(j.steps[0].state, "CANCELLED");
    slurm_jobs_free(&j);

    jobs_file(sacct_parse, "sacct-rejected.out", &j);
    assert_string_equal(j.jobs[0].state, "FAILED");
    assert_int_equal(j.jobs[0].exit_code, 1);
    assert_false(j.jobs[0].has_gpus);           /* empty AllocTRES */
    assert_int_equal(j.jobs[0].nodelist.nr, 0); /* None assigned */
    slurm_jobs_free(&j);

    jobs_file(sacct_parse, "sacct-default.out", &j);
    assert_int_equal(j.njobs, 1);
    assert_int_equal(j.nsteps, 1);
    assert_string_equal(j.jobs[0].partition, "debug");
    assert_null(j.steps[0].partition); /* blank column on the step */
    assert_string_equal(j.steps[0].account, "research");
    assert_string_equal(j.steps[0].state, "COMPLETED");
    slurm_jobs_free(&j);

    jobs_file(sacct_parse, "sacct-header.out", &j);
    assert_int_equal(j.jobs[0].gpus, 1);
    assert_string_equal(j.jobs[0].nodelist.v[0], "testa-n1");
    slurm_jobs_free(&j);

    jobs_file(sacct_parse, "sacct-over-run.out", &j);
    assert_int_equal(j.njobs, 6);
    assert_string_equal(j.jobs[2].raw_state, "CANCELLED by 0");
    assert_int_equal((long long)j.jobs[0].elapsed_s, 83);
    assert_int_equal(j.jobs[3].exit_code, 3);
    assert_int_equal(j.jobs[1].gpus, 1);
    assert_string_equal(j.jobs[5].id, "7");
    slurm_jobs_free(&j);
}

static void test_client_errors(void **state)
{
    struct sinfo_result r;
    struct slurm_jobs j;
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    size_t len;
    char *buf;
    (void)state;
    buf = slurp("sinfo-no-controller.err", &len);
    memset(&r, 0, sizeof(r));
    assert_int_equal(sinfo_parse(buf, len, &r, &kind, &err), -1);
    assert_string_equal(kind, "slurm_error");
    assert_int_equal(err.code, EXA_ESCHED);
    assert_string_equal(err.text, "slurm_load_partitions: Unable to contact "
                                  "slurm controller (connect failure)");
    assert_int_equal(r.nnodes, 0);
    sinfo_result_free(&r);
    free(buf);
    buf = slurp("squeue-unknown-id.err", &len);
    memset(&j, 0, sizeof(j));
    assert_int_equal(squeue_parse(buf, len, &j, &kind, &err), -1);
    assert_string_equal(kind, "slurm_error");
    assert_int_equal(j.njobs, 0);
    slurm_jobs_free(&j);
    free(buf);
}

static void test_sbatch(void **state)
{
    struct sbatch_result r;
    exa_error_t err = EXA_ERROR_INIT;
    size_t len;
    char *buf;
    (void)state;
    buf = slurp("sbatch-parsable.out", &len);
    memset(&r, 0, sizeof(r));
    assert_int_equal(sbatch_parse(buf, len, &r, &err), 0);
    assert_string_equal(r.job_id, "3");
    assert_null(r.cluster);
    sbatch_result_free(&r);
    free(buf);
    buf = slurp("sbatch-parsable-cluster.out", &len);
    assert_int_equal(sbatch_parse(buf, len, &r, &err), 0);
    assert_string_equal(r.job_id, "2");
    assert_string_equal(r.cluster, "testb");
    sbatch_result_free(&r);
    free(buf);
    buf = slurp("sbatch-unknown-partition.err", &len);
    assert_int_equal(sbatch_parse(buf, len, &r, &err), -1);
    assert_string_equal(
        err.text, "sbatch: error: invalid partition specified: nosuchpart");
    sbatch_result_free(&r);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sinfo_pipe),
        cmocka_unit_test(test_sinfo_multicluster),
        cmocka_unit_test(test_sinfo_padded_and_default),
        cmocka_unit_test(test_squeue),
        cmocka_unit_test(test_scontrol),
        cmocka_unit_test(test_sacct),
        cmocka_unit_test(test_client_errors),
        cmocka_unit_test(test_sbatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
