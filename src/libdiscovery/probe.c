/*
 * probe.c - the built-in probes (slurm, flux, nvidia-smi), their registry
 * and inventory assembly. Every command is read-only and goes through the
 * transport; the parsing is done by the pure parsers next to this file
 * (parse_sinfo.c, parse_flux_resource.c, parse_nvidia_smi.c), so this file
 * only decides what to run and how to classify what came back: a tool
 * that is absent is "not available", a transport that failed is an error
 * the user must see (shared/REFERENCE.md §6.29).
 */
#include "libdiscovery/probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libdiscovery/parse_nvidia_smi.h"
#include "libdiscovery/parse_sinfo.h"
#include "libsched/parse_flux.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/*
 * Node listing: one row per node and partition, '|' after every field and
 * no padding (an empty width in --Format prints the value as is), so no
 * value can shift a column. Header names: NODELIST|CPUS|MEMORY|GRES|
 * GRES_USED|STATE|PARTITION. Source: sinfo(1) "-O, --Format".
 */
static const char *const SINFO_NODES_ARGV[] = {
    "sinfo", "-N",
    "--Format=NodeList:|,CPUs:|,Memory:|,Gres:|,GresUsed:|,StateLong:|,"
    "Partition:",
    NULL};

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

/* Run argv and require exit 0: 1 ok, 0 absent or non-zero, -1 transport. */
static int run_ok(struct transport *t, const char *const *argv,
                  struct transport_result *res, exa_error_t *err)
{
    int r = probe_run(t, argv, res, err);
    if (r <= 0)
        return r;
    return res->rc == 0;
}

/* A command that ran but failed: the scheduler's own words. */
static int sched_fail(struct transport *t, const char *prog,
                      const struct transport_result *res, exa_error_t *err)
{
    const struct strbuf *s = res->err.len ? &res->err : &res->out;
    size_t n = 0;
    while (n < s->len && s->buf[n] != '\n' && n < 200)
        n++;
    return exa_err(err, EXA_ESCHED, "%s on '%s' exited %d%s%.*s", prog,
                   t->host ? t->host : "localhost", res->rc, n ? ": " : "",
                   (int)n, s->buf);
}

static char *first_line_dup(const struct strbuf *sb)
{
    size_t n = 0;
    while (n < sb->len && sb->buf[n] != '\n')
        n++;
    while (n && (sb->buf[n - 1] == ' ' || sb->buf[n - 1] == '\r'))
        n--;
    return n ? xstrndup(sb->buf, n) : NULL;
}

/* ---- freeing and JSON ---- */

void node_infos_free(struct node_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].gpu_model);
        free(v[i].state);
        free(v[i].raw_state);
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

/* Count-only GPU entries (node, index) for schedulers that give counts. */
static void gpus_from_nodes(const struct node_info *nodes, size_t nn,
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
            g->state = xstrdup("unknown");
        }
    *out = v;
    *n = nr;
}

static int gpus_by_count(struct transport *t,
                         int (*list)(struct transport *, struct node_info **,
                                     size_t *, exa_error_t *),
                         struct gpu_info **out, size_t *n, exa_error_t *err)
{
    struct node_info *nodes = NULL;
    size_t nn = 0;
    if (list(t, &nodes, &nn, err) < 0)
        return -1;
    gpus_from_nodes(nodes, nn, out, n);
    node_infos_free(nodes, nn);
    return 0;
}

/* ---- slurm ---- */

static int slurm_available(struct transport *t, char **version,
                           exa_error_t *err)
{
    const char *argv[] = {"sinfo", "--version", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1 && version)
        *version = first_line_dup(&r.out);
    transport_result_release(&r);
    return ok;
}

static char *kv_dup(const char *line, const char *key)
{
    const char *p = line;
    size_t kl = strlen(key);
    while ((p = strstr(p, key))) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1, *e = v;
            while (*e && *e != ' ' && *e != '\n')
                e++;
            return xstrndup(v, (size_t)(e - v));
        }
        p += kl;
    }
    return NULL;
}

static long long kv_int(const char *line, const char *key)
{
    char *v = kv_dup(line, key), *end;
    long long r = -1;
    if (v && *v) {
        r = strtoll(v, &end, 10);
        if (*end || r < 0)
            r = -1;
    }
    free(v);
    return r;
}

