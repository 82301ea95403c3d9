/*
 * dlib.h - load a shared library and a table of its functions at run
 * time (dlopen(3), dlsym(3)), for the libraries only a few commands need.
 *
 * A library that exa links is mapped and relocated by every command,
 * `exa --version` included; libmicrohttpd (with GnuTLS), libcurl (with
 * some twenty libraries of its own) and libxgboost are needed only by
 * `exa serve`, `exa worker` and training. Each has a small table of
 * function pointers, typed from the library's own header
 * (__typeof__(&fn)), filled once per process by dlib_open from a
 * pthread_once(3) routine (libpipeline/forest.c, libworker/dl_curl.c,
 * server/dl_mhd.c).
 */
#ifndef EXA_DLIB_H
#define EXA_DLIB_H

#include <stddef.h>

#include "libutil/error.h"

/* One function of the table: its symbol name and where its address goes
 * (the address of a function-pointer field, cast: POSIX dlsym(3)). */
struct dlib_sym {
    const char *name;
    void **slot;
};

/* A table entry for field FIELD of struct TABLE, symbol SYM. */
#define DLIB_SYM(table, field, sym)                                            \
    {                                                                          \
#sym, (void **)&(table).field                                          \
    }

struct dlib_spec {
    const char *what;     /* the library in messages: "libcurl" */
    const char *soname;   /* the dlopen(3) name: "libcurl.so.4" or a path */
    const char *install;  /* the remedy: "install Debian's libcurl4" */
    const char *expected; /* what a missing symbol means: "7.85 or later" */
    enum exa_errc code;   /* the error code of a failure */
    const struct dlib_sym *syms;
    size_t nsyms;
};

/*
 * Open spec->soname (RTLD_NOW | RTLD_LOCAL) and store the address of
 * every symbol of spec->syms in its slot. The library stays loaded for
 * the life of the process. Returns 0, or -1 with err (spec->code) and
 * no slot written:
 *   "cannot load WHAT library 'SONAME': <dlerror> (INSTALL)"
 *   "WHAT library 'SONAME' lacks 'SYM' (EXPECTED expected)"
 * Not thread-safe on one spec: call it from a pthread_once routine.
 */
int dlib_open(const struct dlib_spec *spec, exa_error_t *err);

#endif
