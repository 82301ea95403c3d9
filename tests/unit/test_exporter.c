/*
 * test_exporter.c - scheduler families from a known snapshot (exact
 * series and values a wrong aggregation would get wrong), and the
 * exporter's cache: scrapes never run scheduler commands, collections run
 * each command once per cluster, failures are counted and leave their
 * series out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "libfleet/governance.h"
#include "libobserve/exporter.h"
#include "libobserve/promtext.h"
#include "libobserve/sched_metrics.h"
#include "libstore/store.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static void node(struct obs_snapshot *s, const char *name, const char *state,
                 const char *raw, const char *parts, long long cpus,
                 long long gpus, long long used)
{
    struct obs_node *n = obs_snapshot_add_node(s);
    n->name = xstrdup(name);
    n->state = xstrdup(state);
    n->raw_state = raw ? xstrdup(raw) : NULL;
    strvec_split(&n->partitions, parts, ',');
    n->cpus = cpus;
    n->mem_mb = 1024;
    n->gpus = gpus;
    n->gpus_used = used;
}

static void job(struct obs_snapshot *s, const char *id, const char *state,
                const char *user, const char *account, const char *part,
                long long cpus, long long gpus, const char *nodes)
{
    struct obs_job *j = obs_snapshot_add_job(s);
    j->id = xstrdup(id);
    j->state = xstrdup(state);
    j->user = xstrdup(user);
    j->account = xstrdup(account);
    j->partition = xstrdup(part);
    j->cpus = cpus;
    j->gpus = gpus;
    if (!strcmp(state, "PENDING"))
        j->reason = xstrdup("Resources");
    if (nodes)
        strvec_split(&j->nodes, nodes, ',');
}

static void fill(struct obs_snapshot *s)
{
    s->have_nodes = s->have_jobs = 1;
    node(s, "gpu01", "allocated", "alloc", "gpu", 64, 8, 8);
    node(s, "gpu02", "mixed", "mix", "gpu,debug", 64, 4, 2);
    node(s, "gpu03", "down", "down*", "gpu", 64, 4, 0);
    node(s, "cpu01", "idle", "idle", "cpu", 32, 0, 0);
    node(s, "cpu02", "drain", "drained", "cpu", 32, 0, 0);
    job(s, "184729", "RUNNING", "alice", "physics", "gpu", 64, 8, "gpu01");
    job(s, "184730", "RUNNING", "bob", "bio", "gpu", 16, 2, "gpu02");
    job(s, "184731", "PENDING", "alice", "physics", "gpu,debug", 8, 4, NULL);
    job(s, "184732", "RUNNING", "alice", "physics", "cpu", 4, 0, "cpu01");
}

/* The value of the exact series line `series` in text, or NAN-ish -1e300. */
static double value_of(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        if (!strncmp(p, series, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = nl ? nl + 1 : NULL;
    }
    return -1e300;
}

static void test_slurm_families(void **state)
{
    struct obs_snapshot s = {0};
    struct prom_set *set = prom_set_new();
    struct strbuf out = STRBUF_INIT;
    (void)state;
    fill(&s);
    obs_render_sched(set, "slurm", "c1", &s);
    prom_render(set, &out);
#define V(series) value_of(out.buf, series)
    assert_true(V("slurm_nodes_total{cluster=\"c1\"}") == 5);
    assert_true(V("slurm_nodes_alloc{cluster=\"c1\",partition=\"gpu\"}") == 1);
    assert_true(V("slurm_nodes_mix{cluster=\"c1\",partition=\"debug\"}") == 1);
    assert_true(V("slurm_nodes_down{cluster=\"c1\",partition=\"gpu\"}") == 1);
    assert_true(V("slurm_nodes_drain{cluster=\"c1\",partition=\"cpu\"}") == 1);
    /* CPUs: alloc = running jobs 64+16+4; other = down gpu03 + drained cpu02 */
    assert_true(V("slurm_cpus_total{cluster=\"c1\"}") == 256);
    assert_true(V("slurm_cpus_alloc{cluster=\"c1\"}") == 84);
    assert_true(V("slurm_cpus_other{cluster=\"c1\"}") == 96);
    assert_true(V("slurm_cpus_idle{cluster=\"c1\"}") == 76);
    /* GPUs from GresUsed: 8 + 2; gpu03's 4 are other */
    assert_true(V("slurm_gpus_total{cluster=\"c1\"}") == 16);
    assert_true(V("slurm_gpus_alloc{cluster=\"c1\"}") == 10);
    assert_true(V("slurm_gpus_other{cluster=\"c1\"}") == 4);
    assert_true(V("slurm_gpus_idle{cluster=\"c1\"}") == 2);
    assert_true(V("slurm_node_status{cluster=\"c1\",node=\"gpu03\","
                  "status=\"down\",partition=\"gpu\"}") == 0);
    assert_true(V("slurm_node_status{cluster=\"c1\",node=\"cpu02\","
                  "status=\"drain\",partition=\"cpu\"}") == 1);
    assert_true(V("slurm_node_gres_used{cluster=\"c1\",node=\"gpu02\","
                  "status=\"mixed\",partition=\"gpu,debug\"}") == 2);
    assert_true(V("slurm_node_mem_total{cluster=\"c1\",node=\"cpu01\","
                  "status=\"idle\",partition=\"cpu\"}") == 1073741824.0);
    assert_true(
        V("slurm_partition_gpus_idle{cluster=\"c1\",partition=\"gpu\"}") == 2);
    /* jobs */
    assert_true(V("slurm_jobs_running{cluster=\"c1\"}") == 3);
    assert_true(V("slurm_jobs_pending{cluster=\"c1\"}") == 1);
    assert_true(V("slurm_jobs_failed{cluster=\"c1\"}") == 0);
    assert_true(
        V("slurm_account_jobs_running{cluster=\"c1\",account=\"physics\"}") ==
        2);
    assert_true(
        V("slurm_account_gpus_running{cluster=\"c1\",account=\"physics\"}") ==
        8);
    assert_true(
        V("slurm_account_cpus_running{cluster=\"c1\",account=\"bio\"}") == 16);
    assert_true(V("slurm_user_jobs_pending{cluster=\"c1\",user=\"alice\"}") ==
                1);
    /* a pending job in two partitions counts in each */
    assert_true(
        V("slurm_partition_jobs_pending{cluster=\"c1\",partition=\"gpu\"}") ==
        1);
    assert_true(
        V("slurm_partition_jobs_pending{cluster=\"c1\",partition=\"debug\"}") ==
        1);
    /* a partition without a running (debug) or pending (cpu) job says 0,
     * not nothing */
    assert_true(
        V("slurm_partition_jobs_running{cluster=\"c1\",partition=\"debug\"}") ==
        0);
    assert_true(V("slurm_partition_cpus_allocated{cluster=\"c1\","
                  "partition=\"debug\"}") == 0);
    assert_true(V("slurm_partition_gpus_running{cluster=\"c1\","
                  "partition=\"debug\"}") == 0);
    assert_true(
        V("slurm_partition_jobs_pending{cluster=\"c1\",partition=\"cpu\"}") ==
        0);
    assert_true(
        V("slurm_partition_jobs_running{cluster=\"c1\",partition=\"cpu\"}") ==
        1);
    assert_true(V("slurm_queue_pending{cluster=\"c1\",user=\"alice\","
                  "partition=\"debug\",reason=\"Resources\"}") == 1);
    assert_true(V("slurm_queue_running{cluster=\"c1\",user=\"alice\","
                  "partition=\"gpu\"}") == 1);
    assert_true(V("slurm_cores_running{cluster=\"c1\",user=\"alice\","
                  "partition=\"gpu\"}") == 64);
    assert_true(V("slurm_job_info{cluster=\"c1\",job_id=\"184729\","
                  "user=\"alice\",account=\"physics\",partition=\"gpu\","
                  "state=\"RUNNING\"}") == 1);
    assert_true(V("slurm_node_job{cluster=\"c1\",job_id=\"184730\","
                  "node=\"gpu02\"}") == 1);
    /* a pending job has no per-job series; its GPUs count as requested */
    assert_null(
        strstr(out.buf, "slurm_job_gpus{cluster=\"c1\",job_id=\"184731\""));
    assert_null(
        strstr(out.buf, "slurm_job_info{cluster=\"c1\",job_id=\"184731\""));
    /* a pending job is on no node */
    assert_null(
        strstr(out.buf, "slurm_node_job{cluster=\"c1\",job_id=\"184731\""));
    /* _total gauges are untyped (promtool lint), others gauges */
    assert_non_null(strstr(out.buf, "# TYPE slurm_cpus_total untyped\n"));
    assert_non_null(strstr(out.buf, "# TYPE slurm_cpus_alloc gauge\n"));
#undef V
    strbuf_release(&out);
    prom_set_free(set);
    obs_snapshot_free(&s);
}

/* The per-job series of a queue whose rows come in any order: an id
 * listed twice (array tasks Slurm has not split yet) has one job_info,
 * job_cpus and job_gpus series, from its first running or suspended row,
 * and node_job counts every running row on a node; ids that share their
 * first 8 bytes, ids that are prefixes of others, and a bytewise order
 * unlike the numeric one all render the same bytes in every row order. */
static void dup_jobs(struct obs_snapshot *s, int reverse)
{
    static const struct {
        const char *id, *state, *user;
        long long cpus;
        const char *nodes;
    } rows[] = {
        {"123456789_10", "RUNNING", "ann", 2, "n2"},
        {"9", "RUNNING", "bob", 1, "n1"},
        {"123456789_2", "RUNNING", "cat", 3, "n3"},
        {"55", "PENDING", "dan", 4, NULL},
        {"55", "RUNNING", "eve", 5, "n5,n6"},
        {"55", "RUNNING", "fay", 6, "n6"},
        {"10", "SUSPENDED", "gus", 7, "n7"},
        {"1", "RUNNING", "hal", 8, "n8"},
        {"123456789_1", "RUNNING", "ivy", 9, "n9"},
    };
    size_t n = sizeof(rows) / sizeof(rows[0]);
    s->have_jobs = 1;
    for (size_t k = 0; k < n; k++) {
        size_t i = reverse ? n - 1 - k : k;
        job(s, rows[i].id, rows[i].state, rows[i].user, "acct", "gpu",
            rows[i].cpus, 1, rows[i].nodes);
    }
}

static void test_job_series_any_order(void **state)
{
    struct obs_snapshot a = {0}, b = {0};
    struct prom_set *sa = prom_set_new(), *sb = prom_set_new();
    struct strbuf oa = STRBUF_INIT, ob = STRBUF_INIT;
    (void)state;
    dup_jobs(&a, 0);
    dup_jobs(&b, 1);
    obs_render_sched(sa, "slurm", "c", &a);
    obs_render_sched(sb, "slurm", "c", &b);
    prom_render(sa, &oa);
    prom_render(sb, &ob);
    /* the first running row of 55 in each order: eve forward, fay reversed */
    assert_non_null(strstr(oa.buf, "slurm_job_info{cluster=\"c\",job_id=\"55\","
                                   "user=\"eve\""));
    assert_null(strstr(oa.buf, "job_id=\"55\",user=\"fay\""));
    assert_non_null(strstr(ob.buf, "slurm_job_info{cluster=\"c\",job_id=\"55\","
                                   "user=\"fay\""));
    assert_true(
        value_of(oa.buf, "slurm_job_cpus{cluster=\"c\",job_id=\"55\"}") == 5);
    assert_true(
        value_of(ob.buf, "slurm_job_cpus{cluster=\"c\",job_id=\"55\"}") == 6);
    /* node_job: n6 by both running rows of 55, the suspended 10 on none */
    assert_true(value_of(oa.buf, "slurm_node_job{cluster=\"c\",job_id=\"55\","
                                 "node=\"n6\"}") == 2);
    assert_true(value_of(oa.buf, "slurm_node_job{cluster=\"c\",job_id=\"55\","
                                 "node=\"n5\"}") == 1);
    assert_null(strstr(oa.buf, "job_id=\"10\",node="));
    assert_non_null(
        strstr(oa.buf, "slurm_job_info{cluster=\"c\",job_id=\"10\","));
    /* bytewise label order: "1" < "10" < "123456789_1" < "123456789_10"
     * < "123456789_2" < "55" < "9" */
    {
        const char *ids[] = {
            "1", "10", "123456789_1", "123456789_10", "123456789_2", "55", "9"};
        const char *at = oa.buf;
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
            char want[96];
            snprintf(want, sizeof(want),
                     "slurm_job_gpus{cluster=\"c\",job_id=\"%s\"} 1\n", ids[i]);
            at = strstr(at, want);
            assert_non_null(at);
        }
    }
    /* everything but the rows' own 55 series is the same in both orders */
    {
        struct strbuf fa = STRBUF_INIT, fb = STRBUF_INIT;
        for (int w = 0; w < 2; w++) {
            const char *p = w ? ob.buf : oa.buf;
            struct strbuf *f = w ? &fb : &fa;
            while (*p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
                if (!strstr(p, "job_id=\"55\"") ||
                    (nl && strstr(p, "job_id=\"55\"") > nl))
                    strbuf_add(f, p, len);
                p += len;
            }
        }
        /* per-user and per-user-partition series differ by eve/fay only
         * in the job series dropped above; the aggregates match */
        assert_string_equal(fa.buf, fb.buf);
        strbuf_release(&fa);
        strbuf_release(&fb);
    }
    strbuf_release(&oa);
    strbuf_release(&ob);
    prom_set_free(sa);
    prom_set_free(sb);
    obs_snapshot_free(&a);
    obs_snapshot_free(&b);
}

