/*
 * test_placement.c - placement on synthetic snapshots: free GPUs of mixed
 * nodes count, down/drain/allocated/unknown nodes (and a not-responding
 * idle*, normalized to down) offer nothing, fit is per node, scorers rank
 * as documented, stale snapshots are flagged, and the JSON never holds
 * NaN or Infinity.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libfleet/placement.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"

#define NOW_ISO "2026-11-30T02:00:00Z"
#define OLD_ISO "2026-11-30T01:50:00Z" /* 600 s before NOW */

static time_t now_t(void)
{
    return place_parse_utc(NOW_ISO);
}

static struct node_row N(const char *name, const char *state, int gpus,
                         int used, int cpus) {
    struct node_row r;
    memset(&r, 0, sizeof(r));
    r.node = (char *)name;
    r.state = (char *)state;
    r.gpus = gpus;
    r.gpus_used = used;
    r.cpus = cpus;
    r.mem_mb = -1;
    r.captured_at = (char *)NOW_ISO;
    return r;
}

static struct place_cluster
C(const char *name, struct node_row *nodes, size_t n) {
    struct place_cluster c;
    memset(&c, 0, sizeof(c));
    c.name = name;
    c.scheduler = "slurm";
    c.nodes = nodes;
    c.nnodes = n;
    return c;
}

static void
test_capacity_rules(void **state)
{
    struct node_row nodes[] = {
        N("n1", "idle", 4, 0, 32),      /* 4 free, idle node */
        N("n2", "mixed", 4, 1, 32),     /* 3 free via GresUsed */
        N("n3", "mixed", 4, -1, 32),    /* mixed, use unknown: 0 */
        N("n4", "down", 4, 0, 32),      /* e.g. idle* normalized */
        N("n5", "drain", 4, 0, 32),     /* nothing */
        N("n6", "allocated", 4, 4, 32), /* nothing */
        N("n7", "unknown", 4, 0, 32),   /* nothing */
        N("n8", "idle", 0, -1, 8),      /* CPU-only idle node */
    };
    struct place_ask ask = {0, 0, 1, NULL};
    struct place_capacity cap;
    place_capacity_of(nodes, 8, &ask, now_t(), &cap);
    assert_int_equal(cap.total_nodes, 8);
    assert_int_equal(cap.total_gpus, 28);
    assert_int_equal(cap.idle_gpus, 7);
    assert_int_equal(cap.idle_nodes, 2);
    assert_int_equal(cap.usable_nodes, 4);
    assert_true(cap.age_s == 0);
}

static void test_fit_is_per_node(void **state)
{
    /* 8 one-GPU nodes do not fit 8 GPUs on one node, but fit 8 on 8 */
    struct node_row ones[8];
    struct place_cluster c;
    struct place_result r;
    struct place_ask one = {8, 0, 1, NULL}, eight = {8, 0, 8, NULL};
    char name[8][16];
    for (int i = 0; i < 8; i++) {
        snprintf(name[i], sizeof(name[i]), "n%d", i);
        ones[i] = N(name[i], "idle", 1, 0, 16);
    }
    c = C("spread", ones, 8);
    assert_int_equal(place_choose(&c, 1, &one, NULL, 300, now_t(), &r, NULL),
                     0);
    assert_int_equal(r.chosen, -1);
    assert_int_equal(r.cands[0].fits, 0);
    assert_int_equal(r.cands[0].cap.idle_gpus, 8);
    assert_string_equal(r.reason, "no ACTIVE cluster can satisfy the ask "
                                  "(gpus=8, nodes=1)");
    assert_string_equal(r.cands[0].why, "does not fit: 0 usable node(s) "
                                        "with >= 8 free GPU(s), need 1");
    place_result_release(&r);
    assert_int_equal(place_choose(&c, 1, &eight, NULL, 300, now_t(), &r, NULL),
                     0);
    assert_int_equal(r.chosen, 0);
    place_result_release(&r);
    /* ceil: 5 GPUs on 2 nodes need 3 per node */
    {
        struct node_row two[] = {N("a", "idle", 3, 0, 8),
                                 N("b", "mixed", 4, 2, 8)};
        struct place_ask a = {5, 0, 2, NULL};
        c = C("c", two, 2);
        assert_int_equal(place_choose(&c, 1, &a, NULL, 0, now_t(), &r, NULL),
                         0);
        assert_int_equal(r.cands[0].cap.per_node_gpus, 3);
        assert_int_equal(r.cands[0].cap.fit_nodes, 1);
        assert_int_equal(r.chosen, -1);
        place_result_release(&r);
    }
    /* CPUs per node are checked when known */
    {
        struct node_row two[] = {N("a", "idle", 4, 0, 8),
                                 N("b", "idle", 4, 0, 64)};
        struct place_ask a = {1, 32, 1, NULL};
        c = C("c", two, 2);
        assert_int_equal(place_choose(&c, 1, &a, NULL, 0, now_t(), &r, NULL),
                         0);
        assert_int_equal(r.cands[0].cap.fit_nodes, 1);
        assert_int_equal(r.chosen, 0);
        place_result_release(&r);
    }
}

