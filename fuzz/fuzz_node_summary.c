/*
 * fuzz_node_summary.c - libFuzzer target for libstore/nodes.h's summary
 * text (cluster_node_summary.rows, migrations 12 and 13, a partitions
 * list ending each row): node_summary_decode,
 * which every `exa hpc place` over all clusters runs on what platform.db
 * holds (a file anyone with write access can edit), and
 * node_summary_encode. A text decodes to rows or to nothing (-1, no row
 * appended); the rows it gives encode again, and that text decodes to
 * the same rows (the two texts may differ: "007", "-0" and a repeated
 * "@" line read as what encode writes shorter).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libstore/nodes.h"
#include "libutil/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_row(const struct node_row *a, const struct node_row *b)
{
    return !strcmp(a->cluster, b->cluster) &&
           !strcmp(a->captured_at, b->captured_at) &&
           !strcmp(a->state, b->state) && a->gpus == b->gpus &&
           a->gpus_used == b->gpus_used && a->cpus == b->cpus &&
           a->count == b->count && a->mem_mb == -1 && b->mem_mb == -1 &&
           a->partitions && b->partitions &&
           !strcmp(a->partitions, b->partitions);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct node_row *v = NULL, *w = NULL;
    size_t nr = 0, alloc = 0, nw = 0, walloc = 0;
    struct strbuf sb = STRBUF_INIT;
    int rc =
        node_summary_decode((const char *)data, size, "c", &v, &nr, &alloc);
    if (rc < 0) {
        if (nr)
            __builtin_trap();
        free(v);
        return 0;
    }
    if (rc != 0 || (size && !nr))
        __builtin_trap();
    /* a decoded text's strings hold no NUL, TAB or LF: it encodes */
    for (size_t i = 0; i < nr; i++)
        if (memchr(v[i].state, '\t', strlen(v[i].state)) || v[i].node)
            __builtin_trap();
    if (node_summary_encode(v, nr, &sb) < 0)
        __builtin_trap();
    if (node_summary_decode(sb.buf ? sb.buf : "", sb.len, "c", &w, &nw,
                            &walloc) < 0 ||
        nw != nr)
        __builtin_trap();
    for (size_t i = 0; i < nr; i++)
        if (!same_row(&v[i], &w[i]))
            __builtin_trap();
    strbuf_release(&sb);
    node_rows_free(v, nr);
    node_rows_free(w, nw);
    return 0;
}
