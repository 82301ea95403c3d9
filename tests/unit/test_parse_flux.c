/*
 * test_parse_flux.c - Flux job ids, wait statuses, FSD, hostlists, table
 * cutting, flux jobs / eventlog parsing and job accounting
 * (src/libsched/parse_flux*.c).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libsched/parse_flux.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    assert_non_null(fp);
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        strbuf_add(&sb, buf, n);
    fclose(fp);
    return strbuf_detach(&sb, len);
}

static void test_jobid(void **state)
{
    uint64_t id = 0;
    char buf[32];

    assert_int_equal(flux_jobid_parse("\xc6\x92"
                                      "ByFye1Xm",
                                      &id),
                     0);
    assert_true(id == 24221518397440ULL);
    assert_int_equal(flux_jobid_parse("fUdmwwisR", &id), 0);
    assert_true(id == 61015546920960ULL);
    assert_int_equal(flux_jobid_parse("_4rb5Wr2T", &id), 0);
    assert_true(id == 8511685656576ULL);
    assert_int_equal(flux_jobid_parse("f4rb5Wr2T", &id), 0);
    assert_true(id == 8511685656576ULL);
    assert_int_equal(flux_jobid_parse("\\306\\2224rb5Wr2T", &id), 0);
    assert_true(id == 8511685656576ULL);
    assert_int_equal(flux_jobid_parse("14436593041408", &id), 0);
    assert_true(id == 14436593041408ULL);
    /* 0, O, I and l are not in the alphabet; a bare prefix is no id */
    assert_int_equal(flux_jobid_parse("f0abc", &id), -1);
    assert_int_equal(flux_jobid_parse("fIab", &id), -1);
    assert_int_equal(flux_jobid_parse("f", &id), -1);
    assert_int_equal(flux_jobid_parse("JOBID", &id), -1);
    assert_int_equal(flux_jobid_parse("12a", &id), -1);
    assert_int_equal(flux_jobid_parse("99999999999999999999999", &id), -1);
    flux_jobid_f58(14436593041408ULL, buf, sizeof(buf));
    assert_string_equal(buf, "\xc6\x92"
                             "7YE3Hts1");
}

static void test_waitstatus_and_states(void **state)
{
    int ex, sig;
    flux_waitstatus_decode(256, &ex, &sig);
    assert_int_equal(ex, 1);
    assert_int_equal(sig, -1);
    flux_waitstatus_decode(36352, &ex, &sig);
    assert_int_equal(ex, 142);
    flux_waitstatus_decode(32512, &ex, &sig);
    assert_int_equal(ex, 127);
    flux_waitstatus_decode(15, &ex, &sig);
    assert_int_equal(ex, -1);
    assert_int_equal(sig, 15);
    flux_waitstatus_decode(0, &ex, &sig);
    assert_int_equal(ex, 0);
    assert_string_equal(flux_state_normalize("S"), "PENDING");
    assert_string_equal(flux_state_normalize("C"), "RUNNING");
    assert_string_equal(flux_state_normalize("CA"), "CANCELLED");
    assert_string_equal(flux_state_normalize("CANCELED"), "CANCELLED");
    assert_string_equal(flux_state_normalize("TO"), "TIMEOUT");
    assert_string_equal(flux_state_normalize("RUNING"), "UNKNOWN");
}

