/*
 * test_promtext.c - the Prometheus text writer renders exact bytes: HELP
 * and TYPE once per family, sorted families and series, escaping, value
 * formatting, duplicate series summed, invalid names refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libobserve/promtext.h"

static char *render(struct prom_set *set)
{
    struct strbuf sb = STRBUF_INIT;
    prom_render(set, &sb);
    return strbuf_detach(&sb, NULL);
}

static void test_families_sorted_once(void **state)
{
    struct prom_set *set = prom_set_new();
    struct prom_family *b, *a, *b2;
    char *s;
    (void)state;
    b = prom_family(set, "slurm_nodes_idle", PROM_GAUGE, "Idle nodes", NULL);
    a = prom_family(set, "exa_jobs", PROM_GAUGE, "Tracked jobs by state", NULL);
    assert_non_null(b);
    assert_non_null(a);
    assert_int_equal(
        prom_add(b, (const char *[]){"cluster", "zeta", NULL}, 3, NULL), 0);
    assert_int_equal(
        prom_add(b, (const char *[]){"cluster", "alpha", NULL}, 1, NULL), 0);
    b2 = prom_family(set, "slurm_nodes_idle", PROM_GAUGE, "ignored", NULL);
    assert_ptr_equal(b, b2);
    assert_int_equal(
        prom_add(a, (const char *[]){"state", "RUNNING", NULL}, 2, NULL), 0);
    s = render(set);
    assert_string_equal(s, "# HELP exa_jobs Tracked jobs by state\n"
                           "# TYPE exa_jobs gauge\n"
                           "exa_jobs{state=\"RUNNING\"} 2\n"
                           "# HELP slurm_nodes_idle Idle nodes\n"
                           "# TYPE slurm_nodes_idle gauge\n"
                           "slurm_nodes_idle{cluster=\"alpha\"} 1\n"
                           "slurm_nodes_idle{cluster=\"zeta\"} 3\n");
    free(s);
    prom_set_free(set);
}

static void test_escaping(void **state)
{
    struct prom_set *set = prom_set_new();
    struct prom_family *f;
    char *s;
    (void)state;
    f = prom_family(set, "x_total", PROM_COUNTER, "a\\b\nc \"q\"", NULL);
    assert_int_equal(
        prom_add(f,
                 (const char *[]){"v", "a\\b\"c\nd", "skip", NULL, "bad",
                                  "x\xff"
                                  "y",
                                  NULL},
                 1, NULL),
        0);
    s = render(set);
    assert_string_equal(s, "# HELP x_total a\\\\b\\nc \"q\"\n"
                           "# TYPE x_total counter\n"
                           "x_total{v=\"a\\\\b\\\"c\\nd\","
                           "bad=\"x\xEF\xBF\xBDy\"} 1\n");
    free(s);
    prom_set_free(set);
}

static void test_values(void **state)
{
    struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {-0.0, "0"},
        {42, "42"},
        {-3, "-3"},
        {1, "1"},
        {999999999999999.0, "999999999999999"},
        {1e15, "1000000000000000"},
        {1e15 + 2, "1000000000000002"},
        {1.5, "1.5"},
        {9007199254740991.0, "9007199254740991"},
        {9007199254740992.0, "9007199254740992"},
        {0.1, "0.1"},
        {1.0 / 3.0, "0.33333333333333331"},
        {2.5e-7, "2.5e-07"},
        {INFINITY, "+Inf"},
        {-INFINITY, "-Inf"},
        {NAN, "NaN"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strbuf sb = STRBUF_INIT;
        prom_format_value(&sb, cases[i].v);
        assert_string_equal(sb.buf, cases[i].want);
        strbuf_release(&sb);
    }
    /* a rendered sample writes its value by the same rules (whole counts
     * take a shorter path there) */
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct prom_set *set = prom_set_new();
        struct prom_family *f = prom_family(set, "v", PROM_GAUGE, NULL, NULL);
        char want[64], *s;
        assert_int_equal(prom_add(f, NULL, cases[i].v, NULL), 0);
        snprintf(want, sizeof(want), "# TYPE v gauge\nv %s\n", cases[i].want);
        s = render(set);
        assert_string_equal(s, want);
        free(s);
        prom_set_free(set);
    }
}

