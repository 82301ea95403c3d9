/*
 * test_preflight.c - preflight through a fake transport: every check
 * passes on a healthy Slurm cluster, and each failure (pinned host key
 * mismatch, unreachable host, missing partition, account not associated,
 * QOS not allowed, too many GPUs per node, a drained node, unwritable
 * work directory, no remote exa) fails exactly its own check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libdiscovery/preflight.h"
#include "libdiscovery/probe.h"

static const char *sinfo_ok =
    "NODELIST|CPUS|MEMORY|GRES|GRES_USED|STATE|PARTITION\n"
    "n1|4|8000|gpu:a100:4|gpu:a100:0(IDX:N/A)|idle|debug*\n"
    "n2|4|8000|gpu:a100:2|gpu:a100:0(IDX:N/A)|mixed|debug*\n";

static const char *sinfo_drained =
    "NODELIST|CPUS|MEMORY|GRES|GRES_USED|STATE|PARTITION\n"
    "n1|4|8000|gpu:a100:4|gpu:a100:0(IDX:N/A)|drained|debug*\n"
    "n2|4|8000|gpu:a100:2|gpu:a100:0(IDX:N/A)|mixed|debug*\n";

static const char *scontrol_debug = "PartitionName=debug Default=YES "
                                    "State=UP TotalNodes=2\n";

static struct transport *cluster_parts(const char *sinfo, const char *parts,
                                       int workdir_rc, int exa_rc)
{
    struct transport *t = transport_fake_new();
    transport_fake_add(t, "hostname", "login1\n", "", 0, 0, 0);
    transport_fake_add(t, "sinfo --version", "slurm 22.05.8\n", "", 0, 0, 0);
    transport_fake_add(t, "sacctmgr -n -P list cluster", "testa|x|1|2\n", "", 0,
                       0, 0);
    transport_fake_add(t, "sacctmgr -n -P show assoc user=alice *",
                       "research|normal,high\nroot|normal\n", "", 0, 0, 0);
    transport_fake_add(t, "scontrol show partition -o", parts, "", 0, 0, 0);
    transport_fake_add(t, "sinfo -N --Format=*", sinfo, "", 0, 0, 0);
    transport_fake_add(t, "mkdir -p *", "",
                       workdir_rc ? "Permission denied" : "", workdir_rc, 0, 0);
    transport_fake_add(t, "touch *", "", "", 0, 0, 0);
    transport_fake_add(t, "rm -f *", "", "", 0, 0, 0);
    transport_fake_add(t, "exa --version", exa_rc ? "" : "exa 0.1.0\n",
                       exa_rc ? "exa: command not found" : "", exa_rc, 0, 0);
    return t;
}

static struct transport *cluster(const char *sinfo, int workdir_rc, int exa_rc)
{
    return cluster_parts(sinfo, scontrol_debug, workdir_rc, exa_rc);
}

static const struct preflight_check *find(const struct preflight_report *r,
                                          const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->checks[i].check, name))
            return &r->checks[i];
    return NULL;
}

static struct preflight_target target(void)
{
    struct preflight_target tg;
    memset(&tg, 0, sizeof(tg));
    tg.cluster = "testa";
    tg.scheduler = "slurm";
    tg.ssh = 1;
    tg.known_hosts = "/kh/testa";
    tg.pinned_fingerprint = "SHA256:abc";
    tg.host_key_fingerprint = "SHA256:abc";
    tg.workdir = "exa-runs";
    tg.remote_exa = "exa";
    return tg;
}

/* Count failed checks, asserting the one named (if any) is among them. */
static size_t failed(const struct preflight_report *r, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += !r->checks[i].ok;
    if (name) {
        assert_non_null(find(r, name));
        assert_int_equal(find(r, name)->ok, 0);
    }
    return n;
}

static void test_all_pass(void **state)
{
    struct transport *t = cluster(sinfo_ok, 0, 0);
    struct preflight_target tg = target();
    struct preflight_ask ask = {4, 1, "debug", "research", "high", "alice", 0};
    struct preflight_report r;
    static const char *const order[] = {
        "host_key", "transport", "scheduler", "partition",
        "account",  "qos",       "gpus",      "gpus_per_node",
        "nodes",    "workdir",   "remote_exa"};
    preflight_run(t, &tg, &ask, &r);
    assert_int_equal(r.ok, 1);
    assert_int_equal(r.n, 11);
    for (size_t i = 0; i < r.n; i++)
        assert_string_equal(r.checks[i].check, order[i]);
    assert_string_equal(find(&r, "gpus")->detail,
                        "asked 4, debug has 6 on usable nodes");
    assert_string_equal(find(&r, "transport")->detail,
                        "host reachable (login1)");
    {
        json_t *j = preflight_report_json("testa", &r);
        assert_true(json_is_true(json_object_get(j, "ok")));
        assert_int_equal(json_array_size(json_object_get(j, "checks")), 11);
        json_decref(j);
    }
    preflight_report_release(&r);
    transport_close(t);
}