static void test_fsd(void **state)
{
    double s = 0;
    assert_int_equal(flux_fsd_parse("1.765m", &s), 0);
    assert_true(fabs(s - 105.9) < 1e-9);
    assert_int_equal(flux_fsd_parse("0.057s", &s), 0);
    assert_true(fabs(s - 0.057) < 1e-12);
    assert_int_equal(flux_fsd_parse("1.667h", &s), 0);
    assert_true(fabs(s - 6001.2) < 1e-6);
    assert_int_equal(flux_fsd_parse("1d", &s), 0);
    assert_true(s == 86400);
    assert_int_equal(flux_fsd_parse("45", &s), 0);
    assert_true(s == 45);
    assert_int_equal(flux_fsd_parse("-", &s), -1);
    assert_int_equal(flux_fsd_parse("5x", &s), -1);
    assert_int_equal(flux_fsd_parse("-3s", &s), -1);
    assert_int_equal(flux_fsd_parse("inf", &s), -1);
    /* {runtime!H}: Python str(timedelta) */
    assert_int_equal(flux_fsd_parse("1:02:03", &s), 0);
    assert_true(s == 3723.0);
    assert_int_equal(flux_fsd_parse("0:00:09", &s), 0);
    assert_true(s == 9.0);
    assert_int_equal(flux_fsd_parse("2 days, 3:04:05", &s), 0);
    assert_true(s == 2 * 86400.0 + 11045.0);
    assert_int_equal(flux_fsd_parse("1 day, 0:00:00", &s), 0);
    assert_true(s == 86400.0);
    assert_int_equal(flux_fsd_parse("1:2:03", &s), -1);
    assert_int_equal(flux_fsd_parse("1:60:00", &s), -1);
    assert_int_equal(flux_fsd_parse("1 week, 0:00:00", &s), -1);
}

static void test_hostlist_idset(void **state)
{
    struct strvec sv = STRVEC_INIT;
    long long *ids = NULL;
    size_t n = 0;

    assert_int_equal(flux_hostlist_expand("fluke[108,108]", &sv), 0);
    assert_int_equal(sv.nr, 2);
    assert_string_equal(sv.v[1], "fluke108");
    strvec_clear(&sv);
    assert_int_equal(flux_hostlist_expand("p[00-3]p,login1", &sv), 0);
    assert_int_equal(sv.nr, 5);
    assert_string_equal(sv.v[0], "p00p");
    assert_string_equal(sv.v[3], "p03p");
    assert_string_equal(sv.v[4], "login1");
    strvec_clear(&sv);
    assert_int_equal(flux_hostlist_expand("a[1-2]b[3-4]", &sv), 0);
    assert_int_equal(sv.nr, 4);
    assert_string_equal(sv.v[1], "a1b4");
    assert_string_equal(sv.v[2], "a2b3");
    strvec_clear(&sv);
    assert_int_equal(flux_hostlist_expand("x[3-1]", &sv), -1);
    assert_int_equal(flux_hostlist_expand("x[1-2", &sv), -1);
    assert_int_equal(flux_hostlist_expand("x[a-b]", &sv), -1);
    assert_int_equal(sv.nr, 0);
    assert_int_equal(flux_idset_expand("[2-3]", &ids, &n), 0);
    assert_int_equal(flux_idset_expand("0,7-8", &ids, &n), 0);
    assert_int_equal(n, 5);
    assert_true(ids[0] == 2 && ids[1] == 3 && ids[2] == 0 && ids[4] == 8);
    free(ids);
}

/* Cells under a padded header: empty cells, a value with a space, and an
 * untruncated idset pushing the next cell right (flux-core#4269). */
