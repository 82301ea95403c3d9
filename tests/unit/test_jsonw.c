/*
 * test_jsonw.c - the streaming writer gives jx_dumpf's bytes: the same
 * document built as json_t and written with jsonw, pretty and compact,
 * with escapes, control bytes, non-ASCII and invalid UTF-8, nulls,
 * negative and large integers, empty and nested containers; and the
 * parsers' streaming writers (sinfo, squeue, sacct) give the bytes of
 * their json_t documents on every captured output in tests/fixtures/slurm
 * and on synthetic rows with reals, arrays and bad records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libdiscovery/parse_sinfo.h"
#include "libsched/parse_slurm.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"

static const char *const strs[] = {"plain",
                                   "",
                                   "q\"uote\\back/slash",
                                   "tab\there\nnl\rcr\bbs\ffeed",
                                   "\x01\x1f ctl",
                                   "caf\xc3\xa9 \xe2\x82\xac",
                                   "bad \xff\xfe utf8 \xc3",
                                   "gpu:a100:4(S:0-1)",
                                   "2026-12-01T10:00:00",
                                   "a plain value of more than 32 bytes"};

static const double reals[] = {
    0.25, 62.125, -3.0, 0.1, 1e20, 1e-5, 1.5e-7, 1e100, -2e-300,
    123456789012345678.0, 3.14159265358979, 0.0, -0.0, 1.0 / 0.0, 0.0 / 0.0,
    7.0e15, 1e15, 1e16,
    /* the integral fast path and its edges */
    3600.0, 8.0, 1.0, -7.0, 100.0, 1e14, 123456789012345.0, 999999999999999.0,
    -999999999999999.0, 1000000000000001.0, 4503599627370497.0};

/* jsonw_put_int's digit pairs, its digit count and its sign */
static const long long ints[] = {0,
                                 7,
                                 -7,
                                 9,
                                 10,
                                 99,
                                 100,
                                 -100,
                                 12345,
                                 999999,
                                 1000000,
                                 172800,
                                 1000000007,
                                 9223372036854775807LL,
                                 -9223372036854775807LL - 1};
static const size_t nints = sizeof(ints) / sizeof(ints[0]);

static char *slurp_stream(FILE *f)
{
    long n;
    char *b;
    fflush(f);
    n = ftell(f);
    rewind(f);
    b = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    return b;
}

