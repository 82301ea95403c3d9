/*
 * fuzz_flux_jobs.c - libFuzzer target for flux_jobs_parse(),
 * flux_jobs_parse_format() with exa's observe format and
 * flux_submit_ids(): any bytes must give a result or an error, never a
 * crash or a leak.
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
    kind = NULL;
    res = flux_jobs_parse_format(buf, size, FLUX_JOBS_OBSERVE_FORMAT, &kind,
                                 NULL);
    if (!res && !kind)
        __builtin_trap();
    json_decref(res);
    {
        struct strvec ids = STRVEC_INIT;
        flux_submit_ids(buf, size, &ids);
        strvec_clear(&ids);
    }
    free(buf);
    return 0;
}
