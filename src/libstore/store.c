/*
 * store.c - opening platform.db and migrating its schema.
 *
 * Migrations are an append-only array (migrations.c): migration i
 * (1-based) moves the schema from user_version i-1 to i inside one
 * IMMEDIATE transaction, so a crash mid-migration leaves the previous
 * version intact. Never edit a shipped migration; add the next one.
 */
#include "libstore/store.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libstore/migrations.h"
#include "libstore/nodes.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define NMIGRATIONS ((int)store_nmigrations)

int store_schema_version(void)
{
    return NMIGRATIONS;
}

/* The default path, ignoring EXAMLOPS_DB; NULL when HOME is unset too. */
static char *xdg_default_path(void)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        return xstrfmt("%s/examlops/platform.db", xdg);
    if (home && *home)
        return xstrfmt("%s/.local/share/examlops/platform.db", home);
    return NULL;
}

char *store_default_path(exa_error_t *err)
{
    const char *e = getenv("EXAMLOPS_DB");
    char *p;
    if (e && *e)
        return xstrdup(e);
    if ((p = xdg_default_path()))
        return p;
    exa_err(err, EXA_ECONFIG,
            "cannot locate platform.db: set EXAMLOPS_DB or HOME");
    return NULL;
}

/* mkdir -p for the parent directory of path, mode 0700 for new ones. */
static int mkdir_parents(const char *path, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = 0;
    strbuf_addstr(&sb, path);
    char *slash = strrchr(sb.buf, '/');
    if (!slash || slash == sb.buf)
        goto out;
    *slash = '\0';
    for (char *p = sb.buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(sb.buf, 0700) && errno != EEXIST) {
            rc = exa_err(err, EXA_ECONFIG, "cannot create directory '%s': %s",
                         sb.buf, strerror(errno));
            goto out;
        }
        *p = '/';
    }
    if (mkdir(sb.buf, 0700) && errno != EEXIST)
        rc = exa_err(err, EXA_ECONFIG, "cannot create directory '%s': %s",
                     sb.buf, strerror(errno));
out:
    strbuf_release(&sb);
    return rc;
}

/* Said after a failed statement on a read-only store. */
static const char *ro_note(const store_t *st)
{
    return st->readonly ? " (opened read-only: this user cannot write it)" : "";
}

int store_err(store_t *st, exa_error_t *err, const char *what)
{
    return exa_err(err, EXA_ECONFIG, "database '%s': %s: %s%s", st->path, what,
                   sqlite3_errmsg(st->db), ro_note(st));
}

int store_exec(store_t *st, const char *sql, exa_error_t *err)
{
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        exa_err(err, EXA_ECONFIG, "database '%s': %s%s", st->path,
                msg ? msg : sqlite3_errmsg(st->db), ro_note(st));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

sqlite3_stmt *store_prepare(store_t *st, const char *sql, exa_error_t *err)
{
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &stmt, NULL) != SQLITE_OK) {
        store_err(st, err, "prepare");
        return NULL;
    }
    return stmt;
}

sqlite3_stmt *store_cached(store_t *st, const char *sql, exa_error_t *err)
{
    sqlite3_stmt *stmt;
    for (size_t i = 0; i < st->ncache; i++)
        if (st->cache[i].sql == sql || !strcmp(st->cache[i].sql, sql)) {
            sqlite3_reset(st->cache[i].stmt);
            sqlite3_clear_bindings(st->cache[i].stmt);
            return st->cache[i].stmt;
        }
    if (!(stmt = store_prepare(st, sql, err)))
        return NULL;
    if (st->ncache < STORE_STMT_CACHE) {
        st->cache[st->ncache].sql = sql;
        st->cache[st->ncache++].stmt = stmt;
    }
    return stmt;
}

void store_done(store_t *st, sqlite3_stmt *stmt)
{
    if (!stmt)
        return;
    for (size_t i = 0; i < st->ncache; i++)
        if (st->cache[i].stmt == stmt) {
            sqlite3_reset(stmt);
            sqlite3_clear_bindings(stmt);
            return;
        }
    sqlite3_finalize(stmt);
}

int store_begin(store_t *st, exa_error_t *err)
{
    return store_exec(st, "BEGIN IMMEDIATE", err);
}

int store_begin_read(store_t *st, exa_error_t *err)
{
    return store_exec(st, "BEGIN DEFERRED", err);
}

int store_commit(store_t *st, exa_error_t *err)
{
    return store_exec(st, "COMMIT", err);
}

int store_in_transaction(store_t *st)
{
    return !sqlite3_get_autocommit(st->db);
}

