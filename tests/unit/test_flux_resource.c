/*
 * test_flux_resource.c - `flux resource list` / `status` tables to groups
 * and nodes (src/libdiscovery/parse_flux_resource.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libdiscovery/probe.h"
#include "libutil/json.h"

static json_t *parse(const char *in)
{
    const char *kind = NULL;
    return flux_resource_parse(in, strlen(in), &kind, NULL);
}

static json_t *node(json_t *res, size_t i)
{
    return json_array_get(json_object_get(res, "nodes"), i);
}

/* A node in free and allocated rows is mixed; cpus are summed only when
 * every row naming it covers that node alone. */
static void test_mixed_and_cpus(void **state)
{
    json_t *res = parse("     STATE NNODES   NCORES    NGPUS NODELIST\n"
                        "      free      2       10        2 n[1-2]\n"
                        " allocated      1        6        4 n1\n"
                        "      down      1       48        8 n3\n");
    assert_non_null(res);
    assert_int_equal(json_array_size(json_object_get(res, "nodes")), 3);
    assert_string_equal(jx_get_str(node(res, 0), "name", ""), "n1");
    assert_string_equal(jx_get_str(node(res, 0), "state", ""), "mixed");
    assert_string_equal(jx_get_str(node(res, 0), "raw_state", ""),
                        "allocated,free");
    assert_true(json_is_null(json_object_get(node(res, 0), "cpus")));
    assert_string_equal(jx_get_str(node(res, 1), "state", ""), "idle");
    assert_string_equal(jx_get_str(node(res, 2), "state", ""), "down");
    assert_int_equal(jx_get_int(node(res, 2), "cpus", -1), 48);
    assert_int_equal(jx_get_int(node(res, 2), "gpus", -1), 8);
    json_decref(res);

    res = parse("     STATE NNODES   NCORES    NGPUS NODELIST\n"
                "      free      1        2        1 n1\n"
                " allocated      1        6        3 n1\n");
    assert_string_equal(jx_get_str(node(res, 0), "state", ""), "mixed");
    assert_int_equal(jx_get_int(node(res, 0), "cpus", -1), 8);
    assert_int_equal(jx_get_int(node(res, 0), "gpus", -1), 4);
    json_decref(res);
}

/* Status view: worst state wins; a REASON with spaces stays one cell. */
static void test_status_view(void **state)
{
    json_t *res = parse("     STATE NNODES NODELIST   REASON\n"
                        "     avail      2 f[1-2]\n"
                        "   drained      1 f2         bad disk 2x\n"
                        "    torpid      1 f3\n");
    json_t *g = json_array_get(json_object_get(res, "groups"), 1);
    assert_string_equal(jx_get_str(node(res, 1), "state", ""), "drain");
    assert_string_equal(jx_get_str(node(res, 1), "raw_state", ""),
                        "avail,drained");
    assert_string_equal(jx_get_str(node(res, 2), "state", ""), "down");
    assert_int_equal(json_array_size(json_object_get(g, "nodelist")), 1);
    json_decref(res);
}

static void test_queues_and_rlist(void **state)
{
    json_t *res = parse("     STATE QUEUE      NNODES NODELIST\n"
                        "      free batch,gpu       1 a1\n"
                        "      free debug           1 a1\n");
    json_t *p = json_object_get(node(res, 0), "partitions");
    assert_int_equal(json_array_size(p), 3);
    assert_string_equal(json_string_value(json_array_get(p, 2)), "debug");
    json_decref(res);

    res = parse("     STATE NNODES   NCORES    NGPUS LIST\n"
                "      free      3       56        4 rank[0-1]/core[0-23],"
                "gpu[0-1] rank2/core[0-7]\n");
    json_t *g = json_array_get(json_object_get(res, "groups"), 0);
    assert_int_equal(json_array_size(json_object_get(g, "ranks")), 3);
    assert_int_equal(jx_get_int(g, "cores", -1), 56);
    assert_int_equal(jx_get_int(g, "gpus_list", -1), 4);
    assert_int_equal(json_array_size(json_object_get(res, "nodes")), 0);
    json_decref(res);
}

