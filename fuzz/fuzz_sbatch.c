/*
 * fuzz_sbatch.c - libFuzzer target: arbitrary bytes through sbatch's
 * answer as the adapter reads it (sbatch_parse_streams: stdout up to the
 * first NUL byte, stderr after it) and as `exa debug parse sbatch` reads
 * it (sbatch_parse over the whole input), then the JSON conversion. An id
 * is never empty and never comes from stderr.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_slurm.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = xmalloc(size + 1);
    const char *nul = memchr(data, 0, size);
    size_t olen = nul ? (size_t)(nul - (const char *)data) : size;
    exa_error_t err = EXA_ERROR_INIT;
    struct sbatch_result res;

    memcpy(buf, data, size);
    buf[size] = '\0';
    if (sbatch_parse(buf, size, &res, &err) == 0) {
        if (!res.job_id || !*res.job_id)
            __builtin_trap();
        json_decref(sbatch_result_to_json(&res));
    }
    sbatch_result_free(&res);
    if (sbatch_parse_streams(buf, olen, nul ? buf + olen + 1 : NULL,
                             nul ? size - olen - 1 : 0, &res, &err) == 0) {
        const char *at = res.job_id ? strstr(buf, res.job_id) : NULL;
        if (!at || !*res.job_id || (size_t)(at - buf) >= olen)
            __builtin_trap();
    }
    sbatch_result_free(&res);
    free(buf);
    return 0;
}