/* The lines of text whose series is one of the per-job families. */
static void per_job_lines(const char *text, struct strbuf *out)
{
    static const char *const fams[] = {"slurm_job_info{", "slurm_job_cpus{",
                                       "slurm_job_gpus{", "slurm_node_job{",
                                       NULL};
    strbuf_reset(out);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        for (size_t i = 0; fams[i]; i++)
            if (!strncmp(p, fams[i], strlen(fams[i])))
                strbuf_add(out, p, len);
        p += len;
    }
}

static void pending_job(struct obs_snapshot *s, size_t i)
{
    char id[32];
    snprintf(id, sizeof(id), "9%zu", i);
    job(s, id, "PENDING", "p", "acct", "gpu", 2, 0, NULL);
}

/* A queue large enough that the per-job families are built on two threads
 * (sched_metrics.c PER_JOB_THREAD_MIN) gives the per-job series that the
 * same running and suspended rows give alone, built on one: ids listed
 * two and three times (so that the split between the threads falls
 * between rows of one id again and again), in a shuffled order, among
 * pending jobs that hold no per-job series. Run repeatedly, since where
 * the threads split depends on their timing. */
static void test_per_job_split_same(void **state)
{
    struct strbuf want = STRBUF_INIT, got = STRBUF_INIT, text = STRBUF_INIT;
    unsigned seed = 12345;
    enum { RUNNING_IDS = 2000, PENDING = 5000 };
    size_t nrows = 0;
    struct row {
        char id[16], node[16];
        int state; /* 0 running, 1 suspended */
        int cpus;
    } *rows = xcalloc(RUNNING_IDS * 3, sizeof(*rows));
    (void)state;
    for (int i = 0; i < RUNNING_IDS; i++) {
        int copies = i % 7 == 0 ? 3 : i % 2 ? 2 : 1;
        for (int c = 0; c < copies; c++) {
            struct row *r = &rows[nrows++];
            snprintf(r->id, sizeof(r->id), "%d", 1000 + i);
            snprintf(r->node, sizeof(r->node), "n%d", (i + c) % 97);
            r->state = i % 11 == 0;
            r->cpus = 1 + c;
        }
    }
    for (size_t i = nrows - 1; i > 0; i--) { /* Fisher-Yates */
        size_t k;
        struct row t;
        seed = seed * 1103515245u + 12345u;
        k = (seed >> 8) % (i + 1);
        t = rows[i];
        rows[i] = rows[k];
        rows[k] = t;
    }
    for (int big = 0; big < 2; big++) {
        for (int round = 0; round < (big ? 8 : 1); round++) {
            struct obs_snapshot s = {0};
            struct prom_set *set = prom_set_new();
            size_t pend = 0;
            s.have_jobs = 1;
            for (size_t i = 0; i < nrows; i++) {
                /* pending rows between the others in the big queue */
                while (big && pend < PENDING && pend * nrows < i * PENDING)
                    pending_job(&s, pend++);
                job(&s, rows[i].id, rows[i].state ? "SUSPENDED" : "RUNNING",
                    "u", "acct", "gpu", rows[i].cpus, 1, rows[i].node);
            }
            while (big && pend < PENDING)
                pending_job(&s, pend++);
            if (big)
                assert_true(s.njobs >= 4096);
            else
                assert_true(s.njobs < 4096);
            obs_render_sched(set, "slurm", "c", &s);
            strbuf_reset(&text);
            prom_render(set, &text);
            per_job_lines(text.buf, big ? &got : &want);
            if (big) {
                assert_int_equal(got.len, want.len);
                assert_memory_equal(got.buf, want.buf, want.len);
                assert_true(value_of(text.buf, "slurm_jobs_pending{"
                                               "cluster=\"c\"}") == PENDING);
            }
            prom_set_free(set);
            obs_snapshot_free(&s);
        }
    }
    /* one job_info per id, one node_job per running row's node */
    {
        size_t info = 0;
        for (const char *p = want.buf; (p = strstr(p, "slurm_job_info{")); p++)
            info++;
        assert_int_equal(info, RUNNING_IDS);
    }
    free(rows);
    strbuf_release(&want);
    strbuf_release(&got);
    strbuf_release(&text);
}

