/*
 * test_csv.c - the CSV record reader and the PM100 loader: quoting,
 * series, skipped rows counted, and malformed input rejected with the
 * line number.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libpipeline/csv.h"
#include "libpipeline/pm100.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

#define HEADER                                                                 \
    "job_id,user_id,num_nodes_req,num_nodes_alloc,submit_time,"                \
    "node_power_consumption\n"

static void test_csv_records(void **state)
{
    const char *in = "a,\"b,c\",\"say \"\"hi\"\"\"\r\n\n"
                     "\"multi\nline\",,x\n"
                     "last,no,newline";
    struct csv_cursor c;
    struct strvec f = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    size_t line = 0;

    csv_init(&c, in, strlen(in));
    assert_int_equal(csv_next(&c, &f, &line, &err), 1);
    assert_int_equal(line, 1);
    assert_int_equal(f.nr, 3);
    assert_string_equal(f.v[0], "a");
    assert_string_equal(f.v[1], "b,c");
    assert_string_equal(f.v[2], "say \"hi\"");
    /* The empty line 2 is skipped; the record starts on line 3. */
    assert_int_equal(csv_next(&c, &f, &line, &err), 1);
    assert_int_equal(line, 3);
    assert_int_equal(f.nr, 3);
    assert_string_equal(f.v[0], "multi\nline");
    assert_string_equal(f.v[1], "");
    assert_int_equal(csv_next(&c, &f, &line, &err), 1);
    assert_int_equal(line, 5); /* line 4 was the second half of "multi" */
    assert_string_equal(f.v[2], "newline");
    assert_int_equal(csv_next(&c, &f, &line, &err), 0);
    strvec_clear(&f);
}

