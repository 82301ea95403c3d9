/*
 * file_sd.c - Prometheus file_sd target groups from the fleet's saved
 * node snapshots, rendered to the bytes callers write with
 * atomic_write_file() (libutil/atomic.h).
 *
 * Prometheus watches the file with inotify and re-reads it on every
 * change, so two properties matter more than anything else: it must never
 * see a half-written file (it would drop every target until the next
 * write), and an unchanged fleet must rewrite identical bytes (so a cron
 * job that regenerates the file every minute causes no churn). The first
 * is libutil's temp-file + fsync + rename in the same directory; the
 * second is a fixed order (clusters and nodes sorted by name, groups by
 * job) and sorted JSON keys.
 */
#include "libobserve/file_sd.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *group(const struct fv_cluster *c, const char *job,
                     const char *tenant, int port, int gpu_only,
                     size_t *ntargets)
{
    json_t *targets = json_array(), *labels, *g;
    struct strvec names = STRVEC_INIT;
    for (size_t i = 0; i < c->nr_nodes; i++) {
        const struct fv_node *n = &c->nodes[i];
        if (gpu_only && n->gpus <= 0)
            continue;
        /* the address Prometheus can reach: Slurm's NodeAddr (which
         * defaults to NodeHostname, then NodeName), else the name */
        strvec_pushf(&names, "%s:%d", n->addr ? n->addr : n->name, port);
    }
    if (names.nr == 0) {
        json_decref(targets);
        return NULL;
    }
    /* node-name order whatever order the caller's snapshot had */
    qsort(names.v, names.nr, sizeof(*names.v), cmp_str);
    for (size_t i = 0; i < names.nr; i++)
        json_array_append_new(targets, jx_str(names.v[i]));
    *ntargets += names.nr;
    strvec_clear(&names);
    labels = json_object();
    jx_set(labels, "cluster", jx_str(c->name));
    jx_set(labels, "scheduler",
           jx_str(c->scheduler ? c->scheduler : "unknown"));
    jx_set(labels, "tenant", jx_str(tenant));
    jx_set(labels, "job", jx_str(job));
    g = json_object();
    jx_set(g, "targets", targets);
    jx_set(g, "labels", labels);
    return g;
}

json_t *file_sd_build(const struct fv_fleet *fleet, const char *tenant,
                      size_t *ntargets)
{
    json_t *groups = json_array(), *g;
    size_t n = 0;
    if (!tenant || !*tenant)
        tenant = "default";
    for (size_t i = 0; i < fleet->nr; i++) {
        const struct fv_cluster *c = &fleet->clusters[i];
        const char *t = c->tenant ? c->tenant : tenant;
        /* (cluster, job) order: "dcgm" sorts before "node" */
        if ((g = group(c, "dcgm", t, c->dcgm_port, 1, &n)))
            json_array_append_new(groups, g);
        if ((g = group(c, "node", t, c->node_port, 0, &n)))
            json_array_append_new(groups, g);
    }
    if (ntargets)
        *ntargets = n;
    return groups;
}

char *file_sd_render(const json_t *groups)
{
    char *s = json_dumps(groups, JSON_INDENT(2) | JSON_SORT_KEYS);
    char *out;
    if (!s)
        BUG("cannot serialize file_sd groups");
    out = xstrfmt("%s\n", s);
    free(s);
    return out;
}