static void check(int pretty)
{
    FILE *a = tmpfile(), *b = tmpfile();
    json_t *doc = json_object(), *arr = json_array();
    struct jsonw w;
    char *x, *y;
    size_t ns = sizeof(strs) / sizeof(strs[0]);

    /* the json_t way */
    for (size_t i = 0; i < ns; i++) {
        json_t *o = json_object(), *inner = json_array();
        jx_set(o, "s", jx_str(strs[i]));
        if (i != 6) /* jansson refuses a key that is not UTF-8 */
            jx_set(o, strs[i], json_integer(-(long long)i * 1000000007LL));
        jx_set(o, "null", jx_str(NULL));
        jx_set(o, "maybe", jx_int_or_null((int)(i % 2), 9223372036854775807LL));
        jx_set(o, "empty_a", json_array());
        jx_set(o, "empty_o", json_object());
        for (size_t k = 0; k < i; k++)
            json_array_append_new(inner, jx_str(strs[k]));
        jx_set(o, "inner", inner);
        /* the jsonw_member_* writers */
        jx_set(o, "m_s", jx_str(strs[i]));
        jx_set(o, "m_null_s", jx_str(NULL));
        jx_set(o, "m_int", json_integer(ints[i % nints]));
        jx_set(o, "m_null", json_null());
        {
            json_t *e = json_array();
            for (size_t k = 0; k < i; k++)
                json_array_append_new(e, jx_str(strs[k]));
            jx_set(o, "m_elems", e);
        }
        jx_set(o, "m_maybe",
               jx_int_or_null((int)(i % 2), ints[(i + 3) % nints]));
        json_array_append_new(arr, o);
    }
    jx_set(doc, "items", arr);
    {
        json_t *r = json_array();
        for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
            json_array_append_new(r, jx_real(reals[i]));
        jx_set(doc, "reals", r);
    }
    {
        /* every integer, and enough members to cross the 64 KiB flush
         * and the buffer's end (jsonw_member_at's slow path) */
        json_t *m = json_object();
        for (size_t i = 0; i < 6000; i++) {
            char k[32];
            snprintf(k, sizeof(k), "k%zu", i);
            if (i % 3 == 0)
                jx_set(m, k, json_integer(ints[i % nints]));
            else if (i % 3 == 1)
                jx_set(m, k, jx_str(strs[i % ns]));
            else
                jx_set(m, k, json_null());
        }
        jx_set(doc, "members", m);
    }
    {
        /* members and elements nested past the inline writers' depth */
        json_t *top = json_object(), *o = top;
        for (int d = 0; d < 10; d++) {
            json_t *in = json_object(), *e = json_array();
            jx_set(o, "s", jx_str(strs[d % ns]));
            jx_set(o, "i", json_integer(ints[d % nints]));
            json_array_append_new(e, jx_str(strs[(d + 1) % ns]));
            json_array_append_new(e, jx_str(strs[d % ns]));
            jx_set(o, "e", e);
            jx_set(o, "in", in);
            o = in;
        }
        jx_set(doc, "deep", top);
    }
    jx_set(doc, "n", json_integer(0));
    assert_int_equal(jx_dumpf(doc, a, pretty), 0);
    json_decref(doc);

    /* the streaming way */
    jsonw_init(&w, b, pretty);
    jsonw_obj_begin(&w);
    jsonw_key(&w, "items");
    jsonw_arr_begin(&w);
    for (size_t i = 0; i < ns; i++) {
        jsonw_obj_begin(&w);
        jsonw_key(&w, "s");
        jsonw_str(&w, strs[i]);
        if (i != 6) {
            jsonw_key(&w, strs[i]);
            jsonw_int(&w, -(long long)i * 1000000007LL);
        }
        jsonw_key_lit(&w, "null"); /* jsonw_keyn: the same bytes */
        jsonw_str(&w, NULL);
        jsonw_key_lit(&w, "maybe");
        jsonw_int_or_null(&w, (int)(i % 2), 9223372036854775807LL);
        jsonw_key(&w, "empty_a");
        jsonw_arr_begin(&w);
        jsonw_arr_end(&w);
        jsonw_key(&w, "empty_o");
        jsonw_obj_begin(&w);
        jsonw_obj_end(&w);
        jsonw_key(&w, "inner");
        jsonw_arr_begin(&w);
        for (size_t k = 0; k < i; k++)
            jsonw_str(&w, strs[k]);
        jsonw_arr_end(&w);
        jsonw_member_str_lit(&w, "m_s", strs[i]);
        jsonw_member_str_lit(&w, "m_null_s", NULL);
        jsonw_member_int_lit(&w, "m_int", ints[i % nints]);
        jsonw_member_null_lit(&w, "m_null");
        jsonw_key_lit(&w, "m_elems");
        jsonw_arr_begin(&w);
        for (size_t k = 0; k < i; k++)
            jsonw_elem_str(&w, strs[k]);
        jsonw_arr_end(&w);
        jsonw_member_int_or_null_lit(&w, "m_maybe", (int)(i % 2),
                                     ints[(i + 3) % nints]);
        jsonw_obj_end(&w);
    }
    jsonw_arr_end(&w);
    jsonw_key(&w, "reals");
    jsonw_arr_begin(&w);
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
        jsonw_real(&w, reals[i]);
    jsonw_arr_end(&w);
    jsonw_key_lit(&w, "members");
    jsonw_obj_begin(&w);
    for (size_t i = 0; i < 6000; i++) {
        char k[32];
        int kn = snprintf(k, sizeof(k), "k%zu", i);
        if (i % 3 == 0)
            jsonw_member_int(&w, k, (size_t)kn, ints[i % nints]);
        else if (i % 3 == 1)
            jsonw_member_str(&w, k, (size_t)kn, strs[i % ns]);
        else
            jsonw_member_null(&w, k, (size_t)kn);
    }
    jsonw_obj_end(&w);
    jsonw_key_lit(&w, "deep");
    jsonw_obj_begin(&w);
    for (int d = 0; d < 10; d++) {
        jsonw_member_str_lit(&w, "s", strs[d % ns]);
        jsonw_member_int_lit(&w, "i", ints[d % nints]);
        jsonw_key_lit(&w, "e");
        jsonw_arr_begin(&w);
        jsonw_elem_str(&w, strs[(d + 1) % ns]);
        jsonw_elem_str(&w, strs[d % ns]);
        jsonw_arr_end(&w);
        jsonw_key_lit(&w, "in");
        jsonw_obj_begin(&w);
    }
    for (int d = 0; d <= 10; d++)
        jsonw_obj_end(&w);
    jsonw_key_lit(&w, "n");
    jsonw_int(&w, 0);
    jsonw_obj_end(&w);
    assert_int_equal(jsonw_finish(&w), 0);

    x = slurp_stream(a);
    y = slurp_stream(b);
    assert_string_equal(y, x);
    free(x);
    free(y);
    fclose(a);
    fclose(b);
}

