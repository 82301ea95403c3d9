/*
 * test_accounting.c - GPU counts near 2^62 through every path that adds
 * them (issue 15: UBSan showed signed overflow in accounting.c and
 * slurm.c): job accounting over sacct (typed TRES entries summed), the
 * Slurm adapter's array aggregation (task GPUs summed into the parent),
 * squeue's tres-per-node times nodes. The defined result, one policy
 * (libutil/parse.h): a count or sum that does not fit is unknown (-1 /
 * null), never wrapped, never clamped; everything that fits is exact.
 * Run it under SAN=1 as well (-fno-sanitize-recover: a report fails it).
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libsched/accounting.h"
#include "libsched/parse_slurm.h"
#include "libsched/sched.h"
#include "libtransport/transport.h"
#include "libutil/strbuf.h"

#define P62 "4611686018427387904" /* 2^62 */
#define HDR                                                                    \
    "JobID|ElapsedRaw|AllocTRES|TotalCPU|Start|End|Submit|NNodes|"             \
    "AllocCPUS\n"
#define TIMES "|2026-01-01T10:10:00|2026-01-01T11:10:00|2026-01-01T10:00:00"

static void test_acct_untyped_2p62(void **state)
{
    /* the allocation says 2^62 GPUs; three steps each claim 2^62 too and
     * are not added (a step's TRES is part of the allocation) */
    static const char text[] =
        HDR "7|3600|cpu=4,gres/gpu=" P62 ",node=2|00:00:00" TIMES "|2|4\n"
            "7.batch|3600|gres/gpu=" P62 "|00:10:00" TIMES "|1|1\n"
            "7.0|3600|gres/gpu=" P62 "|00:20:00" TIMES "|1|1\n"
            "7.1|3600|gres/gpu=" P62 "|00:30:00" TIMES "|1|1\n";
    struct sched_acct a;
    exa_error_t err = EXA_ERROR_INIT;

    (void)state;
    setenv("TZ", "UTC", 1);
    assert_int_equal(sched_acct_parse_sacct(text, strlen(text), "7", &a, &err),
                     0);
    assert_true(a.gpus == (long long)1 << 62);
    assert_true(a.gpu_hours == 4611686018427387904.0); /* x 3600 s / 3600 */
    assert_int_equal(a.nodes, 2);
    assert_int_equal(a.cpus, 4);
    assert_true(a.cpu_seconds == 3600.0); /* steps: 10 + 20 + 30 min */
    assert_true(a.run_seconds == 3600.0);
    assert_true(a.queue_seconds == 600.0);
}

static void test_acct_typed_sum_overflows(void **state)
{
    /* 2^62 + 2^62 = 2^63 > INT64_MAX: unknown, not negative */
    static const char over[] =
        HDR "8|3600|gres/gpu:a100=" P62 ",gres/gpu:h100=" P62
            ",node=2|00:00:00" TIMES "|2|2\n";
    /* 2^62 + (2^62 - 1) = INT64_MAX: fits, exact */
    static const char fits[] =
        HDR "9|3600|gres/gpu:a100=" P62 ",gres/gpu:h100=4611686018427387903"
            ",node=2|00:00:00" TIMES "|2|2\n";
    /* one past INT64_MAX in a single entry: not a count */
    static const char big[] =
        HDR "10|3600|gres/gpu=9223372036854775808|00:00:00" TIMES "|1|1\n";
    struct sched_acct a;
    exa_error_t err = EXA_ERROR_INIT;

    (void)state;
    assert_int_equal(sched_acct_parse_sacct(over, strlen(over), "8", &a, &err),
                     0);
    assert_int_equal(a.gpus, -1);
    assert_true(a.gpu_hours == -1);
    assert_true(a.run_seconds == 3600.0); /* the rest is still read */
    assert_int_equal(a.cpus, 2);
    assert_int_equal(sched_acct_parse_sacct(fits, strlen(fits), "9", &a, &err),
                     0);
    assert_true(a.gpus == INT64_MAX);
    assert_int_equal(sched_acct_parse_sacct(big, strlen(big), "10", &a, &err),
                     0);
    assert_int_equal(a.gpus, -1);
}

