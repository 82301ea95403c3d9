/*
 * sha256.h - SHA-256 (FIPS 180-4) through libcrypto, without OpenSSL's
 * whole-library start-up.
 *
 * A first EVP_Digest(..., EVP_sha256(), NULL) makes OpenSSL 3 read
 * openssl.cnf, register every cipher and digest name, load its error
 * strings and look for an ENGINE: about 5 million instructions, more than
 * the rest of a short exa command. exa_sha256 initialises libcrypto once
 * with none of that (OPENSSL_init_crypto(3): NO_LOAD_CONFIG,
 * NO_ADD_ALL_CIPHERS, NO_ADD_ALL_DIGESTS, NO_LOAD_CRYPTO_STRINGS) and
 * hashes with an EVP_MD fetched once from the default provider
 * (EVP_MD_fetch(3)), about 0.7 million. libcrypto itself is loaded by
 * the first call (libutil/dl_crypto_int.h: a missing one ends the process
 * with exit 3). Thread-safe.
 */
#ifndef EXA_SHA256_H
#define EXA_SHA256_H

#include <stddef.h>

#define EXA_SHA256_LEN 32

/* out (EXA_SHA256_LEN bytes) = SHA-256 of the len bytes at data (data
 * may be NULL when len is 0). Never fails: an OpenSSL without SHA-256 in
 * its default provider is a broken install, and the process aborts. */
void exa_sha256(const void *data, size_t len, unsigned char *out);

/* hex (2 * EXA_SHA256_LEN + 1 bytes) = lower-case hex SHA-256 of data. */
void exa_sha256_hex(const void *data, size_t len, char *hex);

#endif
