/*
 * audit.c - hash-chained audit events; see audit.h for the chain format.
 */
#include "libstore/audit.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/json.h"
#include "libutil/sha256.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define ZERO_HASH                                                              \
    "0000000000000000000000000000000000000000000000000000000000000000"

void audit_hash(const char *prev_hash, const char *ts, const char *source,
                const char *actor, const char *action, const char *target,
                const char *details_json, char hex[65])
{
    struct strbuf sb = STRBUF_INIT;

    /* prev_hash then the canonical form of {action, actor, details,
     * source, target, ts} (jx_dumps_canonical: keys sorted, compact),
     * written here without a json_t per member; details is re-encoded
     * only when it is not already canonical (audit.h) */
    strbuf_addstr(&sb, prev_hash);
    strbuf_addstr(&sb, "{\"action\":");
    jx_quote(&sb, action);
    strbuf_addstr(&sb, ",\"actor\":");
    jx_quote(&sb, actor);
    strbuf_addstr(&sb, ",\"details\":");
    if (details_json && jx_is_canonical_flat(details_json)) {
        strbuf_addstr(&sb, details_json);
    } else {
        json_t *details = details_json
                              ? json_loads(details_json, JSON_DECODE_ANY, NULL)
                              : NULL;
        char *canon = details ? jx_dumps_canonical(details) : NULL;
        strbuf_addstr(&sb, canon ? canon : "null");
        free(canon);
        json_decref(details);
    }
    strbuf_addstr(&sb, ",\"source\":");
    jx_quote(&sb, source);
    strbuf_addstr(&sb, ",\"target\":");
    jx_quote(&sb, target);
    strbuf_addstr(&sb, ",\"ts\":");
    jx_quote(&sb, ts);
    strbuf_addch(&sb, '}');
    exa_sha256_hex(sb.buf, sb.len, hex);
    strbuf_release(&sb);
}

/* Move the head forward to the event just inserted (same transaction). */
static int head_advance(store_t *st, const char *hex, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "INSERT INTO audit_head (id, count, last_id, last_hash) VALUES "
        "(1, 1, last_insert_rowid(), ?1) ON CONFLICT(id) DO UPDATE SET "
        "count = count + 1, last_id = last_insert_rowid(), last_hash = ?1",
        err);
    int rc = 0;
    if (!stmt)
        return -1;
    store_bind_text(stmt, 1, hex);
    if (sqlite3_step(stmt) != SQLITE_DONE)
        rc = store_err(st, err, "writing audit head");
    sqlite3_finalize(stmt);
    return rc;
}

int audit_append(store_t *st, const char *source, const char *actor,
                 const char *action, const char *target, const json_t *details,
                 exa_error_t *err)
{
    return audit_record(st, source, actor, action, target, details, NULL, err);
}

