/*
 * test_place_summary.c - placement from the node summary (migrations 7,
 * 12 and 13, store_node_summary_list) chooses and explains exactly as
 * placement from the node rows did: random snapshots of 40 clusters written
 * through store_nodes_replace (duplicate node names included, which INSERT OR
 * REPLACE resolves), edited by hand with UPDATE and DELETE, then every
 * ask and scorer gives the same place_result_json from both sources; and
 * the summary's counts match the rows'. The JSON `exa hpc place` streams
 * is that document byte for byte (check_writer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libstore/nodes.h"
#include "libstore/store.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

#define NCL 40

static unsigned rnd_state = 12345;
static unsigned rnd(unsigned n)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (rnd_state >> 8) % n;
}

/* Candidates the old way: every node row, split among the clusters. */
static void rows_candidates(store_t *st, const struct fleet *f,
                            struct place_cluster **out, struct node_row **rows,
                            size_t *nrows)
{
    struct place_cluster *v = xcalloc(f->nr, sizeof(*v));
    size_t j = 0;
    assert_int_equal(store_nodes_list(st, NULL, rows, nrows, NULL), 0);
    for (size_t i = 0; i < f->nr; i++) {
        v[i].name = f->v[i].def.name;
        v[i].scheduler = f->v[i].def.scheduler;
        v[i].has_carbon_intensity = f->v[i].def.has_carbon_intensity;
        v[i].carbon_intensity = f->v[i].def.carbon_intensity;
        while (j < *nrows && strcmp((*rows)[j].cluster, v[i].name) < 0)
            j++;
        v[i].nodes = *rows + j;
        while (j < *nrows && !strcmp((*rows)[j].cluster, v[i].name)) {
            v[i].nnodes++;
            j++;
        }
    }
    *out = v;
}

/* a and b are the same summary row (what placement reads of it) */
static void assert_same_row(const struct node_row *a, const struct node_row *b)
{
    assert_string_equal(a->cluster, b->cluster);
    assert_string_equal(a->captured_at, b->captured_at);
    assert_string_equal(a->state, b->state);
    assert_int_equal(a->gpus, b->gpus);
    assert_int_equal(a->gpus_used, b->gpus_used);
    assert_int_equal(a->cpus, b->cpus);
    assert_int_equal(a->count, b->count);
}

/* A summary key of a node row, as migration 7 groups them (what
 * placement reads), with its partitions list (migration 13). */
struct ref_key {
    const char *at, *state, *parts;
    int gpus, gpus_used, cpus;
};

static void ref_key_of(const struct node_row *r, struct ref_key *k)
{
    int usable =
        r->state && (!strcmp(r->state, "idle") || !strcmp(r->state, "mixed"));
    k->at = r->captured_at ? r->captured_at : "";
    k->state = usable ? r->state : "other";
    k->parts = r->partitions ? r->partitions : "";
    k->gpus = r->gpus;
    k->gpus_used = usable ? r->gpus_used : -1;
    k->cpus = usable ? r->cpus : -1;
}

static int ref_cmp(const void *pa, const void *pb)
{
    const struct ref_key *a = pa, *b = pb;
    int c;
    if ((c = strcmp(a->at, b->at)) || (c = strcmp(a->state, b->state)))
        return c;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    if (a->gpus_used != b->gpus_used)
        return a->gpus_used < b->gpus_used ? -1 : 1;
    if (a->cpus != b->cpus)
        return a->cpus < b->cpus ? -1 : 1;
    return strcmp(a->parts, b->parts);
}

/* The summary of cluster computed here from its node rows
 * (store_nodes_list), independently of the store's GROUP BY: the same
 * rows, in key order, with their counts. */
static void check_against_rows(store_t *st, const char *cluster,
                               const struct node_row *got, size_t ngot)
{
    struct node_row *rows = NULL;
    size_t n = 0, g = 0;
    struct ref_key *k;
    assert_int_equal(store_nodes_list(st, cluster, &rows, &n, NULL), 0);
    k = xcalloc(n ? n : 1, sizeof(*k));
    for (size_t i = 0; i < n; i++)
        ref_key_of(&rows[i], &k[i]);
    qsort(k, n, sizeof(*k), ref_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !ref_cmp(&k[i], &k[j]))
            j++;
        assert_true(g < ngot);
        assert_string_equal(got[g].captured_at, k[i].at);
        assert_string_equal(got[g].state, k[i].state);
        assert_string_equal(got[g].partitions, k[i].parts);
        assert_int_equal(got[g].gpus, k[i].gpus);
        assert_int_equal(got[g].gpus_used, k[i].gpus_used);
        assert_int_equal(got[g].cpus, k[i].cpus);
        assert_int_equal(got[g].count, (long long)(j - i));
        g++;
        i = j;
    }
    assert_int_equal(g, ngot);
    free(k);
    node_rows_free(rows, n);
}

