/*
 * test_task.c - the task engine (libtask/engine.c) on a real platform.db
 * with a fake clock: join tokens (expired, replayed, wrong worker, forged,
 * rate limit, the flood pre-check), the rate-limited log of a 503's cause,
 * leases fenced by attempt, expiry and requeue, the infrastructure budget,
 * black-hole workers, late results (late_ok and stale), lost lease replies
 * released by the heartbeat, cancel and revoke, bye, drain, the absolute
 * timeout cap, artifacts, restart grace, long-poll wake-up by
 * another connection, and the protocol decoder's refusals.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "libstore/store.h"
#include "libstore/provreq.h"
#include "libstore/tasks.h"
#include "libtask/engine.h"
#include "libtask/proto.h"
#include "libtask/token.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

struct fx {
    char *dir, *db;
    store_t *st;
    task_engine_t *e;
    double t; /* the fake clock */
    struct te_opts o;
};

static double fake_now(void *ctx)
{
    return ((struct fx *)ctx)->t;
}

static void open_engine(struct fx *f)
{
    exa_error_t err = EXA_ERROR_INIT;
    f->e = te_open(f->st, &f->o, &err);
    if (!f->e)
        fail_msg("te_open: %s", err.text);
}

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    exa_error_t err = EXA_ERROR_INIT;
    f->dir = tu_mkdtemp();
    f->db = xstrfmt("%s/platform.db", f->dir);
    f->st = store_open(f->db, &err);
    assert_non_null(f->st);
    f->t = 1800000000.0;
    te_opts_default(&f->o);
    f->o.heartbeat_s = 1;
    f->o.lease_ttl_s = 3;
    f->o.longpoll_s = 0;
    f->o.restart_grace_s = 2;
    f->o.now = fake_now;
    f->o.now_ctx = f;
    open_engine(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    te_close(f->e);
    store_close(f->st);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->db);
    free(f);
    return 0;
}

static long long submit(struct fx *f, const char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    struct tp_spec s;
    exa_error_t err = EXA_ERROR_INIT;
    long long id = 0;
    assert_non_null(j);
    if (tp_spec_decode(j, &s, &err) < 0)
        fail_msg("spec: %s", err.text);
    json_decref(j);
    assert_int_equal(task_submit(f->st, &s, f->t, &id, &err), 0);
    tp_spec_release(&s);
    return id;
}

static char *mint(struct fx *f, const char *worker, double ttl)
{
    exa_error_t err = EXA_ERROR_INIT;
    char *tok = task_join_mint(f->st, NULL, worker, "testa", "cpu1", NULL, ttl,
                               f->t, &err);
    if (!tok)
        fail_msg("mint: %s", err.text);
    return tok;
}

static char *reg_body(const char *worker, const char *tok, const char *nonce,
                      int capacity, const char *extra)
{
    return xstrfmt("{\"protocol\":1,\"worker_id\":\"%s\"%s%s%s,"
                   "\"register_nonce\":\"%s\",\"capacity\":%d,"
                   "\"resources\":{\"cpus\":4,\"gpus\":0,\"ram_mb\":8000}%s}",
                   worker, tok ? ",\"join_token\":\"" : "", tok ? tok : "",
                   tok ? "\"" : "", nonce, capacity, extra ? extra : "");
}

/* Register worker with a fresh token; returns the session (caller frees). */
static char *attach(struct fx *f, const char *worker, int capacity)
{
    char *tok = mint(f, worker, 60);
    char *b = reg_body(worker, tok, "nonce-0123456789abcdef", capacity, NULL);
    struct te_reply r = {0};
    char *sess;
    te_register(f->e, b, strlen(b), "127.0.0.1", NULL, &r);
    if (r.status != 201)
        fail_msg("register %s: %d %s", worker, r.status,
                 jx_dumps_canonical(r.body));
    sess = xstrdup(jx_get_str(r.body, "session_token", ""));
    assert_true(starts_with(sess, "exs_"));
    te_reply_release(&r);
    free(b);
    free(tok);
    return sess;
}

static const char *reason_of(const struct te_reply *r)
{
    return jx_get_str(json_object_get(r->body, "error"), "reason", "");
}

/* Lease (no wait); returns the number of tasks; ids/attempts out. */
static size_t lease(struct fx *f, const char *w, const char *sess, int want,
                    long long *ids, long long *atts)
{
    char *b = xstrfmt("{\"want\":%d}", want);
    struct te_reply r = {0};
    size_t n = 0;
    te_lease(f->e, w, sess, b, strlen(b), 0, &r);
    free(b);
    if (r.status == 204) {
        te_reply_release(&r);
        return 0;
    }
    assert_int_equal(r.status, 200);
    n = json_array_size(json_object_get(r.body, "tasks"));
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(json_object_get(r.body, "tasks"), i);
        if (ids)
            ids[i] = jx_get_int(t, "task_id", 0);
        if (atts)
            atts[i] = jx_get_int(t, "attempt", 0);
    }
    te_reply_release(&r);
    return n;
}

/* Post one result; returns the list it landed in. */
static const char *result(struct fx *f, const char *w, const char *sess,
                          long long task, long long att, int code,
                          const char *arts)
{
    char *b = xstrfmt("{\"results\":[{\"task_id\":%lld,\"attempt\":%lld,"
                      "\"idem\":\"%lld:%lld\",\"exit_code\":%d,"
                      "\"stdout_tail\":\"hi\",\"artifacts\":[%s]}]}",
                      task, att, task, att, code, arts ? arts : "");
    struct te_reply r = {0};
    static const char *const lists[] = {"accepted", "duplicate", "stale",
                                        "missing_artifacts"};
    const char *where = "none";
    te_results(f->e, w, sess, b, strlen(b), &r);
    free(b);
    if (r.status != 200) {
        static char buf[64];
        xsnprintf(buf, sizeof(buf), "status %d", r.status);
        te_reply_release(&r);
        return buf;
    }
    for (int i = 0; i < 4; i++)
        if (json_array_size(json_object_get(r.body, lists[i])))
            where = lists[i];
    te_reply_release(&r);
    return where;
}

static json_t *heartbeat(struct fx *f, const char *w, const char *sess,
                         const char *running, int *status)
{
    char *b = xstrfmt("{\"running\":[%s],\"free_slots\":0}", running);
    struct te_reply r = {0};
    json_t *body;
    te_heartbeat(f->e, w, sess, b, strlen(b), &r);
    free(b);
    *status = r.status;
    body = r.body;
    return body;
}

static void task_state(struct fx *f, long long id, const char *state,
                       long long attempt)
{
    struct task_rec t;
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(store_task_get(f->st, id, &t, &err), 0);
    assert_string_equal(t.state, state);
    if (attempt >= 0)
        assert_int_equal(t.attempt, attempt);
    task_rec_release(&t);
}

static char *outcome(struct fx *f, long long id, long long att)
{
    struct attempt_rec a;
    char *o;
    assert_int_equal(store_attempt_get(f->st, id, att, &a, NULL), 1);
    o = xstrdup(a.outcome ? a.outcome : "open");
    attempt_rec_release(&a);
    return o;
}

static void tick(struct fx *f)
{
    exa_error_t err = EXA_ERROR_INIT;
    if (te_tick(f->e, &err) < 0)
        fail_msg("tick: %s", err.text);
}