static void test_flux_prefix_and_missing_parts(void **state)
{
    struct obs_snapshot s = {0};
    struct prom_set *set = prom_set_new();
    struct strbuf out = STRBUF_INIT;
    (void)state;
    fill(&s);
    s.have_jobs = 0; /* the job command failed */
    obs_render_sched(set, "flux", "f1", &s);
    prom_render(set, &out);
    assert_non_null(strstr(out.buf, "flux_nodes_total{cluster=\"f1\"} 5\n"));
    assert_null(strstr(out.buf, "slurm_"));
    assert_null(strstr(out.buf, "flux_job_info"));
    assert_null(strstr(out.buf, "flux_jobs_running"));
    /* without jobs, allocated CPUs are unknown: no alloc/idle series */
    assert_null(strstr(out.buf, "flux_cpus_alloc"));
    assert_non_null(strstr(out.buf, "flux_gpus_alloc{cluster=\"f1\"} 10\n"));
    strbuf_release(&out);
    prom_set_free(set);
    obs_snapshot_free(&s);
}

/* ---- exporter with a counting source ---- */

struct fake {
    int node_calls, job_calls, after_calls;
    int fail_jobs, fail_nodes;
    int concurrent;
};

static int fake_nodes(struct obs_source *src, struct obs_snapshot *s,
                      exa_error_t *err)
{
    struct fake *f = src->data;
    f->node_calls++;
    if (f->fail_nodes)
        return exa_err(err, EXA_ETRANSPORT, "sinfo on 'c1' timed out");
    node(s, "n1", "idle", NULL, "p", 8, 2, 0);
    return 0;
}