static void test_pretty_matches_jansson(void **state)
{
    (void)state;
    check(1);
}

static void test_compact_matches_jansson(void **state)
{
    (void)state;
    check(0);
}

/* an unbalanced document is an error, not silent garbage */
static void test_unbalanced_fails(void **state)
{
    FILE *f = tmpfile();
    struct jsonw w;
    (void)state;
    jsonw_init(&w, f, 1);
    jsonw_arr_begin(&w);
    assert_int_equal(jsonw_finish(&w), -1);
    fclose(f);
}

static char *file_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long n;
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    b = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* both writers of one parsed input; 0 when the parser refused it */
static int same_bytes(const char *kind, const char *buf, size_t len)
{
    FILE *a = tmpfile(), *b = tmpfile();
    struct jsonw w;
    const char *k = NULL;
    char *x, *y;
    json_t *doc;
    exa_error_t err = EXA_ERROR_INIT;
    int ok = 1;

    if (!strcmp(kind, "sinfo")) {
        struct sinfo_result r;
        memset(&r, 0, sizeof(r));
        if (sinfo_parse_cmd(buf, len, NULL, &r, &k, &err) < 0) {
            sinfo_result_free(&r);
            ok = 0;
            goto out;
        }
        doc = sinfo_result_to_json(&r);
        jsonw_init(&w, b, 1);
        sinfo_result_write_json(&r, &w);
        sinfo_result_free(&r);
    } else {
        struct slurm_jobs j;
        int steps = !strcmp(kind, "sacct");
        memset(&j, 0, sizeof(j));
        if ((steps ? sacct_parse_cmd(buf, len, NULL, &j, &k, &err)
                   : squeue_parse_cmd(buf, len, NULL, &j, &k, &err)) < 0) {
            slurm_jobs_free(&j);
            ok = 0;
            goto out;
        }
        doc = slurm_jobs_to_json(&j, steps);
        jsonw_init(&w, b, 1);
        slurm_jobs_write_json(&j, steps, &w);
        slurm_jobs_free(&j);
    }
    assert_int_equal(jx_dumpf(doc, a, 1), 0);
    json_decref(doc);
    assert_int_equal(jsonw_finish(&w), 0);
    x = slurp_stream(a);
    y = slurp_stream(b);
    assert_string_equal(y, x);
    free(x);
    free(y);
out:
    fclose(a);
    fclose(b);
    return ok;
}

static void test_parsers_stream_same_bytes(void **state)
{
    static const char *const fx[][2] = {
        {"sinfo", "sinfo-O-padded.out"},
        {"sinfo", "sinfo-default.out"},
        {"sinfo", "sinfo-multicluster.out"},
        {"sinfo", "sinfo-pipe-header.out"},
        {"sinfo", "sinfo-pipe-noheader.out"},
        {"squeue", "squeue-O-cluster.out"},
        {"squeue", "squeue-O-tres.out"},
        {"squeue", "squeue-default.out"},
        {"squeue", "squeue-held.out"},
        {"squeue", "squeue-pipe-noheader.out"},
        {"squeue", "scontrol-job-running.out"},
        {"sacct", "sacct-cancelled.out"},
        {"sacct", "sacct-default.out"},
        {"sacct", "sacct-exa-format.out"},
        {"sacct", "sacct-header.out"},
        {"sacct", "sacct-over-run.out"},
        {"sacct", "sacct-timeout.out"},
    };
    /* reals, array ranges, a bad record */
    const char *sacct_syn =
        "JobID|State|ExitCode|Start|End|Elapsed|TotalCPU|AllocTRES|User\n"
        "7_[1-3%2]|PENDING|0:0|Unknown|Unknown|00:00:00|00:00.250|"
        "cpu=1|al\"ice\n"
        "8|COMPLETED|0:0|2026-01-01T00:00:00|2026-01-01T00:00:01|"
        "00:00:01|01:02.125|cpu=2,gres/gpu=1|bob\n"
        "8.batch|COMPLETED|0:0|2026-01-01T00:00:00|2026-01-01T00:00:01|"
        "00:00:01|00:01.5||\n"
        "9|only|three\n";
    int parsed = 0;
    (void)state;
    for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
        char path[256];
        size_t len;
        char *buf;
        snprintf(path, sizeof(path), "tests/fixtures/slurm/%s", fx[i][1]);
        buf = file_text(path, &len);
        parsed += same_bytes(fx[i][0], buf, len);
        free(buf);
    }
    assert_true(parsed >= 15);
    assert_int_equal(same_bytes("sacct", sacct_syn, strlen(sacct_syn)), 1);
}