static void test_happy_path_and_duplicate(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"/bin/true\"],\"timeout_s\":30}");
    char *s = attach(f, "w1", 2);
    long long ids[4], atts[4];
    char *o;
    assert_int_equal(lease(f, "w1", s, 4, ids, atts), 1);
    assert_int_equal(ids[0], id);
    assert_int_equal(atts[0], 1);
    task_state(f, id, "leased", 1);
    /* nothing more to lease: 204 */
    assert_int_equal(lease(f, "w1", s, 1, NULL, NULL), 0);
    assert_string_equal(result(f, "w1", s, id, 1, 0, NULL), "accepted");
    task_state(f, id, "done", 1);
    /* lost reply: the same idem again is a duplicate, one row kept */
    assert_string_equal(result(f, "w1", s, id, 1, 0, NULL), "duplicate");
    assert_int_equal(store_result_count(f->st, id, NULL), 1);
    o = outcome(f, id, 1);
    assert_string_equal(o, "ok");
    free(o);
    free(s);
}

static void test_failed_result_is_terminal(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"false\"]}");
    char *s = attach(f, "w1", 1);
    struct task_rec t;
    assert_int_equal(lease(f, "w1", s, 1, NULL, NULL), 1);
    assert_string_equal(result(f, "w1", s, id, 1, 3, NULL), "accepted");
    assert_int_equal(store_task_get(f->st, id, &t, NULL), 0);
    assert_string_equal(t.state, "failed");
    assert_string_equal(t.reason, "exit 3");
    assert_int_equal(t.exit_code, 3);
    assert_int_equal(t.infra_failures, 0);
    task_rec_release(&t);
    free(s);
}

static void test_join_token_refusals(void **state)
{
    struct fx *f = *state;
    char *tok = mint(f, "w1", 10), *b, *forged;
    struct te_reply r = {0};
    size_t at;

    /* wrong worker: a token for w1 presented as w2 */
    b = reg_body("w2", tok, "nonce-aaaaaaaaaaaaaaaa", 1, NULL);
    te_register(f->e, b, strlen(b), "10.0.0.1", NULL, &r);
    assert_int_equal(r.status, 401);
    assert_string_equal(reason_of(&r), "wrong_worker");
    te_reply_release(&r);
    free(b);

    /* one flipped MAC byte */
    forged = xstrdup(tok);
    at = strlen(forged) - 3;
    forged[at] = forged[at] == 'A' ? 'B' : 'A';
    b = reg_body("w1", forged, "nonce-aaaaaaaaaaaaaaaa", 1, NULL);
    te_register(f->e, b, strlen(b), "10.0.0.1", NULL, &r);
    assert_int_equal(r.status, 401);
    assert_string_equal(reason_of(&r), "bad_signature");
    te_reply_release(&r);
    free(b);
    free(forged);

    /* the real one works once */
    b = reg_body("w1", tok, "nonce-aaaaaaaaaaaaaaaa", 1, NULL);
    te_register(f->e, b, strlen(b), "10.0.0.1", NULL, &r);
    assert_int_equal(r.status, 201);
    te_reply_release(&r);
    /* the same nonce within 60 s: a lost answer retried, accepted */
    te_register(f->e, b, strlen(b), "10.0.0.1", NULL, &r);
    assert_int_equal(r.status, 201);
    assert_int_equal(jx_get_int(r.body, "incarnation", 0), 1);
    te_reply_release(&r);
    free(b);
    /* another nonce: replayed */
    b = reg_body("w1", tok, "nonce-bbbbbbbbbbbbbbbb", 1, NULL);
    te_register(f->e, b, strlen(b), "10.0.0.1", NULL, &r);
    assert_int_equal(r.status, 401);
    assert_string_equal(reason_of(&r), "replayed");
    te_reply_release(&r);
    free(b);
    free(tok);

    /* expired: past exp + skew */
    tok = mint(f, "w3", 10);
    f->t += 10 + f->o.join_skew_s + 1;
    b = reg_body("w3", tok, "nonce-cccccccccccccccc", 1, NULL);
    te_register(f->e, b, strlen(b), "10.0.0.2", NULL, &r);
    assert_int_equal(r.status, 401);
    assert_string_equal(reason_of(&r), "expired");
    te_reply_release(&r);
    free(b);
    free(tok);

    /* 10 failures from one address, then 429 for its next failure (no
     * event), but never for a good token */
    for (int i = 0; i < 11; i++) {
        b = reg_body("w9", "exa1.k1.AAAA.BBBB", "nonce-dddddddddddddddd", 1,
                     NULL);
        te_register(f->e, b, strlen(b), "10.0.0.3", NULL, &r);
        assert_int_equal(r.status, i < 10 ? 401 : 429);
        if (i == 10)
            assert_true(r.retry_after_s > 0);
        te_reply_release(&r);
        free(b);
    }
    tok = mint(f, "w9", 60);
    b = reg_body("w9", tok, "nonce-eeeeeeeeeeeeeeee", 1, NULL);
    te_register(f->e, b, strlen(b), "10.0.0.3", NULL, &r);
    assert_int_equal(r.status, 201);
    te_reply_release(&r);
    free(b);
    free(tok);
    /* another address is not limited: its bad token is a plain 401 */
    b = reg_body("w8", "exa1.k1.AAAA.BBBB", "nonce-ffffffffffffffff", 1, NULL);
    te_register(f->e, b, strlen(b), "10.0.0.4", NULL, &r);
    assert_int_equal(r.status, 401);
    te_reply_release(&r);
    free(b);

    /* no token material in the events */
    {
        struct wevent_rec *v = NULL;
        size_t n = 0;
        int refused = 0;
        assert_int_equal(store_wevent_list(f->st, NULL, 0, 0, &v, &n, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            if (!strcmp(v[i].kind, "token_refused"))
                refused++;
            assert_null(v[i].detail ? strstr(v[i].detail, "exa1.") : NULL);
            assert_null(v[i].detail ? strstr(v[i].detail, "exs_") : NULL);
        }
        assert_int_equal(refused, 15); /* the 429 wrote none */
        wevent_rec_free_list(v, n);
    }
}

static void test_protocol_skew_and_bad_bodies(void **state)
{
    struct fx *f = *state;
    struct te_reply r = {0};
    const char *b = "{\"protocol\":99,\"worker_id\":\"w1\"}";
    te_register(f->e, b, strlen(b), "127.0.0.1", NULL, &r);
    assert_int_equal(r.status, 426);
    assert_int_equal(
        json_integer_value(json_array_get(
            json_object_get(json_object_get(r.body, "error"), "supported"), 0)),
        1);
    te_reply_release(&r);
    b = "{\"protocol\":1,\"worker_id\":\"../x\",\"register_nonce\":\"x\"}";
    te_register(f->e, b, strlen(b), "127.0.0.1", NULL, &r);
    assert_int_equal(r.status, 400);
    te_reply_release(&r);
    /* a session request for an unknown worker, and with a bad session */
    te_heartbeat(f->e, "nobody", "exs_x", "{}", 2, &r);
    assert_int_equal(r.status, 404);
    te_reply_release(&r);
    {
        char *s = attach(f, "w1", 1);
        te_heartbeat(f->e, "w1", "exs_wrong", "{}", 2, &r);
        assert_int_equal(r.status, 401);
        te_reply_release(&r);
        te_heartbeat(f->e, "w1", s, "{\"running\":5}", 13, &r);
        assert_int_equal(r.status, 400);
        te_reply_release(&r);
        free(s);
    }
}

static void test_expiry_requeue_late_ok_and_revoke(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"sleep\",\"20\"]}");
    char *a = attach(f, "wa", 1), *b, *o;
    long long atts[1];
    json_t *hb;
    int st;
    struct te_reply r = {0};
    char *body;

    assert_int_equal(lease(f, "wa", a, 1, NULL, atts), 1);
    assert_int_equal(atts[0], 1);
    b = attach(f, "wb", 1);
    /* wa falls silent past the TTL; wb keeps beating */
    f->t += 2;
    json_decref(heartbeat(f, "wb", b, "", &st));
    f->t += 2;
    json_decref(heartbeat(f, "wb", b, "", &st));
    tick(f);
    task_state(f, id, "queued", 1);
    o = outcome(f, id, 1);
    assert_string_equal(o, "lost");
    free(o);
    /* the expired worker is told 410 */
    hb = heartbeat(f, "wa", a, "{\"task\":1,\"attempt\":1}", &st);
    assert_int_equal(st, 410);
    json_decref(hb);
    /* attempt 2 goes to wb */
    assert_int_equal(lease(f, "wb", b, 1, NULL, atts), 1);
    assert_int_equal(atts[0], 2);
    /* wa rejoins with its session: a new incarnation, same id */
    body = reg_body("wa", NULL, "nonce-rejoin-00000000", 1, NULL);
    te_register(f->e, body, strlen(body), "127.0.0.1", a, &r);
    assert_int_equal(r.status, 201);
    assert_int_equal(jx_get_int(r.body, "incarnation", 0), 2);
    free(a);
    a = xstrdup(jx_get_str(r.body, "session_token", ""));
    te_reply_release(&r);
    free(body);
    /* attempt 1 finished after all: a late success wins */
    assert_string_equal(result(f, "wa", a, id, 1, 0, NULL), "accepted");
    task_state(f, id, "done", 2);
    {
        struct task_rec t;
        assert_int_equal(store_task_get(f->st, id, &t, NULL), 0);
        assert_int_equal(t.done_attempt, 1);
        assert_int_equal(t.infra_failures, 1);
        task_rec_release(&t);
    }
    o = outcome(f, id, 1);
    assert_string_equal(o, "late_ok");
    free(o);
    /* wb is told to kill attempt 2 */
    hb = heartbeat(f, "wb", b, "{\"task\":1,\"attempt\":2}", &st);
    assert_int_equal(st, 200);
    assert_int_equal(json_array_size(json_object_get(hb, "revoke")), 1);
    assert_string_equal(
        jx_get_str(json_array_get(json_object_get(hb, "revoke"), 0), "reason",
                   ""),
        "superseded");
    json_decref(hb);
    /* and its result is stale, kept for audit */
    assert_string_equal(result(f, "wb", b, id, 2, 0, NULL), "stale");
    assert_int_equal(store_result_count(f->st, id, NULL), 2);
    o = outcome(f, id, 2);
    assert_string_equal(o, "late_stale");
    free(o);
    free(a);
    free(b);
}

