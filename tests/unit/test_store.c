/*
 * test_store.c - platform.db: migrations, permissions, refusal to touch a
 * corrupt or newer database, and the audit chain (append-only triggers,
 * recomputation, tamper detection), and connections opening a new
 * database at the same moment.
 */
#include <fcntl.h>
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

#include "libstore/audit.h"
#include "libstore/store.h"
#include "libutil/json.h"
#include "libutil/sha256.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static char *tmpdir_path(void)
{
    char tmpl[] = "/tmp/exa-test-store-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return xstrdup(d);
}

static void rm_rf(const char *dir)
{
    char *cmd = xstrfmt("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
}

static int scalar_int(store_t *st, const char *sql)
{
    sqlite3_stmt *stmt = store_prepare(st, sql, NULL);
    int v;
    assert_non_null(stmt);
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    v = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    return v;
}

static void test_open_creates_0600_and_migrates(void **state)
{
    char *dir = tmpdir_path();
    char *path = xstrfmt("%s/sub/dir/platform.db", dir);
    exa_error_t err = EXA_ERROR_INIT;
    struct stat sb;
    store_t *st = store_open(path, &err);
    assert_non_null(st);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(scalar_int(st, "PRAGMA user_version"),
                     store_schema_version());
    assert_int_equal(scalar_int(st, "SELECT count(*) FROM sqlite_master "
                                    "WHERE name IN ('jobs','clusters',"
                                    "'audit_events','model_versions')"),
                     4);
    store_close(st);
    /* Re-open is a no-op migration. */
    st = store_open(path, &err);
    assert_non_null(st);
    assert_int_equal(scalar_int(st, "PRAGMA user_version"),
                     store_schema_version());
    store_close(st);
    free(path);
    rm_rf(dir);
    free(dir);
}

/* The last connection's close checkpoints every commit into platform.db
 * and removes the WAL and its index: a reader that ignores the WAL
 * (immutable=1, the read-only fallback) sees every committed row, and the
 * -wal and -shm files a later command creates take the database file's
 * mode then (a database shared read-only after a chmod). */
static void test_close_checkpoints_wal(void **state)
{
    char *dir = tmpdir_path();
    char *path = xstrfmt("%s/platform.db", dir);
    char *wal = xstrfmt("%s-wal", path);
    char *shm = xstrfmt("%s-shm", path);
    char *uri = xstrfmt("file:%s?immutable=1", path);
    exa_error_t err = EXA_ERROR_INIT;
    struct stat sb;
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    for (int round = 0; round < 2; round++) {
        store_t *st = store_open(path, &err);
        assert_non_null(st);
        assert_int_equal(store_exec(st,
                                    round ? "INSERT INTO engine_kv "
                                            "VALUES('k2','v2')"
                                          : "INSERT INTO engine_kv "
                                            "VALUES('k1','v1')",
                                    &err),
                         0);
        assert_int_equal(stat(wal, &sb), 0);
        assert_true(sb.st_size > 0); /* the commit is in the WAL */
        store_close(st);
        assert_int_equal(stat(wal, &sb), -1); /* checkpointed and gone */
        assert_int_equal(stat(shm, &sb), -1);
    }
    assert_int_equal(
        sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM engine_kv",
                                        -1, &stmt, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(stmt, 0), 2);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    free(uri);
    free(shm);
    free(wal);
    free(path);
    rm_rf(dir);
    free(dir);
}

/* Four connections (threads, as in exa serve: the collector and the worker
 * engine) opening one new platform.db at the same moment: each must open
 * it, in WAL mode and migrated. Before set_wal() one of them failed about
 * one time in six with "database is locked" (journal_mode=WAL answers
 * SQLITE_BUSY at once when two connections switch a new file together),
 * and exa serve exited at start-up. */
#define RACERS 4
struct racer {
    pthread_barrier_t *go;
    const char *path;
    int ok;
    char mode[16];
    int version;
};

static void *race_open(void *arg)
{
    struct racer *r = arg;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    pthread_barrier_wait(r->go);
    st = store_open(r->path, &err);
    r->ok = st != NULL;
    if (st) {
        sqlite3_stmt *stmt = store_prepare(st, "PRAGMA journal_mode", NULL);
        if (stmt && sqlite3_step(stmt) == SQLITE_ROW)
            snprintf(r->mode, sizeof(r->mode), "%s",
                     (const char *)sqlite3_column_text(stmt, 0));
        sqlite3_finalize(stmt);
        r->version = scalar_int(st, "PRAGMA user_version");
        store_close(st);
    } else {
        fprintf(stderr, "racer: %s\n", err.text);
    }
    return NULL;
}

static void test_concurrent_first_open(void **state)
{
    char *dir = tmpdir_path();
    (void)state;
    for (int round = 0; round < 40; round++) {
        char *path = xstrfmt("%s/r%d/platform.db", dir, round);
        pthread_barrier_t go;
        pthread_t th[RACERS];
        struct racer r[RACERS];
        pthread_barrier_init(&go, NULL, RACERS);
        for (int i = 0; i < RACERS; i++) {
            memset(&r[i], 0, sizeof(r[i]));
            r[i].go = &go;
            r[i].path = path;
            assert_int_equal(pthread_create(&th[i], NULL, race_open, &r[i]), 0);
        }
        for (int i = 0; i < RACERS; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&go);
        for (int i = 0; i < RACERS; i++) {
            assert_true(r[i].ok);
            assert_string_equal(r[i].mode, "wal");
            assert_int_equal(r[i].version, store_schema_version());
        }
        free(path);
    }
    rm_rf(dir);
    free(dir);
}

static void test_corrupt_db_untouched(void **state)
{
    char *dir = tmpdir_path();
    char *path = xstrfmt("%s/platform.db", dir);
    const char junk[] = "this is not a database, it is a grocery list\n";
    char buf[sizeof(junk)];
    exa_error_t err = EXA_ERROR_INIT;
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, junk, sizeof(junk) - 1), sizeof(junk) - 1);
    close(fd);
    assert_null(store_open(path, &err));
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_non_null(strstr(err.text, "not a usable SQLite database"));
    assert_non_null(strstr(err.text, path));
    fd = open(path, O_RDONLY);
    assert_int_equal(read(fd, buf, sizeof(buf)), sizeof(junk) - 1);
    close(fd);
    assert_memory_equal(buf, junk, sizeof(junk) - 1);
    free(path);
    rm_rf(dir);
    free(dir);
}