/* jx_quote writes what jansson writes for jx_str(s), ASCII or not. */
/* Items written into fragments (several of 64 KiB and more, one empty,
 * one small) and put in order give the bytes of the same items written
 * into the document directly, pretty and compact, in an array that is
 * empty when every fragment is. */
static void frag_items(struct jsonw *w, int from, int to)
{
    for (int i = from; i < to; i++) {
        jsonw_obj_begin(w);
        jsonw_key(w, "id");
        jsonw_int(w, i);
        jsonw_key(w, "name");
        jsonw_str(w, i % 7 ? "plain" : "esc\"aped\n");
        jsonw_obj_end(w);
    }
}

static void test_fragments_same_bytes(void **state)
{
    static const int cuts[] = {0, 0, 3000, 3000, 3001, 9000};
    (void)state;
    for (int pretty = 0; pretty < 2; pretty++) {
        for (int empty = 0; empty < 2; empty++) {
            FILE *a = tmpfile(), *b = tmpfile();
            struct jsonw w;
            char *x, *y;
            int last = empty ? 0 : 9000;
            assert_non_null(a);
            assert_non_null(b);
            jsonw_init(&w, a, pretty);
            jsonw_obj_begin(&w);
            jsonw_key(&w, "items");
            jsonw_arr_begin(&w);
            frag_items(&w, 0, last);
            jsonw_arr_end(&w);
            jsonw_obj_end(&w);
            jsonw_finish(&w);
            jsonw_init(&w, b, pretty);
            jsonw_obj_begin(&w);
            jsonw_key(&w, "items");
            jsonw_arr_begin(&w);
            for (size_t k = 0; k + 1 < sizeof(cuts) / sizeof(*cuts); k++) {
                struct jsonw f;
                jsonw_init_items(&f, pretty, 2);
                frag_items(&f, empty ? 0 : cuts[k], empty ? 0 : cuts[k + 1]);
                jsonw_put_items(&w, &f);
            }
            jsonw_arr_end(&w);
            jsonw_obj_end(&w);
            jsonw_finish(&w);
            x = slurp_stream(a);
            y = slurp_stream(b);
            assert_true(strlen(x) > (empty ? 0 : 65536 * 2));
            assert_string_equal(x, y);
            free(x);
            free(y);
            fclose(a);
            fclose(b);
        }
    }
}

static void test_quote_matches_jansson(void **state)
{
    (void)state;
    static const char *const cases[] = {"",
                                        "plain",
                                        "q\"uote",
                                        "back\\slash",
                                        "ctl\b\f\n\r\t\x01\x1f",
                                        "del\x7f",
                                        "caf\xc3\xa9",
                                        "bad\xff utf8",
                                        "/slash/",
                                        NULL};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strbuf sb = STRBUF_INIT;
        json_t *j = jx_str(cases[i]);
        char *want = json_dumps(j, JSON_ENCODE_ANY);
        int ascii = 1;
        jx_quote(&sb, cases[i]);
        assert_string_equal(sb.buf, want);
        strbuf_reset(&sb);
        for (const char *c = cases[i]; c && *c; c++)
            ascii &= (unsigned char)*c < 0x80;
        /* non-ASCII: jx_quote_ascii declines and appends nothing */
        assert_int_equal(jx_quote_ascii(&sb, cases[i]), ascii ? 0 : -1);
        if (ascii)
            assert_string_equal(sb.buf, want);
        else
            assert_int_equal(sb.len, 0);
        free(want);
        json_decref(j);
        strbuf_release(&sb);
    }
}

