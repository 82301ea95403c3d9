/*
 * test_parse_slurm.c - squeue/sacct/scontrol/sbatch parsing of the shapes
 * exa itself asks for (SLURM_*_FORMAT) and of the hard shapes of
 * doc/formats.md: field-count mismatches, blanks inside values, truncated
 * tokens, epoch times, array and het ids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libdiscovery/parse_sinfo.h"
#include "libsched/parse_slurm.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"

static void parse(int (*fn)(const char *, size_t, struct slurm_jobs *,
                            const char **, exa_error_t *),
                  const char *in, struct slurm_jobs *j)
{
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;
    memset(j, 0, sizeof(*j));
    if (fn(in, strlen(in), j, &kind, &err) < 0)
        fail_msg("parse failed: %s", err.text);
}

static void test_squeue_own_format(void **state)
{
    /* the header names squeue 22.05 prints for SLURM_SQUEUE_FORMAT */
    const char *in = "\x1e"
                     "JOBID\x1fSTATE\x1fTIME\x1fTIME_LIMIT\x1fTIME_LEFT\x1f"
                     "START_TIME\x1f"
                     "END_TIME\x1fSUBMIT_TIME\x1fNODES\x1f"
                     "CPUS\x1f"
                     "PARTITION\x1f"
                     "ACCOUNT\x1fUSER\x1fNAME\x1fREASON\x1fNODELIST\x1f"
                     "TRES_PER_NODE\n"
                     "\x1e"
                     "41_[3-5%2]\x1fPENDING\x1f"
                     "0:00\x1f"
                     "1:00:00\x1f"
                     "1:00:00\x1f"
                     "N/A\x1f"
                     "2026-01-01T01:00:00\x1f"
                     "2026-01-01T00:00:00\x1f"
                     "2\x1f"
                     "8\x1fgpu\x1fml\x1f"
                     "alice\x1f"
                     "a|b c\x1f"
                     "Priority\x1f\x1fgpu:2\n"
                     "\x1e"
                     "42\x1f"
                     "COMPLETED\x1f"
                     "2:43\x1f"
                     "UNLIMITED\x1fINVALID\x1f"
                     "2026-01-01T00:00:05\x1f"
                     "2026-01-01T00:02:48\x1f"
                     "2026-01-01T00:00:00\x1f"
                     "2\x1f"
                     "8\x1fgpu\x1fml\x1f"
                     "bob\x1ftrain\x1f"
                     "None\x1fg[01-02]\x1fgres/gpu:h100:4\n";
    struct slurm_jobs j;
    (void)state;
    parse(squeue_parse, in, &j);
    assert_int_equal(j.njobs, 2);
    assert_int_equal(j.nerrors, 0);
    assert_string_equal(j.jobs[0].id, "41_[3-5%2]");
    assert_string_equal(j.jobs[0].array_job_id, "41");
    assert_int_equal(j.jobs[0].array_task_count, 3);
    assert_int_equal(j.jobs[0].array_max_running, 2);
    assert_null(j.jobs[0].start); /* N/A */
    assert_null(j.jobs[0].end);   /* pending: a projection */
    assert_string_equal(j.jobs[0].name, "a|b c");
    assert_int_equal(j.jobs[0].gpus, 4); /* 2 per node x 2 nodes */
    assert_int_equal(j.jobs[0].time_left_s, 3600);
    assert_string_equal(j.jobs[1].state, "COMPLETED");
    assert_string_equal(j.jobs[1].start, "2026-01-01T00:00:05");
    assert_string_equal(j.jobs[1].end, "2026-01-01T00:02:48");
    assert_int_equal((long long)j.jobs[1].elapsed_s, 163);
    assert_false(j.jobs[1].has_time_limit);
    assert_false(j.jobs[1].has_time_left);
    assert_int_equal(j.jobs[1].gpus, 8);
    assert_int_equal(j.jobs[1].nodelist.nr, 2);
    assert_string_equal(j.jobs[1].nodelist.v[1], "g02");
    assert_int_equal(j.jobs[1].ncpus, 8);
    slurm_jobs_free(&j);
}

static void test_squeue_field_mismatch(void **state)
{
    const char *in = "JOBID|STATE|NAME\n"
                     "1|RUNNING|a\n"
                     "2|RUNNING|x|y\n"
                     "3|PENDING|c\n";
    struct slurm_jobs j;
    json_t *doc;
    char *s;
    (void)state;
    parse(squeue_parse, in, &j);
    assert_int_equal(j.njobs, 2);
    assert_string_equal(j.jobs[1].id, "3");
    assert_int_equal(j.nerrors, 1);
    assert_int_equal(j.errors[0].record, 2);
    assert_int_equal(j.errors[0].expected_fields, 3);
    assert_int_equal(j.errors[0].got_fields, 4);
    assert_string_equal(j.errors[0].id, "2");
    doc = slurm_jobs_to_json(&j, 0);
    s = jx_dumps_canonical(json_object_get(doc, "errors"));
    assert_string_equal(s, "[{\"expected_fields\":3,\"got_fields\":4,"
                           "\"id\":\"2\",\"kind\":\"field_count_mismatch\","
                           "\"record\":2}]");
    free(s);
    json_decref(doc);
    slurm_jobs_free(&j);
}

/* A cell's text never turns its row into a Slurm client's error line: a
 * job named after the controller message is listed (it was dropped, so a
 * user could hide a job from exa), while the message on a line of its own
 * is still no row; with a printed header, with exa's own records without
 * it, and with the columns from the command line (sacct -n: no header). */