static void test_least_loaded_and_reason(void **state)
{
    struct node_row a[] = {N("a1", "mixed", 4, 1, 32)};
    struct node_row b[] = {N("b1", "idle", 2, 0, 32),
                           N("b2", "idle*", 2, 0, 32)};
    struct node_row dead[] = {N("d1", "down", 8, 0, 32),
                              N("d2", "drain", 8, 0, 32)};
    struct place_cluster cl[3];
    struct place_result r;
    struct place_ask ask = {1, 0, 1, NULL};
    /* "idle*" is not a normalized state: it must not count as idle */
    cl[0] = C("testb", b, 2);
    cl[1] = C("testa", a, 1);
    cl[2] = C("dead", dead, 2);
    assert_int_equal(place_choose(cl, 3, &ask, NULL, 300, now_t(), &r, NULL),
                     0);
    assert_int_equal(r.chosen, 0);
    assert_string_equal(r.cands[0].name, "testa");
    assert_string_equal(r.reason,
                        "chose slurm@testa \u2014 3/4 idle GPUs, 0/1 idle "
                        "nodes");
    assert_string_equal(r.cands[1].name, "testb");
    assert_int_equal(r.cands[1].cap.idle_gpus, 2);
    assert_int_equal(r.cands[1].cap.idle_nodes, 1);
    assert_string_equal(r.cands[2].name, "dead");
    assert_int_equal(r.cands[2].fits, 0);
    assert_true(isnan(r.cands[2].score));
    assert_true(r.cands[1].margin_to_best == 999); /* 1999 - 1000 */
    place_result_release(&r);

    /* equal idle GPUs: more idle nodes wins */
    {
        struct node_row x[] = {N("x1", "idle", 2, 0, 8),
                               N("x2", "mixed", 2, 1, 8)};
        struct node_row y[] = {N("y1", "idle", 1, 0, 8),
                               N("y2", "idle", 2, 0, 8)};
        cl[0] = C("x", x, 2);
        cl[1] = C("y", y, 2);
        assert_int_equal(
            place_choose(cl, 2, &ask, NULL, 300, now_t(), &r, NULL), 0);
        assert_string_equal(r.cands[0].name, "y");
        assert_string_equal(r.reason, "chose slurm@y \u2014 3/3 idle GPUs, "
                                      "2/2 idle nodes");
        place_result_release(&r);
    }
    /* an empty fleet */
    assert_int_equal(place_choose(NULL, 0, &ask, NULL, 300, now_t(), &r, NULL),
                     0);
    assert_int_equal(r.chosen, -1);
    assert_string_equal(r.reason, "no ACTIVE clusters registered \u2014 'exa "
                                  "hpc connect' then 'exa hpc approve'");
    place_result_release(&r);
}

static void test_carbon_and_cost(void **state)
{
    struct node_row big[] = {N("b1", "idle", 8, 0, 32)};
    struct node_row small[] = {N("s1", "idle", 2, 0, 32)};
    struct node_row undeclared[] = {N("u1", "idle", 8, 0, 32)};
    struct place_cluster cl[3];
    struct place_result r;
    struct place_ask ask = {1, 0, 1, NULL};
    cl[0] = C("dirty", big, 1);
    cl[0].has_carbon_intensity = 1;
    cl[0].carbon_intensity = 600;
    cl[0].has_cost_per_gpu_hour = 1;
    cl[0].cost_per_gpu_hour = 1.0;
    cl[1] = C("green", small, 1);
    cl[1].has_carbon_intensity = 1;
    cl[1].carbon_intensity = 30;
    cl[1].has_cost_per_gpu_hour = 1;
    cl[1].cost_per_gpu_hour = 4.0;
    cl[2] = C("mystery", undeclared, 1);
    assert_int_equal(place_choose(cl, 3, &ask,
                                  place_scorer_find("carbon-aware"), 300,
                                  now_t(), &r, NULL),
                     0);
    assert_string_equal(r.cands[0].name, "green");
    assert_string_equal(r.cands[1].name, "dirty");
    assert_string_equal(r.cands[2].name, "mystery");
    assert_int_equal(r.cands[2].objective_available, 0);
    assert_int_equal(r.objective_unavailable, 1);
    place_result_release(&r);
    assert_int_equal(place_choose(cl, 3, &ask, place_scorer_find("cost-aware"),
                                  300, now_t(), &r, NULL),
                     0);
    assert_string_equal(r.cands[0].name, "dirty");
    place_result_release(&r);
    assert_int_equal(place_choose(cl, 3, &ask, NULL, 300, now_t(), &r, NULL),
                     0);
    assert_string_equal(r.cands[0].name, "dirty"); /* tie 7 GPUs: name */
    assert_string_equal(r.cands[1].name, "mystery");
    place_result_release(&r);
    assert_null(place_scorer_find("random"));
    assert_ptr_equal(place_scorer_find(NULL), place_scorer_find(""));
}

