/*
 * throttle.h - the failed-authentication slow-down shared by every front
 * end of `exa serve` that takes tokens (the REST API and console in
 * server/api.c, MCP over HTTP in libmcp/tools.c): one table per process,
 * keyed by the peer address.
 *
 * Only failures are counted and only failures are held back: a valid
 * token or session is never refused, so one client with bad tokens
 * cannot lock out the other users behind the same address (a reverse
 * proxy, a NAT). After `limit` failures from one address within
 * `window_s` seconds, further failures from it are answered 429 with
 * Retry-After for `first_delay_s` (default 1 s), doubling with each
 * failure past the limit up to `max_delay_s`; a failure answered 429 is not
 * audited, which bounds the audit rows one address can write to about limit per
 * window plus one per max_delay_s.
 */
#ifndef EXA_AUTH_THROTTLE_H
#define EXA_AUTH_THROTTLE_H

/* The defaults of `exa serve` (doc/console.md "Tokens and roles"). */
#define AUTH_FAIL_LIMIT 5
#define AUTH_FAIL_WINDOW_S 300
#define AUTH_FAIL_FIRST_DELAY_S 1
#define AUTH_FAIL_MAX_DELAY_S 60
/* Addresses remembered; past that the one that failed longest ago goes. */
#define AUTH_THROTTLE_MAX 4096

struct auth_throttle;

/*
 * A table with limit failures per window_s seconds, then delays of
 * first_delay_s doubling up to max_delay_s (all in seconds; each <= 0:
 * the AUTH_FAIL_* default; a max below the first delay is raised to it).
 * limit < 0 makes a table that never holds anything back (tests,
 * fuzzers). Free with auth_throttle_free. Thread-safe.
 */
struct auth_throttle *auth_throttle_new(int limit, int window_s,
                                        int first_delay_s, int max_delay_s);
/* NULL is accepted. */
void auth_throttle_free(struct auth_throttle *t);

/*
 * Count one failed authentication (a missing, malformed, unknown,
 * expired or revoked token) from addr (NUL-terminated, "" when unknown;
 * cut to 63 bytes). Returns the seconds addr was still held back when it
 * failed (> 0: answer 429 with Retry-After and do not audit it), or 0
 * (answer 401 and audit it). t may be NULL (0).
 */
long auth_throttle_failed(struct auth_throttle *t, const char *addr);

#endif