static void test_error_text_in_cells(void **state)
{
    const char *sq = "JOBID|STATE|NAME\n"
                     "1|RUNNING|Unable to contact slurm controller\n"
                     "squeue: error: Unable to contact slurm controller "
                     "(connect failure)\n"
                     "2|PENDING|error: not an error\n"
                     "3|PENDING|x Unable to contact slurm controller y\n";
    const char *sa = "7|COMPLETED|Unable to contact slurm controller\n"
                     "sacct: error: Unable to contact slurm controller\n"
                     "8|FAILED|slurm_load_jobs error: Unable to contact "
                     "slurm controller\n";
    struct cmd_spec spec = CMD_SPEC_INIT;
    struct slurm_jobs j;
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    parse(squeue_parse, sq, &j);
    assert_int_equal(j.njobs, 3);
    assert_int_equal(j.nerrors, 0);
    assert_string_equal(j.jobs[0].id, "1");
    assert_string_equal(j.jobs[0].name, "Unable to contact slurm controller");
    assert_string_equal(j.jobs[1].name, "error: not an error");
    assert_string_equal(j.jobs[2].id, "3");
    slurm_jobs_free(&j);

    /* exa's own records without their header (byname.c, the queue op):
     * the columns are known only after the cut */
    parse(squeue_parse,
          "\03691\037PENDING\0370:00\0371:00:00\0371:00:00\037N/A\037N/A"
          "\0372026-12-01T09:59:00\0371\0378\037cpu\037bio\037eve\037Unable "
          "to contact slurm controller\037Priority\037\037N/A\n",
          &j);
    assert_int_equal(j.njobs, 1);
    assert_string_equal(j.jobs[0].id, "91");
    assert_string_equal(j.jobs[0].user, "eve");
    slurm_jobs_free(&j);

    assert_int_equal(
        cmd_spec_from_string("sacct -P -n -o JobID,State,JobName", &spec, &err),
        0);
    memset(&j, 0, sizeof(j));
    assert_int_equal(sacct_parse_cmd(sa, strlen(sa), &spec, &j, &kind, &err),
                     0);
    assert_int_equal(j.njobs, 2);
    assert_int_equal(j.nerrors, 0);
    assert_string_equal(j.jobs[0].name, "Unable to contact slurm controller");
    assert_string_equal(j.jobs[1].id, "8");
    assert_string_equal(j.jobs[1].state, "FAILED");
    slurm_jobs_free(&j);
    cmd_spec_release(&spec);
}

/* SLURM_SQUEUE_FORMAT's closing id (headerless, as exa runs it): a record
 * a job name made up ends with the real job's id, not its own, and is an
 * "id_mismatch" error, never a job; the layout without it still parses. */
static void test_squeue_closing_id(void **state)
{
#define HEAD(id, st)                                                           \
    "\036" id "\037" st "\0370:00\03710:00\03710:00\037N/A\037N/A"             \
    "\0372026-12-01T09:59:00\0371\0371\037cpu\037bio\037eve\037"
#define TAIL "\037Priority\037\037N/A"
    struct slurm_jobs j;
    (void)state;
    /* job 6's name: "x", three made-up cells and 6, then a record for
     * job 5; the rest of job 6's record closes the made-up one */
    parse(squeue_parse,
          HEAD("5", "PENDING") "a" TAIL "\0375\n" HEAD(
              "6", "PENDING") "x\037r\037n\037t\0376" HEAD("5",
                                                           "RUNNING") "y" TAIL
                                                                      "\0376\n",
          &j);
    assert_int_equal(j.njobs, 2);
    assert_string_equal(j.jobs[0].id, "5");
    assert_string_equal(j.jobs[0].state, "PENDING");
    assert_string_equal(j.jobs[1].id, "6");
    assert_string_equal(j.jobs[1].name, "x");
    assert_int_equal(j.nerrors, 1);
    assert_string_equal(j.errors[0].kind, "id_mismatch");
    assert_int_equal(j.errors[0].record, 3);
    assert_string_equal(j.errors[0].id, "5");
    slurm_jobs_free(&j);
    /* the layout before the closing id still parses */
    parse(squeue_parse, HEAD("5", "PENDING") "a" TAIL "\n", &j);
    assert_int_equal(j.njobs, 1);
    assert_int_equal(j.nerrors, 0);
    slurm_jobs_free(&j);
#undef HEAD
#undef TAIL
}

static void test_squeue_het_and_hold(void **state)
{
    const char *in = "JOBID PARTITION NAME USER ST TIME NODES NODELIST\n"
                     " 93+1 debug bash adam R 18:18 1 nid00011\n";
    struct slurm_jobs j;
    (void)state;
    parse(squeue_parse, in, &j);
    assert_string_equal(j.jobs[0].het_job_id, "93");
    assert_int_equal(j.jobs[0].het_offset, 1);
    assert_int_equal((long long)j.jobs[0].elapsed_s, 1098);
    assert_null(j.jobs[0].array_job_id);
    slurm_jobs_free(&j);
}

