/*
 * test_jobmap.c - GPU list parsing, and the prolog/epilog round trip on a
 * temporary directory: the right files hold the right ids, two jobs that
 * share a node (and a GPU) keep their own ids, the epilog is idempotent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "libobserve/jobmap.h"
#include "libutil/strbuf.h"

static char *join(const struct strvec *sv)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < sv->nr; i++)
        strbuf_addf(&sb, "%s%s", i ? "|" : "", sv->v[i]);
    return strbuf_detach(&sb, NULL);
}

static void test_parse(void **state)
{
    struct {
        const char *in;
        const char *want; /* NULL: error */
    } cases[] = {
        {"0,2,3", "0|2|3"}, {" 1 , 0 ", "1|0"},
        {"0-3", "0|1|2|3"}, {"2,0-2", "2|0|1"},
        {"03", "3"},        {"2.0,2.1", "2.0|2.1"},
        {"", ""},           {"GPU-5d1e0a2b", NULL},
        {"0,,1", NULL},     {"3-1", NULL},
        {"x", NULL},        {"-1", NULL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strvec sv = STRVEC_INIT;
        exa_error_t err = EXA_ERROR_INIT;
        int rc = jobmap_parse_gpus(cases[i].in, &sv, &err);
        if (!cases[i].want) {
            assert_int_equal(rc, -1);
            assert_int_equal(err.code, EXA_EUSAGE);
        } else {
            char *got = join(&sv);
            assert_int_equal(rc, 0);
            assert_string_equal(got, cases[i].want);
            free(got);
        }
        strvec_clear(&sv);
    }
}

static void test_env_order(void **state)
{
    struct strvec sv = STRVEC_INIT;
    const char *src;
    char *got;
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    setenv("SLURM_STEP_GPUS", "5", 1);
    setenv("SLURM_JOB_GPUS", "6,7", 1);
    assert_int_equal(jobmap_gpus_from_env(&sv, &src, NULL), 0);
    assert_string_equal(src, "SLURM_JOB_GPUS");
    got = join(&sv);
    assert_string_equal(got, "6|7");
    free(got);
    strvec_clear(&sv);
    unsetenv("SLURM_JOB_GPUS");
    assert_int_equal(jobmap_gpus_from_env(&sv, &src, NULL), 0);
    assert_string_equal(src, "SLURM_STEP_GPUS");
    strvec_clear(&sv);
    unsetenv("SLURM_STEP_GPUS");
    unsetenv("CUDA_VISIBLE_DEVICES");
    assert_int_equal(jobmap_gpus_from_env(&sv, &src, NULL), 0);
    assert_null(src);
    assert_int_equal(sv.nr, 0);
}

static char *slurp(const char *dir, const char *name)
{
    char path[512];
    char buf[256];
    size_t n;
    FILE *fp;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fp = fopen(path, "r");
    if (!fp)
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return strdup(buf);
}

static void assert_file(const char *dir, const char *name, const char *want)
{
    char *got = slurp(dir, name);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_round_trip_two_jobs(void **state)
{
    char tmpl[] = "/tmp/exa-jobmap-XXXXXX";
    char *base = mkdtemp(tmpl);
    char dir[600];
    struct strvec a = STRVEC_INIT, b = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    assert_non_null(base);
    snprintf(dir, sizeof(dir), "%s/map", base); /* created by the prolog */
    strvec_pushl(&a, "0", "1", "3", NULL);
    strvec_pushl(&b, "2", "3", NULL); /* GPU 3 shared (shards) */

    assert_int_equal(jobmap_prolog(dir, "184729", &a, &err), 3);
    assert_int_equal(jobmap_prolog(dir, "184729", &a, &err), 0); /* again */
    assert_int_equal(jobmap_prolog(dir, "184730", &b, &err), 2);
    assert_file(dir, "0", "184729\n");
    assert_file(dir, "1", "184729\n");
    assert_file(dir, "2", "184730\n");
    assert_file(dir, "3", "184729\n184730\n");

    assert_int_equal(jobmap_epilog(dir, "184729", &err), 3);
    assert_file(dir, "0", NULL);
    assert_file(dir, "1", NULL);
    assert_file(dir, "2", "184730\n");
    assert_file(dir, "3", "184730\n");
    assert_int_equal(jobmap_epilog(dir, "184729", &err), 0); /* again */

    assert_int_equal(jobmap_epilog(dir, "184730", &err), 2);
    assert_file(dir, "2", NULL);
    assert_file(dir, "3", NULL);
    assert_int_equal(rmdir(dir), 0); /* nothing left behind, no temp */
    assert_int_equal(rmdir(base), 0);
    /* a missing directory is nothing to undo */
    assert_int_equal(jobmap_epilog(dir, "184730", &err), 0);
    strvec_clear(&a);
    strvec_clear(&b);
}

static void test_bad_job_id(void **state)
{
    struct strvec a = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    strvec_push(&a, "0");
    assert_int_equal(jobmap_prolog("/nonexistent", "1\n2", &a, &err), -1);
    assert_string_equal(err.text, "invalid job id '1\n2'");
    assert_int_equal(jobmap_prolog("/nonexistent", "../x", &a, &err), -1);
    assert_true(jobmap_valid_job_id("123_4"));
    assert_true(jobmap_valid_job_id("93+0"));
    assert_false(jobmap_valid_job_id(""));
    strvec_clear(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_env_order),
        cmocka_unit_test(test_round_trip_two_jobs),
        cmocka_unit_test(test_bad_job_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