static void test_table_cells(void **state)
{
    struct flux_table_hdr h;
    const char *hdr = "       JOBID NNODES     T_SUBMIT     TIME INFO";
    const char *row = "   f2TRD37vP      -  Mar29 17:28        - ";
    char *c[5];

    assert_int_equal(flux_table_hdr_init(&h, hdr, strlen(hdr)), 5);
    flux_table_row(&h, row, strlen(row), c);
    assert_string_equal(c[0], "f2TRD37vP");
    assert_string_equal(c[1], "-");
    assert_string_equal(c[2], "Mar29 17:28");
    assert_string_equal(c[3], "-");
    assert_null(c[4]);
    for (int i = 0; i < 5; i++)
        free(c[i]);
    flux_table_hdr_release(&h);

    hdr = "     STATE NNODES RANKS           NODELIST";
    row = "    avail*     11 14,21,58,62,73-74,76,89,94-95,100 fluke[17,24]";
    flux_table_hdr_init(&h, hdr, strlen(hdr));
    flux_table_row(&h, row, strlen(row), c);
    assert_string_equal(c[2], "14,21,58,62,73-74,76,89,94-95,100");
    assert_string_equal(c[3], "fluke[17,24]");
    for (int i = 0; i < 4; i++)
        free(c[i]);
    flux_table_hdr_release(&h);

    /* no widths in the format: columns do not line up */
    hdr = "JOBID STATUS RC";
    row = "\xc6\x92"
          "cxwaWC FAILED 143";
    flux_table_hdr_init(&h, hdr, strlen(hdr));
    flux_table_row(&h, row, strlen(row), c);
    assert_string_equal(c[1], "FAILED");
    assert_string_equal(c[2], "143");
    for (int i = 0; i < 3; i++)
        free(c[i]);
    flux_table_hdr_release(&h);
}

static void test_jobs_table(void **state)
{
    size_t len;
    char *buf = slurp("tests/fixtures/flux/jobs-default.txt", &len);
    const char *kind = NULL;
    json_t *res = flux_jobs_parse(buf, len, &kind, NULL), *j;

    assert_non_null(res);
    assert_int_equal(json_array_size(json_object_get(res, "jobs")), 3);
    j = json_array_get(json_object_get(res, "jobs"), 0);
    assert_string_equal(jx_get_str(j, "state", ""), "RUNNING");
    assert_true(jx_get_num(j, "elapsed_s", 0) == 4500);
    assert_int_equal(json_array_size(json_object_get(j, "nodelist")), 2);
    j = json_array_get(json_object_get(res, "jobs"), 1);
    assert_string_equal(jx_get_str(j, "state", ""), "PENDING");
    assert_true(json_is_null(json_object_get(j, "nnodes")));
    /* INFO of a pending job is a reason, not nodes */
    assert_null(json_object_get(j, "nodelist"));
    j = json_array_get(json_object_get(res, "jobs"), 2);
    assert_true(fabs(jx_get_num(j, "elapsed_s", 0) - 121.02) < 1e-9);
    json_decref(res);
    free(buf);
}

static void test_jobs_errors_and_sections(void **state)
{
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    const char *in = "flux-jobs: JobID 12345 unknown\n";
    const char *rec =
        "       JOBID USER     NAME       ST NTASKS NNODES  RUNTIME NODELIST\n"
        "   fByFye1Xm grondo   batch.sh    R      6      2   6.376m n[1-2]\n"
        "\n"
        "fByFye1Xm:\n"
        "5 running, 296 completed, 0 failed, 700 pending\n"
        "    f21fSakP grondo   sleep       R      1      1   3.385s n1\n";
    json_t *res = flux_jobs_parse(in, strlen(in), &kind, &err), *jobs;

    assert_null(res);
    assert_string_equal(kind, "unknown_job");
    assert_non_null(strstr(err.text, "12345"));
    in = "flux-jobs: ERROR: Unable to connect to Flux\n";
    assert_null(flux_jobs_parse(in, strlen(in), &kind, &err));
    assert_string_equal(kind, "flux_error");
    res = flux_jobs_parse("", 0, &kind, NULL);
    assert_int_equal(json_array_size(json_object_get(res, "jobs")), 0);
    json_decref(res);

    res = flux_jobs_parse(rec, strlen(rec), &kind, NULL);
    assert_non_null(res);
    jobs = json_object_get(res, "jobs");
    assert_int_equal(json_array_size(jobs), 2);
    assert_true(
        json_is_null(json_object_get(json_array_get(jobs, 0), "instance")));
    assert_string_equal(jx_get_str(json_array_get(jobs, 1), "instance", ""),
                        "fByFye1Xm");
    assert_int_equal(
        jx_get_int(json_array_get(json_object_get(res, "stats"), 0), "pending",
                   -1),
        700);
    json_decref(res);
}