void store_rollback(store_t *st)
{
    if (!sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_bind_text(sqlite3_stmt *stmt, int idx, const char *s)
{
    if (!s)
        return sqlite3_bind_null(stmt, idx);
    return sqlite3_bind_text(stmt, idx, s, -1, SQLITE_TRANSIENT);
}

void store_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int user_version(store_t *st, int *out, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(st, "PRAGMA user_version", err);
    int rc;
    if (!stmt)
        return -1;
    rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) {
        store_err(st, err, "reading schema version");
        sqlite3_finalize(stmt);
        return -1;
    }
    *out = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    return 0;
}

static int migrate(store_t *st, exa_error_t *err)
{
    int v;
    if (user_version(st, &v, err) < 0)
        return -1;
    if (v > NMIGRATIONS)
        return exa_err(err, EXA_ECONFIG,
                       "database '%s' has schema version %d, newer than this "
                       "exa (%d); upgrade exa",
                       st->path, v, NMIGRATIONS);
    while (v < NMIGRATIONS) {
        char pragma[64];
        if (store_begin(st, err) < 0)
            return -1;
        /* Re-read under the write lock: another process may have won. */
        if (user_version(st, &v, err) < 0)
            goto fail;
        if (v >= NMIGRATIONS) {
            store_rollback(st);
            break;
        }
        if (store_exec(st, store_migrations[v], err) < 0)
            goto fail;
        /* 12: the summary texts of the clusters there are, in the same
         * transaction (written by C: the text's order is the key order);
         * 14: again, with each row's partitions list */
        if ((v + 1 == 12 || v + 1 == 14) &&
            store_cluster_summaries_rebuild(st, err) < 0)
            goto fail;
        xsnprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
        if (store_exec(st, pragma, err) < 0 || store_commit(st, err) < 0)
            goto fail;
        v++;
    }
    return 0;
fail:
    store_rollback(st);
    exa_err_prefix(err, "migrating schema to version %d", v + 1);
    return -1;
}

/* The directory part of path ("." when none); caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

/* EXAMLOPS_DB names a path other than the default: its directory must
 * exist. 0, or -1 with err. */
static int check_env_dir(const char *p, exa_error_t *err)
{
    const char *env = getenv("EXAMLOPS_DB");
    char *def, *dir;
    struct stat sb;
    int rc = 0;
    if (!env || !*env || strcmp(env, p))
        return 0;
    def = xdg_default_path();
    if (def && !strcmp(def, p)) {
        free(def);
        return 0;
    }
    free(def);
    dir = dir_of(p);
    if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
        rc = exa_err(err, EXA_ECONFIG,
                     "database directory '%s' does not exist "
                     "(EXAMLOPS_DB='%s'): create it, or unset EXAMLOPS_DB "
                     "for the default path",
                     dir, env);
    free(dir);
    return rc;
}

/* "file:" URI of path with query (sqlite.org/uri.html): every byte but
 * unreserved ones and '/' percent-encoded. Caller frees. */
static char *file_uri(const char *path, const char *query)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if (isalnum(*c) || strchr("/._-~", *c))
            strbuf_addch(&sb, *c);
        else
            strbuf_addf(&sb, "%%%02X", *c);
    }
    strbuf_addf(&sb, "?%s", query);
    return strbuf_detach(&sb, NULL);
}

/* Open the existing database at p (taken) read-only; NULL with err. */
static store_t *open_readonly(char *p, exa_error_t *err)
{
    static const char *const modes[] = {"mode=ro", "immutable=1"};
    store_t *st = xcalloc(1, sizeof(*st));
    st->path = p;
    st->readonly = 1;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        char *uri = file_uri(p, modes[i]);
        int v = -1, ok;
        exa_error_t e = EXA_ERROR_INIT;
        ok = sqlite3_open_v2(uri, &st->db,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                             NULL) == SQLITE_OK &&
             user_version(st, &v, &e) == 0;
        free(uri);
        if (!ok) {
            sqlite3_close(st->db);
            st->db = NULL;
            continue;
        }
        sqlite3_busy_timeout(st->db, 10000);
        sqlite3_extended_result_codes(st->db, 1);
        if (v != NMIGRATIONS) {
            exa_err(err, EXA_ECONFIG,
                    "database '%s' is read-only for this user and at schema "
                    "version %d; this exa needs %d (open it once with write "
                    "access to migrate it)",
                    p, v, NMIGRATIONS);
            goto fail;
        }
        return st;
    }
    exa_err(err, EXA_ECONFIG,
            "database '%s' is not writable by this user and cannot be read "
            "either",
            p);
