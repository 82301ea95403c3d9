/*
 * tlspin.c - the public-key pin of a certificate (tlspin.h), with
 * libcrypto through dl_crypto_int.h.
 */
#include "libutil/tlspin.h"

#include <string.h>

#include "libutil/dl_crypto_int.h"

int tlspin_from_pem(const char *cert_pem, const char *key_pem,
                    const char *name_cert, const char *name_key,
                    char out[TLSPIN_LEN], exa_error_t *err)
{
    const struct dl_crypto *c;
    BIO *b;
    X509 *x;
    EVP_PKEY *pk, *priv = NULL;
    unsigned char *der = NULL, md[32];
    unsigned int mdlen = 0;
    int len, rc = -1;
    if (dl_crypto_load(err) < 0)
        return -1;
    c = dl_crypto();
    if (!(b = c->BIO_new_mem_buf(cert_pem, -1)))
        return exa_err(err, EXA_ECONFIG, "%s: out of memory", name_cert);
    x = c->PEM_read_bio_X509(b, NULL, NULL, NULL);
    c->BIO_free(b);
    if (!x) {
        c->ERR_clear_error();
        return exa_err(err, EXA_ECONFIG, "%s: not a PEM certificate",
                       name_cert);
    }
    if (key_pem) {
        if (!(b = c->BIO_new_mem_buf(key_pem, -1))) {
            exa_err(err, EXA_ECONFIG, "%s: out of memory", name_key);
            goto out;
        }
        /* no pass phrase callback: an encrypted key fails here */
        priv = c->PEM_read_bio_PrivateKey(b, NULL, NULL, (void *)"");
        c->BIO_free(b);
        if (!priv) {
            exa_err(err, EXA_ECONFIG,
                    "%s: not a PEM private key (or it is encrypted)", name_key);
            goto out;
        }
        if (c->X509_check_private_key(x, priv) != 1) {
            exa_err(err, EXA_ECONFIG, "%s: does not match the certificate %s",
                    name_key, name_cert);
            goto out;
        }
    }
    if (!(pk = c->X509_get0_pubkey(x)) ||
        (len = c->i2d_PUBKEY(pk, &der)) <= 0) {
        exa_err(err, EXA_ECONFIG,
                "%s: the certificate's public key cannot "
                "be encoded",
                name_cert);
        goto out;
    }
    if (c->EVP_Digest(der, (size_t)len, md, &mdlen, c->EVP_sha256(), NULL) !=
            1 ||
        mdlen != sizeof(md)) {
        exa_err(err, EXA_ECONFIG, "%s: SHA-256 failed", name_cert);
        goto out;
    }
    memcpy(out, "sha256//", 8);
    /* 32 bytes -> 44 characters and a NUL */
    c->EVP_EncodeBlock((unsigned char *)out + 8, md, (int)sizeof(md));
    out[TLSPIN_LEN - 1] = '\0';
    rc = 0;
out:
    c->ERR_clear_error();
    if (der)
        c->CRYPTO_free(der, __FILE__, __LINE__);
    if (priv)
        c->EVP_PKEY_free(priv);
    c->X509_free(x);
    return rc;
}

static int b64c(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
           (ch >= '0' && ch <= '9') || ch == '+' || ch == '/';
}

int tlspin_valid(const char *s)
{
    if (!s || !*s)
        return 0;
    for (;;) {
        if (strncmp(s, "sha256//", 8))
            return 0;
        s += 8;
        for (int i = 0; i < 43; i++, s++)
            if (!b64c(*s))
                return 0;
        if (*s++ != '=')
            return 0;
        if (!*s)
            return 1;
        if (*s++ != ';')
            return 0;
    }
}

int tlspin_list_has(const char *s, const char *pin)
{
    size_t n = strlen(pin);
    while (s && *s) {
        const char *e = strchr(s, ';');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == n && !memcmp(s, pin, n))
            return 1;
        s = e ? e + 1 : NULL;
    }
    return 0;
}