static void test_newer_schema_refused(void **state)
{
    char *dir = tmpdir_path();
    char *path = xstrfmt("%s/platform.db", dir);
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = store_open(path, &err);
    assert_non_null(st);
    assert_int_equal(store_exec(st, "PRAGMA user_version = 999", &err), 0);
    store_close(st);
    assert_null(store_open(path, &err));
    assert_non_null(strstr(err.text, "newer than this exa"));
    free(path);
    rm_rf(dir);
    free(dir);
}

static void test_unwritable_dir(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    /* /proc refuses new directories even for root. */
    assert_null(store_open("/proc/exa-nope/platform.db", &err));
    assert_int_equal(err.code, EXA_ECONFIG);
}

static void append(store_t *st, const char *action, const char *target)
{
    exa_error_t err = EXA_ERROR_INIT;
    json_t *d = json_pack("{s:s, s:i}", "reason", "test", "n", 1);
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(audit_append(st, "cli", "alice", action, target, d, &err),
                     0);
    assert_int_equal(store_commit(st, &err), 0);
    json_decref(d);
}

static void test_audit_chain(void **state)
{
    char *dir = tmpdir_path();
    char *path = xstrfmt("%s/platform.db", dir);
    exa_error_t err = EXA_ERROR_INIT;
    long long n = 0, bad = 0;
    store_t *st = store_open(path, &err);
    assert_non_null(st);
    append(st, "cluster.connect", "testa");
    append(st, "cluster.approve", "testa");
    append(st, "cluster.reject", "testa");
    assert_int_equal(audit_verify(st, &n, &bad, &err), 0);
    assert_int_equal(n, 3);

    /* The chain links: event 2's prev_hash is event 1's hash. */
    assert_int_equal(scalar_int(st, "SELECT count(*) FROM audit_events a "
                                    "JOIN audit_events b ON b.id = a.id + 1 "
                                    "WHERE b.prev_hash = a.hash"),
                     2);
    /* Recompute event 1 independently. */
    {
        char hex[65];
        sqlite3_stmt *s = store_prepare(
            st, "SELECT ts, details, hash FROM audit_events WHERE id=1", NULL);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        audit_hash("0000000000000000000000000000000000000000000000000000000"
                   "000000000",
                   (const char *)sqlite3_column_text(s, 0), "cli", "alice",
                   "cluster.connect", "testa",
                   (const char *)sqlite3_column_text(s, 1), hex);
        assert_string_equal(hex, (const char *)sqlite3_column_text(s, 2));
        sqlite3_finalize(s);
    }

    /* Triggers refuse UPDATE and DELETE. */
    assert_int_equal(
        store_exec(st, "UPDATE audit_events SET actor='mallory'", &err), -1);
    assert_non_null(strstr(err.text, "append-only"));
    assert_int_equal(store_exec(st, "DELETE FROM audit_events", &err), -1);
    assert_int_equal(scalar_int(st, "SELECT count(*) FROM audit_events"), 3);

    /* Bypass the trigger (as someone with file access could): detected. */
    assert_int_equal(
        store_exec(st, "DROP TRIGGER audit_events_no_update", &err), 0);
    assert_int_equal(store_exec(st,
                                "UPDATE audit_events SET actor='mallory' "
                                "WHERE id=2",
                                &err),
                     0);
    assert_int_equal(audit_verify(st, &n, &bad, &err), -1);
    assert_int_equal(bad, 2);
    assert_non_null(strstr(err.text, "event 2"));
    store_close(st);
    free(path);
    rm_rf(dir);
    free(dir);
}

