/*
 * test_probe.c - the probes through a fake transport: Slurm detection with
 * version, accounting, partitions and a GresUsed-aware node list; an
 * unmanaged nvidia-smi host keeping its inventory (the reference lost it);
 * transport failures reported as such, never as "no scheduler detected";
 * and the scontrol partition reader on the real 22.05 capture.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libdiscovery/probe.h"
#include "libdiscovery/probe_int.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define FIX "tests/fixtures/slurm/"

static const char *sinfo_out =
    "NODELIST|CPUS|MEMORY|GRES|GRES_USED|STATE|PARTITION\n"
    "testa-n1|4|8000|gpu:a100:4|gpu:a100:1(IDX:0)|mixed|debug*\n"
    "testa-n2|4|8000|gpu:a100:4|gpu:a100:0(IDX:N/A)|idle|debug*\n"
    "testa-n2|4|8000|gpu:a100:4|gpu:a100:0(IDX:N/A)|idle|long\n"
    "testa-n3|8|16000|gpu:a100:2,gpu:v100:2|gpu:a100:0,gpu:v100:0|idle*|"
    "long\n";

static const char *partitions_out =
    "PartitionName=debug AllowGroups=ALL Default=YES MaxNodes=UNLIMITED "
    "MaxTime=UNLIMITED State=UP TotalCPUs=4 TotalNodes=1 \n"
    "PartitionName=long Default=NO MaxNodes=2 MaxTime=1-00:00:00 "
    "State=DOWN TotalCPUs=12 TotalNodes=2\n";

static struct transport *slurm_fake(void)
{
    struct transport *t = transport_fake_new();
    transport_fake_add(t, "flux version", "", "flux: command not found", 127, 0,
                       0);
    transport_fake_add(t, "sinfo --version", "slurm 22.05.8\n", "", 0, 0, 0);
    transport_fake_add(t, "sacctmgr -n -P list cluster",
                       "testa|127.0.0.1|6817|9728\n", "", 0, 0, 0);
    transport_fake_add(t, "scontrol show partition -o", partitions_out, "", 0,
                       0, 0);
    transport_fake_add(t, "sinfo -N --Format=*", sinfo_out, "", 0, 0, 0);
    transport_fake_add(t, "nvidia-smi*", "", "not found", 127, 0, 0);
    return t;
}

static void test_slurm_inventory(void **state)
{
    struct transport *t = slurm_fake();
    struct inventory inv;
    exa_error_t err = EXA_ERROR_INIT;
    memset(&inv, 0, sizeof(inv));
    assert_int_equal(probe_inventory(t, NULL, &inv, &err), 0);
    assert_string_equal(inv.caps.scheduler, "slurm");
    assert_string_equal(inv.caps.version, "slurm 22.05.8");
    assert_int_equal(inv.caps.available, 1);
    assert_int_equal(inv.caps.accounting, 1);
    assert_int_equal(inv.caps.npartitions, 2);
    assert_string_equal(inv.caps.partitions[0].name, "debug");
    assert_int_equal(inv.caps.partitions[0].is_default, 1);
    assert_int_equal(inv.caps.partitions[0].max_nodes, -1);
    assert_string_equal(inv.caps.partitions[1].max_time, "1-00:00:00");
    assert_int_equal(inv.caps.partitions[1].max_nodes, 2);
    assert_string_equal(inv.caps.partitions[1].state, "DOWN");
    /* one record per node, all its partitions, GresUsed kept */
    assert_int_equal(inv.nnodes, 3);
    assert_string_equal(inv.nodes[0].state, "mixed");
    assert_int_equal(inv.nodes[0].gpus, 4);
    assert_int_equal(inv.nodes[0].gpus_used, 1);
    assert_int_equal(inv.nodes[1].partitions.nr, 2);
    assert_string_equal(inv.nodes[1].partitions.v[1], "long");
    /* not responding is down; mixed GPU types are all kept */
    assert_string_equal(inv.nodes[2].state, "down");
    assert_string_equal(inv.nodes[2].gpu_model, "a100,v100");
    assert_int_equal(inv.nodes[2].gpus, 4);
    assert_int_equal(inv.caps.total_nodes, 3);
    assert_int_equal(inv.caps.total_cpus, 16);
    assert_int_equal(inv.caps.total_gpus, 12);
    assert_int_equal(inv.ngpus, 12);
    assert_string_equal(inv.gpus[0].node, "testa-n1");
    assert_string_equal(inv.gpus[0].name, "a100");
    /* GresUsed's IDX list names the GPU in use (1 of 4: index 0), the
     * others are idle; a node that takes no work gives its state */
    assert_int_equal(inv.nodes[0].has_gpu_used_mask, 1);
    assert_int_equal(inv.nodes[0].gpu_used_mask, 0x1);
    assert_string_equal(inv.gpus[0].state, "allocated");
    assert_string_equal(inv.gpus[1].state, "idle");
    assert_string_equal(inv.gpus[3].state, "idle");
    /* "gpu:a100:0,gpu:v100:0": no IDX list (no_consume GPUs print so
     * whatever holds them): the indices are unknown */
    assert_int_equal(inv.nodes[2].has_gpu_used_mask, 0);
    assert_string_equal(inv.gpus[4].node, "testa-n2");
    assert_string_equal(inv.gpus[4].state, "idle");
    assert_string_equal(inv.gpus[8].node, "testa-n3");
    assert_string_equal(inv.gpus[8].state, "down");
    /* detection stopped at the first probe that answered */
    assert_int_equal(transport_fake_count(t, "nvidia-smi*"), 0);
    inventory_release(&inv);
    transport_close(t);
}

