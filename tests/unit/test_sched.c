/*
 * test_sched.c - the scheduler adapter through the fake transport:
 * state normalization, resource translation, run.sh, batched status
 * (call counts), chunking, the tracker's bounds, idempotent submit after a
 * dropped reply, Flux parsing, and the mock adapter end to end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "libsched/resources.h"
#include "libsched/runscript.h"
#include "libsched/sched.h"
#include "libsched/tracker.h"
#include "libutil/subprocess.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

#define FIX "tests/fixtures/slurm-adapter/"

static char tmpdir[64];

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;

    assert_non_null(f);
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_add(&sb, buf, n);
    fclose(f);
    return strbuf_detach(&sb, NULL);
}

static void no_sleep(void *arg, double s)
{
}

/* ---- states ---- */

static void test_slurm_states(void **state)
{
    assert_int_equal(sched_slurm_state("CANCELLED by 0"), SCHED_CANCELLED);
    assert_int_equal(sched_slurm_state("CANCELLED+"), SCHED_CANCELLED);
    assert_int_equal(sched_slurm_state("COMPLETIN"), SCHED_RUNNING);
    assert_int_equal(sched_slurm_state("OUT_OF_ME+"), SCHED_FAILED);
    assert_int_equal(sched_slurm_state("PD"), SCHED_PENDING);
    assert_int_equal(sched_slurm_state("CF"), SCHED_PENDING);
    assert_int_equal(sched_slurm_state("NODE_FAIL"), SCHED_FAILED);
    assert_int_equal(sched_slurm_state("DEADLINE"), SCHED_TIMEOUT);
    assert_int_equal(sched_slurm_state("ST"), SCHED_SUSPENDED);
    assert_int_equal(sched_slurm_state("RUNING"), SCHED_UNKNOWN);
    assert_int_equal(sched_slurm_state("COMP"), SCHED_UNKNOWN); /* ambiguous */
    assert_int_equal(sched_slurm_state(""), SCHED_UNKNOWN);
    assert_int_equal(sched_flux_state("INACTIVE", "CANCELED"), SCHED_CANCELLED);
    assert_int_equal(sched_flux_state("INACTIVE", "FAILED"), SCHED_FAILED);
    assert_int_equal(sched_flux_state("CLEANUP", ""), SCHED_RUNNING);
    assert_int_equal(sched_flux_state("SCHED", ""), SCHED_PENDING);
    assert_int_equal(sched_flux_state("TO", NULL), SCHED_TIMEOUT);
    assert_string_equal(sched_state_name(SCHED_TIMEOUT), "TIMEOUT");
}

/* ---- resources ---- */

static char *joined(const struct strvec *v)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < v->nr; i++)
        strbuf_addf(&sb, "%s%s", i ? " " : "", v->v[i]);
    return strbuf_detach(&sb, NULL);
}

