/*
 * test_file_sd.c - file_sd groups in (cluster, job) order with exact
 * bytes, per-cluster ports and tenant, GPU-less nodes only under "node",
 * and the atomic writer's error when the directory is missing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "libobserve/file_sd.h"
#include "libutil/atomic.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static void test_groups_exact(void **state)
{
    struct fv_node a[] = {{.name = "gpu01", .gpus = 8},
                          {.name = "cpu01", .gpus = 0}};
    struct fv_node b[] = {{.name = "n1", .gpus = 0}};
    struct fv_cluster cl[] = {
        {.name = "alpha",
         .scheduler = "slurm",
         .node_port = 9100,
         .dcgm_port = 9400,
         .nodes = a,
         .nr_nodes = 2},
        {.name = "beta",
         .scheduler = "flux",
         .node_port = 19100,
         .dcgm_port = 9400,
         .tenant = "acme",
         .nodes = b,
         .nr_nodes = 1},
        {.name = "empty",
         .scheduler = "slurm",
         .node_port = 9100,
         .dcgm_port = 9400},
    };
    struct fv_fleet fleet = {cl, 3};
    size_t n = 0;
    json_t *g;
    char *text;
    (void)state;
    g = file_sd_build(&fleet, NULL, &n);
    assert_int_equal(n, 4);
    text = file_sd_render(g);
    assert_string_equal(text, "[\n"
                              "  {\n"
                              "    \"labels\": {\n"
                              "      \"cluster\": \"alpha\",\n"
                              "      \"job\": \"dcgm\",\n"
                              "      \"scheduler\": \"slurm\",\n"
                              "      \"tenant\": \"default\"\n"
                              "    },\n"
                              "    \"targets\": [\n"
                              "      \"gpu01:9400\"\n"
                              "    ]\n"
                              "  },\n"
                              "  {\n"
                              "    \"labels\": {\n"
                              "      \"cluster\": \"alpha\",\n"
                              "      \"job\": \"node\",\n"
                              "      \"scheduler\": \"slurm\",\n"
                              "      \"tenant\": \"default\"\n"
                              "    },\n"
                              "    \"targets\": [\n"
                              "      \"cpu01:9100\",\n"
                              "      \"gpu01:9100\"\n"
                              "    ]\n"
                              "  },\n"
                              "  {\n"
                              "    \"labels\": {\n"
                              "      \"cluster\": \"beta\",\n"
                              "      \"job\": \"node\",\n"
                              "      \"scheduler\": \"flux\",\n"
                              "      \"tenant\": \"acme\"\n"
                              "    },\n"
                              "    \"targets\": [\n"
                              "      \"n1:19100\"\n"
                              "    ]\n"
                              "  }\n"
                              "]\n");
    free(text);
    json_decref(g);
}

static void test_atomic_write(void **state)
{
    char tmpl[] = "/tmp/exa-filesd-XXXXXX";
    char *dir = mkdtemp(tmpl), *path, buf[64];
    exa_error_t err = EXA_ERROR_INIT;
    FILE *fp;
    size_t n;
    (void)state;
    assert_non_null(dir);
    path = xstrfmt("%s/targets.json", dir);
    assert_int_equal(atomic_write_file(path, "old\n", 4, 0644, &err), 0);
    assert_int_equal(atomic_write_file(path, "new\n", 4, 0644, &err), 0);
    fp = fopen(path, "r");
    assert_non_null(fp);
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    assert_string_equal(buf, "new\n");
    assert_int_equal(
        atomic_write_file("/nonexistent-exa/x.json", "x", 1, 0644, &err), -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_string_equal(err.text, "cannot write '/nonexistent-exa/x.json': No "
                                  "such file or directory");
    unlink(path);
    assert_int_equal(rmdir(dir), 0); /* no temporary left behind */
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_exact),
        cmocka_unit_test(test_atomic_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
