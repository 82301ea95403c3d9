/*
 * parse_flux_r.c - a Flux resource set R (RFC 20 R_lite and nodelist, as
 * `flux resource R [--states=S]` prints it) per node: cores, GPUs and the
 * GPU ids (parse_flux_resource.h flux_r_per_node, flux_r_per_node_ids).
 * Kept apart from the `flux resource list` table reader
 * (parse_flux_resource.c), which completes its nodes with these counts.
 * Ranks are matched to the nodelist's hosts in ascending order, never by
 * guess: a set whose distinct ranks do not pair up with its hosts is
 * refused.
 */
#include "libdiscovery/parse_flux_resource.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_flux.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

/* Number of ids in an RFC 22 idset, or -1. */
static long long idset_count(const char *s)
{
    long long *ids = NULL;
    size_t n = 0;
    if (!s || flux_idset_expand(s, &ids, &n) < 0) {
        free(ids);
        return -1;
    }
    free(ids);
    return (long long)n;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Where rank is in the sorted ranks v[0..n), or -1. */
static long rank_index(const long long *v, size_t n, long long rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < rank)
            lo = mid + 1;
        else if (v[mid] > rank)
            hi = mid;
        else
            return (long)mid;
    }
    return -1;
}

/* flux_r_per_node(), and with gpu_ids (not NULL) flux_r_per_node_ids()'s
 * masks. */
static int r_per_node(const char *buf, size_t len, struct strvec *hosts,
                      long long **cores, long long **gpus,
                      unsigned long long **gpu_ids, int **ids_known,
                      exa_error_t *err)
{
    json_t *r = json_loadb(buf, len, 0, NULL), *ex, *rl, *nl;
    long long *c = NULL, *g = NULL, *ranks = NULL;
    unsigned long long *gm = NULL;
    int *gk = NULL;
    size_t nranks = 0, ranks_alloc = 0, m = 0;
    int rc = -1;
    if (!r || !(ex = json_object_get(r, "execution")) ||
        !json_is_array(rl = json_object_get(ex, "R_lite")) ||
        !json_is_array(nl = json_object_get(ex, "nodelist"))) {
        exa_err(err, EXA_EPARSE, "flux resource R: not an R object");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(nl); i++) {
        const char *h = json_string_value(json_array_get(nl, i));
        /* an empty set prints "nodelist": [""] */
        if (!h || (*h && flux_hostlist_expand(h, hosts) < 0)) {
            exa_err(err, EXA_EPARSE, "flux resource R: bad nodelist");
            goto out;
        }
    }
    /* the set's ranks, ascending: the i-th is hosts->v[i] (RFC 20: the
     * nodelist names the execution targets in rank order, so a set
     * without rank 0, as `--states=allocated` prints, starts at its
     * lowest rank) */
    for (size_t i = 0; i < json_array_size(rl); i++) {
        const char *rk =
            json_string_value(json_object_get(json_array_get(rl, i), "rank"));
        long long *ids = NULL;
        size_t nids = 0;
        if (!rk || flux_idset_expand(rk, &ids, &nids) < 0) {
            free(ids);
            exa_err(err, EXA_EPARSE, "flux resource R: bad rank idset");
            goto out;
        }
        if (nids > hosts->nr - nranks) {
            /* R_lite's ranks are disjoint, one host each: more of them
             * than hosts is not an R (and never grows without bound) */
            free(ids);
            exa_err(err, EXA_EPARSE,
                    "flux resource R: more ranks in R_lite than the %zu "
                    "hosts of its nodelist",
                    hosts->nr);
            goto out;
        }
        ALLOC_GROW(ranks, nranks + nids, ranks_alloc);
        if (nids)
            memcpy(ranks + nranks, ids, nids * sizeof(*ids));
        nranks += nids;
        free(ids);
    }
    if (nranks)
        qsort(ranks, nranks, sizeof(*ranks), cmp_ll);
    for (size_t i = 0; i < nranks; i++)
        if (!m || ranks[m - 1] != ranks[i])
            ranks[m++] = ranks[i];
    if (m != hosts->nr) {
        exa_err(err, EXA_EPARSE,
                "flux resource R: %zu ranks in R_lite but %zu hosts in its "
                "nodelist",
                m, hosts->nr);
        goto out;
    }
    c = xcalloc(hosts->nr ? hosts->nr : 1, sizeof(*c));
    g = xcalloc(hosts->nr ? hosts->nr : 1, sizeof(*g));
    if (gpu_ids) {
        gm = xcalloc(hosts->nr ? hosts->nr : 1, sizeof(*gm));
        gk = xcalloc(hosts->nr ? hosts->nr : 1, sizeof(*gk));
        for (size_t h = 0; h < hosts->nr; h++)
            gk[h] = 1;
    }
    for (size_t i = 0; i < json_array_size(rl); i++) {
        const json_t *e = json_array_get(rl, i);
        const json_t *ch = json_object_get(e, "children");
        const char *rk = json_string_value(json_object_get(e, "rank"));
        long long *ids = NULL;
        size_t nids = 0;
        long long nc =
            idset_count(json_string_value(json_object_get(ch, "core")));
        const char *gs = json_string_value(json_object_get(ch, "gpu"));
        long long ng = idset_count(gs);
        unsigned long long em = 0; /* this entry's GPU ids */
        int ek = 1;
        if (gm && gs && *gs) {
            long long *gi = NULL;
            size_t ngi = 0;
            if (flux_idset_expand(gs, &gi, &ngi) < 0)
                ek = 0;
            for (size_t k = 0; ek && k < ngi; k++) {
                if (gi[k] < 0 || gi[k] > 63)
                    ek = 0;
                else
                    em |= 1ULL << gi[k];
            }
            free(gi);
        }
        if (flux_idset_expand(rk, &ids, &nids) < 0) { /* read above */
            free(ids);
            goto out;
        }
        for (size_t k = 0; k < nids; k++) {
            long h = rank_index(ranks, m, ids[k]);
            if (h < 0)
                continue;
            /* idset counts are bounded by the text: no overflow */
            c[h] += nc > 0 ? nc : 0;
            g[h] += ng > 0 ? ng : 0;
            if (gm) {
                gk[h] = gk[h] && ek;
                gm[h] = gk[h] ? gm[h] | em : 0;
            }
        }
        free(ids);
    }
    *cores = c;
    *gpus = g;
    c = g = NULL;
    if (gm) {
        *gpu_ids = gm;
        *ids_known = gk;
        gm = NULL;
        gk = NULL;
    }
    rc = 0;
out:
    free(c);
    free(g);
    free(gm);
    free(gk);
    free(ranks);
    json_decref(r);
    return rc;
}

int flux_r_per_node(const char *buf, size_t len, struct strvec *hosts,
                    long long **cores, long long **gpus, exa_error_t *err)
{
    return r_per_node(buf, len, hosts, cores, gpus, NULL, NULL, err);
}

int flux_r_per_node_ids(const char *buf, size_t len, struct strvec *hosts,
                        long long **cores, long long **gpus,
                        unsigned long long **ids, int **ids_known,
                        exa_error_t *err)
{
    return r_per_node(buf, len, hosts, cores, gpus, ids, ids_known, err);
}