static void test_duplicates_summed(void **state)
{
    struct prom_set *set = prom_set_new();
    struct prom_family *f;
    char *s;
    (void)state;
    f = prom_family(set, "slurm_account_jobs_running", PROM_GAUGE, NULL, NULL);
    for (int i = 0; i < 5; i++)
        prom_add(f, (const char *[]){"account", i % 2 ? "b" : "a", NULL}, 1,
                 NULL);
    prom_add(f, NULL, 0.5, NULL);
    assert_int_equal(prom_set_series(set), 3);
    s = render(set);
    assert_string_equal(s, "# TYPE slurm_account_jobs_running gauge\n"
                           "slurm_account_jobs_running 0.5\n"
                           "slurm_account_jobs_running{account=\"a\"} 3\n"
                           "slurm_account_jobs_running{account=\"b\"} 2\n");
    free(s);
    prom_set_free(set);
}

/* prom_set_adopt: a family only the adopted set has moves whole (its
 * shared label strings too), one both have gets the adopted samples,
 * summed where the label sets are equal, and the adopted set's label
 * strings outlive it. The same bytes as one set built alone. */
static void test_adopt(void **state)
{
    struct prom_set *a = prom_set_new(), *b = prom_set_new();
    struct prom_set *one = prom_set_new();
    char *got, *want;
    (void)state;
    for (int w = 0; w < 2; w++) {
        struct prom_set *x = w ? one : a, *y = w ? one : b;
        struct prom_family *fa, *fb, *fc;
        struct prom_labels l;
        char big[200];
        fa = prom_family(x, "slurm_jobs_running", PROM_GAUGE, "Running", NULL);
        prom_add(fa, (const char *[]){"cluster", "c", NULL}, 2, NULL);
        prom_add(fa, (const char *[]){"cluster", "d", NULL}, 1, NULL);
        fb = prom_family(y, "slurm_jobs_running", PROM_GAUGE, "Running", NULL);
        prom_add(fb, (const char *[]){"cluster", "c", NULL}, 3, NULL);
        prom_add(fb, (const char *[]){"cluster", "a", NULL}, 7, NULL);
        fc = prom_family(y, "slurm_job_cpus", PROM_GAUGE, "CPUs", NULL);
        prom_family_unique(fc);
        /* enough label bytes to fill several of y's blocks */
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        for (int i = 0; i < 2000; i++) {
            char id[16];
            snprintf(id, sizeof(id), "%05d", i);
            assert_int_equal(
                prom_labels_make(y,
                                 (const char *[]){"job_id", id, "x", big, NULL},
                                 &l, NULL),
                0);
            prom_add_labels(fc, &l, i);
        }
    }
    prom_set_adopt(a, b); /* b is freed */
    prom_set_adopt(a, NULL);
    got = render(a);
    want = render(one);
    assert_string_equal(got, want);
    assert_non_null(strstr(got, "slurm_jobs_running{cluster=\"c\"} 5\n"));
    assert_non_null(strstr(got, "slurm_jobs_running{cluster=\"a\"} 7\n"));
    assert_int_equal(prom_set_series(a), 3 + 2000);
    free(got);
    free(want);
    prom_set_free(a);
    prom_set_free(one);
}

/* Samples added already in label order (family_settle's no-sort path)
 * and the same samples reversed (the sort) render the same bytes, equal
 * label sets summed either way, in indexed and unique families. */
static struct prom_set *ordered_set(int reverse)
{
    struct prom_set *set = prom_set_new();
    struct prom_family *u =
        prom_family(set, "slurm_node_job", PROM_GAUGE, NULL, NULL);
    struct prom_family *x =
        prom_family(set, "slurm_job_gpus", PROM_GAUGE, NULL, NULL);
    prom_family_unique(u);
    for (int k = 0; k < 3000; k++) {
        int i = reverse ? 2999 - k : k;
        char id[16], node[16];
        /* ids of one width sort as their bytes: ten adds per job, two of
         * them for node n0000 */
        snprintf(id, sizeof(id), "%d", 100000 + i / 10 * 10);
        snprintf(node, sizeof(node), "n%04d", i % 10 == 1 ? 0 : i % 10);
        prom_add(
            u,
            (const char *[]){"cluster", "c", "job_id", id, "node", node, NULL},
            1, NULL);
        prom_add(x, (const char *[]){"cluster", "c", "job_id", id, NULL}, 2,
                 NULL);
    }
    return set;
}

static void test_presorted_same_bytes(void **state)
{
    struct prom_set *a = ordered_set(0), *b = ordered_set(1);
    char *sa, *sb;
    (void)state;
    assert_int_equal(prom_set_series(a), prom_set_series(b));
    sa = render(a);
    sb = render(b);
    assert_string_equal(sa, sb);
    assert_int_equal(prom_set_series(a), 300 * 9 + 300);
    assert_non_null(strstr(sa, "slurm_node_job{cluster=\"c\",job_id=\"100010\","
                               "node=\"n0000\"} 2\n"));
    assert_non_null(
        strstr(sa, "slurm_job_gpus{cluster=\"c\",job_id=\"100010\"} 20\n"));
    free(sa);
    free(sb);
    prom_set_free(a);
    prom_set_free(b);
}

