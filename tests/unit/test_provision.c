/*
 * test_provision.c - provisioners.json (libprovision/provision.c): a full
 * entry with its defaults, and the refusals that name the member (unknown
 * keys, bad numbers, plain http beyond loopback, duplicate profiles); the
 * status view and resume of a profile over a real platform.db; black-hole
 * nodes (strikes, exclusions, the sbatch argv, expiry) on an injected
 * clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libhostlist/hostlist.h"
#include "libprovision/provision.h"
#include "libstore/provreq.h"
#include "libstore/store.h"
#include "libstore/tasks.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

static const char good[] =
    "{\"provisioners\": [{\"name\": \"testa\", \"engine_url\": "
    "\"http://127.0.0.1:8765\", \"provision_timeout_s\": 10,"
    " \"profiles\": [{\"name\": \"cpu1\", \"cpus\": 1, \"ram_mb\": 500,"
    " \"sbatch\": [\"--partition=debug\"], \"prerun\": [\"true\"],"
    " \"walltime_s\": 300}, {\"name\": \"gpu1\", \"gpus\": 1,"
    " \"labels\": [\"a100\"]}]}]}";

static void test_parse_defaults(void **state)
{
    struct prov_config c;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    assert_int_equal(prov_config_parse(good, strlen(good), &c, &err), 0);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.v[0].cluster, "testa"); /* defaults to the name */
    assert_true(c.v[0].provision_timeout_s == 10);
    assert_true(c.v[0].max_idle_s == 300);
    assert_true(c.v[0].reconcile_s == 30);
    assert_int_equal(c.v[0].failed_starts, 3);
    assert_int_equal(c.v[0].failed_submits, 10);
    assert_string_equal(c.v[0].output_dir, ".exa/provision");
    assert_int_equal(c.v[0].np, 2);
    assert_string_equal(c.v[0].p[0].sbatch[0], "--partition=debug");
    assert_int_equal(c.v[0].p[1].cpus, 1);
    assert_int_equal(c.v[0].p[1].gpus, 1);
    assert_string_equal(c.v[0].p[1].labels[0], "a100");
    prov_config_release(&c);
}

static void refused(const char *text, const char *want)
{
    struct prov_config c;
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(prov_config_parse(text, strlen(text), &c, &err), -1);
    if (!strstr(err.text, want))
        fail_msg("'%s' does not say '%s'", err.text, want);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("[]", "expected {\"provisioners\"");
    refused("{\"provisioners\": [{\"name\": \"a\", \"engine_url\": "
            "\"http://127.0.0.1:1\", \"profile\": []}]}",
            "unknown member 'profile'");
    refused("{\"provisioners\": [{\"name\": \"a\", \"engine_url\": "
            "\"http://10.0.0.5:1\", \"profiles\": [{\"name\": \"p\"}]}]}",
            "needs \"insecure_http\": true");
    refused("{\"provisioners\": [{\"name\": \"a\", \"engine_url\": "
            "\"http://127.0.0.1:1\", \"profiles\": [{\"name\": \"p\","
            " \"cpus\": 0}]}]}",
            "profile 'p': 'cpus' must be an integer from 1 to 4096");
    refused("{\"provisioners\": [{\"name\": \"a\", \"engine_url\": "
            "\"http://127.0.0.1:1\", \"profiles\": [{\"name\": \"p\"},"
            " {\"name\": \"p\"}]}]}",
            "profile 'p' is named twice");
    refused("{\"provisioners\": [{\"name\": \"a\", \"engine_url\": "
            "\"http://127.0.0.1:1\", \"profiles\": [{\"name\": \"p\","
            " \"prerun\": [\"a\\nb\"]}]}]}",
            "'prerun' entry 0 must be a one-line string");
    refused("{\"provisioners\": [{\"name\": \"a\", \"engine_url\": "
            "\"ftp://x\", \"profiles\": [{\"name\": \"p\"}]}]}",
            "'engine_url' must start with http://");
    refused("{\"provisioners\": [{\"name\": \"a b\"}]}",
            "name must be [A-Za-z0-9._-]");
    refused("{\"provisioners\": [{\"name\": \"a\", \"engine_url\": "
            "\"https://127.0.0.1:1\", \"pin\": \"sha256//abc=\", "
            "\"profiles\": [{\"name\": \"p\"}]}]}",
            "provisioner 'a': 'pin' must be sha256//BASE64");
}