static void test_stale_and_json(void **state)
{
    struct node_row fresh[] = {N("f1", "idle", 2, 0, 8)};
    struct node_row old[] = {N("o1", "idle", 4, 0, 8)};
    struct node_row none[] = {N("z1", "down", 4, 0, 8)};
    struct place_cluster cl[3];
    struct place_result r;
    struct place_ask ask = {1, 0, 1, NULL};
    char *text;
    json_t *doc;
    old[0].captured_at = (char *)OLD_ISO;
    cl[0] = C("fresh", fresh, 1);
    cl[1] = C("old", old, 1);
    cl[2] = C("none", none, 1);
    assert_int_equal(place_choose(cl, 3, &ask, NULL, 300, now_t(), &r, NULL),
                     0);
    assert_string_equal(r.cands[0].name, "old");
    assert_int_equal(r.cands[0].stale, 1);
    assert_non_null(strstr(r.reason, "[stale snapshot: 600 s old, limit "
                                     "300 s]"));
    assert_non_null(strstr(r.cands[0].why, "snapshot 600 s old (limit "
                                           "300 s)"));
    doc = place_result_json(&r, 1);
    text = json_dumps(doc, JSON_COMPACT);
    assert_null(strstr(text, "Infinity"));
    assert_null(strstr(text, "NaN"));
    /* the non-fitting candidate has a null score in both lists */
    {
        json_t *c = json_array_get(json_object_get(doc, "candidates"), 2);
        json_t *e = json_array_get(
            json_object_get(json_object_get(doc, "explain"), "candidates"), 2);
        assert_string_equal(jx_get_str(c, "name", ""), "none");
        assert_true(json_is_null(json_object_get(c, "score")));
        assert_true(json_is_null(json_object_get(e, "score")));
        assert_true(json_is_null(json_object_get(e, "margin_to_best")));
        assert_int_equal(jx_get_int(e, "rank", 0), 3);
        assert_string_equal(jx_get_str(doc, "cluster", ""), "old");
        assert_string_equal(
            jx_get_str(json_object_get(doc, "explain"), "chosen", ""), "old");
    }
    /* a strict parser accepts it */
    json_decref(doc);
    doc = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(doc);
    json_decref(doc);
    free(text);
    place_result_release(&r);
    /* max_age 0 disables the check */
    assert_int_equal(place_choose(cl, 3, &ask, NULL, 0, now_t(), &r, NULL), 0);
    assert_int_equal(r.cands[0].stale, 0);
    place_result_release(&r);
    /* bad asks */
    {
        struct place_ask bad = {1, 0, 0, NULL};
        exa_error_t err = EXA_ERROR_INIT;
        assert_int_equal(place_choose(cl, 3, &bad, NULL, 0, now_t(), &r, &err),
                         -1);
        assert_int_equal(err.code, EXA_EUSAGE);
    }
}

static void test_env_and_time(void **state)
{
    setenv("EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S", "42", 1);
    assert_int_equal(place_max_age_from_env(), 42);
    setenv("EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S", "x", 1);
    assert_int_equal(place_max_age_from_env(), 300);
    unsetenv("EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S");
    assert_int_equal(place_max_age_from_env(), 300);
    assert_int_equal(place_parse_utc("1970-01-01T00:01:40Z"), 100);
    assert_int_equal(place_parse_utc("1970-01-01 00:01:40"), 100);
    assert_int_equal(place_parse_utc("yesterday"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_rules),
        cmocka_unit_test(test_fit_is_per_node),
        cmocka_unit_test(test_least_loaded_and_reason),
        cmocka_unit_test(test_carbon_and_cost),
        cmocka_unit_test(test_stale_and_json),
        cmocka_unit_test(test_env_and_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