static void test_invalid_names(void **state)
{
    struct prom_set *set = prom_set_new();
    struct prom_family *f;
    exa_error_t err = EXA_ERROR_INIT;
    char *s;
    (void)state;
    assert_null(prom_family(set, "9bad", PROM_GAUGE, NULL, &err));
    assert_string_equal(err.text, "invalid metric name '9bad'");
    assert_null(prom_family(set, "a-b", PROM_GAUGE, NULL, NULL));
    f = prom_family(set, "ok:rule", PROM_GAUGE, NULL, NULL);
    assert_non_null(f);
    assert_null(prom_family(set, "ok:rule", PROM_COUNTER, NULL, &err));
    assert_string_equal(err.text,
                        "metric 'ok:rule' declared as gauge and counter");
    assert_int_equal(
        prom_add(f, (const char *[]){"__name__", "x", NULL}, 1, &err), -1);
    assert_int_equal(prom_add(f, (const char *[]){"a:b", "x", NULL}, 1, &err),
                     -1);
    assert_string_equal(err.text,
                        "invalid label name 'a:b' on metric 'ok:rule'");
    s = render(set);
    assert_string_equal(s, "# TYPE ok:rule gauge\n");
    free(s);
    prom_set_free(set);
}

/*
 * A label set made once (prom_labels_make) and added to three families -
 * one unique, one indexed, one indexed that also gets the same labels
 * through prom_add - renders the bytes prom_add gives for each; an
 * invalid name is refused with nothing made.
 */
static void test_shared_labels(void **state)
{
    struct prom_set *set = prom_set_new(), *ref = prom_set_new();
    const char *const nl[] = {"cluster", "c",         "node", "n1", "skip",
                              NULL,      "partition", "a\"b", NULL};
    struct prom_labels l = {"unchanged", 9};
    exa_error_t err = EXA_ERROR_INIT;
    const char *names[] = {"node_cpu", "node_gpu", "node_up"};
    struct prom_family *f[3], *r[3];
    char *s, *t;
    (void)state;
    for (int i = 0; i < 3; i++) {
        f[i] = prom_family(set, names[i], PROM_GAUGE, NULL, NULL);
        r[i] = prom_family(ref, names[i], PROM_GAUGE, NULL, NULL);
    }
    prom_family_unique(f[0]);
    assert_int_equal(prom_labels_make(set, nl, &l, &err), 0);
    assert_string_equal(l.s,
                        "{cluster=\"c\",node=\"n1\",partition=\"a\\\"b\"}");
    assert_int_equal(l.len, strlen(l.s));
    prom_add_labels(f[0], &l, 64);
    prom_add_labels(f[1], &l, 8);
    prom_add_labels(f[1], &l, 2); /* summed into the same series */
    assert_int_equal(prom_add(f[2], nl, 1, NULL), 0);
    prom_add_labels(f[2], &l, 1); /* the series prom_add made */
    assert_int_equal(prom_add(r[0], nl, 64, NULL), 0);
    assert_int_equal(prom_add(r[1], nl, 10, NULL), 0);
    assert_int_equal(prom_add(r[2], nl, 2, NULL), 0);
    assert_int_equal(prom_set_series(set), 3);
    s = render(set);
    t = render(ref);
    assert_string_equal(s, t);
    assert_non_null(strstr(s, "node_gpu{cluster=\"c\",node=\"n1\","
                              "partition=\"a\\\"b\"} 10\n"));
    free(s);
    free(t);
    /* no labels at all, and no value set */
    assert_int_equal(prom_labels_make(set, NULL, &l, NULL), 0);
    assert_string_equal(l.s, "");
    assert_int_equal(
        prom_labels_make(set, (const char *[]){"a", NULL, NULL}, &l, NULL), 0);
    assert_int_equal(l.len, 0);
    /* an invalid name: -1, err says which, *out untouched */
    l.s = "kept";
    l.len = 4;
    assert_int_equal(
        prom_labels_make(set, (const char *[]){"ok", "1", "__x", "2", NULL}, &l,
                         &err),
        -1);
    assert_string_equal(err.text, "invalid label name '__x'");
    assert_string_equal(l.s, "kept");
    prom_set_free(set);
    prom_set_free(ref);
}

/* More pairs than the fast path takes, and values to escape after plain
 * ones, render as the pairs in order with each value escaped. */