static void test_csv_bad_quotes(void **state)
{
    static const struct {
        const char *in;
        const char *msg;
    } cases[] = {
        {"a,b\nc,\"open\n", "line 2: quoted field is never closed"},
        {"a,\"q\"x,b\n", "line 1: unexpected text after a closing quote"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct csv_cursor c;
        struct strvec f = STRVEC_INIT;
        exa_error_t err = EXA_ERROR_INIT;
        size_t line;
        int r;
        csv_init(&c, cases[i].in, strlen(cases[i].in));
        while ((r = csv_next(&c, &f, &line, &err)) == 1)
            ;
        assert_int_equal(r, -1);
        assert_int_equal(err.code, EXA_EPARSE);
        assert_string_equal(err.text, cases[i].msg);
        strvec_clear(&f);
    }
}

/* 1e309 overflows to infinity: skipped as non-finite, not trained on. */
static void test_pm100_overflow_and_record_cap(void **state)
{
    const char *in = "job_id,user_id,num_nodes_req,num_nodes_alloc,"
                     "submit_time,node_power_consumption\n"
                     "1,u1,1,1,2020-05-02T10:00:00Z,1e309\n"
                     "2,u1,1,1,2020-05-02T10:00:00Z,100\n";
    struct pm100_table t = PM100_TABLE_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    struct csv_cursor c;
    struct strvec f = STRVEC_INIT;
    struct strbuf big = STRBUF_INIT;
    size_t line = 0;
    (void)state;
    if (pm100_parse(in, strlen(in), &t, &err) < 0)
        fail_msg("%s", err.text);
    assert_int_equal(t.skipped_by[PM100_SKIP_NONFINITE_POWER], 1);
    assert_int_equal(t.nr, 1);
    pm100_table_release(&t);

    /* a record past the cap is an error naming its line, quoted or not */
    csv_init(&c, "a,b\nxxxxxxxxxxxxxxxxxxxx,1\n", 25);
    c.max_record = 10;
    assert_int_equal(csv_next(&c, &f, &line, &err), 1);
    assert_int_equal(csv_next(&c, &f, &line, &err), -1);
    assert_string_equal(err.text, "line 2: record is longer than 10 bytes "
                                  "(the limit for one CSV record)");
    strbuf_addstr(&big, "h\n\"");
    for (int i = 0; i < 100; i++)
        strbuf_addstr(&big, "0123456789");
    strbuf_addstr(&big, "\"\n");
    csv_init(&c, big.buf, big.len);
    c.max_record = 64;
    assert_int_equal(csv_next(&c, &f, &line, &err), 1);
    assert_int_equal(csv_next(&c, &f, &line, &err), -1);
    assert_non_null(strstr(err.text, "line 2: record is longer than 64"));
    assert_int_equal(CSV_MAX_RECORD_BYTES, (size_t)64 << 20);
    strbuf_release(&big);
    strvec_clear(&f);
}

static void test_pm100_rows_and_skips(void **state)
{
    /* Columns in another order plus an extra one, as exports may have. */
    const char *in =
        "submit_time,extra,job_id,node_power_consumption,user_id,"
        "num_nodes_alloc,num_nodes_req\n"
        "2020-05-02T10:00:00Z,x,1,\"100;200;300\",u1,2,2\n"   /* 200/2=100 */
        "2020-05-03 10:00:00,x,2,450.5,u2,1,1.0\n"            /* 450.5 */
        "2020-09-02T00:00:00+00:00,x,3,\"[10, 20]\",u1,1,1\n" /* 15 */
        "2020-05-04T00:00:00Z,x,4,,u1,1,1\n"                  /* skip: empty */
        "2020-05-04T00:00:00Z,x,5,0,u1,1,1\n"                 /* skip: zero */
        "2020-05-04T00:00:00Z,x,6,\"0;0\",u1,1,1\n"           /* skip */
        "2020-05-04T00:00:00Z,x,7,-3,u1,1,1\n"                /* skip: < 0 */
        "2020-05-04T00:00:00Z,x,8,100,u1,0,1\n"       /* skip: 0 nodes */
        "2020-05-04T00:00:00Z,x,9,\"nan;5\",u1,1,1\n" /* skip: NaN */
        ",x,10,100,u1,1,1\n"                          /* skip: no time */
        "2020-05-04T00:00:00Z,x,11,100,u1,,1\n";      /* skip: alloc */
    struct pm100_table t = PM100_TABLE_INIT;
    exa_error_t err = EXA_ERROR_INIT;

    if (pm100_parse(in, strlen(in), &t, &err) < 0)
        fail_msg("%s", err.text);
    assert_int_equal(t.records, 11);
    assert_int_equal(t.skipped, 8);
    /* counted by reason (issue 13): each record by its first reason */
    assert_int_equal(t.skipped_by[PM100_SKIP_NO_POWER], 1);
    assert_int_equal(t.skipped_by[PM100_SKIP_NONFINITE_POWER], 1);
    assert_int_equal(t.skipped_by[PM100_SKIP_NONPOSITIVE_POWER], 3);
    assert_int_equal(t.skipped_by[PM100_SKIP_NO_NODES], 2);
    assert_int_equal(t.skipped_by[PM100_SKIP_NO_SUBMIT_TIME], 1);
    assert_string_equal(pm100_skip_reason(PM100_SKIP_NONFINITE_POWER),
                        "non-finite power sample");
    assert_int_equal(t.nr, 3);
    assert_string_equal(t.rows[0].job_id, "1");
    assert_string_equal(t.rows[0].user_id, "u1");
    assert_string_equal(t.rows[0].num_nodes_req, "2");
    assert_true(t.rows[0].target == 100.0);
    assert_int_equal(t.rows[0].line, 2);
    assert_string_equal(t.rows[1].num_nodes_req, "1"); /* "1.0" */
    assert_true(t.rows[1].target == 450.5);
    assert_int_equal((long long)t.rows[1].submit_time, 1588500000);
    assert_true(t.rows[2].target == 15.0);
    pm100_table_release(&t);
}

static void test_pm100_malformed(void **state)
{
    static const struct {
        const char *in;
        const char *msg;
    } cases[] = {
        {HEADER "1,u,1,1,2020-05-01T00:00:00Z,100\n"
                "2,u,1,1,2020-05-01T00:00:00Z\n",
         "line 3: expected 6 fields like the header, found 5"},
        {HEADER "1,u,1,1,2020-05-01T00:00:00Z,100,extra\n",
         "line 2: expected 6 fields like the header, found 7"},
        {HEADER "1,u,1,1,2020-05-01T00:00:00Z,\"100;abc\"\n",
         "line 2: node_power_consumption has 'abc' where a number "
         "belongs"},
        {HEADER "1,u,1,two,2020-05-01T00:00:00Z,100\n",
         "line 2: num_nodes_alloc 'two' is not a whole number"},
        {HEADER "1,u,1.5,1,2020-05-01T00:00:00Z,100\n",
         "line 2: num_nodes_req '1.5' is not a whole number"},
        {HEADER "1,u,1,1,May 1st,100\n",
         "line 2: submit_time: invalid ISO-8601 time 'May 1st'"},
        {"job_id,user_id,num_nodes_req,submit_time,node_power_consumption\n",
         "line 1: header has no 'num_nodes_alloc' column (need job_id, "
         "user_id, num_nodes_req, num_nodes_alloc, submit_time, "
         "node_power_consumption)"},
        {"", "the file is empty: no header line"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pm100_table t = PM100_TABLE_INIT;
        exa_error_t err = EXA_ERROR_INIT;
        assert_int_equal(
            pm100_parse(cases[i].in, strlen(cases[i].in), &t, &err), -1);
        assert_int_equal(err.code, EXA_EPARSE);
        assert_string_equal(err.text, cases[i].msg);
        pm100_table_release(&t);
    }
}

static void test_pm100_load_file(void **state)
{
    struct pm100_table t = PM100_TABLE_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    char *dir = tu_mkdtemp();
    char *path = xstrfmt("%s/x.csv", dir);
    char *missing = xstrfmt("%s/missing.csv", dir);
    struct strbuf want = STRBUF_INIT;

    assert_int_equal(pm100_load_file(missing, 1 << 20, &t, &err), -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    strbuf_addf(&want,
                "cannot open dataset file '%s': No such file or "
                "directory",
                missing);
    assert_string_equal(err.text, want.buf);
    pm100_table_release(&t);

    tu_write_file(path, HEADER "1,u,1,1,2020-05-01T00:00:00Z,100\n"
                               "2,u,1\n");
    assert_int_equal(pm100_load_file(path, 1 << 20, &t, &err), -1);
    assert_int_equal(err.code, EXA_EPARSE);
    strbuf_reset(&want);
    strbuf_addf(&want,
                "dataset file '%s': line 3: expected 6 fields like "
                "the header, found 3",
                path);
    assert_string_equal(err.text, want.buf);
    pm100_table_release(&t);

    /* The size cap is a hard limit. */
    assert_int_equal(pm100_load_file(path, 10, &t, &err), -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_non_null(strstr(err.text, "is larger than 10 bytes"));
    pm100_table_release(&t);

    tu_rmtree(dir);
    strbuf_release(&want);
    free(path);
    free(missing);
    free(dir);
}

/* The bundled sample: counts the generator guarantees. */
static void test_sample_and_split(void **state)
{
    struct pm100_table t = PM100_TABLE_INIT;
    struct pm100_split s;
    exa_error_t err = EXA_ERROR_INIT;

    if (pm100_load_file("data/pm100-sample.csv", 1 << 24, &t, &err) < 0)
        fail_msg("%s", err.text);
    assert_int_equal(t.records, 600);
    assert_int_equal(t.skipped, 7);
    pm100_split(&t, 0, &s);
    assert_int_equal(s.ntrain + s.nval + s.outside, 593);
    assert_int_equal(s.outside, 0);
    for (size_t i = 0; i < s.ntrain; i++)
        assert_true(t.rows[s.train[i]].submit_time < PM100_TRAIN_TO);
    for (size_t i = 0; i < s.nval; i++)
        assert_true(t.rows[s.val[i]].submit_time >= PM100_VAL_FROM);
    pm100_split_release(&s);
    pm100_split(&t, 1, &s);
    assert_int_equal(s.ntrain, 50);
    assert_int_equal(s.nval, 50);
    /* The first usable rows, in file order. */
    assert_int_equal(s.train[0], 0);
    assert_true(s.train[49] == 49);
    pm100_split_release(&s);
    pm100_table_release(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_records),
        cmocka_unit_test(test_csv_bad_quotes),
        cmocka_unit_test(test_pm100_rows_and_skips),
        cmocka_unit_test(test_pm100_overflow_and_record_cap),
        cmocka_unit_test(test_pm100_malformed),
        cmocka_unit_test(test_pm100_load_file),
        cmocka_unit_test(test_sample_and_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
