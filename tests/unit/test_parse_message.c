/*
 * test_parse_message.c - the small readers that replaced private line
 * splitting in preflight.c, probe_*.c and collect.c: tool_message (a
 * tool's first non-blank line, cut at a character boundary) and
 * sacctmgr_assoc_parse (association rows "account|qos1,qos2"); and
 * scontrol_jobs_parse keeping keys past its old fixed table of 160 (the
 * StdOut that `hpc logs` reads comes late in the line).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libdiscovery/parse_sacctmgr.h"
#include "libsched/parse_message.h"
#include "libsched/parse_slurm.h"
#include "libutil/strbuf.h"

static void test_tool_message(void **state)
{
    static const char err[] =
        "\n  \r\nsacctmgr: error: Problem talking to the database: "
        "Connection refused  \r\nsecond line\n";
    char *m;

    (void)state;
    m = tool_message(err, strlen(err), 0);
    assert_string_equal(m, "sacctmgr: error: Problem talking to the "
                           "database: Connection refused");
    free(m);
    m = tool_message(err, strlen(err), 16);
    assert_string_equal(m, "sacctmgr: error:");
    free(m);
    m = tool_message("slurm 22.05.8\n", 14, 0); /* sinfo --version */
    assert_string_equal(m, "slurm 22.05.8");
    free(m);
    /* "n\xc5\x8d" (n, o-macron): a cut at 2 bytes would split the o */
    m = tool_message("n\xc5\x8d"
                     "de",
                     5, 2);
    assert_string_equal(m, "n");
    free(m);
    /* no UTF-8 at all: cut at max, never emptied (fuzz_sacctmgr) */
    m = tool_message("\xa3\xa3\xa3\xa3\xa3\xa3", 6, 4);
    assert_int_equal(strlen(m), 4);
    free(m);
    assert_null(tool_message(" \n\t\n", 4, 0));
    assert_null(tool_message(NULL, 0, 0));
    m = tool_message("no newline", 10, 0);
    assert_string_equal(m, "no newline");
    free(m);
    m = tool_message("\0\0x\n  \0y\nok\n", 12, 0); /* NULs end a line */
    assert_string_equal(m, "ok");
    free(m);
    m = tool_message("ab\ncd", 2, 0); /* len bounds the read */
    assert_string_equal(m, "ab");
    free(m);
}

static void test_sacctmgr(void **state)
{
    static const char out[] = "research|normal,high\r\n\n"
                              "  teaching  |\n"
                              "|debug\n"
                              "solo\n";
    struct sacctmgr_assoc *a;
    size_t n;

    (void)state;
    sacctmgr_assoc_parse(out, strlen(out), &a, &n);
    assert_int_equal(n, 4);
    assert_string_equal(a[0].account, "research");
    assert_int_equal(a[0].qos.nr, 2);
    assert_string_equal(a[0].qos.v[1], "high"); /* CR dropped */
    assert_string_equal(a[1].account, "teaching");
    assert_int_equal(a[1].qos.nr, 0);
    assert_string_equal(a[2].account, "");
    assert_string_equal(a[2].qos.v[0], "debug");
    assert_string_equal(a[3].account, "solo");
    assert_int_equal(a[3].qos.nr, 0);
    sacctmgr_assocs_free(a, n);
    sacctmgr_assoc_parse(NULL, 0, &a, &n);
    assert_int_equal(n, 0);
    sacctmgr_assocs_free(a, n);
}

static void test_scontrol_many_keys(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    struct slurm_jobs jobs;
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;

    (void)state;
    strbuf_addstr(&sb, "JobId=77 JobState=COMPLETED");
    for (int i = 0; i < 300; i++)
        strbuf_addf(&sb, " Extra%d=v%d", i, i);
    strbuf_addstr(&sb, " NumNodes=3 StdOut=/scratch/r/77.out\n");
    memset(&jobs, 0, sizeof(jobs));
    assert_int_equal(scontrol_jobs_parse(sb.buf, sb.len, &jobs, &kind, &err),
                     0);
    assert_int_equal(jobs.njobs, 1);
    assert_string_equal(jobs.jobs[0].std_out, "/scratch/r/77.out");
    assert_int_equal(jobs.jobs[0].has_nnodes, 1);
    assert_int_equal(jobs.jobs[0].nnodes, 3);
    slurm_jobs_free(&jobs);
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tool_message),
        cmocka_unit_test(test_sacctmgr),
        cmocka_unit_test(test_scontrol_many_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
