/*
 * dlib.c - dlopen(3) a library and resolve a table of its functions
 * (dlib.h). Every symbol is looked up before any slot is written, so a
 * library too old for one function leaves the whole table untouched.
 */
#include "libutil/dlib.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "libutil/xalloc.h"

int dlib_open(const struct dlib_spec *spec, exa_error_t *err)
{
    void *h = dlopen(spec->soname, RTLD_LAZY | RTLD_LOCAL);
    void **addr;

    if (!h) {
        const char *why = dlerror();
        return exa_err(err, spec->code, "cannot load %s library '%s': %s (%s)",
                       spec->what, spec->soname, why ? why : "unknown error",
                       spec->install);
    }
    addr = xcalloc(spec->nsyms ? spec->nsyms : 1, sizeof(*addr));
    for (size_t i = 0; i < spec->nsyms; i++) {
        addr[i] = dlsym(h, spec->syms[i].name);
        if (!addr[i]) {
            exa_err(err, spec->code, "%s library '%s' lacks '%s' (%s expected)",
                    spec->what, spec->soname, spec->syms[i].name,
                    spec->expected);
            free(addr);
            dlclose(h);
            return -1;
        }
    }
    for (size_t i = 0; i < spec->nsyms; i++)
        *spec->syms[i].slot = addr[i];
    free(addr);
    return 0;
}
