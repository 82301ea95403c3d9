/*
 * audit.h - the append-only, hash-chained audit log (audit_events).
 *
 * Each event's hash is hex(SHA-256(prev_hash || canonical)) where
 * canonical is the compact, key-sorted JSON of {"action","actor",
 * "details","source","target","ts"} and prev_hash is the previous event's
 * hash ("" for the first, written as 64 zeros). Triggers refuse UPDATE and
 * DELETE, so a verifier that recomputes the chain detects any edit made
 * by bypassing them (e.g. writing the file directly).
 *
 * The chain's head (audit_head: count, last id, last hash) is written in
 * the same transaction as each event, so deleting the newest events (a
 * tail, which leaves a chain that still links) is detected too.
 */
#ifndef EXA_AUDIT_H
#define EXA_AUDIT_H

#include <jansson.h>

#include "libstore/store.h"

/*
 * Append an event. source ("cli", "serve"), actor (OS user name), action
 * ("cluster.approve"), target (cluster name) are borrowed strings; details
 * is a borrowed JSON object or NULL. Must run inside a transaction the
 * caller began with store_begin() so the chain head cannot race; returns
 * 0 or -1 with err (EXA_ECONFIG).
 */
int audit_append(store_t *st, const char *source, const char *actor,
                 const char *action, const char *target, const json_t *details,
                 exa_error_t *err);

/*
 * audit_append that also copies the new event's hash (64 lower-case hex
 * digits and a NUL) into hash_out when not NULL; the caller binds a row
 * to it (clusters.audit_hash). Same contract otherwise.
 */
int audit_record(store_t *st, const char *source, const char *actor,
                 const char *action, const char *target, const json_t *details,
                 char hash_out[65], exa_error_t *err);

/* One stored event; strings owned (NULL for SQL NULL). */
struct audit_event {
    long long id;
    char *ts; /* "YYYY-MM-DDTHH:MM:SSZ", UTC */
    char *source, *actor, *action, *target;
    char *details; /* canonical JSON text or NULL */
    char *prev_hash, *hash;
};

void audit_event_release(struct audit_event *ev);
void audit_events_free(struct audit_event *v, size_t n);

/*
 * Events in id order, filtered: target (exact, NULL: all) and since (a
 * timestamp compared as text with ts, so "2026-12-01", "2026-12-01T12"
 * and full "2026-12-01T12:00:00Z" all work; NULL: all). *v (free with
 * audit_events_free) and *n. 0 or -1 with err (EXA_ECONFIG).
 */
int audit_list(store_t *st, const char *target, const char *since,
               struct audit_event **v, size_t *n, exa_error_t *err);

/*
 * The newest event whose target is target and whose action starts with
 * prefix (e.g. "cluster_"). Returns 1 and fills *out (release with
 * audit_event_release), 0 when none, -1 with err (EXA_ECONFIG).
 */
int audit_latest(store_t *st, const char *target, const char *prefix,
                 struct audit_event *out, exa_error_t *err);

/*
 * audit_latest(st, NAME, prefix, ...) for every row of the clusters table
 * in one statement: *v holds, in cluster name order (strcmp, as
 * store_cluster_list orders them), the newest event of each cluster that
 * has one (a cluster without one has no entry; an entry's target names
 * its cluster). Free with audit_events_free. 0 or -1 with err
 * (EXA_ECONFIG).
 */
int audit_latest_of_clusters(store_t *st, const char *prefix,
                             struct audit_event **v, size_t *n,
                             exa_error_t *err);

/* 1 when ev's stored hash is the hash of its own fields, else 0. */
int audit_event_intact(const struct audit_event *ev);

/*
 * Recompute the whole chain and compare it with the head. Returns 0 when
 * intact (*count set to the number of events), or -1 with err (EXA_EFAIL)
 * naming the first event whose hash or link does not match (*bad_id set
 * to its id), or saying the head records more events or another last
 * hash than the table holds ("audit chain tail deleted: ..."; *bad_id
 * set to the first missing id). count and bad_id may be NULL.
 */
int audit_verify(store_t *st, long long *count, long long *bad_id,
                 exa_error_t *err);

/*
 * Compute the hash of one event into hex (65 bytes): SHA-256 of prev_hash
 * followed by jx_dumps_canonical() of {"action", "actor", "details" (the
 * JSON value details_json parses to, null when NULL or unparsable),
 * "source", "target", "ts"} (NULL strings as null). The bytes are built
 * directly, details_json copied as is when jx_is_canonical_flat() says it
 * is its own canonical form; the digest is the one the json_t document
 * gives (test_audit compares them). Exposed for tests.
 */
void audit_hash(const char *prev_hash, const char *ts, const char *source,
                const char *actor, const char *action, const char *target,
                const char *details_json, char hex[65]);

/* The actor for audit rows: the OS user of this process (getpwuid). If
 * EXAMLOPS_ACTOR names someone else, returns "osuser (as NAME)". Caller
 * frees. */
char *audit_actor(void);

#endif
