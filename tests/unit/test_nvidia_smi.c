/*
 * test_nvidia_smi.c - nvidia-smi CSV parsing (src/libdiscovery/
 * parse_nvidia_smi.c) against the real H200 capture in
 * tests/fixtures/nvidia-smi/h200-nvidia-smi.txt (a transcript of several
 * nvidia-smi runs, each section opened by a "### title" line).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libdiscovery/parse_nvidia_smi.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"

#define CAPTURE "tests/fixtures/nvidia-smi/h200-nvidia-smi.txt"

/* The bytes of the capture section titled title (up to the next ###). */
static char *section(const char *title, size_t *len)
{
    FILE *fp = fopen(CAPTURE, "rb");
    struct strbuf all = STRBUF_INIT, out = STRBUF_INIT;
    char buf[4096], *p, *end;
    size_t n;

    assert_non_null(fp);
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        strbuf_add(&all, buf, n);
    fclose(fp);
    p = strstr(all.buf, title);
    assert_non_null(p);
    p = strchr(p, '\n');
    assert_non_null(p);
    p++;
    end = strstr(p, "\n###");
    strbuf_add(&out, p, end ? (size_t)(end - p) + 1 : strlen(p));
    strbuf_release(&all);
    return strbuf_detach(&out, len);
}

static void test_h200_header_units(void **state)
{
    size_t len;
    char *in = section("### query csv with header and units", &len);
    const char *kind = NULL;
    json_t *res = nvsmi_parse(in, len, NULL, 0, &kind, NULL), *g;

    assert_non_null(res);
    assert_int_equal(json_array_size(json_object_get(res, "gpus")), 1);
    g = json_array_get(json_object_get(res, "gpus"), 0);
    assert_string_equal(jx_get_str(g, "name", ""), "NVIDIA H200");
    assert_int_equal(jx_get_int(g, "mem_total_mb", -1), 143771);
    assert_true(json_is_integer(json_object_get(g, "mem_total_mb")));
    assert_int_equal(jx_get_int(g, "index", -1), 0);
    assert_int_equal(jx_get_int(g, "mem_used_mb", -1), 0);
    assert_int_equal(jx_get_int(g, "util_pct", -1), 0);
    assert_true(fabs(jx_get_num(g, "power_w", 0) - 78.34) < 1e-9);
    assert_string_equal(jx_get_str(g, "uuid", ""),
                        "GPU-2beb4e1c-1a55-0b6b-eb76-b03e844aad5e");
    json_decref(res);
    free(in);
}

/* The noheader capture used a 12-field query: read with the product's 7
 * fields its rows do not fit, and no GPU may be made up from them. */
static void test_h200_noheader_wrong_query(void **state)
{
    static const char *const f[] = {
        "index",           "uuid",      "name", "memory.total", "memory.used",
        "utilization.gpu", "power.draw"};
    size_t len;
    char *in = section("### query csv noheader nounits", &len);
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;

    assert_null(nvsmi_parse(in, len, f, 7, &kind, &err));
    assert_string_equal(kind, "parse_error");
    free(in);
}

static void test_h200_bad_field(void **state)
{
    size_t len;
    char *in = section("### bad field", &len);
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;

    assert_null(nvsmi_parse(in, len, NULL, 0, &kind, &err));
    assert_string_equal(kind, "invalid_field");
    assert_non_null(strstr(err.text, "bogus.field"));
    free(in);
}

static void test_noheader_product_and_nulls(void **state)
{
    const char *in =
        "0, GPU-a, NVIDIA H200, 143771 MiB, 512 MiB, 37 %, [N/A]\n"
        "1, GPU-b, NVIDIA H200, 143771, 0, [Not Supported], 78.10\n";
    const char *kind = NULL;
    json_t *res = nvsmi_parse(in, strlen(in), NULL, 0, &kind, NULL), *g;

    assert_non_null(res);
    g = json_array_get(json_object_get(res, "gpus"), 0);
    assert_int_equal(jx_get_int(g, "mem_used_mb", -1), 512);
    assert_int_equal(jx_get_int(g, "util_pct", -1), 37);
    assert_true(json_is_null(json_object_get(g, "power_w")));
    g = json_array_get(json_object_get(res, "gpus"), 1);
    assert_int_equal(jx_get_int(g, "index", -1), 1);
    assert_true(json_is_null(json_object_get(g, "util_pct")));
    assert_true(fabs(jx_get_num(g, "power_w", 0) - 78.1) < 1e-9);
    json_decref(res);

    assert_null(
        nvsmi_parse("No devices were found\n", 22, NULL, 0, &kind, NULL));
    assert_string_equal(kind, "no_devices");
    assert_null(nvsmi_parse("2100, 49140\n", 12, NULL, 0, &kind, NULL));
    assert_string_equal(kind, "unknown_columns");
}

static void test_fields_from_command(void **state)
{
    struct strvec sv = STRVEC_INIT;
    assert_int_equal(
        nvsmi_fields_from_command("nvidia-smi -i 0 --format=csv,noheader "
                                  "--query-gpu=clocks.max.sm,gpu_name",
                                  &sv),
        2);
    assert_string_equal(sv.v[0], "clocks.max.sm");
    assert_string_equal(sv.v[1], "gpu_name");
    strvec_clear(&sv);
    assert_int_equal(nvsmi_fields_from_command("nvidia-smi -L", &sv), 0);
    assert_string_equal(nvsmi_field_key("clocks.max.sm"), "clock_max_sm_mhz");
    assert_string_equal(nvsmi_field_key("gpu_name"), "name");
    assert_null(nvsmi_field_key("ecc.mode.current"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h200_header_units),
        cmocka_unit_test(test_h200_noheader_wrong_query),
        cmocka_unit_test(test_h200_bad_field),
        cmocka_unit_test(test_noheader_product_and_nulls),
        cmocka_unit_test(test_fields_from_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