static void test_infra_budget(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"x\"]}");
    struct task_rec t;
    for (int i = 0; i < 3; i++) {
        char name[8];
        char *s;
        xsnprintf(name, sizeof(name), "w%d", i);
        s = attach(f, name, 1);
        assert_int_equal(lease(f, name, s, 1, NULL, NULL), 1);
        f->t += 4;
        tick(f);
        free(s);
    }
    assert_int_equal(store_task_get(f->st, id, &t, NULL), 0);
    assert_string_equal(t.state, "failed");
    assert_string_equal(t.reason, "worker_lost x3");
    assert_int_equal(t.attempt, 3);
    task_rec_release(&t);
}

static void test_unreported_lease_released(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"x\"]}");
    char *s = attach(f, "w1", 1), *o;
    json_t *hb;
    int st;
    struct task_rec t;
    assert_int_equal(lease(f, "w1", s, 1, NULL, NULL), 1);
    /* within the grace: not released */
    f->t += 1;
    hb = heartbeat(f, "w1", s, "", &st);
    assert_int_equal(json_array_size(json_object_get(hb, "release")), 0);
    json_decref(hb);
    f->t += 1.5;
    hb = heartbeat(f, "w1", s, "", &st);
    assert_int_equal(st, 200);
    assert_int_equal(json_array_size(json_object_get(hb, "release")), 1);
    json_decref(hb);
    o = outcome(f, id, 1);
    assert_string_equal(o, "released");
    free(o);
    assert_int_equal(store_task_get(f->st, id, &t, NULL), 0);
    assert_string_equal(t.state, "queued");
    assert_int_equal(t.infra_failures, 0);
    task_rec_release(&t);
    /* the next lease is attempt 2 */
    {
        long long atts[1];
        assert_int_equal(lease(f, "w1", s, 1, NULL, atts), 1);
        assert_int_equal(atts[0], 2);
    }
    free(s);
}

