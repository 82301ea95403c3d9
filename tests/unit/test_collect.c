/*
 * test_collect.c - the exporter's commands on real captured outputs
 * (tests/fixtures/observe/, captured on the project testbed with exactly
 * obs_slurm_nodes_argv / obs_slurm_jobs_argv while a 2-GPU job, a CPU job
 * and a pending 4-GPU job were queued) become the right metric values;
 * a source runs each command once and names the command in its errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libobserve/collect.h"
#include "libobserve/promtext.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static char *slurp(const char *path, size_t *len)
{
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        strbuf_add(&sb, buf, n);
    fclose(fp);
    return strbuf_detach(&sb, len);
}

static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p;
         p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
            return 1;
    return 0;
}

static void test_slurm_captures(void **state)
{
    struct obs_snapshot s = {0};
    struct prom_set *set = prom_set_new();
    struct strbuf out = STRBUF_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    size_t len;
    char *buf;
    (void)state;
    buf = slurp("tests/fixtures/observe/sinfo-testa.txt", &len);
    assert_int_equal(obs_parse_slurm_nodes(buf, len, &s, &err), 0);
    free(buf);
    buf = slurp("tests/fixtures/observe/squeue-testa.txt", &len);
    assert_int_equal(obs_parse_slurm_jobs(buf, len, &s, &err), 0);
    free(buf);
    assert_int_equal(s.nnodes, 1);
    assert_int_equal(s.njobs, 3);
    s.have_nodes = s.have_jobs = 1;
    obs_render_sched(set, "slurm", "testa", &s);
    prom_render(set, &out);
    assert_true(has_line(out.buf,
                         "slurm_job_info{cluster=\"testa\",job_id=\"24\","
                         "user=\"root\",account=\"research\","
                         "partition=\"debug\",state=\"RUNNING\"} 1"));
    assert_true(has_line(out.buf,
                         "slurm_node_job{cluster=\"testa\",job_id=\"24\","
                         "node=\"testa-n1\"} 1"));
    assert_true(
        has_line(out.buf, "slurm_job_gpus{cluster=\"testa\",job_id=\"24\"} 2"));
    /* job 26 is pending: its requested GPUs count in pending_gpus */
    assert_null(
        strstr(out.buf, "slurm_job_gpus{cluster=\"testa\",job_id=\"26\""));
    assert_true(has_line(out.buf, "slurm_pending_gpus{cluster=\"testa\","
                                  "partition=\"debug\",account=\"research\","
                                  "user=\"root\"} 4"));
    assert_true(has_line(out.buf,
                         "slurm_account_gpus_running{cluster=\"testa\","
                         "account=\"research\"} 2"));
    assert_true(has_line(out.buf,
                         "slurm_account_cpus_running{cluster=\"testa\","
                         "account=\"research\"} 3"));
    assert_true(has_line(out.buf,
                         "slurm_queue_pending{cluster=\"testa\",user=\"root\","
                         "partition=\"debug\",reason=\"Resources\"} 1"));
    assert_true(has_line(out.buf, "slurm_node_gres_used{cluster=\"testa\","
                                  "node=\"testa-n1\",status=\"mixed\","
                                  "partition=\"debug\"} 2"));
    assert_true(has_line(out.buf, "slurm_gpus_alloc{cluster=\"testa\"} 2"));
    assert_true(has_line(out.buf, "slurm_gpus_idle{cluster=\"testa\"} 2"));
    assert_true(has_line(out.buf, "slurm_cpus_alloc{cluster=\"testa\"} 3"));
    assert_true(has_line(out.buf, "slurm_cpus_idle{cluster=\"testa\"} 1"));
    assert_true(has_line(
        out.buf, "slurm_nodes_mix{cluster=\"testa\",partition=\"debug\"} 1"));
    assert_true(has_line(out.buf, "slurm_jobs_pending{cluster=\"testa\"} 1"));
    assert_true(has_line(out.buf, "slurm_jobs_running{cluster=\"testa\"} 2"));
    strbuf_release(&out);
    prom_set_free(set);
    obs_snapshot_free(&s);
}

/* Pending array tasks Slurm has not split yet share the array's raw id:
 * counted per task in the aggregates; pending jobs get no per-job series. */
static void test_slurm_array_capture(void **state)
{
    struct obs_snapshot s = {0};
    struct prom_set *set = prom_set_new();
    struct strbuf out = STRBUF_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    size_t len;
    char *buf;
    (void)state;
    buf = slurp("tests/fixtures/observe/squeue-testa-array.txt", &len);
    assert_int_equal(obs_parse_slurm_jobs(buf, len, &s, &err), 0);
    free(buf);
    assert_int_equal(s.njobs, 13);
    s.have_jobs = 1;
    obs_render_sched(set, "slurm", "testa", &s);
    prom_render(set, &out);
    assert_true(has_line(out.buf, "slurm_jobs_pending{cluster=\"testa\"} 9"));
    assert_true(has_line(out.buf, "slurm_jobs_running{cluster=\"testa\"} 4"));
    assert_true(has_line(out.buf,
                         "slurm_account_jobs_pending{cluster=\"testa\","
                         "account=\"research\"} 9"));
    /* pending: no per-job series, counted by partition, account, user */
    assert_null(
        strstr(out.buf, "slurm_job_info{cluster=\"testa\",job_id=\"85\""));
    assert_null(
        strstr(out.buf, "slurm_job_cpus{cluster=\"testa\",job_id=\"85\""));
    assert_true(has_line(out.buf, "slurm_pending_jobs{cluster=\"testa\","
                                  "partition=\"debug\",account=\"research\","
                                  "user=\"root\"} 9"));
    assert_true(has_line(out.buf,
                         "slurm_node_job{cluster=\"testa\",job_id=\"83\","
                         "node=\"testa-n1\"} 1"));
    assert_true(has_line(out.buf,
                         "slurm_queue_pending{cluster=\"testa\",user=\"root\","
                         "partition=\"debug\",reason=\"Priority\"} 7"));
    strbuf_release(&out);
    prom_set_free(set);
    obs_snapshot_free(&s);
}