static void test_no_header_and_errors(void **state)
{
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    json_t *res = parse("      free      2       72        4 g[3-4]\n"
                        " allocated      0        0        0 \n");
    json_t *g = json_array_get(json_object_get(res, "groups"), 0);
    assert_int_equal(jx_get_int(g, "ngpus", -1), 4);
    assert_int_equal(json_array_size(json_object_get(res, "nodes")), 2);
    json_decref(res);

    const char *e = "flux-resource: ERROR: Unable to connect to Flux\n";
    assert_null(flux_resource_parse(e, strlen(e), &kind, &err));
    assert_non_null(strstr(err.text, "Unable to connect"));
    assert_string_equal(flux_resource_state_normalize("avail*"), "down");
    assert_string_equal(flux_resource_state_normalize("draining"), "drain");
    assert_string_equal(flux_resource_state_normalize("weird"), "unknown");
}

/* The real flux-core 0.88 status view (tests/fixtures/flux-real 77):
 * the header word STATEUP is STATE + UP; drain states complete a list
 * that folds them into "down", and R gives per-node counts (78). */
static void test_stateup_and_apply(void **state)
{
    const char *st = "       STATEUP NNODES NODELIST\n"
                     "    draining \xe2\x9c\x94      1 node0\n"
                     "     drained \xe2\x9c\x94      1 node1\n";
    const char *list = "     STATE NNODES NCORES NGPUS NODELIST\n"
                       "      free      0      0     0 \n"
                       " allocated      1      1     0 node0\n"
                       "      down      2      8     4 node[0-1]\n";
    const char *R = "{\"version\": 1, \"execution\": {\"R_lite\": [{\"rank\": "
                    "\"0-1\", \"children\": {\"core\": \"0-3\", \"gpu\": "
                    "\"0-1\"}}], \"starttime\": 0.0, \"expiration\": 0.0, "
                    "\"nodelist\": [\"node[0-1]\"]}}\n";
    json_t *res = parse(st), *g;

    assert_non_null(res);
    g = json_array_get(json_object_get(res, "groups"), 0);
    assert_string_equal(jx_get_str(g, "state", ""), "draining");
    assert_int_equal(json_integer_value(json_object_get(g, "nnodes")), 1);
    assert_string_equal(jx_get_str(node(res, 1), "state", ""), "drain");
    assert_string_equal(jx_get_str(node(res, 1), "raw_state", ""), "drained");
    json_decref(res);

    res = parse(list);
    /* the list alone: both down, counts unknown (grouped row) */
    assert_string_equal(jx_get_str(node(res, 0), "state", ""), "down");
    assert_true(json_is_null(json_object_get(node(res, 1), "cpus")));
    assert_int_equal(
        flux_resource_apply(res, st, strlen(st), R, strlen(R), NULL, 0), 4);
    assert_string_equal(jx_get_str(node(res, 0), "state", ""), "drain");
    assert_string_equal(jx_get_str(node(res, 0), "raw_state", ""), "draining");
    assert_string_equal(jx_get_str(node(res, 1), "raw_state", ""), "drained");
    assert_int_equal(json_integer_value(json_object_get(node(res, 0), "cpus")),
                     4);
    assert_int_equal(json_integer_value(json_object_get(node(res, 1), "gpus")),
                     2);
    /* unreadable texts change nothing */
    assert_int_equal(flux_resource_apply(res, "junk", 4, "{", 1, "[", 1), 0);
    json_decref(res);
}