static void test_each_failure(void **state)
{
    struct preflight_target tg = target();
    struct preflight_report r;
    struct transport *t;
    {
        struct preflight_ask a = {1, 1, "gpu", NULL, NULL, "alice", 0};
        t = cluster(sinfo_ok, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "partition"), 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "'gpu' does not exist");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {1, 1, NULL, "nobank", "high", "alice", 0};
        t = cluster(sinfo_ok, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "account"), 2); /* and its QOS */
        assert_string_equal(find(&r, "account")->detail,
                            "account 'nobank' is not associated with user "
                            "'alice'");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {1, 1, NULL, "root", "high", "alice", 0};
        t = cluster(sinfo_ok, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "qos"), 1);
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        /* 6 GPUs in total, but not 6 on one node */
        struct preflight_ask a = {6, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster(sinfo_ok, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "gpus_per_node"), 1);
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        /* the 4-GPU node is drained: 4 GPUs on one node no longer exist */
        struct preflight_ask a = {4, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster(sinfo_drained, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "gpus"), 2);
        assert_int_equal(find(&r, "gpus_per_node")->ok, 0);
        assert_string_equal(find(&r, "nodes")->detail,
                            "asked 1, 1 usable (1 down, drained or unknown)");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {0, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster(sinfo_ok, 1, 127);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "workdir"), 2);
        assert_int_equal(find(&r, "remote_exa")->ok, 0);
        assert_string_equal(find(&r, "remote_exa")->detail,
                            "'exa --version' not found");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {0, 1, NULL, NULL, NULL, "alice", 0};
        struct preflight_target bad = target();
        bad.pinned_fingerprint = "SHA256:other";
        t = cluster(sinfo_ok, 0, 0);
        preflight_run(t, &bad, &a, &r);
        assert_int_equal(failed(&r, "host_key"), 1);
        preflight_report_release(&r);
        transport_close(t);
    }
}

static void test_unreachable_stops(void **state)
{
    struct transport *t = cluster(sinfo_ok, 0, 0);
    struct preflight_target tg = target();
    struct preflight_ask a = {1, 1, NULL, NULL, NULL, "alice", 0};
    struct preflight_report r;
    transport_fake_fail_nth(t, 1);
    preflight_run(t, &tg, &a, &r);
    assert_int_equal(r.ok, 0);
    assert_int_equal(r.n, 2); /* host_key, transport: nothing after */
    assert_string_equal(r.checks[1].check, "transport");
    assert_int_equal(r.checks[1].ok, 0);
    assert_int_equal(transport_fake_ncalls(t), 1);
    preflight_report_release(&r);
    transport_close(t);
}

/* Two partitions: debug (the default, n1 with 2 GPUs) and gpu (n2, 4). */
static const char *sinfo_two =
    "NODELIST|CPUS|MEMORY|GRES|GRES_USED|STATE|PARTITION\n"
    "n1|4|8000|gpu:a100:2|gpu:a100:0(IDX:N/A)|idle|debug*\n"
    "n2|4|8000|gpu:a100:4|gpu:a100:0(IDX:N/A)|idle|gpu\n";
static const char *two = "PartitionName=debug Default=YES State=UP "
                         "TotalNodes=1\n"
                         "PartitionName=gpu State=UP TotalNodes=1\n";

/* Slurm without --partition: sbatch uses the Default=YES partition, so the
 * node checks count its nodes, not the whole cluster's: 4 GPUs on one
 * node exist only in 'gpu', where the job does not go. With partitions
 * but no default, sbatch refuses a job that names none. */
