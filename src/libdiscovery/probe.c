/*
 * probe.c - the probe registry, inventory assembly, and what the built-in
 * probes share: running a read-only command through the transport and
 * classifying the outcome (a tool that is absent is "not available", a
 * transport that failed is an error the user must see, doc/reference.md
 * §6.29), freeing and JSON for the probe.h structs, and count-only GPU
 * entries for schedulers that only give counts. The probes themselves live
 * one per file (probe_slurm.c, probe_flux.c, probe_nvsmi.c) and reach the
 * small shared helpers through probe_int.h; the parsing is done by the
 * pure parsers next to them (parse_sinfo.c, parse_flux_resource.c,
 * parse_nvidia_smi.c), so the probes only decide what to run.
 */
#include "libdiscovery/probe_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* ---- running ---- */

int probe_run(struct transport *t, const char *const *argv,
              struct transport_result *res, exa_error_t *err)
{
    exa_error_t e = EXA_ERROR_INIT;
    if (transport_run(t, argv, NULL, 0, 0, res, &e) < 0) {
        /* The local transport reports a missing program as a failure to
         * start it; for a probe that means the tool is absent. */
        if (t->ops && t->ops->kind && !strcmp(t->ops->kind, "local") &&
            e.code == EXA_ETRANSPORT && strstr(e.text, "cannot run '"))
            return 0;
        if (err)
            *err = e;
        return -1;
    }
    if (res->rc == 127)
        return 0;
    return 1;
}

/* ---- freeing and JSON ---- */

void node_infos_free(struct node_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].gpu_model);
        free(v[i].state);
        free(v[i].raw_state);
        free(v[i].addr);
        strvec_clear(&v[i].partitions);
    }
    free(v);
}

void gpu_infos_free(struct gpu_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].node);
        free(v[i].uuid);
        free(v[i].name);
        free(v[i].state);
    }
    free(v);
}

void partition_infos_free(struct partition_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].state);
        free(v[i].max_time);
    }
    free(v);
}

void cluster_caps_release(struct cluster_caps *c)
{
    free(c->scheduler);
    free(c->version);
    partition_infos_free(c->partitions, c->npartitions);
    strvec_clear(&c->notes);
    memset(c, 0, sizeof(*c));
}

void inventory_release(struct inventory *inv)
{
    cluster_caps_release(&inv->caps);
    node_infos_free(inv->nodes, inv->nnodes);
    gpu_infos_free(inv->gpus, inv->ngpus);
    memset(inv, 0, sizeof(*inv));
}

static json_t *int_or_null(long long v)
{
    return v < 0 ? json_null() : json_integer(v);
}

json_t *cluster_caps_json(const struct cluster_caps *c)
{
    json_t *o = json_object(), *parts = json_array(), *notes = json_array();
    for (size_t i = 0; i < c->npartitions; i++) {
        const struct partition_info *p = &c->partitions[i];
        json_t *po = json_object();
        jx_set(po, "name", jx_str(p->name));
        jx_set(po, "state", jx_str(p->state));
        jx_set(po, "default", json_boolean(p->is_default));
        jx_set(po, "max_time", jx_str(p->max_time));
        jx_set(po, "max_nodes", int_or_null(p->max_nodes));
        jx_set(po, "total_nodes", int_or_null(p->total_nodes));
        jx_set(po, "total_cpus", int_or_null(p->total_cpus));
        json_array_append_new(parts, po);
    }
    for (size_t i = 0; i < c->notes.nr; i++)
        json_array_append_new(notes, jx_str(c->notes.v[i]));
    jx_set(o, "scheduler", jx_str(c->scheduler ? c->scheduler : "unknown"));
    jx_set(o, "version", jx_str(c->version));
    jx_set(o, "available", json_boolean(c->available));
    jx_set(o, "accounting", json_boolean(c->accounting));
    jx_set(o, "gpus_present", json_boolean(c->gpus_present));
    jx_set(o, "total_nodes", json_integer(c->total_nodes));
    jx_set(o, "total_cpus", json_integer(c->total_cpus));
    jx_set(o, "total_gpus", json_integer(c->total_gpus));
    jx_set(o, "partitions", parts);
    jx_set(o, "notes", notes);
    return o;
}