static void test_cancel_revokes(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"x\"]}");
    long long q = submit(f, "{\"argv\":[\"y\"]}");
    char *s = attach(f, "w1", 1);
    json_t *hb;
    int st;
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(lease(f, "w1", s, 1, NULL, NULL), 1);
    assert_int_equal(task_cancel(f->st, id, f->t, &err), 0);
    assert_int_equal(task_cancel(f->st, q, f->t, &err), 0);
    assert_int_equal(task_cancel(f->st, q, f->t, &err), 1);
    assert_int_equal(task_cancel(f->st, 999, f->t, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    hb = heartbeat(f, "w1", s, "{\"task\":1,\"attempt\":1}", &st);
    assert_int_equal(json_array_size(json_object_get(hb, "revoke")), 1);
    assert_string_equal(
        jx_get_str(json_array_get(json_object_get(hb, "revoke"), 0), "reason",
                   ""),
        "cancelled");
    json_decref(hb);
    task_state(f, id, "cancelled", 1);
    task_state(f, q, "cancelled", 0);
    assert_string_equal(result(f, "w1", s, id, 1, 0, NULL), "stale");
    free(s);
}

static void test_fit_labels_and_walltime(void **state)
{
    struct fx *f = *state;
    long long gpu = submit(f, "{\"argv\":[\"x\"],\"gpus\":1}");
    long long lab = submit(f, "{\"argv\":[\"x\"],\"labels\":[\"a100\"]}");
    long long big = submit(f, "{\"argv\":[\"x\"],\"cpus\":8}");
    long long longt = submit(f, "{\"argv\":[\"x\"],\"timeout_s\":600}");
    long long ok = submit(f, "{\"argv\":[\"x\"],\"timeout_s\":100}");
    char *tok = mint(f, "w1", 60);
    char *extra =
        xstrfmt(",\"slurm\":{\"job_id\":\"42\",\"end_time\":%.0f}", f->t + 300);
    char *b = reg_body("w1", tok, "nonce-0123456789abcdef", 8, extra);
    struct te_reply r = {0};
    long long ids[8];
    te_register(f->e, b, strlen(b), "127.0.0.1", NULL, &r);
    assert_int_equal(r.status, 201);
    {
        char *s = xstrdup(jx_get_str(r.body, "session_token", ""));
        te_reply_release(&r);
        /* 4 cpus, no gpu, no label, 300 s left: only the 100 s task */
        assert_int_equal(lease(f, "w1", s, 8, ids, NULL), 1);
        assert_int_equal(ids[0], ok);
        free(s);
    }
    task_state(f, gpu, "queued", 0);
    task_state(f, lab, "queued", 0);
    task_state(f, big, "queued", 0);
    task_state(f, longt, "queued", 0);
    free(b);
    free(extra);
    free(tok);
}

/* A task pinned to a cluster (task_submit_pinned) is leased only by a
 * worker whose join token named that cluster; a worker of another
 * cluster or of none gets the unpinned tasks only. */
static char *attach_of(struct fx *f, const char *worker, const char *cluster)
{
    exa_error_t err = EXA_ERROR_INIT;
    char *tok = task_join_mint(f->st, NULL, worker, cluster, NULL, NULL, 60,
                               f->t, &err);
    char *b, *sess;
    struct te_reply r = {0};
    if (!tok)
        fail_msg("mint: %s", err.text);
    b = reg_body(worker, tok, "nonce-0123456789abcdef", 4, NULL);
    te_register(f->e, b, strlen(b), "127.0.0.1", NULL, &r);
    assert_int_equal(r.status, 201);
    sess = xstrdup(jx_get_str(r.body, "session_token", ""));
    te_reply_release(&r);
    free(b);
    free(tok);
    return sess;
}

/* A provisioned worker's profile name counts as one of its labels
 * (WORKERS.md §9.2 step 3): the provisioner fits a task labelled "cpu1"
 * to profile cpu1, so cpu1's worker, whose --labels are empty, must lease
 * it; a label that is neither the profile nor the worker's is not. */
static void test_profile_name_is_label(void **state)
{
    struct fx *f = *state;
    exa_error_t err = EXA_ERROR_INIT;
    long long byname = submit(f, "{\"argv\":[\"x\"],\"labels\":[\"cpu1\"]}");
    long long other = submit(f, "{\"argv\":[\"x\"],\"labels\":[\"a100\"]}");
    long long both =
        submit(f, "{\"argv\":[\"x\"],\"labels\":[\"cpu1\",\"a100\"]}");
    long long ids[8];
    char *tok = task_join_mint(f->st, NULL, "testa-cpu1-0a0b0c0d", "testa",
                               "cpu1", NULL, 60, f->t, &err);
    char *b, *s, *sn;
    struct te_reply r = {0};
    if (!tok)
        fail_msg("mint: %s", err.text);
    b = reg_body("testa-cpu1-0a0b0c0d", tok, "nonce-0123456789abcdef", 4, NULL);
    te_register(f->e, b, strlen(b), "127.0.0.1", NULL, &r);
    assert_int_equal(r.status, 201);
    s = xstrdup(jx_get_str(r.body, "session_token", ""));
    te_reply_release(&r);
    /* a worker of no profile takes none of them */
    sn = attach_of(f, "wn", NULL);
    assert_int_equal(lease(f, "wn", sn, 8, ids, NULL), 0);
    assert_int_equal(lease(f, "testa-cpu1-0a0b0c0d", s, 8, ids, NULL), 1);
    assert_int_equal(ids[0], byname);
    task_state(f, other, "queued", 0);
    task_state(f, both, "queued", 0);
    free(sn);
    free(s);
    free(b);
    free(tok);
}

static void test_cluster_pin(void **state)
{
    struct fx *f = *state;
    json_t *j = json_loads("{\"argv\":[\"x\"],\"outputs\":[\"a\"],"
                           "\"outputs_dir\":\"out\"}",
                           0, NULL);
    struct tp_spec sp;
    exa_error_t err = EXA_ERROR_INIT;
    long long pinned = 0, free1, free2, ids[8];
    struct task_rec t;
    char *sa, *sn, *sb;
    assert_int_equal(tp_spec_decode(j, &sp, &err), 0);
    json_decref(j);
    assert_string_equal(sp.outputs_dir, "out");
    assert_int_equal(
        task_submit_pinned(f->st, &sp, "testb", "run1", f->t, &pinned, &err),
        0);
    assert_int_equal(
        task_submit_pinned(f->st, &sp, "bad/name", NULL, f->t, &free1, &err),
        -1);
    assert_int_equal(err.code, EXA_EUSAGE);
    tp_spec_release(&sp);
    free1 = submit(f, "{\"argv\":[\"x\"]}");
    free2 = submit(f, "{\"argv\":[\"x\"]}");
    assert_int_equal(store_task_get(f->st, pinned, &t, &err), 0);
    assert_string_equal(t.cluster, "testb");
    assert_string_equal(t.run_id, "run1");
    task_rec_release(&t);
    sa = attach_of(f, "wa", "testa"); /* another cluster */
    sn = attach_of(f, "wn", NULL);    /* none */
    sb = attach_of(f, "wb", "testb");
    assert_int_equal(lease(f, "wa", sa, 1, ids, NULL), 1);
    assert_int_equal(ids[0], free1);
    assert_int_equal(lease(f, "wn", sn, 8, ids, NULL), 1);
    assert_int_equal(ids[0], free2);
    assert_int_equal(lease(f, "wa", sa, 8, NULL, NULL), 0);
    task_state(f, pinned, "queued", 0);
    assert_int_equal(lease(f, "wb", sb, 8, ids, NULL), 1);
    assert_int_equal(ids[0], pinned);
    {
        struct task_rec *v = NULL;
        size_t n = 0;
        assert_int_equal(
            store_task_list_run(f->st, "run1", "testb", &v, &n, &err), 0);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].id, pinned);
        task_rec_free_list(v, n);
        assert_int_equal(
            store_task_list_run(f->st, "run1", "testa", &v, &n, &err), 0);
        assert_int_equal(n, 0);
        task_rec_free_list(v, n);
    }
    free(sa);
    free(sn);
    free(sb);
}

static void test_capacity_bounds_leases(void **state)
{
    struct fx *f = *state;
    char *s = attach(f, "w1", 4);
    long long ids[8];
    for (int i = 0; i < 20; i++)
        submit(f, "{\"kind\":\"noop\",\"argv\":[]}");
    assert_int_equal(lease(f, "w1", s, 8, ids, NULL), 4);
    assert_int_equal(lease(f, "w1", s, 1, NULL, NULL), 0);
    assert_string_equal(result(f, "w1", s, ids[0], 1, 0, NULL), "accepted");
    assert_int_equal(lease(f, "w1", s, 8, NULL, NULL), 1);
    free(s);
}

