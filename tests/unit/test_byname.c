/*
 * test_byname.c - sched_find_by_name() through the fake transport: the
 * commands it runs (squeue first, sacct only when the queue holds no live
 * job; flux jobs -a --name), what it reads from captured outputs, and its
 * errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "libsched/byname.h"
#include "libsched/sched.h"
#include "libtransport/transport.h"
#include "testutil.h"

#define FIX "tests/fixtures/slurm-adapter/"
#define HELD_NAME "exa_jpcp_pm100dataset.exa-0123456789ab"
#define DONE_NAME "exa_jpcp_pm100dataset.exa-15d76f95efe9"

static void test_slurm_live_in_queue(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s = sched_new("slurm", t, NULL);
    struct sched_job *v = NULL;
    size_t n = 99;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;

    assert_int_equal(
        transport_fake_add_file(t, "squeue -h --me --name=" HELD_NAME " -o *",
                                FIX "squeue-byname-held.out", 0, 0),
        0);
    transport_fake_add(t, "sacct *", "", "", 0, 0, 0);
    assert_int_equal(sched_find_by_name(s, HELD_NAME, 0, &v, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].id, "346");
    assert_int_equal(v[0].state, SCHED_PENDING);
    assert_string_equal(v[0].raw_state, "PENDING");
    assert_string_equal(v[0].submit, "2026-12-06T06:45:34");
    /* a live job in the queue: accounting is not asked */
    assert_int_equal(transport_fake_count(t, "squeue *"), 1);
    assert_int_equal(transport_fake_count(t, "sacct *"), 0);
    free(v);
    sched_free(s);
    transport_close(t);
}

static void test_slurm_finished_from_sacct(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s = sched_new("slurm", t, NULL);
    struct sched_job *v = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    char want[64], glob[256];
    struct tm tm;
    time_t since = 1764619000; /* 2025-12-01T19:56:40Z */
    time_t m = since - 60;
    (void)state;

    localtime_r(&m, &tm);
    strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%S", &tm);
    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    snprintf(glob, sizeof(glob),
             "sacct -X -n --parsable2 --delimiter=* "
             "--name=" DONE_NAME " -S %s -E now -o JobID,*",
             want);
    assert_int_equal(
        transport_fake_add_file(t, glob, FIX "sacct-byname.out", 0, 0), 0);
    assert_int_equal(sched_find_by_name(s, DONE_NAME, since, &v, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].id, "71");
    assert_int_equal(v[0].state, SCHED_COMPLETED);
    assert_int_equal(
        transport_fake_count(t, "squeue -h --me --name=" DONE_NAME " -o *"), 1);
    assert_int_equal(transport_fake_count(t, glob), 1);
    free(v);
    sched_free(s);
    transport_close(t);
}

static void test_slurm_nothing(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s = sched_new("slurm", t, NULL);
    struct sched_job *v = (struct sched_job *)1;
    size_t n = 7;
    (void)state;

    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    transport_fake_add(t, "sacct * -S now-7days -E now *", "", "", 0, 0, 0);
    assert_int_equal(sched_find_by_name(s, "exa-aaaaaaaaaaaa", 0, &v, &n, NULL),
                     0);
    assert_int_equal(n, 0);
    assert_null(v);
    assert_int_equal(transport_fake_count(t, "sacct *"), 1);
    sched_free(s);
    transport_close(t);
}

static void test_slurm_errors(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s = sched_new("slurm", t, NULL);
    struct sched_job *v = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;

    transport_fake_add(t, "squeue *", "",
                       "squeue: error: Unable to contact slurm controller", 1,
                       0, 1);
    assert_int_equal(sched_find_by_name(s, "exa-x", 0, &v, &n, &err), -1);
    assert_int_equal(err.code, EXA_ESCHED);
    assert_non_null(strstr(err.text, "Unable to contact slurm controller"));
    assert_null(v);
    /* the squeue rule is spent: the transport itself fails now */
    transport_fake_fail_nth(t, 2);
    assert_int_equal(sched_find_by_name(s, "exa-x", 0, &v, &n, &err), -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_int_equal(sched_find_by_name(s, "", 0, &v, &n, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    sched_free(s);
    transport_close(t);
}

static void test_flux(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s = sched_new("flux", t, NULL);
    struct sched_job *v = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;

    /* a format without widths: flux jobs prints a bare header and the
     * cells one space apart (flux-jobs(1) OUTPUT FORMAT) */
    transport_fake_add(t,
                       "flux jobs -a --name=exa-r1 -o {id.f58} "
                       "{status_abbrev}",
                       "JOBID ST\n"
                       "\xc6\x92"
                       "2TR77Ao1 R\n"
                       "\xc6\x92"
                       "2SxmVb3K CD\n"
                       "\xc6\x92"
                       "2SxmVb3K CD\n",
                       "", 0, 0, 0);
    assert_int_equal(sched_find_by_name(s, "exa-r1", 0, &v, &n, &err), 0);
    assert_int_equal(n, 2); /* the repeated id once */
    assert_string_equal(v[0].id, "\xc6\x92"
                                 "2TR77Ao1");
    assert_int_equal(v[0].state, SCHED_RUNNING);
    assert_string_equal(v[0].raw_state, "R");
    assert_string_equal(v[1].id, "\xc6\x92"
                                 "2SxmVb3K");
    assert_int_equal(v[1].state, SCHED_COMPLETED);
    free(v);
    sched_free(s);
    transport_close(t);
}

static void test_mock_refused(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s = sched_new("mock", t, NULL);
    struct sched_job *v = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;

    assert_int_equal(sched_find_by_name(s, "exa-x", 0, &v, &n, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_int_equal(transport_fake_ncalls(t), 0);
    sched_free(s);
    transport_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_live_in_queue),
        cmocka_unit_test(test_slurm_finished_from_sacct),
        cmocka_unit_test(test_slurm_nothing),
        cmocka_unit_test(test_slurm_errors),
        cmocka_unit_test(test_flux),
        cmocka_unit_test(test_mock_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