static void test_eventlog_summary(void **state)
{
    const char *pending_cancel =
        "1700000000.0 submit userid=1 urgency=16 flags=0 version=1\n"
        "1700000000.1 depend\n"
        "1700000000.2 priority priority=16\n"
        "1700000005.0 exception type=\"cancel\" severity=0 note=\"a b\"\n"
        "1700000005.1 clean\n";
    const char *sev1 =
        "{\"timestamp\":1.0,\"name\":\"submit\",\"context\":{}}\n"
        "{\"timestamp\":2.0,\"name\":\"depend\"}\n"
        "{\"timestamp\":3.0,\"name\":\"priority\",\"context\":{}}\n"
        "{\"timestamp\":4.0,\"name\":\"alloc\"}\n"
        "{\"timestamp\":5.0,\"name\":\"start\"}\n"
        "{\"timestamp\":6.0,\"name\":\"exception\",\"context\":"
        "{\"type\":\"x\",\"severity\":1}}\n";
    json_t *res =
        flux_eventlog_parse(pending_cancel, strlen(pending_cancel), NULL);
    json_t *sum = json_object_get(res, "summary");
    json_t *ev = json_array_get(json_object_get(res, "events"), 3);

    assert_string_equal(jx_get_str(sum, "flux_state", ""), "INACTIVE");
    assert_string_equal(jx_get_str(sum, "state", ""), "CANCELLED");
    assert_true(json_is_null(json_object_get(sum, "start")));
    assert_string_equal(jx_get_str(json_object_get(ev, "context"), "note", ""),
                        "a b");
    json_decref(res);

    res = flux_eventlog_parse(sev1, strlen(sev1), NULL);
    sum = json_object_get(res, "summary");
    assert_string_equal(jx_get_str(sum, "flux_state", ""), "RUN");
    assert_string_equal(jx_get_str(sum, "state", ""), "RUNNING");
    assert_true(json_is_null(json_object_get(sum, "exception")));
    assert_true(json_is_null(json_object_get(sum, "result")));
    json_decref(res);

    assert_null(flux_eventlog_parse("garbage here\n", 13, NULL));
}

static void test_more_forms(void **state)
{
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    uint64_t id;
    /* --no-header rows of the default format, one with a QUEUE column */
    const char *nohdr =
        "   fByFye1Xm grondo   batch.sh    R      6      2   6.376m n[1-2]\n"
        "   fByFye1Xn batch grondo sleep    S      1      -        - "
        "priority-wait\n";
    /* {id.f58plain}: no prefix, accepted only when no row has one */
    const char *plain = "JOBID ST\nByFye1Xm R\n";
    const char *offs = "0.000000 submit userid=1\n0.25 alloc\n";
    json_t *res, *j;

    assert_int_equal(flux_jobid_parse("0x1c0f2c000000", &id), 0);
    assert_true(id == 0x1c0f2c000000ULL);
    assert_int_equal(flux_jobid_parse("0000.1c0f.2c00.0000", &id), 0);
    assert_true(id == 0x1c0f2c000000ULL);

    res = flux_jobs_parse(nohdr, strlen(nohdr), &kind, NULL);
    assert_int_equal(json_array_size(json_object_get(res, "jobs")), 2);
    j = json_array_get(json_object_get(res, "jobs"), 0);
    assert_string_equal(jx_get_str(j, "user", ""), "grondo");
    assert_true(fabs(jx_get_num(j, "elapsed_s", 0) - 382.56) < 1e-9);
    j = json_array_get(json_object_get(res, "jobs"), 1);
    assert_string_equal(jx_get_str(j, "queue", ""), "batch");
    assert_string_equal(jx_get_str(j, "state", ""), "PENDING");
    json_decref(res);

    res = flux_jobs_parse(plain, strlen(plain), &kind, NULL);
    j = json_array_get(json_object_get(res, "jobs"), 0);
    assert_true(jx_get_int(j, "id_decimal", 0) == 24221518397440LL);
    json_decref(res);

    res = flux_eventlog_parse(offs, strlen(offs), NULL);
    j = json_array_get(json_object_get(res, "events"), 1);
    assert_true(json_is_null(json_object_get(j, "t")));
    assert_true(fabs(jx_get_num(j, "t_offset", 0) - 0.25) < 1e-12);
    assert_string_equal(
        jx_get_str(json_object_get(res, "summary"), "flux_state", ""), "RUN");
    json_decref(res);

    assert_null(flux_eventlog_parse("flux-job: ERROR: f68GN: unknown job "
                                    "id\n",
                                    39, &err));
    assert_int_equal(err.code, EXA_ENOTFOUND);
}