static void test_timeout_cap_and_bye_and_drain(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"x\"],\"timeout_s\":5}");
    long long id2 = submit(f, "{\"argv\":[\"x\"]}");
    char *s = attach(f, "w1", 1), *s2 = attach(f, "w2", 1);
    struct task_rec t;
    struct te_reply r = {0};
    int st;
    long long ids[1];
    assert_int_equal(lease(f, "w1", s, 1, ids, NULL), 1);
    assert_int_equal(ids[0], id);
    /* w1 keeps beating with the task running past timeout + 60 s */
    for (int i = 0; i < 70; i++) {
        f->t += 1;
        json_decref(heartbeat(f, "w1", s, "{\"task\":1,\"attempt\":1}", &st));
        json_decref(heartbeat(f, "w2", s2, "", &st));
        tick(f);
    }
    assert_int_equal(store_task_get(f->st, id, &t, NULL), 0);
    assert_string_equal(t.state, "failed");
    assert_string_equal(t.reason, "timeout");
    task_rec_release(&t);
    /* bye releases w2's lease without using the budget */
    assert_int_equal(lease(f, "w2", s2, 1, ids, NULL), 1);
    assert_int_equal(ids[0], id2);
    te_bye(f->e, "w2", s2, "{\"reason\":\"idle\"}", 17, &r);
    assert_int_equal(r.status, 200);
    te_reply_release(&r);
    task_state(f, id2, "queued", 1);
    te_heartbeat(f->e, "w2", s2, "{}", 2, &r);
    assert_int_equal(r.status, 410);
    te_reply_release(&r);
    /* drain: the lease answers drain */
    te_drain(f->e, "w1", s, "{\"reason\":\"walltime\"}", 21, &r);
    assert_int_equal(r.status, 200);
    te_reply_release(&r);
    te_lease(f->e, "w1", s, "{}", 2, 0, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.body, "drain")));
    te_reply_release(&r);
    free(s);
    free(s2);
}

/* Events of kind; returns how many and the last one's detail (caller
 * frees) when detail is not NULL. */
static size_t events_of(struct fx *f, const char *kind, char **detail)
{
    struct wevent_rec *v = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(store_wevent_list(f->st, kind, 0, 0, &v, &n, &err), 0);
    if (detail)
        *detail = n && v[n - 1].detail ? xstrdup(v[n - 1].detail) : NULL;
    wevent_rec_free_list(v, n);
    return n;
}

static int drain_requested(struct fx *f, const char *w)
{
    struct worker_rec r;
    int d;
    assert_int_equal(store_worker_get(f->st, w, &r, NULL), 1);
    d = r.drain_requested;
    worker_rec_release(&r);
    return d;
}

/* WORKERS.md 6.3: five exit-127 results within 60 s drain the worker and
 * give the five tasks back without using their budget; a task given back
 * once keeps its second such failure; fewer, slower or ordinary failures
 * change nothing. */
/* Make worker w (session sess) a black hole: five fast exit-127 failures
 * of the first five queued tasks (after five fresh ones are queued; an
 * earlier black hole's tasks come first, as attempt 2). */
static void black_hole_of(struct fx *f, const char *w, const char *sess)
{
    long long ids[5], atts[5];
    for (int i = 0; i < 5; i++)
        submit(f, "{\"argv\":[\"/no/such/python\"]}");
    assert_int_equal(lease(f, w, sess, 5, ids, atts), 5);
    for (int i = 0; i < 5; i++) {
        f->t += 1;
        assert_string_equal(result(f, w, sess, ids[i], atts[i], 127, NULL),
                            "accepted");
    }
    assert_int_equal(drain_requested(f, w), 1);
}

/* A provisioned worker's black-hole drain strikes its node for its
 * cluster's profile (WORKERS.md §9.4): the node it registered from
 * (SLURMD_NODENAME), else its host name's first label; the event names
 * the node; a name that is no node name strikes nothing. */
static void test_black_hole_strikes_node(void **state)
{
    struct fx *f = *state;
    static const struct {
        const char *w, *extra, *node;
    } cases[] = {
        {"wn", ",\"slurm\":{\"node\":\"testa-n1\",\"job_id\":\"77\"}",
         "testa-n1"},
        {"wh", ",\"host\":\"n9.example.org\"", "n9"},
        {"wbad", ",\"slurm\":{\"node\":\"a;b\"}", NULL},
    };
    struct node_strikes *v = NULL;
    size_t n = 0;
    char *d = NULL;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char *tok = mint(f, cases[c].w, 60), *sess;
        char *b = reg_body(cases[c].w, tok, "nonce-0123456789abcdef", 8,
                           cases[c].extra);
        struct te_reply r = {0};
        te_register(f->e, b, strlen(b), "127.0.0.1", NULL, &r);
        assert_int_equal(r.status, 201);
        sess = xstrdup(jx_get_str(r.body, "session_token", ""));
        te_reply_release(&r);
        free(b);
        free(tok);
        black_hole_of(f, cases[c].w, sess);
        free(sess);
    }
    assert_int_equal(events_of(f, "worker_black_hole", &d), 3);
    free(d);
    assert_int_equal(
        store_node_strikes_since(f->st, "testa", "cpu1", 0, &v, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].node, "n9");
    assert_string_equal(v[1].node, "testa-n1");
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(v[i].count, 1);
        assert_string_equal(v[i].kinds, "black_hole");
    }
    node_strikes_free(v, n);
    {
        struct wevent_rec *ev = NULL;
        size_t ne = 0;
        assert_int_equal(
            store_wevent_list(f->st, "worker_black_hole", 0, 0, &ev, &ne, NULL),
            0);
        assert_int_equal(ne, 3);
        assert_non_null(strstr(ev[0].detail, "\"node\":\"testa-n1\""));
        assert_non_null(strstr(ev[1].detail, "\"node\":\"n9\""));
        assert_null(strstr(ev[2].detail, "\"node\""));
        wevent_rec_free_list(ev, ne);
    }
}

