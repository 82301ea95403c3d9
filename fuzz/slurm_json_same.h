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

#endif
