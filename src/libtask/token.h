/*
 * token.h - join tokens, session tokens and the engine's HMAC key
 * (shared/WORKERS.md §5.1).
 *
 * Join token: "exa1.<kid>.<b64url(payload)>.<b64url(mac)>" where mac is
 * HMAC-SHA256(key[kid], "exa-join-v1." || payload) and payload is
 * "w=<worker>&r=<request>&c=<cluster>&p=<profile>&e=<engine>&nbf=<s>
 * &exp=<s>&j=<jti>" in that fixed order (no canonicalisation needed;
 * values are names, "-" for none, times integer Unix seconds).
 * base64url is RFC 4648 §5 without padding. Session token: "exs_" +
 * base64url of 32 random bytes; only its SHA-256 (hex) is stored.
 *
 * The key file (worker-hmac.key next to platform.db, mode 0600) holds
 * lines "<kid> <64 hex digits>"; the last line is the current key.
 */
#ifndef EXA_TASK_TOKEN_H
#define EXA_TASK_TOKEN_H

#include <stddef.h>

#include "libutil/error.h"

#define TOKEN_KEY_MAX 8

struct token_keys {
    size_t n;
    struct {
        char kid[17];
        unsigned char key[32];
    } k[TOKEN_KEY_MAX];
};

/*
 * Read path, creating it (0600, one fresh key "k1") when missing. A file
 * that is group/world readable, or has a bad line, is an error
 * (EXA_ECONFIG naming the file and line).
 */
int token_keys_load(const char *path, struct token_keys *out, exa_error_t *err);
/* Append a new key (kid "k<n+1>") to path and to keys; keeps the old. */
int token_keys_rotate(const char *path, struct token_keys *keys,
                      exa_error_t *err);

/* The path of the key file for database dbpath: "<dir>/worker-hmac.key"
 * (malloc'ed). */
char *token_key_path(const char *dbpath);

struct join_claims {
    char worker_id[129], request_id[129], cluster[129], profile[129];
    char engine_id[17];
    long long nbf, exp;
    char jti[33]; /* 32 hex digits */
};

/* Mint a token for c with the current key; malloc'ed. */
char *token_join_mint(const struct token_keys *keys,
                      const struct join_claims *c);

/* Why a join token was refused (the 401 reasons of §6.2). */
enum token_refusal {
    TOKEN_OK = 0,
    TOKEN_MALFORMED, /* bad_signature on the wire */
    TOKEN_UNKNOWN_KID,
    TOKEN_BAD_SIGNATURE,
    TOKEN_EXPIRED, /* now > exp + skew, or now < nbf - skew */
};
/* Wire word of r: "bad_signature", "unknown_kid", "expired", "ok". */
const char *token_refusal_name(enum token_refusal r);

/*
 * Verify tok (untrusted, any bytes) at time now with skew_s of clock
 * tolerance: format, kid, MAC (constant-time), then nbf/exp. Fills *out
 * only when the MAC matched (also for TOKEN_EXPIRED).
 */
enum token_refusal token_join_verify(const struct token_keys *keys,
                                     const char *tok, double now, double skew_s,
                                     struct join_claims *out);

/* n random bytes from the OS CSPRNG (libcrypto RAND_bytes); aborts when
 * no entropy is available, like xmalloc on no memory. */
void token_random(unsigned char *buf, size_t n);
/* 2n lower-case hex digits of n random bytes into out (2n+1 bytes). */
void token_random_hex(char *out, size_t n);
/* A new session token "exs_..." (malloc'ed). */
char *token_session_new(void);
/* Lower-case hex SHA-256 of s into out (65 bytes). */
void token_sha256_hex(const char *s, size_t len, char out[65]);
/* Constant-time equality of two NUL-terminated strings of equal length;
 * 0 when lengths differ. */
int token_equal(const char *a, const char *b);

#endif