/* Count-only GPU states (probe_gpus_from_nodes): every GPU of a node
 * whose count says all are used is allocated; a drained node's are
 * drain; a count not known says nothing; a node with jobs and 0 counted
 * may share its GPUs as shards or MPS (unknown); a node listed idle
 * with GPUs counted in use (Flux's list and R read apart) is not idle. */
static void test_count_gpu_states(void **state)
{
    struct node_info nodes[5];
    struct gpu_info *g = NULL;
    size_t n = 0;
    (void)state;
    memset(nodes, 0, sizeof(nodes));
    nodes[3].name = "d";
    nodes[3].gpus = 2;
    nodes[3].gpus_used = 0;
    nodes[3].state = "mixed";
    nodes[4].name = "e";
    nodes[4].gpus = 2;
    nodes[4].gpus_used = 1;
    nodes[4].state = "idle";
    nodes[0].name = "a";
    nodes[0].gpus = 2;
    nodes[0].gpus_used = 2;
    nodes[0].state = "allocated";
    nodes[1].name = "b";
    nodes[1].gpus = 1;
    nodes[1].gpus_used = 0;
    nodes[1].state = "drain";
    nodes[2].name = "c";
    nodes[2].gpus = 1;
    nodes[2].gpus_used = -1;
    nodes[2].state = "mixed";
    probe_gpus_from_nodes(nodes, 5, &g, &n);
    assert_int_equal(n, 8);
    assert_string_equal(g[0].state, "allocated");
    assert_string_equal(g[1].state, "allocated");
    assert_int_equal(g[1].index, 1);
    assert_string_equal(g[2].state, "drain");
    assert_string_equal(g[3].state, "unknown");
    assert_string_equal(g[4].state, "unknown"); /* mixed, 0 counted */
    assert_string_equal(g[5].state, "unknown");
    assert_string_equal(g[6].state, "unknown"); /* idle, 1 of 2 counted */
    assert_string_equal(g[7].state, "unknown");
    gpu_infos_free(g, n);
}