static void test_black_hole(void **state)
{
    struct fx *f = *state;
    long long id[6], ids[8];
    char *s1 = attach(f, "w1", 8), *s2 = attach(f, "w2", 8);
    char *s3 = attach(f, "w3", 8), *d = NULL;
    struct task_rec t;
    struct te_reply r = {0};
    struct te_counters c;
    for (int i = 0; i < 6; i++)
        id[i] = submit(f, "{\"argv\":[\"/no/such/python\"]}");
    assert_int_equal(lease(f, "w1", s1, 6, ids, NULL), 6);
    /* the classification */
    assert_int_equal(te_infra_sign(127, 0, 100.0, 100.2), 1);
    assert_int_equal(te_infra_sign(126, 0, 100.0, 110.0), 1);
    assert_int_equal(te_infra_sign(127, 0, 100.0, 110.5), 0);
    assert_int_equal(te_infra_sign(1, 0, 100.0, 100.2), 0);
    assert_int_equal(te_infra_sign(127, 9, 100.0, 100.2), 0);
    /* four fast exit-127 failures and one exit 1: no black hole */
    for (int i = 0; i < 4; i++) {
        f->t += 1;
        assert_string_equal(result(f, "w1", s1, id[i], 1, 127, NULL),
                            "accepted");
        task_state(f, id[i], "failed", 1);
    }
    assert_string_equal(result(f, "w1", s1, id[4], 1, 1, NULL), "accepted");
    assert_int_equal(drain_requested(f, "w1"), 0);
    assert_int_equal(events_of(f, "worker_black_hole", NULL), 0);
    /* the fifth infrastructure sign within 60 s: w1 is a black hole */
    f->t += 1;
    assert_string_equal(result(f, "w1", s1, id[5], 1, 127, NULL), "accepted");
    assert_int_equal(drain_requested(f, "w1"), 1);
    assert_int_equal(events_of(f, "worker_black_hole", &d), 1);
    assert_non_null(strstr(d, "\"failures\":5"));
    assert_non_null(strstr(d, "\"requeued\":5"));
    free(d);
    te_counters_get(f->e, &c);
    assert_int_equal(c.black_holes, 1);
    for (int i = 0; i < 6; i++) {
        char *o = outcome(f, id[i], 1);
        if (i == 4) { /* exit 1 is the task's own failure */
            task_state(f, id[i], "failed", 1);
            assert_string_equal(o, "failed");
        } else {
            struct attempt_rec a;
            task_state(f, id[i], "queued", 1);
            assert_string_equal(o, "failed");
            assert_int_equal(store_attempt_get(f->st, id[i], 1, &a, NULL), 1);
            assert_string_equal(a.cause, "black_hole");
            attempt_rec_release(&a);
            assert_int_equal(store_task_get(f->st, id[i], &t, NULL), 0);
            assert_int_equal(t.infra_failures, 0);
            assert_null(t.reason);
            task_rec_release(&t);
        }
        free(o);
    }
    assert_int_equal(events_of(f, "task_requeued", NULL), 5);
    /* w1 is leased nothing more: its lease answers drain */
    te_lease(f->e, "w1", s1, "{}", 2, 0, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.body, "drain")));
    assert_int_equal(json_array_size(json_object_get(r.body, "tasks")), 0);
    te_reply_release(&r);
    /* w2 takes them as attempt 2 and fails the same way: w2 is drained
     * too, but the tasks were given back once and now keep the failure */
    assert_int_equal(lease(f, "w2", s2, 8, ids, NULL), 5);
    for (int i = 0; i < 6; i++) {
        if (i == 4)
            continue;
        f->t += 2;
        assert_string_equal(result(f, "w2", s2, id[i], 2, 127, NULL),
                            "accepted");
    }
    assert_int_equal(drain_requested(f, "w2"), 1);
    assert_int_equal(events_of(f, "worker_black_hole", &d), 2);
    assert_non_null(strstr(d, "\"requeued\":0"));
    free(d);
    for (int i = 0; i < 6; i++)
        if (i != 4)
            task_state(f, id[i], "failed", 2);
    /* slow failures (five take 80 s) are no black hole */
    for (int i = 0; i < 5; i++) {
        f->t += 20;
        id[i] = submit(f, "{\"argv\":[\"/no/such/python\"]}");
        assert_int_equal(lease(f, "w3", s3, 1, ids, NULL), 1);
        assert_int_equal(ids[0], id[i]);
        assert_string_equal(result(f, "w3", s3, id[i], 1, 127, NULL),
                            "accepted");
    }
    assert_int_equal(drain_requested(f, "w3"), 0);
    for (int i = 0; i < 5; i++)
        task_state(f, id[i], "failed", 1);
    free(s1);
    free(s2);
    free(s3);
}

/* The liveness lock: held from te_open to te_close, seen by another
 * descriptor (as `exa pipeline run --via worker` sees it). */
static void test_engine_running(void **state)
{
    struct fx *f = *state;
    exa_error_t err = EXA_ERROR_INIT;
    char *other = xstrfmt("%s/none.db", f->dir);
    assert_int_equal(te_engine_running(f->db, &err), 1);
    assert_int_equal(te_engine_running(other, &err), 0); /* never ran */
    te_close(f->e);
    f->e = NULL;
    assert_int_equal(te_engine_running(f->db, &err), 0);
    open_engine(f);
    assert_int_equal(te_engine_running(f->db, &err), 1);
    free(other);
}

static void test_artifacts_required(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"x\"],\"outputs\":[\"model.bin\"]}");
    char *s = attach(f, "w1", 1), *tmp = NULL;
    const char *sha =
        "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    char *art = xstrfmt("{\"name\":\"model.bin\",\"sha256\":\"%s\","
                        "\"size\":5}",
                        sha);
    struct te_reply r = {0};
    struct stat sb;
    char *final;
    assert_int_equal(lease(f, "w1", s, 1, NULL, NULL), 1);
    assert_string_equal(result(f, "w1", s, id, 1, 0, art), "missing_artifacts");
    task_state(f, id, "leased", 1);
    /* another worker cannot upload for this attempt */
    {
        char *s2 = attach(f, "w2", 1);
        assert_int_equal(te_artifact_check(f->e, "w2", s2, id, 1, "model.bin",
                                           sha, &tmp, &r),
                         -1);
        assert_int_equal(r.status, 409);
        te_reply_release(&r);
        free(s2);
    }
    assert_int_equal(
        te_artifact_check(f->e, "w1", s, id, 1, "model.bin", sha, &tmp, &r), 0);
    tu_write_file(tmp, "hello");
    /* a body that does not match the claim is refused */
    te_artifact_commit(f->e, "w1", id, 1, "model.bin", sha, "00", 5, tmp, &r);
    assert_int_equal(r.status, 422);
    te_reply_release(&r);
    free(tmp);
    tmp = NULL;
    assert_int_equal(
        te_artifact_check(f->e, "w1", s, id, 1, "model.bin", sha, &tmp, &r), 0);
    tu_write_file(tmp, "hello");
    te_artifact_commit(f->e, "w1", id, 1, "model.bin", sha, sha, 5, tmp, &r);
    assert_int_equal(r.status, 201);
    te_reply_release(&r);
    final = xstrfmt("%s/%lld/1/model.bin", te_artifact_dir(f->e), id);
    assert_int_equal(stat(final, &sb), 0);
    assert_int_equal(sb.st_size, 5);
    /* the same upload again is a no-op */
    free(tmp);
    tmp = NULL;
    assert_int_equal(
        te_artifact_check(f->e, "w1", s, id, 1, "model.bin", sha, &tmp, &r), 1);
    assert_int_equal(r.status, 200);
    te_reply_release(&r);
    assert_string_equal(result(f, "w1", s, id, 1, 0, art), "accepted");
    task_state(f, id, "done", 1);
    free(final);
    free(art);
    free(s);
}

static void test_restart_keeps_sessions_and_leases(void **state)
{
    struct fx *f = *state;
    long long id = submit(f, "{\"argv\":[\"x\"]}");
    long long id2 = submit(f, "{\"argv\":[\"x\"]}");
    char *s = attach(f, "w1", 1), *s2 = attach(f, "w2", 1);
    const char *eid = te_engine_id(f->e);
    char keep[9];
    int st;
    json_t *hb;
    struct task_rec t;
    xsnprintf(keep, sizeof(keep), "%s", eid);
    assert_int_equal(lease(f, "w1", s, 1, NULL, NULL), 1);
    assert_int_equal(lease(f, "w2", s2, 1, NULL, NULL), 1);
    /* the engine dies; back 5 s later (longer than the TTL of 3 s) */
    te_close(f->e);
    f->t += 5;
    open_engine(f);
    assert_string_equal(te_engine_id(f->e), keep);
    assert_int_equal(te_epoch(f->e), 2);
    tick(f);
    task_state(f, id, "leased", 1);
    /* w1 comes back with the same session; w2 never does */
    hb = heartbeat(f, "w1", s, "{\"task\":1,\"attempt\":1}", &st);
    assert_int_equal(st, 200);
    assert_int_equal(json_array_size(json_object_get(hb, "revoke")), 0);
    json_decref(hb);
    f->t += 4;
    json_decref(heartbeat(f, "w1", s, "{\"task\":1,\"attempt\":1}", &st));
    tick(f);
    assert_string_equal(result(f, "w1", s, id, 1, 0, NULL), "accepted");
    task_state(f, id, "done", 1);
    /* w2 is lost with cause restart: requeued, budget untouched */
    f->t += 2;
    tick(f);
    assert_int_equal(store_task_get(f->st, id2, &t, NULL), 0);
    assert_string_equal(t.state, "queued");
    assert_int_equal(t.infra_failures, 0);
    task_rec_release(&t);
    {
        struct attempt_rec a;
        assert_int_equal(store_attempt_get(f->st, id2, 1, &a, NULL), 1);
        assert_string_equal(a.outcome, "lost");
        assert_string_equal(a.cause, "restart");
        attempt_rec_release(&a);
    }
    free(s);
    free(s2);
}