int audit_record(store_t *st, const char *source, const char *actor,
                 const char *action, const char *target, const json_t *details,
                 char hash_out[65], exa_error_t *err)
{
    sqlite3_stmt *stmt;
    char prev[65], hex[65], ts[32];
    char *details_json = NULL;
    int rc = -1;

    if (sqlite3_get_autocommit(st->db))
        BUG("audit_append outside a transaction");
    xsnprintf(prev, sizeof(prev), "%s", ZERO_HASH);
    stmt = store_prepare(st,
                         "SELECT hash FROM audit_events ORDER BY id DESC "
                         "LIMIT 1",
                         err);
    if (!stmt)
        return -1;
    if (sqlite3_step(stmt) == SQLITE_ROW)
        xsnprintf(prev, sizeof(prev), "%s",
                  (const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);

    store_now(ts, sizeof(ts));
    if (details)
        details_json = jx_dumps_canonical(details);
    audit_hash(prev, ts, source, actor, action, target, details_json, hex);
    stmt = store_prepare(st,
                         "INSERT INTO audit_events (ts, source, actor, "
                         "action, target, details, prev_hash, hash) VALUES "
                         "(?,?,?,?,?,?,?,?)",
                         err);
    if (!stmt)
        goto out;
    store_bind_text(stmt, 1, ts);
    store_bind_text(stmt, 2, source);
    store_bind_text(stmt, 3, actor);
    store_bind_text(stmt, 4, action);
    store_bind_text(stmt, 5, target);
    store_bind_text(stmt, 6, details_json);
    store_bind_text(stmt, 7, prev);
    store_bind_text(stmt, 8, hex);
    if (sqlite3_step(stmt) != SQLITE_DONE) {
        store_err(st, err, "writing audit event");
    } else if (head_advance(st, hex, err) == 0) {
        rc = 0;
        if (hash_out)
            memcpy(hash_out, hex, 65);
    }
    sqlite3_finalize(stmt);
out:
    free(details_json);
    return rc;
}

/*
 * Compare the recomputed chain (n events, the last with id last_id and
 * hash last) with audit_head. A missing head row is only right for an
 * empty log.
 */
static int verify_head(store_t *st, long long n, long long last_id,
                       const char *last, long long *bad_id, exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st, "SELECT count, last_id, last_hash FROM audit_head WHERE id = 1",
        err);
    long long hn = 0, hid = 0;
    char hhash[65] = "";
    int step, rc = 0;
    if (!stmt)
        return -1;
    step = sqlite3_step(stmt);
    if (step == SQLITE_ROW) {
        const unsigned char *h = sqlite3_column_text(stmt, 2);
        hn = sqlite3_column_int64(stmt, 0);
        hid = sqlite3_column_int64(stmt, 1);
        if (h)
            xsnprintf(hhash, sizeof(hhash), "%s", (const char *)h);
    } else if (step != SQLITE_DONE) {
        rc = store_err(st, err, "reading audit head");
    }
    sqlite3_finalize(stmt);
    if (rc < 0)
        return rc;
    if (step == SQLITE_DONE) {
        if (n == 0)
            return 0;
        return exa_err(err, EXA_EFAIL,
                       "audit chain head missing: the table holds %lld "
                       "event(s) but no head records them",
                       n);
    }
    if (hn > n || (hn == n && hid != last_id)) {
        if (bad_id)
            *bad_id = last_id + 1;
        return exa_err(err, EXA_EFAIL,
                       "audit chain tail deleted: the head records %lld "
                       "event(s) up to event %lld, the table holds %lld up "
                       "to event %lld",
                       hn, hid, n, last_id);
    }
    if (hn < n) {
        if (bad_id)
            *bad_id = hid + 1;
        return exa_err(err, EXA_EFAIL,
                       "audit events written behind exa's back: the head "
                       "records %lld event(s) up to event %lld, the table "
                       "holds %lld up to event %lld",
                       hn, hid, n, last_id);
    }
    if (n && strcmp(hhash, last)) {
        if (bad_id)
            *bad_id = last_id;
        return exa_err(err, EXA_EFAIL,
                       "audit chain head does not match: event %lld's hash "
                       "is not the one the head records",
                       last_id);
    }
    return 0;
}

int audit_verify(store_t *st, long long *count, long long *bad_id,
                 exa_error_t *err)
{
    sqlite3_stmt *stmt = store_prepare(
        st,
        "SELECT id, ts, source, actor, action, target, details, prev_hash, "
        "hash FROM audit_events ORDER BY id",
        err);
    char prev[65], hex[65];
    long long n = 0, last_id = 0;
    int rc = 0, step;
    if (!stmt)
        return -1;
    xsnprintf(prev, sizeof(prev), "%s", ZERO_HASH);
    while ((step = sqlite3_step(stmt)) == SQLITE_ROW) {
        long long id = sqlite3_column_int64(stmt, 0);
        const char *c[8];
        for (int i = 0; i < 8; i++)
            c[i] = (const char *)sqlite3_column_text(stmt, i + 1);
        audit_hash(prev, c[0], c[1], c[2], c[3], c[4], c[5], hex);
        if (!c[6] || strcmp(c[6], prev) || !c[7] || strcmp(c[7], hex)) {
            if (bad_id)
                *bad_id = id;
            rc = exa_err(err, EXA_EFAIL, "audit chain broken at event %lld: %s",
                         id,
                         (!c[6] || strcmp(c[6], prev))
                             ? "prev_hash does not link to the previous event"
                             : "hash does not match the event's contents");
            break;
        }
        xsnprintf(prev, sizeof(prev), "%s", c[7]);
        last_id = id;
        n++;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = store_err(st, err, "reading audit events");
    sqlite3_finalize(stmt);
    if (rc == 0)
        rc = verify_head(st, n, last_id, prev, bad_id, err);
    if (rc == 0 && count)
        *count = n;
    return rc;
}

char *audit_actor(void)
{
    struct passwd *pw = getpwuid(geteuid());
    const char *os = pw && pw->pw_name ? pw->pw_name : NULL;
    const char *named = getenv("EXAMLOPS_ACTOR");
    char uidbuf[32];
    if (!os) {
        xsnprintf(uidbuf, sizeof(uidbuf), "uid:%u", (unsigned)geteuid());
        os = uidbuf;
    }
    if (named && *named && strcmp(named, os))
        return xstrfmt("%s (as %s)", os, named);
    return xstrdup(os);
}

/* ---- reading events ---- */

#define EVENT_COLS                                                             \
    "id, ts, source, actor, action, target, details, prev_hash, hash"

static char *col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrdup((const char *)t) : NULL;
}