static void test_sacct_own_format(void **state)
{
    const char *in =
        "JobID\x1fJobIDRaw\x1fState\x1f"
        "ExitCode\x1fStart\x1f"
        "End\x1f"
        "Submit\x1f"
        "ElapsedRaw\x1f"
        "AllocTRES\x1fNodeList\x1fPartition\x1f"
        "Account\x1fUser\x1fJobName\x1fNCPUS\x1fTimelimitRaw\n"
        "7_1\x1f"
        "8\x1f"
        "CANCELLED by 0\x1f"
        "0:15\x1f"
        "1700000000\x1f"
        "1700000083\x1f"
        "Unknown\x1f"
        "83\x1f"
        "billing=2,cpu=2,gres/gpu:a100=1,gres/gpu:h100=2,mem=1G,node=1\x1f"
        "n1\x1f"
        "gpu\x1fml\x1f"
        "alice\x1fx|y\x1f"
        "2\x1f"
        "90\n"
        "7_1.batch\x1f"
        "8.batch\x1f"
        "CANCELLED\x1f"
        "0:15\x1f"
        "1700000000\x1f"
        "1700000083\x1f"
        "1700000000\x1f"
        "83\x1f"
        "cpu=2,mem=1G,node=1\x1f"
        "n1\x1f\x1fml\x1f\x1f"
        "batch\x1f"
        "2\x1f\n";
    struct slurm_jobs j;
    (void)state;
    parse(sacct_parse, in, &j);
    assert_int_equal(j.njobs, 1);
    assert_int_equal(j.nsteps, 1);
    assert_string_equal(j.jobs[0].id, "7_1");
    assert_string_equal(j.jobs[0].job_id_raw, "8");
    assert_string_equal(j.jobs[0].raw_state, "CANCELLED by 0");
    assert_int_equal(j.jobs[0].signal, 15);
    assert_string_equal(j.jobs[0].start, "2023-11-14T22:13:20Z");
    assert_string_equal(j.jobs[0].end, "2023-11-14T22:14:43Z");
    assert_null(j.jobs[0].submit);
    assert_int_equal(j.jobs[0].gpus, 3); /* typed only: summed */
    assert_int_equal(j.jobs[0].time_limit_s, 5400);
    assert_string_equal(j.jobs[0].name, "x|y");
    assert_string_equal(j.steps[0].job_id, "7_1");
    assert_string_equal(j.steps[0].step, "batch");
    assert_int_equal(j.steps[0].gpus, 0);
    /* an empty cell between separators is "", not a missing value */
    assert_string_equal(j.steps[0].user, "");
    assert_string_equal(j.steps[0].partition, "");
    slurm_jobs_free(&j);
}

static void test_sacct_truncated(void **state)
{
    const char *in = "     State ExitCode \n---------- -------- \n"
                     "CANCELLED+      0:0 \nOUT_OF_ME+    0:125 \n"
                     " COMPLETIN      0:0 \n";
    struct slurm_jobs j;
    (void)state;
    parse(sacct_parse, in, &j);
    assert_int_equal(j.njobs, 3);
    assert_null(j.jobs[0].id);
    assert_string_equal(j.jobs[0].state, "CANCELLED");
    assert_string_equal(j.jobs[1].state, "FAILED");
    assert_int_equal(j.jobs[1].signal, 125);
    assert_string_equal(j.jobs[2].state, "RUNNING");
    assert_string_equal(j.jobs[2].raw_state, "COMPLETIN");
    slurm_jobs_free(&j);
}

static void test_scontrol_multiline(void **state)
{
    const char *in =
        "JobId=12 ArrayJobId=11 ArrayTaskId=1 JobName=my job\n"
        "   UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A\n"
        "   JobState=PENDING Reason=Resources Dependency=(null)\n"
        "   RunTime=00:00:00 TimeLimit=1-00:00:00 "
        "StartTime=2026-01-02T00:00:00\n"
        "   EndTime=2026-01-03T00:00:00 ExitCode=0:0\n"
        "\n"
        "JobId=13 JobName=x UserId=bob(1001) JobState=TIMEOUT Reason=TimeLimit "
        "ExitCode=0:15 RunTime=00:01:23 StartTime=2026-01-01T00:00:00 "
        "EndTime=2026-01-01T00:01:23 TRES=cpu=1,gres/gpu=2,gres/gpu:a100=2 \n";
    struct slurm_jobs j;
    (void)state;
    parse(scontrol_jobs_parse, in, &j);
    assert_int_equal(j.njobs, 2);
    assert_string_equal(j.jobs[0].id, "11_1");
    assert_string_equal(j.jobs[0].name, "my job");
    assert_string_equal(j.jobs[0].user, "alice");
    assert_string_equal(j.jobs[0].state, "PENDING");
    assert_null(j.jobs[0].start); /* projected start of a pending job */
    assert_null(j.jobs[0].end);
    assert_int_equal(j.jobs[0].time_limit_s, 86400);
    assert_string_equal(j.jobs[1].state, "TIMEOUT");
    assert_string_equal(j.jobs[1].end, "2026-01-01T00:01:23");
    assert_int_equal((long long)j.jobs[1].elapsed_s, 83);
    assert_int_equal(j.jobs[1].gpus, 2);
    assert_int_equal(j.jobs[1].signal, 15);
    slurm_jobs_free(&j);
}

static void test_sbatch_shapes(void **state)
{
    static const struct {
        const char *in, *id, *cluster;
        size_t nwarn;
    } t[] = {
        {"Submitted batch job 5610208\n", "5610208", NULL, 0},
        {"Submitted batch job 60060368 on cluster slaking\n", "60060368",
         "slaking", 0},
        {"15786755\n", "15786755", NULL, 0},
        {"15786755;testb\n", "15786755", "testb", 0},
        {"sbatch: error: Batch job submission failed: x\n"
         "Submitted batch job 9\n",
         "9", NULL, 1},
        /* a year in a banner is not --parsable output when the sentence
         * is there */
        {"2024\nSubmitted batch job 77\n", "77", NULL, 1},
        {"Welcome 2024 cluster\r\n\r\n12\r\n", "12", NULL, 1},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct sbatch_result r;
        exa_error_t err = EXA_ERROR_INIT;
        memset(&r, 0, sizeof(r));
        if (sbatch_parse(t[i].in, strlen(t[i].in), &r, &err) < 0)
            fail_msg("case %zu: %s", i, err.text);
        assert_string_equal(r.job_id, t[i].id);
        if (t[i].cluster)
            assert_string_equal(r.cluster, t[i].cluster);
        else
            assert_null(r.cluster);
        assert_int_equal(r.warnings.nr, t[i].nwarn);
        sbatch_result_free(&r);
    }
}

