/*
 * dl_curl.c - libcurl, dlopen()ed by the first worker_run (dl_curl_int.h)
 * instead of linked: linked, its twenty-odd libraries were mapped and
 * relocated by every exa command, about a third of `exa --version`.
 */
#include "libworker/dl_curl_int.h"

#include <pthread.h>
#include <stdlib.h>

#include "libutil/dlib.h"

struct dl_curl dl_curl;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static exa_error_t curl_error = EXA_ERROR_INIT; /* text empty when loaded */

static void curl_open(void)
{
    static const struct dlib_sym syms[] = {
        DLIB_SYM(dl_curl, global_init, curl_global_init),
        DLIB_SYM(dl_curl, easy_init, curl_easy_init),
        DLIB_SYM(dl_curl, easy_reset, curl_easy_reset),
        DLIB_SYM(dl_curl, easy_setopt, curl_easy_setopt),
        DLIB_SYM(dl_curl, easy_perform, curl_easy_perform),
        DLIB_SYM(dl_curl, easy_getinfo, curl_easy_getinfo),
        DLIB_SYM(dl_curl, easy_strerror, curl_easy_strerror),
        DLIB_SYM(dl_curl, easy_cleanup, curl_easy_cleanup),
        DLIB_SYM(dl_curl, slist_append, curl_slist_append),
        DLIB_SYM(dl_curl, slist_free_all, curl_slist_free_all),
    };
    const char *env = getenv("EXAMLOPS_CURL_LIBRARY");
    const struct dlib_spec spec = {
        "libcurl",
        env && *env ? env : DL_CURL_LIBRARY,
        "install Debian's libcurl4, or set EXAMLOPS_CURL_LIBRARY",
        "libcurl 7.85 or later",
        EXA_ECONFIG,
        syms,
        sizeof(syms) / sizeof(syms[0]),
    };

    if (dlib_open(&spec, &curl_error) < 0)
        return;
    if (dl_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        exa_err(&curl_error, EXA_ECONFIG, "curl_global_init failed in '%s'",
                spec.soname);
}

int dl_curl_load(exa_error_t *err)
{
    pthread_once(&curl_once, curl_open);
    if (curl_error.text[0])
        return exa_err(err, curl_error.code, "%s", curl_error.text);
    return 0;
}
