/*
 * sched_nodes.c - a cluster's nodes as Prometheus families (slurm_nodes_*,
 * slurm_node_*, slurm_partition_* of CPUs and GPUs, the cluster's CPU and
 * GPU totals): sched_metrics.h's node half. The job half and the snapshot
 * are in sched_metrics.c; what both use is in sched_metrics_int.h.
 */
#include <stdlib.h>
#include <string.h>

#include "libobserve/sched_metrics.h"
#include "libobserve/sched_metrics_int.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static int node_up(const struct obs_node *n)
{
    return n->state && strcmp(n->state, "down") && strcmp(n->state, "unknown");
}

static int node_unavailable(const struct obs_node *n)
{
    return !node_up(n) || !strcmp(n->state, "drain");
}

/* The sinfo state category of a node, as in slurm_nodes_<category>. */
static const char *node_category(const struct obs_node *n)
{
    static const struct {
        const char *word, *cat;
    } raw[] = {
        {"comp", "comp"},       {"completing", "comp"}, {"maint", "maint"},
        {"resv", "resv"},       {"reserved", "resv"},   {"plnd", "planned"},
        {"planned", "planned"}, {"fail", "fail"},       {"failing", "fail"},
        {"drng", "drain"},      {"draining", "drain"},  {"drained", "drain"},
        {"inval", "inval"},     {"err", "err"},
    };
    const char *st = n->state ? n->state : "unknown";
    if (!strcmp(st, "down"))
        return "down";
    if (n->raw_state) {
        char word[32];
        size_t k = 0;
        for (const char *p = n->raw_state; *p && k + 1 < sizeof(word); p++) {
            char c = *p;
            if (c >= 'A' && c <= 'Z')
                c = (char)(c - 'A' + 'a');
            if (c < 'a' || c > 'z')
                break;
            word[k++] = c;
        }
        word[k] = '\0';
        for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
            if (!strcmp(word, raw[i].word))
                return raw[i].cat;
    }
    if (!strcmp(st, "allocated"))
        return "alloc";
    if (!strcmp(st, "mixed"))
        return "mix";
    if (!strcmp(st, "idle"))
        return "idle";
    if (!strcmp(st, "drain"))
        return "drain";
    return "other";
}

#define NODE_CATS 13 /* node_cats without the NULL */
static const char *const node_cats[] = {
    "alloc", "comp",  "down", "drain",   "err",  "fail",  "idle",
    "inval", "maint", "mix",  "planned", "resv", "other", NULL};
_Static_assert(sizeof(node_cats) / sizeof(node_cats[0]) == NODE_CATS + 1,
               "NODE_CATS counts node_cats");

/* One partition's sums over its nodes, added to the per-partition
 * families once per partition instead of once per node. Every value is
 * a whole count (nodes, CPUs, GPUs), so the sums are exact in any
 * order and the series are the ones adding per node gave. */
struct pagg {
    const char *name; /* borrowed from a node */
    double nodes[NODE_CATS];
    double cpus, cpus_other, gpus, gpus_used, gpus_idle;
};

struct paggs {
    struct pagg *v;
    size_t nr, alloc;
    size_t *slot, nslot; /* index + 1, 0 empty */
};

/* The sums of partition name, created at 0 when new. */
static struct pagg *pagg_for(struct paggs *t, const char *name)
{
    size_t k;
    if (t->nslot < (t->nr + 1) * 2) {
        free(t->slot);
        t->nslot = t->nslot ? 2 * t->nslot : 64;
        t->slot = xcalloc(t->nslot, sizeof(*t->slot));
        for (size_t i = 0; i < t->nr; i++) {
            k = sm_strhash(t->v[i].name) & (t->nslot - 1);
            while (t->slot[k])
                k = (k + 1) & (t->nslot - 1);
            t->slot[k] = i + 1;
        }
    }
    k = sm_strhash(name) & (t->nslot - 1);
    while (t->slot[k]) {
        struct pagg *x = &t->v[t->slot[k] - 1];
        if (x->name == name || !strcmp(x->name, name))
            return x;
        k = (k + 1) & (t->nslot - 1);
    }
    ALLOC_GROW(t->v, t->nr + 1, t->alloc);
    memset(&t->v[t->nr], 0, sizeof(t->v[t->nr]));
    t->v[t->nr].name = name;
    t->slot[k] = ++t->nr;
    return &t->v[t->nr - 1];
}

