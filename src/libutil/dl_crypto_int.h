/*
 * dl_crypto_int.h - the libcrypto (OpenSSL 3) functions exa calls,
 * loaded at run time (libutil/dlib.h) by the first call, so that the
 * commands that hash, sign or draw no random bytes (`exa --version`,
 * `exa hpc jobs`, `exa hpc status`, ...) never map and relocate
 * libcrypto, two thirds of what the dynamic loader did for them.
 *
 * Private to libexa (not installed): it needs the OpenSSL headers, which
 * exa.pc does not promise. Each field has the name and the type of the
 * function it holds (__typeof__(&fn)), so a call reads
 * `dl_crypto()->RAND_bytes(buf, n)` and is checked as a direct call is.
 */
#ifndef EXA_DL_CRYPTO_INT_H
#define EXA_DL_CRYPTO_INT_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/rand.h>

#include "libutil/error.h"

/* libcrypto's soname (Debian's libssl3), the default of
 * EXAMLOPS_CRYPTO_LIBRARY. */
#define DL_CRYPTO_LIBRARY "libcrypto.so.3"

struct dl_crypto {
    __typeof__(&OPENSSL_init_crypto) OPENSSL_init_crypto;
    __typeof__(&OPENSSL_cleanse) OPENSSL_cleanse;
    __typeof__(&CRYPTO_memcmp) CRYPTO_memcmp;
    __typeof__(&RAND_bytes) RAND_bytes;
    __typeof__(&EVP_MD_fetch) EVP_MD_fetch;
    __typeof__(&EVP_sha256) EVP_sha256;
    __typeof__(&EVP_Digest) EVP_Digest;
    __typeof__(&EVP_MD_CTX_new) EVP_MD_CTX_new;
    __typeof__(&EVP_MD_CTX_free) EVP_MD_CTX_free;
    __typeof__(&EVP_DigestInit_ex) EVP_DigestInit_ex;
    __typeof__(&EVP_DigestUpdate) EVP_DigestUpdate;
    __typeof__(&EVP_DigestFinal_ex) EVP_DigestFinal_ex;
    __typeof__(&EVP_EncodeBlock) EVP_EncodeBlock;
    __typeof__(&EVP_DecodeBlock) EVP_DecodeBlock;
    __typeof__(&HMAC) HMAC;
    /* libutil/tlspin.c: the certificate's key and its pin */
    __typeof__(&BIO_new_mem_buf) BIO_new_mem_buf;
    __typeof__(&BIO_free) BIO_free;
    __typeof__(&PEM_read_bio_X509) PEM_read_bio_X509;
    __typeof__(&PEM_read_bio_PrivateKey) PEM_read_bio_PrivateKey;
    __typeof__(&X509_free) X509_free;
    __typeof__(&X509_get0_pubkey) X509_get0_pubkey;
    __typeof__(&X509_check_private_key) X509_check_private_key;
    __typeof__(&i2d_PUBKEY) i2d_PUBKEY;
    __typeof__(&EVP_PKEY_free) EVP_PKEY_free;
    __typeof__(&CRYPTO_free) CRYPTO_free;
    __typeof__(&ERR_clear_error) ERR_clear_error;
};

/*
 * The table, loading libcrypto on the first call (pthread_once;
 * thread-safe) from EXAMLOPS_CRYPTO_LIBRARY when set, else
 * DL_CRYPTO_LIBRARY. Never NULL: libcrypto is a dependency of the exa
 * package, as libc is, and a call site that hashes or compares a token
 * has no way to go on without it. When it cannot be loaded the process
 * ends as it did when libcrypto was linked and the dynamic loader missed
 * it, though in exa's form: one line on stderr, "exa: error: cannot load
 * libcrypto library 'NAME': <dlerror> (install Debian's libssl3)", and
 * exit status 3 (configuration).
 */
const struct dl_crypto *dl_crypto(void);

/*
 * Load libcrypto now (the same once as dl_crypto()): 0, or -1 with err
 * (EXA_ECONFIG, the text dl_crypto() would print) when it cannot be
 * loaded. A long-running process (exa serve, exa worker) calls it at
 * start-up so that the load, its file system reads and its failure happen
 * in main() before any thread, never lazily inside a request thread.
 */
int dl_crypto_load(exa_error_t *err);

#endif