static int fake_jobs(struct obs_source *src, struct obs_snapshot *s,
                     exa_error_t *err)
{
    struct fake *f = src->data;
    f->job_calls++;
    if (f->fail_jobs)
        return exa_err(err, EXA_ETRANSPORT, "squeue on 'c1' timed out");
    job(s, "7", "RUNNING", "u", "a", "p", 1, 1, "n1");
    return 0;
}

static struct fake the_fake;

static void fake_after(struct obs_source *src)
{
    struct fake *f = src->data;
    /* after both commands of the collection, never between them */
    assert_int_equal(f->node_calls, f->job_calls);
    f->after_calls++;
}

static struct obs_source *fake_factory(const struct fv_cluster *c, void *ctx,
                                       exa_error_t *err)
{
    struct obs_source *src = xcalloc(1, sizeof(*src));
    (void)ctx, (void)err;
    src->cluster = xstrdup(c->name);
    src->prefix = xstrdup("slurm");
    src->node_cmd = "sinfo";
    src->job_cmd = "squeue";
    src->nodes = fake_nodes;
    src->jobs = fake_jobs;
    src->after = fake_after;
    src->concurrent = the_fake.concurrent;
    src->data = &the_fake;
    return src;
}

/* A platform.db in a new directory under /tmp with clusters c1 (ACTIVE,
 * approved through governance), c2 (PENDING), and with more c3, c4
 * (ACTIVE too) and c5 (PENDING); returns its path, *reg the registry's
 * (drop_db() frees both). */