int parse_scontrol_partitions(const char *buf, size_t len,
                              struct partition_info **out, size_t *n,
                              exa_error_t *err)
{
    struct partition_info *v = NULL;
    size_t nr = 0, alloc = 0, i = 0;
    while (i < len) {
        size_t j = i;
        char *line, *name;
        while (j < len && buf[j] != '\n')
            j++;
        line = xstrndup(buf + i, j - i);
        i = j + 1;
        name = kv_dup(line, "PartitionName");
        if (name) {
            struct partition_info *p;
            char *def = kv_dup(line, "Default");
            ALLOC_GROW(v, nr + 1, alloc);
            p = &v[nr++];
            p->name = name;
            p->state = kv_dup(line, "State");
            p->max_time = kv_dup(line, "MaxTime");
            p->max_nodes = kv_int(line, "MaxNodes");
            p->total_nodes = kv_int(line, "TotalNodes");
            p->total_cpus = kv_int(line, "TotalCPUs");
            p->is_default = def && !strcmp(def, "YES");
            free(def);
        }
        free(line);
    }
    if (!nr && len && !memchr(buf, '=', len)) {
        free(v);
        return exa_err(err, EXA_EPARSE,
                       "scontrol show partition printed no partitions");
    }
    *out = v;
    *n = nr;
    return 0;
}