/* A parked lease wakes when another connection (the CLI) queues a task. */
struct waiter {
    struct fx *f;
    const char *sess;
    struct te_reply r;
};

static void *park(void *arg)
{
    struct waiter *w = arg;
    te_lease(w->f->e, "w1", w->sess, "{}", 2, 5, &w->r);
    return NULL;
}

static void test_longpoll_wakes_on_other_connection(void **state)
{
    struct fx *f = *state;
    char *s = attach(f, "w1", 1);
    struct waiter w = {f, s, {0}};
    pthread_t th;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *other = store_open(f->db, &err);
    struct tp_spec sp;
    json_t *j = json_loads("{\"argv\":[\"x\"]}", 0, NULL);
    long long id;
    double t0 = te_wallclock(NULL);
    assert_non_null(other);
    assert_int_equal(pthread_create(&th, NULL, park, &w), 0);
    usleep(200000);
    assert_int_equal(tp_spec_decode(j, &sp, &err), 0);
    assert_int_equal(task_submit(other, &sp, f->t, &id, &err), 0);
    pthread_join(th, NULL);
    assert_int_equal(w.r.status, 200);
    assert_int_equal(json_array_size(json_object_get(w.r.body, "tasks")), 1);
    assert_true(te_wallclock(NULL) - t0 < 2.0);
    te_reply_release(&w.r);
    tp_spec_release(&sp);
    json_decref(j);
    store_close(other);
    free(s);
}

/* te_ring from another connection wakes the engine's parked long-poll
 * through the doorbell (counted), and the lease takes the new task. */
static void test_doorbell(void **state)
{
    struct fx *f = *state;
    char *s = attach(f, "w1", 1);
    struct waiter w = {f, s, {0}};
    pthread_t th;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *other = store_open(f->db, &err);
    struct tp_spec sp;
    json_t *j = json_loads("{\"argv\":[\"x\"]}", 0, NULL);
    struct te_counters c;
    long long id;
    assert_non_null(other);
    te_counters_get(f->e, &c);
    assert_int_equal(c.rings, 0);
    assert_int_equal(pthread_create(&th, NULL, park, &w), 0);
    usleep(100000);
    assert_int_equal(tp_spec_decode(j, &sp, &err), 0);
    assert_int_equal(task_submit(other, &sp, f->t, &id, &err), 0);
    te_ring(f->db);
    pthread_join(th, NULL);
    assert_int_equal(w.r.status, 200);
    assert_int_equal(json_array_size(json_object_get(w.r.body, "tasks")), 1);
    for (int i = 0; i < 200 && c.rings == 0; i++) {
        usleep(10000);
        te_counters_get(f->e, &c);
    }
    assert_int_equal(c.rings, 1);
    te_ring("/nonexistent/dir/platform.db"); /* no engine: nothing happens */
    te_reply_release(&w.r);
    tp_spec_release(&sp);
    json_decref(j);
    store_close(other);
    free(s);
}