/* GPU states by index (gpu_used_mask, GresUsed's IDX list): the GPUs
 * named are allocated and the others idle on an idle or mixed node,
 * whatever its count, unknown on an allocated one; a drained node's are
 * drain; a node whose state is unknown, whose mask names an index past
 * its GPUs, or where a job is completing, falls back to the count
 * rule. */
static void test_indexed_gpu_states(void **state)
{
    struct node_info nodes[6];
    struct gpu_info *g = NULL;
    size_t n = 0;
    (void)state;
    memset(nodes, 0, sizeof(nodes));
    nodes[0].name = "a";
    nodes[0].gpus = 4;
    nodes[0].gpus_used = 2;
    nodes[0].state = "mixed";
    nodes[0].has_gpu_used_mask = 1;
    nodes[0].gpu_used_mask = 0x9; /* IDX:0,3 */
    nodes[1].name = "b";
    nodes[1].gpus = 2;
    nodes[1].gpus_used = 1;
    nodes[1].state = "drain";
    nodes[1].has_gpu_used_mask = 1;
    nodes[1].gpu_used_mask = 0x1;
    nodes[2].name = "c";
    nodes[2].gpus = 2;
    nodes[2].gpus_used = 1;
    nodes[2].state = "unknown";
    nodes[2].has_gpu_used_mask = 1;
    nodes[2].gpu_used_mask = 0x2;
    nodes[3].name = "d";
    nodes[3].gpus = 2;
    nodes[3].gpus_used = 1;
    nodes[3].state = "allocated";
    nodes[3].has_gpu_used_mask = 1;
    nodes[3].gpu_used_mask = 0x4; /* index 2 of 2 GPUs: not believed */
    /* an allocated node: the GPUs no index names may be held by a job
     * holding the whole node */
    nodes[4].name = "e";
    nodes[4].gpus = 2;
    nodes[4].gpus_used = 1;
    nodes[4].state = "allocated";
    nodes[4].raw_state = "allocated";
    nodes[4].has_gpu_used_mask = 1;
    nodes[4].gpu_used_mask = 0x1;
    /* a job completing: GresUsed has let go of GPUs it may still hold */
    nodes[5].name = "f";
    nodes[5].gpus = 2;
    nodes[5].gpus_used = 0;
    nodes[5].state = "mixed";
    nodes[5].raw_state = "COMPLETING";
    nodes[5].has_gpu_used_mask = 1;
    nodes[5].gpu_used_mask = 0;
    probe_gpus_from_nodes(nodes, 6, &g, &n);
    assert_int_equal(n, 14);
    assert_string_equal(g[0].state, "allocated");
    assert_string_equal(g[1].state, "idle");
    assert_string_equal(g[2].state, "idle");
    assert_string_equal(g[3].state, "allocated");
    assert_string_equal(g[4].state, "drain");
    assert_string_equal(g[5].state, "drain");
    assert_string_equal(g[6].state, "unknown");
    assert_string_equal(g[7].state, "unknown");
    assert_string_equal(g[8].state, "unknown");
    assert_string_equal(g[9].state, "unknown");
    assert_string_equal(g[10].state, "allocated");
    assert_string_equal(g[11].state, "unknown");
    assert_string_equal(g[12].state, "unknown"); /* mixed, 0 counted */
    assert_string_equal(g[13].state, "unknown");
    gpu_infos_free(g, n);
}

static void test_no_accounting(void **state)
{
    struct transport *t = transport_fake_new();
    struct inventory inv;
    exa_error_t err = EXA_ERROR_INIT;
    memset(&inv, 0, sizeof(inv));
    transport_fake_add(t, "sinfo --version", "slurm 22.05.8\n", "", 0, 0, 0);
    transport_fake_add(t, "sacctmgr *", "",
                       "sacctmgr: error: Problem talking to the database", 1, 0,
                       0);
    transport_fake_add(t, "scontrol show partition -o", partitions_out, "", 0,
                       0, 0);
    transport_fake_add(t, "sinfo -N --Format=*", sinfo_out, "", 0, 0, 0);
    assert_int_equal(probe_inventory(t, "slurm", &inv, &err), 0);
    assert_int_equal(inv.caps.accounting, 0);
    assert_true(inv.caps.notes.nr >= 1);
    assert_non_null(strstr(inv.caps.notes.v[0], "accounting"));
    inventory_release(&inv);
    transport_close(t);
}