/* Rows of the summary as store_node_summary_list gives them for every
 * cluster (the texts of cluster_node_summary where current) are field by
 * field those it gives cluster by cluster, and those this test groups
 * from the node rows itself. */
static void check_summary_rows(store_t *st, const struct fleet *f)
{
    struct node_row *all = NULL;
    size_t nall = 0, k = 0;
    assert_int_equal(store_node_summary_list(st, NULL, &all, &nall, NULL), 0);
    for (size_t i = 0; i < f->nr; i++) {
        struct node_row *one = NULL;
        size_t none = 0;
        assert_int_equal(
            store_node_summary_list(st, f->v[i].def.name, &one, &none, NULL),
            0);
        check_against_rows(st, f->v[i].def.name, one, none);
        for (size_t j = 0; j < none; j++, k++) {
            assert_true(k < nall);
            assert_same_row(&all[k], &one[j]);
            assert_string_equal(all[k].partitions, one[j].partitions);
            assert_int_equal(all[k].mem_mb, -1);
            assert_null(all[k].node);
        }
        node_rows_free(one, none);
    }
    assert_int_equal(k, nall);
    node_rows_free(all, nall);
}

static long long stale_texts(store_t *st)
{
    sqlite3_stmt *s;
    long long n;
    assert_int_equal(sqlite3_prepare_v2(st->db,
                                        "SELECT count(*) FROM "
                                        "cluster_node_summary WHERE rows IS "
                                        "NULL",
                                        -1, &s, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* Save every cluster's snapshot again through store_nodes_replace, with
 * the rows it has: the snapshot save that writes the summary texts. */
static void resave_all(store_t *st, const struct fleet *f)
{
    for (size_t i = 0; i < f->nr; i++) {
        struct node_row *rows = NULL;
        size_t n = 0;
        assert_int_equal(
            store_nodes_list(st, f->v[i].def.name, &rows, &n, NULL), 0);
        assert_int_equal(
            store_nodes_replace(st, f->v[i].def.name, "slurm", rows, n, NULL),
            0);
        node_rows_free(rows, n);
    }
}

static char *choose_json(const struct place_cluster *c, size_t n,
                         const struct place_ask *ask,
                         const struct place_scorer *sc, time_t now)
{
    struct place_result res;
    json_t *doc;
    char *s;
    memset(&res, 0, sizeof(res));
    assert_int_equal(place_choose(c, n, ask, sc, 300, now, &res, NULL), 0);
    doc = place_result_json(&res, 1);
    s = json_dumps(doc,
                   JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    place_result_release(&res);
    return s;
}

/*
 * place_result_write (what `exa hpc place --json` streams) writes the
 * bytes jx_dumpf gives for place_result_json marked by
 * place_json_mark_stale, with and without the explanation, with no
 * failed refresh and with failures (a cluster failing twice: the last
 * error; a name that is no candidate; errors with quotes, a newline,
 * UTF-8 and a byte that is not UTF-8).
 */
static void check_writer(const struct place_cluster *c, size_t n,
                         const struct place_ask *ask,
                         const struct place_scorer *sc, time_t now)
{
    struct place_result res;
    struct strvec failed = STRVEC_INIT, errors = STRVEC_INIT;
    memset(&res, 0, sizeof(res));
    assert_int_equal(place_choose(c, n, ask, sc, 300, now, &res, NULL), 0);
    for (int round = 0; round < 2; round++) {
        if (round) {
            strvec_push(&failed, "c002");
            strvec_push(&errors, "ssh: \"login2\" refused\nretry");
            strvec_push(&failed, "c005");
            strvec_push(&errors, "first");
            strvec_push(&failed, "nosuch");
            strvec_push(&errors, "caf\xc3\xa9");
            strvec_push(&failed, "c005");
            strvec_push(&errors, "timed out \xff");
        }
        for (int explain = 0; explain < 2; explain++) {
            json_t *doc = place_result_json(&res, explain);
            char *want = NULL, *got = NULL;
            size_t wn = 0, gn = 0;
            FILE *fp = open_memstream(&want, &wn);
            struct jsonw w;
            place_json_mark_stale(json_object_get(doc, "candidates"), "name",
                                  &failed, &errors);
            if (explain)
                place_json_mark_stale(
                    json_object_get(json_object_get(doc, "explain"),
                                    "candidates"),
                    "cluster", &failed, &errors);
            assert_int_equal(jx_dumpf(doc, fp, 1), 0);
            fclose(fp);
            fp = open_memstream(&got, &gn);
            jsonw_init(&w, fp, 1);
            jsonw_obj_begin(&w);
            place_result_write(&w, &res, explain, &failed, &errors);
            jsonw_obj_end(&w);
            assert_int_equal(jsonw_finish(&w), 0);
            fclose(fp);
            assert_string_equal(got, want);
            free(want);
            free(got);
            json_decref(doc);
        }
    }
    strvec_clear(&failed);
    strvec_clear(&errors);
    place_result_release(&res);
}

static void test_summary_same_choice(void **state)
{
    static const char *const states[] = {"idle",  "mixed", "allocated",
                                         "down",  "drain", "unknown",
                                         "mixed", "idle"};
    char dir[] = "/tmp/exa-test-psum-XXXXXX";
    char *db, names[NCL][16], *cmd;
    store_t *st;
    struct fleet f;
    time_t now = time(NULL);
    char stamp[2][32];
    (void)state;

    assert_non_null(mkdtemp(dir));
    db = xstrfmt("%s/p.db", dir);
    st = store_open(db, NULL);
    assert_non_null(st);
    for (int k = 0; k < 2; k++) {
        time_t t = now - (k ? 900 : 60); /* fresh, and stale */
        strftime(stamp[k], sizeof(stamp[k]), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    }
    f.nr = NCL;
    f.v = xcalloc(NCL, sizeof(*f.v));
    for (int c = 0; c < NCL; c++) {
        struct node_row rows[40];
        char nn[40][16];
        size_t n = 1 + rnd(39);
        snprintf(names[c], sizeof(names[c]), "c%03d", c);
        f.v[c].def.name = names[c];
        f.v[c].def.scheduler = (char *)"slurm";
        f.v[c].def.has_carbon_intensity = (int)rnd(2);
        f.v[c].def.carbon_intensity = 50 + rnd(500);
        f.v[c].state = CLUSTER_ACTIVE;
        memset(rows, 0, sizeof(rows));
        for (size_t i = 0; i < n; i++) {
            /* every 7th name repeats the one before (REPLACE) */
            snprintf(nn[i], sizeof(nn[i]), "n%02zu", i % 7 ? i : i - 1);
            rows[i].node = nn[i];
            rows[i].state = (char *)states[rnd(8)];
            rows[i].gpus = (int)rnd(9);
            rows[i].gpus_used = rnd(4) ? (int)rnd(9) : -1;
            rows[i].cpus = rnd(5) ? 16 * (int)(1 + rnd(8)) : -1;
            rows[i].mem_mb = -1;
            rows[i].captured_at = stamp[c % 5 == 0];
        }
        assert_int_equal(
            store_nodes_replace(st, names[c], "slurm", rows, n, NULL), 0);
    }
    /* every cluster's text was written by its snapshot save */
    assert_int_equal(stale_texts(st), 0);
    check_summary_rows(st, &f);
    /* edits that bypass store_nodes_replace: the triggers follow them */
    assert_int_equal(store_exec(st,
                                "UPDATE nodes SET state = 'idle', gpus_used = "
                                "0 WHERE node = 'n03';"
                                "UPDATE nodes SET gpus_used = NULL WHERE node "
                                "= 'n05';"
                                "DELETE FROM nodes WHERE node = 'n08';",
                                NULL),
                     0);

    {
        struct place_cluster *sum_c = NULL, *row_c = NULL;
        struct node_row *sum_rows = NULL, *rows = NULL;
        size_t nsum_c = 0, nsum_rows = 0, nrows = 0;
        long long counted = 0;
        static const struct place_ask asks[] = {
            {0, 0, 1, NULL},  {1, 0, 1, NULL},  {8, 64, 2, NULL},
            {4, 16, 1, NULL}, {16, 0, 4, NULL}, {0, 512, 8, NULL},
            {3, 7, 3, NULL},  {64, 0, 1, NULL}};
        const struct place_scorer *const *sc = place_scorers();

        assert_int_equal(place_load_candidates(st, &f, &sum_c, &nsum_c,
                                               &sum_rows, &nsum_rows, NULL),
                         0);
        rows_candidates(st, &f, &row_c, &rows, &nrows);
        assert_int_equal(nsum_c, NCL);
        assert_true(nsum_rows < nrows); /* the summary is smaller */
        for (size_t i = 0; i < nsum_rows; i++)
            counted += sum_rows[i].count;
        assert_int_equal(counted, (long long)nrows);
        for (size_t a = 0; a < sizeof(asks) / sizeof(asks[0]); a++) {
            for (size_t k = 0; sc[k]; k++) {
                char *x = choose_json(sum_c, nsum_c, &asks[a], sc[k], now);
                char *y = choose_json(row_c, NCL, &asks[a], sc[k], now);
                assert_string_equal(x, y);
                free(x);
                free(y);
                check_writer(sum_c, nsum_c, &asks[a], sc[k], now);
            }
        }
        free(sum_c);
        free(row_c);
        node_rows_free(sum_rows, nsum_rows);
        node_rows_free(rows, nrows);
    }
    /* the hand edits left their clusters' texts NULL (their node rows
     * grouped); texts that are not node_summary_encode's form are read
     * so too; a snapshot save writes them again */
    assert_true(stale_texts(st) > 0);
    check_summary_rows(st, &f);
    resave_all(st, &f);
    assert_int_equal(stale_texts(st), 0);
    check_summary_rows(st, &f);
    assert_int_equal(
        store_exec(st,
                   "UPDATE cluster_node_summary SET rows = CASE cluster "
                   "WHEN 'c001' THEN 'garbage' WHEN 'c002' THEN "
                   "'idle\t8\t0\t64\t1\n' WHEN 'c003' THEN '@t\n' WHEN "
                   "'c004' THEN '@t\nidle\t8\t0\t64\t1' WHEN 'c006' THEN "
                   "'@t\nidle\t8\t0\t64\n' WHEN 'c007' THEN "
                   "'@t\nidle\t8\t0\t64\t1\t9\tx\n' WHEN 'c008' THEN "
                   "'@t\nidle\t8\t99999999999\t64\t1\n' WHEN 'c009' THEN "
                   "'@t\nidle\t8\t0\t64\t1\n@u\n' WHEN 'c010' THEN "
                   "'@t\nidle\t8\tx\t64\t1\n' ELSE rows END",
                   NULL),
        0);
    check_summary_rows(st, &f);
    /* a current text is what the read for every cluster returns (not
     * the node rows grouped again): a well-formed text for c011 that its
     * nodes do not give comes back as it is */
    resave_all(st, &f);
    assert_int_equal(store_exec(st,
                                "UPDATE cluster_node_summary SET rows = "
                                "'@t\nidle\t8\t0\t64\t3\t\n' WHERE cluster "
                                "= 'c011'",
                                NULL),
                     0);
    {
        struct node_row *all = NULL;
        size_t nall = 0, seen = 0;
        assert_int_equal(store_node_summary_list(st, NULL, &all, &nall, NULL),
                         0);
        for (size_t i = 0; i < nall; i++) {
            if (strcmp(all[i].cluster, "c011"))
                continue;
            seen++;
            assert_string_equal(all[i].captured_at, "t");
            assert_string_equal(all[i].state, "idle");
            assert_int_equal(all[i].count, 3);
        }
        assert_int_equal(seen, 1);
        node_rows_free(all, nall);
    }
    /* node rows of a cluster no snapshot save wrote, inserted by hand:
     * the trigger adds the cluster's text row (NULL), and the read for
     * every cluster groups its rows; there is no node_summary table
     * (migration 13) */
    assert_int_equal(store_exec(st,
                                "INSERT INTO nodes (cluster, node, gpus, "
                                "gpus_used, state, cpus, captured_at) VALUES "
                                "('zz', 'n1', 4, 1, 'mixed', 8, 't'), ('zz', "
                                "'n2', 4, 1, 'mixed', 8, 't'), ('zz', 'n3', "
                                "2, NULL, 'down', NULL, 't')",
                                NULL),
                     0);
    {
        struct node_row *all = NULL;
        size_t nall = 0, seen = 0;
        sqlite3_stmt *q;
        assert_int_equal(store_node_summary_list(st, NULL, &all, &nall, NULL),
                         0);
        for (size_t i = 0; i < nall; i++) {
            if (strcmp(all[i].cluster, "zz"))
                continue;
            seen++;
            if (!strcmp(all[i].state, "mixed")) {
                assert_int_equal(all[i].count, 2);
                assert_int_equal(all[i].gpus_used, 1);
            } else {
                assert_string_equal(all[i].state, "other");
                assert_int_equal(all[i].count, 1);
                assert_int_equal(all[i].gpus, 2);
                assert_int_equal(all[i].cpus, -1);
            }
        }
        assert_int_equal(seen, 2);
        node_rows_free(all, nall);
        assert_int_equal(sqlite3_prepare_v2(st->db,
                                            "SELECT count(*) FROM "
                                            "sqlite_master WHERE name = "
                                            "'node_summary'",
                                            -1, &q, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(q, 0), 0);
        sqlite3_finalize(q);
    }
    free(f.v);
    store_close(st);
    cmd = xstrfmt("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(db);
}

/* 1 when the comma-separated list l holds p */
static int in_list(const char *l, const char *p)
{
    size_t n = strlen(p);
    for (const char *c = l; c && *c;
         c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL)
        if (!strncmp(c, p, n) && (c[n] == ',' || !c[n]))
            return 1;
    return 0;
}

/* 1 when the list l holds a name of the list p ("a,b": any of them) */
static int in_any(const char *l, const char *p)
{
    char buf[64];
    for (const char *c = p, *e; c; c = *e ? e + 1 : NULL) {
        e = strchr(c, ',');
        if (!e)
            e = c + strlen(c);
        snprintf(buf, sizeof(buf), "%.*s", (int)(e - c), c);
        if (in_list(l, buf))
            return 1;
    }
    return 0;
}

/*
 * Candidates the old way, restricted by hand: every node row whose
 * partitions list holds part[i] (or a name of it, a list; none: all of
 * the cluster's rows),
 * copied into *rows (freed by the caller with free(); the strings stay
 * the store_nodes_list rows' in *all).
 */
static void rows_in_partitions(store_t *st, const struct fleet *f,
                               const char *const *part, const int *dflt,
                               struct place_cluster **out,
                               struct node_row **all, size_t *nall,
                               struct node_row **rows)
{
    struct place_cluster *v = xcalloc(f->nr, sizeof(*v));
    struct node_row *keep;
    size_t j = 0, nk = 0;
    assert_int_equal(store_nodes_list(st, NULL, all, nall, NULL), 0);
    keep = xcalloc(*nall ? *nall : 1, sizeof(*keep));
    for (size_t i = 0; i < f->nr; i++) {
        v[i].name = f->v[i].def.name;
        v[i].scheduler = f->v[i].def.scheduler;
        v[i].has_carbon_intensity = f->v[i].def.has_carbon_intensity;
        v[i].carbon_intensity = f->v[i].def.carbon_intensity;
        while (j < *nall && strcmp((*all)[j].cluster, v[i].name) < 0)
            j++;
        v[i].nodes = keep + nk;
        while (j < *nall && !strcmp((*all)[j].cluster, v[i].name)) {
            v[i].snapshot_nodes++;
            if (!part[i] || in_any((*all)[j].partitions, part[i])) {
                keep[nk++] = (*all)[j];
                v[i].nnodes++;
            }
            j++;
        }
        if (part[i]) {
            snprintf(v[i].partition, sizeof(v[i].partition), "%s", part[i]);
            v[i].partition_default = dflt[i];
        }
    }
    *rows = keep;
    *out = v;
}

/*
 * place_restrict_partition() chooses and explains as the node rows of
 * the partition do: random snapshots whose nodes sit in random
 * partition lists, asked for a partition (every cluster restricted, one
 * partition no node has, lists: a node in any of their names), and
 * without one (each cluster's default from
 * its capabilities: none recorded, one holding every node, one not, a
 * cluster whose only default is not a partition name), compared with the
 * rows filtered by hand, for several asks and every scorer.
 */
static void test_partition_same_choice(void **state)
{
    static const char *const lists[] = {"gpu", "cpu",   "gpu,long",  "cpu,long",
                                        NULL,  "debug", "long,gpu2", "gpu"};
    static const char *const states[] = {"idle", "mixed", "allocated",
                                         "down", "idle",  "mixed"};
    static const char *const asked[] = {"gpu",      "long",    "cpu",
                                        "nosuch",   "gpu,cpu", "nosuch,long",
                                        "gpu2,gpu", NULL};
    static const struct place_ask asks[] = {
        {0, 0, 1, NULL}, {1, 0, 1, NULL}, {8, 64, 2, NULL}, {4, 16, 1, NULL}};
    char dir[] = "/tmp/exa-test-ppart-XXXXXX";
    char *db, names[NCL][16], stamp[32], *cmd;
    const char *dpart[NCL];
    int dflt[NCL];
    store_t *st;
    struct fleet f;
    time_t now = time(NULL);
    (void)state;

    assert_non_null(mkdtemp(dir));
    db = xstrfmt("%s/p.db", dir);
    st = store_open(db, NULL);
    assert_non_null(st);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    f.nr = NCL;
    f.v = xcalloc(NCL, sizeof(*f.v));
    for (int c = 0; c < NCL; c++) {
        struct node_row rows[30];
        char nn[30][24];
        size_t n = 1 + rnd(29);
        snprintf(names[c], sizeof(names[c]), "c%03d", c);
        f.v[c].def.name = names[c];
        f.v[c].def.scheduler = (char *)"slurm";
        f.v[c].state = CLUSTER_ACTIVE;
        /* the default partition the capabilities record: none, "gpu"
         * (not every node), "cpu" said to hold all nodes, or a name
         * placement refuses */
        dpart[c] = NULL;
        switch (c % 5) {
        case 1:
            f.v[c].row.capabilities = xstrdup(
                "{\"partitions\":[{\"default\":false,\"name\":\"cpu\"},"
                "{\"default\":true,\"name\":\"gpu\",\"total_nodes\":3}],"
                "\"total_nodes\":9}");
            dpart[c] = "gpu";
            break;
        case 2:
            f.v[c].row.capabilities =
                xstrdup("{\"partitions\":[{\"default\":true,\"name\":\"cpu\","
                        "\"total_nodes\":9}],\"total_nodes\":9}");
            break;
        case 3:
            f.v[c].row.capabilities =
                xstrdup("{\"partitions\":[{\"default\":true,\"name\":\"a b\"}],"
                        "\"total_nodes\":9}");
            break;
        case 4: /* a default of unknown size: restricted */
            f.v[c].row.capabilities = xstrdup(
                "{\"partitions\":[{\"default\":true,\"name\":\"long\"}]}");
            dpart[c] = "long";
            break;
        }
        dflt[c] = 1;
        memset(rows, 0, sizeof(rows));
        for (size_t i = 0; i < n; i++) {
            snprintf(nn[i], sizeof(nn[i]), "n%02zu", i);
            rows[i].node = nn[i];
            rows[i].state = (char *)states[rnd(6)];
            rows[i].gpus = (int)rnd(9);
            rows[i].gpus_used = rnd(4) ? (int)rnd(9) : -1;
            rows[i].cpus = 16 * (int)(1 + rnd(8));
            rows[i].mem_mb = -1;
            rows[i].partitions = (char *)lists[rnd(8)];
            rows[i].captured_at = stamp;
        }
        assert_int_equal(
            store_nodes_replace(st, names[c], "slurm", rows, n, NULL), 0);
    }
    for (size_t p = 0; p < sizeof(asked) / sizeof(asked[0]); p++) {
        struct place_cluster *pc = NULL, *rc = NULL;
        struct node_row *sum = NULL, *prow = NULL, *all = NULL, *kept = NULL;
        size_t nc = 0, nsum = 0, nprow = 0, nall = 0;
        const char *part[NCL];
        const struct place_scorer *const *sc = place_scorers();
        int zero[NCL] = {0};
        for (int c = 0; c < NCL; c++)
            part[c] = asked[p] ? asked[p] : dpart[c];
        assert_int_equal(
            place_load_candidates(st, &f, &pc, &nc, &sum, &nsum, NULL), 0);
        assert_int_equal(
            place_restrict_partition(&f, asked[p], pc, nc, &prow, &nprow, NULL),
            0);
        rows_in_partitions(st, &f, part, asked[p] ? zero : dflt, &rc, &all,
                           &nall, &kept);
        for (size_t a = 0; a < sizeof(asks) / sizeof(asks[0]); a++) {
            struct place_ask ask = asks[a];
            ask.partition = asked[p];
            for (size_t k = 0; sc[k]; k++) {
                char *x = choose_json(pc, nc, &ask, sc[k], now);
                char *y = choose_json(rc, NCL, &ask, sc[k], now);
                assert_string_equal(x, y);
                free(x);
                free(y);
                check_writer(pc, nc, &ask, sc[k], now);
            }
        }
        if (asked[p] && !strcmp(asked[p], "nosuch")) {
            struct place_result res;
            assert_int_equal(
                place_choose(pc, nc, &asks[1], NULL, 300, now, &res, NULL), 0);
            assert_int_equal(res.chosen, -1);
            assert_non_null(
                strstr(res.cands[0].why, "no node in partition 'nosuch'"));
            place_result_release(&res);
        }
        free(pc);
        free(rc);
        free(kept);
        node_rows_free(sum, nsum);
        free(prow);
        node_rows_free(all, nall);
    }
    for (int c = 0; c < NCL; c++)
        free(f.v[c].row.capabilities);
    free(f.v);
    store_close(st);
    cmd = xstrfmt("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(db);
}

/*
 * node_summary_encode / node_summary_decode: a text round-trips, runs
 * share their strings, and every text not of that form gives -1 with
 * nothing appended (ASan: nothing leaked).
 */
static void test_summary_text_codec(void **state)
{
    static const char *const bad[] = {
        "idle\t1\t0\t8\t1\t\n",               /* a row before "@" */
        "@t\n",                               /* "@" with no row */
        "@t\n@u\nidle\t1\t0\t8\t1\t\n",       /* the same */
        "@t\nidle\t1\t0\t8\t1\t",             /* no LF at the end */
        "@t\nidle\t1\t0\t8\t1\n",             /* no partitions field (12) */
        "@t\nidle\t1\t0\t8\n",                /* two fields missing */
        "@t\nidle\t1\t0\t8\t1\tgpu\tx\n",     /* one too many */
        "@t\nidle\t1\t0\t8\t-\t\n",           /* not a number */
        "@t\nidle\t1\t0\t 8\t1\t\n",          /* a blank */
        "@t\nidle\t2147483648\t0\t8\t1\t\n",  /* past INT_MAX */
        "@t\nidle\t1\t0\t8\t1\t\nmixed\t1\n", /* a bad second row */
        "@t",                                 /* no LF */
        "\n",                                 /* an empty line */
        "@t\tu\nidle\t1\t0\t8\t1\t\n",        /* a TAB in "@" */
    };
    struct node_row in[4], *out = NULL;
    size_t nr = 0, alloc = 0;
    struct strbuf sb = STRBUF_INIT;
    (void)state;
    memset(in, 0, sizeof(in));
    for (int i = 0; i < 4; i++) {
        in[i].captured_at = (char *)(i < 3 ? "2026-12-04T10:00:00Z" : "");
        in[i].state = (char *)(i < 2 ? "idle" : "other");
        in[i].gpus = 8;
        in[i].gpus_used = i - 1; /* -1 .. 2 */
        in[i].cpus = i == 2 ? -1 : 64;
        in[i].count = 1000000000000LL + i;
        in[i].partitions = (char *)(i == 1 ? "gpu,long" : "");
    }
    assert_int_equal(node_summary_encode(in, 4, &sb), 0);
    assert_string_equal(sb.buf, "@2026-12-04T10:00:00Z\n"
                                "idle\t8\t-1\t64\t1000000000000\t\n"
                                "idle\t8\t0\t64\t1000000000001\tgpu,long\n"
                                "other\t8\t1\t-1\t1000000000002\t\n"
                                "@\n"
                                "other\t8\t2\t64\t1000000000003\t\n");
    assert_int_equal(
        node_summary_decode(sb.buf, sb.len, "c1", &out, &nr, &alloc), 0);
    assert_int_equal(nr, 4);
    for (size_t i = 0; i < 4; i++) {
        in[i].cluster = (char *)"c1";
        assert_same_row(&out[i], &in[i]);
    }
    assert_ptr_equal(out[1].cluster, out[0].cluster);
    assert_ptr_equal(out[1].captured_at, out[0].captured_at);
    assert_ptr_equal(out[1].state, out[0].state);
    assert_ptr_equal(out[3].state, out[2].state);
    assert_ptr_not_equal(out[3].captured_at, out[2].captured_at);
    assert_string_equal(out[1].partitions, "gpu,long");
    assert_string_equal(out[0].partitions, "");
    assert_ptr_equal(out[3].partitions, out[2].partitions);
    /* appended after rows already there; an empty text appends none */
    assert_int_equal(node_summary_decode("", 0, "c2", &out, &nr, &alloc), 0);
    assert_int_equal(nr, 4);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(node_summary_decode(bad[i], strlen(bad[i]), "c3", &out,
                                             &nr, &alloc),
                         -1);
        assert_int_equal(nr, 4);
    }
    /* a NUL in a string */
    {
        static const char nul_at[] = "@t\0u\nidle\t1\t0\t8\t1\t\n";
        static const char nul_state[] = "@t\nid\0e\t1\t0\t8\t1\t\n";
        static const char nul_parts[] = "@t\nidle\t1\t0\t8\t1\tg\0u\n";
        assert_int_equal(node_summary_decode(nul_parts, sizeof(nul_parts) - 1,
                                             "c3", &out, &nr, &alloc),
                         -1);
        assert_int_equal(node_summary_decode(nul_at, sizeof(nul_at) - 1, "c3",
                                             &out, &nr, &alloc),
                         -1);
        assert_int_equal(node_summary_decode(nul_state, sizeof(nul_state) - 1,
                                             "c3", &out, &nr, &alloc),
                         -1);
    }
    assert_int_equal(nr, 4);
    node_rows_free(out, nr);
    /* what the text cannot hold */
    in[0].state = (char *)"@idle";
    strbuf_reset(&sb);
    assert_int_equal(node_summary_encode(in, 1, &sb), -1);
    in[0].state = (char *)"id\tle";
    assert_int_equal(node_summary_encode(in, 1, &sb), -1);
    in[0].state = (char *)"idle";
    in[0].captured_at = (char *)"2026\n";
    assert_int_equal(node_summary_encode(in, 1, &sb), -1);
    in[0].captured_at = NULL;
    assert_int_equal(node_summary_encode(in, 1, &sb), -1);
    in[0].captured_at = (char *)"2026";
    in[0].partitions = (char *)"gpu\tx";
    assert_int_equal(node_summary_encode(in, 1, &sb), -1);
    strbuf_release(&sb);
}

/* A database at version 13 from a build that wrote summary texts
 * without the partitions field: migration 14 writes every text again,
 * with it. */
static void test_migration_14(void **state)
{
    char dir[] = "/tmp/exa-test-pmig-XXXXXX";
    char *db, *cmd;
    store_t *st;
    struct node_row rows[2];
    sqlite3_stmt *q;
    (void)state;
    assert_non_null(mkdtemp(dir));
    db = xstrfmt("%s/p.db", dir);
    st = store_open(db, NULL);
    assert_non_null(st);
    memset(rows, 0, sizeof(rows));
    rows[0].node = (char *)"n1";
    rows[1].node = (char *)"n2";
    for (int i = 0; i < 2; i++) {
        rows[i].state = (char *)"idle";
        rows[i].gpus = 4;
        rows[i].gpus_used = 0;
        rows[i].cpus = 8;
        rows[i].mem_mb = -1;
        rows[i].captured_at = (char *)"2026-12-06T10:00:00Z";
        rows[i].partitions = (char *)(i ? "gpu" : "cpu");
    }
    assert_int_equal(store_nodes_replace(st, "c1", "slurm", rows, 2, NULL), 0);
    assert_int_equal(store_exec(st,
                                "UPDATE cluster_node_summary SET rows = "
                                "'@2026-12-06T10:00:00Z\nidle\t4\t0\t8\t2\n'"
                                "; PRAGMA user_version = 13",
                                NULL),
                     0);
    store_close(st);
    st = store_open(db, NULL);
    assert_non_null(st);
    assert_int_equal(sqlite3_prepare_v2(st->db,
                                        "SELECT (SELECT user_version FROM "
                                        "pragma_user_version), rows FROM "
                                        "cluster_node_summary WHERE cluster "
                                        "= 'c1'",
                                        -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), store_schema_version());
    assert_string_equal((const char *)sqlite3_column_text(q, 1),
                        "@2026-12-06T10:00:00Z\n"
                        "idle\t4\t0\t8\t1\tcpu\n"
                        "idle\t4\t0\t8\t1\tgpu\n");
    sqlite3_finalize(q);
    store_close(st);
    cmd = xstrfmt("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_same_choice),
        cmocka_unit_test(test_summary_text_codec),
        cmocka_unit_test(test_partition_same_choice),
        cmocka_unit_test(test_migration_14),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
