/*
 * slurm_json_same.h - for the squeue and sacct fuzz targets: the two
 * writers of a parse result, jansson's (slurm_jobs_to_json + jx_dumpf) and
 * the streaming one (slurm_jobs_write_json), must give the same bytes.
 */
#ifndef EXA_FUZZ_SLURM_JSON_SAME_H
#define EXA_FUZZ_SLURM_JSON_SAME_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_slurm.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"

/* Both writers of one result give the same bytes (abort otherwise). */
static inline void same_bytes(const struct slurm_jobs *jobs, const json_t *doc,
                              int pretty)
{
    char *a = NULL, *b = NULL;
    size_t al = 0, bl = 0;
    FILE *fa = open_memstream(&a, &al), *fb = open_memstream(&b, &bl);
    struct jsonw w;
    if (!fa || !fb)
        abort();
    jx_dumpf(doc, fa, pretty);
    jsonw_init(&w, fb, pretty);
    slurm_jobs_write_json(jobs, 1, &w);
    jsonw_finish(&w);
    fclose(fa);
    fclose(fb);
    if (al != bl || memcmp(a, b, al))
        abort();
    free(a);
    free(b);
}

/*
 * The document one parse writes (slurm_jobs_write_json, pretty; steps for
 * sacct) and the one slurm_jobs_stream_json writes a block of rows at a
 * time on two threads are the same bytes, or both fail with the same
 * kind and message (abort otherwise).
 */
static inline void same_as_blocks(const char *buf, size_t len, int sacct,
                                  size_t rows)
{
    struct slurm_jobs jobs;
    const char *k1 = NULL, *k2 = NULL;
    exa_error_t e1 = EXA_ERROR_INIT, e2 = EXA_ERROR_INIT;
    char *a = NULL, *b = NULL;
    size_t al = 0, bl = 0;
    FILE *fa = open_memstream(&a, &al), *fb = open_memstream(&b, &bl);
    int r1, r2;
    if (!fa || !fb)
        abort();
    memset(&jobs, 0, sizeof(jobs));
    r1 = sacct ? sacct_parse_cmd(buf, len, NULL, &jobs, &k1, &e1)
               : squeue_parse_cmd(buf, len, NULL, &jobs, &k1, &e1);
    if (r1 == 0) {
        struct jsonw w;
        jsonw_init(&w, fa, 1);
        slurm_jobs_write_json(&jobs, sacct, &w);
        jsonw_finish(&w);
    }
    slurm_jobs_free(&jobs);
    r2 = slurm_jobs_stream_json(buf, len, sacct, NULL, rows, fb, &k2, &e2);
    fclose(fa);
    fclose(fb);
    if (r1 != r2 || al != bl || memcmp(a, b, al))
        abort();
    if (r1 < 0 && (strcmp(k1, k2) || strcmp(e1.text, e2.text)))
        abort();
    free(a);
    free(b);
}

#endif