static void test_sbatch_failed(void **state)
{
    const char *bad[] = {
        "sbatch: error: Batch job submission failed: Invalid account\n",
        "",
        "\n\n",
        "Submitted batch job \n",
        "job 123 queued\n",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct sbatch_result r;
        exa_error_t err = EXA_ERROR_INIT;
        memset(&r, 0, sizeof(r));
        if (sbatch_parse(bad[i], strlen(bad[i]), &r, &err) != -1)
            fail_msg("case %zu accepted as job '%s'", i, r.job_id);
        assert_int_equal(err.code, EXA_ESCHED);
        sbatch_result_free(&r);
    }
}

static void test_sinfo_own_format(void **state)
{
    const char *in = "NODELIST|CPUS|MEMORY|GRES|STATE|PARTITION|CPUS(A/I/O/T)\n"
                     "g01|64|512000|gpu:h100:8(S:0-1)|mixed|gpu*|32/32/0/64\n"
                     "g01|64|512000|gpu:h100:8(S:0-1)|mixed|long|32/32/0/64\n"
                     "c01|128|256000|(null)|idle+drain|cpu|0/0/128/128\n";
    struct sinfo_result r;
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    memset(&r, 0, sizeof(r));
    assert_int_equal(sinfo_parse(in, strlen(in), &r, &kind, &err), 0);
    assert_int_equal(r.nnodes, 2);
    assert_int_equal(r.nodes[0].gpus, 8);
    assert_string_equal(r.nodes[0].gpu_type, "h100");
    assert_int_equal(r.nodes[0].partitions.nr, 2);
    assert_string_equal(r.nodes[0].partitions.v[0], "gpu");
    assert_string_equal(r.nodes[0].partitions.v[1], "long");
    assert_int_equal(r.nodes[1].cpus, 128);
    assert_int_equal(r.nodes[1].gpus, 0);
    assert_null(r.nodes[1].gpu_type);
    assert_string_equal(r.nodes[1].state, "drain");
    sinfo_result_free(&r);
}

static void test_sinfo_column_overflow(void **state)
{
    const char *in = "gpu-node-01.cluster.gpu:tesla:8(S:0-7)   "
                     "gpu:tesla:8(IDX:0-7)   mixed\n";
    struct sinfo_result r;
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    memset(&r, 0, sizeof(r));
    assert_int_equal(sinfo_parse(in, strlen(in), &r, &kind, &err), -1);
    assert_string_equal(kind, "column_overflow");
    assert_int_equal(r.nnodes, 0);
    sinfo_result_free(&r);
}

static void test_sacct_blank_cells(void **state)
{
    /* `sacct -n` (default fields, no header): step lines leave the
     * Partition cell blank, so they have one token fewer */
    const char *in = "2               gpu-job      debug   research          1 "
                     " COMPLETED      0:0 \n"
                     "2.batch           batch              research          1 "
                     " COMPLETED      0:0 \n"
                     "3                  bash      debug   research          2 "
                     "OUT_OF_ME+    0:125 \n";
    struct slurm_jobs j;
    (void)state;
    parse(sacct_parse, in, &j);
    assert_int_equal(j.njobs, 2);
    assert_int_equal(j.nsteps, 1);
    assert_string_equal(j.steps[0].name, "batch");
    assert_null(j.steps[0].partition);
    assert_string_equal(j.steps[0].account, "research");
    assert_int_equal(j.steps[0].ncpus, 1);
    assert_string_equal(j.jobs[1].state, "FAILED");
    assert_int_equal(j.jobs[1].signal, 125);
    assert_int_equal(j.jobs[1].ncpus, 2);
    slurm_jobs_free(&j);
}

static void test_squeue_default_blank_in_name(void **state)
{
    /* `squeue -h` (testbed capture): %.8j right-aligned, a name with a
     * blank, a cancelled job with no node list */
    const char *in =
        "               120     debug     wrap     root CA       0:08      1 "
        "testa-n1\n"
        "               127     debug exa-t050     root CA       0:00      1 \n"
        "               146     debug x; touch     root CD       0:00      1 "
        "testa-n1\n";
    struct slurm_jobs j;
    (void)state;
    parse(squeue_parse, in, &j);
    assert_int_equal(j.njobs, 3);
    assert_string_equal(j.jobs[2].name, "x; touch");
    assert_string_equal(j.jobs[2].user, "root");
    assert_string_equal(j.jobs[2].state, "COMPLETED");
    assert_string_equal(j.jobs[2].nodelist.v[0], "testa-n1");
    assert_string_equal(j.jobs[1].state, "CANCELLED");
    assert_int_equal(j.jobs[1].nodelist.nr, 0);
    assert_int_equal((long long)j.jobs[0].elapsed_s, 8);
    slurm_jobs_free(&j);
}

static void test_sacct_parsable_trailing(void **state)
{
    /* sacct -p (not -P) ends each line with the separator */
    const char *in = "9|COMPLETED|0:0|\n9.batch|COMPLETED|0:0|\n";
    struct slurm_jobs j;
    (void)state;
    parse(sacct_parse, in, &j);
    assert_int_equal(j.njobs, 1);
    assert_int_equal(j.nerrors, 0);
    assert_string_equal(j.jobs[0].state, "COMPLETED");
    assert_int_equal(j.jobs[0].exit_code, 0);
    assert_string_equal(j.steps[0].step, "batch");
    slurm_jobs_free(&j);
}