void sm_render_nodes(struct prom_set *set, const char *px, const char *cl,
                     const struct obs_snapshot *s, double jobs_cpus,
                     double jobs_gpus)
{
    struct prom_family *cat[16];
    struct prom_family *total, *ncpu, *nmem, *ngt, *ngu, *nst;
    struct prom_family *pct, *pgt, *pga, *pgi, *pci, *pjob[4] = {0};
    double cpus_total = 0, cpus_other = 0, gpus_total = 0, gpus_other = 0;
    double gpus_used = 0, gpus_free = 0, cpus_used = 0, cpus_free = 0;
    int gpus_used_known = 0, cpus_used_known = s->nnodes > 0;
    struct strbuf parts = STRBUF_INIT;
    struct paggs pt = {0};
    double nopart[NODE_CATS] = {0};

    for (size_t i = 0; node_cats[i]; i++) {
        char suffix[32], help[96];
        xsnprintf(suffix, sizeof(suffix), "nodes_%s", node_cats[i]);
        xsnprintf(help, sizeof(help), "Nodes in state %s, per partition",
                  node_cats[i]);
        cat[i] = sm_fam(set, px, suffix, help);
    }
    total = sm_fam(set, px, "nodes_total", "Nodes in the cluster");
    ncpu = sm_fam(set, px, "node_cpu_total", "CPUs of the node");
    nmem = sm_fam(set, px, "node_mem_total",
                  "Configured memory of the node in bytes");
    ngt = sm_fam(set, px, "node_gres_total", "GPUs (gres/gpu) of the node");
    ngu =
        sm_fam(set, px, "node_gres_used", "GPUs (gres/gpu) in use on the node");
    nst = sm_fam(set, px, "node_status",
                 "1 when the node answers (not down or unknown), else 0");
    /* one series per node: nothing to look up (a node sinfo listed
     * twice is still one series, summed when the family settles) */
    prom_family_unique(ncpu);
    prom_family_unique(nmem);
    prom_family_unique(ngt);
    prom_family_unique(ngu);
    prom_family_unique(nst);
    pct = sm_fam(set, px, "partition_cpus_total", "CPUs of the partition");
    pci = sm_fam(set, px, "partition_cpus_other",
                 "CPUs of the partition on down, drained or unknown nodes");
    pgt = sm_fam(set, px, "partition_gpus_total", "GPUs of the partition");
    pga = sm_fam(set, px, "partition_gpus_allocated",
                 "GPUs in use in the partition (the nodes' GresUsed; Flux: "
                 "the allocated set)");
    pgi = sm_fam(set, px, "partition_gpus_idle",
                 "GPUs free in the partition on available nodes");

    sm_add(total, (const char *[]){"cluster", cl, NULL}, (double)s->nnodes);
    for (size_t i = 0; i < s->nnodes; i++) {
        const struct obs_node *n = &s->nodes[i];
        const char *c = node_category(n);
        const char *st = n->state ? n->state : "unknown";
        double cpus = n->cpus > 0 ? (double)n->cpus : 0;
        double gpus = n->gpus > 0 ? (double)n->gpus : 0;
        double used = n->gpus_used > 0 ? (double)n->gpus_used : 0;
        int unavailable = node_unavailable(n);
        /* on an unavailable node, what jobs do not hold: what they hold on
         * a draining node is allocated, not other (sinfo's A/I/O/T split,
         * the four adding up to the total), where the scheduler says it
         * per node (cpus_used, gpus_used >= 0) */
        double c_other = 0, g_other = 0;
        size_t ci = 0;

        if (unavailable) {
            double cu = (double)n->cpus_used;
            c_other = n->cpus_used < 0 ? cpus : cpus > cu ? cpus - cu : 0;
            g_other = n->gpus_used < 0 ? gpus : gpus > used ? gpus - used : 0;
        }

        while (node_cats[ci] && strcmp(node_cats[ci], c))
            ci++;
        if (!node_cats[ci])
            BUG("node category '%s' not in node_cats", c);
        strbuf_reset(&parts);
        for (size_t p = 0; p < n->partitions.nr; p++) {
            if (p)
                strbuf_addch(&parts, ',');
            strbuf_addstr(&parts, n->partitions.v[p]);
        }

        /* one label string for the node's five series */
        struct prom_labels nlab = sm_labels(
            set, (const char *[]){"cluster", cl, "node", n->name, "status", st,
                                  "partition", parts.buf, NULL});
        if (n->cpus >= 0)
            prom_add_labels(ncpu, &nlab, cpus);
        if (n->mem_mb >= 0)
            prom_add_labels(nmem, &nlab, (double)n->mem_mb * 1048576.0);
        if (n->gpus >= 0)
            prom_add_labels(ngt, &nlab, gpus);
        if (n->gpus_used >= 0) {
            prom_add_labels(ngu, &nlab, used);
            gpus_used_known = 1;
        }
        prom_add_labels(nst, &nlab, node_up(n) ? 1 : 0);

        cpus_total += cpus;
        gpus_total += gpus;
        gpus_used += used;
        if (unavailable) {
            cpus_other += c_other;
            gpus_other += g_other;
        } else {
            /* what jobs do not hold on a node that takes work (jobs on a
             * draining node are counted once: in what it holds) */
            gpus_free += gpus > used ? gpus - used : 0;
            if (n->cpus_used >= 0)
                cpus_free += cpus > (double)n->cpus_used
                                 ? cpus - (double)n->cpus_used
                                 : 0;
        }
        if (n->cpus_used >= 0)
            cpus_used += (double)n->cpus_used;
        else
            cpus_used_known = 0;
        for (size_t p = 0; p < n->partitions.nr; p++) {
            struct pagg *a = pagg_for(&pt, n->partitions.v[p]);
            a->nodes[ci] += 1;
            a->cpus += cpus;
            a->cpus_other += c_other;
            a->gpus += gpus;
            a->gpus_used += used;
            a->gpus_idle += unavailable ? 0 : (gpus > used ? gpus - used : 0);
        }
        if (n->partitions.nr == 0)
            nopart[ci] += 1;
    }
    /* The job-derived partition families (render_jobs(), when the job
     * listing succeeded) get a 0 for every partition a node is in, so
     * that a partition without a pending or running job says 0, not
     * nothing (doc/observability-0242.md "Series budget": 9 per
     * partition); prom_family() finds the families render_jobs made. */
    if (s->have_jobs) {
        static const char *const jobfams[] = {
            "partition_jobs_pending", "partition_jobs_running",
            "partition_cpus_allocated", "partition_gpus_running"};
        for (size_t k = 0; k < 4; k++)
            pjob[k] = sm_fam(set, px, jobfams[k], NULL);
    }
    for (size_t i = 0; i < pt.nr; i++) {
        const struct pagg *a = &pt.v[i];
        struct prom_labels pl = sm_labels(
            set, (const char *[]){"cluster", cl, "partition", a->name, NULL});
        for (size_t c = 0; c < NODE_CATS; c++)
            if (a->nodes[c] > 0)
                prom_add_labels(cat[c], &pl, a->nodes[c]);
        prom_add_labels(pct, &pl, a->cpus);
        prom_add_labels(pci, &pl, a->cpus_other);
        prom_add_labels(pgt, &pl, a->gpus);
        prom_add_labels(pga, &pl, a->gpus_used);
        prom_add_labels(pgi, &pl, a->gpus_idle);
        for (size_t k = 0; k < 4 && s->have_jobs; k++)
            prom_add_labels(pjob[k], &pl, 0);
    }
    for (size_t c = 0; c < NODE_CATS; c++)
        if (nopart[c] > 0)
            sm_add(cat[c], (const char *[]){"cluster", cl, NULL}, nopart[c]);
    free(pt.v);
    free(pt.slot);
    strbuf_release(&parts);

    {
        const char *l[] = {"cluster", cl, NULL};
        /* per node where the scheduler says what each holds (Flux's
         * allocated set, Slurm's GresUsed), else from the jobs */
        double calloc_ = cpus_used_known ? cpus_used
                         : jobs_cpus < 0 ? 0
                                         : jobs_cpus;
        double galloc =
            gpus_used_known ? gpus_used : (jobs_gpus < 0 ? 0 : jobs_gpus);
        double cidle =
            cpus_used_known ? cpus_free : cpus_total - calloc_ - cpus_other;
        double gidle =
            gpus_used_known ? gpus_free : gpus_total - galloc - gpus_other;
        sm_add(sm_fam(set, px, "cpus_total", "CPUs in the cluster"), l,
               cpus_total);
        sm_add(sm_fam(set, px, "cpus_other",
                      "CPUs on down, drained or unknown nodes"),
               l, cpus_other);
        if (jobs_cpus >= 0 || cpus_used_known) {
            sm_add(
                sm_fam(set, px, "cpus_alloc", "CPUs allocated to running jobs"),
                l, calloc_);
            sm_add(sm_fam(set, px, "cpus_idle", "CPUs free on available nodes"),
                   l, cidle > 0 ? cidle : 0);
        }
        sm_add(sm_fam(set, px, "gpus_total", "GPUs in the cluster"), l,
               gpus_total);
        sm_add(sm_fam(set, px, "gpus_other",
                      "GPUs on down, drained or unknown nodes"),
               l, gpus_other);
        if (gpus_used_known || jobs_gpus >= 0) {
            sm_add(sm_fam(set, px, "gpus_alloc", "GPUs allocated to jobs"), l,
                   galloc);
            sm_add(sm_fam(set, px, "gpus_idle", "GPUs free on available nodes"),
                   l, gidle > 0 ? gidle : 0);
        }
    }
}