/*
 * Every text jx_is_canonical_flat accepts is what jansson's canonical
 * dump of its parse gives back; the rejected ones are the texts it must
 * not take as they are (and a few canonical ones it leaves to jansson).
 */
static void test_canonical_flat(void **state)
{
    static const struct {
        const char *text;
        int flat;
    } cases[] = {
        {"{}", 1},
        {"{\"a\":1,\"b\":\"x\",\"c\":null,\"d\":true,\"e\":false}", 1},
        {"{\"from_state\":\"PENDING\",\"host\":\"login5\","
         "\"host_key_fingerprint\":null,\"row_sha256\":\"ab\",\"state\":"
         "\"ACTIVE\"}",
         1},
        {"{\"a\":\"q\\\"b\\\\c\\n\\t\\r\\b\\f\"}", 1},
        {"{\"a\":-5,\"ab\":0,\"b\":123456789012345678}", 1},
        {"{\"\":1,\"a\":2}", 1},
        {"{\"a\":\"del\x7f\"}", 1},
        {"{\"b\":1,\"a\":2}", 0},  /* unsorted */
        {"{\"a\":1,\"a\":2}", 0},  /* duplicate: jansson keeps 2 */
        {"{\"ab\":1,\"a\":2}", 0}, /* prefix after the longer key */
        {"{\"a\": 1}", 0},         /* whitespace */
        {" {\"a\":1}", 0},
        {"{\"a\":1} ", 0},
        {"{\"a\":1}x", 0},
        {"{\"a\":-0}", 0}, /* jansson writes 0 */
        {"{\"a\":01}", 0},
        {"{\"a\":1.0}", 0}, /* reals: left to jansson */
        {"{\"a\":1e2}", 0},
        {"{\"a\":1234567890123456789}", 0}, /* 19 digits */
        {"{\"a\":\"\\u0041\"}", 0},         /* jansson writes A */
        {"{\"a\":\"\\/\"}", 0},             /* jansson writes / */
        {"{\"a\":\"caf\xc3\xa9\"}", 0},
        {"{\"a\":\"tab\there\"}", 0}, /* raw control byte */
        {"{\"a\\\"\":1}", 0},         /* escaped key */
        {"{\"a\":{}}", 0},            /* nested */
        {"{\"a\":[1]}", 0},
        {"{\"a\":nul}", 0},
        {"{\"a\":1,}", 0},
        {"{\"a\"}", 0},
        {"{\"a\":\"x}", 0},
        {"[1]", 0},
        {"\"x\"", 0},
        {"", 0},
        {"{", 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int got = jx_is_canonical_flat(cases[i].text);
        if (got != cases[i].flat)
            fail_msg("jx_is_canonical_flat(%s) = %d", cases[i].text, got);
        if (got) {
            json_t *j = json_loads(cases[i].text, JSON_DECODE_ANY, NULL);
            char *canon = jx_dumps_canonical(j);
            assert_non_null(j);
            assert_string_equal(canon, cases[i].text);
            free(canon);
            json_decref(j);
        }
    }
    assert_int_equal(jx_is_canonical_flat(NULL), 0);
}

/*
 * jx_flat_str reads a string member of a flat canonical text as jansson's
 * parse does (what governance_verify_cluster reads of an audit event):
 * found (1) exactly when jx_get_str gives a string of the same bytes, not
 * found (0) when it gives NULL, and -1 only for an escaped string.
 */
static void test_flat_str(void **state)
{
    static const char *const texts[] = {
        "{}",
        "{\"state\":\"ACTIVE\"}",
        "{\"from_state\":\"PENDING\",\"host\":\"login5\","
        "\"host_key_fingerprint\":null,\"row_sha256\":\"ab12\",\"state\":"
        "\"ACTIVE\"}",
        "{\"a\":1,\"state\":null}",
        "{\"row_sha256\":5,\"state\":true}",
        "{\"state\":\"\"}",
        "{\"state\":\"ACT\\nIVE\"}",
        "{\"sta\":\"x\",\"statee\":\"y\",\"to_state\":\"REJECTED\"}",
        "{\"a\":\"\\\"state\\\":\\\"ACTIVE\\\"\",\"b\":-3}",
        "{\"\":\"state\",\"z\":\"q\\\\\"}",
    };
    static const char *const keys[] = {"state", "to_state", "row_sha256",
                                       "a",     "",         "z"};
    (void)state;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        json_t *j = json_loads(texts[i], 0, NULL);
        assert_non_null(j);
        if (!jx_is_canonical_flat(texts[i]))
            fail_msg("not flat canonical: %s", texts[i]);
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            const char *want = jx_get_str(j, keys[k], NULL), *v = NULL;
            size_t len = 0;
            int rc = jx_flat_str(texts[i], keys[k], &v, &len);
            if (rc == 1 &&
                (!want || strlen(want) != len || memcmp(want, v, len)))
                fail_msg("jx_flat_str(%s, %s) read '%.*s'", texts[i], keys[k],
                         (int)len, v);
            if (rc == 0 && want)
                fail_msg("jx_flat_str(%s, %s) missed '%s'", texts[i], keys[k],
                         want);
            if (rc == -1 && (!want || !strpbrk(texts[i], "\\")))
                fail_msg("jx_flat_str(%s, %s) = -1", texts[i], keys[k]);
        }
        json_decref(j);
    }
    {
        const char *v;
        size_t len;
        assert_int_equal(jx_flat_str(texts[2], "state", &v, &len), 1);
        assert_int_equal(len, 6);
        assert_memory_equal(v, "ACTIVE", 6);
        assert_int_equal(jx_flat_str(texts[6], "state", &v, &len), -1);
        assert_int_equal(jx_flat_str(texts[3], "state", &v, &len), 0);
        assert_int_equal(jx_flat_str(texts[8], "state", &v, &len), 0);
    }
}