/* Known hours from a constructed R (3 nodes: 2x48 cores/4 gpus + 24/2)
 * and an eventlog with 60 s queue wait and a 2 h run. */
static void test_accounting(void **state)
{
    size_t len;
    char *ev = slurp("tests/fixtures/flux/acct-eventlog.txt", &len);
    json_t *log = flux_eventlog_parse(ev, len, NULL);
    json_t *R = json_load_file("tests/fixtures/flux/acct-R.json", 0, NULL);
    struct flux_job_acct a;
    exa_error_t err = EXA_ERROR_INIT;

    assert_non_null(log);
    assert_non_null(R);
    assert_int_equal(flux_job_accounting(log, R, &a, &err), 0);
    assert_int_equal(a.nodes, 3);
    assert_int_equal(a.cores, 120);
    assert_int_equal(a.gpus, 10);
    assert_true(fabs(a.queue_seconds - 60.0) < 1e-6);
    assert_true(fabs(a.run_seconds - 7200.0) < 1e-6);
    assert_true(fabs(a.gpu_hours - 20.0) < 1e-9);
    assert_true(fabs(a.cpu_hours - 240.0) < 1e-9);
    json_decref(R);

    R = json_loads("{\"execution\":{\"R_lite\":[{\"rank\":\"x\"}]}}", 0, NULL);
    assert_int_equal(flux_job_accounting(log, R, &a, &err), -1);
    json_decref(R);
    /* no R: times only */
    assert_int_equal(flux_job_accounting(log, NULL, &a, &err), 0);
    assert_int_equal(a.gpus, -1);
    assert_true(a.gpu_hours < 0);
    json_decref(log);
    free(ev);
}

/* exa's own 0x1F queries (tests/fixtures/flux-real 22 and 88): empty
 * cells keep their place, 0.0 times are absent, the format names the
 * columns; flux_jobs_parse() reads the status query without a format. */
