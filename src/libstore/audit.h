/*
 * audit.h - the append-only, hash-chained audit log (audit_events).
 *
 * Each event's hash is hex(SHA-256(prev_hash || canonical)) where
 * canonical is the compact, key-sorted JSON of {"action","actor",
 * "details","source","target","ts"} and prev_hash is the previous event's
 * hash ("" for the first, written as 64 zeros). Triggers refuse UPDATE and
 * DELETE, so a verifier that recomputes the chain detects any edit made
 * by bypassing them (e.g. writing the file directly).
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
                 const char *action, const char *target,
                 const json_t *details, exa_error_t *err);

/*
 * Recompute the whole chain. Returns 0 when intact (*count set to the
 * number of events), or -1 with err (EXA_EFAIL) naming the first event
 * whose hash or link does not match; *bad_id is set to its id.
 */
int audit_verify(store_t *st, long long *count, long long *bad_id,
                 exa_error_t *err);

/* Compute the hash of one event into hex (65 bytes). Exposed for tests. */
void audit_hash(const char *prev_hash, const char *ts, const char *source,
                const char *actor, const char *action, const char *target,
                const char *details_json, char hex[65]);

/* The actor for audit rows: the OS user of this process (getpwuid). If
 * EXAMLOPS_ACTOR names someone else, returns "osuser (as NAME)". Caller
 * frees. */
char *audit_actor(void);

#endif
