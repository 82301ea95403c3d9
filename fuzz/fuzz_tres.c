/*
 * fuzz_tres.c - libFuzzer target for libres: the GRES (gres_parse) and
 * TRES (tres_parse, tres_gpus) readers every sinfo, squeue, sacct and
 * scontrol parse goes through, and the GresUsed index reader
 * (gres_used_gpu_mask). A count is never negative except the documented
 * -1 of an overflowed GRES sum, tres_gpus agrees with tres_parse, and a
 * GresUsed mask known holds no more GPUs than gres_parse counts (0 when
 * unknown).
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
    unsigned long long mask = 1;
    gres_parse(s, &gi);
    if (gi.gpus < -1 || gi.entries < 0 || (gi.types && !*gi.types))
        __builtin_trap();
    rc = gres_used_gpu_mask(s, &mask);
    if ((rc != 0 && rc != 1) || (!rc && mask) ||
        (rc && gi.gpus >= 0 && __builtin_popcountll(mask) > gi.gpus))
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
