/*
 * fuzz_tlspin.c - libFuzzer target for the pin checks of libutil/tlspin.h:
 * tlspin_valid (the --pin / provisioners.json "pin" syntax) and
 * tlspin_list_has on any bytes, and tlspin_from_pem on the same bytes as
 * a PEM certificate (libcrypto parses it). A list tlspin_valid accepts
 * must contain its own first pin; a pin tlspin_from_pem returns must be
 * valid and NUL-terminated at TLSPIN_LEN - 1.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/tlspin.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = xmalloc(size + 1), out[TLSPIN_LEN];
    exa_error_t err = EXA_ERROR_INIT;
    memcpy(s, data, size);
    s[size] = '\0';
    if (tlspin_valid(s)) {
        char first[TLSPIN_LEN];
        memcpy(first, s, TLSPIN_LEN - 1);
        first[TLSPIN_LEN - 1] = '\0';
        if (!tlspin_list_has(s, first))
            __builtin_trap();
    }
    if (tlspin_from_pem(s, NULL, "cert", "key", out, &err) == 0 &&
        (strlen(out) != TLSPIN_LEN - 1 || !tlspin_valid(out)))
        __builtin_trap();
    free(s);
    return 0;
}