static void test_separated_formats(void **state)
{
    const char *kind = NULL;
    struct strvec f = STRVEC_INIT;
    char sep = 0;
    const char *st =
        "\xc6\x92"
        "3uVwNg7\037RUN\037\0371796148329.09095\0371796148329.1190453"
        "\0370.0\037\0378.842979431152344\n"
        "\xc6\x92"
        "4WGCXw5\037INACTIVE\037CANCELED\0371796148330.451515\0370.0"
        "\0371796148369.6640859\037\0370.0\n"
        "JobID fNoSuchJob unknown\n";
    const char *obs = "\xc6\x92"
                      "2wh2kji7\037root\037\037R\0371\037node0\n";
    json_t *res, *j;

    assert_int_equal(flux_jobs_format_fields(FLUX_JOBS_STATUS_FORMAT, &f, &sep),
                     0);
    assert_int_equal(sep, 0x1f);
    assert_int_equal(f.nr, 8);
    assert_string_equal(f.v[0], "JOBID");
    assert_string_equal(f.v[6], "WSTATUS");
    strvec_clear(&f);
    assert_int_equal(flux_jobs_format_fields("{id} and {state}", &f, &sep), -1);
    strvec_clear(&f);

    res = flux_jobs_parse(st, strlen(st), &kind, NULL);
    assert_non_null(res);
    assert_int_equal(json_array_size(json_object_get(res, "jobs")), 2);
    j = json_array_get(json_object_get(res, "jobs"), 0);
    assert_string_equal(jx_get_str(j, "state", ""), "RUNNING");
    assert_string_equal(jx_get_str(j, "raw_state", ""), "RUN");
    assert_true(json_is_null(json_object_get(j, "end")));
    assert_true(json_is_null(json_object_get(j, "exit_code")));
    j = json_array_get(json_object_get(res, "jobs"), 1);
    assert_string_equal(jx_get_str(j, "state", ""), "CANCELLED");
    assert_string_equal(jx_get_str(j, "raw_state", ""), "CANCELED");
    assert_true(json_is_null(json_object_get(j, "start")));
    assert_null(json_object_get(j, "start_text"));
    assert_true(json_number_value(json_object_get(j, "end")) > 1796148369.6);
    json_decref(res);

    res = flux_jobs_parse_format(obs, strlen(obs), FLUX_JOBS_OBSERVE_FORMAT,
                                 &kind, NULL);
    j = json_array_get(json_object_get(res, "jobs"), 0);
    assert_string_equal(jx_get_str(j, "state", ""), "RUNNING");
    assert_string_equal(jx_get_str(j, "user", ""), "root");
    /* the queue column was printed, empty (no queues configured): "" */
    assert_string_equal(jx_get_str(j, "queue", "x"), "");
    assert_int_equal(json_integer_value(json_object_get(j, "ncores")), 1);
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(j, "nodelist"), 0)),
        "node0");
    json_decref(res);

    /* only the unknown-id line: unknown_job, as flux_jobs_parse() says */
    {
        const char *unk = "JobID \xc6\x92"
                          "2222222 unknown\n";
        res = flux_jobs_parse_format(unk, strlen(unk), FLUX_JOBS_STATUS_FORMAT,
                                     &kind, NULL);
    }
    assert_null(res);
    assert_string_equal(kind, "unknown_job");
}

/* flux batch output: only lines that are one job id count, however much
 * comes before them (4 KiB of warnings used to abort exa). */
static void test_submit_ids(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    struct strvec ids = STRVEC_INIT;

    for (int i = 0; i < 64; i++)
        strbuf_addf(&sb, "flux-batch: warning: %03d %0*d\n", i, 38, 0);
    strbuf_addstr(&sb, "\xc6\x92"
                       "3qfZEQP\n");
    assert_true(sb.len > 4096);
    assert_int_equal(flux_submit_ids(sb.buf, sb.len, &ids), 1);
    assert_string_equal(ids.v[0], "\xc6\x92"
                                  "3qfZEQP");
    strvec_clear(&ids);
    /* a 200-byte token is no id (F58 overflow), nor is a table row */
    strbuf_reset(&sb);
    strbuf_addf(&sb,
                "f%0*d\nf1 f2\n\xc6\x92"
                "A\n  \xc6\x92"
                "B  \n",
                200, 1);
    assert_int_equal(flux_submit_ids(sb.buf, sb.len, &ids), 2);
    assert_string_equal(ids.v[1], "\xc6\x92"
                                  "B");
    strvec_clear(&ids);
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobid),
        cmocka_unit_test(test_waitstatus_and_states),
        cmocka_unit_test(test_fsd),
        cmocka_unit_test(test_hostlist_idset),
        cmocka_unit_test(test_table_cells),
        cmocka_unit_test(test_jobs_table),
        cmocka_unit_test(test_jobs_errors_and_sections),
        cmocka_unit_test(test_eventlog_summary),
        cmocka_unit_test(test_more_forms),
        cmocka_unit_test(test_accounting),
        cmocka_unit_test(test_separated_formats),
        cmocka_unit_test(test_submit_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