static void test_many_pairs(void **state)
{
    struct prom_set *set = prom_set_new();
    struct prom_family *f = prom_family(set, "m", PROM_GAUGE, NULL, NULL);
    static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "g",
                                       "h", "i", "j", "k", "l", "m", "n",
                                       "o", "p", "q", "r", "s", "t"};
    const char *labels[2 * 20 + 1];
    struct strbuf want = STRBUF_INIT;
    char *s;
    (void)state;
    for (int i = 0; i < 20; i++) {
        labels[2 * i] = keys[i];
        labels[2 * i + 1] = i == 19 ? "x\ny" : keys[i];
    }
    labels[40] = NULL;
    assert_int_equal(prom_add(f, labels, 1, NULL), 0);
    assert_int_equal(prom_add(f, labels, 1, NULL), 0);
    strbuf_addstr(&want, "# TYPE m gauge\nm{");
    for (int i = 0; i < 20; i++)
        strbuf_addf(&want, "%s%s=\"%s\"", i ? "," : "", keys[i],
                    i == 19 ? "x\\ny" : keys[i]);
    strbuf_addstr(&want, "} 2\n");
    s = render(set);
    assert_string_equal(s, want.buf);
    free(s);
    strbuf_release(&want);
    prom_set_free(set);
}

/* prom_render_stream's sink: appends the pieces, counts them. */
struct sink {
    struct strbuf sb;
    int pieces, fail_at;
};

static int sink_write(void *ctx, const char *bytes, size_t n)
{
    struct sink *k = ctx;
    if (++k->pieces == k->fail_at)
        return -1;
    assert_true(n > 0);
    strbuf_add(&k->sb, bytes, n);
    return 0;
}

/* A set of 20,000 series (about 1 MB) with a family hinted unique, one
 * of whose series is added twice. */
static struct prom_set *big_set(void)
{
    struct prom_set *set = prom_set_new();
    struct prom_family *f =
        prom_family(set, "slurm_job_info", PROM_GAUGE, "jobs", NULL);
    struct prom_family *g =
        prom_family(set, "slurm_user_jobs_running", PROM_GAUGE, NULL, NULL);
    prom_family_unique(f);
    for (int i = 20000; i > 0; i--) {
        char id[16], user[16];
        snprintf(id, sizeof(id), "%d", i);
        snprintf(user, sizeof(user), "u%03d", i % 7);
        assert_int_equal(prom_add(f,
                                  (const char *[]){"cluster", "c", "job_id", id,
                                                   "user", user, NULL},
                                  1, NULL),
                         0);
        assert_int_equal(
            prom_add(g, (const char *[]){"cluster", "c", "user", user, NULL}, 1,
                     NULL),
            0);
    }
    assert_int_equal(prom_add(f,
                              (const char *[]){"cluster", "c", "job_id", "7",
                                               "user", "u000", NULL},
                              1, NULL),
                     0);
    return set;
}

static void test_stream_same_bytes(void **state)
{
    struct prom_set *a = big_set(), *b = big_set();
    struct sink k = {STRBUF_INIT, 0, 0};
    char *whole;
    (void)state;
    whole = render(a);
    assert_int_equal(prom_render_stream(b, sink_write, &k), 0);
    assert_true(k.pieces > 10); /* ~1 MB in ~60 KiB pieces */
    assert_string_equal(k.sb.buf, whole);
    /* the unique family still sums a series added twice, in order */
    assert_non_null(strstr(whole, "slurm_job_info{cluster=\"c\",job_id=\"7\","
                                  "user=\"u000\"} 2\n"));
    assert_non_null(strstr(whole,
                           "slurm_job_info{cluster=\"c\",job_id=\"1\","
                           "user=\"u001\"} 1\n"
                           "slurm_job_info{cluster=\"c\",job_id=\"10\","));
    assert_non_null(
        strstr(whole, "slurm_user_jobs_running{cluster=\"c\",user=\"u000\"} "
                      "2857\n"));
    assert_int_equal(prom_set_series(a), 20000 + 7);
    free(whole);
    strbuf_release(&k.sb);
    prom_set_free(a);
    prom_set_free(b);
}

static void test_stream_write_fails(void **state)
{
    struct prom_set *a = big_set();
    struct sink k = {STRBUF_INIT, 0, 3};
    (void)state;
    assert_int_equal(prom_render_stream(a, sink_write, &k), -1);
    assert_int_equal(k.pieces, 3); /* stopped at the failed write */
    strbuf_release(&k.sb);
    prom_set_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families_sorted_once),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_duplicates_summed),
        cmocka_unit_test(test_adopt),
        cmocka_unit_test(test_presorted_same_bytes),
        cmocka_unit_test(test_invalid_names),
        cmocka_unit_test(test_shared_labels),
        cmocka_unit_test(test_many_pairs),
        cmocka_unit_test(test_stream_same_bytes),
        cmocka_unit_test(test_stream_write_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
