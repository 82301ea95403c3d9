/*
 * fuzz_sacct.c - libFuzzer target: arbitrary bytes through the sacct parser
 * and its JSON conversion; the streaming writer (slurm_jobs_write_json)
 * must give jx_dumpf's bytes for the same result, pretty and compact, and
 * what `exa debug parse` prints (slurm_jobs_stream_json, blocks of 1-3
 * rows) the bytes of the one parse. Any crash, leak, sanitizer report or
 * difference is a bug; a parse error is a normal outcome.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_sinfo.h"
#include "libsched/parse_slurm.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/xalloc.h"
#include "slurm_json_same.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = xmalloc(size + 1);
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    json_t *doc = NULL;
    memcpy(buf, data, size);
    buf[size] = '\0';
    {
        struct slurm_jobs jobs;
        memset(&jobs, 0, sizeof(jobs));
        if (sacct_parse(buf, size, &jobs, &kind, &err) == 0) {
            doc = slurm_jobs_to_json(&jobs, 1);
            same_bytes(&jobs, doc, 1);
            same_bytes(&jobs, doc, 0);
        }
        slurm_jobs_free(&jobs);
    }
    json_decref(doc);
    same_as_blocks(buf, size, 1, 1 + size % 3);
    free(buf);
    return 0;
}