static char *make_db_more(char **reg, int more)
{
    char tmpl[] = "/tmp/exa-exporter-XXXXXX";
    char *dir = mkdtemp(tmpl), *db;
    exa_error_t err = EXA_ERROR_INIT;
    struct gov_result res;
    store_t *st;
    assert_non_null(dir);
    db = xstrfmt("%s/p.db", dir);
    st = store_open(db, &err);
    assert_non_null(st);
    assert_int_equal(store_exec(st,
                                "INSERT INTO clusters(name, scheduler, state,"
                                " created_at, updated_at) VALUES"
                                " ('c1','slurm','PENDING','x','x'),"
                                " ('c2','slurm','PENDING','x','x')",
                                &err),
                     0);
    if (more)
        assert_int_equal(store_exec(st,
                                    "INSERT INTO clusters(name, scheduler,"
                                    " state, created_at, updated_at) VALUES"
                                    " ('c3','slurm','PENDING','x','x'),"
                                    " ('c4','slurm','PENDING','x','x'),"
                                    " ('c5','slurm','PENDING','x','x')",
                                    &err),
                         0);
    /* c1 is approved through governance, so its state is bound to the
     * audit chain (a row set ACTIVE by SQL alone counts as PENDING) */
    *reg = xstrfmt("%s/clusters.yaml", dir);
    assert_int_equal(gov_approve(st, *reg, "c1", NULL, "test", &res, &err), 0);
    for (int i = 3; more && i <= 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        assert_int_equal(gov_approve(st, *reg, name, NULL, "test", &res, &err),
                         0);
    }
    store_close(st);
    return db;
}