static void test_unmanaged_keeps_inventory(void **state)
{
    struct transport *t = transport_fake_new();
    struct inventory inv;
    exa_error_t err = EXA_ERROR_INIT;
    memset(&inv, 0, sizeof(inv));
    transport_fake_add(t, "flux *", "", "", 127, 0, 0);
    transport_fake_add(t, "sinfo *", "", "", 127, 0, 0);
    transport_fake_add(t, "nvidia-smi -L",
                       "GPU 0: NVIDIA H200 (UUID: GPU-5d5e)\n", "", 0, 0, 0);
    transport_fake_add(t, "nvidia-smi --query-gpu=*",
                       "0, GPU-5d5e, NVIDIA H200, 143771, 0, 0, 75.20\n", "", 0,
                       0, 0);
    transport_fake_add(t, "hostname", "gpubox\n", "", 0, 0, 0);
    assert_int_equal(probe_inventory(t, NULL, &inv, &err), 0);
    assert_string_equal(inv.caps.scheduler, "unmanaged");
    assert_int_equal(inv.caps.available, 1);
    assert_int_equal(inv.nnodes, 1);
    assert_string_equal(inv.nodes[0].name, "gpubox");
    assert_int_equal(inv.nodes[0].gpus, 1);
    assert_int_equal(inv.nodes[0].gpus_used, 0);
    assert_string_equal(inv.nodes[0].state, "idle");
    assert_string_equal(inv.nodes[0].gpu_model, "NVIDIA H200");
    assert_int_equal(inv.ngpus, 1);
    assert_string_equal(inv.gpus[0].name, "NVIDIA H200");
    assert_int_equal(inv.gpus[0].mem_total_mb, 143771);
    assert_string_equal(inv.gpus[0].uuid, "GPU-5d5e");
    assert_true(fabs(inv.gpus[0].power_w - 75.2) < 1e-9);
    assert_int_equal(inv.caps.total_gpus, 1);
    inventory_release(&inv);
    /* the scheduler name finds the probe too */
    assert_ptr_equal(probe_find("unmanaged"), probe_find("nvidia-smi"));
    assert_null(probe_find("pbs"));
    transport_close(t);
}

