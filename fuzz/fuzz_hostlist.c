/*
 * fuzz_hostlist.c - libFuzzer target: hostlist expansion (capped at 10,000
 * hosts so a large valid range is not mistaken for a hang), then
 * compression of what came out, which must expand back to the same list;
 * hostlist_expand_arena must give the same count and names (or fail too).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libutil/arena.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = xmalloc(size + 1);
    struct strvec v = STRVEC_INIT, back = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    struct arena a = {0};
    const char **names = NULL;
    long n, na;
    memcpy(buf, data, size);
    buf[size] = '\0';
    n = hostlist_expand(buf, &v, 10000, &err);
    na = hostlist_expand_arena(buf, &a, &names, 10000, &err);
    if (n != na)
        abort();
    for (long i = 0; i < na; i++)
        if (strcmp(names[i], v.v[i]))
            abort();
    if (na >= 0 && names[na])
        abort();
    arena_release(&a);
    if (n >= 0 && v.nr) {
        char *c = hostlist_compress(v.v, v.nr);
        int plain = 1;
        /* names with brackets, commas or blanks do not round-trip */
        for (size_t i = 0; i < v.nr; i++)
            if (!v.v[i][0] || strpbrk(v.v[i], "[], \t\n\r\v\f"))
                plain = 0;
        if (plain && hostlist_expand(c, &back, 20000, &err) >= 0) {
            if (back.nr != v.nr)
                abort();
            for (size_t i = 0; i < v.nr; i++)
                if (strcmp(back.v[i], v.v[i]))
                    abort();
        }
        free(c);
    }
    strvec_clear(&v);
    strvec_clear(&back);
    free(buf);
    return 0;
}
