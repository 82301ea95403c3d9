/*
 * fuzz_tres.c - libFuzzer target for libres: the GRES (gres_parse) and
 * TRES (tres_parse, tres_gpus) readers every sinfo, squeue, sacct and
 * scontrol parse goes through. A count is never negative except the
 * documented -1 of an overflowed GRES sum, and tres_gpus agrees with
 * tres_parse.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libres/gres.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = xmalloc(size + 1);
    struct gres_info gi;
    struct tres_info ti;
    long long g = -7;
    int rc;

    memcpy(s, data, size);
    s[size] = '\0';
    gres_parse(s, &gi);
    if (gi.gpus < -1 || gi.entries < 0 || (gi.types && !*gi.types))
        __builtin_trap();
    gres_info_release(&gi);
    rc = tres_parse(s, &ti);
    if (rc && (!ti.has_gpus || ti.gpus < 0 || (ti.has_cpus && ti.cpus < 0) ||
               (ti.has_nodes && ti.nodes < 0)))
        __builtin_trap();
    if (tres_gpus(s, &g) != rc || (rc && g != ti.gpus) || (!rc && g != -7))
        __builtin_trap();
    free(s);
    return 0;
}
