/*
 * sha256.c - see sha256.h.
 */
#include "libutil/sha256.h"

#include "libutil/dl_crypto_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_sha256;

static void md_init(void)
{
    dl_crypto()->OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
                                         OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
                                         OPENSSL_INIT_NO_ADD_ALL_DIGESTS |
                                         OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS,
                                     NULL);
    md_sha256 = dl_crypto()->EVP_MD_fetch(NULL, "SHA256", NULL);
}

void exa_sha256(const void *data, size_t len, unsigned char *out)
{
    unsigned int n = 0;

    pthread_once(&md_once, md_init);
    if (!md_sha256 ||
        !dl_crypto()->EVP_Digest(len ? data : "", len, out, &n, md_sha256,
                                 NULL) ||
        n != EXA_SHA256_LEN)
        abort();
}

void exa_sha256_hex(const void *data, size_t len, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char md[EXA_SHA256_LEN];

    exa_sha256(data, len, md);
    for (size_t i = 0; i < EXA_SHA256_LEN; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[2 * EXA_SHA256_LEN] = '\0';
}