static void test_actor(void **state)
{
    char *a;
    unsetenv("EXAMLOPS_ACTOR");
    a = audit_actor();
    assert_true(strlen(a) > 0);
    assert_null(strstr(a, "(as "));
    setenv("EXAMLOPS_ACTOR", "sysadmin-bob", 1);
    free(a);
    a = audit_actor();
    assert_non_null(strstr(a, "(as sysadmin-bob)"));
    free(a);
    unsetenv("EXAMLOPS_ACTOR");
}

/* The hash audit_hash's contract describes, built through json_t (as it
 * was computed before audit_hash wrote the document itself). */
static void reference_hash(const char *prev, const char *ts, const char *source,
                           const char *actor, const char *action,
                           const char *target, const char *details_json,
                           char hex[65])
{
    json_t *o = json_object();
    json_t *d =
        details_json ? json_loads(details_json, JSON_DECODE_ANY, NULL) : NULL;
    struct strbuf sb = STRBUF_INIT;
    char *canon;
    jx_set(o, "action", jx_str(action));
    jx_set(o, "actor", jx_str(actor));
    jx_set(o, "details", d ? d : json_null());
    jx_set(o, "source", jx_str(source));
    jx_set(o, "target", jx_str(target));
    jx_set(o, "ts", jx_str(ts));
    canon = jx_dumps_canonical(o);
    strbuf_addstr(&sb, prev);
    strbuf_addstr(&sb, canon);
    exa_sha256_hex(sb.buf, sb.len, hex);
    free(canon);
    strbuf_release(&sb);
    json_decref(o);
}

static void test_audit_hash_document(void **state)
{
    static const char *const details[] = {
        NULL,
        "{}",
        "{\"from_state\":\"PENDING\",\"host\":\"login5\","
        "\"host_key_fingerprint\":null,\"row_sha256\":\"58dd\",\"state\":"
        "\"ACTIVE\"}",
        "{\"state\":\"ACTIVE\",\"host\":\"x\"}",
        "{\"a\": 1, \"b\": [1, 2.5, {\"z\": \"\\u00e9\"}]}",
        "{\"a\":-0,\"b\":1e3,\"c\":\"\\/\"}",
        "{\"a\":1,\"a\":2}",
        "not json",
        "\"a string\"",
        "42",
        "{\"a\":\"caf\xc3\xa9\",\"b\":\"q\\\"\\n\"}",
    };
    static const char *const actors[] = {"alice", NULL, "q\"b\\\n\x01",
                                         "caf\xc3\xa9", "bad\xff"};
    (void)state;
    for (size_t i = 0; i < sizeof(details) / sizeof(details[0]); i++)
        for (size_t k = 0; k < sizeof(actors) / sizeof(actors[0]); k++) {
            char got[65], want[65];
            audit_hash("abc", "2026-12-02T00:00:00Z", "cli", actors[k],
                       "cluster_approved", k == 2 ? NULL : "testa", details[i],
                       got);
            reference_hash("abc", "2026-12-02T00:00:00Z", "cli", actors[k],
                           "cluster_approved", k == 2 ? NULL : "testa",
                           details[i], want);
            if (strcmp(got, want))
                fail_msg("audit_hash differs for details %s, actor %zu",
                         details[i] ? details[i] : "NULL", k);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_creates_0600_and_migrates),
        cmocka_unit_test(test_concurrent_first_open),
        cmocka_unit_test(test_close_checkpoints_wal),
        cmocka_unit_test(test_corrupt_db_untouched),
        cmocka_unit_test(test_newer_schema_refused),
        cmocka_unit_test(test_unwritable_dir),
        cmocka_unit_test(test_audit_chain),
        cmocka_unit_test(test_audit_hash_document),
        cmocka_unit_test(test_actor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
