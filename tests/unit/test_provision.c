/*
 * test_provision.c - provisioners.json (libprovision/provision.c): a full
 * entry with its defaults, and the refusals that name the member (unknown
 * keys, bad numbers, plain http beyond loopback, duplicate profiles); the
 * status view and resume of a profile over a real platform.db.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libprovision/provision.h"
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
    doc = prov_view_status(st, &c, 10, &err);
    assert_non_null(doc);
    assert_true(json_is_null(
        json_object_get(json_object_get(doc, "engine"), "worker_pin")));
    ps = json_object_get(doc, "provisioners");
    assert_true(
        json_is_false(json_object_get(json_array_get(ps, 0), "pin_match")));
    json_decref(doc);
    assert_int_equal(store_engine_set(st, "worker_pin", pa, &err), 0);
    doc = prov_view_status(st, &c, 10, &err);
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
    doc = prov_view_status(st, &c, 10, &err);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_defaults),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_status_pin),
        cmocka_unit_test(test_status_and_resume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