/* One object of the run test, level deep in nested arrays: written as
 * json_t into parent, and with a run (or its fallback) into w. */
static void run_obj(json_t *parent, struct jsonw *w, size_t i)
{
    size_t ns = sizeof(strs) / sizeof(strs[0]);
    json_t *o = json_object(), *e = json_array();
    const char *v[2 * sizeof(strs) / sizeof(strs[0])];
    size_t nv = i % (2 * ns);
    struct jsonw_run r;
    for (size_t k = 0; k < nv; k++)
        v[k] = k % 5 == 4 ? NULL : strs[(i + k) % ns];
    jx_set(o, "s", jx_str(strs[i % ns]));
    jx_set(o, "null_s", jx_str(NULL));
    jx_set(o, "int", json_integer(ints[i % nints]));
    jx_set(o, "null", json_null());
    jx_set(o, "maybe", jx_int_or_null((int)(i % 2), ints[(i + 3) % nints]));
    for (size_t k = 0; k < nv; k++)
        json_array_append_new(e, jx_str(v[k]));
    jx_set(o, "elems", e);
    jx_set(o, "real", jx_real(reals[i % (sizeof(reals) / sizeof(reals[0]))]));
    jx_set(o, "last", jx_str(strs[(i + 1) % ns]));
    jx_set(o, "padded", jx_str(strs[(i + 2) % ns]));
    json_array_append_new(parent, o);

    if (!jsonw_run_obj_begin(w, &r)) {
        /* no run here (too deep): the same object the ordinary way */
        jsonw_obj_begin(w);
        jsonw_member_str_lit(w, "s", strs[i % ns]);
        jsonw_member_str_lit(w, "null_s", NULL);
        jsonw_member_int_lit(w, "int", ints[i % nints]);
        jsonw_member_null_lit(w, "null");
        jsonw_member_int_or_null_lit(w, "maybe", (int)(i % 2),
                                     ints[(i + 3) % nints]);
        jsonw_key_lit(w, "elems");
        jsonw_arr_begin(w);
        for (size_t k = 0; k < nv; k++)
            jsonw_str(w, v[k]);
        jsonw_arr_end(w);
        jsonw_key_lit(w, "real");
        jsonw_real(w, reals[i % (sizeof(reals) / sizeof(reals[0]))]);
        jsonw_member_str_lit(w, "last", strs[(i + 1) % ns]);
        jsonw_member_str_lit(w, "padded", strs[(i + 2) % ns]);
        jsonw_obj_end(w);
        return;
    }
    jsonw_run_str_lit(w, &r, "s", strs[i % ns], 0);
    jsonw_run_str_lit(w, &r, "null_s", NULL, 0);
    jsonw_run_int_lit(w, &r, "int", ints[i % nints]);
    jsonw_run_null_lit(w, &r, "null");
    jsonw_run_int_or_null_lit(w, &r, "maybe", (int)(i % 2),
                              ints[(i + 3) % nints]);
    jsonw_run_strs_lit(w, &r, "elems", v, nv);
    jsonw_run_sync(w, &r);
    jsonw_key_lit(w, "real");
    jsonw_real(w, reals[i % (sizeof(reals) / sizeof(reals[0]))]);
    jsonw_run_resume(w, &r);
    jsonw_run_str_lit(w, &r, "last", strs[(i + 1) % ns], 0);
    {
        /* padded: the string, its NUL and 15 bytes more in one buffer,
         * at every offset from a 16-byte boundary */
        char buf[64 + 32];
        const char *s = strs[(i + 2) % ns];
        size_t n = strlen(s), at = i % 16;
        memset(buf, 'x', sizeof(buf));
        memcpy(buf + at, s, n + 1);
        jsonw_run_str_lit(w, &r, "padded", buf + at, 1);
    }
    jsonw_run_obj_end(w, &r);
}

