/*
 * test_slurm_states.c - the doc/formats.md state tables (node and job), GRES
 * and TRES GPU counting, row by row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libres/gres.h"
#include "libdiscovery/nodestate.h"
#include "libsched/parse_slurm.h"

static void test_node_states(void **state)
{
    static const char *t[][2] = {
        {"idle", "idle"},
        {"alloc", "allocated"},
        {"allocated", "allocated"},
        {"alloc+", "allocated"},
        {"mix", "mixed"},
        {"mixed-", "mixed"},
        {"comp", "allocated"},
        {"completing", "allocated"},
        {"drain", "drain"},
        {"drained*", "drain"},
        {"drng", "drain"},
        {"draining", "drain"},
        {"down", "down"},
        {"down*", "down"},
        {"down~", "down"},
        {"fail", "drain"},
        {"failing", "drain"},
        {"inval", "down"},
        {"maint", "drain"},
        {"maint*", "drain"},
        {"resv", "idle"},
        {"reserved", "idle"},
        {"plnd", "idle"},
        {"blocked", "idle"},
        {"boot", "down"},
        {"boot^", "down"},
        {"reboot", "down"},
        {"futr", "unknown"},
        {"unk*", "unknown"},
        {"npc", "unknown"},
        {"cloud", "unknown"},
        {"idle*", "down"},
        {"mix*", "down"},
        {"alloc*", "down"},
        {"comp*", "down"},
        {"idle~", "idle"},
        {"idle#", "idle"},
        {"idle!", "idle"},
        {"idle%", "idle"},
        {"idle$", "idle"},
        {"idle@", "idle"},
        {"MIXED", "mixed"},
        {"bogus", "unknown"},
        /* StateComplete, resolution order */
        {"idle+drain", "drain"},
        {"mixed+drain", "drain"},
        {"idle+drain+not_responding", "drain"},
        {"idle+cloud+powered_down", "idle"},
        {"down+not_responding", "down"},
        {"down+drain", "down"},
        {"mixed+completing", "mixed"},
        {"idle+completing", "allocated"},
        {"idle+maintenance+reserved", "drain"},
        {"idle+not_responding", "down"},
        {"idle+invalid_reg", "down"},
        {"idle+dynamic_norm", "idle"},
        {"future+cloud", "unknown"},
        {"unknown+not_responding", "unknown"},
        {"allocated+power_down", "allocated"},
        {"idle+drain+fail", "drain"},
        {"mixed+planned", "mixed"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const char *got = slurm_node_state_normalize(t[i][0]);
        if (!got || strcmp(got, t[i][1]))
            fail_msg("'%s': got '%s', expected '%s'", t[i][0],
                     got ? got : "(null)", t[i][1]);
    }
    assert_null(slurm_node_state_normalize(""));
    assert_null(slurm_node_state_normalize(NULL));
}

static void test_job_states(void **state)
{
    static const char *t[][2] = {
        {"PENDING", "PENDING"},
        {"PD", "PENDING"},
        {"REQUEUED", "PENDING"},
        {"RH", "PENDING"},
        {"RESV_DEL_HOLD", "PENDING"},
        {"RD", "PENDING"},
        {"SE", "PENDING"},
        {"CONFIGURING", "PENDING"},
        {"CF", "PENDING"},
        {"RUNNING", "RUNNING"},
        {"R", "RUNNING"},
        {"COMPLETING", "RUNNING"},
        {"CG", "RUNNING"},
        {"STAGE_OUT", "RUNNING"},
        {"SI", "RUNNING"},
        {"RS", "RUNNING"},
        {"SUSPENDED", "SUSPENDED"},
        {"S", "SUSPENDED"},
        {"ST", "SUSPENDED"},
        {"STOPPED", "SUSPENDED"},
        {"COMPLETED", "COMPLETED"},
        {"CD", "COMPLETED"},
        {"FAILED", "FAILED"},
        {"F", "FAILED"},
        {"OUT_OF_MEMORY", "FAILED"},
        {"OOM", "FAILED"},
        {"NODE_FAIL", "FAILED"},
        {"BF", "FAILED"},
        {"PREEMPTED", "FAILED"},
        {"PR", "FAILED"},
        {"CANCELLED", "CANCELLED"},
        {"CA", "CANCELLED"},
        {"CANCELLED by 54321", "CANCELLED"},
        {"CANCELLED+", "CANCELLED"},
        {"REVOKED", "CANCELLED"},
        {"RV", "CANCELLED"},
        {"TIMEOUT", "TIMEOUT"},
        {"TO", "TIMEOUT"},
        {"DEADLINE", "TIMEOUT"},
        {"DL", "TIMEOUT"},
        {"COMPLETIN", "RUNNING"}, /* truncated: unique prefix */
        {"OUT_OF_ME+", "FAILED"},
        {"NODE_FA+", "FAILED"},
        {"COMP", "UNKNOWN"}, /* COMPLETED or COMPLETING */
        {"RUNING", "UNKNOWN"},
        {"", "UNKNOWN"},
        {"running", "RUNNING"},
    };
    char *raw = NULL;
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const char *got = slurm_job_state_normalize(t[i][0], NULL);
        if (strcmp(got, t[i][1]))
            fail_msg("'%s': got '%s', expected '%s'", t[i][0], got, t[i][1]);
    }
    assert_string_equal(slurm_job_state_normalize(" CANCELLED by 0 ", &raw),
                        "CANCELLED");
    assert_string_equal(raw, "CANCELLED by 0");
    free(raw);
    assert_true(slurm_job_state_terminal("TIMEOUT"));
    assert_false(slurm_job_state_terminal("RUNNING"));
}