static void test_transport_failure_is_not_absence(void **state)
{
    struct transport *t = slurm_fake();
    struct inventory inv;
    exa_error_t err = EXA_ERROR_INIT;
    memset(&inv, 0, sizeof(inv));
    transport_fake_fail_nth(t, 1);
    assert_int_equal(probe_inventory(t, NULL, &inv, &err), -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_null(strstr(err.text, "no known scheduler"));
    transport_close(t);
    /* nothing installed: a real "no scheduler" */
    t = transport_fake_new();
    memset(&inv, 0, sizeof(inv));
    assert_int_equal(probe_inventory(t, NULL, &inv, &err), 0);
    assert_string_equal(inv.caps.scheduler, "unknown");
    assert_int_equal(inv.caps.available, 0);
    assert_string_equal(inv.caps.notes.v[0], "no known scheduler detected");
    inventory_release(&inv);
    assert_int_equal(probe_inventory(t, "pbs", &inv, &err), -1);
    assert_string_equal(err.text, "unknown scheduler probe: 'pbs'");
    transport_close(t);
}

static void test_flux_per_rank(void **state)
{
    struct transport *t = transport_fake_new();
    struct inventory inv;
    exa_error_t err = EXA_ERROR_INIT;
    memset(&inv, 0, sizeof(inv));
    transport_fake_add(t, "flux version",
                       "commands:    \t\t0.56.0\nlibflux-core:\t\t0.56.0\n", "",
                       0, 0, 0);
    transport_fake_add(t, "flux account --help", "", "", 1, 0, 0);
    assert_int_equal(transport_fake_add_file(t, "flux resource list",
                                             "tests/fixtures/flux/"
                                             "resource-list.txt",
                                             0, 0),
                     0);
    transport_fake_add(t, "flux resource R",
                       "{\"version\": 1, \"execution\": {\"R_lite\": "
                       "[{\"rank\": \"0-3\", \"children\": {\"core\": "
                       "\"0-47\", \"gpu\": \"0-3\"}}, {\"rank\": \"4\", "
                       "\"children\": {\"core\": \"0-23\", \"gpu\": "
                       "\"0-1\"}}], \"nodelist\": [\"gpu[1-5]\"]}}",
                       "", 0, 0, 0);
    transport_fake_add(t, "nvidia-smi*", "", "", 127, 0, 0);
    assert_int_equal(probe_inventory(t, NULL, &inv, &err), 0);
    assert_string_equal(inv.caps.scheduler, "flux");
    assert_string_equal(inv.caps.version, "0.56.0");
    assert_int_equal(inv.caps.accounting, 0);
    assert_int_equal(inv.nnodes, 5);
    /* order of first appearance: gpu3 gpu4 (free) gpu1 gpu2 gpu5 */
    assert_string_equal(inv.nodes[0].name, "gpu3");
    assert_string_equal(inv.nodes[0].state, "idle");
    assert_int_equal(inv.nodes[0].cpus, 48); /* from R: rank 2 */
    assert_int_equal(inv.nodes[0].gpus, 4);
    assert_string_equal(inv.nodes[2].name, "gpu1");
    assert_string_equal(inv.nodes[2].state, "allocated");
    /* R's counts win over a single-node row's too: the list's rows
     * overlap (a node draining with a job is in its allocated and its
     * down row, tests/fixtures/flux-real 99d), R names each node once */
    assert_string_equal(inv.nodes[4].name, "gpu5");
    assert_string_equal(inv.nodes[4].state, "down");
    assert_int_equal(inv.nodes[4].cpus, 24);
    assert_int_equal(inv.nodes[4].gpus, 2);
    assert_int_equal(inv.caps.total_gpus, 18);
    inventory_release(&inv);
    transport_close(t);
}

static void test_flux_r_reader(void **state)
{
    struct strvec hosts = STRVEC_INIT;
    long long *c = NULL, *g = NULL;
    const char *r = "{\"execution\": {\"R_lite\": [{\"rank\": \"0-1\", "
                    "\"children\": {\"core\": \"0-47\", \"gpu\": "
                    "\"0-3\"}}, {\"rank\": \"2\", \"children\": "
                    "{\"core\": \"0-23\"}}], \"nodelist\": "
                    "[\"gpu[1-2]\", \"login1\"]}}";
    assert_int_equal(flux_r_per_node(r, strlen(r), &hosts, &c, &g, NULL), 0);
    assert_int_equal(hosts.nr, 3);
    assert_string_equal(hosts.v[2], "login1");
    assert_int_equal(c[0], 48);
    assert_int_equal(g[1], 4);
    assert_int_equal(c[2], 24);
    assert_int_equal(g[2], 0);
    free(c);
    free(g);
    strvec_clear(&hosts);
    assert_int_equal(flux_r_per_node("[]", 2, &hosts, &c, &g, NULL), -1);
    /* a set without rank 0 (`flux resource R --states=allocated`): its
     * nodelist names its ranks, lowest first */
    r = "{\"execution\": {\"R_lite\": [{\"rank\": \"3\", \"children\": "
        "{\"core\": \"0\", \"gpu\": \"0-1\"}}, {\"rank\": \"1\", "
        "\"children\": {\"core\": \"2-3\"}}], \"nodelist\": [\"n1,n3\"]}}";
    assert_int_equal(flux_r_per_node(r, strlen(r), &hosts, &c, &g, NULL), 0);
    assert_int_equal(hosts.nr, 2);
    assert_string_equal(hosts.v[0], "n1");
    assert_int_equal(c[0], 2);
    assert_int_equal(g[0], 0);
    assert_int_equal(c[1], 1);
    assert_int_equal(g[1], 2);
    free(c);
    free(g);
    strvec_clear(&hosts);
    /* the GPU ids per host (flux_r_per_node_ids): one entry naming two
     * ranks gives both its ids; an id past 63 leaves that host's
     * unknown; a host without GPUs has none */
    {
        unsigned long long *ids = NULL;
        int *known = NULL;
        r = "{\"execution\": {\"R_lite\": [{\"rank\": \"0,3\", \"children\": "
            "{\"core\": \"0\", \"gpu\": \"0-1,3\"}}, {\"rank\": \"1\", "
            "\"children\": {\"core\": \"0\", \"gpu\": \"64\"}}, {\"rank\": "
            "\"2\", \"children\": {\"core\": \"0-1\"}}], \"nodelist\": "
            "[\"n[0-3]\"]}}";
        assert_int_equal(flux_r_per_node_ids(r, strlen(r), &hosts, &c, &g, &ids,
                                             &known, NULL),
                         0);
        assert_int_equal(hosts.nr, 4);
        assert_int_equal(g[0], 3);
        assert_int_equal(known[0], 1);
        assert_int_equal(ids[0], 0xb);
        assert_int_equal(known[3], 1);
        assert_int_equal(ids[3], 0xb);
        assert_int_equal(known[1], 0);
        assert_int_equal(ids[1], 0);
        assert_int_equal(known[2], 1);
        assert_int_equal(ids[2], 0);
        free(ids);
        free(known);
        free(c);
        free(g);
        strvec_clear(&hosts);
    }
    /* ranks and hosts that do not pair up: refused, not guessed */
    r = "{\"execution\": {\"R_lite\": [{\"rank\": \"0-2\", \"children\": "
        "{\"core\": \"0\"}}], \"nodelist\": [\"n[1-2]\"]}}";
    assert_int_equal(flux_r_per_node(r, strlen(r), &hosts, &c, &g, NULL), -1);
    strvec_clear(&hosts);
}

static void test_partitions_capture(void **state)
{
    FILE *fp = fopen(FIX "scontrol-partition-o.out", "r");
    struct strbuf sb = STRBUF_INIT;
    struct partition_info *p = NULL;
    size_t n = 0;
    char buf[4096];
    size_t k;
    if (!fp)
        skip();
    while ((k = fread(buf, 1, sizeof(buf), fp)) > 0)
        strbuf_add(&sb, buf, k);
    fclose(fp);
    assert_int_equal(parse_scontrol_partitions(sb.buf, sb.len, &p, &n, NULL),
                     0);
    assert_int_equal(n, 1);
    assert_string_equal(p[0].name, "debug");
    assert_string_equal(p[0].state, "UP");
    assert_int_equal(p[0].total_nodes, 1);
    assert_int_equal(p[0].total_cpus, 4);
    assert_int_equal(p[0].is_default, 1);
    partition_infos_free(p, n);
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_inventory),
        cmocka_unit_test(test_count_gpu_states),
        cmocka_unit_test(test_indexed_gpu_states),
        cmocka_unit_test(test_no_accounting),
        cmocka_unit_test(test_unmanaged_keeps_inventory),
        cmocka_unit_test(test_transport_failure_is_not_absence),
        cmocka_unit_test(test_flux_per_rank),
        cmocka_unit_test(test_flux_r_reader),
        cmocka_unit_test(test_partitions_capture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