/* jsonw_run_*: jx_dumpf's bytes, pretty and compact, at every depth
 * (runs and their fallback), across flushes, with escapes and nulls in
 * members and array elements, empty objects and arrays */
static void run_check(int pretty)
{
    FILE *a = tmpfile(), *b = tmpfile();
    json_t *doc = json_object(), *arr = json_array(), *cur = arr;
    struct jsonw w;
    char *x, *y;

    jsonw_init(&w, b, pretty);
    jsonw_obj_begin(&w);
    jsonw_key_lit(&w, "items");
    jsonw_arr_begin(&w);
    for (size_t i = 0; i < 3000; i++) /* over 64 KiB */
        run_obj(arr, &w, i);
    {
        /* an empty object in a run, and a member with no member before */
        struct jsonw_run r = {0};
        json_array_append_new(arr, json_object());
        assert_int_equal(jsonw_run_obj_begin(&w, &r), 1);
        jsonw_run_obj_end(&w, &r);
        json_array_append_new(arr, json_pack("{s:[]}", "e"));
        assert_int_equal(jsonw_run_obj_begin(&w, &r), 1);
        jsonw_run_strs_lit(&w, &r, "e", NULL, 0);
        jsonw_run_obj_end(&w, &r);
        json_array_append_new(arr, json_pack("{s:i}", "k", 5));
        assert_int_equal(jsonw_run_obj_begin(&w, &r), 1);
        jsonw_run_sync(&w, &r);
        jsonw_key_lit(&w, "k");
        jsonw_int(&w, 5);
        jsonw_run_resume(&w, &r);
        jsonw_run_obj_end(&w, &r);
    }
    /* nested arrays: objects at every depth up to past the runs' */
    for (size_t d = 0; d < 10; d++) {
        json_t *in = json_array();
        run_obj(cur, &w, d * 7 + 3);
        json_array_append_new(cur, in);
        jsonw_arr_begin(&w);
        cur = in;
    }
    run_obj(cur, &w, 5);
    for (size_t d = 0; d < 10; d++)
        jsonw_arr_end(&w);
    jsonw_arr_end(&w);
    jsonw_obj_end(&w);
    assert_int_equal(jsonw_finish(&w), 0);
    jx_set(doc, "items", arr);
    assert_int_equal(jx_dumpf(doc, a, pretty), 0);
    json_decref(doc);

    x = slurp_stream(a);
    y = slurp_stream(b);
    assert_string_equal(y, x);
    free(x);
    free(y);
    fclose(a);
    fclose(b);
}

static void test_run_matches_jansson(void **state)
{
    (void)state;
    run_check(1);
    run_check(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pretty_matches_jansson),
        cmocka_unit_test(test_compact_matches_jansson),
        cmocka_unit_test(test_unbalanced_fails),
        cmocka_unit_test(test_run_matches_jansson),
        cmocka_unit_test(test_fragments_same_bytes),
        cmocka_unit_test(test_quote_matches_jansson),
        cmocka_unit_test(test_canonical_flat),
        cmocka_unit_test(test_flat_str),
        cmocka_unit_test(test_parsers_stream_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
