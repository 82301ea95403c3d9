/*
 * sha256.c - see sha256.h.
 */
#include "libutil/sha256.h"

#include <nettle/sha2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "libutil/dlib.h"
#include "libutil/error.h"

/* Debian 12's libnettle8 (nettle 3.8); the soname of nettle-dev's -lnettle */
#define DL_NETTLE_LIBRARY "libnettle.so.8"

static struct {
    __typeof__(&nettle_sha256_init) init;
    __typeof__(&nettle_sha256_update) update;
    __typeof__(&nettle_sha256_digest) digest;
} nettle;
static pthread_once_t nettle_once = PTHREAD_ONCE_INIT;

static void nettle_open(void)
{
    /* <nettle/sha2.h> maps the public names onto nettle_-prefixed
     * symbols; those are what dlsym(3) finds */
    static const struct dlib_sym syms[] = {
        DLIB_SYM(nettle, init, nettle_sha256_init),
        DLIB_SYM(nettle, update, nettle_sha256_update),
        DLIB_SYM(nettle, digest, nettle_sha256_digest),
    };
    const char *env = getenv("EXAMLOPS_NETTLE_LIBRARY");
    const struct dlib_spec spec = {
        "libnettle",
        env && *env ? env : DL_NETTLE_LIBRARY,
        "install Debian's libnettle8, or set EXAMLOPS_NETTLE_LIBRARY",
        "nettle 3.4 or later",
        EXA_ECONFIG,
        syms,
        sizeof(syms) / sizeof(syms[0]),
    };
    exa_error_t err = EXA_ERROR_INIT;

    if (dlib_open(&spec, &err) < 0) {
        /* as dl_crypto(): a hash has no error path to report through */
        fprintf(stderr, "exa: error: %s\n", err.text);
        fflush(stdout);
        _Exit(exa_errc_exit(EXA_ECONFIG));
    }
}

void exa_sha256(const void *data, size_t len, unsigned char *out)
{
    struct sha256_ctx ctx;

    pthread_once(&nettle_once, nettle_open);
    nettle.init(&ctx);
    if (len)
        nettle.update(&ctx, len, data);
    nettle.digest(&ctx, EXA_SHA256_LEN, out);
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