static void test_no_state_column(void **state)
{
    const char *in = "JobID|Elapsed\n5|00:01:00\n";
    struct slurm_jobs j;
    json_t *doc;
    (void)state;
    parse(sacct_parse, in, &j);
    assert_null(j.jobs[0].state);
    doc = slurm_job_to_json(&j.jobs[0], 0);
    assert_true(json_is_null(json_object_get(doc, "state")));
    assert_int_equal(json_integer_value(json_object_get(doc, "elapsed_s")), 60);
    json_decref(doc);
    slurm_jobs_free(&j);
}

static void test_sinfo_headerless_shapes(void **state)
{
    /* partition first, AVAIL word second (sinfo -o '%R|%a|%N|...') */
    const char *a = "rtx|up|g-001|4/0/0/4|978944|N/A|2.96|idle|none|"
                    "(null)|gpu:tesla:2(S:0-1),gpu:kepler:2|"
                    "gpu:tesla:1(IDX:0),gpu:kepler:0(IDX:N/A)\n";
    /* %D|%T|%b: a state column with a word sinfo does not know */
    const char *b = "10|idle|f1,f2\n42|foo_bar|(null)\n7|inval|f1\n";
    /* Nodes ,GresUsed: only IDX lists are GresUsed */
    const char *c = "2         gpu:gb200:1(IDX:0)\n";
    struct sinfo_result r;
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    memset(&r, 0, sizeof(r));
    assert_int_equal(sinfo_parse(a, strlen(a), &r, &kind, &err), 0);
    assert_string_equal(r.nodes[0].name, "g-001");
    assert_string_equal(r.nodes[0].partitions.v[0], "rtx");
    assert_int_equal(r.nodes[0].gpus, 4);
    assert_string_equal(r.nodes[0].gpu_type, "tesla,kepler");
    assert_int_equal(r.nodes[0].gpus_used, 1);
    sinfo_result_free(&r);
    assert_int_equal(sinfo_parse(b, strlen(b), &r, &kind, &err), 0);
    assert_true(r.is_groups);
    assert_int_equal(r.ngroups, 3);
    assert_string_equal(r.groups[1].state, "unknown");
    assert_string_equal(r.groups[1].raw_state, "foo_bar");
    assert_string_equal(r.groups[2].state, "down");
    sinfo_result_free(&r);
    assert_int_equal(sinfo_parse(c, strlen(c), &r, &kind, &err), 0);
    assert_false(r.groups[0].has_gres);
    assert_true(r.groups[0].has_gres_used);
    assert_int_equal(r.groups[0].gpus_used_per_node, 1);
    sinfo_result_free(&r);
}

/* squeue_parse_cmd_blocks: blocks of 2 rows give the jobs one parse
 * gives, in order, each block parsed with the header. */
struct blocks_seen {
    struct strbuf ids;
    int blocks;
};

static void blocks_cb(void *ctx, struct slurm_jobs *jobs)
{
    struct blocks_seen *b = ctx;
    b->blocks++;
    for (size_t i = 0; i < jobs->njobs; i++)
        strbuf_addf(&b->ids, "%s:%s:%s ", jobs->jobs[i].id, jobs->jobs[i].state,
                    jobs->jobs[i].user);
}

/* One parse's document as compact JSON text (malloc'ed). */
static char *jobs_text(const char *buf, int sacct)
{
    struct slurm_jobs j;
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    json_t *doc;
    char *t;
    memset(&j, 0, sizeof(j));
    assert_int_equal(sacct ? sacct_parse(buf, strlen(buf), &j, &kind, &err)
                           : squeue_parse(buf, strlen(buf), &j, &kind, &err),
                     0);
    doc = slurm_jobs_to_json(&j, sacct);
    t = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    slurm_jobs_free(&j);
    return t;
}

/*
 * A parse remembers what it read of its first distinct state and TRES
 * cells: more distinct ones than it keeps, each met more than once,
 * read the same as each row parsed alone (a fresh memo per row).
 */
static void test_memo_same_as_alone(void **state)
{
    static const char *const st[] = {
        "PENDING",   "RUNNING",   "R",         "PD",
        "CG",        "COMPLETED", "FAILED",    "CANCELLED by 0",
        "TIMEOUT",   "OOM",       "NODE_FAIL", "COMPLETIN",
        "SUSPENDED", "BOGUS",     "RUNNING+",  "REQUEUED",
        "DEADLINE",  "PREEMPTED", "",          "COMP",
        "S",         "CD",        "CA",        "TO"};
    static const char *const tr[] = {"gres/gpu:4",
                                     "gres/gpu:a100:2",
                                     "N/A",
                                     "",
                                     "gpu:2",
                                     "gres/gpu:",
                                     "gres/gpu",
                                     "gres:gpu:1",
                                     "gres/gpu:4,gres/mps:100",
                                     "license/x:1",
                                     "gres/gpu:1",
                                     "gres/gpu:2",
                                     "gres/gpu:3",
                                     "gres/gpu:5",
                                     "gres/gpu:6",
                                     "gres/gpu:7",
                                     "gres/gpu:8",
                                     "gres/gpu:99999999999999999999"};
    static const char *const al[] = {"cpu=8,gres/gpu=2,mem=32000M,node=1",
                                     "cpu=2,mem=512M,node=",
                                     "cpu=2,gres/g",
                                     "",
                                     "billing=1,cpu=1,gres/gpu=3",
                                     "cpu=1"};
    const size_t nst = sizeof(st) / sizeof(st[0]);
    const size_t ntr = sizeof(tr) / sizeof(tr[0]);
    const size_t nal = sizeof(al) / sizeof(al[0]);
    (void)state;
    for (int sacct = 0; sacct < 2; sacct++) {
        const char *hdr = sacct ? "JobID|State|AllocTRES|End\n"
                                : "JOBID|STATE|TRES_PER_NODE|NODES|END_TIME\n";
        struct strbuf all = STRBUF_INIT, alone = STRBUF_INIT;
        strbuf_addstr(&alone, "[");
        strbuf_addstr(&all, hdr);
        for (size_t r = 0; r < 3 * nst; r++) {
            struct strbuf one = STRBUF_INIT, row = STRBUF_INIT;
            char *t;
            if (sacct)
                strbuf_addf(&row, "%zu|%s|%s|2026-01-01T00:00:00\n", 100 + r,
                            st[r % nst], al[r % nal]);
            else
                strbuf_addf(&row, "%zu|%s|%s|%zu|2026-01-01T00:00:00\n",
                            100 + r, st[r % nst], tr[(r * 7) % ntr], r % 3);
            strbuf_addstr(&all, row.buf);
            strbuf_addf(&one, "%s%s", hdr, row.buf);
            t = jobs_text(one.buf, sacct);
            /* {"jobs":[X],...}: keep X */
            {
                const char *a = strchr(t, '['), *b = strrchr(t, ']');
                if (sacct) /* then "steps":[] */
                    b = strstr(t, "],\"steps\"");
                assert_non_null(a);
                assert_non_null(b);
                if (r)
                    strbuf_addch(&alone, ',');
                strbuf_add(&alone, a + 1, (size_t)(b - a - 1));
            }
            free(t);
            strbuf_release(&one);
            strbuf_release(&row);
        }
        strbuf_addstr(&alone, "]");
        {
            char *t = jobs_text(all.buf, sacct);
            const char *a = strchr(t, '['),
                       *b = sacct ? strstr(t, "],\"steps\"") : strrchr(t, ']');
            assert_non_null(b);
            assert_int_equal((size_t)(b - a + 1), alone.len);
            assert_memory_equal(a, alone.buf, alone.len);
            free(t);
        }
        strbuf_release(&all);
        strbuf_release(&alone);
    }
}