static void test_gres(void **state)
{
    static const struct {
        const char *in;
        long long gpus;
        const char *types;
    } t[] = {
        {"gpu:8", 8, ""},
        {"gpu:8(S:0-3)", 8, ""},
        {"gpu:l4:4(S:1,3,5,7),ssd:1", 4, "l4"},
        {"gpu:model_a:2,gpu:model_b:2", 4, "model_a,model_b"},
        {"gpu:a100:2(S:1),ssd:1", 2, "a100"},
        {"gpu:4,shard:20", 4, ""},
        {"gpu:1(IDX:0),shard:8(-/5,5/5,3/5,0/5)", 1, ""},
        {"gpu:tesla:3(IDX:0,2-3)", 3, "tesla"},
        {"gpu:nvidia_a100_80gb:8,mig:nvidia_a100_3g.40gb:7,"
         "gpu:nvidia_h100_80gb:4",
         12, "nvidia_a100_80gb,nvidia_h100_80gb"},
        {"gpu:a100:no_consume:2", 2, "a100"},
        {"nsight:no_consume:1", 0, ""},
        {"tmp:844G", 0, ""},
        {"(null)", 0, ""},
        {"gpu:4,shard:h10", 4, ""}, /* truncated entry ignored */
        {"gres/gpu:l4:1", 1, "l4"},
        {"gres:gpu:1", 1, ""},
        {"gres/gpfs:ess:1", 0, ""},
        {"gpu:a:1,gpu:a:1", 2, "a"},
        {"gpu:(null):2(IDX:0-1)", 2, ""}, /* untyped GresUsed */
        {"gpu:2(S:1)", 2, ""},
        {"gpu:a100:4(S:0-1)junk", 0, ""}, /* not a GRES entry */
        {"gpu:a100:4(S:0-", 4, "a100"},   /* cut inside the group */
        {"gpu:a:4611686018427387904,gpu:b:4611686018427387904", -1, "a,b"},
        {"gpu:99999999999999999999", 0, ""}, /* not a count: ignored */
        {"gpu::4", 4, ""},                   /* empty type (fuzz_tres) */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct gres_info gi;
        const char *types;
        gres_parse(t[i].in, &gi);
        types = gi.types ? gi.types : "";
        if (gi.gpus != t[i].gpus || strcmp(types, t[i].types))
            fail_msg("'%s': %lld '%s', expected %lld '%s'", t[i].in, gi.gpus,
                     types, t[i].gpus, t[i].types);
        gres_info_release(&gi);
    }
}

/* gres_used_gpu_mask: the GRES indices of GresUsed (sinfo -O GresUsed,
 * the forms of the vpenso_pr83 and sckyzo cases), and every form that
 * leaves them unknown. */
