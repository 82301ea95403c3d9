/*
 * fuzz_sbatch.c - libFuzzer target: arbitrary bytes through the sbatch
 * output parser and its JSON conversion.
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
    exa_error_t err = EXA_ERROR_INIT;
    struct sbatch_result res;
    memcpy(buf, data, size);
    buf[size] = '\0';
    memset(&res, 0, sizeof(res));
    if (sbatch_parse(buf, size, &res, &err) == 0)
        json_decref(sbatch_result_to_json(&res));
    sbatch_result_free(&res);
    free(buf);
    return 0;
}
