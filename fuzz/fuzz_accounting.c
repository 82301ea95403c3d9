/*
 * fuzz_accounting.c - libFuzzer target for job accounting's sacct reader
 * (sched_acct_parse_sacct, libsched/accounting.h): the first line of the
 * input is the job id asked for, the rest is sacct's answer. Whatever the
 * bytes, the result must be "unknown" (-1) or a non-negative count, hours
 * must be finite, and the times NUL-terminated inside their fields.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/accounting.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t idlen = nl ? (size_t)(nl - data) : 0;
    char *id, *text;
    size_t tlen = size - (nl ? idlen + 1 : 0);
    struct sched_acct a;
    exa_error_t err = EXA_ERROR_INIT;

    if (!nl || idlen > 64 || memchr(data, 0, idlen))
        return 0;
    id = xstrndup((const char *)data, idlen);
    text = xmalloc(tlen + 1);
    memcpy(text, nl + 1, tlen);
    text[tlen] = '\0';
    if (sched_acct_parse_sacct(text, tlen, id, &a, &err) == 0) {
        if (a.gpus < -1 || a.cpus < -1 || a.nodes < -1)
            __builtin_trap();
        if (!isfinite(a.gpu_hours) || !isfinite(a.cpu_hours) ||
            !isfinite(a.run_seconds) || !isfinite(a.queue_seconds))
            __builtin_trap();
        if (!memchr(a.start, 0, sizeof(a.start)) ||
            !memchr(a.end, 0, sizeof(a.end)) ||
            !memchr(a.submit, 0, sizeof(a.submit)))
            __builtin_trap();
    }
    free(id);
    free(text);
    return 0;
}
