/*
 * place_bench.c - time place_choose() alone over synthetic snapshots of
 * NCLUSTERS clusters x NNODES nodes (mixed states, partly used GPUs), the
 * in-memory part of one `exa hpc place` decision. Built by bench/place.sh
 * against build/libexa.a. Prints microseconds per decision.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfleet/placement.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int nc = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 1000;
    int nn = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 100;
    int reps = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 20;
    static const char *const states[] = {"idle", "mixed", "allocated",
                                         "down", "drain", "idle"};
    struct node_row *rows = xcalloc((size_t)nc * nn, sizeof(*rows));
    struct place_cluster *cl = xcalloc((size_t)nc, sizeof(*cl));
    struct place_ask ask = {8, 64, 2, NULL};
    char iso[32];
    time_t now = time(NULL);
    unsigned seed = 42;
    double t0, t1;
    int chosen = 0;
    strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    for (int c = 0; c < nc; c++) {
        cl[c].name = xstrfmt("cluster%04d", c);
        cl[c].scheduler = "slurm";
        cl[c].nodes = rows + (size_t)c * nn;
        cl[c].nnodes = (size_t)nn;
        for (int i = 0; i < nn; i++) {
            struct node_row *r = &rows[(size_t)c * nn + i];
            seed = seed * 1103515245u + 12345u;
            r->node = xstrfmt("n%03d", i);
            r->state = (char *)states[(seed >> 16) % 6];
            r->gpus = 8;
            r->gpus_used = (int)((seed >> 8) % 9);
            r->cpus = 128;
            r->captured_at = iso;
        }
    }
    t0 = now_s();
    for (int k = 0; k < reps; k++) {
        struct place_result res;
        place_choose(cl, (size_t)nc, &ask, NULL, 300, now, &res, NULL);
        chosen += res.chosen >= 0;
        place_result_release(&res);
    }
    t1 = now_s();
    printf("%d clusters x %d nodes: %.1f us per placement decision "
           "(in memory, %d runs, %d chose)\n",
           nc, nn, (t1 - t0) / reps * 1e6, reps, chosen);
    return 0;
}
