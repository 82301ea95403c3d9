/*
 * store.h - platform.db, the embedded SQLite store (doc/design.md §4).
 *
 * One file, opened in WAL mode with a busy timeout and foreign keys on, so
 * the CLI and `exa serve` can use it at once. The schema is created and
 * upgraded by numbered migrations tracked in PRAGMA user_version; each
 * migration runs in one transaction. A file that is not a SQLite database
 * (or a newer schema than this binary knows) is an error and is never
 * overwritten.
 *
 * Typed accessors live in one file per table next to this one (clusters.c,
 * jobs.c, nodes.c, models.c, audit.c, hostkeys.c, finops.c, tasks.c,
 * tokens.c).
 */
#ifndef EXA_STORE_H
#define EXA_STORE_H

#include <stddef.h>

#include <sqlite3.h>

#include "libutil/error.h"

/* Statements store_cached() keeps prepared per connection. */
#define STORE_STMT_CACHE 32

struct store {
    sqlite3 *db;
    char *path;
    int readonly; /* opened read-only: the file or its directory is not
                   * writable by this user (store_open()) */
    struct {
        const char *sql; /* the caller's string (a literal), compared
                            by address, then by content */
        sqlite3_stmt *stmt;
    } cache[STORE_STMT_CACHE];
    size_t ncache;
};
typedef struct store store_t;

/*
 * Resolve the database path: $EXAMLOPS_DB, else
 * ${XDG_DATA_HOME:-$HOME/.local/share}/examlops/platform.db. Returns a
 * malloc'ed path (caller frees) or NULL with err set (EXA_ECONFIG) when
 * neither HOME nor XDG_DATA_HOME is set.
 */
char *store_default_path(exa_error_t *err);

/*
 * Open (creating it 0600, and its directory 0700, if missing) and migrate
 * the database at path (NULL: store_default_path()). Returns a handle the
 * caller frees with store_close(), or NULL with err set: EXA_ECONFIG for an
 * unwritable directory, a corrupt or foreign file, or a schema newer than
 * this binary.
 *
 * Rules (doc/store.md):
 * - With path NULL and EXAMLOPS_DB set to anything but the default path,
 *   the database's directory must exist: a missing one is EXA_ECONFIG
 *   "database directory 'D' does not exist (EXAMLOPS_DB='P') ..." and
 *   nothing is created, so a mistyped variable never makes a new, empty
 *   database. The default path's directories are created (0700).
 * - An existing database that this user may read but not write (the
 *   file, or its directory for SQLite's -wal/-shm files) is opened
 *   read-only (st->readonly): reads work, and a write fails with
 *   EXA_ECONFIG naming the read-only file. It is opened with
 *   "mode=ro", else "immutable=1" (sqlite.org/uri.html) when its WAL
 *   index cannot be created; it must already be at this binary's schema
 *   version (nothing can be migrated).
 */
store_t *store_open(const char *path, exa_error_t *err);
/* Close the handle and free it; NULL is accepted. */
void store_close(store_t *st);

/* Current schema version this binary migrates to. */
int store_schema_version(void);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK; 0 or -1 with err (EXA_ECONFIG). */
int store_begin(store_t *st, exa_error_t *err);
int store_commit(store_t *st, exa_error_t *err);
void store_rollback(store_t *st);
/* BEGIN DEFERRED: a read transaction, one snapshot for the reads until
 * store_commit() or store_rollback(), no lock taken for writing (each
 * statement outside a transaction opens and closes one of its own: file
 * locks and a stat per statement). 0 or -1 with err. */
int store_begin_read(store_t *st, exa_error_t *err);

/*
 * 1 when st is inside a transaction (BEGIN without COMMIT or ROLLBACK
 * yet), else 0. A long-lived handle (exa serve's) checks it after each
 * request, so a transaction left open by mistake cannot hide later
 * writes from other processes.
 */
int store_in_transaction(store_t *st);

/* Run SQL with no result rows; 0 or -1 with err naming the statement. */
int store_exec(store_t *st, const char *sql, exa_error_t *err);

/*
 * Prepare sql; returns the statement (caller sqlite3_finalize()s) or NULL
 * with err (EXA_ECONFIG, "database 'path': <sqlite message>").
 */
sqlite3_stmt *store_prepare(store_t *st, const char *sql, exa_error_t *err);

/*
 * store_prepare() for a statement run again and again (a lookup per
 * cluster, per event): the first call prepares sql and keeps the
 * statement in st's cache (STORE_STMT_CACHE of them, finalized by
 * store_close()); later calls with the same sql get it back reset, its
 * bindings cleared. sql must outlive st (a string literal). The caller
 * never finalizes it: store_done() when finished, on every path, so that
 * no read transaction stays open. NULL with err as store_prepare().
 * Not for a statement whose stepping calls code that may use the same
 * sql again (it would be reset under it).
 */
sqlite3_stmt *store_cached(store_t *st, const char *sql, exa_error_t *err);

/* Reset a store_cached() statement (or finalize one the full cache did
 * not keep). NULL is accepted. */
void store_done(store_t *st, sqlite3_stmt *stmt);

/* Fill err from the connection's last error, prefixed by what; -1. */
int store_err(store_t *st, exa_error_t *err, const char *what);

/* Bind helper: NULL s binds SQL NULL. */
int store_bind_text(sqlite3_stmt *stmt, int idx, const char *s);

/* Current UTC time as ISO-8601 "YYYY-MM-DDTHH:MM:SSZ" into buf (>= 32). */
void store_now(char *buf, size_t n);

#endif