static char *make_db(char **reg)
{
    return make_db_more(reg, 0);
}

static void drop_db(char *db, char *reg)
{
    char *p, *dir = xstrdup(db);
    unlink(db);
    p = xstrfmt("%s-wal", db);
    unlink(p);
    free(p);
    p = xstrfmt("%s-shm", db);
    unlink(p);
    free(p);
    free(db);
    /* the registry gov_approve() wrote (and its lock file, if any) */
    unlink(reg);
    p = xstrfmt("%s.lock", reg);
    unlink(p);
    free(p);
    free(reg);
    *strrchr(dir, '/') = '\0';
    rmdir(dir);
    free(dir);
}

static void test_cache_and_self_metrics(void **state)
{
    char *db, *body, *reg;
    exa_error_t err = EXA_ERROR_INIT;
    struct obs_exporter *ex;
    size_t len;
    (void)state;
    db = make_db(&reg);
    memset(&the_fake, 0, sizeof(the_fake));
    ex = obs_exporter_new(db, 30, fake_factory, NULL);
    assert_int_equal(obs_exporter_collect(ex, &err), 0);
    for (int i = 0; i < 50; i++) {
        body = obs_exporter_scrape(ex, &len);
        free(body);
    }
    /* 50 scrapes, one collection: each command ran once, for c1 only */
    assert_int_equal(the_fake.node_calls, 1);
    assert_int_equal(the_fake.job_calls, 1);
    body = obs_exporter_scrape(ex, &len);
    assert_int_equal(strlen(body), len);
    assert_non_null(strstr(body, "slurm_job_info{cluster=\"c1\",job_id=\"7\","
                                 "user=\"u\",account=\"a\",partition=\"p\","
                                 "state=\"RUNNING\"} 1\n"));
    assert_null(strstr(body, "cluster=\"c2\""));
    assert_non_null(strstr(body, "exa_clusters{state=\"PENDING\"} 1\n"));
    assert_non_null(strstr(body, "exa_exporter_command_runs_total"
                                 "{cluster=\"c1\",command=\"squeue\"} 1\n"));
    assert_non_null(strstr(body, "exa_exporter_command_errors_total"
                                 "{cluster=\"c1\",command=\"squeue\"} 0\n"));
    assert_non_null(strstr(body, "exa_exporter_scrapes_total 51\n"));
    assert_non_null(strstr(body, "exa_exporter_cluster_data_age_seconds"
                                 "{cluster=\"c1\"} "));
    free(body);

    the_fake.fail_jobs = 1;
    assert_int_equal(obs_exporter_collect(ex, &err), 0);
    body = obs_exporter_scrape(ex, &len);
    assert_non_null(strstr(body, "exa_exporter_command_errors_total"
                                 "{cluster=\"c1\",command=\"squeue\"} 1\n"));
    assert_non_null(strstr(body, "exa_exporter_command_runs_total"
                                 "{cluster=\"c1\",command=\"squeue\"} 2\n"));
    assert_null(strstr(body, "slurm_job_info")); /* left out, not stale */
    assert_non_null(strstr(body, "slurm_nodes_total{cluster=\"c1\"} 1\n"));
    assert_int_equal(obs_exporter_generation(ex), 2);
    free(body);

    /* a streaming view keeps its render while a newer one replaces it */
    {
        struct obs_scrape *sc = obs_exporter_scrape_begin(ex);
        size_t n = obs_scrape_len(sc), got = 0, k;
        char *copy = xmalloc(n + 1), chunk[7];
        the_fake.fail_jobs = 0;
        assert_int_equal(obs_exporter_collect(ex, &err), 0);
        while ((k = obs_scrape_read(sc, got, chunk, sizeof(chunk))) > 0) {
            memcpy(copy + got, chunk, k);
            got += k;
        }
        copy[got] = '\0';
        assert_int_equal(got, n);
        assert_null(strstr(copy, "slurm_job_info")); /* the old render */
        assert_non_null(strstr(copy, "exa_exporter_scrapes_total 53\n"));
        obs_scrape_end(sc);
        free(copy);
        body = obs_exporter_scrape(ex, &len);
        assert_non_null(strstr(body, "slurm_job_info")); /* the new one */
        free(body);
    }

    /* the background thread collects at once on start */
    the_fake.fail_jobs = 0;
    assert_int_equal(obs_exporter_start(ex, &err), 0);
    for (int i = 0; i < 200 && obs_exporter_generation(ex) < 4; i++)
        usleep(10000);
    assert_true(obs_exporter_generation(ex) >= 4);
    obs_exporter_stop(ex);
    assert_int_equal(the_fake.job_calls, 4);
    assert_int_equal(the_fake.after_calls, 4);
    obs_exporter_free(ex);
    drop_db(db, reg);
}