static void test_squeue_blocks(void **state)
{
    const char *out = "\nJOBID|PARTITION|USER|STATE\n"
                      "1|gpu|alice|RUNNING\n"
                      "2|gpu|bob|PENDING\n"
                      "3|cpu|carol|RUNNING\n"
                      "4|cpu|dave|SUSPENDED\n"
                      "5|gpu|erin|PENDING\n";
    struct blocks_seen b = {STRBUF_INIT, 0};
    struct slurm_jobs whole;
    struct strbuf want = STRBUF_INIT;
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;

    (void)state;
    memset(&whole, 0, sizeof(whole));
    assert_int_equal(
        squeue_parse_cmd(out, strlen(out), NULL, &whole, &kind, &err), 0);
    for (size_t i = 0; i < whole.njobs; i++)
        strbuf_addf(&want, "%s:%s:%s ", whole.jobs[i].id, whole.jobs[i].state,
                    whole.jobs[i].user);
    assert_int_equal(
        squeue_parse_cmd_blocks(out, strlen(out), NULL, 2, blocks_cb, &b, &err),
        0);
    assert_int_equal(b.blocks, 3);
    assert_string_equal(b.ids.buf, want.buf);
    assert_string_equal(b.ids.buf, "1:RUNNING:alice 2:PENDING:bob "
                                   "3:RUNNING:carol 4:SUSPENDED:dave "
                                   "5:PENDING:erin ");
    slurm_jobs_free(&whole);
    strbuf_release(&want);
    strbuf_release(&b.ids);
}

/* The document one parse gives (slurm_jobs_write_json, pretty), or
 * "error <kind>: <text>" (malloc'ed). */
static char *whole_doc(const char *buf, size_t len, int sacct)
{
    struct slurm_jobs j;
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    char *t = NULL;
    size_t n = 0;
    FILE *fp;
    int rc;
    memset(&j, 0, sizeof(j));
    rc = sacct ? sacct_parse_cmd(buf, len, NULL, &j, &kind, &err)
               : squeue_parse_cmd(buf, len, NULL, &j, &kind, &err);
    if (rc < 0) {
        slurm_jobs_free(&j);
        return xstrfmt("error %s: %s", kind, err.text);
    }
    fp = open_memstream(&t, &n);
    assert_non_null(fp);
    {
        struct jsonw w;
        jsonw_init(&w, fp, 1);
        slurm_jobs_write_json(&j, sacct, &w);
        jsonw_finish(&w);
    }
    fclose(fp);
    slurm_jobs_free(&j);
    return t;
}

/* The document slurm_jobs_stream_json writes with blocks of rows. */
static char *stream_doc(const char *buf, size_t len, int sacct, size_t rows)
{
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    char *t = NULL;
    size_t n = 0;
    FILE *fp = open_memstream(&t, &n);
    int rc;
    assert_non_null(fp);
    rc = slurm_jobs_stream_json(buf, len, sacct, NULL, rows, fp, &kind, &err);
    fclose(fp);
    if (rc < 0) {
        assert_int_equal(n, 0); /* nothing written */
        free(t);
        return xstrfmt("error %s: %s", kind, err.text);
    }
    return t;
}

/*
 * slurm_parse_blocks through slurm_jobs_stream_json: every block size
 * gives the bytes one parse writes, for tables that are cut in blocks
 * (exa's own 0x1E records with a mismatched record between, --parsable2
 * with steps, blank lines, a repeated header, a Slurm error line and
 * short records) and for those parsed whole (blank-aligned columns,
 * headerless, scontrol lines, error text only, empty input).
 */