fail:
    store_close(st);
    return NULL;
}

/*
 * PRAGMA journal_mode=WAL, retried while the database is busy, for up to
 * the 10 s of the busy timeout. Turning a new database into WAL mode needs
 * its exclusive lock, and when two connections do it at once (exa serve's
 * collector thread and its worker engine on a fresh platform.db, or two
 * commands started together) SQLite answers SQLITE_BUSY at once instead of
 * calling the busy handler, since waiting could deadlock
 * (https://www.sqlite.org/wal.html#concurrency and sqlite3_busy_handler(3):
 * "the busy handler is not invoked ... if it would deadlock"). The
 * statement has ended when sqlite3_exec returns, so this connection holds
 * no lock while it sleeps and the other one can finish.
 */
static int set_wal(store_t *st, exa_error_t *err)
{
    struct timespec pause = {0, 10 * 1000 * 1000}, start, now; /* 10 ms */
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int rc =
            sqlite3_exec(st->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
            now.tv_sec - start.tv_sec >= 10)
            return store_err(st, err, "setting journal_mode=WAL");
        nanosleep(&pause, NULL);
    }
}

store_t *store_open(const char *path, exa_error_t *err)
{
    store_t *st;
    char *p = path ? xstrdup(path) : store_default_path(err);
    int fd;
    if (!p)
        return NULL;
    if (!path && check_env_dir(p, err) < 0) {
        free(p);
        return NULL;
    }
    if (mkdir_parents(p, err) < 0) {
        free(p);
        return NULL;
    }
    /* Readable but not writable (the file, or the directory SQLite's
     * -wal/-shm files live in): read-only, never an error for reads. */
    if (access(p, R_OK) == 0) {
        char *dir = dir_of(p);
        int ro = access(p, W_OK) < 0 || access(dir, W_OK) < 0;
        free(dir);
        if (ro)
            return open_readonly(p, err);
    }
    /*
     * Create 0600 ourselves (SQLite would use the umask), and only a file
     * that does not exist yet: close() of any descriptor of the database
     * drops every POSIX lock this process holds on it (fcntl(2)), so
     * opening an existing file here while another connection of the same
     * process (exa serve's threads) is open would let a second process
     * believe it is alone, checkpoint and delete the WAL under that
     * connection, and its later commits would be lost.
     */
    fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
        exa_err(err, EXA_ECONFIG, "cannot open database '%s': %s", p,
                strerror(errno));
        free(p);
        return NULL;
    }
    if (fd >= 0)
        close(fd);
    st = xcalloc(1, sizeof(*st));
    st->path = p;
    if (sqlite3_open_v2(p, &st->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        store_err(st, err, "open");
        goto fail;
    }
    sqlite3_busy_timeout(st->db, 10000);
    sqlite3_extended_result_codes(st->db, 1);
    /* A corrupt or foreign file fails here, before anything is written. */
    {
        sqlite3_stmt *stmt = NULL;
        if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM sqlite_master", -1,
                               &stmt, NULL) != SQLITE_OK ||
            sqlite3_step(stmt) != SQLITE_ROW) {
            exa_err(err, EXA_ECONFIG,
                    "database '%s' is not a usable SQLite database (%s); "
                    "it was left untouched",
                    p, sqlite3_errmsg(st->db));
            sqlite3_finalize(stmt);
            goto fail;
        }
        sqlite3_finalize(stmt);
    }
    if (set_wal(st, err) < 0 ||
        store_exec(st, "PRAGMA foreign_keys=ON", err) < 0 ||
        store_exec(st, "PRAGMA synchronous=NORMAL", err) < 0 ||
        /* exa serve's connections never close: a WAL a large
         * transaction grew is cut back to 4 MiB when it restarts
         * (https://www.sqlite.org/pragma.html#pragma_journal_size_limit) */
        store_exec(st, "PRAGMA journal_size_limit=4194304", err) < 0 ||
        /* a row INSERT OR REPLACE replaces fires its DELETE triggers
         * (the node summary's, migration 7) only with this on */
        store_exec(st, "PRAGMA recursive_triggers=ON", err) < 0)
        goto fail;
    if (migrate(st, err) < 0)
        goto fail;
    return st;
fail:
    store_close(st);
    return NULL;
}

void store_close(store_t *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->ncache; i++)
        sqlite3_finalize(st->cache[i].stmt);
    if (st->db)
        sqlite3_close(st->db);
    free(st->path);
    free(st);
}