json_t *node_infos_json(const struct node_info *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object(), *p = json_array();
        for (size_t k = 0; k < v[i].partitions.nr; k++)
            json_array_append_new(p, jx_str(v[i].partitions.v[k]));
        jx_set(o, "name", jx_str(v[i].name));
        jx_set(o, "state", jx_str(v[i].state));
        jx_set(o, "raw_state", jx_str(v[i].raw_state));
        jx_set(o, "cpus", int_or_null(v[i].cpus));
        jx_set(o, "memory_mb", int_or_null(v[i].mem_mb));
        jx_set(o, "gpus", int_or_null(v[i].gpus));
        jx_set(o, "gpus_used", int_or_null(v[i].gpus_used));
        jx_set(o, "gpu_model", jx_str(v[i].gpu_model));
        jx_set(o, "partition",
               jx_str(v[i].partitions.nr ? v[i].partitions.v[0] : NULL));
        jx_set(o, "partitions", p);
        json_array_append_new(a, o);
    }
    return a;
}

json_t *gpu_infos_json(const struct gpu_info *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        jx_set(o, "node", jx_str(v[i].node));
        jx_set(o, "index", int_or_null(v[i].index));
        jx_set(o, "uuid", jx_str(v[i].uuid));
        jx_set(o, "model", jx_str(v[i].name));
        jx_set(o, "memory_mb", int_or_null(v[i].mem_total_mb));
        jx_set(o, "memory_used_mb", int_or_null(v[i].mem_used_mb));
        jx_set(o, "utilization_pct", jx_real(v[i].util_pct));
        jx_set(o, "power_w", jx_real(v[i].power_w));
        jx_set(o, "state", jx_str(v[i].state));
        json_array_append_new(a, o);
    }
    return a;
}

/* What a count-only GPU of node d can be said to be: the node's state
 * when it takes no work (down, drain); "allocated" when the count of used
 * GPUs is all of them; "idle" on an idle node (no job holds anything
 * there) whose count is 0 or not known; else "unknown". A used count of 0
 * on a node with jobs says nothing: GPUs shared as Slurm shards or MPS,
 * or gres/gpu:no_consume, are busy with gpu counted 0, and a completing
 * job's processes may still hold them. */
static const char *count_gpu_state(const struct node_info *d)
{
    if (d->state && (!strcmp(d->state, "down") || !strcmp(d->state, "drain")))
        return d->state;
    if (d->gpus_used > 0)
        return d->gpus_used >= d->gpus ? "allocated" : "unknown";
    if (d->state && !strcmp(d->state, "idle"))
        return "idle";
    return "unknown";
}

/* A node state word that says a job is completing there (Slurm:
 * StateLong's "COMPLETING" and "ALLOCATED+", sinfo's "comp"): its GPUs
 * are released in GresUsed while the job's processes may still hold
 * them. */
static int completing(const char *raw)
{
    size_t n = raw ? strlen(raw) : 0;
    return n && (raw[n - 1] == '+' || !strncasecmp(raw, "comp", 4));
}

/* The state of GPU k of node d: by index where d names its GPUs in use
 * (every index below its GPU count) and no job is completing there:
 * those listed are allocated; the others idle on an idle or mixed node,
 * unknown on an allocated one (a job holding the whole node holds GPUs
 * no index names); else count_gpu_state(d). */
static const char *gpu_state(const struct node_info *d, long long k)
{
    const char *st = d->state;
    if (st && (!strcmp(st, "down") || !strcmp(st, "drain")))
        return st;
    if (!d->has_gpu_used_mask || d->gpus <= 0 || d->gpus > 64 ||
        (d->gpus < 64 && d->gpu_used_mask >> d->gpus) || !st ||
        (strcmp(st, "idle") && strcmp(st, "mixed") &&
         strcmp(st, "allocated")) ||
        completing(d->raw_state))
        return count_gpu_state(d);
    if (k < 64 && (d->gpu_used_mask >> k & 1))
        return "allocated";
    if (!strcmp(st, "idle") || !strcmp(st, "mixed"))
        return "idle";
    return "unknown";
}

/* GPU entries (node, index) for schedulers that give node records. */
void probe_gpus_from_nodes(const struct node_info *nodes, size_t nn,
                           struct gpu_info **out, size_t *n)
{
    struct gpu_info *v = NULL;
    size_t nr = 0, alloc = 0;
    for (size_t i = 0; i < nn; i++)
        for (long long k = 0; k < nodes[i].gpus; k++) {
            struct gpu_info *g;
            ALLOC_GROW(v, nr + 1, alloc);
            g = &v[nr++];
            memset(g, 0, sizeof(*g));
            g->node = xstrdup(nodes[i].name);
            g->index = k;
            g->name = nodes[i].gpu_model ? xstrdup(nodes[i].gpu_model) : NULL;
            g->mem_total_mb = g->mem_used_mb = -1;
            g->util_pct = g->power_w = NAN;
            g->state = xstrdup(gpu_state(&nodes[i], k));
        }
    *out = v;
    *n = nr;
}