static void read_event(sqlite3_stmt *s, struct audit_event *ev)
{
    ev->id = sqlite3_column_int64(s, 0);
    ev->ts = col(s, 1);
    ev->source = col(s, 2);
    ev->actor = col(s, 3);
    ev->action = col(s, 4);
    ev->target = col(s, 5);
    ev->details = col(s, 6);
    ev->prev_hash = col(s, 7);
    ev->hash = col(s, 8);
}

void audit_event_release(struct audit_event *ev)
{
    if (!ev)
        return;
    free(ev->ts);
    free(ev->source);
    free(ev->actor);
    free(ev->action);
    free(ev->target);
    free(ev->details);
    free(ev->prev_hash);
    free(ev->hash);
    memset(ev, 0, sizeof(*ev));
}

void audit_events_free(struct audit_event *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        audit_event_release(&v[i]);
    free(v);
}

int audit_list(store_t *st, const char *target, const char *since,
               struct audit_event **v, size_t *n, exa_error_t *err)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT " EVENT_COLS " FROM audit_events WHERE (?1 IS NULL OR "
        "target = ?1) AND (?2 IS NULL OR ts >= ?2) ORDER BY id",
        err);
    struct audit_event *out = NULL;
    size_t nr = 0, alloc = 0;
    int step;
    if (!s)
        return -1;
    store_bind_text(s, 1, target);
    store_bind_text(s, 2, since);
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, nr + 1, alloc);
        memset(&out[nr], 0, sizeof(out[nr]));
        read_event(s, &out[nr++]);
    }
    sqlite3_finalize(s);
    if (step != SQLITE_DONE) {
        audit_events_free(out, nr);
        return store_err(st, err, "listing audit events");
    }
    *v = out;
    *n = nr;
    return 0;
}

int audit_latest(store_t *st, const char *target, const char *prefix,
                 struct audit_event *out, exa_error_t *err)
{
    sqlite3_stmt *s = store_cached(
        st,
        "SELECT " EVENT_COLS " FROM audit_events WHERE target = ?1 AND "
        "substr(action, 1, length(?2)) = ?2 ORDER BY id DESC LIMIT 1",
        err);
    int step, rc;
    if (!s)
        return -1;
    store_bind_text(s, 1, target);
    store_bind_text(s, 2, prefix ? prefix : "");
    step = sqlite3_step(s);
    if (step == SQLITE_ROW) {
        memset(out, 0, sizeof(*out));
        read_event(s, out);
        rc = 1;
    } else if (step == SQLITE_DONE) {
        rc = 0;
    } else {
        rc = store_err(st, err, "reading audit event");
    }
    store_done(st, s);
    return rc;
}

int audit_latest_of_clusters(store_t *st, const char *prefix,
                             struct audit_event **v, size_t *n,
                             exa_error_t *err)
{
    /* per cluster the search audit_latest does (ix_audit_events_target,
     * newest first), as a correlated subquery: one statement, not one
     * bind, step and reset per cluster */
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT e.id, e.ts, e.source, e.actor, e.action, e.target, "
        "e.details, e.prev_hash, e.hash FROM clusters c JOIN audit_events e "
        "ON e.id = (SELECT id FROM audit_events WHERE target = c.name AND "
        "substr(action, 1, length(?1)) = ?1 ORDER BY id DESC LIMIT 1) "
        "ORDER BY c.name",
        err);
    struct audit_event *out = NULL;
    size_t nr = 0, alloc = 0;
    int step;
    if (!s)
        return -1;
    store_bind_text(s, 1, prefix ? prefix : "");
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        ALLOC_GROW(out, nr + 1, alloc);
        memset(&out[nr], 0, sizeof(out[nr]));
        read_event(s, &out[nr++]);
    }
    sqlite3_finalize(s);
    if (step != SQLITE_DONE) {
        audit_events_free(out, nr);
        return store_err(st, err, "reading the clusters' audit events");
    }
    *v = out;
    *n = nr;
    return 0;
}

int audit_event_intact(const struct audit_event *ev)
{
    char hex[65];
    if (!ev->prev_hash || !ev->hash)
        return 0;
    audit_hash(ev->prev_hash, ev->ts, ev->source, ev->actor, ev->action,
               ev->target, ev->details, hex);
    return !strcmp(hex, ev->hash);
}