/* Array tasks of job 5 in accounting, each with gpus GPUs. */
static void array_status(const char *const *gpus, size_t n, int *total)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"5"};
    struct sched_job out[1];
    struct strbuf sa = STRBUF_INIT;

    strbuf_addstr(&sa, "JobID\037State\037ExitCode\037Submit\037Start\037End"
                       "\037ElapsedRaw\037AllocTRES\037NCPUS\037NNodes\n");
    for (size_t i = 0; i < n; i++)
        strbuf_addf(&sa,
                    "5_%zu\037COMPLETED\0370:0\0372026-01-01T10:00:00"
                    "\0372026-01-01T10:00:01\0372026-01-01T10:00:02\0371"
                    "\037cpu=1,gres/gpu=%s,node=1\0371\0371\n",
                    i, gpus[i]);
    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    transport_fake_add(t, "sacct *", sa.buf, "", 0, 0, 0);
    assert_int_equal(sched_status_batch(s, ids, 1, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_COMPLETED);
    *total = out[0].gpus;
    strbuf_release(&sa);
    sched_free(s);
    transport_close(t);
}

static void test_array_gpu_totals(void **state)
{
    static const char *const three[] = {"1073741824", "1073741824",
                                        "1073741824"};
    static const char *const max[] = {"1073741824", "1073741823"};
    static const char *const small[] = {"2", "1", "4"};
    static const char *const huge[] = {P62, "2"};
    int g;

    (void)state;
    array_status(small, 3, &g);
    assert_int_equal(g, 7);
    array_status(max, 2, &g); /* 2^31 - 1 = INT_MAX: fits */
    assert_int_equal(g, INT_MAX);
    array_status(three, 3, &g); /* 3 x 2^30 > INT_MAX: unknown */
    assert_int_equal(g, -1);
    array_status(three, 2, &g); /* 2^31: unknown */
    assert_int_equal(g, -1);
    array_status(huge, 2, &g); /* a task's own 2^62 does not fit an int */
    assert_int_equal(g, 2);
}

static void test_per_node_times_nodes(void **state)
{
    /* squeue -O JobID,State,NumNodes,tres-per-node: 2^62 per node on 2
     * nodes is 2^63: null; on 1 node it is exact */
    static const char text[] = "JOBID|STATE|NODES|TRES_PER_NODE\n"
                               "11|RUNNING|2|gres/gpu:" P62 "\n"
                               "12|RUNNING|1|gres/gpu:" P62 "\n"
                               "13|RUNNING|3|gres/gpu:2\n";
    struct slurm_jobs jobs;
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;

    (void)state;
    memset(&jobs, 0, sizeof(jobs));
    assert_int_equal(squeue_parse(text, strlen(text), &jobs, &kind, &err), 0);
    assert_int_equal(jobs.njobs, 3);
    assert_int_equal(jobs.jobs[0].has_gpus, 0);
    assert_int_equal(jobs.jobs[1].has_gpus, 1);
    assert_true(jobs.jobs[1].gpus == (long long)1 << 62);
    assert_int_equal(jobs.jobs[2].gpus, 6);
    slurm_jobs_free(&jobs);
}

static void test_sbatch_streams(void **state)
{
    /* the id comes from stdout only; stderr lines are warnings; a missing
     * stream is allowed (found by fuzz_sbatch: NULL + 0) */
    static const char out[] = "4242;testb\n";
    static const char errs[] = "sbatch: warning: x\n1234\n";
    struct sbatch_result r;
    exa_error_t err = EXA_ERROR_INIT;

    (void)state;
    assert_int_equal(
        sbatch_parse_streams(out, strlen(out), errs, strlen(errs), &r, &err),
        0);
    assert_string_equal(r.job_id, "4242");
    assert_string_equal(r.cluster, "testb");
    assert_int_equal(r.warnings.nr, 2);
    assert_string_equal(r.warnings.v[1], "1234");
    sbatch_result_free(&r);
    assert_int_equal(
        sbatch_parse_streams(NULL, 0, errs, strlen(errs), &r, &err), -1);
    assert_string_equal(err.text, "sbatch: warning: x");
    sbatch_result_free(&r);
    assert_int_equal(sbatch_parse_streams(NULL, 0, NULL, 0, &r, &err), -1);
    assert_string_equal(err.text, "sbatch printed no job id");
    sbatch_result_free(&r);
}

/* sched_accounting_batch: 450 ended jobs cost ceil(450 / SACCT_BATCH_IDS)
 * sacct calls, not 450; a record still missing its end is asked again
 * (only that id, one second later) and one never seen is not found. */