/* engine_kv worker_pin against each provisioner's "pin" */
static void test_status_pin(void **state)
{
    static const char pa[] =
        "sha256//gSGrAM/wMRhk/XNbIcb1KYRhEY+HpRfWI905jcE5AGY=";
    static const char pb[] =
        "sha256//PbPbn5sKPIt7zdm8Qj1GAaL+qvkkMU1bWrsRIArkJWc=";
    char *dir = tu_mkdtemp(), *db = xstrfmt("%s/platform.db", dir);
    char *text =
        xstrfmt("{\"provisioners\": ["
                "{\"name\": \"a\", \"engine_url\": \"https://127.0.0.1:1\", "
                "\"pin\": \"%s\", \"profiles\": [{\"name\": \"p1\"}]},"
                "{\"name\": \"b\", \"engine_url\": \"https://127.0.0.1:1\", "
                "\"pin\": \"%s;%s\", \"profiles\": [{\"name\": \"p2\"}]},"
                "{\"name\": \"c\", \"engine_url\": \"https://127.0.0.1:1\", "
                "\"profiles\": [{\"name\": \"p3\"}]}]}",
                pb, pb, pa);
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = store_open(db, &err);
    struct prov_config c;
    json_t *doc, *ps;
    (void)state;
    assert_non_null(st);
    assert_int_equal(prov_config_parse(text, strlen(text), &c, &err), 0);
    /* no listener has run: no pin, a provisioner's pin cannot match */
    doc = prov_view_status(st, &c, 10, 1000, &err);
    assert_non_null(doc);
    assert_true(json_is_null(
        json_object_get(json_object_get(doc, "engine"), "worker_pin")));
    ps = json_object_get(doc, "provisioners");
    assert_true(
        json_is_false(json_object_get(json_array_get(ps, 0), "pin_match")));
    json_decref(doc);
    assert_int_equal(store_engine_set(st, "worker_pin", pa, &err), 0);
    doc = prov_view_status(st, &c, 10, 1000, &err);
    assert_non_null(doc);
    assert_string_equal(
        jx_get_str(json_object_get(doc, "engine"), "worker_pin", ""), pa);
    ps = json_object_get(doc, "provisioners");
    assert_true(
        json_is_false(json_object_get(json_array_get(ps, 0), "pin_match")));
    assert_true(
        json_is_true(json_object_get(json_array_get(ps, 1), "pin_match")));
    assert_true(
        json_is_null(json_object_get(json_array_get(ps, 2), "pin_match")));
    /* without its own pin a provisioner's workers get the engine's */
    assert_string_equal(jx_get_str(json_array_get(ps, 2), "pin", ""), pa);
    json_decref(doc);
    prov_config_release(&c);
    store_close(st);
    free(text);
    free(db);
    tu_rmtree(dir);
    free(dir);
}

