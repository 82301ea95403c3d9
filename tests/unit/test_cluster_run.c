/*
 * test_cluster_run.c - the cluster path of `exa pipeline run` over the
 * fake transport: sacct and Flux accounting (captured testbed output and
 * the Flux fixtures, known hours), and the wait -> accounting -> fetch ->
 * verify -> register half of a run (cluster_run_resume) with real
 * artifacts made by `exa train`'s own code: registered with lineage on
 * the happy path, refused with no version and no directory when a fetched
 * file does not match SHA256SUMS; the run id derived from a request.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "libfleet/governance.h"
#include "libpipeline/cluster_run.h"
#include "libpipeline/cluster_run_int.h"
#include "libpipeline/train.h"
#include "libsched/accounting.h"
#include "libstore/jobs.h"
#include "libstore/models.h"
#include "libtransport/transport.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

/* sacct -P -j 39 -o JobID,ElapsedRaw,AllocTRES,TotalCPU,Start,End,
 * Submit,NNodes,AllocCPUS on the testbed (Slurm 22.05), job 39 of testb,
 * with the steps of a two-CPU variant appended by hand for TotalCPU. */
#define SACCT_HDR                                                              \
    "JobID|ElapsedRaw|AllocTRES|TotalCPU|Start|End|Submit|"                    \
    "NNodes|AllocCPUS\n"
static const char sacct_39[] = SACCT_HDR
    "39|2|billing=1,cpu=1,gres/gpu:h100=1,gres/gpu=1,mem=500M,node=1|"
    "00:00:00|2026-11-30T02:17:05|2026-11-30T02:17:07|2026-11-30T02:17:05|1|1\n"
    "39.batch|2|cpu=1,mem=500M,node=1|00:00.679|2026-11-30T02:17:05|"
    "2026-11-30T02:17:07|2026-11-30T02:17:05|1|1\n";

static const char sacct_typed[] =
    SACCT_HDR "123|7200|billing=8,cpu=8,gres/gpu:a100=2,gres/gpu:v100=1,node=2|"
              "1-02:03:04|2026-01-01T10:10:00|2026-01-01T12:10:00|2026-01-"
              "01T10:00:00|2|8\n";

/* A job cancelled while pending has no allocation: its accounting line
 * says "unknown", never "-1 GPU(s)". */
static void test_acct_line_unknown(void **state)
{
    struct sched_acct a;
    struct strbuf sb = STRBUF_INIT;
    (void)state;
    sched_acct_init(&a);
    cluster_run_acct_line(&a, &sb);
    assert_string_equal(sb.buf,
                        "queue time unknown, run time unknown, GPUs unknown, "
                        "CPUs unknown: GPU-h unknown, CPU-h unknown");
    assert_null(strstr(sb.buf, "-1"));
    strbuf_reset(&sb);
    a.queue_seconds = 12;
    a.run_seconds = 30;
    a.gpus = 1;
    a.cpus = 4;
    a.gpu_hours = 30.0 / 3600;
    a.cpu_hours = 120.0 / 3600;
    cluster_run_acct_line(&a, &sb);
    assert_string_equal(sb.buf, "12 s queued, 30 s run, 1 GPU(s), 4 CPU(s): "
                                "0.0083 GPU-h, 0.0333 CPU-h");
    strbuf_release(&sb);
}