static int slurm_caps(struct transport *t, struct cluster_caps *caps,
                      exa_error_t *err)
{
    const char *acct[] = {"sacctmgr", "-n", "-P", "list", "cluster", NULL};
    const char *part[] = {"scontrol", "show", "partition", "-o", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok;
    if (!caps->version && slurm_available(t, &caps->version, err) < 0)
        return -1;
    ok = run_ok(t, acct, &r, err);
    if (ok < 0)
        goto fail;
    caps->accounting = ok == 1 && r.out.len > 0;
    if (!caps->accounting)
        strvec_push(&caps->notes, "slurm accounting (slurmdbd) not "
                                  "reachable \u2014 accounts and QOS cannot "
                                  "be validated");
    transport_result_release(&r);
    r = (struct transport_result)TRANSPORT_RESULT_INIT;
    ok = run_ok(t, part, &r, err);
    if (ok < 0)
        goto fail;
    if (ok == 1 &&
        parse_scontrol_partitions(r.out.buf, r.out.len, &caps->partitions,
                                  &caps->npartitions, NULL) < 0)
        strvec_push(&caps->notes, "could not read 'scontrol show partition'");
    transport_result_release(&r);
    return 0;
fail:
    transport_result_release(&r);
    return -1;
}

static char *join_or_null(const char *s)
{
    return s && *s ? xstrdup(s) : NULL;
}

static int slurm_nodes(struct transport *t, struct node_info **out, size_t *n,
                       exa_error_t *err)
{
    struct transport_result r = TRANSPORT_RESULT_INIT;
    struct sinfo_result sr;
    const char *kind = NULL;
    struct node_info *v = NULL;
    int ran = probe_run(t, SINFO_NODES_ARGV, &r, err), rc = -1;
    memset(&sr, 0, sizeof(sr));
    if (ran < 0)
        goto out;
    if (ran == 0 || r.rc != 0) {
        sched_fail(t, "sinfo", &r, err);
        goto out;
    }
    if (sinfo_parse(r.out.buf, r.out.len, &sr, &kind, err) < 0) {
        exa_err_prefix(err, "sinfo on '%s'", t->host);
        goto out;
    }
    v = xcalloc(sr.nnodes ? sr.nnodes : 1, sizeof(*v));
    for (size_t i = 0; i < sr.nnodes; i++) {
        const struct sinfo_node *s = &sr.nodes[i];
        struct node_info *d = &v[i];
        d->name = xstrdup(s->name);
        d->cpus = s->has_cpus ? s->cpus : -1;
        d->mem_mb = s->has_mem ? s->mem_mb : -1;
        d->gpus = s->has_gres ? s->gpus : -1;
        d->gpus_used = s->has_gres_used ? s->gpus_used : -1;
        d->gpu_model = join_or_null(s->gpu_type);
        d->state = xstrdup(s->state ? s->state : "unknown");
        d->raw_state = join_or_null(s->raw_state);
        strvec_init(&d->partitions);
        for (size_t k = 0; k < s->partitions.nr; k++)
            strvec_push(&d->partitions, s->partitions.v[k]);
    }
    *out = v;
    *n = sr.nnodes;
    rc = 0;
out:
    sinfo_result_free(&sr);
    transport_result_release(&r);
    return rc;
}

static int slurm_gpus(struct transport *t, struct gpu_info **out, size_t *n,
                      exa_error_t *err)
{
    return gpus_by_count(t, slurm_nodes, out, n, err);
}

/* ---- flux ---- */

static int flux_available(struct transport *t, char **version, exa_error_t *err)
{
    const char *argv[] = {"flux", "version", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1 && version) {
        const char *c = strstr(r.out.buf, "commands:");
        if (c) {
            struct strbuf sb = STRBUF_INIT;
            const char *e = strchr(c, '\n');
            c += strlen("commands:");
            strbuf_add(&sb, c, e ? (size_t)(e - c) : strlen(c));
            strbuf_trim(&sb);
            *version = strbuf_detach(&sb, NULL);
        } else {
            *version = first_line_dup(&r.out);
        }
    }
    transport_result_release(&r);
    return ok;
}

static int flux_caps(struct transport *t, struct cluster_caps *caps,
                     exa_error_t *err)
{
    const char *acct[] = {"flux", "account", "--help", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok;
    if (!caps->version && flux_available(t, &caps->version, err) < 0)
        return -1;
    ok = run_ok(t, acct, &r, err);
    transport_result_release(&r);
    if (ok < 0)
        return -1;
    caps->accounting = ok == 1;
    if (!caps->accounting)
        strvec_push(&caps->notes, "flux-accounting not detected \u2014 "
                                  "--bank/--queue flags may be ignored");
    return 0;
}

static long long jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return (long long)json_real_value(v);
    return -1;
}

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

int flux_r_per_node(const char *buf, size_t len, struct strvec *hosts,
                    long long **cores, long long **gpus, exa_error_t *err)
{
    json_t *r = json_loadb(buf, len, 0, NULL), *ex, *rl, *nl;
    long long *c = NULL, *g = NULL;
    int rc = -1;
    if (!r || !(ex = json_object_get(r, "execution")) ||
        !json_is_array(rl = json_object_get(ex, "R_lite")) ||
        !json_is_array(nl = json_object_get(ex, "nodelist"))) {
        exa_err(err, EXA_EPARSE, "flux resource R: not an R object");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(nl); i++) {
        const char *h = json_string_value(json_array_get(nl, i));
        if (!h || flux_hostlist_expand(h, hosts) < 0) {
            exa_err(err, EXA_EPARSE, "flux resource R: bad nodelist");
            goto out;
        }
    }
    c = xcalloc(hosts->nr ? hosts->nr : 1, sizeof(*c));
    g = xcalloc(hosts->nr ? hosts->nr : 1, sizeof(*g));
    for (size_t i = 0; i < json_array_size(rl); i++) {
        const json_t *e = json_array_get(rl, i);
        const json_t *ch = json_object_get(e, "children");
        const char *ranks = json_string_value(json_object_get(e, "rank"));
        long long *ids = NULL;
        size_t nids = 0;
        long long nc =
            idset_count(json_string_value(json_object_get(ch, "core")));
        long long ng =
            idset_count(json_string_value(json_object_get(ch, "gpu")));
        if (!ranks || flux_idset_expand(ranks, &ids, &nids) < 0) {
            free(ids);
            exa_err(err, EXA_EPARSE, "flux resource R: bad rank idset");
            goto out;
        }
        for (size_t k = 0; k < nids; k++) {
            if (ids[k] < 0 || (size_t)ids[k] >= hosts->nr)
                continue;
            c[ids[k]] += nc > 0 ? nc : 0;
            g[ids[k]] += ng > 0 ? ng : 0;
        }
        free(ids);
    }
    *cores = c;
    *gpus = g;
    c = g = NULL;
    rc = 0;
out:
    free(c);
    free(g);
    json_decref(r);
    return rc;
}

/*
 * A `flux resource list` row that groups several nodes cannot be split
 * exactly, so those nodes have unknown cpus/gpus; the resource set R
 * (`flux resource R`, RFC 20) has them per rank. Fill what is unknown.
 */
static void flux_fill_per_rank(struct transport *t, struct node_info *v,
                               size_t n)
{
    const char *argv[] = {"flux", "resource", "R", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    struct strvec hosts = STRVEC_INIT;
    long long *cores = NULL, *gpus = NULL;
    size_t i;
    for (i = 0; i < n && v[i].cpus >= 0 && v[i].gpus >= 0; i++)
        ;
    if (i == n)
        return;
    if (run_ok(t, argv, &r, NULL) == 1 &&
        flux_r_per_node(r.out.buf, r.out.len, &hosts, &cores, &gpus, NULL) == 0)
        for (i = 0; i < n; i++)
            for (size_t h = 0; h < hosts.nr; h++)
                if (!strcmp(hosts.v[h], v[i].name)) {
                    if (v[i].cpus < 0)
                        v[i].cpus = cores[h];
                    if (v[i].gpus < 0)
                        v[i].gpus = gpus[h];
                    break;
                }
    free(cores);
    free(gpus);
    strvec_clear(&hosts);
    transport_result_release(&r);
}

static int flux_nodes(struct transport *t, struct node_info **out, size_t *n,
                      exa_error_t *err)
{
    const char *argv[] = {"flux", "resource", "list", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    const char *kind = NULL;
    json_t *doc = NULL, *nodes;
    struct node_info *v = NULL;
    size_t nr;
    int ran = probe_run(t, argv, &r, err), rc = -1;
    if (ran < 0)
        goto out;
    if (ran == 0 || r.rc != 0) {
        sched_fail(t, "flux resource list", &r, err);
        goto out;
    }
    doc = flux_resource_parse(r.out.buf, r.out.len, &kind, err);
    if (!doc) {
        exa_err_prefix(err, "flux resource list on '%s'", t->host);
        goto out;
    }
    nodes = json_object_get(doc, "nodes");
    nr = json_array_size(nodes);
    v = xcalloc(nr ? nr : 1, sizeof(*v));
    for (size_t i = 0; i < nr; i++) {
        const json_t *o = json_array_get(nodes, i);
        const json_t *parts = json_object_get(o, "partitions");
        struct node_info *d = &v[i];
        d->name = xstrdup(jx_get_str(o, "name", "?"));
        d->cpus = jint(o, "cpus");
        d->mem_mb = jint(o, "mem_mb");
        d->gpus = jint(o, "gpus");
        d->gpus_used = jint(o, "gpus_used");
        d->gpu_model = join_or_null(jx_get_str(o, "gpu_type", NULL));
        d->state = xstrdup(jx_get_str(o, "state", "unknown"));
        d->raw_state = join_or_null(jx_get_str(o, "raw_state", NULL));
        strvec_init(&d->partitions);
        for (size_t k = 0; k < json_array_size(parts); k++)
            if (json_is_string(json_array_get(parts, k)))
                strvec_push(&d->partitions,
                            json_string_value(json_array_get(parts, k)));
    }
    flux_fill_per_rank(t, v, nr);
    *out = v;
    *n = nr;
    rc = 0;
out:
    json_decref(doc);
    transport_result_release(&r);
    return rc;
}

static int flux_gpus(struct transport *t, struct gpu_info **out, size_t *n,
                     exa_error_t *err)
{
    return gpus_by_count(t, flux_nodes, out, n, err);
}

/* ---- nvidia-smi (unmanaged) ---- */

static int nvsmi_available(struct transport *t, char **version,
                           exa_error_t *err)
{
    const char *argv[] = {"nvidia-smi", "-L", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1 && !r.out.len)
        ok = 0;
    if (ok == 1 && version)
        *version = NULL;
    transport_result_release(&r);
    return ok;
}

static int nvsmi_caps(struct transport *t, struct cluster_caps *caps,
                      exa_error_t *err)
{
    strvec_push(&caps->notes, "no scheduler \u2014 GPUs visible via "
                              "nvidia-smi only (manual placement)");
    return 0;
}

static char *remote_hostname(struct transport *t, exa_error_t *err)
{
    const char *argv[] = {"hostname", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    char *h = NULL;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1)
        h = first_line_dup(&r.out);
    transport_result_release(&r);
    if (ok < 0)
        return NULL;
    return h ? h : xstrdup(t->host ? t->host : "localhost");
}

static double jreal(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int nvsmi_gpus(struct transport *t, struct gpu_info **out, size_t *n,
                      exa_error_t *err)
{
    const char *argv[] = {"nvidia-smi", "--query-gpu=" NVSMI_PRODUCT_QUERY,
                          "--format=csv,noheader,nounits", NULL};
    static const char *const fields[] = {
        "index",           "uuid",      "name", "memory.total", "memory.used",
        "utilization.gpu", "power.draw"};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    const char *kind = NULL;
    json_t *doc = NULL, *gpus;
    struct gpu_info *v = NULL;
    char *host = NULL;
    size_t nr;
    int ran = probe_run(t, argv, &r, err), rc = -1;
    if (ran < 0)
        goto out;
    if (ran == 0 || r.rc != 0) {
        sched_fail(t, "nvidia-smi", &r, err);
        goto out;
    }
    doc = nvsmi_parse(r.out.buf, r.out.len, fields, 7, &kind, err);
    if (!doc) {
        exa_err_prefix(err, "nvidia-smi on '%s'", t->host);
        goto out;
    }
    if (!(host = remote_hostname(t, err)))
        goto out;
    gpus = json_object_get(doc, "gpus");
    nr = json_array_size(gpus);
    v = xcalloc(nr ? nr : 1, sizeof(*v));
    for (size_t i = 0; i < nr; i++) {
        const json_t *o = json_array_get(gpus, i);
        v[i].node = xstrdup(host);
        v[i].index = jint(o, "index");
        v[i].uuid = join_or_null(jx_get_str(o, "uuid", NULL));
        v[i].name = join_or_null(jx_get_str(o, "name", NULL));
        v[i].mem_total_mb = jint(o, "mem_total_mb");
        v[i].mem_used_mb = jint(o, "mem_used_mb");
        v[i].util_pct = jreal(o, "util_pct");
        v[i].power_w = jreal(o, "power_w");
        v[i].state = xstrdup("online");
    }
    *out = v;
    *n = nr;
    rc = 0;
out:
    free(host);
    json_decref(doc);
    transport_result_release(&r);
    return rc;
}

/*
 * A GPU counts as busy when it computes or holds more than 256 MiB (an
 * idle device with a driver loaded holds a few MiB): a judgment call, as
 * nvidia-smi has no notion of allocation.
 */
static int gpu_busy(const struct gpu_info *g)
{
    return (!isnan(g->util_pct) && g->util_pct > 0) || g->mem_used_mb > 256;
}

static int nvsmi_nodes(struct transport *t, struct node_info **out, size_t *n,
                       exa_error_t *err)
{
    struct gpu_info *g = NULL;
    size_t ng = 0;
    struct node_info *v;
    long long busy = 0;
    if (nvsmi_gpus(t, &g, &ng, err) < 0)
        return -1;
    v = xcalloc(1, sizeof(*v));
    v->name = xstrdup(ng ? g[0].node : (t->host ? t->host : "localhost"));
    v->cpus = -1;
    v->mem_mb = -1;
    v->gpus = (long long)ng;
    for (size_t i = 0; i < ng; i++)
        busy += gpu_busy(&g[i]);
    v->gpus_used = busy;
    v->gpu_model = ng && g[0].name ? xstrdup(g[0].name) : NULL;
    v->state = xstrdup(!busy                   ? "idle"
                       : busy == (long long)ng ? "allocated"
                                               : "mixed");
    v->raw_state = xstrdup("nvidia-smi");
    strvec_init(&v->partitions);
    gpu_infos_free(g, ng);
    *out = v;
    *n = 1;
    return 0;
}

/* ---- registry ---- */

static const struct probe probe_flux = {"flux",    "flux",     flux_available,
                                        flux_caps, flux_nodes, flux_gpus};
static const struct probe probe_slurm = {
    "slurm", "slurm", slurm_available, slurm_caps, slurm_nodes, slurm_gpus};
static const struct probe probe_nvsmi = {"nvidia-smi",    "unmanaged",
                                         nvsmi_available, nvsmi_caps,
                                         nvsmi_nodes,     nvsmi_gpus};

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
        gpus_from_nodes(inv->nodes, inv->nnodes, &inv->gpus, &inv->ngpus);
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