static void test_tokens(void **state)
{
    struct fx *f = *state;
    char *kp = xstrfmt("%s/k.key", f->dir);
    struct token_keys k;
    struct join_claims c, out;
    char *tok;
    struct stat sb;
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(token_keys_load(kp, &k, &err), 0);
    assert_int_equal(stat(kp, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    memset(&c, 0, sizeof(c));
    xsnprintf(c.worker_id, sizeof(c.worker_id), "%s", "testa-cpu1-7d41e0c2");
    xsnprintf(c.request_id, sizeof(c.request_id), "%s", "7d41e0c2");
    xsnprintf(c.cluster, sizeof(c.cluster), "%s", "testa");
    xsnprintf(c.profile, sizeof(c.profile), "%s", "cpu1");
    xsnprintf(c.engine_id, sizeof(c.engine_id), "%s", "3f9c2a1b");
    xsnprintf(c.jti, sizeof(c.jti), "%s", "00112233445566778899aabbccddeeff");
    c.nbf = 1000;
    c.exp = 2000;
    tok = token_join_mint(&k, &c);
    assert_true(starts_with(tok, "exa1.k1."));
    assert_int_equal(token_join_verify(&k, tok, 1500, 0, &out), TOKEN_OK);
    assert_string_equal(out.worker_id, c.worker_id);
    assert_string_equal(out.jti, c.jti);
    assert_int_equal(out.exp, 2000);
    assert_int_equal(token_join_verify(&k, tok, 2001, 0, &out), TOKEN_EXPIRED);
    assert_int_equal(token_join_verify(&k, tok, 999, 0, &out), TOKEN_EXPIRED);
    /* rotation keeps the old key valid and signs with the new */
    assert_int_equal(token_keys_rotate(kp, &k, &err), 0);
    assert_int_equal(k.n, 2);
    assert_int_equal(token_join_verify(&k, tok, 1500, 0, &out), TOKEN_OK);
    free(tok);
    tok = token_join_mint(&k, &c);
    assert_true(starts_with(tok, "exa1.k2."));
    tok[5] = 'x'; /* kid k2 -> x2 */
    assert_int_equal(token_join_verify(&k, tok, 1500, 0, &out),
                     TOKEN_UNKNOWN_KID);
    assert_int_equal(token_join_verify(&k, "exa1.k1..", 1500, 0, &out),
                     TOKEN_MALFORMED);
    assert_int_equal(token_join_verify(&k, "garbage", 1500, 0, &out),
                     TOKEN_MALFORMED);
    free(tok);
    /* a key file others can read is refused */
    chmod(kp, 0644);
    assert_int_equal(token_keys_load(kp, &k, &err), -1);
    assert_non_null(strstr(err.text, "readable by others"));
    free(kp);
}

static void test_proto_paths_and_bodies(void **state)
{
    struct tp_path p;
    exa_error_t err = EXA_ERROR_INIT;
    struct tp_results rs;
    long long want;
    (void)state;
    assert_int_equal(
        tp_parse_path("POST", "/v1/workers/w-1/lease", "wait=5", &p, &err), 0);
    assert_int_equal(p.route, TP_LEASE);
    assert_string_equal(p.worker_id, "w-1");
    assert_true(p.wait_s == 5);
    assert_int_equal(
        tp_parse_path("GET", "/v1/workers/w-1/lease", NULL, &p, &err), 1);
    assert_int_equal(
        tp_parse_path("PUT", "/v1/tasks/12/attempts/3/artifacts/model.bin",
                      NULL, &p, &err),
        0);
    assert_int_equal(p.task, 12);
    assert_int_equal(p.attempt, 3);
    assert_string_equal(p.name, "model.bin");
    assert_int_equal(tp_parse_path("PUT",
                                   "/v1/tasks/12/attempts/3/artifacts/..", NULL,
                                   &p, &err),
                     -1);
    assert_int_equal(tp_parse_path("PUT", "/v1/tasks/0/attempts/3/artifacts/a",
                                   NULL, &p, &err),
                     -1);
    assert_int_equal(
        tp_parse_path("POST", "/v1/workers/a/b/heartbeat", NULL, &p, &err), -1);
    assert_int_equal(
        tp_parse_path("POST", "/v1/workers/w/lease", "wait=99", &p, &err), -1);
    assert_int_equal(tp_parse_path("GET", "/v1/ping", NULL, &p, &err), 0);
    assert_int_equal(tp_decode_lease("", 0, &want, &err), 0);
    assert_int_equal(want, 1);
    assert_int_equal(tp_decode_lease("{\"want\":0}", 10, &want, &err), -1);
    assert_int_equal(
        tp_decode_lease("{\"want\":1,\"want\":2}", 20, &want, &err), -1);
    assert_int_equal(tp_decode_lease("[]", 2, &want, &err), -1);
    /* idem must name the task and attempt */
    {
        const char *b = "{\"results\":[{\"task_id\":1,\"attempt\":2,"
                        "\"idem\":\"1:3\",\"exit_code\":0}]}";
        assert_int_equal(tp_decode_results(b, strlen(b), &rs, &err), -1);
        assert_non_null(strstr(err.text, "'idem' must be \"1:2\""));
    }
    {
        const char *b = "{\"results\":[{\"task_id\":1,\"attempt\":2,"
                        "\"idem\":\"1:2\",\"exit_code\":0,\"artifacts\":"
                        "[{\"name\":\"a\",\"sha256\":\"XYZ\",\"size\":1}]}]}";
        assert_int_equal(tp_decode_results(b, strlen(b), &rs, &err), -1);
    }
    {
        json_t *j =
            json_loads("{\"argv\":[\"a\"],\"env\":{\"1X\":\"v\"}}", 0, NULL);
        struct tp_spec s;
        assert_int_equal(tp_spec_decode(j, &s, &err), -1);
        json_decref(j);
        j = json_loads("{\"argv\":[\"a\"],\"cwd\":\"rel\"}", 0, NULL);
        assert_int_equal(tp_spec_decode(j, &s, &err), -1);
        json_decref(j);
        j = json_loads("{\"argv\":[]}", 0, NULL);
        assert_int_equal(tp_spec_decode(j, &s, &err), -1);
        json_decref(j);
    }
}

/* Registration flood: 10 refusals, then 429 after verification (counted),
 * and from the 100th refusal in a minute on, 429 before the body is even
 * decoded (the pre-check), so a flood costs no HMAC or SHA-256 work; a
 * valid token from another address still registers, and the flooding
 * address is let in again once the minute is over. */
static void test_registration_flood(void **state)
{
    struct fx *f = *state;
    struct te_counters c0, c1;
    struct te_reply r = {0};
    char *tok, *b;
    int refused401 = 0, limited = 0;
    te_counters_get(f->e, &c0);
    for (int i = 0; i < 125; i++) {
        b = reg_body("w9", "exa1.k1.AAAA.BBBB", "nonce-dddddddddddddddd", 1,
                     NULL);
        te_register(f->e, b, strlen(b), "10.0.0.7", NULL, &r);
        if (r.status == 401)
            refused401++;
        else if (r.status == 429)
            limited++;
        else
            fail_msg("attempt %d: status %d", i, r.status);
        if (i == 99 || i == 124)
            assert_int_equal(r.retry_after_s, 60);
        te_reply_release(&r);
        free(b);
    }
    te_counters_get(f->e, &c1);
    assert_int_equal(refused401, 10);
    assert_int_equal(limited, 115);
    assert_int_equal(c1.reg_held_back - c0.reg_held_back, 25);
    assert_int_equal(c1.registrations[TE_REG_LIMITED] -
                         c0.registrations[TE_REG_LIMITED],
                     115);
    /* held back before decoding: a malformed body is 429, not 400 */
    te_register(f->e, "{", 1, "10.0.0.7", NULL, &r);
    assert_int_equal(r.status, 429);
    te_reply_release(&r);
    /* and before verification: a valid token from it is held back too */
    tok = mint(f, "w9", 600);
    b = reg_body("w9", tok, "nonce-eeeeeeeeeeeeeeee", 1, NULL);
    te_register(f->e, b, strlen(b), "10.0.0.7", NULL, &r);
    assert_int_equal(r.status, 429);
    te_reply_release(&r);
    te_counters_get(f->e, &c1);
    assert_int_equal(c1.reg_held_back - c0.reg_held_back, 27);
    {
        /* another address is not held back */
        char *tok2 = mint(f, "w10", 60);
        char *b2 = reg_body("w10", tok2, "nonce-ffffffffffffffff", 1, NULL);
        te_register(f->e, b2, strlen(b2), "10.0.0.8", NULL, &r);
        assert_int_equal(r.status, 201);
        te_reply_release(&r);
        free(b2);
        free(tok2);
    }
    /* the minute over, the flooding address's valid token registers */
    f->t += 61;
    te_register(f->e, b, strlen(b), "10.0.0.7", NULL, &r);
    assert_int_equal(r.status, 201);
    te_reply_release(&r);
    free(b);
    free(tok);
}

struct logcap {
    int n;
    char last[512];
};

static void cap_log(void *ctx, const char *line)
{
    struct logcap *l = ctx;
    l->n++;
    xsnprintf(l->last, sizeof(l->last), "%s", line);
}

/* A 503's cause goes to the engine's log, once per 10 s with the count of
 * the others; the reply names no path and no SQLite text. */
static void test_busy_logged_rate_limited(void **state)
{
    struct fx *f = *state;
    struct logcap lc = {0, ""};
    char *sess = attach(f, "w1", 1);
    int busy = 0, st;
    json_t *b;
    te_close(f->e);
    f->o.fault_busy = 100;
    f->o.log = cap_log;
    f->o.log_ctx = &lc;
    open_engine(f);
    for (int i = 0; i < 6; i++) { /* every other one is 503 */
        b = heartbeat(f, "w1", sess, "", &st);
        if (st == 503) {
            char *d = json_dumps(b, JSON_COMPACT);
            busy++;
            assert_null(strstr(d, f->db));
            assert_null(strstr(d, "locked"));
            free(d);
        } else {
            assert_int_equal(st, 200);
        }
        json_decref(b);
        f->t += 1;
    }
    assert_int_equal(busy, 3);
    assert_int_equal(lc.n, 1);
    assert_non_null(strstr(lc.last, "database is locked (fault sqlite_busy)"));
    assert_non_null(strstr(lc.last, f->db));
    f->t += 10;
    for (int i = 0; i < 2; i++) {
        b = heartbeat(f, "w1", sess, "", &st);
        json_decref(b);
    }
    assert_int_equal(lc.n, 2);
    assert_non_null(strstr(lc.last, "and 2 more in the last"));
    free(sess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_happy_path_and_duplicate, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_result_is_terminal, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_join_token_refusals, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_registration_flood, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_busy_logged_rate_limited, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_protocol_skew_and_bad_bodies,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_requeue_late_ok_and_revoke,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_infra_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreported_lease_released, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cancel_revokes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fit_labels_and_walltime, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_profile_name_is_label, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cluster_pin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capacity_bounds_leases, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_timeout_cap_and_bye_and_drain,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_black_hole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_black_hole_strikes_node, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_engine_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_artifacts_required, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_restart_keeps_sessions_and_leases,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_longpoll_wakes_on_other_connection,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_doorbell, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test(test_proto_paths_and_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