static void test_sacct_parse(void **state)
{
    struct sched_acct a;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    assert_int_equal(
        sched_acct_parse_sacct(sacct_39, strlen(sacct_39), "39", &a, &err), 0);
    assert_true(a.run_seconds == 2.0);
    assert_true(a.queue_seconds == 0.0);
    assert_int_equal(a.gpus, 1); /* untyped total, not 1 + 1 */
    assert_int_equal(a.cpus, 1);
    assert_int_equal(a.nodes, 1);
    /* allocation line says 0: the steps' TotalCPU is used */
    assert_true(fabs(a.cpu_seconds - 0.679) < 1e-9);
    assert_true(fabs(a.gpu_hours - 2.0 / 3600) < 1e-12);
    assert_true(fabs(a.cpu_hours - 2.0 / 3600) < 1e-12);
    assert_string_equal(a.start, "2026-11-30T02:17:05Z");
    assert_string_equal(a.end, "2026-11-30T02:17:07Z");

    assert_int_equal(sched_acct_parse_sacct(sacct_typed, strlen(sacct_typed),
                                            "123", &a, &err),
                     0);
    assert_int_equal(a.gpus, 3); /* typed entries summed without a total */
    assert_true(a.queue_seconds == 600.0);
    assert_true(a.run_seconds == 7200.0);
    assert_true(fabs(a.gpu_hours - 6.0) < 1e-12);
    assert_true(fabs(a.cpu_hours - 16.0) < 1e-12);
    assert_true(a.cpu_seconds == 93784.0);

    assert_int_equal(
        sched_acct_parse_sacct(sacct_39, strlen(sacct_39), "3", &a, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
}

static void test_accounting_over_transport(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_acct a;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    transport_fake_add(t, "sacct -P -j 39 -o *", sacct_39, "", 0, 0, 0);
    s = sched_new("slurm", t, &err);
    assert_non_null(s);
    assert_int_equal(sched_accounting(s, "39", 1, &a, &err), 0);
    assert_true(a.run_seconds == 2.0);
    assert_int_equal(a.gpus, 1);
    /* the command ran on the cluster's transport, not locally */
    assert_int_equal(transport_fake_count(t, "sacct -P -j 39 *"), 1);
    sched_free(s);
    transport_close(t);

    t = transport_fake_new();
    assert_int_equal(
        transport_fake_add_file(t, "flux job info 77 eventlog",
                                "tests/fixtures/flux/acct-eventlog.txt", 0, 0),
        0);
    assert_int_equal(transport_fake_add_file(t, "flux job info 77 R",
                                             "tests/fixtures/flux/acct-R.json",
                                             0, 0),
                     0);
    s = sched_new("flux", t, &err);
    assert_non_null(s);
    assert_int_equal(sched_accounting(s, "77", 1, &a, &err), 0);
    assert_int_equal(a.nodes, 3);
    assert_int_equal(a.cpus, 120);
    assert_int_equal(a.gpus, 10);
    assert_true(fabs(a.queue_seconds - 60.0) < 1e-6);
    assert_true(fabs(a.run_seconds - 7200.0) < 1e-6);
    assert_true(fabs(a.gpu_hours - 20.0) < 1e-9);
    assert_true(fabs(a.cpu_hours - 240.0) < 1e-9);
    sched_free(s);
    transport_close(t);
}

struct env {
    char *dir, *db, *reg, *root, *art;
    store_t *st;
};

#define REMOTE "/home/alice/.local/share/examlops/jobs/0123456789ab"

static int setup(void **state)
{
    struct env *e = xcalloc(1, sizeof(*e));
    struct gov_connect_req q = {0};
    struct gov_result gr;
    struct train_request tr = {0};
    struct trained_model tm;
    struct job_rec j;
    char sha[65];
    exa_error_t err = EXA_ERROR_INIT;

    e->dir = tu_mkdtemp();
    e->db = xstrfmt("%s/platform.db", e->dir);
    e->reg = xstrfmt("%s/clusters.yaml", e->dir);
    e->root = xstrfmt("%s/models", e->dir);
    e->art = xstrfmt("%s/art", e->dir);
    e->st = store_open(e->db, &err);
    assert_non_null(e->st);
    q.name = "testa";
    q.scheduler = "slurm";
    q.transport = "ssh";
    q.host = "login1";
    q.ssh_user = "alice";
    q.ssh_port = 2222;
    assert_int_equal(gov_connect(e->st, e->reg, &q, "root", &gr, &err), 0);
    assert_int_equal(
        gov_approve(e->st, e->reg, "testa", NULL, "ops", &gr, &err), 0);
    /* what `exa train` writes on the compute node */
    tr.model = "JPCP";
    tr.dataset = "PM100Dataset";
    tr.dataset_path = "data/pm100-sample.csv";
    tr.dummy = 1;
    assert_int_equal(pipeline_train_to_dir(&tr, e->art, &tm, sha, &err), 0);
    trained_model_release(&tm);
    /* the row cluster_run records after sbatch */
    job_rec_init(&j);
    j.cluster = "testa";
    j.scheduler = "slurm";
    j.job_id = "39";
    j.run_uuid = "0123456789ab";
    j.model = "JPCP";
    j.dataset = "PM100Dataset";
    j.remote_dir = REMOTE;
    j.submit_time = "2026-11-30T02:17:05Z";
    j.gpus = 1;
    assert_int_equal(store_job_insert(e->st, &j, NULL, &err), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    store_close(e->st);
    tu_rmtree(e->dir);
    free(e->dir);
    free(e->db);
    free(e->reg);
    free(e->root);
    free(e->art);
    free(e);
    return 0;
}

/* A fake cluster: job 39 COMPLETED, its accounting, its artifacts. */
static struct transport *fake_cluster(struct env *e, const char *tamper)
{
    static const char *const files[] = {"SHA256SUMS", "model.json",
                                        "encoders.json", "metrics.json"};
    struct transport *t = transport_fake_new();
    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    transport_fake_add(t, "sacct -X --parsable2 --delimiter=*",
                       "JobID\037State\037ExitCode\037Submit\037Start\037End"
                       "\037ElapsedRaw\037AllocTRES\n"
                       "39\x1f"
                       "COMPLETED\x1f"
                       "0:0\x1f"
                       "2026-11-30T02:17:05\x1f"
                       "2026-11-30T02:17:05\x1f"
                       "2026-11-30T02:17:07\x1f"
                       "2\x1f"
                       "billing=1,cpu=1,gres/gpu=1,node=1\n",
                       "", 0, 0, 0);
    transport_fake_add(t, "sacct -P -j 39 -o *", sacct_39, "", 0, 0, 0);
    for (size_t i = 0; i < 4; i++) {
        char *p = xstrfmt("%s/%s", e->art, files[i]);
        char *rp = xstrfmt("%s/out/%s", REMOTE, files[i]);
        size_t len;
        char *data = tu_read_file(p, &len);
        if (tamper && !strcmp(files[i], tamper))
            data[len / 2] ^= 1;
        transport_fake_set_file(t, rp, data, len);
        free(data);
        free(rp);
        free(p);
    }
    return t;
}

static void test_resume_registers(void **state)
{
    struct env *e = *state;
    struct transport *t = fake_cluster(e, NULL);
    struct cluster_run_result res;
    struct model_version *mv = NULL;
    struct job_rec j;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    char *p;

    setenv("TZ", "UTC", 1);
    tzset();
    setenv("EXAMLOPS_HPC_POLL_INTERVAL", "0.01", 1);
    assert_int_equal(cluster_run_pending(e->db, "testa", "39", &err), 1);
    assert_int_equal(cluster_run_resume(e->db, e->reg, e->root, "testa", "39",
                                        t, NULL, &res, &err),
                     0);
    assert_int_equal(res.registered, 1);
    assert_int_equal(res.mv.version, 1);
    cluster_run_result_release(&res);

    assert_int_equal(store_model_versions(e->st, "JPCP", 0, &mv, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(mv[0].cluster, "testa");
    assert_string_equal(mv[0].scheduler, "slurm");
    assert_string_equal(mv[0].job_id, "39");
    assert_string_equal(mv[0].run_uuid, "0123456789ab");
    assert_string_equal(mv[0].dataset, "PM100Dataset");
    assert_int_equal(mv[0].train_rows, 50);
    assert_int_equal(mv[0].val_rows, 50);
    p = xstrfmt("%s/JPCP/1", e->root);
    assert_string_equal(mv[0].artifact_path, p);
    free(p);
    p = xstrfmt("%s/JPCP/1/model.json", e->root);
    assert_int_equal(access(p, R_OK), 0);
    free(p);
    model_version_free_list(mv, n);

    assert_int_equal(store_job_get(e->st, "testa", "39", &j, &err), 0);
    assert_string_equal(j.state, "COMPLETED");
    assert_int_equal(j.exit_code, 0);
    assert_int_equal(j.model_version, 1);
    assert_true(j.run_seconds == 2.0);
    assert_true(j.queue_seconds == 0.0);
    assert_int_equal(j.gpus, 1);
    assert_true(fabs(j.gpu_hours - 2.0 / 3600) < 1e-12);
    job_rec_release(&j);
    /* registered: not pending any more */
    assert_int_equal(cluster_run_pending(e->db, "testa", "39", &err), 0);
    transport_close(t);
}

static void test_checksum_mismatch_refused(void **state)
{
    struct env *e = *state;
    struct transport *t = fake_cluster(e, "model.json");
    struct cluster_run_result res;
    struct model_version *mv = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    char *p;

    setenv("EXAMLOPS_HPC_POLL_INTERVAL", "0.01", 1);
    assert_int_equal(cluster_run_resume(e->db, e->reg, e->root, "testa", "39",
                                        t, NULL, &res, &err),
                     -1);
    assert_int_equal(err.code, EXA_EFAIL);
    assert_non_null(strstr(err.text, "checksum mismatch for 'model.json'"));
    assert_int_equal(res.registered, 0);
    cluster_run_result_release(&res);
    assert_int_equal(store_model_versions(e->st, "JPCP", 0, &mv, &n, &err), 0);
    assert_int_equal(n, 0);
    /* nothing left behind: no version directory, no staging directory */
    p = xstrfmt("%s/JPCP", e->root);
    assert_int_equal(tu_count_entries(p), 0);
    free(p);
    /* the run stays resumable once the artifacts are right */
    assert_int_equal(cluster_run_pending(e->db, "testa", "39", &err), 1);
    transport_close(t);
}

/* The run id: SHA-256 of the documented text, first 12 hex digits. */
static void test_run_id(void **state)
{
    struct sched_resources r = SCHED_RESOURCES_INIT;
    struct cluster_run_request req;
    char id[CLUSTER_RUN_ID_LEN + 1], again[CLUSTER_RUN_ID_LEN + 1];
    char other[CLUSTER_RUN_ID_LEN + 1], want[CLUSTER_RUN_ID_LEN + 1];
    static const char text[] = "exa pipeline run v1\n"
                               "model=4:JPCP\n"
                               "dataset=12:PM100Dataset\n"
                               "dataset_path=15:/data/pm100.csv\n"
                               "stage_dataset=0\n"
                               "dummy=1\n"
                               "threads=0\n"
                               "cluster=5:testa\n"
                               "user=5:alice\n"
                               "workdir=-\n"
                               "partition=5:debug\n"
                               "qos=-\n"
                               "account=8:research\n"
                               "constraint=-\n"
                               "time=-\n"
                               "mem=-\n"
                               "job_name=-\n"
                               "array=-\n"
                               "nodes=0\n"
                               "ntasks=0\n"
                               "cpus_per_task=0\n"
                               "gpus=1\n"
                               "hold=0\n";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    (void)state;

    unsetenv("EXAMLOPS_HPC_REMOTE_WORKDIR");
    unsetenv("EXAMLOPS_HPC_WORKDIR");
    EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL);
    for (int i = 0; i < CLUSTER_RUN_ID_LEN / 2; i++)
        snprintf(want + 2 * i, 3, "%02x", md[i]);
    memset(&req, 0, sizeof(req));
    req.model = "jpcp"; /* the zoo name counts, not the spelling */
    req.dataset = "PM100Dataset";
    req.dataset_path = "/data/pm100.csv";
    req.dummy = 1;
    req.cluster = "testa";
    req.run_id = "ignored";
    r.partition = "debug";
    r.account = "research";
    r.gpus = 1;
    cluster_run_id(&req, &r, "alice", id);
    assert_int_equal(strlen(id), CLUSTER_RUN_ID_LEN);
    assert_string_equal(id, want);
    cluster_run_id(&req, &r, "alice", again);
    assert_string_equal(again, id);
    /* each part of the ask changes it */
    cluster_run_id(&req, &r, "bob", other);
    assert_string_not_equal(other, id);
    req.cluster = "testb";
    cluster_run_id(&req, &r, "alice", other);
    assert_string_not_equal(other, id);
    req.cluster = "testa";
    r.gpus = 2;
    cluster_run_id(&req, &r, "alice", other);
    assert_string_not_equal(other, id);
    r.gpus = 1;
    req.dummy = 0;
    cluster_run_id(&req, &r, "alice", other);
    assert_string_not_equal(other, id);
    req.dummy = 1;
    /* --via worker is another run of the same ask (the batch id above is
     * the text without a via line) */
    req.via_worker = 1;
    cluster_run_id(&req, &r, "alice", other);
    assert_string_not_equal(other, id);
    req.via_worker = 0;
    /* a value cannot run into the next key: "debug" + no qos differs
     * from "debu" + qos "g" */
    r.partition = "debu";
    r.qos = "g";
    cluster_run_id(&req, &r, "alice", other);
    assert_string_not_equal(other, id);
    r.partition = "debug";
    r.qos = NULL;
    cluster_run_id(&req, &r, "alice", other);
    assert_string_equal(other, id);
    /* another job directory base is another run */
    setenv("EXAMLOPS_HPC_WORKDIR", "/scratch/alice", 1);
    cluster_run_id(&req, &r, "alice", other);
    assert_string_not_equal(other, id);
    setenv("EXAMLOPS_HPC_REMOTE_WORKDIR", "/scratch/alice", 1);
    cluster_run_id(&req, &r, "alice", again);
    assert_string_equal(again, other); /* the value counts, not the name */
    unsetenv("EXAMLOPS_HPC_REMOTE_WORKDIR");
    unsetenv("EXAMLOPS_HPC_WORKDIR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_id),
        cmocka_unit_test(test_sacct_parse),
        cmocka_unit_test(test_acct_line_unknown),
        cmocka_unit_test(test_accounting_over_transport),
        cmocka_unit_test_setup_teardown(test_resume_registers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checksum_mismatch_refused, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