static void test_resources_translation(void **state)
{
    struct sched_resources r = SCHED_RESOURCES_INIT;
    struct strvec a = STRVEC_INIT, w = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    char *s;

    assert_int_equal(sched_resources_set(&r, "partition", "gpu", &err), 0);
    assert_int_equal(sched_resources_set(&r, "qos", "high", &err), 0);
    assert_int_equal(sched_resources_set(&r, "account", "proj; rm -rf /", &err),
                     0);
    assert_int_equal(sched_resources_set(&r, "time", "90", &err), 0);
    assert_int_equal(sched_resources_set(&r, "ntasks", "3", &err), 0);
    assert_int_equal(sched_resources_set(&r, "gpus", "4", &err), 0);
    assert_int_equal(sched_resources_set(&r, "mem", "16G", &err), 0);
    assert_int_equal(sched_resources_set(&r, "array", "0-9%2", &err), 0);
    assert_int_equal(sched_resources_slurm_argv(&r, &a, &err), 0);
    s = joined(&a);
    assert_string_equal(s, "--partition=gpu --qos=high --time=90 --ntasks=3 "
                           "--mem=16G --gpus=4 --account=proj; rm -rf / "
                           "--array=0-9%2");
    free(s);
    strvec_clear(&a);

    /* -g is per slot: 4 GPUs cannot be 3 equal slots (ceil would
     * allocate 6) */
    assert_int_equal(sched_resources_flux_argv(&r, 0, &a, &w, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_string_equal(err.text, "gpus 4 cannot be split over 3 flux slots: "
                                  "flux -g is per slot (ask a multiple of 3 "
                                  "GPUs, or ntasks dividing 4)");
    strvec_clear(&a);
    strvec_clear(&w);
    assert_int_equal(sched_resources_set(&r, "ntasks", "2", &err), 0);
    assert_int_equal(sched_resources_flux_argv(&r, 0, &a, &w, &err), 0);
    s = joined(&a);
    /* 90 is minutes (Slurm's rule) -> 5400 s; -g per slot = 4/2 */
    /* the partition is the Flux queue; Flux has no QOS */
    assert_string_equal(s, "--queue=gpu -n2 -g2 -t5400s");
    free(s);
    assert_int_equal(w.nr, 3);
    assert_string_equal(w.v[0], "account 'proj; rm -rf /' dropped: "
                                "flux-accounting is not present");
    assert_string_equal(w.v[1],
                        "mem '16G' dropped: Flux has no memory request");
    assert_string_equal(w.v[2], "qos 'high' dropped: Flux has no QOS (a Flux "
                                "queue is --partition)");
    strvec_clear(&a);
    strvec_clear(&w);
    {
        /* the slot shape: one slot by default; -N with as many slots as
         * nodes and the job total split over them */
        long sl, per;
        assert_int_equal(sched_flux_slots(0, 0, 0, &sl, &per, &err), 0);
        assert_int_equal(sl, 1);
        assert_int_equal(per, 0);
        assert_int_equal(sched_flux_slots(0, 2, 2, &sl, &per, &err), 0);
        assert_int_equal(sl, 2);
        assert_int_equal(per, 1);
        assert_int_equal(sched_flux_slots(0, 0, 3, &sl, &per, &err), 0);
        assert_int_equal(sl, 1);
        assert_int_equal(per, 3);
        assert_int_equal(sched_flux_slots(0, 2, 3, &sl, &per, &err), -1);
        assert_int_equal(sched_flux_slots(1, 2, 0, &sl, &per, &err), -1);
        assert_string_equal(err.text, "ntasks 1 is fewer than nodes 2: flux "
                                      "needs a slot on every node");
    }
    assert_int_equal(sched_resources_flux_argv(&r, 1, &a, &w, &err), 0);
    assert_string_equal(a.v[1], "--bank=proj; rm -rf /");
    strvec_clear(&a);
    strvec_clear(&w);

    assert_int_equal(sched_resources_set(&r, "job_name", "a\nb", &err), -1);
    assert_string_equal(err.text,
                        "job_name must not contain control characters");
    assert_int_equal(sched_resources_set(&r, "nodes", "0", &err), -1);
    assert_int_equal(sched_resources_set(&r, "time", "1:2:3:4", &err), -1);
    sched_resources_release(&r);
}

static void test_time_seconds(void **state)
{
    long long s;
    int unl;

    assert_int_equal(sched_time_seconds("90", &s, &unl, NULL), 0);
    assert_int_equal(s, 5400);
    assert_int_equal(sched_time_seconds("90:30", &s, &unl, NULL), 0);
    assert_int_equal(s, 5430);
    assert_int_equal(sched_time_seconds("2:00:00", &s, &unl, NULL), 0);
    assert_int_equal(s, 7200);
    assert_int_equal(sched_time_seconds("1-00:00:00", &s, &unl, NULL), 0);
    assert_int_equal(s, 86400);
    assert_int_equal(sched_time_seconds("2-12", &s, &unl, NULL), 0);
    assert_int_equal(s, 216000);
    assert_int_equal(sched_time_seconds("1-2:30", &s, &unl, NULL), 0);
    assert_int_equal(s, 95400);
    assert_int_equal(sched_time_seconds("UNLIMITED", &s, &unl, NULL), 0);
    assert_int_equal(unl, 1);
    assert_int_equal(sched_time_seconds("30m", &s, &unl, NULL), -1);
    assert_int_equal(sched_time_seconds("", &s, &unl, NULL), -1);
}

static void test_resources_env(void **state)
{
    struct sched_resources r = SCHED_RESOURCES_INIT;
    exa_error_t err = EXA_ERROR_INIT;

    setenv("EXAMLOPS_HPC_PARTITION", "hpcpart", 1);
    setenv("EXAMLOPS_SLURM_PARTITION", "legacy", 1);
    setenv("EXAMLOPS_SLURM_CPUS", "8", 1);
    setenv("EXAMLOPS_HPC_GPUS", "x", 1);
    assert_int_equal(sched_resources_from_env(&r, &err), -1);
    assert_string_equal(err.text, "EXAMLOPS_HPC_GPUS: gpus must be a positive "
                                  "integer, not 'x'");
    unsetenv("EXAMLOPS_HPC_GPUS");
    assert_int_equal(sched_resources_set(&r, "cpus_per_task", "2", &err), 0);
    assert_int_equal(sched_resources_from_env(&r, &err), 0);
    assert_string_equal(r.partition, "hpcpart");
    assert_int_equal(r.cpus_per_task, 2); /* a flag beats the environment */
    unsetenv("EXAMLOPS_HPC_PARTITION");
    unsetenv("EXAMLOPS_SLURM_PARTITION");
    unsetenv("EXAMLOPS_SLURM_CPUS");
    sched_resources_release(&r);
}

/* ---- run.sh ---- */

static void test_runscript_text_and_injection(void **state)
{
    char marker[128], dir[128], script[160];
    const char *argv[] = {
        "printf",       "[%s]\\n",    "; touch MARK", "$(touch MARK)",
        "`touch MARK`", "it's \"q\"", "a\nb",         NULL};
    const char *env[] = {"EXA_X=$(touch MARK)", NULL};
    struct runscript rs = {"t", NULL, env, NULL};
    struct strbuf sb = STRBUF_INIT;
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *run[] = {"bash", script, NULL};
    char *args[8];

    snprintf(marker, sizeof(marker), "%s/pwned", tmpdir);
    snprintf(dir, sizeof(dir), "%s/job dir", tmpdir);
    snprintf(script, sizeof(script), "%s/run.sh", tmpdir);
    for (int i = 0; argv[i]; i++) {
        const char *m = strstr(argv[i], "MARK");
        args[i] =
            m ? xstrfmt("%.*s%s%s", (int)(m - argv[i]), argv[i], marker, m + 4)
              : xstrdup(argv[i]);
    }
    args[7] = NULL;
    rs.argv = (const char *const *)args;
    rs.remote_dir = dir;
    assert_int_equal(runscript_render(&rs, &sb, &err), 0);
    assert_true(starts_with(sb.buf, "#!/bin/bash\n# exa run script: t\n"
                                    "set -euo pipefail\nmkdir -p -- '"));
    assert_non_null(strstr(sb.buf, "\nexport EXA_X='$(touch "));
    assert_non_null(strstr(sb.buf, "\nexec printf '[%s]\\n' '; touch "));
    assert_int_equal(runscript_write(script, sb.buf, &err), 0);
    assert_int_equal(access(script, X_OK), 0);
    assert_int_equal(subprocess_run(run, NULL, &res, &err), 0);
    assert_int_equal(res.exit_code, 0);
    {
        char *want = xstrfmt("[; touch %s]\n[$(touch %s)]\n[`touch %s`]\n"
                             "[it's \"q\"]\n[a\nb]\n",
                             marker, marker, marker);
        assert_string_equal(res.out.buf, want);
        free(want);
    }
    assert_int_equal(access(marker, F_OK), -1);
    assert_int_equal(access(dir, F_OK), 0);

    /* an env entry that is not NAME=VALUE is refused */
    {
        const char *bad[] = {"1X=y", NULL};
        rs.env = bad;
        assert_int_equal(runscript_render(&rs, &sb, &err), -1);
    }
    for (int i = 0; args[i]; i++)
        free(args[i]);
    strbuf_release(&sb);
    subprocess_result_release(&res);
}

static void test_log_pattern(void **state)
{
    char *p = runscript_log_pattern("slurm", "/scratch/100%/run", "out");
    assert_string_equal(p, "/scratch/100%%/run/%j.out");
    free(p);
    p = runscript_log_pattern("flux", "/scratch/r", "err");
    assert_string_equal(p, "/scratch/r/{{id}}.err");
    free(p);
}

/* ---- batched status ---- */

/* The header lines of the adapter's status queries (slurm.c), as the
 * testbed's Slurm prints them. */
#define SQ_HDR                                                                 \
    "\036JOBID\037STATE\037REASON\037SUBMIT_TIME\037START_TIME"                \
    "\037END_TIME\n"
#define SA_HDR                                                                 \
    "JobID\037State\037ExitCode\037Submit\037Start\037End"                     \
    "\037ElapsedRaw\037AllocTRES\037NCPUS\037NNodes\n"

/* squeue handler: ids below 100 run; sacct: the rest COMPLETED, odd FAILED. */
static int fake_squeue(void *arg, const char *const *argv, const char *in,
                       size_t len, struct transport_result *res,
                       exa_error_t *err)
{
    const char *ids = argv[2];
    char *copy = xstrdup(ids), *p = copy;

    assert_string_equal(argv[1], "-j");
    strbuf_addstr(&res->out, SQ_HDR);
    while (p) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        if ((int)strtol(p, NULL, 10) < 1100)
            strbuf_addf(&res->out,
                        "\036%s\037RUNNING\037None\0372026-11-30T01:00:00\037"
                        "2026-11-30T01:00:01\0372026-11-30T02:00:01\n",
                        p);
        p = c ? c + 1 : NULL;
    }
    free(copy);
    res->rc = 0;
    return 0;
}

static int fake_sacct(void *arg, const char *const *argv, const char *in,
                      size_t len, struct transport_result *res,
                      exa_error_t *err)
{
    size_t j = 0;
    char *copy, *p;

    while (argv[j] && strcmp(argv[j], "-j"))
        j++;
    assert_non_null(argv[j]);
    copy = xstrdup(argv[j + 1]);
    p = copy;
    strbuf_addstr(&res->out, SA_HDR);
    while (p) {
        char *c = strchr(p, ',');
        int id;
        if (c)
            *c = '\0';
        id = (int)strtol(p, NULL, 10);
        if (id != 1199) /* 1199 is unknown to everyone */
            strbuf_addf(
                &res->out,
                "%s\037%s\037%d:0\0372026-11-30T01:00:00\037"
                "2026-11-30T01:00:01\0372026-11-30T01:00:11\03710\037"
                "billing=1,cpu=2,gres/gpu=1,mem=500M,node=1\0372\0371\n",
                p, id % 2 ? "FAILED" : "COMPLETED", id % 2 ? 2 : 0);
        p = c ? c + 1 : NULL;
    }
    free(copy);
    res->rc = 0;
    return 0;
}

static void test_batched_200(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    char *ids[200];
    struct sched_job out[200];

    transport_fake_add_handler(t, "squeue -j *", fake_squeue, NULL, 0);
    transport_fake_add_handler(t, "sacct -X --parsable2 *", fake_sacct, NULL,
                               0);
    for (int i = 0; i < 200; i++)
        ids[i] = xstrfmt("%d", 1000 + i);
    assert_int_equal(
        sched_status_batch(s, (const char *const *)ids, 200, out, &err), 0);
    assert_int_equal(transport_fake_count(t, "squeue *"), 1);
    assert_int_equal(transport_fake_count(t, "sacct *"), 1);
    assert_int_equal(transport_fake_ncalls(t), 2);
    assert_int_equal(out[0].state, SCHED_RUNNING);
    assert_string_equal(out[0].start, "2026-11-30T01:00:01");
    assert_string_equal(out[0].end, ""); /* a running job's end is a guess */
    assert_int_equal(out[100].state, SCHED_COMPLETED);
    assert_int_equal(out[100].exit_code, 0);
    assert_int_equal(out[100].gpus, 1);
    assert_int_equal(out[100].cpus, 2);
    assert_int_equal(out[100].elapsed_s, 10);
    assert_int_equal(out[101].state, SCHED_FAILED);
    assert_int_equal(out[101].exit_code, 2);
    assert_int_equal(out[101].signal, 0);
    assert_int_equal(out[199].state, SCHED_UNKNOWN); /* never fails the batch */
    /* the sacct call only asked for the 100 that left the queue */
    {
        const char *c = transport_fake_call(t, 1);
        assert_non_null(strstr(c, " -j 1100,1101,"));
        assert_null(strstr(c, "1099"));
        assert_non_null(strstr(c, " -S now-7days "));
        assert_non_null(strstr(c, "--delimiter=\037"));
    }
    for (int i = 0; i < 200; i++)
        free(ids[i]);
    sched_free(s);
    transport_close(t);
}

static void test_tracker_round_200(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    char *ids[200];
    struct sched_job out[200];
    struct tracker_opts o;
    int polls = 0;

    /* all 200 left the queue and ended (ids >= 1100 in the handlers) */
    transport_fake_add_handler(t, "squeue -j *", fake_squeue, NULL, 0);
    transport_fake_add_handler(t, "sacct -X --parsable2 *", fake_sacct, NULL,
                               0);
    for (int i = 0; i < 200; i++)
        ids[i] =
            xstrfmt("%d", i == 99 ? 1100 : 1200 + i); /* no 1199; 1100 twice */
    assert_int_equal(tracker_opts_from_env(&o, &err), 0);
    o.sleep_fn = no_sleep;
    assert_int_equal(
        tracker_wait(s, (const char *const *)ids, 200, &o, out, &polls, &err),
        0);
    assert_int_equal(polls, 1);
    assert_int_equal(transport_fake_count(t, "squeue *"), 1);
    assert_int_equal(transport_fake_count(t, "sacct *"), 1);
    for (int i = 0; i < 200; i++)
        free(ids[i]);
    sched_free(s);
    transport_close(t);
}

static void test_chunking_10000(void **state)
{
    struct strvec chunks = STRVEC_INIT;
    char **ids = xcalloc(10000, sizeof(*ids));
    size_t total = 0;

    for (int i = 0; i < 10000; i++)
        ids[i] = xstrfmt("%d", 5000000 + i);
    sched_chunk_ids((const char *const *)ids, 10000, 4096, &chunks);
    /* 10000 ids of 7 digits + comma = 80000 bytes: 20 chunks of <= 4096 */
    assert_int_equal(chunks.nr, 20);
    for (size_t c = 0; c < chunks.nr; c++) {
        size_t n = 1;
        assert_true(strlen(chunks.v[c]) <= 4096);
        for (const char *p = chunks.v[c]; *p; p++)
            n += *p == ',';
        total += n;
    }
    assert_int_equal(total, 10000);
    assert_true(starts_with(chunks.v[0], "5000000,5000001,"));
    assert_true(ends_with(chunks.v[19], ",5009999"));
    strvec_clear(&chunks);

    /* through the adapter: one squeue and one sacct per chunk */
    {
        struct transport *t = transport_fake_new();
        exa_error_t err = EXA_ERROR_INIT;
        struct sched *s = sched_new("slurm", t, &err);
        struct sched_job *out = xcalloc(10000, sizeof(*out));

        transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
        transport_fake_add(t, "sacct *", "", "", 0, 0, 0);
        s->sacct_chunk_bytes = 4096;
        assert_int_equal(
            sched_status_batch(s, (const char *const *)ids, 10000, out, &err),
            0);
        assert_int_equal(transport_fake_count(t, "squeue *"), 20);
        assert_int_equal(transport_fake_count(t, "sacct *"), 20);
        assert_int_equal(out[9999].state, SCHED_UNKNOWN);
        free(out);
        sched_free(s);
        transport_close(t);
    }
    for (int i = 0; i < 10000; i++)
        free(ids[i]);
    free(ids);
}

static void test_sacct_fixture_states(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"1", "2", "3", "4", "5", "6", "999"};
    struct sched_job out[7];
    char *sq = slurp(FIX "squeue-live.out"),
         *sa = slurp(FIX "sacct-x-ended.out");

    transport_fake_add(t, "squeue *", sq, "", 0, 0, 0);
    transport_fake_add(t, "sacct *", sa, "", 0, 0, 0);
    s->sacct_since = 1764464383; /* explicit -S */
    assert_int_equal(sched_status_batch(s, ids, 7, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_TIMEOUT);
    assert_int_equal(out[0].elapsed_s, 83);
    assert_int_equal(out[0].gpus, 0);
    assert_int_equal(out[1].state, SCHED_COMPLETED);
    assert_int_equal(out[1].gpus,
                     1); /* gres/gpu=1 and gres/gpu:a100=1: not 2 */
    assert_int_equal(out[2].state, SCHED_CANCELLED);
    assert_string_equal(out[2].raw_state, "CANCELLED by 0");
    assert_int_equal(out[3].state, SCHED_FAILED);
    assert_int_equal(out[3].exit_code, 3);
    assert_int_equal(out[4].state, SCHED_PENDING);
    assert_string_equal(out[4].reason, "JobHeldUser");
    assert_string_equal(out[4].start, "");
    assert_int_equal(out[5].state, SCHED_RUNNING);
    assert_int_equal(out[6].state, SCHED_UNKNOWN);
    assert_non_null(strstr(transport_fake_call(t, 1), " -S 2025-"));
    assert_non_null(strstr(transport_fake_call(t, 1), " -j 1,2,3,4,999 "));
    free(sq);
    free(sa);
    sched_free(s);
    transport_close(t);
}

/* the node a job that left the queue ran on: sacct's NodeList, the first
 * host of a hostlist, "" for "None assigned" (WORKERS.md §9.4) */
static void test_sacct_node(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"7", "8"};
    struct sched_job out[2];
    (void)state;
    transport_fake_add(t, "squeue *", "",
                       "slurm_load_jobs error: Invalid job id specified\n", 1,
                       0, 0);
    transport_fake_add(t, "sacct *",
                       "JobID\x1fState\x1f"
                       "ExitCode\x1fNodeList\n"
                       "7\x1f"
                       "FAILED\x1f"
                       "3:0\x1fgpu[03-04]\n"
                       "8\x1f"
                       "CANCELLED by 0\x1f"
                       "0:0\x1fNone assigned\n",
                       "", 0, 0, 0);
    assert_int_equal(sched_status_batch(s, ids, 2, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_FAILED);
    assert_string_equal(out[0].node, "gpu03");
    /* sacct is asked for NodeList */
    assert_non_null(strstr(transport_fake_call(t, 1), ",NodeList"));
    assert_int_equal(out[1].state, SCHED_CANCELLED);
    assert_string_equal(out[1].node, "");
    sched_free(s);
    transport_close(t);
}

static void test_scontrol_fallback(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"2", "4"};
    struct sched_job out[2];
    char *dis = slurp(FIX "sacct-disabled.err"),
         *inv = slurp(FIX "squeue-invalid-id.err");
    char *sc = slurp(FIX "scontrol-show-job-o.out");

    transport_fake_add(t, "squeue *", "", inv, 1, 0, 0);
    transport_fake_add(t, "sacct *", "", dis, 1, 0, 0);
    transport_fake_add(t, "scontrol show job -o", sc, "", 0, 0, 0);
    assert_int_equal(sched_status_batch(s, ids, 2, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_COMPLETED);
    assert_int_equal(out[0].exit_code, 0);
    assert_int_equal(out[0].gpus, 1);
    assert_string_equal(out[0].end, "2026-11-30T00:59:48");
    assert_int_equal(out[1].state, SCHED_FAILED);
    assert_int_equal(out[1].exit_code, 3);
    assert_string_equal(out[1].node, "testa-n1"); /* BatchHost= */
    /* the next poll skips sacct: accounting is known to be absent */
    assert_int_equal(sched_status_batch(s, ids, 2, out, &err), 0);
    assert_int_equal(transport_fake_count(t, "sacct *"), 1);
    assert_int_equal(transport_fake_count(t, "scontrol *"), 2);
    free(dis);
    free(inv);
    free(sc);
    sched_free(s);
    transport_close(t);
}

static void test_array_aggregation(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"10"};
    struct sched_job out[1];
    struct strbuf sa = STRBUF_INIT;

    transport_fake_add(t, "squeue *",
                       SQ_HDR
                       "\03610_[2-9%2]\037PENDING\037JobArrayTaskLimit\037"
                       "2026-11-30T01:00:00\037N/A\037N/A\n"
                       "\03610_0\037RUNNING\037None\0372026-11-30T01:00:00\037"
                       "2026-11-30T01:00:01\0372026-11-30T01:10:01\n",
                       "", 0, 0, 1);
    strbuf_addstr(&sa, SA_HDR);
    for (int i = 0; i < 10; i++)
        strbuf_addf(&sa,
                    "10_%d\037%s\037%d:0\0372026-11-30T01:00:00\037"
                    "2026-11-30T01:00:0%d\0372026-11-30T01:01:0%d\0375\037"
                    "cpu=1,node=1\0371\0371\n",
                    i, i == 3 ? "FAILED" : "COMPLETED", i == 3 ? 2 : 0, i, i);
    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    transport_fake_add(t, "sacct *", sa.buf, "", 0, 0, 0);
    assert_int_equal(sched_status_batch(s, ids, 1, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_RUNNING);
    assert_string_equal(out[0].id, "10");
    assert_int_equal(sched_status_batch(s, ids, 1, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_FAILED);
    assert_int_equal(out[0].exit_code, 2);
    assert_string_equal(out[0].start, "2026-11-30T01:00:00");
    assert_string_equal(out[0].end, "2026-11-30T01:01:09");
    strbuf_release(&sa);
    sched_free(s);
    transport_close(t);
}

/* ---- tracker bounds ---- */

static void test_unknown_streak(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"77"};
    struct sched_job out[1];
    struct tracker_opts o;
    int polls = 0;
    char *inv = slurp(FIX "squeue-invalid-id.err");

    transport_fake_add(t, "squeue *", "", inv, 1, 0, 0);
    transport_fake_add(t, "sacct *", "", "", 0, 0, 0);
    assert_int_equal(tracker_opts_from_env(&o, &err), 0);
    o.sleep_fn = no_sleep;
    assert_int_equal(tracker_wait(s, ids, 1, &o, out, &polls, &err), -1);
    assert_int_equal(polls, 5);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    assert_string_equal(err.text, "job '77' not known to the scheduler after 5 "
                                  "consecutive polls");
    assert_int_equal(out[0].state, SCHED_UNKNOWN); /* not FAILED */
    free(inv);
    sched_free(s);
    transport_close(t);
}

/* What the tracker told its callbacks, for the outage tests. */
struct seen {
    double sleeps[64];
    int nsleeps;
    int active, over, last_failures;
    char last_error[256];
    double lasted;
};

static void seen_sleep(void *arg, double s)
{
    struct seen *v = arg;
    if (v->nsleeps < 64)
        v->sleeps[v->nsleeps++] = s;
}

static void seen_outage(void *arg, const struct tracker_outage *ev)
{
    struct seen *v = arg;
    if (ev->active) {
        v->active++;
        xsnprintf(v->last_error, sizeof(v->last_error), "%s", ev->error->text);
    } else {
        v->over++;
        v->lasted = ev->lasted_s;
    }
    v->last_failures = ev->failures;
}

static void test_backoff(void **state)
{
    static const double want1[] = {1, 2, 4, 6, 6, 6};
    static const double want10[] = {10, 20, 40, 60, 60};
    for (int k = 0; k < 6; k++)
        assert_true(tracker_backoff(1, k + 1) == want1[k]);
    for (int k = 0; k < 5; k++)
        assert_true(tracker_backoff(10, k + 1) == want10[k]);
    assert_true(tracker_backoff(30, 3) == 60);   /* capped at 60 s */
    assert_true(tracker_backoff(120, 4) == 120); /* never below the interval */
}

/* Outages are not job states: 10 failed polls in a row (every command
 * past its cap) do not end the wait, the backoff grows to its cap, the
 * outage is reported, and the job's real end is seen when it is back. */
static void test_outage_not_unknown(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"6"};
    struct sched_job out[1];
    struct tracker_opts o;
    struct seen v;
    int polls = 0;
    char *sq = slurp(FIX "squeue-live.out");
    static const double want[] = {1, 2, 4, 6, 6, 6, 6, 6, 6, 6, 1};

    memset(&v, 0, sizeof(v));
    t->timeout_s = 0.01;
    transport_fake_add(t, "squeue *", "", "", 0, 3600, 10);
    transport_fake_add(t, "sacct *", "", "", 0, 3600, 10);
    transport_fake_add(t, "squeue *", sq, "", 0, 0, 1);
    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    transport_fake_add(t, "sacct *",
                       "6\037COMPLETED\0370:0\037a\037b\037c\0379\037cpu=1\n",
                       "", 0, 0, 0);
    assert_int_equal(tracker_opts_from_env(&o, &err), 0);
    o.poll_interval_s = 1;
    o.max_unknown = 5;
    o.sleep_fn = seen_sleep;
    o.outage = seen_outage;
    o.arg = &v;
    assert_int_equal(tracker_wait(s, ids, 1, &o, out, &polls, &err), 0);
    assert_int_equal(out[0].state, SCHED_COMPLETED);
    assert_int_equal(polls, 12);
    assert_int_equal(v.active, 10);
    assert_int_equal(v.over, 1);
    assert_int_equal(v.last_failures, 10);
    assert_true(v.lasted >= 49); /* 1+2+4+6*7 slept */
    assert_string_equal(v.last_error,
                        "'squeue' on 'fake' timed out after 0.01 s");
    assert_int_equal(v.nsleeps, 11);
    for (int k = 0; k < 11; k++)
        assert_true(v.sleeps[k] == want[k]);
    assert_int_equal(transport_fake_count(t, "squeue *"), 12);

    /* a controller that refuses (squeue exits 1, not "invalid job id")
     * while sacct does not know the job yet: not evidence either */
    transport_close(t);
    t = transport_fake_new();
    s->t = t;
    memset(&v, 0, sizeof(v));
    transport_fake_add(t, "squeue *", "",
                       "slurm_load_jobs error: Unable to "
                       "contact slurm controller (connect failure)\n",
                       1, 0, 8);
    transport_fake_add(t, "sacct *", "", "", 0, 0, 8);
    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    transport_fake_add(t, "sacct *",
                       "6\037FAILED\0372:0\037a\037b\037c\0379\037cpu=1\n", "",
                       0, 0, 0);
    assert_int_equal(tracker_wait(s, ids, 1, &o, out, &polls, &err), 0);
    assert_int_equal(out[0].state, SCHED_FAILED);
    assert_int_equal(polls, 9);
    assert_int_equal(v.active, 8);
    assert_string_equal(v.last_error,
                        "'squeue' on 'fake' exited 1: slurm_load_jobs error: "
                        "Unable to contact slurm controller (connect "
                        "failure)");

    /* an outage never outlasts the deadline, and the error says so */
    transport_close(t);
    t = transport_fake_new();
    s->t = t;
    memset(&v, 0, sizeof(v));
    transport_fake_add(t, "squeue *", "",
                       "slurm_load_jobs error: Socket "
                       "timed out on send/recv operation\n",
                       1, 0, 0);
    transport_fake_add(t, "sacct *", "", "", 0, 0, 0);
    o.max_wait_s = 20;
    assert_int_equal(tracker_wait(s, ids, 1, &o, out, &polls, &err), -1);
    assert_int_equal(err.code, EXA_ETIMEOUT);
    assert_non_null(strstr(err.text, "1 job(s) not terminal after 20 s: 6; "
                                     "the scheduler has been unreachable "
                                     "since "));
    assert_non_null(strstr(err.text, " UTC: 'squeue' on 'fake' exited 1: "
                                     "slurm_load_jobs error: Socket timed "
                                     "out on send/recv operation"));
    {
        double total = 0;
        for (int k = 0; k < v.nsleeps; k++)
            total += v.sleeps[k];
        assert_true(total <= 20);
        assert_true(total > 19);
    }
    assert_true(v.sleeps[0] == 1 && v.sleeps[1] == 2 && v.sleeps[2] == 4 &&
                v.sleeps[3] == 6 && v.sleeps[4] == 6);
    assert_int_equal(out[0].state, SCHED_UNKNOWN);
    free(sq);
    sched_free(s);
    transport_close(t);
}

