/*
 * capacity.c - the fleet's capacity view (see capacity.h). Node counting
 * is placement's (place_capacity_of), so `capacity` and `place` never
 * disagree about what is idle.
 */
#include "libfleet/capacity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libstore/finops.h"
#include "libstore/nodes.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"

double capacity_rate_from_env(const char *name, double def)
{
    const char *e = getenv(name);
    char *end;
    double v;
    if (!e || !*e)
        return def;
    errno = 0;
    v = strtod(e, &end);
    if (errno || end == e || *end || !isfinite(v) || v < 0)
        return def;
    return v;
}

int capacity_hours(store_t *st, const char *cluster, double *gpu_hours,
                   double *cpu_hours, exa_error_t *err)
{
    return store_job_hours(st, cluster, gpu_hours, cpu_hours, err);
}

static double round_to(double v, double scale)
{
    return round(v * scale) / scale;
}

void capacity_rows_free(struct capacity_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].scheduler);
    }
    free(rows);
}

int capacity_report(store_t *st, const char *regpath,
                    struct capacity_row **rows, size_t *n, exa_error_t *err)
{
    struct fleet f = {NULL, 0};
    struct capacity_row *v = NULL;
    size_t nr = 0, alloc = 0;
    char *path = regpath ? xstrdup(regpath) : registry_default_path(err);
    double grate =
        capacity_rate_from_env("GPU_COST_PER_HOUR", CAPACITY_GPU_COST_PER_HOUR);
    double crate =
        capacity_rate_from_env("CPU_COST_PER_HOUR", CAPACITY_CPU_COST_PER_HOUR);
    struct place_ask ask = {0, 0, 1, NULL};
    int rc = -1, max_age = place_max_age_from_env();

    if (!path || fleet_load(st, path, &f, err) < 0)
        goto out;
    for (size_t i = 0; i < f.nr; i++) {
        const struct fleet_cluster *c = &f.v[i];
        struct node_row *nodes = NULL;
        size_t nn = 0;
        struct place_capacity cap;
        struct capacity_row *r;
        double gh = 0, ch = 0;
        if (c->state != CLUSTER_ACTIVE)
            continue;
        if (store_nodes_list(st, c->def.name, &nodes, &nn, err) < 0 ||
            capacity_hours(st, c->def.name, &gh, &ch, err) < 0) {
            node_rows_free(nodes, nn);
            goto out;
        }
        place_capacity_of(nodes, nn, &ask, time(NULL), &cap);
        node_rows_free(nodes, nn);
        ALLOC_GROW(v, nr + 1, alloc);
        r = &v[nr++];
        memset(r, 0, sizeof(*r));
        r->name = xstrdup(c->def.name);
        r->scheduler = xstrdup(c->def.scheduler);
        r->total_gpus = cap.total_gpus;
        r->idle_gpus = cap.idle_gpus;
        r->total_nodes = cap.total_nodes;
        r->idle_nodes = cap.idle_nodes;
        r->utilization_pct =
            cap.total_gpus ? round_to(100.0 * (cap.total_gpus - cap.idle_gpus) /
                                          cap.total_gpus,
                                      10)
                           : 0;
        r->gpu_hours_used = round_to(gh, 100);
        r->cpu_hours_used = round_to(ch, 100);
        r->cost_usd = round_to(gh * grate + ch * crate, 100);
        r->age_s = cap.age_s;
        r->captured_at = cap.captured_at;
        r->stale = !cap.total_nodes || cap.age_s < 0 ||
                   (max_age > 0 && cap.age_s > max_age);
    }
    *rows = v;
    *n = nr;
    v = NULL;
    nr = 0;
    rc = 0;
out:
    capacity_rows_free(v, nr);
    fleet_release(&f);
    free(path);
    return rc;
}

json_t *capacity_json(const struct capacity_row *rows, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct capacity_row *r = &rows[i];
        json_t *o = json_object();
        jx_set(o, "name", jx_str(r->name));
        jx_set(o, "scheduler", jx_str(r->scheduler));
        jx_set(o, "total_gpus", json_integer(r->total_gpus));
        jx_set(o, "idle_gpus", json_integer(r->idle_gpus));
        jx_set(o, "total_nodes", json_integer(r->total_nodes));
        jx_set(o, "idle_nodes", json_integer(r->idle_nodes));
        jx_set(o, "utilization_pct", jx_real(r->utilization_pct));
        jx_set(o, "gpu_hours_used", jx_real(r->gpu_hours_used));
        jx_set(o, "cpu_hours_used", jx_real(r->cpu_hours_used));
        jx_set(o, "cost_usd", jx_real(r->cost_usd));
        jx_set(o, "snapshot_age_s",
               r->age_s < 0 ? json_null() : json_integer((json_int_t)r->age_s));
        jx_set(o, "captured_at", place_iso_or_null(r->captured_at));
        jx_set(o, "stale", json_boolean(r->stale));
        json_array_append_new(a, o);
    }
    return a;
}