static void test_blocks_same_as_one(void **state)
{
    static const char *const inputs[] = {
        /* exa's squeue format: 0x1E records, 0x1F fields; record 4 has a
         * field too few, record 6 a name with a newline */
        "\036JOBID\037STATE\037PARTITION\037USER\037NAME\037NODELIST\n"
        "\0361\037RUNNING\037gpu\037ann\037a\037n[1-3]\n"
        "\0362\037PENDING\037gpu\037bob\037b\037\n"
        "\0363\037RUNNING\037cpu\037cat\037c\037c[01-02]\n"
        "\0364\037RUNNING\037cpu\037dan\037d\n"
        "\0365\037COMPLETING\037cpu\037eve\037e\037c03\n"
        "\0366\037RUNNING\037gpu\037fay\037f\nx\037n4\n"
        "\0367\037SUSPENDED\037gpu\037gus\037g\037n5\n",
        /* the pipe format with a header, blank lines, a repeated header,
         * an error line and short records */
        "JOBID|PARTITION|USER|STATE|NODELIST\n"
        "11|p|u1|RUNNING|n[1-2]\n"
        "\n"
        "12|p|u2|PENDING|\n"
        "JOBID|PARTITION|USER|STATE|NODELIST\n"
        "13|p|u3\n"
        "squeue: error: Invalid user: nobody\n"
        "14|p|u4|RUNNING|n3\n"
        "15|p|u5|RUNNING|n4|extra\n"
        "16_[1-3]|p|u6|PENDING|\n"
        "17|q|u7|CANCELLED|\n",
        /* blank-aligned columns: parsed whole */
        "JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST\n"
        "   21       gpu    train      ann  R       1:00      1 n1\n"
        "   22       gpu     prep      bob PD       0:00      1 (Priority)\n"
        "   23       cpu     eval      cat  R       2:00      2 c[1-2]\n",
        /* headerless pipes: parsed whole */
        "31|gpu|a|ann|RUNNING|1:00|1:00:00|1|n1|gres/gpu:1\n"
        "32|gpu|b|bob|PENDING|0:00|1:00:00|1|(Priority)|N/A\n"
        "33|gpu|c|cat|RUNNING|0:10|1:00:00|1|n2|N/A\n",
        "JobId=41 JobName=a UserId=ann(1) JobState=RUNNING Partition=gpu\n"
        "JobId=42 JobName=b UserId=bob(2) JobState=PENDING Partition=gpu\n",
        "slurm_load_jobs error: Unable to contact slurm controller\n",
        "",
        "JOBID|STATE\n",
    };
    static const char *const sacct_inputs[] = {
        "JobID|JobIDRaw|State|ExitCode|Start|End|AllocTRES|NodeList|User\n"
        "51|51|COMPLETED|0:0|2026-12-01T10:00:00|2026-12-01T11:00:00|"
        "cpu=8,gres/gpu=2|n[1-2]|ann\n"
        "51.batch|51.batch|COMPLETED|0:0|2026-12-01T10:00:00|"
        "2026-12-01T11:00:00|cpu=8|n1|\n"
        "52|52|FAILED|1:0|2026-12-01T10:00:00|2026-12-01T10:05:00|cpu=4|n3|"
        "bob\n"
        "52.0|52.0|FAILED\n"
        "\n"
        "53|53|CANCELLED by 1000|0:15|None|None||None assigned|cat\n"
        "53.extern|53.extern|CANCELLED|0:15|None|None||n4|\n"
        "sacct: error: Problem talking to the database\n"
        "54_[1-2]|54|PENDING|0:0|Unknown|Unknown||None assigned|dan\n",
        "JobID|State|\n51|COMPLETED|\n51.batch|COMPLETED|\n52|FAILED|\n",
        "51|COMPLETED|0:0\n52|FAILED|1:0\n",
    };
    (void)state;
    for (int sacct = 0; sacct < 2; sacct++) {
        const char *const *in = sacct ? sacct_inputs : inputs;
        size_t nin = sacct ? sizeof(sacct_inputs) / sizeof(*sacct_inputs)
                           : sizeof(inputs) / sizeof(*inputs);
        for (size_t i = 0; i < nin; i++) {
            char *want = whole_doc(in[i], strlen(in[i]), sacct);
            for (size_t rows = 0; rows <= 5; rows++) {
                char *got = stream_doc(in[i], strlen(in[i]), sacct, rows);
                if (strcmp(got, want))
                    fail_msg("sacct=%d input %zu rows %zu:\n%s\nwant:\n%s",
                             sacct, i, rows, got, want);
                free(got);
            }
            free(want);
        }
    }
}

/*
 * The budget of node names one parse expands (2,000,000) is kept across
 * the blocks as one parse keeps it: 22 lists of 90,000 names expand
 * (1,980,000), the 23rd does not fit what is left, the 24th (10,000)
 * still does; blocks of 3 records meet the budget inside a block, which
 * is parsed again with what is left.
 */
static void test_blocks_host_budget(void **state)
{
    struct strbuf in = STRBUF_INIT;
    char *want, *got;
    (void)state;
    strbuf_addstr(&in, "JOBID|STATE|NODELIST\n");
    for (int i = 1; i <= 23; i++)
        strbuf_addf(&in, "%d|RUNNING|h%02d-[000001-090000]\n", i, i);
    strbuf_addstr(&in, "24|RUNNING|k[00001-10000]\n");
    strbuf_addstr(&in, "25|RUNNING|z[1-3]\n");
    want = whole_doc(in.buf, in.len, 0);
    got = stream_doc(in.buf, in.len, 0, 3);
    assert_true(strlen(got) == strlen(want));
    assert_true(!strcmp(got, want));
    /* the 23rd list as printed, the 24th and 25th expanded */
    assert_non_null(strstr(want, "\"h23-[000001-090000]\""));
    assert_non_null(strstr(want, "\"k10000\""));
    assert_non_null(strstr(want, "\"z3\""));
    assert_null(strstr(want, "\"h23-000001\""));
    free(want);
    free(got);
    strbuf_release(&in);
}