static void test_accounting_batch(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    enum { N = 450 };
    const char *ids[N];
    char idbuf[N][16];
    struct sched_acct out[N];
    int found[N];
    struct strbuf all = STRBUF_INIT, late = STRBUF_INIT;
    size_t calls;

    (void)state;
    strbuf_addstr(&all, HDR);
    for (int i = 0; i < N; i++) {
        snprintf(idbuf[i], sizeof(idbuf[i]), "%d", 1000 + i);
        ids[i] = idbuf[i];
        if (i == 7) /* partial: no end yet */
            strbuf_addf(&all,
                        "%d|60|cpu=2,gres/gpu=1,node=1|00:00:10|"
                        "2026-01-01T10:10:00|Unknown|"
                        "2026-01-01T10:00:00|1|2\n",
                        1000 + i);
        else if (i != 9) /* 1009 is never in accounting */
            strbuf_addf(
                &all, "%d|3600|cpu=2,gres/gpu=1,node=1|00:00:10" TIMES "|1|2\n",
                1000 + i);
    }
    strbuf_addstr(&late, HDR);
    strbuf_addstr(&late,
                  "1007|3600|cpu=2,gres/gpu=1,node=1|00:00:10" TIMES "|1|2\n");
    /* the second round asks for 1007 and 1009 only */
    transport_fake_add(t, "sacct -P -j 1007,1009 *", late.buf, "", 0, 0, 0);
    transport_fake_add(t, "sacct -P -j *", all.buf, "", 0, 0, 0);
    assert_int_equal(sched_accounting_batch(s, ids, N, 2, out, found, &err), 0);
    calls = transport_fake_count(t, "sacct *");
    assert_int_equal(calls, (N + SACCT_BATCH_IDS - 1) / SACCT_BATCH_IDS + 1);
    assert_int_equal(found[0], 1);
    assert_true(fabs(out[0].gpu_hours - 1.0) < 1e-9);
    assert_int_equal(out[0].cpus, 2);
    assert_int_equal(found[7], 1); /* completed by the second round */
    assert_true(out[7].end[0] && out[7].run_seconds == 3600);
    assert_int_equal(found[9], 0);
    assert_int_equal(found[N - 1], 1);
    strbuf_release(&all);
    strbuf_release(&late);
    sched_free(s);
    transport_close(t);
}

/* sched_accounting_batch: when one sacct call (one SACCT_BATCH_IDS chunk)
 * fails, only its ids go without accounting; the calls after it are still
 * made and their records used, and the failure is returned. */
static void test_accounting_batch_chunk_fails(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    enum { N = 450 };
    const char *ids[N];
    char idbuf[N][16];
    struct sched_acct out[N];
    int found[N], nfound = 0;
    struct strbuf all = STRBUF_INIT;

    (void)state;
    strbuf_addstr(&all, HDR);
    for (int i = 0; i < N; i++) {
        snprintf(idbuf[i], sizeof(idbuf[i]), "%d", 1000 + i);
        ids[i] = idbuf[i];
        strbuf_addf(&all,
                    "%d|3600|cpu=2,gres/gpu=1,node=1|00:00:10" TIMES "|1|2\n",
                    1000 + i);
    }
    transport_fake_add(t, "sacct -P -j *", all.buf, "", 0, 0, 0);
    transport_fake_fail_nth(t, 2); /* the second chunk: ids 200..399 */
    assert_int_equal(sched_accounting_batch(s, ids, N, 2, out, found, &err),
                     -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    /* three calls, and no second round for the failed chunk's ids */
    assert_int_equal(transport_fake_ncalls(t), 3);
    for (int i = 0; i < N; i++) {
        assert_int_equal(found[i],
                         i < SACCT_BATCH_IDS || i >= 2 * SACCT_BATCH_IDS);
        nfound += found[i];
    }
    assert_int_equal(nfound, N - SACCT_BATCH_IDS);
    assert_true(fabs(out[N - 1].gpu_hours - 1.0) < 1e-9);
    strbuf_release(&all);
    sched_free(s);
    transport_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acct_untyped_2p62),
        cmocka_unit_test(test_acct_typed_sum_overflows),
        cmocka_unit_test(test_array_gpu_totals),
        cmocka_unit_test(test_per_node_times_nodes),
        cmocka_unit_test(test_sbatch_streams),
        cmocka_unit_test(test_accounting_batch),
        cmocka_unit_test(test_accounting_batch_chunk_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
