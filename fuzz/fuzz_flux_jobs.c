/*
 * fuzz_flux_jobs.c - libFuzzer target for flux_jobs_parse(): any bytes
 * must give a result or an error, never a crash or a leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "libsched/parse_flux.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = xmalloc(size + 1);
    const char *kind = NULL;
    json_t *res;

    memcpy(buf, data, size);
    buf[size] = '\0';
    res = flux_jobs_parse(buf, size, &kind, NULL);
    if (!res && !kind)
        __builtin_trap();
    json_decref(res);
    free(buf);
    return 0;
}
