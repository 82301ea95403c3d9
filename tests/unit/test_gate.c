/*
 * Tests for libfleet/gate.c and libsched/jobid.c: the job id grammar of
 * each scheduler, the pinned host key's fingerprint (values from
 * `ssh-keygen -lf`), the env target's registered name, the ACTIVE check in
 * the job-insert transaction, the jobs-table cluster lookup, and the
 * refusal of a pinned key that does not match the approval (before any
 * connection is made).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "libfleet/gate.h"
#include "libsched/jobid.h"
#include "libstore/hostkeys.h"
#include "testutil.h"
#include "libutil/xalloc.h"

/* ssh-keygen -q -t ed25519 / -t rsa -b 1024, and `ssh-keygen -lf` of each */
#define ED_KEY                                                                 \
    "ssh-ed25519 "                                                             \
    "AAAAC3NzaC1lZDI1NTE5AAAAIP8lPvcgpoYFNogrHDJtrng+ind6KErg1BT5P4K0+d4G"
#define ED_FPR "SHA256:yimH4Lj9dfbOVk0Frd0JokZjQzKXwJBLPYnSbbcnAlQ"
#define RSA_KEY                                                                \
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDBAO3Qs1S/ur4hZfo8OJH20wf7FaZL4lg4" \
    "ea4NXMPjq4Fh22eaG7WwZ/YxU572b4FgX/tKV5AiSGHFrogZ68LkMAF2K71d6jB3AKicZl5d" \
    "nHASMvtDvWPDH6u6B1KmXtlP1z6FhpLtPZNvNn36DtqWafvFnTW7b4FAZfPMuXCooQ=="
#define RSA_FPR "SHA256:f2skKAbV1qnIWhsZUFQjYd5b+vF353iJcnOyh8i7smw"

struct id_case {
    const char *kind, *id;
    int ok;
};

static const struct id_case id_cases[] = {
    {"slurm", "123", 1},
    {"slurm", "123_4", 1},
    {"slurm", "123_[1-5]", 1},
    {"slurm", "123_[1-5%2]", 1},
    {"slurm", "123_[1,3,5-7]", 1},
    {"slurm", "93+0", 1},
    {"slurm", "4294967295", 1},
    {"slurm", "12345678901", 0}, /* 11 digits */
    {"slurm", "--user=root", 0},
    {"slurm", "-1", 0},
    {"slurm", "1,2", 0},
    {"slurm", "1 2", 0},
    {"slurm", "123_", 0},
    {"slurm", "123_[1-5", 0},
    {"slurm", "123_[]", 0},
    {"slurm", "123_[1-5%]", 0},
    {"slurm", "123_[1-5]x", 0},
    {"slurm", "93+", 0},
    {"slurm", "1;touch x", 0},
    {"slurm", "", 0},
    {"slurm",
     "\xc6\x92"
     "2TR77Ao1",
     0},
    {"flux",
     "\xc6\x92"
     "2TR77Ao1",
     1},
    {"flux", "f2TR77Ao1", 1},
    {"flux", "123456789012345678", 1},
    {"flux", "f2TR0Ao1", 0}, /* 0 is not base58 */
    {"flux", "f2TRlAo1", 0}, /* nor l */
    {"flux", "f", 0},
    {"flux", "--all", 0},
    {"flux", "123_4", 0},
    {"mock", "mock-3f9c0a1b2c3d", 1},
    {"mock", "mock-", 0},
    {"mock", "mock-a;b", 0},
    {"mock", "123", 0},
    {NULL, "123_[1-5%2]", 1},
    {NULL,
     "\xc6\x92"
     "2TR77Ao1",
     1},
    {NULL, "mock-999", 1},
    {NULL, "--user=root", 0},
    {NULL, "-f", 0},
};

static void test_job_id_grammar(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(id_cases) / sizeof(id_cases[0]); i++) {
        exa_error_t err = EXA_ERROR_INIT;
        int rc = sched_job_id_check(id_cases[i].kind, id_cases[i].id, &err);
        if ((rc == 0) != id_cases[i].ok)
            fail_msg("%s id '%s': got %d (%s)",
                     id_cases[i].kind ? id_cases[i].kind : "any",
                     id_cases[i].id, rc, err.text);
        if (!id_cases[i].ok)
            assert_int_equal(err.code, EXA_EUSAGE);
    }
}

