/*
 * sha256.h - SHA-256 (FIPS 180-4) of a buffer, through GNU Nettle
 * (nettle_sha256_init/update/digest, <nettle/sha2.h>; the library
 * GnuTLS hashes with).
 *
 * Nettle rather than libcrypto because of what loading costs: a one-shot
 * hash is what `exa hpc submit`, `hpc place` and every gate check pay for
 * the audit chain (libstore/audit.c), and dlopen(3) of Debian's
 * libcrypto.so.3 (BIND_NOW: 3,000 PLT bindings and 17,000 relocations)
 * plus OpenSSL 3's provider start-up was 4.3 million instructions, 43% of
 * a whole `exa hpc submit`; libnettle.so.8 binds about 200 symbols.
 * libnettle is dlopen()ed by the first call (libutil/dlib.h), so
 * commands that hash nothing do not map it; a missing one ends the
 * process with exit 3 and one line naming the library
 * (EXAMLOPS_NETTLE_LIBRARY overrides the soname). Streaming hashes,
 * HMAC and random draws stay on libcrypto (libutil/dl_crypto_int.h).
 * Thread-safe.
 */
#ifndef EXA_SHA256_H
#define EXA_SHA256_H

#include <stddef.h>

#define EXA_SHA256_LEN 32

/* out (EXA_SHA256_LEN bytes) = SHA-256 of the len bytes at data (data
 * may be NULL when len is 0). Never fails once libnettle is loaded. */
void exa_sha256(const void *data, size_t len, unsigned char *out);

/* hex (2 * EXA_SHA256_LEN + 1 bytes) = lower-case hex SHA-256 of data. */
void exa_sha256_hex(const void *data, size_t len, char *hex);

#endif