static void test_empty_and_garbage(void **state)
{
    struct obs_snapshot s = {0};
    exa_error_t err = EXA_ERROR_INIT;
    const char *hdr = "JOBID|PARTITION|USER|ACCOUNT|STATE|CPUS|TRES_ALLOC|"
                      "NODELIST|REASON\n";
    (void)state;
    assert_int_equal(obs_parse_slurm_jobs("", 0, &s, &err), 0);
    assert_int_equal(obs_parse_slurm_jobs(hdr, strlen(hdr), &s, &err), 0);
    assert_int_equal(s.njobs, 0);
    obs_snapshot_free(&s);
}

struct runner {
    int calls;
    const char *out;
    int fail;
    char last[256];
};

static int fake_run(void *ctx, const char *const *argv, struct strbuf *out,
                    exa_error_t *err)
{
    struct runner *r = ctx;
    r->calls++;
    snprintf(r->last, sizeof(r->last), "%s %s", argv[0], argv[1]);
    if (r->fail)
        return exa_err(err, EXA_ETRANSPORT, "connection to 'login1' lost");
    strbuf_addstr(out, r->out);
    return 0;
}

static void test_source(void **state)
{
    struct runner r = {0,
                       "NODELIST|CPUS|MEMORY|GRES|GRES_USED|STATE|PARTITION\n"
                       "n1|4|8000|gpu:4|gpu:1|mixed|debug*\n",
                       0, ""};
    exa_error_t err = EXA_ERROR_INIT;
    struct obs_snapshot s = {0};
    struct obs_source *src;
    (void)state;
    assert_null(obs_source_new("m", "mock", fake_run, &r, NULL, &err));
    assert_string_equal(err.text, "no collector for scheduler 'mock' of 'm'");
    src = obs_source_new("c1", "slurm", fake_run, &r, NULL, &err);
    assert_non_null(src);
    assert_string_equal(src->node_cmd, "sinfo");
    assert_int_equal(src->nodes(src, &s, &err), 0);
    assert_int_equal(r.calls, 1);
    assert_string_equal(r.last, "sinfo -N");
    assert_int_equal(s.nnodes, 1);
    assert_int_equal(s.nodes[0].gpus_used, 1);
    r.out = "this is not squeue output at all\n";
    assert_int_equal(src->jobs(src, &s, &err), -1);
    assert_string_equal(err.text, "squeue on 'c1': squeue printed no 'JOBID|' "
                                  "header: 'this is not squeue output at all'");
    assert_int_equal(r.calls, 2);
    assert_string_equal(r.last, "squeue -a");
    r.fail = 1;
    assert_int_equal(src->jobs(src, &s, &err), -1);
    assert_string_equal(err.text, "connection to 'login1' lost");
    obs_source_free(src);
    obs_snapshot_free(&s);
}

static void test_flux(void **state)
{
    /* flux resource list (tests/cases/flux-resource, docs example) and
     * flux jobs with exa's -o format */
    const char *res = "     STATE NNODES   NCORES    NGPUS NODELIST\n"
                      "      free      1        4        2 fluke7\n"
                      " allocated      1        2        4 fluke108\n"
                      "      down      0        0        0\n";
    const char *jobs =
        "       JOBID USER     QUEUE    ST NCORES NGPUS NODELIST\n"
        "   f2TR77Ao1 alice    batch     R      2     4 fluke108\n"
        "   f3ABCdefg bob      debug     S      1     0 \n";
    struct obs_snapshot s = {0};
    struct prom_set *set = prom_set_new();
    struct strbuf out = STRBUF_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    assert_int_equal(obs_parse_flux_nodes(res, strlen(res), &s, &err), 0);
    assert_int_equal(obs_parse_flux_jobs(jobs, strlen(jobs), &s, &err), 0);
    assert_int_equal(s.nnodes, 2);
    assert_int_equal(s.njobs, 2);
    s.have_nodes = s.have_jobs = 1;
    obs_render_sched(set, "flux", "f1", &s);
    prom_render(set, &out);
    assert_true(has_line(out.buf,
                         "flux_job_info{cluster=\"f1\",job_id=\"f2TR77Ao1\","
                         "user=\"alice\",account=\"unknown\","
                         "partition=\"batch\",state=\"RUNNING\"} 1"));
    assert_true(has_line(out.buf,
                         "flux_node_job{cluster=\"f1\",job_id=\"f2TR77Ao1\","
                         "node=\"fluke108\"} 1"));
    assert_true(has_line(out.buf, "flux_gpus_total{cluster=\"f1\"} 6"));
    assert_true(has_line(out.buf, "flux_gpus_alloc{cluster=\"f1\"} 4"));
    assert_true(has_line(out.buf, "flux_jobs_pending{cluster=\"f1\"} 1"));
    assert_null(strstr(out.buf, "slurm_"));
    strbuf_release(&out);
    prom_set_free(set);
    obs_snapshot_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_captures),
        cmocka_unit_test(test_slurm_array_capture),
        cmocka_unit_test(test_empty_and_garbage),
        cmocka_unit_test(test_source),
        cmocka_unit_test(test_flux),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