static void test_job_id_message(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    char big[200];
    (void)state;
    assert_int_equal(sched_job_id_check("slurm", "--user=root", &err), -1);
    assert_string_equal(err.text, "invalid slurm job id '--user=root' "
                                  "(expected 123, 123_4, 123_[1-5%2] or 93+0)");
    assert_int_equal(sched_job_id_check("pbs", "1", &err), -1);
    assert_string_equal(err.text, "unknown scheduler 'pbs'");
    memset(big, '1', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(sched_job_id_check(NULL, big, &err), -1);
    assert_int_equal(sched_job_id_check("flux", big + 180, &err), 0);
}

static void test_env_name(void **state)
{
    char *s;
    (void)state;
    s = gate_env_name("slurm", "ssh", "127.0.0.1", 2222);
    assert_string_equal(s, "env-slurm-127.0.0.1-2222");
    free(s);
    s = gate_env_name("flux", "local", NULL, 0);
    assert_string_equal(s, "env-flux-local");
    free(s);
    s = gate_env_name("slurm", "ssh", "a b/c:d", 0);
    assert_string_equal(s, "env-slurm-a-b-c-d-22");
    free(s);
    s = gate_env_name("slurm", "ssh",
                      "h0123456789h0123456789h0123456789h0123456789h0123456789",
                      22);
    assert_int_equal(strlen(s), 63);
    free(s);
}

static char *dir;

static int setup(void **state)
{
    char *p;
    (void)state;
    dir = tu_mkdtemp();
    p = xstrfmt("%s/cfg", dir);
    setenv("XDG_CONFIG_HOME", p, 1);
    free(p);
    p = xstrfmt("%s/platform.db", dir);
    setenv("EXAMLOPS_DB", p, 1);
    free(p);
    p = xstrfmt("%s/clusters.yaml", dir);
    setenv("EXAMLOPS_HPC_REGISTRY", p, 1);
    free(p);
    setenv("HOME", dir, 1);
    setenv("EXAMLOPS_ACTOR", "unit", 1);
    unsetenv("EXAMLOPS_HPC_SCHEDULER");
    unsetenv("EXAMLOPS_SLURM_MODE");
    unsetenv("EXAMLOPS_HPC_CLUSTER");
    unsetenv("EXAMLOPS_HPC_TRANSPORT");
    unsetenv("EXAMLOPS_HPC_SSH_HOST");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(dir);
    free(dir);
    return 0;
}

static void pin(const char *cluster, const char *text)
{
    char *d = xstrfmt("%s/cfg/examlops/known_hosts.d", dir);
    char *p = xstrfmt("%s/%s", d, cluster);
    char *c = xstrfmt("%s/cfg/examlops", dir);
    char *cfg = xstrfmt("%s/cfg", dir);
    mkdir(cfg, 0700);
    mkdir(c, 0700);
    mkdir(d, 0700);
    tu_write_file(p, text);
    free(d);
    free(p);
    free(c);
    free(cfg);
}

static void test_pinned_fingerprint(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    char *f;
    (void)state;
    /* the ed25519 key wins over a first rsa line, as ssh would offer it */
    pin("a", "# pinned\n[127.0.0.1]:2222 " RSA_KEY "\n[127.0.0.1]:2222 " ED_KEY
             "\n");
    f = gate_pinned_fingerprint("a", &err);
    assert_non_null(f);
    assert_string_equal(f, ED_FPR);
    free(f);
    pin("b", "[127.0.0.1]:2222 " RSA_KEY "\n");
    f = gate_pinned_fingerprint("b", &err);
    assert_non_null(f);
    assert_string_equal(f, RSA_FPR);
    free(f);
    assert_null(gate_pinned_fingerprint("nosuch", &err));
    assert_int_equal(err.code, EXA_ENOTFOUND);
    pin("c", "# nothing\n");
    assert_null(gate_pinned_fingerprint("c", &err));
    assert_int_equal(err.code, EXA_EPARSE);
}

/* A pin may hold only the approved key: gate_host_key_lines() keeps the
 * lines of one fingerprint (comments, blanks and @revoked lines skipped),
 * gate_check_host_key() refuses a file with any other key in it. */
static void test_host_key_lines(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    struct fleet_cluster c;
    const char *scan = "# 127.0.0.1:2222 SSH-2.0-OpenSSH_9.2\n"
                       "[127.0.0.1]:2222 " RSA_KEY "\n\n"
                       "@revoked * " RSA_KEY "\n"
                       "[127.0.0.1]:2222 " ED_KEY "\n";
    (void)state;
    assert_int_equal(gate_host_key_lines(scan, ED_FPR, &sb), 0);
    assert_string_equal(sb.buf, "[127.0.0.1]:2222 " ED_KEY "\n");
    strbuf_reset(&sb);
    assert_int_equal(gate_host_key_lines(scan, RSA_FPR, &sb), 0);
    assert_string_equal(sb.buf, "[127.0.0.1]:2222 " RSA_KEY "\n");
    strbuf_reset(&sb);
    assert_int_equal(gate_host_key_lines(scan, "SHA256:nope", &sb), -1);
    assert_int_equal((int)sb.len, 0);
    strbuf_release(&sb);

    memset(&c, 0, sizeof(c));
    c.def.name = "k";
    c.def.host = "127.0.0.1";
    c.def.transport = "ssh";
    c.def.ssh_port = 2222;
    c.row.host_key_fingerprint = ED_FPR;
    pin("k", "[127.0.0.1]:2222 " ED_KEY "\n@revoked * " RSA_KEY "\n");
    assert_int_equal(gate_check_host_key(NULL, &c, &err), 0);
    /* the approved ed25519 key first, another key after it: refused,
     * naming the other one */
    pin("k", "[127.0.0.1]:2222 " ED_KEY "\n[127.0.0.1]:2222 " RSA_KEY "\n");
    assert_int_equal(gate_check_host_key(NULL, &c, &err), -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_non_null(strstr(err.text,
                           "was approved with " ED_FPR
                           " but the pinned known_hosts holds " RSA_FPR));
}

/* Register name over ssh with the approved host key fpr; approve when
 * active. */
static void add_cluster(store_t *st, const char *name, const char *fpr,
                        int active)
{
    struct gov_connect_req q = {0};
    exa_error_t err = EXA_ERROR_INIT;
    char *reg = xstrfmt("%s/clusters.yaml", dir);
    q.name = name;
    q.scheduler = "slurm";
    q.transport = "ssh";
    q.host = "127.0.0.1";
    q.ssh_user = "root";
    q.ssh_port = 2222;
    q.host_key_fingerprint = fpr;
    if (gov_connect(st, reg, &q, "unit", NULL, &err) < 0)
        fail_msg("connect %s: %s", name, err.text);
    if (active && gov_approve(st, reg, name, NULL, "unit", NULL, &err) < 0)
        fail_msg("approve %s: %s", name, err.text);
    free(reg);
}

/* The audit binding in the job's own transaction: a row changed behind
 * exa's back after the gate looked gets no job row. */
static int verify_cb(store_t *st, const struct cluster_row *row, void *arg,
                     exa_error_t *err)
{
    (void)arg;
    return governance_verify_cluster(st, row, err);
}

static void test_insert_checked_binding(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = store_open(NULL, &err);
    struct job_rec j, got;
    long long id = 0;
    (void)state;
    assert_non_null(st);
    add_cluster(st, "act", NULL, 1);
    job_rec_init(&j);
    j.scheduler = "slurm";
    j.job_id = "7";
    j.cluster = "act";
    assert_int_equal(
        store_job_insert_checked(st, &j, verify_cb, NULL, &id, &err), 0);
    assert_int_equal(store_exec(st,
                                "UPDATE clusters SET host='10.9.9.9' "
                                "WHERE name='act'",
                                &err),
                     0);
    j.job_id = "8";
    assert_int_equal(
        store_job_insert_checked(st, &j, verify_cb, NULL, &id, &err), -1);
    assert_int_equal(err.code, EXA_ENOTAPPROVED);
    assert_string_equal(err.text,
                        "cluster 'act' does not match its audit chain: the "
                        "row's identity differs from what its latest audit "
                        "event (2, cluster_approved) recorded; it is treated "
                        "as PENDING ('exa hpc audit --verify')");
    assert_int_equal(store_job_get(st, "act", "8", &got, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    /* the unchecked form only looks at the state */
    assert_int_equal(store_job_insert_active(st, &j, &id, &err), 0);
    store_close(st);
}

static void test_insert_active(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = store_open(NULL, &err);
    struct job_rec j;
    long long id = 0;
    (void)state;
    assert_non_null(st);
    add_cluster(st, "pend", NULL, 0);
    add_cluster(st, "act", NULL, 1);
    job_rec_init(&j);
    j.scheduler = "slurm";
    j.job_id = "42";
    j.cluster = "pend";
    assert_int_equal(store_job_insert_active(st, &j, &id, &err), -1);
    assert_int_equal(err.code, EXA_ENOTAPPROVED);
    assert_string_equal(err.text, "cluster 'pend' is PENDING: job 42 is not "
                                  "recorded ('exa hpc approve pend')");
    j.cluster = "nosuch";
    assert_int_equal(store_job_insert_active(st, &j, &id, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    j.cluster = "act";
    assert_int_equal(store_job_insert_active(st, &j, &id, &err), 0);
    assert_true(id > 0);
    /* a retried submission updates the same row */
    j.state = "RUNNING";
    {
        long long id2 = 0;
        struct job_rec got;
        assert_int_equal(store_job_insert_active(st, &j, &id2, &err), 0);
        assert_int_equal(id2, id);
        assert_int_equal(store_job_get(st, "act", "42", &got, &err), 0);
        assert_string_equal(got.state, "RUNNING");
        job_rec_release(&got);
    }
    /* nothing was written for the PENDING cluster, and no transaction is
     * left open */
    {
        struct job_rec got;
        assert_int_equal(store_job_get(st, "pend", "42", &got, &err), -1);
        assert_int_equal(err.code, EXA_ENOTFOUND);
        assert_int_equal(store_begin(st, &err), 0);
        store_rollback(st);
    }
    /* the same id on a second cluster: the lookup is ambiguous */
    j.cluster = "other";
    j.state = NULL;
    assert_int_equal(store_job_insert(st, &j, NULL, &err), 0);
    {
        char *c = NULL, *k = NULL;
        assert_int_equal(gate_job_cluster(st, "42", NULL, &c, &k, &err), -1);
        assert_int_equal(err.code, EXA_EUSAGE);
        assert_string_equal(err.text, "job id '42' is recorded on several "
                                      "clusters (act, other): pass --cluster");
        assert_int_equal(gate_job_cluster(st, "42", "act", &c, &k, &err), 0);
        assert_string_equal(c, "act");
        assert_string_equal(k, "slurm");
        free(c);
        free(k);
        assert_int_equal(gate_job_cluster(st, "7", NULL, &c, &k, &err), 0);
        assert_null(c);
        assert_null(k);
    }
    store_close(st);
}

/* gate_recheck_active: in the caller's transaction, a cluster that left
 * ACTIVE (or whose row no longer matches its audit chain) after the gate
 * opened refuses, so nothing is recorded for it. */
static void test_recheck_active(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = store_open(NULL, &err);
    struct gate_req req = {0};
    struct gate *g;
    (void)state;
    assert_non_null(st);
    {
        /* a local-transport cluster: no host is asked */
        struct gov_connect_req q = {0};
        char *reg = xstrfmt("%s/clusters.yaml", dir);
        q.name = "act3";
        q.scheduler = "slurm";
        q.transport = "local";
        if (gov_connect(st, reg, &q, "unit", NULL, &err) < 0 ||
            gov_approve(st, reg, "act3", NULL, "unit", NULL, &err) < 0)
            fail_msg("connect act3: %s", err.text);
        free(reg);
    }
    req.cluster = "act3";
    req.purpose = GATE_SCHEDULE;
    req.st = st;
    g = gate_open(&req, &err);
    if (!g)
        fail_msg("gate_open: %s", err.text);
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(gate_recheck_active(g, &err), 0);
    store_rollback(st);
    assert_int_equal(
        store_exec(st,
                   "UPDATE clusters SET ssh_user='mallory' WHERE name='act3'",
                   &err),
        0);
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(gate_recheck_active(g, &err), -1);
    assert_int_equal(err.code, EXA_ENOTAPPROVED);
    store_rollback(st);
    assert_int_equal(store_exec(st,
                                "UPDATE clusters SET state='PENDING' WHERE "
                                "name='act3'",
                                &err),
                     0);
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(gate_recheck_active(g, &err), -1);
    assert_int_equal(err.code, EXA_ENOTAPPROVED);
    assert_string_equal(err.text, "cluster 'act3' is PENDING: nothing is "
                                  "recorded ('exa hpc approve act3')");
    store_rollback(st);
    gate_close(g);
    store_close(st);
}

static void test_open_refuses_mismatch(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = store_open(NULL, &err);
    struct gate_req req = {0};
    struct hostkey_mismatch m;
    char name[64] = "";
    struct gate *g;
    (void)state;
    assert_non_null(st);
    add_cluster(st, "keyed", ED_FPR, 1);
    pin("keyed", "[127.0.0.1]:2222 " RSA_KEY "\n");
    req.cluster = "keyed";
    req.purpose = GATE_READ;
    req.st = st;
    req.cluster_out = name;
    req.cluster_out_len = sizeof(name);
    g = gate_open(&req, &err);
    assert_null(g);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_string_equal(err.text,
                        "host key for '127.0.0.1' changed: cluster 'keyed' was "
                        "approved with " ED_FPR " but the pinned known_hosts "
                        "holds " RSA_FPR);
    assert_string_equal(name, "keyed");
    assert_int_equal(store_hostkey_mismatch_get(st, "keyed", &m, &err), 1);
    assert_string_equal(m.approved, ED_FPR);
    assert_string_equal(m.seen, RSA_FPR);
    hostkey_mismatch_release(&m);
    /* scheduling is refused the same way, before approval is looked at */
    req.purpose = GATE_SCHEDULE;
    assert_null(gate_open(&req, &err));
    assert_int_equal(err.code, EXA_ETRANSPORT);
    /* PENDING refuses scheduling with exit 6 */
    add_cluster(st, "pend2", NULL, 0);
    req.cluster = "pend2";
    assert_null(gate_open(&req, &err));
    assert_int_equal(err.code, EXA_ENOTAPPROVED);
    req.cluster = "nosuch";
    assert_null(gate_open(&req, &err));
    assert_int_equal(err.code, EXA_ENOTFOUND);
    /* mock mode: nothing named, no registration needed */
    req.cluster = NULL;
    req.use_env = 1;
    g = gate_open(&req, &err);
    assert_non_null(g);
    assert_string_equal(gate_name(g), "default");
    assert_string_equal(gate_scheduler(g), "mock");
    assert_int_equal(gate_is_mock(g), 1);
    gate_close(g);
    store_close(st);
}

/* The one status writer: a terminal state brings the scheduler's
 * accounting onto the row (a job submitted by anyone); a running one only
 * its state; an unknown one nothing. */
static void test_record_status(void **state)
{
    static const char sacct[] = /* sacct -P -j 42 -o ... (accounting.h) */
        "JobID|ElapsedRaw|AllocTRES|TotalCPU|Start|End|Submit|NNodes|"
        "AllocCPUS\n"
        "42|600|billing=2,cpu=2,gres/gpu=3,mem=1G,node=1|00:09:30|"
        "2026-12-01T10:00:00|2026-12-01T10:10:00|2026-12-01T09:58:00|1|2\n"
        "42.batch|600||00:09:30|2026-12-01T10:00:00|2026-12-01T10:10:00|"
        "2026-12-01T10:00:00|1|2\n";
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = store_open(NULL, &err);
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_job j;
    struct sched_acct a;
    struct job_rec r;
    (void)state;
    setenv("TZ", "UTC", 1);
    assert_non_null(st);
    transport_fake_add(t, "sacct -P -j 42 -o *", sacct, "", 0, 0, 0);
    s = sched_new("slurm", t, &err);
    job_rec_init(&r);
    r.cluster = "c1";
    r.scheduler = "slurm";
    r.job_id = "42";
    r.kind = "batch";
    assert_int_equal(store_job_insert(st, &r, NULL, &err), 0);

    sched_job_init(&j, "42");
    j.state = SCHED_RUNNING;
    assert_int_equal(gate_record_status(st, s, "c1", &j, 1, &a, &err), 0);
    assert_int_equal(transport_fake_count(t, "sacct *"), 0);
    assert_int_equal(store_job_get(st, "c1", "42", &r, &err), 0);
    assert_string_equal(r.state, "RUNNING");
    assert_true(isnan(r.gpu_hours));
    job_rec_release(&r);

    j.state = SCHED_COMPLETED;
    j.exit_code = 0;
    assert_int_equal(gate_record_status(st, s, "c1", &j, 1, &a, &err), 1);
    assert_int_equal(store_job_get(st, "c1", "42", &r, &err), 0);
    assert_string_equal(r.state, "COMPLETED");
    assert_int_equal(r.exit_code, 0);
    assert_true(r.run_seconds == 600.0);
    assert_true(r.queue_seconds == 120.0);
    assert_int_equal(r.gpus, 3);
    assert_int_equal(r.cpus, 2);
    assert_true(fabs(r.gpu_hours - 0.5) < 1e-12); /* 3 x 600 s */
    assert_true(fabs(r.cpu_hours - 1.0 / 3.0) < 1e-12);
    assert_string_equal(r.start_time, "2026-12-01T10:00:00Z");
    job_rec_release(&r);

    /* not recorded, or unknown: nothing written, not an error */
    sched_job_init(&j, "43");
    j.state = SCHED_FAILED;
    assert_int_equal(gate_record_status(st, NULL, "c1", &j, 1, NULL, &err), 0);
    sched_job_init(&j, "42");
    assert_int_equal(gate_record_status(st, s, "c1", &j, 1, NULL, &err), 0);
    assert_int_equal(store_job_get(st, "c1", "42", &r, &err), 0);
    assert_string_equal(r.state, "COMPLETED");
    job_rec_release(&r);
    sched_free(s);
    transport_close(t);
    store_close(st);
}

/* Submit through the gate in mock mode (no registration), then one
 * reconcile pass: the held job stays PENDING, the one that ran is moved to
 * COMPLETED and counted; a second pass finds nothing left to move. */
static void test_submit_reconcile_mock(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct gate_req req = {0};
    struct gate_submit_req sr = {0};
    struct gate_submit_out so, held;
    struct sched_resources hold = SCHED_RESOURCES_INIT;
    struct job_rec r;
    struct gate *g;
    size_t moved = 99;
    char *script = xstrfmt("%s/ok.sh", dir), *w = xstrfmt("%s/work", dir);
    (void)state;
    setenv("EXAMLOPS_HPC_WORKDIR", w, 1);
    unsetenv("EXAMLOPS_HPC_REMOTE_WORKDIR");
    tu_write_file(script, "exit 0\n");
    req.purpose = GATE_SCHEDULE;
    req.use_env = 1;
    g = gate_open(&req, &err);
    assert_non_null(g);
    assert_int_equal(gate_is_mock(g), 1);
    sr.script = script;
    assert_int_equal(gate_submit(g, &sr, &so, &err), 0);
    hold.hold = 1;
    sr.res = &hold;
    assert_int_equal(gate_submit(g, &sr, &held, &err), 0);
    assert_int_equal(
        store_job_get(gate_store(g), "default", so.sr.job_id, &r, &err), 0);
    assert_string_equal(r.state, "PENDING");
    assert_string_equal(r.kind, "batch");
    assert_string_equal(r.run_uuid, so.run_id);
    job_rec_release(&r);
    assert_int_equal(gate_reconcile(g, &moved, &err), 0);
    assert_int_equal(moved, 1);
    assert_int_equal(
        store_job_get(gate_store(g), "default", so.sr.job_id, &r, &err), 0);
    assert_string_equal(r.state, "COMPLETED");
    assert_int_equal(r.exit_code, 0);
    job_rec_release(&r);
    assert_int_equal(
        store_job_get(gate_store(g), "default", held.sr.job_id, &r, &err), 0);
    assert_string_equal(r.state, "PENDING");
    job_rec_release(&r);
    assert_int_equal(gate_reconcile(g, &moved, &err), 0);
    assert_int_equal(moved, 0);
    /* the held one is cancelled; a second cancel says it already ended */
    assert_int_equal(gate_cancel(g, held.sr.job_id, &err), 0);
    assert_int_equal(gate_cancel(g, held.sr.job_id, &err), -1);
    assert_int_equal(err.code, EXA_EFAIL);
    assert_int_equal(gate_cancel(g, "mock-000000000000", &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    assert_int_equal(gate_cancel(g, "--user=root", &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    gate_submit_out_release(&so);
    gate_submit_out_release(&held);
    gate_close(g);
    unsetenv("EXAMLOPS_HPC_WORKDIR");
    free(script);
    free(w);
}

/* gate_job_record_batch tries every row: a row whose write fails (a
 * trigger refuses job 'b') does not keep 'c' behind it unwritten, and the
 * failure is reported. */
static void test_record_batch_tries_every_row(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct gate_req req = {0};
    struct sched_job jobs[3];
    struct job_rec r;
    struct gate *g;
    static const char *const ids[] = {"a", "b", "c"};
    char *w = xstrfmt("%s/work", dir);
    (void)state;
    setenv("EXAMLOPS_HPC_WORKDIR", w, 1);
    unsetenv("EXAMLOPS_HPC_REMOTE_WORKDIR");
    req.purpose = GATE_SCHEDULE;
    req.use_env = 1;
    g = gate_open(&req, &err);
    assert_non_null(g);
    for (int i = 0; i < 3; i++) {
        job_rec_init(&r);
        r.cluster = "default";
        r.scheduler = "mock";
        r.job_id = (char *)ids[i];
        r.kind = "batch";
        assert_int_equal(store_job_insert(gate_store(g), &r, NULL, &err), 0);
        sched_job_init(&jobs[i], ids[i]);
        jobs[i].state = SCHED_COMPLETED;
        jobs[i].exit_code = 0;
    }
    assert_int_equal(store_exec(gate_store(g),
                                "CREATE TEMP TRIGGER refuse_b BEFORE UPDATE ON "
                                "jobs WHEN NEW.job_id = 'b' BEGIN SELECT "
                                "RAISE(ABORT, 'row b refused'); END",
                                &err),
                     0);
    assert_int_equal(gate_job_record_batch(g, jobs, 3, 1, &err), -1);
    assert_non_null(strstr(err.text, "row b refused"));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(
            store_job_get(gate_store(g), "default", ids[i], &r, &err), 0);
        assert_string_equal(r.state, i == 1 ? "PENDING" : "COMPLETED");
        job_rec_release(&r);
    }
    gate_close(g);
    unsetenv("EXAMLOPS_HPC_WORKDIR");
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_record_batch_tries_every_row,
                                        setup, teardown),
        cmocka_unit_test(test_job_id_grammar),
        cmocka_unit_test(test_job_id_message),
        cmocka_unit_test(test_env_name),
        cmocka_unit_test_setup_teardown(test_pinned_fingerprint, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_host_key_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_insert_active, setup, teardown),
        cmocka_unit_test_setup_teardown(test_insert_checked_binding, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_open_refuses_mismatch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_recheck_active, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_submit_reconcile_mock, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
