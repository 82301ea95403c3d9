/*
 * audit.c - hash-chained audit events; see audit.h for the chain format.
 */
#include "libstore/audit.h"

#include <openssl/evp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define ZERO_HASH                                                           \
    "0000000000000000000000000000000000000000000000000000000000000000"

void audit_hash(const char *prev_hash, const char *ts, const char *source,
                const char *actor, const char *action, const char *target,
                const char *details_json, char hex[65])
{
    json_t *o = json_object();
    json_t *details = NULL;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char *canon;
    struct strbuf sb = STRBUF_INIT;

    if (details_json)
        details = json_loads(details_json, JSON_DECODE_ANY, NULL);
    jx_set(o, "action", jx_str(action));
    jx_set(o, "actor", jx_str(actor));
    jx_set(o, "details", details ? details : json_null());
    jx_set(o, "source", jx_str(source));
    jx_set(o, "target", jx_str(target));
    jx_set(o, "ts", jx_str(ts));
    canon = jx_dumps_canonical(o);
    strbuf_addstr(&sb, prev_hash);
    strbuf_addstr(&sb, canon);
    EVP_Digest(sb.buf, sb.len, md, &mdlen, EVP_sha256(), NULL);
    for (unsigned int i = 0; i < mdlen && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[64] = '\0';
    free(canon);
    strbuf_release(&sb);
    json_decref(o);
}

int audit_append(store_t *st, const char *source, const char *actor,
                 const char *action, const char *target,
                 const json_t *details, exa_error_t *err)
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
                         "LIMIT 1", err);
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
                         "(?,?,?,?,?,?,?,?)", err);
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
    if (sqlite3_step(stmt) != SQLITE_DONE)
        store_err(st, err, "writing audit event");
    else
        rc = 0;
    sqlite3_finalize(stmt);
out:
    free(details_json);
    return rc;
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
    long long n = 0;
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
            rc = exa_err(err, EXA_EFAIL,
                         "audit chain broken at event %lld: %s", id,
                         (!c[6] || strcmp(c[6], prev))
                             ? "prev_hash does not link to the previous event"
                             : "hash does not match the event's contents");
            break;
        }
        xsnprintf(prev, sizeof(prev), "%s", c[7]);
        n++;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = store_err(st, err, "reading audit events");
    sqlite3_finalize(stmt);
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
