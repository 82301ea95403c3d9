/*
 * dl_mhd.c - libmicrohttpd, dlopen()ed by the first HTTP listener
 * (dl_mhd.h) instead of linked: linked, it and GnuTLS's chain (nettle,
 * p11-kit, libtasn1, libidn2, ...) were mapped and relocated by every exa
 * command.
 */
#include "server/dl_mhd.h"

#include <pthread.h>
#include <stdlib.h>

#include "libutil/dlib.h"

struct dl_mhd dl_mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static exa_error_t mhd_error = EXA_ERROR_INIT; /* text empty when loaded */

static void mhd_open(void)
{
    static const struct dlib_sym syms[] = {
        DLIB_SYM(dl_mhd, is_feature_supported, MHD_is_feature_supported),
        DLIB_SYM(dl_mhd, start_daemon, MHD_start_daemon),
        DLIB_SYM(dl_mhd, stop_daemon, MHD_stop_daemon),
        DLIB_SYM(dl_mhd, get_daemon_info, MHD_get_daemon_info),
        DLIB_SYM(dl_mhd, get_connection_info, MHD_get_connection_info),
        DLIB_SYM(dl_mhd, lookup_connection_value, MHD_lookup_connection_value),
        DLIB_SYM(dl_mhd, create_response_from_buffer,
                 MHD_create_response_from_buffer),
        DLIB_SYM(dl_mhd, create_response_from_callback,
                 MHD_create_response_from_callback),
        DLIB_SYM(dl_mhd, add_response_header, MHD_add_response_header),
        DLIB_SYM(dl_mhd, queue_response, MHD_queue_response),
        DLIB_SYM(dl_mhd, destroy_response, MHD_destroy_response),
    };
    const char *env = getenv("EXAMLOPS_MICROHTTPD_LIBRARY");
    const struct dlib_spec spec = {
        "libmicrohttpd",
        env && *env ? env : DL_MHD_LIBRARY,
        "install Debian's libmicrohttpd12, or set "
        "EXAMLOPS_MICROHTTPD_LIBRARY",
        "libmicrohttpd 0.9.71 or later",
        EXA_ECONFIG,
        syms,
        sizeof(syms) / sizeof(syms[0]),
    };

    dlib_open(&spec, &mhd_error);
}

int dl_mhd_load(exa_error_t *err)
{
    pthread_once(&mhd_once, mhd_open);
    if (mhd_error.text[0])
        return exa_err(err, mhd_error.code, "%s", mhd_error.text);
    return 0;
}
