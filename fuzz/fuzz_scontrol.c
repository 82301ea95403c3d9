/*
 * fuzz_scontrol.c - libFuzzer target: arbitrary bytes through the
 * `scontrol show job` parser (scontrol_jobs_parse, which slurm.c's
 * accounting-less status fallback and `hpc logs` call) and its JSON
 * conversion. A parse error is a normal outcome; a crash, leak or
 * sanitizer report is a bug.
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
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    struct slurm_jobs jobs;

    memcpy(buf, data, size);
    buf[size] = '\0';
    memset(&jobs, 0, sizeof(jobs));
    if (scontrol_jobs_parse(buf, size, &jobs, &kind, &err) == 0)
        json_decref(slurm_jobs_to_json(&jobs, 0));
    slurm_jobs_free(&jobs);
    free(buf);
    return 0;
}