static void test_slurm_default_partition(void **state)
{
    static const char *none_default = "PartitionName=debug State=UP "
                                      "TotalNodes=1\n"
                                      "PartitionName=gpu State=UP "
                                      "TotalNodes=1\n";
    struct preflight_target tg = target();
    struct preflight_report r;
    struct transport *t;
    {
        struct preflight_ask a = {4, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, two, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(find(&r, "partition")->ok, 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "none asked: the default partition 'debug' "
                            "(Default=YES, state UP)");
        assert_int_equal(failed(&r, "gpus"), 2);
        assert_string_equal(find(&r, "gpus")->detail,
                            "asked 4, debug has 2 on usable nodes");
        assert_int_equal(find(&r, "gpus_per_node")->ok, 0);
        assert_string_equal(find(&r, "nodes")->detail, "asked 1, 1 usable");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {4, 1, "gpu", NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, two, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(r.ok, 1);
        assert_string_equal(find(&r, "gpus")->detail,
                            "asked 4, gpu has 4 on usable nodes");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {1, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, none_default, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "partition"), 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "none asked, and no partition is Default=YES: "
                            "sbatch needs --partition (2 partition(s))");
        /* the node checks fall back to the whole cluster */
        assert_string_equal(find(&r, "gpus")->detail,
                            "asked 1, cluster has 6 on usable nodes");
        preflight_report_release(&r);
        transport_close(t);
    }
}

/* SBATCH_PARTITION where sbatch runs (`printenv` through the transport)
 * is the partition of a job that names none: its nodes count, a name
 * that does not exist fails; a list counts the nodes of any of its
 * names and needs each to exist; an asked partition wins over it. */
static void test_sbatch_partition_env(void **state)
{
    struct preflight_target tg = target();
    struct preflight_report r;
    struct transport *t;
    {
        struct preflight_ask a = {4, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, two, 0, 0);
        transport_fake_add(t, "printenv SBATCH_PARTITION", "gpu\n", "", 0, 0,
                           0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(r.ok, 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "'gpu' exists (state UP): none asked, "
                            "SBATCH_PARTITION in the environment sbatch "
                            "runs in");
        assert_string_equal(find(&r, "gpus")->detail,
                            "asked 4, gpu has 4 on usable nodes");
        assert_int_equal(transport_fake_count(t, "scontrol show config"), 0);
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {1, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, two, 0, 0);
        transport_fake_add(t, "printenv SBATCH_PARTITION", "nope\n", "", 0, 0,
                           0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "partition"), 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "'nope' does not exist: none asked, "
                            "SBATCH_PARTITION in the environment sbatch "
                            "runs in");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        /* as sbatch reads it (empty names skipped), from the last line a
         * shell rc file did not print */
        struct preflight_ask a = {4, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, two, 0, 0);
        transport_fake_add(t, "printenv SBATCH_PARTITION",
                           "welcome to login1\n,gpu,,\n", "", 0, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(r.ok, 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "'gpu' exists (state UP): none asked, "
                            "SBATCH_PARTITION in the environment sbatch "
                            "runs in");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        /* "," names none: the default partition, as sbatch takes it */
        struct preflight_ask a = {1, 1, NULL, NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, two, 0, 0);
        transport_fake_add(t, "printenv SBATCH_PARTITION", ",\n", "", 0, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_string_equal(find(&r, "partition")->detail,
                            "none asked: the default partition 'debug' "
                            "(Default=YES, state UP)");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {6, 1, "debug,gpu", NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, two, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(find(&r, "partition")->ok, 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "'debug,gpu' exist (one is UP)");
        assert_string_equal(find(&r, "gpus")->detail,
                            "asked 6, debug,gpu has 6 on usable nodes");
        assert_int_equal(transport_fake_count(t, "printenv *"), 0);
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {1, 1, "debug,nope", NULL, NULL, "alice", 0};
        t = cluster_parts(sinfo_two, two, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(failed(&r, "partition"), 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "'nope' does not exist");
        preflight_report_release(&r);
        transport_close(t);
    }
}

/* `printenv SBATCH_PARTITION` read as sbatch reads the variable */
static void test_sbatch_partition_value(void **state)
{
    static const struct {
        const char *in, *want;
    } t[] = {
        {"gpu\n", "gpu"},
        {"gpu,long\n", "gpu,long"},
        {",gpu,,long,\n", "gpu,long"},
        {",\n", NULL},
        {"\n", NULL},
        {"", NULL},
        {"motd line\ngpu\n\n", "gpu"},
        {"gpu \r\n", "gpu"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char *v = slurm_partition_env_value(t[i].in, strlen(t[i].in));
        if (t[i].want)
            assert_string_equal(v, t[i].want);
        else
            assert_null(v);
        free(v);
    }
}

/* `scontrol show config` (the testbed's capture): the value of one key,
 * blanks trimmed; a key that is only a prefix of another is not it. */
static void test_slurm_config_value(void **state)
{
    FILE *f = fopen("tests/fixtures/slurm/scontrol-show-config.out", "r");
    char buf[65536], *v;
    size_t n;
    (void)state;
    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    v = slurm_config_value(buf, n, "JobSubmitPlugins");
    assert_string_equal(v, "(null)");
    free(v);
    v = slurm_config_value(buf, n, "SLURM_VERSION");
    assert_string_equal(v, "22.05.8");
    free(v);
    assert_null(slurm_config_value(buf, n, "JobSubmit"));
    assert_null(slurm_config_value(buf, n, "NoSuchKey"));
    assert_null(slurm_config_value("", 0, "JobSubmitPlugins"));
    v = slurm_config_value("JobSubmitPlugins=lua,all_partitions \r\n", 37,
                           "JobSubmitPlugins");
    assert_string_equal(v, "lua,all_partitions");
    free(v);
    assert_null(slurm_config_value("JobSubmitPlugins = a\0b\n", 23,
                                   "JobSubmitPlugins"));
}

/* A job_submit plugin may set the partition of a job that names none:
 * preflight counts the whole cluster then, and says so; without one
 * ("(null)") the default partition as before. */
static void test_slurm_job_submit_plugin(void **state)
{
    static const char *none = "PartitionName=debug State=UP TotalNodes=1\n"
                              "PartitionName=gpu State=UP TotalNodes=1\n";
    struct preflight_target tg = target();
    struct preflight_ask a = {4, 1, NULL, NULL, NULL, "alice", 0};
    struct preflight_report r;
    struct transport *t;
    for (int nodef = 0; nodef < 2; nodef++) {
        t = cluster_parts(sinfo_two, nodef ? none : two, 0, 0);
        transport_fake_add(t, "scontrol show config",
                           "JobSubmitPlugins        = lua\n", "", 0, 0, 0);
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(find(&r, "partition")->ok, 1);
        assert_string_equal(find(&r, "partition")->detail,
                            "none asked: the job_submit plugin(s) 'lua' "
                            "(JobSubmitPlugins) may choose it; counting the "
                            "whole cluster");
        assert_string_equal(find(&r, "gpus")->detail,
                            "asked 4, cluster has 6 on usable nodes");
        assert_int_equal(r.ok, 1);
        preflight_report_release(&r);
        transport_close(t);
    }
    t = cluster_parts(sinfo_two, two, 0, 0);
    transport_fake_add(t, "scontrol show config",
                       "JobSubmitPlugins        = (null)\n", "", 0, 0, 0);
    preflight_run(t, &tg, &a, &r);
    assert_string_equal(find(&r, "gpus")->detail,
                        "asked 4, debug has 2 on usable nodes");
    preflight_report_release(&r);
    transport_close(t);
}

/* Flux (the real flux-core 0.88 captures of tests/fixtures/flux-real):
 * the slot check says what flux batch gets, one slot when neither tasks
 * nor nodes are asked, and refuses GPUs that do not split over the
 * slots; node1 drained (72) is not usable though the list says down. */
static struct transport *flux_cluster(void)
{
    struct transport *t = transport_fake_new();
    transport_fake_add(t, "hostname", "node0\n", "", 0, 0, 0);
    assert_int_equal(transport_fake_add_file(
                         t, "flux version",
                         "tests/fixtures/flux-real/01-flux-version.stdout", 0,
                         0),
                     0);
    transport_fake_add(t, "flux account --help", "",
                       "flux: `account' is not a flux command.  See 'flux "
                       "--help'\n",
                       1, 0, 0);
    assert_int_equal(
        transport_fake_add_file(
            t, "flux resource list",
            "tests/fixtures/flux-real/71-resource-list-one-drained.stdout", 0,
            0),
        0);
    assert_int_equal(
        transport_fake_add_file(
            t, "flux resource status",
            "tests/fixtures/flux-real/72-resource-status-one-drained.stdout", 0,
            0),
        0);
    assert_int_equal(transport_fake_add_file(
                         t, "flux resource R",
                         "tests/fixtures/flux-real/04-resource-R.stdout", 0, 0),
                     0);
    transport_fake_add(t, "mkdir -p *", "", "", 0, 0, 0);
    transport_fake_add(t, "touch *", "", "", 0, 0, 0);
    transport_fake_add(t, "rm -f *", "", "", 0, 0, 0);
    transport_fake_add(t, "exa --version", "exa 0.1.0\n", "", 0, 0, 0);
    return t;
}

/* Named queues and none the default: flux refuses a job that names none
 * ("no queue specified"), so preflight fails without --partition, from
 * the probe's queues or, where that listing failed (a flux without its
 * fields), from `flux queue list -n -o {queuem}`; when both fail the
 * check says the queue was not checked. */
static void test_flux_no_default_queue(void **state)
{
    struct preflight_target tg = target();
    struct preflight_ask a = {0, 1, NULL, NULL, NULL, "root", 0};
    struct preflight_report r;
    struct transport *t = flux_cluster();
    (void)state;
    tg.scheduler = "flux";
    tg.ssh = 0;
    transport_fake_add(t, "flux queue list -n -o *",
                       "debug\037enabled\037started\037inf\037inf\0371\0374"
                       "\0372\nbatch\037enabled\037started\037inf\037inf\0371"
                       "\0374\0372\n",
                       "", 0, 0, 0);
    preflight_run(t, &tg, &a, &r);
    assert_int_equal(failed(&r, "partition"), 1);
    assert_string_equal(find(&r, "partition")->detail,
                        "none asked, and no queue is the default: flux needs "
                        "--queue (2 queue(s); flux-run: \"no queue "
                        "specified\")");
    preflight_report_release(&r);
    transport_close(t);

    t = flux_cluster();
    transport_fake_add(t, "flux queue list -n -o {queuem}", "debug\nbatch\n",
                       "", 0, 0, 0);
    transport_fake_add(t, "flux queue list -n -o *", "",
                       "flux-queue: ERROR: Invalid format field", 1, 0, 0);
    preflight_run(t, &tg, &a, &r);
    assert_int_equal(failed(&r, "partition"), 1);
    assert_non_null(strstr(find(&r, "partition")->detail, "(2 queue(s);"));
    preflight_report_release(&r);
    transport_close(t);

    t = flux_cluster(); /* no flux queue list rule: both fail */
    preflight_run(t, &tg, &a, &r);
    assert_int_equal(find(&r, "partition")->ok, 1);
    assert_string_equal(find(&r, "partition")->detail,
                        "none asked; the queues could not be listed (flux "
                        "queue list failed), so none is checked: counting "
                        "the whole instance");
    preflight_report_release(&r);
    transport_close(t);
}

static void test_flux_slots(void **state)
{
    struct preflight_target tg = target();
    struct preflight_report r;
    struct transport *t;

    tg.scheduler = "flux";
    tg.ssh = 0;
    {
        struct preflight_ask a = {0, 1, NULL, NULL, NULL, "root", 0};
        t = flux_cluster();
        preflight_run(t, &tg, &a, &r);
        assert_non_null(find(&r, "slots"));
        assert_int_equal(find(&r, "slots")->ok, 1);
        assert_string_equal(find(&r, "slots")->detail, "flux batch gets -n1");
        /* node1 is drained: one usable node of two */
        assert_string_equal(find(&r, "nodes")->detail,
                            "asked 1, 1 usable (1 down, drained or unknown)");
        assert_int_equal(r.ok, 1);
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {2, 1, NULL, NULL, NULL, "root", 2};
        t = flux_cluster();
        preflight_run(t, &tg, &a, &r);
        assert_string_equal(find(&r, "slots")->detail,
                            "flux batch gets -n2 with -g1 per slot (2 GPUs "
                            "in all)");
        preflight_report_release(&r);
        transport_close(t);
    }
    {
        struct preflight_ask a = {2, 1, NULL, NULL, NULL, "root", 3};
        t = flux_cluster();
        preflight_run(t, &tg, &a, &r);
        assert_int_equal(r.ok, 0);
        assert_int_equal(failed(&r, "slots"), 1);
        assert_string_equal(find(&r, "slots")->detail,
                            "gpus 2 cannot be split over 3 flux slots: flux "
                            "-g is per slot (ask a multiple of 3 GPUs, or "
                            "ntasks dividing 2)");
        preflight_report_release(&r);
        transport_close(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_pass),
        cmocka_unit_test(test_each_failure),
        cmocka_unit_test(test_unreachable_stops),
        cmocka_unit_test(test_slurm_default_partition),
        cmocka_unit_test(test_sbatch_partition_env),
        cmocka_unit_test(test_sbatch_partition_value),
        cmocka_unit_test(test_slurm_config_value),
        cmocka_unit_test(test_slurm_job_submit_plugin),
        cmocka_unit_test(test_flux_slots),
        cmocka_unit_test(test_flux_no_default_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