/* A concurrent source (obs_source.concurrent): its node command runs on a
 * second thread while the job command runs (the node command here waits,
 * bounded, for the job command to begin, which it never would if the two
 * ran one after the other), its statistics and its after hook are the
 * collector's, and a failed node command leaves out the node series
 * only. */
static atomic_int jobs_begun;

static int slow_nodes(struct obs_source *src, struct obs_snapshot *s,
                      exa_error_t *err)
{
    struct fake *f = src->data;
    for (int i = 0; i < 6000 && !atomic_load(&jobs_begun); i++)
        usleep(5000); /* 30 s at most: it begins at once unless serial */
    if (!atomic_load(&jobs_begun))
        return exa_err(err, EXA_EFAIL, "the job command did not overlap");
    if (fake_nodes(src, s, err) < 0)
        return -1;
    f->concurrent = 2; /* ran while the job command ran */
    return 0;
}

static int flag_jobs(struct obs_source *src, struct obs_snapshot *s,
                     exa_error_t *err)
{
    atomic_store(&jobs_begun, 1);
    return fake_jobs(src, s, err);
}

static struct obs_source *slow_factory(const struct fv_cluster *c, void *ctx,
                                       exa_error_t *err)
{
    struct obs_source *src = fake_factory(c, ctx, err);
    src->nodes = slow_nodes;
    src->jobs = flag_jobs;
    src->concurrent = 1;
    return src;
}

