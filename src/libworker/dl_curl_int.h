/*
 * dl_curl_int.h - the libcurl functions the worker calls, loaded at run
 * time (libutil/dlib.h) so that no other command maps libcurl and its
 * twenty-odd libraries (GnuTLS, nghttp2, krb5, LDAP, libssh2, ...).
 *
 * Private to libexa (not installed): it needs <curl/curl.h>, which
 * exa.pc does not promise. The types are the real header's; each field
 * has the type of the function it holds (__typeof__(&curl_...)), so a
 * call through the table is checked as a direct call would be, less
 * curl's own option-type checks (typecheck-gcc.h), which are macros.
 */
#ifndef EXA_DL_CURL_INT_H
#define EXA_DL_CURL_INT_H

#include <curl/curl.h>

#include "libutil/error.h"

/* libcurl's soname (Debian's libcurl4, OpenSSL flavour), the default of
 * EXAMLOPS_CURL_LIBRARY. */
#define DL_CURL_LIBRARY "libcurl.so.4"

struct dl_curl {
    __typeof__(&curl_global_init) global_init;
    __typeof__(&curl_easy_init) easy_init;
    __typeof__(&curl_easy_reset) easy_reset;
    __typeof__(&curl_easy_setopt) easy_setopt;
    __typeof__(&curl_easy_perform) easy_perform;
    __typeof__(&curl_easy_getinfo) easy_getinfo;
    __typeof__(&curl_easy_strerror) easy_strerror;
    __typeof__(&curl_easy_cleanup) easy_cleanup;
    __typeof__(&curl_slist_append) slist_append;
    __typeof__(&curl_slist_free_all) slist_free_all;
};

/*
 * The table: every field set once dl_curl_load returned 0, NULL before.
 * Read-only for callers.
 */
extern struct dl_curl dl_curl;

/*
 * Load libcurl once per process (pthread_once; thread-safe), from
 * EXAMLOPS_CURL_LIBRARY when set, else DL_CURL_LIBRARY, and call
 * curl_global_init(CURL_GLOBAL_DEFAULT). Returns 0, or -1 with err
 * (EXA_ECONFIG, exit 3): "cannot load libcurl library 'NAME': <dlerror>
 * (install Debian's libcurl4)", or a symbol the library lacks; every
 * later call in the process returns the same error.
 */
int dl_curl_load(exa_error_t *err);

#endif