int probe_gpus_by_count(struct transport *t,
                        int (*list)(struct transport *, struct node_info **,
                                    size_t *, exa_error_t *),
                        struct gpu_info **out, size_t *n, exa_error_t *err)
{
    struct node_info *nodes = NULL;
    size_t nn = 0;
    if (list(t, &nodes, &nn, err) < 0)
        return -1;
    probe_gpus_from_nodes(nodes, nn, out, n);
    node_infos_free(nodes, nn);
    return 0;
}

/* ---- registry ---- */

#define MAX_PROBES 16
static const struct probe *probes[MAX_PROBES] = {&probe_flux, &probe_slurm,
                                                 &probe_nvsmi};
static size_t nprobes = 3;

int probe_register(const struct probe *p)
{
    for (size_t i = 0; i < nprobes; i++)
        if (!strcmp(probes[i]->name, p->name)) {
            probes[i] = p;
            return 0;
        }
    if (nprobes == MAX_PROBES)
        return -1;
    probes[nprobes++] = p;
    return 0;
}

const struct probe *probe_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < nprobes; i++)
        if (!strcmp(probes[i]->name, name))
            return probes[i];
    for (size_t i = 0; i < nprobes; i++)
        if (!strcmp(probes[i]->scheduler, name))
            return probes[i];
    return NULL;
}

const struct probe *const *probe_all(size_t *n)
{
    *n = nprobes;
    return probes;
}

/* ---- inventory ---- */

static int gpus_lack_models(const struct gpu_info *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (g[i].name)
            return 0;
    return 1;
}

int probe_inventory(struct transport *t, const char *forced,
                    struct inventory *inv, exa_error_t *err)
{
    const struct probe *p = NULL;
    char *version = NULL;
    if (forced && *forced && strcmp(forced, "auto")) {
        int a;
        p = probe_find(forced);
        if (!p)
            return exa_err(err, EXA_EUSAGE, "unknown scheduler probe: '%s'",
                           forced);
        a = p->available(t, &version, err);
        if (a < 0)
            return -1;
        if (!a) {
            inv->caps.scheduler = xstrdup(p->scheduler);
            strvec_pushf(&inv->caps.notes, "%s does not answer on '%s'",
                         p->name, t->host ? t->host : "localhost");
            return 0;
        }
    } else {
        size_t n;
        const struct probe *const *all = probe_all(&n);
        for (size_t i = 0; i < n && !p; i++) {
            int a = all[i]->available(t, &version, err);
            if (a < 0)
                return -1;
            if (a)
                p = all[i];
        }
        if (!p) {
            inv->caps.scheduler = xstrdup("unknown");
            strvec_push(&inv->caps.notes, "no known scheduler detected");
            return 0;
        }
    }
    inv->caps.scheduler = xstrdup(p->scheduler);
    inv->caps.version = version;
    inv->caps.available = 1;
    if (p->capabilities(t, &inv->caps, err) < 0 ||
        p->list_nodes(t, &inv->nodes, &inv->nnodes, err) < 0)
        goto fail;
    if (p == &probe_nvsmi) {
        /* The same host answered both; derive the GPUs again (cheap) */
        if (p->list_gpus(t, &inv->gpus, &inv->ngpus, err) < 0)
            goto fail;
    } else {
        probe_gpus_from_nodes(inv->nodes, inv->nnodes, &inv->gpus, &inv->ngpus);
        if (inv->ngpus && gpus_lack_models(inv->gpus, inv->ngpus)) {
            struct gpu_info *g = NULL;
            size_t ng = 0;
            exa_error_t e2 = EXA_ERROR_INIT;
            int a = probe_nvsmi.available(t, NULL, &e2);
            if (a == 1 && probe_nvsmi.list_gpus(t, &g, &ng, &e2) == 0 && ng) {
                gpu_infos_free(inv->gpus, inv->ngpus);
                inv->gpus = g;
                inv->ngpus = ng;
                strvec_push(&inv->caps.notes,
                            "GPU device details enriched via nvidia-smi");
            } else {
                gpu_infos_free(g, ng);
            }
        }
    }
    for (size_t i = 0; i < inv->nnodes; i++) {
        inv->caps.total_nodes++;
        if (inv->nodes[i].cpus > 0)
            inv->caps.total_cpus += inv->nodes[i].cpus;
        if (inv->nodes[i].gpus > 0)
            inv->caps.total_gpus += inv->nodes[i].gpus;
    }
    inv->caps.gpus_present = inv->caps.total_gpus > 0;
    return 0;
fail:
    inventory_release(inv);
    return -1;
}
