/*
 * dl_crypto.c - libcrypto, dlopen()ed by the first call that needs it
 * (dl_crypto_int.h) instead of linked: linked, its 3,400 symbol bindings
 * and 21,000 relocations were about two thirds of the start-up of every
 * exa command, whether it hashed anything or not.
 */
#include "libutil/dl_crypto_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "libutil/dlib.h"

static struct dl_crypto table;
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static int load_rc; /* -1: dlib_open failed, load_err says why */
static exa_error_t load_err = EXA_ERROR_INIT;

static void crypto_open(void)
{
    static const struct dlib_sym syms[] = {
        DLIB_SYM(table, OPENSSL_init_crypto, OPENSSL_init_crypto),
        DLIB_SYM(table, OPENSSL_cleanse, OPENSSL_cleanse),
        DLIB_SYM(table, CRYPTO_memcmp, CRYPTO_memcmp),
        DLIB_SYM(table, RAND_bytes, RAND_bytes),
        DLIB_SYM(table, EVP_MD_fetch, EVP_MD_fetch),
        DLIB_SYM(table, EVP_sha256, EVP_sha256),
        DLIB_SYM(table, EVP_Digest, EVP_Digest),
        DLIB_SYM(table, EVP_MD_CTX_new, EVP_MD_CTX_new),
        DLIB_SYM(table, EVP_MD_CTX_free, EVP_MD_CTX_free),
        DLIB_SYM(table, EVP_DigestInit_ex, EVP_DigestInit_ex),
        DLIB_SYM(table, EVP_DigestUpdate, EVP_DigestUpdate),
        DLIB_SYM(table, EVP_DigestFinal_ex, EVP_DigestFinal_ex),
        DLIB_SYM(table, EVP_EncodeBlock, EVP_EncodeBlock),
        DLIB_SYM(table, EVP_DecodeBlock, EVP_DecodeBlock),
        DLIB_SYM(table, HMAC, HMAC),
        DLIB_SYM(table, BIO_new_mem_buf, BIO_new_mem_buf),
        DLIB_SYM(table, BIO_free, BIO_free),
        DLIB_SYM(table, PEM_read_bio_X509, PEM_read_bio_X509),
        DLIB_SYM(table, PEM_read_bio_PrivateKey, PEM_read_bio_PrivateKey),
        DLIB_SYM(table, X509_free, X509_free),
        DLIB_SYM(table, X509_get0_pubkey, X509_get0_pubkey),
        DLIB_SYM(table, X509_check_private_key, X509_check_private_key),
        DLIB_SYM(table, i2d_PUBKEY, i2d_PUBKEY),
        DLIB_SYM(table, EVP_PKEY_free, EVP_PKEY_free),
        DLIB_SYM(table, CRYPTO_free, CRYPTO_free),
        DLIB_SYM(table, ERR_clear_error, ERR_clear_error),
    };
    const char *env = getenv("EXAMLOPS_CRYPTO_LIBRARY");
    const struct dlib_spec spec = {
        "libcrypto",
        env && *env ? env : DL_CRYPTO_LIBRARY,
        "install Debian's libssl3, or set EXAMLOPS_CRYPTO_LIBRARY",
        "OpenSSL 3.0 or later",
        EXA_ECONFIG,
        syms,
        sizeof(syms) / sizeof(syms[0]),
    };
    load_rc = dlib_open(&spec, &load_err) < 0 ? -1 : 0;
}

int dl_crypto_load(exa_error_t *err)
{
    pthread_once(&crypto_once, crypto_open);
    if (load_rc < 0) {
        *err = load_err;
        return -1;
    }
    return 0;
}

const struct dl_crypto *dl_crypto(void)
{
    pthread_once(&crypto_once, crypto_open);
    if (load_rc < 0) {
        /* the one exit outside main(): see dl_crypto_int.h */
        fprintf(stderr, "exa: error: %s\n", load_err.text);
        fflush(stdout);
        _Exit(exa_errc_exit(EXA_ECONFIG));
    }
    return &table;
}