/*
 * The JSON writer's long values: a name of 5,000 bytes, a node list of
 * 3,000 names and the last cell of a row at the very end of its copy
 * (read 16 bytes at a time there) give jansson's bytes (slurm_jobs_to_json
 * and jx_dumpf) in the one parse and in blocks.
 */
static void test_long_values_json(void **state)
{
    struct strbuf in = STRBUF_INIT, name = STRBUF_INIT;
    struct slurm_jobs j;
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    char *want = NULL, *got;
    size_t wl = 0;
    FILE *fp;
    json_t *doc;
    (void)state;
    for (int i = 0; i < 5000; i++)
        strbuf_addch(&name, (char)('a' + i % 26));
    strbuf_addstr(&in, "JOBID|STATE|NAME|NODELIST|PARTITION\n");
    for (int r = 0; r < 6; r++)
        strbuf_addf(&in, "%d|RUNNING|%s|n[0001-3000]|%s\n", r,
                    r % 2 ? name.buf : "x",
                    r % 3 ? "p" : "a-partition-name-of-some-length");
    memset(&j, 0, sizeof(j));
    assert_int_equal(squeue_parse_cmd(in.buf, in.len, NULL, &j, &kind, &err),
                     0);
    assert_int_equal(j.njobs, 6);
    doc = slurm_jobs_to_json(&j, 0);
    fp = open_memstream(&want, &wl);
    assert_non_null(fp);
    jx_dumpf(doc, fp, 1);
    fclose(fp);
    json_decref(doc);
    slurm_jobs_free(&j);
    got = whole_doc(in.buf, in.len, 0);
    assert_string_equal(got, want);
    free(got);
    for (size_t rows = 1; rows <= 4; rows++) {
        got = stream_doc(in.buf, in.len, 0, rows);
        assert_string_equal(got, want);
        free(got);
    }
    free(want);
    strbuf_release(&in);
    strbuf_release(&name);
}

/* Many blocks (parsed on two threads): the same jobs as one parse, in
 * order, for blocks of 1, 4 and 7 rows; output that is only an error
 * fails with it. */
static void test_squeue_blocks_threaded(void **state)
{
    struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
    struct slurm_jobs whole;
    const char *kind;
    exa_error_t err = EXA_ERROR_INIT;

    (void)state;
    strbuf_addstr(&out, "JOBID|PARTITION|USER|STATE\n");
    for (int i = 1; i <= 200; i++)
        strbuf_addf(&out, "%d|p%d|u%d|%s\n", i, i % 3, i % 7,
                    i % 2 ? "RUNNING" : "PENDING");
    memset(&whole, 0, sizeof(whole));
    assert_int_equal(
        squeue_parse_cmd(out.buf, out.len, NULL, &whole, &kind, &err), 0);
    assert_int_equal(whole.njobs, 200);
    for (size_t i = 0; i < whole.njobs; i++)
        strbuf_addf(&want, "%s:%s:%s ", whole.jobs[i].id, whole.jobs[i].state,
                    whole.jobs[i].user);
    slurm_jobs_free(&whole);
    for (size_t rows = 1; rows <= 7; rows += 3) {
        struct blocks_seen b = {STRBUF_INIT, 0};
        assert_int_equal(squeue_parse_cmd_blocks(out.buf, out.len, NULL, rows,
                                                 blocks_cb, &b, &err),
                         0);
        assert_int_equal(b.blocks, (int)((200 + rows - 1) / rows));
        assert_string_equal(b.ids.buf, want.buf);
        strbuf_release(&b.ids);
    }
    /* squeue that printed only its error: the one block fails, cb never
     * runs (every later block carries the header, which a block of error
     * lines alone does not fail: only the first block can) */
    {
        static const char only[] =
            "slurm_load_jobs error: Unable to contact slurm controller\n";
        struct blocks_seen b = {STRBUF_INIT, 0};
        err = (exa_error_t)EXA_ERROR_INIT;
        assert_int_equal(squeue_parse_cmd_blocks(only, strlen(only), NULL, 2,
                                                 blocks_cb, &b, &err),
                         -1);
        assert_non_null(strstr(err.text, "Unable to contact"));
        assert_int_equal(b.blocks, 0);
        strbuf_release(&b.ids);
    }
    strbuf_release(&out);
    strbuf_release(&want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_squeue_own_format),
        cmocka_unit_test(test_squeue_field_mismatch),
        cmocka_unit_test(test_squeue_blocks_threaded),
        cmocka_unit_test(test_error_text_in_cells),
        cmocka_unit_test(test_squeue_closing_id),
        cmocka_unit_test(test_squeue_het_and_hold),
        cmocka_unit_test(test_sacct_own_format),
        cmocka_unit_test(test_sacct_truncated),
        cmocka_unit_test(test_scontrol_multiline),
        cmocka_unit_test(test_sbatch_shapes),
        cmocka_unit_test(test_sbatch_failed),
        cmocka_unit_test(test_sinfo_own_format),
        cmocka_unit_test(test_sinfo_column_overflow),
        cmocka_unit_test(test_sacct_blank_cells),
        cmocka_unit_test(test_squeue_default_blank_in_name),
        cmocka_unit_test(test_sacct_parsable_trailing),
        cmocka_unit_test(test_no_state_column),
        cmocka_unit_test(test_memo_same_as_alone),
        cmocka_unit_test(test_sinfo_headerless_shapes),
        cmocka_unit_test(test_squeue_blocks),
        cmocka_unit_test(test_blocks_same_as_one),
        cmocka_unit_test(test_blocks_host_budget),
        cmocka_unit_test(test_long_values_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
