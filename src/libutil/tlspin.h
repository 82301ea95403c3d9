/*
 * tlspin.h - the public-key pin of a TLS certificate (shared/WORKERS.md
 * §5.2): "sha256//" followed by the standard base64 (with padding, 44
 * characters) of the SHA-256 of the DER SubjectPublicKeyInfo of the
 * certificate's key, the form curl's CURLOPT_PINNEDPUBLICKEY takes and
 * what `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der |
 * openssl dgst -sha256 -binary | base64` prints after "sha256//".
 * The certificate is parsed by libcrypto (libutil/dl_crypto_int.h), not
 * by exa.
 */
#ifndef EXA_TLSPIN_H
#define EXA_TLSPIN_H

#include <stddef.h>

#include "libutil/error.h"

/* "sha256//" + 44 base64 characters + NUL */
#define TLSPIN_LEN 53

/*
 * The pin of the first certificate of cert_pem (PEM text, NUL-terminated;
 * a chain's leaf comes first) into out[TLSPIN_LEN]. When key_pem is not
 * NULL it must be the PEM private key of that certificate (checked with
 * X509_check_private_key). name_cert/name_key name the inputs in errors
 * (e.g. "--worker-tls-cert 'cert.pem'"). Returns 0, or -1 with err
 * (EXA_ECONFIG): "<name_cert>: not a PEM certificate", "<name_key>: not
 * a PEM private key", "<name_key>: does not match the certificate", or
 * the libcrypto load failure.
 */
int tlspin_from_pem(const char *cert_pem, const char *key_pem,
                    const char *name_cert, const char *name_key,
                    char out[TLSPIN_LEN], exa_error_t *err);

/*
 * 1 when s is a valid pin list for CURLOPT_PINNEDPUBLICKEY as exa writes
 * it: one or more "sha256//" + 43 base64 characters + "=", separated by
 * ';'; 0 otherwise (NULL, empty, other hashes, file paths, bad lengths).
 */
int tlspin_valid(const char *s);

/* 1 when the pin list s (tlspin_valid) contains pin, else 0. */
int tlspin_list_has(const char *s, const char *pin);

#endif
