/*
 * fuzz_flux_eventlog.c - libFuzzer target for flux_eventlog_parse() and
 * the job accounting built on its result.
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
    struct flux_job_acct acct;
    json_t *res;

    memcpy(buf, data, size);
    buf[size] = '\0';
    res = flux_eventlog_parse(buf, size, NULL);
    if (res) {
        if (!json_object_get(res, "summary"))
            __builtin_trap();
        flux_job_accounting(res, NULL, &acct, NULL);
    }
    json_decref(res);
    free(buf);
    return 0;
}