/* A file's bytes, NUL-terminated (caller frees). */
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    char *buf;
    long n;
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    n = ftell(fp);
    assert_true(n >= 0);
    rewind(fp);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static long long node_ll(json_t *res, size_t i, const char *key)
{
    const json_t *v = json_object_get(node(res, i), key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

#define REAL "tests/fixtures/flux-real/"

/*
 * What jobs hold on each node, from the allocated set's R (real flux-core
 * 0.88 captures 96-99): the list puts a partly used node in its free and
 * its allocated row and cannot say how much of which; `flux resource R
 * --states=allocated` names the ranks, lowest first, and its nodelist
 * only the hosts of those ranks (99b: rank 1 alone is "node1").
 */
static void test_allocated_set(void **state)
{
    char *list = slurp(REAL "97-resource-list-cpu-node0-gpu-node1.stdout");
    char *al = slurp(REAL "98-resource-R-allocated-cpu-node0-gpu-node1.stdout");
    char *list2 = slurp(REAL "99a-resource-list-2gpus-node1.stdout");
    char *al2 = slurp(REAL "99b-resource-R-allocated-2gpus-node1.stdout");
    char *none = slurp(REAL "96-resource-R-allocated-none.stdout");
    json_t *res = parse(list);
    (void)state;

    assert_string_equal(jx_get_str(node(res, 0), "state", ""), "mixed");
    assert_int_equal(node_ll(res, 0, "gpus_used"), -1); /* list alone */
    assert_int_equal(flux_resource_apply(res, NULL, 0, NULL, 0, al, strlen(al)),
                     2);
    assert_string_equal(jx_get_str(node(res, 0), "name", ""), "node0");
    assert_int_equal(node_ll(res, 0, "cpus_used"), 1);
    assert_int_equal(node_ll(res, 0, "gpus_used"), 0);
    assert_int_equal(node_ll(res, 1, "cpus_used"), 1);
    assert_int_equal(node_ll(res, 1, "gpus_used"), 1);
    json_decref(res);

    res = parse(list2);
    assert_int_equal(
        flux_resource_apply(res, NULL, 0, NULL, 0, al2, strlen(al2)), 2);
    assert_string_equal(jx_get_str(node(res, 0), "name", ""), "node0");
    assert_string_equal(jx_get_str(node(res, 0), "state", ""), "idle");
    assert_int_equal(node_ll(res, 0, "gpus_used"), 0);
    assert_int_equal(node_ll(res, 1, "cpus_used"), 1);
    assert_int_equal(node_ll(res, 1, "gpus_used"), 2);
    /* nothing allocated: "R_lite": [], "nodelist": [""] */
    assert_int_equal(
        flux_resource_apply(res, NULL, 0, NULL, 0, none, strlen(none)), 2);
    assert_int_equal(node_ll(res, 1, "gpus_used"), 0);
    assert_int_equal(node_ll(res, 1, "cpus_used"), 0);
    json_decref(res);
    free(list);
    free(al);
    free(list2);
    free(al2);
    free(none);
}

/* The default queue of `flux queue list -n -o '{queuem}'` (capture 99j):
 * the name marked '*'; none marked, or not a name: NULL. */
static void test_default_queue(void **state)
{
    char *q = slurp(REAL "99j-queue-list-n-o-queuem.stdout");
    char *d = flux_default_queue(q, strlen(q));
    (void)state;
    assert_string_equal(d, "batch");
    free(d);
    free(q);
    assert_null(flux_default_queue("debug\nbatch\n", 12));
    assert_null(flux_default_queue("", 0));
    assert_null(flux_default_queue("*\n", 2));
    assert_null(flux_default_queue("a b*\n", 5));
    assert_null(flux_default_queue("\0\0*\n", 4)); /* found by fuzzing */
    assert_null(flux_default_queue("a\tb*\n", 5));
    d = flux_default_queue("  gpu*  \r\n", 10);
    assert_string_equal(d, "gpu");
    free(d);
    /* how many queues a listing names, the default included */
    q = slurp(REAL "99j-queue-list-n-o-queuem.stdout");
    assert_int_equal(flux_queue_count(q, strlen(q)), 2);
    free(q);
    assert_int_equal(flux_queue_count("\n", 1), 0); /* no queues */
    assert_int_equal(flux_queue_count("debug\nbatch\n", 12), 2);
    assert_int_equal(flux_queue_count("a b\n*\n\0\n", 8), 0);
}

/* `flux queue list -n -o FLUX_QUEUE_LIST_FORMAT` of flux-core 0.88
 * (tests/fixtures/flux-real 99p-99s): each queue a partition, the default
 * marked, enabled/started as Slurm's partition states, the time limit as
 * Slurm prints MaxTime; no queues is one anonymous row, no partition. */
static void test_queue_list(void **state)
{
    static const char *const files[] = {
        REAL "99q-queue-list-exa-format-limits.stdout",
        REAL "99r-queue-list-exa-format-disabled-stopped.stdout",
        REAL "99s-queue-list-exa-format-no-queues.stdout"};
    struct partition_info *p = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    char *q = slurp(files[0]);
    (void)state;
    assert_int_equal(parse_flux_queue_list(q, strlen(q), &p, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(p[0].name, "debug");
    assert_int_equal(p[0].is_default, 0);
    assert_string_equal(p[0].state, "UP");
    assert_string_equal(p[0].max_time, "01:00:00"); /* 3600.0 */
    assert_int_equal(p[0].max_nodes, 1);
    assert_int_equal(p[0].total_nodes, 1);
    assert_int_equal(p[0].total_cpus, 4);
    assert_string_equal(p[1].name, "batch");
    assert_int_equal(p[1].is_default, 1);
    assert_string_equal(p[1].max_time, "UNLIMITED"); /* inf */
    assert_int_equal(p[1].max_nodes, -1);
    partition_infos_free(p, n);
    free(q);
    /* debug disabled (takes no job, runs its own), batch stopped (takes
     * jobs, starts none) */
    q = slurp(files[1]);
    assert_int_equal(parse_flux_queue_list(q, strlen(q), &p, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(p[0].state, "DRAIN");
    assert_string_equal(p[1].state, "DOWN");
    partition_infos_free(p, n);
    free(q);
    q = slurp(files[2]);
    assert_int_equal(parse_flux_queue_list(q, strlen(q), &p, &n, &err), 0);
    assert_int_equal(n, 0);
    partition_infos_free(p, n);
    free(q);
    /* both stopped and disabled; a day and a half rounds up to seconds */
    q = "gpu\037disabled\037stopped\037129600.5\0378\0372\03764\0378\n";
    assert_int_equal(parse_flux_queue_list(q, strlen(q), &p, &n, &err), 0);
    assert_string_equal(p[0].state, "INACTIVE");
    assert_string_equal(p[0].max_time, "1-12:00:01");
    partition_infos_free(p, n);
    /* a duration limit of 0 is none (flux's DURATION_UNLIMITED) */
    q = "gpu\037enabled\037started\0370.0\037inf\0372\03764\0378\n";
    assert_int_equal(parse_flux_queue_list(q, strlen(q), &p, &n, &err), 0);
    assert_string_equal(p[0].max_time, "UNLIMITED");
    partition_infos_free(p, n);
    /* not this format: one error naming the row, nothing returned */
    {
        static const char *const bad[] = {
            "debug\n", /* 1 field */
            "debug\037enabled\037started\037inf\037inf\0371\0374\n", /* 7 */
            "a b\037enabled\037started\037inf\037inf\0371\0374\0372\n",
            "*\037enabled\037started\037inf\037inf\0371\0374\0372\n",
            "q\037on\037started\037inf\037inf\0371\0374\0372\n",
            "q\037enabled\037started\037inf\037inf\0371\0374\0372\037x\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            exa_error_t e = EXA_ERROR_INIT;
            p = (struct partition_info *)1;
            assert_int_equal(
                parse_flux_queue_list(bad[i], strlen(bad[i]), &p, &n, &e), -1);
            assert_null(p);
            assert_int_equal(n, 0);
            assert_int_equal(e.code, EXA_EPARSE);
            assert_non_null(strstr(e.text, "row 1"));
        }
    }
}

/* flux version (tests/fixtures/flux-real/01-flux-version.stdout): the commands
 * version. */
static void test_version(void **state)
{
    const char *v = "commands:    \t\t0.88.0\nlibflux-core:\t\t0.88.0\n"
                    "broker:  \t\t0.88.0\n";
    char *s = flux_version_parse(v, strlen(v));
    assert_string_equal(s, "0.88.0");
    free(s);
    assert_null(flux_version_parse("broker: 1\n", 10));
    assert_null(flux_version_parse("commands:  \n", 12));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_and_cpus),
        cmocka_unit_test(test_status_view),
        cmocka_unit_test(test_queues_and_rlist),
        cmocka_unit_test(test_no_header_and_errors),
        cmocka_unit_test(test_stateup_and_apply),
        cmocka_unit_test(test_allocated_set),
        cmocka_unit_test(test_default_queue),
        cmocka_unit_test(test_queue_list),
        cmocka_unit_test(test_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