static void test_status_and_resume(void **state)
{
    char *dir = tu_mkdtemp(), *db = xstrfmt("%s/platform.db", dir);
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = store_open(db, &err);
    struct prov_config c;
    json_t *doc;
    (void)state;
    assert_non_null(st);
    assert_int_equal(prov_config_parse(good, strlen(good), &c, &err), 0);
    doc = prov_view_status(st, &c, 10, 1000, &err);
    assert_non_null(doc);
    assert_string_equal(
        jx_get_str(
            json_array_get(
                json_object_get(
                    json_array_get(json_object_get(doc, "provisioners"), 0),
                    "profiles"),
                1),
            "name", ""),
        "gpu1");
    assert_int_equal(json_array_size(json_object_get(doc, "requests")), 0);
    json_decref(doc);
    assert_int_equal(prov_resume(st, &c, "testa/cpu1", 1000, &err), 0);
    assert_int_equal(prov_resume(st, &c, "gpu1", 1000, &err), 0);
    assert_int_equal(prov_resume(st, &c, "nosuch", 1000, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    /* nothing outstanding: shutdown cancels nothing and needs no cluster */
    assert_int_equal(prov_shutdown_store(st, &c, NULL, 0, 1000, &err), 0);
    prov_config_release(&c);
    store_close(st);
    tu_rmtree(dir);
    free(dir);
    free(db);
}

/* ---- black-hole nodes (WORKERS.md §9.4) on an injected clock ---- */

struct xfix {
    char *dir, *db;
    store_t *st;
    struct prov_config c;
};

static void xfix_open(struct xfix *f, const char *extra)
{
    exa_error_t err = EXA_ERROR_INIT;
    char *text =
        xstrfmt("{\"provisioners\": [{\"name\": \"testa\", \"engine_url\": "
                "\"http://127.0.0.1:8765\"%s, \"output_dir\": \"out\","
                " \"drain_s\": 30, \"profiles\": [{\"name\": \"cpu1\"},"
                " {\"name\": \"gpu1\", \"gpus\": 1}]}]}",
                extra);
    f->dir = tu_mkdtemp();
    f->db = xstrfmt("%s/platform.db", f->dir);
    f->st = store_open(f->db, &err);
    assert_non_null(f->st);
    assert_int_equal(prov_config_parse(text, strlen(text), &f->c, &err), 0);
    free(text);
}

static void xfix_close(struct xfix *f)
{
    prov_config_release(&f->c);
    store_close(f->st);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
}

/* The sbatch argv the provisioner would run for profile prof at now, as
 * one line. Caller frees. */
static char *argv_at(struct xfix *f, const char *prof, double now)
{
    struct strbuf ex = STRBUF_INIT, line = STRBUF_INIT;
    struct strvec av = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(prov_exclusions_refresh(f->st, &f->c, now, &err) >= 0, 1);
    assert_int_equal(prov_excluded_nodes(f->st, "testa", prof, now, &ex, &err),
                     0);
    prov_sbatch_argv(&f->c.v[0], "exa-0badf00d-cpu1-1234abcd", ex.buf, &av);
    for (size_t i = 0; i < av.nr; i++)
        strbuf_addf(&line, "%s%s", i ? " " : "", av.v[i]);
    strvec_clear(&av);
    strbuf_release(&ex);
    return strbuf_detach(&line, NULL);
}

static long long count_events(store_t *st, const char *kind)
{
    struct wevent_rec *v = NULL;
    size_t n = 0;
    assert_int_equal(store_wevent_list(st, kind, 0, 0, &v, &n, NULL), 0);
    wevent_rec_free_list(v, n);
    return (long long)n;
}

static void test_exclude_failed_starts(void **state)
{
    struct xfix f;
    exa_error_t err = EXA_ERROR_INIT;
    const struct prov_entry *e;
    struct wevent_rec *ev = NULL;
    size_t nev = 0;
    json_t *d;
    char *a;
    (void)state;
    xfix_open(&f, "");
    e = &f.c.v[0];
    assert_true(e->exclude_node_s == 3600); /* the default */
    a = argv_at(&f, "cpu1", 1000);
    assert_string_equal(a, "sbatch --parsable "
                           "--job-name=exa-0badf00d-cpu1-1234abcd "
                           "--output=out/%j.out --no-requeue "
                           "--signal=B:USR1@30");
    free(a);
    /* one failed start on n1 excludes nothing */
    assert_int_equal(prov_node_strike(f.st, e, "cpu1", "n1", "failed_start",
                                      "r1", 1000, &err),
                     0);
    a = argv_at(&f, "cpu1", 1001);
    assert_null(strstr(a, "--exclude"));
    free(a);
    assert_int_equal(count_events(f.st, "worker_node_excluded"), 0);
    /* the second on the same node does, for that profile only */
    assert_int_equal(prov_node_strike(f.st, e, "cpu1", "n1", "failed_start",
                                      "r2", 1100, &err),
                     1);
    a = argv_at(&f, "cpu1", 1101);
    assert_non_null(strstr(a, " --exclude=n1"));
    assert_string_equal(strstr(a, "--exclude"), "--exclude=n1"); /* last */
    free(a);
    a = argv_at(&f, "gpu1", 1101);
    assert_null(strstr(a, "--exclude"));
    free(a);
    /* one event with node, profile, cluster, reason, until */
    assert_int_equal(
        store_wevent_list(f.st, "worker_node_excluded", 0, 0, &ev, &nev, &err),
        0);
    assert_int_equal(nev, 1);
    assert_string_equal(ev[0].cluster, "testa");
    assert_string_equal(ev[0].profile, "cpu1");
    d = json_loads(ev[0].detail, 0, NULL);
    assert_non_null(d);
    assert_string_equal(jx_get_str(d, "node", ""), "n1");
    assert_string_equal(jx_get_str(d, "profile", ""), "cpu1");
    assert_string_equal(jx_get_str(d, "cluster", ""), "testa");
    assert_string_equal(jx_get_str(d, "reason", ""), "failed_start");
    assert_true(json_number_value(json_object_get(d, "until")) == 1100 + 3600);
    json_decref(d);
    wevent_rec_free_list(ev, nev);
    /* a refresh does not exclude it again */
    assert_int_equal(prov_exclusions_refresh(f.st, &f.c, 1200, &err), 0);
    assert_int_equal(count_events(f.st, "worker_node_excluded"), 1);
    /* in force until 1100 + 3600, gone after */
    a = argv_at(&f, "cpu1", 4699);
    assert_non_null(strstr(a, "--exclude=n1"));
    free(a);
    a = argv_at(&f, "cpu1", 4701);
    assert_null(strstr(a, "--exclude"));
    free(a);
    /* the strikes that made it do not make another */
    assert_int_equal(count_events(f.st, "worker_node_excluded"), 1);
    xfix_close(&f);
}

static void test_exclude_two_nodes_and_window(void **state)
{
    struct xfix f;
    exa_error_t err = EXA_ERROR_INIT;
    const struct prov_entry *e;
    json_t *doc, *x;
    char *a;
    (void)state;
    xfix_open(&f, ", \"exclude_node_s\": 600");
    e = &f.c.v[0];
    /* n1 twice, n2 twice, n3 once: --exclude=n1,n2 */
    assert_int_equal(prov_node_strike(f.st, e, "cpu1", "n2", "failed_start",
                                      "r1", 1000, &err),
                     0);
    assert_int_equal(prov_node_strike(f.st, e, "cpu1", "n1", "failed_start",
                                      "r2", 1010, &err),
                     0);
    assert_int_equal(prov_node_strike(f.st, e, "cpu1", "n3", "failed_start",
                                      "r3", 1020, &err),
                     0);
    assert_int_equal(prov_node_strike(f.st, e, "cpu1", "n1", "failed_start",
                                      "r4", 1030, &err),
                     1);
    assert_int_equal(prov_node_strike(f.st, e, "cpu1", "n2", "failed_start",
                                      "r5", 1040, &err),
                     1);
    a = argv_at(&f, "cpu1", 1050);
    assert_string_equal(strstr(a, "--exclude"), "--exclude=n1,n2");
    free(a);
    /* strikes further apart than the window do not add up */
    assert_int_equal(prov_node_strike(f.st, e, "gpu1", "g1", "failed_start",
                                      "r6", 1000, &err),
                     0);
    assert_int_equal(prov_node_strike(f.st, e, "gpu1", "g1", "failed_start",
                                      "r7", 1601, &err),
                     0);
    a = argv_at(&f, "gpu1", 1602);
    assert_null(strstr(a, "--exclude"));
    free(a);
    /* the status view: each exclusion, and per profile its nodes */
    doc = prov_view_status(f.st, &f.c, 10, 1050, &err);
    assert_non_null(doc);
    x = json_object_get(doc, "exclusions");
    assert_int_equal(json_array_size(x), 2);
    assert_string_equal(jx_get_str(json_array_get(x, 0), "node", ""), "n1");
    assert_string_equal(jx_get_str(json_array_get(x, 1), "node", ""), "n2");
    assert_string_equal(jx_get_str(json_array_get(x, 1), "profile", ""),
                        "cpu1");
    assert_true(json_number_value(json_object_get(json_array_get(x, 1),
                                                  "until")) == 1040 + 600);
    x = json_object_get(
        json_array_get(
            json_object_get(
                json_array_get(json_object_get(doc, "provisioners"), 0),
                "profiles"),
            0),
        "excluded_nodes");
    assert_int_equal(json_array_size(x), 2);
    json_decref(doc);
    /* after the window: none shown */
    doc = prov_view_status(f.st, &f.c, 10, 1040 + 601, &err);
    assert_int_equal(json_array_size(json_object_get(doc, "exclusions")), 0);
    json_decref(doc);
    xfix_close(&f);
}

/* black-hole drains (the engine's strikes) count as failed starts do, are
 * turned into exclusions by the refresh, and survive a reopen of the
 * database (an engine restart) */
static void test_exclude_black_holes_persist(void **state)
{
    struct xfix f;
    exa_error_t err = EXA_ERROR_INIT;
    struct node_exclusion *v = NULL;
    size_t n = 0;
    char *a;
    (void)state;
    xfix_open(&f, "");
    assert_int_equal(store_node_strike_add(f.st, "testa", "gpu1", "g7",
                                           "black_hole", "w1", 1000, &err),
                     0);
    assert_int_equal(prov_exclusions_refresh(f.st, &f.c, 1001, &err), 0);
    assert_int_equal(store_node_strike_add(f.st, "testa", "gpu1", "g7",
                                           "black_hole", "w2", 1500, &err),
                     0);
    /* a failed start elsewhere and a black hole of another cluster's
     * profile of the same name change nothing here */
    assert_int_equal(store_node_strike_add(f.st, "testb", "gpu1", "g8",
                                           "black_hole", "w3", 1500, &err),
                     0);
    assert_int_equal(store_node_strike_add(f.st, "testb", "gpu1", "g8",
                                           "black_hole", "w4", 1501, &err),
                     0);
    assert_int_equal(prov_exclusions_refresh(f.st, &f.c, 1502, &err), 1);
    store_close(f.st);
    f.st = store_open(f.db, &err);
    assert_non_null(f.st);
    a = argv_at(&f, "gpu1", 1600);
    assert_string_equal(strstr(a, "--exclude"), "--exclude=g7");
    free(a);
    assert_int_equal(
        store_node_exclusions(f.st, "testa", "gpu1", 1600, &v, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].reason, "black_hole");
    assert_true(v[0].since == 1502 && v[0].until == 1502 + 3600);
    node_exclusions_free(v, n);
    /* one of each kind also excludes, naming both */
    assert_int_equal(prov_node_strike(f.st, &f.c.v[0], "cpu1", "c1",
                                      "black_hole", "w5", 2000, &err),
                     0);
    assert_int_equal(prov_node_strike(f.st, &f.c.v[0], "cpu1", "c1",
                                      "failed_start", "r1", 2001, &err),
                     1);
    assert_int_equal(
        store_node_exclusions(f.st, "testa", "cpu1", 2002, &v, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].reason, "black_hole,failed_start");
    node_exclusions_free(v, n);
    xfix_close(&f);
}

/* node names reach a command line only when they are node names; 0
 * turns the feature off */
static void test_exclude_refusals(void **state)
{
    static const char *const bad[] = {"",    "-x",   "a;b",  "a b", "n[1-2]",
                                      "a,b", "a..b", "$(x)", ".n",  NULL};
    struct xfix f;
    exa_error_t err = EXA_ERROR_INIT;
    char *a;
    (void)state;
    assert_true(hostlist_node_ok("testa-n1"));
    assert_true(hostlist_node_ok("gpu-03.cluster_x"));
    for (size_t i = 0; bad[i]; i++) {
        if (hostlist_node_ok(bad[i]))
            fail_msg("'%s' passed as a node name", bad[i]);
    }
    xfix_open(&f, "");
    assert_int_equal(prov_node_strike(f.st, &f.c.v[0], "cpu1", "a;reboot",
                                      "failed_start", "r1", 1000, &err),
                     -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    assert_non_null(strstr(err.text, "node 'a;reboot'"));
    assert_int_equal(store_node_strike_add(f.st, "testa", "cpu1", "n1", "bogus",
                                           NULL, 1000, &err),
                     -1);
    xfix_close(&f);
    xfix_open(&f, ", \"exclude_node_s\": 0");
    for (int i = 0; i < 3; i++)
        assert_int_equal(prov_node_strike(f.st, &f.c.v[0], "cpu1", "n1",
                                          "failed_start", "r", 1000 + i, &err),
                         0);
    a = argv_at(&f, "cpu1", 1010);
    assert_null(strstr(a, "--exclude"));
    free(a);
    xfix_close(&f);
    refused("{\"provisioners\": [{\"name\": \"a\", \"engine_url\": "
            "\"http://127.0.0.1:1\", \"exclude_node_s\": -1,"
            " \"profiles\": [{\"name\": \"p\"}]}]}",
            "'exclude_node_s' must be seconds from 0 to 604800");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_defaults),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_status_pin),
        cmocka_unit_test(test_status_and_resume),
        cmocka_unit_test(test_exclude_failed_starts),
        cmocka_unit_test(test_exclude_two_nodes_and_window),
        cmocka_unit_test(test_exclude_black_holes_persist),
        cmocka_unit_test(test_exclude_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