static void test_gres_used_idx(void **state)
{
    static const struct {
        const char *in;
        int rc;
        unsigned long long mask;
    } t[] = {
        {"gpu:a100:2(IDX:0-1)", 1, 0x3},
        {"gpu:tesla:3(IDX:0,2-3)", 1, 0xd},
        {"gpu:tesla:0(IDX:N/A)", 1, 0},
        {"gpu:tesla:1(IDX:3)", 1, 0x8},
        {"gpu:a:1(IDX:0),gpu:b:2(IDX:2-3)", 1, 0xd},
        {"gres/gpu:a100:1(IDX:5)", 1, 0x20},
        {"gpu:(null):2(IDX:0-1)", 1, 0x3},
        {"gpu:0", 0, 0}, /* a CPU node, or no_consume GPUs: no list */
        {"gpu:a100:0", 0, 0},
        {"(null)", 0, 0}, /* no GRES: no gpu entry */
        {"", 0, 0},
        {"N/A", 0, 0},
        {"nic:0", 0, 0},
        {"gpu:a100:1(IDX:63)", 1, 1ULL << 63},
        {"gpu:a100:1(IDX:0),tmpdisk:100", 1, 0x1}, /* not a GPU: ignored */
        {"gpu:a100:0(IDX:N/A),shard:a100:0(0/4,0/4)", 1, 0},
        /* unknown */
        {"gpu:a100:0(IDX:N/A),shard:a100:3(2/4,1/4)", 0, 0}, /* shards in use */
        {"gpu:a100:0(IDX:N/A),mps:100", 0, 0},
        {"gpu:a100:no_consume:4", 0, 0},
        {"gpu:a100:2", 0, 0},          /* no IDX (an old Slurm) */
        {"gpu:a100:2(IDX:0)", 0, 0},   /* fewer than the count */
        {"gpu:a100:1(IDX:0-1)", 0, 0}, /* more */
        {"gpu:a100:2(IDX:1,1)", 0, 0}, /* an index twice */
        {"gpu:a100:1(IDX:64)", 0, 0},  /* past 64 GPUs */
        {"gpu:a100:1(IDX:100)", 0, 0},
        {"gpu:a100:2(IDX:0-", 0, 0}, /* a cut column */
        {"gpu:a100:2(IDX:1-0)", 0, 0},
        {"gpu:a100:2(IDX:0,1,)", 0, 0},
        {"gpu:a100:2(IDX:,0-1)", 0, 0},
        {"gpu:a100:1(IDX:N/A)", 0, 0},
        {"gpu:a100:1(S:0)", 0, 0}, /* a Gres group, not IDX */
        {"gpu:a100:2(IDX:0-1),gpu:b:1", 0, 0},
        {"gpu:a100:2(IDX:0-1),", 0, 0}, /* cut after an entry */
        /* a list of 62 bytes or more: Slurm's 64-byte buffer may have
         * cut it (63 bytes since 22.05, 62 before) */
        {"gpu:a100:23(IDX:0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,"
         "36,38,40,42,44)",
         0, 0},
        {"gpu:a100:23(IDX:0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,"
         "36,38,40,42,5)", /* 62 bytes: 21.08 cut "...,42,53" */
         0, 0},
        {"gpu:a100:19(IDX:0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,"
         "36)",
         1, 0x1555555555ULL},
        {"gpu:a100:x(IDX:0)", 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        unsigned long long m = 0xff;
        int rc = gres_used_gpu_mask(t[i].in, &m);
        if (rc != t[i].rc || m != t[i].mask)
            fail_msg("'%s': %d %#llx, expected %d %#llx", t[i].in, rc, m,
                     t[i].rc, t[i].mask);
    }
}

static void test_tres(void **state)
{
    static const struct {
        const char *in;
        int rc;
        long long gpus;
    } t[] = {
        {"billing=10485,cpu=12,gres/gpu=1,mem=128G,node=1", 1, 1},
        {"billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=500M,node=1", 1, 1},
        {"gres/gpu=1,gres/gpu:a100=1", 1, 1}, /* never both */
        {"cpu=8,gres/gpu:a100=2,gres/gpu:h100=2", 1, 4},
        {"cpu=2,mem=4G,node=1,billing=2", 1, 0},
        {"billing=16,cpu=4", 1, 0}, /* billing is no GPU */
        {"", 0, 0},
        {"N/A", 0, 0},
        {"cpu=2,mem=4G,gres/gp+", 0, 0}, /* truncated */
        {"cpu=2,gres/gpu", 0, 0},
        {"cpu=2,mem=512M,node=", 0, 0}, /* -O cut at 20: null */
        {"cpu=2,gres/gpu=", 0, 0},
        {"gres/gpu=4611686018427387904", 1, 4611686018427387904LL},
        {"gres/gpu=9223372036854775807", 1, 9223372036854775807LL},
        {"gres/gpu=9223372036854775808", 0, 0}, /* not a count */
        {"gres/gpu:a=4611686018427387904,gres/gpu:b=4611686018427387904", 0,
         0}, /* sum overflows: null */
        {"gres/gpu:a=4611686018427387904,gres/gpu:b=4611686018427387903", 1,
         9223372036854775807LL},
        {"gres/gpu=-1", 0, 0},
        {"gres/gpu=+1", 0, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        long long g = -7;
        int rc = tres_gpus(t[i].in, &g);
        if (rc != t[i].rc || (rc && g != t[i].gpus))
            fail_msg("'%s': rc %d gpus %lld, expected rc %d gpus %lld", t[i].in,
                     rc, g, t[i].rc, t[i].gpus);
    }
}

static void test_tres_parse(void **state)
{
    struct tres_info t;
    (void)state;
    assert_int_equal(
        tres_parse("billing=4,cpu=4,gres/gpu=2,mem=3.91G,node=2", &t), 1);
    assert_int_equal(t.has_gpus, 1);
    assert_int_equal(t.gpus, 2);
    assert_int_equal(t.has_cpus, 1);
    assert_int_equal(t.cpus, 4);
    assert_int_equal(t.has_nodes, 1);
    assert_int_equal(t.nodes, 2);
    assert_int_equal(t.has_mem, 1);
    assert_true(t.mem_bytes == 4198330531ULL);
    assert_int_equal(tres_parse("cpu=x,mem=16E,node=99999999999999999999", &t),
                     1); /* unreadable non-GPU values are just not named */
    assert_int_equal(t.has_cpus, 0);
    assert_int_equal(t.has_mem, 0);
    assert_int_equal(t.has_nodes, 0);
    assert_int_equal(t.gpus, 0);
    assert_int_equal(tres_parse("N/A", &t), 0);
    assert_int_equal(t.has_gpus, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_states),   cmocka_unit_test(test_job_states),
        cmocka_unit_test(test_gres),          cmocka_unit_test(test_tres),
        cmocka_unit_test(test_gres_used_idx), cmocka_unit_test(test_tres_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
