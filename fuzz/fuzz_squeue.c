/*
 * fuzz_squeue.c - libFuzzer target: arbitrary bytes through the squeue parser
 * and its JSON conversion, then through the block walk the exporter uses
 * (squeue_parse_cmd_blocks) in blocks of 1-3 rows, so that short inputs
 * take its two-thread path; the streaming writer (slurm_jobs_write_json)
 * must give jx_dumpf's bytes for the same result, pretty and compact, and
 * what `exa debug parse` prints (slurm_jobs_stream_json, blocks of 1-3
 * rows) the bytes of the one parse; the queue's listings
 * (squeue_parse_safe, squeue_parse_own, squeue_names_parse) hold their
 * contracts. Any crash, leak, sanitizer report or difference is a bug; a
 * parse error is a normal outcome.
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

/* counts the jobs handed over, and touches every id */
static void count_jobs(void *ctx, struct slurm_jobs *jobs)
{
    size_t *n = ctx;
    for (size_t i = 0; i < jobs->njobs; i++)
        *n += jobs->jobs[i].id ? strlen(jobs->jobs[i].id) + 1 : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = xmalloc(size + 1);
    const char *kind = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    json_t *doc = NULL;
    memcpy(buf, data, size);
    buf[size] = '\0';
    /* the queue's two listings: the fixed columns, and the names, where
     * every id vouched for is on one record only (never twice, never
     * empty) and no record is both kept and refused */
    {
        struct slurm_jobs safe;
        struct squeue_name *nv = NULL;
        size_t nn = 0, refused = 0, nrs = 0;
        memset(&safe, 0, sizeof(safe));
        (void)squeue_parse_safe(buf, size, &safe, &kind, &err);
        slurm_jobs_free(&safe);
        (void)squeue_parse_own(buf, size, &safe, &kind, &err);
        slurm_jobs_free(&safe);
        err = (exa_error_t)EXA_ERROR_INIT;
        squeue_names_parse(buf, size, &nv, &nn, &refused);
        for (size_t i = 0; i < size; i++)
            nrs += buf[i] == 0x1e;
        if (nn + refused > nrs)
            __builtin_trap();
        for (size_t i = 0; i < nn; i++) {
            if (!nv[i].id[0] || !nv[i].name)
                __builtin_trap();
            for (size_t k = i + 1; k < nn; k++)
                if (!strcmp(nv[i].id, nv[k].id))
                    __builtin_trap();
        }
        squeue_names_free(nv, nn);
    }
    {
        struct slurm_jobs jobs;
        memset(&jobs, 0, sizeof(jobs));
        if (squeue_parse(buf, size, &jobs, &kind, &err) == 0) {
            doc = slurm_jobs_to_json(&jobs, 1);
            same_bytes(&jobs, doc, 1);
            same_bytes(&jobs, doc, 0);
        }
        slurm_jobs_free(&jobs);
    }
    json_decref(doc);
    same_as_blocks(buf, size, 0, 1 + size % 3);
    {
        size_t n = 0;
        exa_error_t e2 = EXA_ERROR_INIT;
        (void)squeue_parse_cmd_blocks(buf, size, NULL, 1 + size % 3, count_jobs,
                                      &n, &e2);
    }
    free(buf);
    return 0;
}