static int lost_reply(void *arg, const char *const *argv,
                      const char *stdin_data, size_t stdin_len,
                      struct transport_result *res, exa_error_t *err)
{
    return exa_err(err, EXA_ETRANSPORT, "connection to 'fake' lost");
}

/* Only the scheduler not knowing a job counts: 5 answers "invalid job
 * id" end the wait even with an outage between them. */
static void test_unknown_counts_across_outage(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"77"};
    struct sched_job out[1];
    struct tracker_opts o;
    struct seen v;
    int polls = 0;
    char *inv = slurp(FIX "squeue-invalid-id.err");

    memset(&v, 0, sizeof(v));
    transport_fake_add(t, "squeue *", "", inv, 1, 0, 3);
    transport_fake_add(t, "sacct *", "", "", 0, 0, 3);
    transport_fake_add_handler(t, "squeue *", lost_reply, NULL, 4);
    transport_fake_add(t, "squeue *", "", inv, 1, 0, 0);
    transport_fake_add(t, "sacct *", "", "", 0, 0, 0);
    assert_int_equal(tracker_opts_from_env(&o, &err), 0);
    o.poll_interval_s = 1;
    o.sleep_fn = seen_sleep;
    o.outage = seen_outage;
    o.arg = &v;
    assert_int_equal(tracker_wait(s, ids, 1, &o, out, &polls, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    assert_string_equal(err.text, "job '77' not known to the scheduler after 5 "
                                  "consecutive polls");
    assert_int_equal(polls, 9); /* 3 answers, 4 failures, 2 answers */
    assert_int_equal(v.active, 4);
    assert_int_equal(v.over, 1);
    free(inv);
    sched_free(s);
    transport_close(t);
}

static void test_deadline_and_recovery(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    const char *ids[] = {"6"};
    struct sched_job out[1];
    struct tracker_opts o;
    int polls = 0;
    char *sq = slurp(FIX "squeue-live.out"),
         *sa = slurp(FIX "sacct-x-ended.out");

    /* controller down for 3 polls (both commands refused), then RUNNING,
     * then gone from the queue and COMPLETED in accounting */
    transport_fake_add(t, "squeue *", "",
                       "slurm_load_jobs error: Unable to "
                       "contact slurm controller (connect failure)\n",
                       1, 0, 3);
    transport_fake_add(t, "sacct *", "", "", 0, 0, 3);
    transport_fake_add(t, "squeue *", sq, "", 0, 0, 1);
    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    transport_fake_add(t, "sacct *",
                       SA_HDR "6\037COMPLETED\0370:0\037a\037b\037c\0379\037"
                              "cpu=1\0371\0371\n",
                       "", 0, 0, 0);
    assert_int_equal(tracker_opts_from_env(&o, &err), 0);
    o.sleep_fn = no_sleep;
    assert_int_equal(tracker_wait(s, ids, 1, &o, out, &polls, &err), 0);
    assert_int_equal(polls, 5);
    assert_int_equal(out[0].state, SCHED_COMPLETED);

    /* a deadline: a job RUNNING forever */
    transport_close(t);
    t = transport_fake_new();
    s->t = t;
    transport_fake_add(t, "squeue *", sq, "", 0, 0, 0);
    o.poll_interval_s = 10;
    o.max_wait_s = 35;
    assert_int_equal(tracker_wait(s, ids, 1, &o, out, &polls, &err), -1);
    assert_int_equal(err.code, EXA_ETIMEOUT);
    assert_string_equal(err.text, "1 job(s) not terminal after 35 s: 6");
    assert_int_equal(polls, 4);
    assert_int_equal(out[0].state, SCHED_RUNNING);
    free(sq);
    free(sa);
    sched_free(s);
    transport_close(t);
}

/* ---- submit ---- */

static char *make_script(void)
{
    char *p = xstrfmt("%s/local-run.sh", tmpdir);
    FILE *f = fopen(p, "w");
    fputs("#!/bin/bash\necho hello\n", f);
    fclose(f);
    return p;
}

static void test_submit_dropped_reply(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    struct sched_submit_result r;
    struct sched_resources res = SCHED_RESOURCES_INIT;
    char *script = make_script();
    struct sched_submit_req req = {script, "/remote/jobs/abc%1", "abc123",
                                   &res};

    sched_resources_set(&res, "job_name", "train; touch /tmp/x", &err);
    transport_fake_add(t, "sbatch *", "4242\n", "", 0, 0, 0);
    transport_fake_add(t, "squeue --name=*", "JOBID\n4242\n", "", 0, 0, 0);
    transport_fake_drop_nth(t, 2); /* call 1 is the put, 2 the sbatch */
    assert_int_equal(sched_submit(s, &req, &r, &err), 0);
    assert_string_equal(r.job_id, "4242");
    assert_int_equal(r.reused, 1);
    assert_int_equal(transport_fake_count(t, "sbatch *"), 1);
    assert_string_equal(transport_fake_call(t, 2),
                        "squeue --name=train; touch /tmp/x.exa-abc123 -o %i");
    assert_string_equal(
        transport_fake_call(t, 1),
        "sbatch --parsable --job-name=train; touch /tmp/x.exa-abc123 "
        "--output=/remote/jobs/abc%%1/%j.out "
        "--error=/remote/jobs/abc%%1/%j.err "
        "--chdir=/remote/jobs/abc%1 /remote/jobs/abc%1/run.sh");
    assert_non_null(transport_fake_file(t, "/remote/jobs/abc%1/run.sh"));
    sched_submit_result_release(&r);
    sched_resources_release(&res);
    sched_free(s);
    transport_close(t);
    free(script);
}

static void test_submit_lost_then_retry(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    struct sched_submit_result r;
    char *script = make_script();
    char *cl = slurp(FIX "sbatch-parsable-cluster.out");
    struct sched_submit_req req = {script, "/r", "run1", NULL};

    /* the first sbatch never reached the controller (refused before it
     * ran) and the name is unknown: one more sbatch */
    transport_fake_add(t, "sbatch *", cl, "", 0, 0, 0);
    transport_fake_add(t, "squeue --name=*", "JOBID\n", "", 0, 0, 0);
    transport_fake_add(t, "sacct *--name=exa-run1*", "", "", 0, 0, 0);
    transport_fake_fail_nth(t, 2);
    assert_int_equal(sched_submit(s, &req, &r, &err), 0);
    assert_string_equal(r.job_id, "4242");
    assert_string_equal(r.cluster, "testb");
    assert_int_equal(r.reused, 0);
    assert_int_equal(r.attempts, 2);
    assert_int_equal(transport_fake_count(t, "sbatch *"), 2);
    sched_submit_result_release(&r);
    free(cl);

    /* the scheduler refuses: no retry, the message is sbatch's */
    {
        struct transport *t2 = transport_fake_new();
        char *bad = slurp(FIX "sbatch-bad-account.err");
        s->t = t2;
        transport_fake_add(t2, "sbatch *", "", bad, 1, 0, 0);
        assert_int_equal(sched_submit(s, &req, &r, &err), -1);
        assert_int_equal(err.code, EXA_ESCHED);
        assert_string_equal(err.text,
                            "sbatch on 'fake' exited 1: Batch job "
                            "submission failed: Invalid account or "
                            "account/partition combination specified");
        assert_int_equal(transport_fake_count(t2, "sbatch *"), 1);
        sched_submit_result_release(&r);
        free(bad);
        transport_close(t2);
    }
    sched_free(s);
    transport_close(t);
    free(script);
}

/* ---- flux ---- */

static void test_flux_status(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("flux", t, &err);
    const char *ids[] = {"ƒ2TR77Ao1", "fABC", "ƒGone"};
    struct sched_job out[3];

    /* a job cancelled before it ran has an empty t_run: columns must hold */
    transport_fake_add(t, "flux jobs --no-header -o *",
                       "ƒ2TR77Ao1\037INACTIVE\037FAILED\0371738774194.07\037"
                       "1738774194.11\0371738774194.18\037256\0370.07\n"
                       "ƒABC\037INACTIVE\037CANCELED\0371738774100.0\037\037"
                       "1738774101.0\037\037\n",
                       "", 1, 0, 0);
    transport_fake_add(
        t, "flux job info ƒGone eventlog",
        "{\"timestamp\":1738774194.078433,\"name\":\"submit\",\"context\":{}}\n"
        "{\"timestamp\":1738774194.1,\"name\":\"alloc\",\"context\":{}}\n"
        "{\"timestamp\":1738774194.117796,\"name\":\"start\",\"context\":{}}\n"
        "{\"timestamp\":1738774200.5,\"name\":\"exception\",\"context\":"
        "{\"type\":\"timeout\",\"severity\":0}}\n"
        "{\"timestamp\":1738774200.6,\"name\":\"finish\",\"context\":{"
        "\"status\":15}}\n"
        "{\"timestamp\":1738774200.7,\"name\":\"clean\",\"context\":{}}\n",
        "", 0, 0, 0);
    /* why the listed ones ended (99o's shape): FAILED by its exit code,
     * its non-fatal epilog exception (severity 2) no reason; CANCELED by
     * an exception of type cancel */
    transport_fake_add(
        t, "flux jobs --json ƒ2TR77Ao1 fABC",
        "{\"jobs\": [{\"jobid\": \"ƒ2TR77Ao1\", \"state\": \"INACTIVE\", "
        "\"result\": \"FAILED\", \"exception\": {\"occurred\": true, "
        "\"severity\": 2, \"type\": \"epilog\", \"note\": \"\"}}, "
        "{\"jobid\": \"ƒABC\", \"state\": \"INACTIVE\", \"result\": "
        "\"CANCELED\", \"exception\": {\"occurred\": true, \"severity\": 0, "
        "\"type\": \"cancel\", \"note\": \"\"}}]}\n",
        "", 0, 0, 0);
    assert_int_equal(sched_status_batch(s, ids, 3, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_FAILED);
    assert_string_equal(out[0].reason, "");
    assert_string_equal(out[1].reason, "cancel");
    assert_string_equal(out[0].raw_state, "FAILED");
    assert_string_equal(out[0].submit, "2025-02-05T16:49:54Z");
    assert_int_equal(out[0].exit_code, 1); /* wait status 256 */
    assert_int_equal(out[1].state, SCHED_CANCELLED);
    assert_string_equal(out[1].id, "fABC");
    assert_string_equal(out[1].start, "");
    assert_int_equal(out[1].exit_code, -1);
    assert_int_equal(out[2].state, SCHED_TIMEOUT);
    assert_string_equal(out[2].raw_state, "TIMEOUT");
    assert_string_equal(out[2].reason, "timeout");
    assert_string_equal(out[2].start, "2025-02-05T16:49:54Z");
    assert_string_equal(out[2].end, "2025-02-05T16:50:00Z");
    assert_int_equal(out[2].elapsed_s, 6);
    assert_int_equal(out[2].signal, 15);
    assert_int_equal(out[2].exit_code, -1);
    /* the status format, then --json for the two listed that ended
     * other than COMPLETED (ƒGone is not listed: its eventlog says) */
    assert_int_equal(transport_fake_count(t, "flux jobs *"), 2);
    assert_int_equal(transport_fake_count(t, "flux jobs --json ƒ2TR77Ao1 fABC"),
                     1);
    /* the eventlog of ƒGone, then R of the two that ran (fABC never did) */
    assert_int_equal(transport_fake_count(t, "flux job info * eventlog"), 1);
    assert_int_equal(transport_fake_count(t, "flux job info * R"), 2);
    sched_free(s);
    transport_close(t);
}

/* Untrusted times: 1e300, inf, nan and negatives are unknown, never a
 * 40-byte buffer overflow (which xsnprintf turns into an abort); times
 * that are plausible come out as UTC ISO-8601. Read through the adapter,
 * so through parse_flux.h's parsers. */
static void test_flux_absurd_times(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("flux", t, &err);
    const char *ids[] = {"f1", "f2", "f3"};
    struct sched_job out[3];

    transport_fake_add(t, "flux jobs --no-header -o *",
                       "f1\037INACTIVE\037COMPLETED\0371e300\037inf\037"
                       "1738774200.25\0370\0371e300\n"
                       "f2\037INACTIVE\037FAILED\037nan\037-1738774200\037"
                       "99999999999999999999\037256\0373.4\n",
                       "", 0, 0, 0);
    transport_fake_add(
        t, "flux job info f3 eventlog",
        "{\"timestamp\":1e300,\"name\":\"submit\",\"context\":{}}\n"
        "{\"timestamp\":-5,\"name\":\"start\",\"context\":{}}\n"
        "{\"timestamp\":1738774200.5,\"name\":\"finish\",\"context\":"
        "{\"status\":0}}\n"
        "{\"timestamp\":1.5e11,\"name\":\"clean\",\"context\":{}}\n",
        "", 0, 0, 0);
    transport_fake_add(t, "flux job info * R", "", "", 1, 0, 0);
    assert_int_equal(sched_status_batch(s, ids, 3, out, &err), 0);
    assert_string_equal(out[0].id, "f1");
    assert_int_equal(out[0].state, SCHED_COMPLETED);
    assert_string_equal(out[0].raw_state, "COMPLETED");
    assert_string_equal(out[0].submit, "");
    assert_string_equal(out[0].start, "");
    assert_string_equal(out[0].end, "2025-02-05T16:50:00Z");
    assert_int_equal(out[0].exit_code, 0);
    assert_int_equal(out[0].elapsed_s, -1);

    assert_int_equal(out[1].state, SCHED_FAILED);
    assert_string_equal(out[1].submit, "");
    assert_string_equal(out[1].start, "");
    assert_string_equal(out[1].end, "");
    assert_int_equal(out[1].exit_code, 1);
    assert_int_equal(out[1].elapsed_s, 3);

    assert_int_equal(out[2].state, SCHED_COMPLETED);
    assert_string_equal(out[2].submit, "");
    assert_string_equal(out[2].start, "");
    assert_string_equal(out[2].end, "2025-02-05T16:50:00Z");
    assert_int_equal(out[2].elapsed_s, -1);
    sched_free(s);
    transport_close(t);
}

static void test_flux_submit_flags(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("flux", t, &err);
    struct sched_submit_result r;
    struct sched_resources res = SCHED_RESOURCES_INIT;
    char *script = make_script();
    struct sched_submit_req req = {script, "/r/x", "run2", &res};

    transport_fake_add(t, "flux account --help", "usage", "", 0, 0, 0);
    transport_fake_add(t, "flux batch *", "ƒ2TR77Ao1\n", "", 0, 0, 0);
    /* neither tasks nor nodes (exa hpc submit SCRIPT, pipeline run
     * --cluster without --ntasks): one slot, which flux batch requires;
     * with no resources at all too */
    assert_int_equal(sched_submit(s, &req, &r, &err), 0);
    assert_string_equal(
        transport_fake_call(t, 1),
        "flux batch --job-name=exa-run2 --output=/r/x/{{id}}.out "
        "--error=/r/x/{{id}}.err -n1 /r/x/run.sh");
    sched_submit_result_release(&r);
    req.res = NULL;
    assert_int_equal(sched_submit(s, &req, &r, &err), 0);
    assert_string_equal(
        transport_fake_call(t, 3),
        "flux batch --job-name=exa-run2 --output=/r/x/{{id}}.out "
        "--error=/r/x/{{id}}.err -n1 /r/x/run.sh");
    sched_submit_result_release(&r);
    req.res = &res;
    sched_resources_set(&res, "account", "bank1", &err);
    sched_resources_set(&res, "time", "1-00:00:00", &err);
    sched_resources_set(&res, "gpus", "2", &err);
    assert_int_equal(sched_submit(s, &req, &r, &err), 0);
    assert_string_equal(r.job_id, "ƒ2TR77Ao1");
    assert_string_equal(
        transport_fake_call(t, 6),
        "flux batch --job-name=exa-run2 --output=/r/x/{{id}}.out "
        "--error=/r/x/{{id}}.err --bank=bank1 -n1 -g2 -t86400s "
        "/r/x/run.sh");
    sched_submit_result_release(&r);

    sched_resources_set(&res, "array", "0-9%2", &err);
    transport_fake_add(t, "flux submit --cc=0-9 *", "ƒA\nƒB\n", "", 0, 0, 0);
    assert_int_equal(sched_submit(s, &req, &r, &err), 0);
    assert_int_equal(r.ids.nr, 2);
    assert_string_equal(
        r.warnings.v[0],
        "array throttle '%2' dropped: flux submit --cc has none");
    sched_submit_result_release(&r);
    sched_resources_release(&res);
    sched_free(s);
    transport_close(t);
    free(script);
}

/* ---- mock, end to end over the local transport ---- */

static void test_mock_end_to_end(void **state)
{
    struct transport *t = transport_local_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("mock", t, &err);
    struct sched_submit_result r;
    struct sched_job out[2];
    struct strbuf logs = STRBUF_INIT;
    char *script = xstrfmt("%s/mock-run.sh", tmpdir);
    char *rdir = xstrfmt("%s/remote/run3", tmpdir);
    const char *payload[] = {"sh", "-c", "echo out-$1; exit $2", "x", "ok",
                             "0",  NULL};
    struct runscript rs = {"mock", rdir, NULL, payload};
    struct strbuf text = STRBUF_INIT;
    struct sched_submit_req req = {script, rdir, "run3", NULL};
    const char *ids[2];

    s->mock_dir = xstrfmt("%s/mockdb", tmpdir);
    assert_int_equal(runscript_render(&rs, &text, &err), 0);
    assert_int_equal(runscript_write(script, text.buf, &err), 0);
    assert_int_equal(sched_submit(s, &req, &r, &err), 0);
    assert_string_equal(r.job_id, "mock-run3");
    sched_submit_result_release(&r);

    payload[5] = "3";
    strbuf_reset(&text);
    assert_int_equal(runscript_render(&rs, &text, &err), 0);
    assert_int_equal(runscript_write(script, text.buf, &err), 0);
    req.run_id = "run4";
    assert_int_equal(sched_submit(s, &req, &r, &err), 0);
    sched_submit_result_release(&r);

    ids[0] = "mock-run3";
    ids[1] = "mock-run4";
    assert_int_equal(sched_status_batch(s, ids, 2, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_COMPLETED);
    assert_int_equal(out[0].exit_code, 0);
    assert_int_equal(out[1].state, SCHED_FAILED);
    assert_int_equal(out[1].exit_code, 3);
    /* times are stored as UTC ISO-8601 with Z, like everywhere else */
    {
        const char *tv[] = {out[0].submit, out[0].start, out[0].end};
        time_t now = time(NULL);
        for (int k = 0; k < 3; k++) {
            time_t tt;
            assert_int_equal(strlen(tv[k]), 20);
            assert_int_equal(tv[k][19], 'Z');
            assert_int_equal(time_parse_iso8601(tv[k], &tt, NULL), 0);
            assert_true(tt <= now && tt >= now - 60);
        }
    }
    assert_int_equal(sched_logs(s, "mock-run3", NULL, &logs, &err), 0);
    assert_string_equal(logs.buf, "out-ok\n");
    assert_int_equal(s->log_truncated, 0);
    s->log_max_bytes = 3;
    strbuf_reset(&logs);
    assert_int_equal(sched_logs(s, "mock-run3", NULL, &logs, &err), 0);
    assert_string_equal(logs.buf, "ok\n");
    assert_int_equal(s->log_truncated, 1);
    /* a log that cannot be written fails the submit, naming the file */
    {
        char *blocker = xstrfmt("%s/mock-run5.out", rdir);
        char *want = xstrfmt(".tmp-XXXXXX' to '%s': Is a directory", blocker);
        assert_int_equal(mkdir(blocker, 0700), 0);
        req.run_id = "run5";
        assert_int_equal(sched_submit(s, &req, &r, &err), -1);
        assert_int_equal(err.code, EXA_ECONFIG);
        assert_true(starts_with(err.text, "cannot rename '"));
        assert_string_equal(err.text + strlen(err.text) - strlen(want) + 11,
                            want + 11);
        sched_submit_result_release(&r);
        free(blocker);
        free(want);
    }
    ids[0] = "mock-nope";
    assert_int_equal(sched_status_batch(s, ids, 1, out, &err), 0);
    assert_int_equal(out[0].state, SCHED_UNKNOWN);
    strbuf_release(&logs);
    strbuf_release(&text);
    free(script);
    free(rdir);
    sched_free(s);
    transport_close(t);
}

/* Logs keep the last log_max_bytes bytes, asked with tail -c MAX+1 so a
 * file of exactly MAX bytes is not reported truncated. */
static void test_logs_capped(void **state)
{
    struct transport *t = transport_fake_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct sched *s = sched_new("slurm", t, &err);
    struct sched *f = sched_new("flux", t, &err);
    struct strbuf log = STRBUF_INIT;

    s->log_max_bytes = 10;
    transport_fake_add(t, "tail -c 11 -- /r/x/7.out", "0123456789A", "", 0, 0,
                       0);
    transport_fake_add(t, "tail -c 11 -- /r/x/8.out", "0123456789", "", 0, 0,
                       0);
    transport_fake_add(t, "tail -c 11 -- /r/x/9.out", "",
                       "tail: cannot open '/r/x/9.out' for reading: No such "
                       "file or directory\n",
                       1, 0, 0);
    assert_int_equal(sched_logs(s, "7", "/r/x", &log, &err), 0);
    assert_string_equal(log.buf, "123456789A");
    assert_int_equal(s->log_truncated, 1);
    strbuf_reset(&log);
    assert_int_equal(sched_logs(s, "8", "/r/x", &log, &err), 0);
    assert_string_equal(log.buf, "0123456789");
    assert_int_equal(s->log_truncated, 0);
    strbuf_reset(&log);
    assert_int_equal(sched_logs(s, "9", "/r/x", &log, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    assert_string_equal(err.text,
                        "cannot read '/r/x/9.out' on 'fake': tail: "
                        "cannot open '/r/x/9.out' for reading: No such file "
                        "or directory");
    /* flux: the --output exa set, {{id}} expanded to the ƒ id */
    f->log_max_bytes = 4;
    transport_fake_add(t, "tail -c 5 -- /r/x/\xc6\x92Z.out", "line1\nline2\n",
                       "", 0, 0, 0);
    strbuf_reset(&log);
    assert_int_equal(sched_logs(f, "fZ", "/r/x", &log, &err), 0);
    assert_string_equal(log.buf, "ne2\n");
    assert_int_equal(f->log_truncated, 1);
    /* no job directory: flux batch's default flux-{{id}}.out in the cwd
     * `flux jobs --json` names; never `flux job attach` (empty for a
     * batch job) */
    transport_fake_add(
        t, "flux jobs --json fY",
        "{\"id\": 1234, \"cwd\": \"/home/a\", \"state\": \"INACTIVE\"}\n", "",
        0, 0, 0);
    transport_fake_add(t, "tail -c 5 -- /home/a/flux-\xc6\x92Y.out", "ok\n", "",
                       0, 0, 0);
    strbuf_reset(&log);
    assert_int_equal(sched_logs(f, "fY", NULL, &log, &err), 0);
    assert_string_equal(log.buf, "ok\n");
    transport_fake_add(t, "flux jobs --json fW",
                       "{\"id\": 1235, \"cwd\": \"/home/a\"}\n", "", 0, 0, 0);
    transport_fake_add(t, "tail -c 5 -- /home/a/flux-\xc6\x92W.out", "",
                       "tail: cannot open 'x' for reading: No such file or "
                       "directory\n",
                       1, 0, 0);
    assert_int_equal(sched_logs(f, "fW", NULL, &log, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    assert_string_equal(err.text,
                        "no output file for flux job 'fW': "
                        "'/home/a/flux-\xc6\x92W.out' does not exist on 'fake' "
                        "(a batch job's output goes to its --output file)");
    assert_int_equal(transport_fake_count(t, "flux job attach *"), 0);
    strbuf_release(&log);
    sched_free(s);
    sched_free(f);
    transport_close(t);
}

/* The job directory: EXAMLOPS_HPC_REMOTE_WORKDIR, then
 * EXAMLOPS_HPC_WORKDIR, else over ssh the remote $HOME's data directory
 * (asked with printenv HOME; here a stand-in ssh answers). */
static void test_remote_jobdir(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    char *wrap = xstrfmt("%s/fake-ssh", tmpdir);
    char *calls = xstrfmt("%s/fake-ssh.calls", tmpdir);
    char *text =
        xstrfmt("#!/bin/sh\nfor a; do last=$a; done\n"
                "echo \"$last\" >> '%s'\n"
                "[ \"$last\" = 'printenv HOME' ] && echo /home/alice\n",
                calls);
    struct ssh_config cfg = {"login1", NULL, NULL, 0, NULL, tmpdir, wrap};
    struct transport *t;
    struct sched *s;
    char *d, *cl;

    assert_int_equal(runscript_write(wrap, text, &err), 0);
    t = transport_ssh_new(&cfg, &err);
    assert_non_null(t);
    s = sched_new("slurm", t, &err);
    setenv("EXAMLOPS_HPC_REMOTE_WORKDIR", "/scratch/exa", 1);
    setenv("EXAMLOPS_HPC_WORKDIR", "/other", 1);
    d = sched_remote_jobdir(s, "run9", &err);
    assert_string_equal(d, "/scratch/exa/run9");
    free(d);
    unsetenv("EXAMLOPS_HPC_REMOTE_WORKDIR");
    d = sched_remote_jobdir(s, "run9", &err);
    assert_string_equal(d, "/other/run9");
    free(d);
    assert_int_equal(access(calls, F_OK), -1); /* nothing asked yet */
    unsetenv("EXAMLOPS_HPC_WORKDIR");
    d = sched_remote_jobdir(s, "run9", &err);
    assert_string_equal(d, "/home/alice/.local/share/examlops/jobs/run9");
    free(d);
    cl = slurp(calls);
    assert_string_equal(cl, "printenv HOME\n");
    free(cl);
    sched_free(s);
    transport_close(t);
    unlink(calls);
    free(wrap);
    free(calls);
    free(text);
}

static void test_kind_from_env(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;

    unsetenv("EXAMLOPS_HPC_SCHEDULER");
    setenv("EXAMLOPS_SLURM_MODE", "real", 1);
    assert_string_equal(sched_kind_from_env(), "slurm");
    setenv("EXAMLOPS_HPC_SCHEDULER", "flux", 1);
    assert_string_equal(sched_kind_from_env(), "flux");
    unsetenv("EXAMLOPS_HPC_SCHEDULER");
    unsetenv("EXAMLOPS_SLURM_MODE");
    assert_string_equal(sched_kind_from_env(), "mock");
    assert_null(sched_new("pbs", NULL, &err));
    assert_string_equal(err.text, "unknown scheduler 'pbs' (expected slurm, "
                                  "flux or mock)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_states),
        cmocka_unit_test(test_resources_translation),
        cmocka_unit_test(test_time_seconds),
        cmocka_unit_test(test_resources_env),
        cmocka_unit_test(test_runscript_text_and_injection),
        cmocka_unit_test(test_log_pattern),
        cmocka_unit_test(test_batched_200),
        cmocka_unit_test(test_tracker_round_200),
        cmocka_unit_test(test_chunking_10000),
        cmocka_unit_test(test_sacct_fixture_states),
        cmocka_unit_test(test_sacct_node),
        cmocka_unit_test(test_scontrol_fallback),
        cmocka_unit_test(test_array_aggregation),
        cmocka_unit_test(test_unknown_streak),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_outage_not_unknown),
        cmocka_unit_test(test_unknown_counts_across_outage),
        cmocka_unit_test(test_deadline_and_recovery),
        cmocka_unit_test(test_submit_dropped_reply),
        cmocka_unit_test(test_submit_lost_then_retry),
        cmocka_unit_test(test_flux_status),
        cmocka_unit_test(test_flux_absurd_times),
        cmocka_unit_test(test_flux_submit_flags),
        cmocka_unit_test(test_mock_end_to_end),
        cmocka_unit_test(test_logs_capped),
        cmocka_unit_test(test_remote_jobdir),
        cmocka_unit_test(test_kind_from_env),
    };
    int rc;

    unsetenv("EXAMLOPS_HPC_POLL_INTERVAL");
    unsetenv("EXAMLOPS_SLURM_MAX_WAIT_S");
    unsetenv("EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS");
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/exa-ts-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    {
        const char *rm[] = {"rm", "-rf", tmpdir, NULL};
        struct subprocess_result res = SUBPROCESS_RESULT_INIT;
        subprocess_run(rm, NULL, &res, NULL);
        subprocess_result_release(&res);
    }
    return rc;
}