static void test_concurrent_source(void **state)
{
    char *db, *body, *reg;
    exa_error_t err = EXA_ERROR_INIT;
    struct obs_exporter *ex;
    size_t len;
    (void)state;
    db = make_db(&reg);
    memset(&the_fake, 0, sizeof(the_fake));
    atomic_store(&jobs_begun, 0);
    ex = obs_exporter_new(db, 30, slow_factory, NULL);
    assert_int_equal(obs_exporter_collect(ex, &err), 0);
    assert_int_equal(the_fake.concurrent, 2); /* they overlapped */
    assert_int_equal(the_fake.after_calls, 1);
    body = obs_exporter_scrape(ex, &len);
    assert_non_null(strstr(body, "slurm_nodes_total{cluster=\"c1\"} 1\n"));
    assert_non_null(
        strstr(body, "slurm_job_info{cluster=\"c1\",job_id=\"7\","));
    assert_non_null(strstr(body, "exa_exporter_command_runs_total"
                                 "{cluster=\"c1\",command=\"sinfo\"} 1\n"));
    assert_non_null(strstr(body, "exa_exporter_command_errors_total"
                                 "{cluster=\"c1\",command=\"sinfo\"} 0\n"));
    free(body);

    the_fake.fail_nodes = 1;
    atomic_store(&jobs_begun, 0);
    assert_int_equal(obs_exporter_collect(ex, &err), 0);
    assert_int_equal(the_fake.after_calls, 2);
    body = obs_exporter_scrape(ex, &len);
    assert_null(strstr(body, "slurm_nodes_total{")); /* left out */
    assert_non_null(
        strstr(body, "slurm_job_info{cluster=\"c1\",job_id=\"7\","));
    assert_non_null(strstr(body, "exa_exporter_command_errors_total"
                                 "{cluster=\"c1\",command=\"sinfo\"} 1\n"));
    assert_non_null(strstr(body, "exa_exporter_command_runs_total"
                                 "{cluster=\"c1\",command=\"sinfo\"} 2\n"));
    assert_non_null(strstr(body, "exa_exporter_command_errors_total"
                                 "{cluster=\"c1\",command=\"squeue\"} 0\n"));
    free(body);
    obs_exporter_free(ex);
    drop_db(db, reg);

    /* three concurrent clusters: 3 "connect" entries, then a node and a
     * job command's each, so the 9th entry, c4's squeue, moves the array
     * (xgrow: 8, then 16) while c4's sinfo runs; each entry still gets its
     * own command's runs */
    db = make_db_more(&reg, 1);
    memset(&the_fake, 0, sizeof(the_fake));
    ex = obs_exporter_new(db, 30, slow_factory, NULL);
    for (int round = 0; round < 2; round++) {
        atomic_store(&jobs_begun, 0);
        assert_int_equal(obs_exporter_collect(ex, &err), 0);
    }
    body = obs_exporter_scrape(ex, &len);
    for (int i = 1; i <= 5; i++) {
        char line[128];
        for (int c = 0; c < 2; c++) {
            snprintf(line, sizeof(line),
                     "exa_exporter_command_runs_total{cluster=\"c%d\","
                     "command=\"%s\"} 2\n",
                     i, c ? "squeue" : "sinfo");
            if (i == 2 || i == 5)
                assert_null(strstr(body, line)); /* PENDING */
            else
                assert_non_null(strstr(body, line));
        }
    }
    free(body);
    obs_exporter_free(ex);
    drop_db(db, reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_families),
        cmocka_unit_test(test_job_series_any_order),
        cmocka_unit_test(test_per_job_split_same),
        cmocka_unit_test(test_flux_prefix_and_missing_parts),
        cmocka_unit_test(test_cache_and_self_metrics),
        cmocka_unit_test(test_concurrent_source),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
