/*
 * dl_mhd.h - the libmicrohttpd functions exa's HTTP listeners call
 * (server/http.c, server/worker_http.c), loaded at run time
 * (libutil/dlib.h) by the first listener, so that no command but
 * `exa serve` and `exa mcp serve --transport http` maps libmicrohttpd
 * and GnuTLS.
 *
 * The types are the real header's: each field has the type of the
 * function it holds (__typeof__(&MHD_...)). Every MHD_ function is
 * called through the table; the table is filled before the first daemon
 * starts, so callbacks from its threads always find it set.
 */
#ifndef EXA_DL_MHD_H
#define EXA_DL_MHD_H

#include <microhttpd.h>

#include "libutil/error.h"

/* libmicrohttpd's soname (Debian's libmicrohttpd12), the default of
 * EXAMLOPS_MICROHTTPD_LIBRARY. */
#define DL_MHD_LIBRARY "libmicrohttpd.so.12"

struct dl_mhd {
    __typeof__(&MHD_is_feature_supported) is_feature_supported;
    __typeof__(&MHD_start_daemon) start_daemon;
    __typeof__(&MHD_stop_daemon) stop_daemon;
    __typeof__(&MHD_get_daemon_info) get_daemon_info;
    __typeof__(&MHD_get_connection_info) get_connection_info;
    __typeof__(&MHD_lookup_connection_value) lookup_connection_value;
    __typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
    __typeof__(&MHD_create_response_from_callback)
        create_response_from_callback;
    __typeof__(&MHD_add_response_header) add_response_header;
    __typeof__(&MHD_queue_response) queue_response;
    __typeof__(&MHD_destroy_response) destroy_response;
};

/* The table: every field set once dl_mhd_load returned 0, NULL before.
 * Read-only for callers. */
extern struct dl_mhd dl_mhd;

/*
 * Load libmicrohttpd once per process (pthread_once; thread-safe), from
 * EXAMLOPS_MICROHTTPD_LIBRARY when set, else DL_MHD_LIBRARY. Returns 0,
 * or -1 with err (EXA_ECONFIG, exit 3): "cannot load libmicrohttpd
 * library 'NAME': <dlerror> (install Debian's libmicrohttpd12)", or a
 * symbol the library lacks; every later call returns the same error.
 */
int dl_mhd_load(exa_error_t *err);

#endif
