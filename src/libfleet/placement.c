/*
 * placement.c - capacity per node, fit per node, scorers and the
 * explanation (see placement.h). Pure: snapshots and a clock in, a ranked
 * list and text out, so it is tested on synthetic snapshots and timed by
 * bench/place.sh without a database.
 */
#include "libfleet/placement.h"

#include "libutil/timeutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfleet/governance.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

/* ---- scorers ---- */

/* Most idle GPUs first, then most idle nodes: lexicographic for clusters
 * of fewer than 1000 nodes. */
static double headroom(const struct place_capacity *c,
                       const struct place_ask *a)
{
    return 1000.0 * (c->idle_gpus - a->gpus) + (c->idle_nodes - a->nodes);
}

static double score_least_loaded(const struct place_candidate *c,
                                 const struct place_cluster *cl,
                                 const struct place_ask *a, int *avail)
{
    *avail = 1;
    return headroom(&c->cap, a);
}

static double score_carbon(const struct place_candidate *c,
                           const struct place_cluster *cl,
                           const struct place_ask *a, int *avail)
{
    *avail = cl->has_carbon_intensity;
    return cl->has_carbon_intensity ? -cl->carbon_intensity : 0;
}

static double score_cost(const struct place_candidate *c,
                         const struct place_cluster *cl,
                         const struct place_ask *a, int *avail)
{
    *avail = cl->has_cost_per_gpu_hour;
    return cl->has_cost_per_gpu_hour ? -cl->cost_per_gpu_hour : 0;
}

static const struct place_scorer least_loaded = {"least-loaded", "headroom",
                                                 score_least_loaded};
static const struct place_scorer carbon_aware = {"carbon-aware", "carbon",
                                                 score_carbon};
static const struct place_scorer cost_aware = {"cost-aware", "cost",
                                               score_cost};
static const struct place_scorer *const scorers[] = {
    &least_loaded, &carbon_aware, &cost_aware, NULL};

const struct place_scorer *const *place_scorers(void)
{
    return scorers;
}

const struct place_scorer *place_scorer_find(const char *name)
{
    if (!name || !*name)
        return &least_loaded;
    for (size_t i = 0; scorers[i]; i++)
        if (!strcmp(scorers[i]->name, name))
            return scorers[i];
    return NULL;
}

/* ---- capacity ---- */

time_t place_parse_utc(const char *s)
{
    time_t t;
    if (!s || time_parse_iso8601(s, &t, NULL) < 0)
        return -1;
    return t;
}

static int node_usable(const struct node_row *r)
{
    return r->state &&
           (!strcmp(r->state, "idle") || !strcmp(r->state, "mixed"));
}

static int node_free_gpus(const struct node_row *r)
{
    int g = r->gpus > 0 ? r->gpus : 0;
    if (!node_usable(r))
        return 0;
    if (r->gpus_used >= 0)
        return g > r->gpus_used ? g - r->gpus_used : 0;
    return !strcmp(r->state, "idle") ? g : 0;
}

void place_capacity_of(const struct node_row *nodes, size_t n,
                       const struct place_ask *ask, time_t now,
                       struct place_capacity *out)
{
    int nn = ask->nodes > 0 ? ask->nodes : 1;
    time_t oldest = 0, last_t = -1;
    const char *last_s = NULL;
    int known = 1;
    memset(out, 0, sizeof(*out));
    out->per_node_gpus = ask->gpus > 0 ? (ask->gpus + nn - 1) / nn : 0;
    out->per_node_cpus = ask->cpus > 0 ? (ask->cpus + nn - 1) / nn : 0;
    for (size_t i = 0; i < n; i++) {
        const struct node_row *r = &nodes[i];
        int fg = node_free_gpus(r);
        int w = r->count > 1 ? (int)r->count : 1; /* a summary row's nodes */
        time_t t;
        /* A snapshot's rows share one timestamp: parse it once. */
        if (last_s && r->captured_at &&
            (last_s == r->captured_at || !strcmp(last_s, r->captured_at))) {
            t = last_t;
        } else {
            t = place_parse_utc(r->captured_at);
            last_s = r->captured_at;
            last_t = t;
        }
        out->total_nodes += w;
        out->total_gpus += w * (r->gpus > 0 ? r->gpus : 0);
        if (t < 0)
            known = 0;
        else if (!oldest || t < oldest)
            oldest = t;
        if (!node_usable(r))
            continue;
        out->usable_nodes += w;
        out->idle_gpus += w * fg;
        if (!strcmp(r->state, "idle") && r->gpus_used <= 0)
            out->idle_nodes += w;
        if (fg >= out->per_node_gpus &&
            (r->cpus < 0 || r->cpus >= out->per_node_cpus))
            out->fit_nodes += w;
    }
    out->age_s = (known && oldest) ? difftime(now, oldest) : -1;
    out->captured_at = (known && oldest) ? oldest : 0;
}

/* ---- choosing ---- */

static int cmp_cand(const void *pa, const void *pb)
{
    const struct place_candidate *a = pa, *b = pb;
    if (a->fits != b->fits)
        return b->fits - a->fits;
    if (a->fits) {
        if (a->objective_available != b->objective_available)
            return b->objective_available - a->objective_available;
        if (a->score != b->score)
            return a->score > b->score ? -1 : 1;
    }
    if (a->headroom != b->headroom)
        return a->headroom > b->headroom ? -1 : 1;
    return strcmp(a->name, b->name);
}

static void explain_why(struct place_candidate *c, const struct place_ask *a,
                        int max_age_s)
{
    struct strbuf sb = STRBUF_INIT;
    const struct place_capacity *k = &c->cap;
    int nn = a->nodes > 0 ? a->nodes : 1;
    if (!k->total_nodes && c->partition && c->snapshot_nodes > 0) {
        strbuf_addf(&sb,
                    "does not fit: no node in %spartition '%s' (of %lld "
                    "node(s) in its snapshot)",
                    c->partition_default ? "the default " : "", c->partition,
                    c->snapshot_nodes);
    } else if (!k->total_nodes) {
        strbuf_addstr(&sb, "no inventory snapshot (run 'exa hpc nodes "
                           "--save --cluster ");
        strbuf_addf(&sb, "%s')", c->name);
    } else if (c->fits) {
        strbuf_addf(&sb, "fits: %d node(s) with >= %d free GPU(s)",
                    k->fit_nodes, k->per_node_gpus);
        if (k->per_node_cpus)
            strbuf_addf(&sb, " and >= %d CPU(s)", k->per_node_cpus);
        strbuf_addf(&sb, ", need %d", nn);
    } else {
        strbuf_addf(&sb,
                    "does not fit: %d usable node(s) with >= %d free "
                    "GPU(s)",
                    k->fit_nodes, k->per_node_gpus);
        if (k->per_node_cpus)
            strbuf_addf(&sb, " and >= %d CPU(s)", k->per_node_cpus);
        strbuf_addf(&sb, ", need %d", nn);
        if (k->total_nodes > k->usable_nodes)
            strbuf_addf(&sb,
                        " (%d of %d node(s) down, drained, allocated "
                        "or unknown)",
                        k->total_nodes - k->usable_nodes, k->total_nodes);
    }
    if (c->partition && k->total_nodes)
        strbuf_addf(&sb, "; %spartition '%s' (%d of %lld node(s))",
                    c->partition_default ? "the default " : "", c->partition,
                    k->total_nodes, c->snapshot_nodes);
    if (c->stale)
        strbuf_addf(&sb, "; snapshot %.0f s old (limit %d s)", k->age_s,
                    max_age_s);
    else if (k->total_nodes && k->age_s < 0)
        strbuf_addstr(&sb, "; snapshot age unknown");
    c->why = strbuf_detach(&sb, NULL);
}

int place_choose(const struct place_cluster *cl, size_t n,
                 const struct place_ask *ask, const struct place_scorer *scorer,
                 int max_age_s, time_t now, struct place_result *res,
                 exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    double best = NAN;
    if (ask->gpus < 0 || ask->cpus < 0 || ask->nodes < 1)
        return exa_err(err, EXA_EUSAGE,
                       "placement needs gpus >= 0, cpus >= 0, nodes >= 1");
    if (!scorer)
        scorer = &least_loaded;
    memset(res, 0, sizeof(*res));
    res->ask = *ask;
    res->scorer = scorer;
    res->max_age_s = max_age_s;
    res->chosen = -1;
    res->cands = xcalloc(n ? n : 1, sizeof(*res->cands));
    res->n = n;
    for (size_t i = 0; i < n; i++) {
        struct place_candidate *c = &res->cands[i];
        int avail = 0;
        c->name = xstrdup(cl[i].name);
        c->scheduler = xstrdup(cl[i].scheduler ? cl[i].scheduler : "unknown");
        place_capacity_of(cl[i].nodes, cl[i].nnodes, ask, now, &c->cap);
        c->fits = c->cap.fit_nodes >= ask->nodes;
        c->headroom = headroom(&c->cap, ask);
        c->stale = max_age_s > 0 && c->cap.age_s > max_age_s;
        c->snapshot_nodes = cl[i].snapshot_nodes;
        c->partition = cl[i].partition[0] ? xstrdup(cl[i].partition) : NULL;
        c->partition_default = c->partition && cl[i].partition_default;
        c->score = NAN;
        c->margin_to_best = NAN;
        if (c->fits) {
            c->score = scorer->score(c, &cl[i], ask, &avail);
            c->objective_available = avail;
            if (!avail)
                res->objective_unavailable++;
        }
        explain_why(c, ask, max_age_s);
    }
    qsort(res->cands, n, sizeof(*res->cands), cmp_cand);
    if (n && res->cands[0].fits) {
        res->chosen = 0;
        best = res->cands[0].score;
    }
    for (size_t i = 0; i < n; i++)
        if (res->cands[i].fits && res->cands[i].objective_available ==
                                      res->cands[0].objective_available)
            res->cands[i].margin_to_best = best - res->cands[i].score;
    if (res->chosen >= 0) {
        const struct place_candidate *c = &res->cands[0];
        strbuf_addf(&sb, "chose %s@%s \u2014 %d/%d idle GPUs, %d/%d idle nodes",
                    c->scheduler, c->name, c->cap.idle_gpus, c->cap.total_gpus,
                    c->cap.idle_nodes, c->cap.total_nodes);
        if (c->partition)
            strbuf_addf(&sb, " in %spartition '%s'",
                        c->partition_default ? "the default " : "",
                        c->partition);
        if (!c->objective_available)
            strbuf_addf(&sb,
                        " [objectives unavailable: %s not declared for "
                        "'%s']",
                        scorer->objective, c->name);
        if (c->stale)
            strbuf_addf(&sb, " [stale snapshot: %.0f s old, limit %d s]",
                        c->cap.age_s, max_age_s);
    } else if (!n) {
        strbuf_addstr(&sb, "no ACTIVE clusters registered \u2014 'exa hpc "
                           "connect' then 'exa hpc approve'");
    } else {
        strbuf_addf(&sb,
                    "no ACTIVE cluster can satisfy the ask (gpus=%d, "
                    "nodes=%d",
                    ask->gpus, ask->nodes);
        if (ask->partition)
            strbuf_addf(&sb, ", partition=%s", ask->partition);
        strbuf_addch(&sb, ')');
    }
    res->reason = strbuf_detach(&sb, NULL);
    return 0;
}

void place_result_release(struct place_result *res)
{
    for (size_t i = 0; i < res->n; i++) {
        free(res->cands[i].name);
        free(res->cands[i].scheduler);
        free(res->cands[i].why);
        free(res->cands[i].partition);
    }
    free(res->cands);
    free(res->reason);
    memset(res, 0, sizeof(*res));
}

json_t *place_iso_or_null(time_t t)
{
    char buf[32];
    struct tm tm;
    if (t <= 0)
        return json_null();
    gmtime_r(&t, &tm);
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

static json_t *cand_json(const struct place_candidate *c, int rank)
{
    json_t *o = json_object();
    if (rank > 0)
        jx_set(o, "rank", json_integer(rank));
    jx_set(o, rank > 0 ? "cluster" : "name", jx_str(c->name));
    jx_set(o, "scheduler", jx_str(c->scheduler));
    jx_set(o, "fits", json_boolean(c->fits));
    jx_set(o, "score", jx_real(c->score));
    if (rank > 0)
        jx_set(o, "margin_to_best", jx_real(c->margin_to_best));
    jx_set(o, "idle_gpus", json_integer(c->cap.idle_gpus));
    jx_set(o, "total_gpus", json_integer(c->cap.total_gpus));
    jx_set(o, "idle_nodes", json_integer(c->cap.idle_nodes));
    jx_set(o, "total_nodes", json_integer(c->cap.total_nodes));
    jx_set(o, "fit_nodes", json_integer(c->cap.fit_nodes));
    jx_set(o, "partition", jx_str(c->partition));
    jx_set(o, "snapshot_age_s",
           c->cap.age_s < 0 ? NULL : json_integer((json_int_t)c->cap.age_s));
    jx_set(o, "captured_at", place_iso_or_null(c->cap.captured_at));
    jx_set(o, "stale", json_boolean(c->stale));
    jx_set(o, "objective_available", json_boolean(c->objective_available));
    jx_set(o, "why", jx_str(c->why));
    return o;
}

json_t *place_result_json(const struct place_result *res, int explain)
{
    json_t *doc = json_object(), *cands = json_array(), *un = json_array();
    json_t *objectives = json_object(), *ask = json_object();
    const struct place_candidate *ch =
        res->chosen >= 0 ? &res->cands[res->chosen] : NULL;
    for (size_t i = 0; i < res->n; i++) {
        json_array_append_new(cands, cand_json(&res->cands[i], 0));
        if (res->cands[i].fits && !res->cands[i].objective_available) {
            json_t *u = json_object();
            jx_set(u, "cluster", jx_str(res->cands[i].name));
            jx_set(u, "objective", jx_str(res->scorer->objective));
            json_array_append_new(un, u);
        }
    }
    jx_set(objectives, "provider", jx_str(res->scorer->name));
    jx_set(objectives, "objective", jx_str(res->scorer->objective));
    jx_set(ask, "gpus", json_integer(res->ask.gpus));
    jx_set(ask, "cpus", json_integer(res->ask.cpus));
    jx_set(ask, "nodes", json_integer(res->ask.nodes));
    jx_set(ask, "partition", jx_str(res->ask.partition));
    jx_set(doc, "cluster", jx_str(ch ? ch->name : NULL));
    jx_set(doc, "scheduler", jx_str(ch ? ch->scheduler : NULL));
    jx_set(doc, "reason", jx_str(res->reason));
    jx_set(doc, "candidates", cands);
    jx_set(doc, "objectives_unavailable", json_copy(un));
    jx_set(doc, "objectives", json_copy(objectives));
    if (explain) {
        json_t *ex = json_object(), *ec = json_array();
        for (size_t i = 0; i < res->n; i++)
            json_array_append_new(ec, cand_json(&res->cands[i], (int)i + 1));
        jx_set(ex, "provider", jx_str(res->scorer->name));
        jx_set(ex, "ask", json_copy(ask));
        jx_set(ex, "chosen", jx_str(ch ? ch->name : NULL));
        jx_set(ex, "objectives", json_copy(objectives));
        jx_set(ex, "objectives_unavailable", json_copy(un));
        jx_set(ex, "max_snapshot_age_s", json_integer(res->max_age_s));
        jx_set(ex, "candidates", ec);
        jx_set(doc, "explain", ex);
    }
    json_decref(un);
    json_decref(objectives);
    json_decref(ask);
    return doc;
}

/* The stale_error of cluster name (the last match, as
 * place_json_mark_stale sets it), or NULL when its refresh did not fail. */
static const char *stale_error_of(const char *name, const struct strvec *failed,
                                  const struct strvec *errors)
{
    const char *e = NULL;
    for (size_t k = 0; k < failed->nr; k++)
        if (!strcmp(failed->v[k], name))
            e = errors->v[k];
    return e;
}

/* cand_json(c, rank) as marked by place_json_mark_stale. */
static void cand_write(struct jsonw *w, const struct place_candidate *c,
                       int rank, const struct strvec *failed,
                       const struct strvec *errors)
{
    int failed_here = 0;
    const char *e = NULL;
    for (size_t k = 0; k < failed->nr; k++)
        if (!strcmp(failed->v[k], c->name))
            failed_here = 1;
    if (failed_here)
        e = stale_error_of(c->name, failed, errors);
    jsonw_obj_begin(w);
    if (rank > 0) {
        jsonw_key_lit(w, "rank");
        jsonw_int(w, rank);
        jsonw_key_lit(w, "cluster");
    } else {
        jsonw_key_lit(w, "name");
    }
    jsonw_str(w, c->name);
    jsonw_key_lit(w, "scheduler");
    jsonw_str(w, c->scheduler);
    jsonw_key_lit(w, "fits");
    jsonw_bool(w, c->fits);
    jsonw_key_lit(w, "score");
    jsonw_real(w, c->score);
    if (rank > 0) {
        jsonw_key_lit(w, "margin_to_best");
        jsonw_real(w, c->margin_to_best);
    }
    jsonw_key_lit(w, "idle_gpus");
    jsonw_int(w, c->cap.idle_gpus);
    jsonw_key_lit(w, "total_gpus");
    jsonw_int(w, c->cap.total_gpus);
    jsonw_key_lit(w, "idle_nodes");
    jsonw_int(w, c->cap.idle_nodes);
    jsonw_key_lit(w, "total_nodes");
    jsonw_int(w, c->cap.total_nodes);
    jsonw_key_lit(w, "fit_nodes");
    jsonw_int(w, c->cap.fit_nodes);
    jsonw_key_lit(w, "partition");
    jsonw_str(w, c->partition);
    jsonw_key_lit(w, "snapshot_age_s");
    jsonw_int_or_null(w, c->cap.age_s >= 0, (long long)c->cap.age_s);
    jsonw_key_lit(w, "captured_at");
    if (c->cap.captured_at > 0) {
        char buf[32];
        struct tm tm;
        time_t t = c->cap.captured_at;
        gmtime_r(&t, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
        jsonw_str(w, buf);
    } else {
        jsonw_null(w);
    }
    jsonw_key_lit(w, "stale");
    jsonw_bool(w, c->stale || failed_here);
    jsonw_key_lit(w, "objective_available");
    jsonw_bool(w, c->objective_available);
    jsonw_key_lit(w, "why");
    jsonw_str(w, c->why);
    jsonw_key_lit(w, "stale_error");
    jsonw_str(w, e);
    jsonw_obj_end(w);
}

static void unavailable_write(struct jsonw *w, const struct place_result *res)
{
    jsonw_arr_begin(w);
    for (size_t i = 0; i < res->n; i++)
        if (res->cands[i].fits && !res->cands[i].objective_available) {
            jsonw_obj_begin(w);
            jsonw_key_lit(w, "cluster");
            jsonw_str(w, res->cands[i].name);
            jsonw_key_lit(w, "objective");
            jsonw_str(w, res->scorer->objective);
            jsonw_obj_end(w);
        }
    jsonw_arr_end(w);
}

static void objectives_write(struct jsonw *w, const struct place_result *res)
{
    jsonw_obj_begin(w);
    jsonw_key_lit(w, "provider");
    jsonw_str(w, res->scorer->name);
    jsonw_key_lit(w, "objective");
    jsonw_str(w, res->scorer->objective);
    jsonw_obj_end(w);
}

void place_result_write(struct jsonw *w, const struct place_result *res,
                        int explain, const struct strvec *failed,
                        const struct strvec *errors)
{
    const struct place_candidate *ch =
        res->chosen >= 0 ? &res->cands[res->chosen] : NULL;
    jsonw_key_lit(w, "cluster");
    jsonw_str(w, ch ? ch->name : NULL);
    jsonw_key_lit(w, "scheduler");
    jsonw_str(w, ch ? ch->scheduler : NULL);
    jsonw_key_lit(w, "reason");
    jsonw_str(w, res->reason);
    jsonw_key_lit(w, "candidates");
    jsonw_arr_begin(w);
    for (size_t i = 0; i < res->n; i++)
        cand_write(w, &res->cands[i], 0, failed, errors);
    jsonw_arr_end(w);
    jsonw_key_lit(w, "objectives_unavailable");
    unavailable_write(w, res);
    jsonw_key_lit(w, "objectives");
    objectives_write(w, res);
    if (!explain)
        return;
    jsonw_key_lit(w, "explain");
    jsonw_obj_begin(w);
    jsonw_key_lit(w, "provider");
    jsonw_str(w, res->scorer->name);
    jsonw_key_lit(w, "ask");
    jsonw_obj_begin(w);
    jsonw_key_lit(w, "gpus");
    jsonw_int(w, res->ask.gpus);
    jsonw_key_lit(w, "cpus");
    jsonw_int(w, res->ask.cpus);
    jsonw_key_lit(w, "nodes");
    jsonw_int(w, res->ask.nodes);
    jsonw_key_lit(w, "partition");
    jsonw_str(w, res->ask.partition);
    jsonw_obj_end(w);
    jsonw_key_lit(w, "chosen");
    jsonw_str(w, ch ? ch->name : NULL);
    jsonw_key_lit(w, "objectives");
    objectives_write(w, res);
    jsonw_key_lit(w, "objectives_unavailable");
    unavailable_write(w, res);
    jsonw_key_lit(w, "max_snapshot_age_s");
    jsonw_int(w, res->max_age_s);
    jsonw_key_lit(w, "candidates");
    jsonw_arr_begin(w);
    for (size_t i = 0; i < res->n; i++)
        cand_write(w, &res->cands[i], (int)i + 1, failed, errors);
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

int place_max_age_from_env(void)
{
    const char *e = getenv("EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S");
    char *end;
    long v;
    if (!e || !*e)
        return PLACE_DEFAULT_MAX_AGE_S;
    errno = 0;
    v = strtol(e, &end, 10);
    if (errno || *end || v < 0 || v > 100000000)
        return PLACE_DEFAULT_MAX_AGE_S;
    return (int)v;
}

/* ---- candidates from the store ---- */

int place_load_candidates(store_t *st, const struct fleet *f,
                          struct place_cluster **out, size_t *nout,
                          struct node_row **nodes, size_t *nnodes,
                          exa_error_t *err)
{
    struct place_cluster *v = NULL;
    size_t nr = 0, alloc = 0, j = 0;
    /* the per-cluster summary, a few rows per cluster (nodes.h) */
    if (store_node_summary_list(st, NULL, nodes, nnodes, err) < 0)
        return -1;
    for (size_t i = 0; i < f->nr; i++) {
        const struct fleet_cluster *c = &f->v[i];
        struct place_cluster *p;
        if (c->state != CLUSTER_ACTIVE)
            continue;
        ALLOC_GROW(v, nr + 1, alloc);
        p = &v[nr++];
        memset(p, 0, sizeof(*p));
        p->name = c->def.name;
        p->scheduler = c->def.scheduler;
        p->has_carbon_intensity = c->def.has_carbon_intensity;
        p->carbon_intensity = c->def.carbon_intensity;
        p->has_cost_per_gpu_hour = c->def.has_cost_per_gpu_hour;
        p->cost_per_gpu_hour = c->def.cost_per_gpu_hour;
        /* Rows and clusters are both sorted by name (SQLite's BINARY
         * collation is strcmp order): one merge pass over the rows. */
        while (j < *nnodes && strcmp((*nodes)[j].cluster, p->name) < 0)
            j++;
        p->nodes = *nodes ? *nodes + j : NULL; /* no rows: NULL + 0 is UB */
        while (j < *nnodes && !strcmp((*nodes)[j].cluster, p->name)) {
            long long w = (*nodes)[j].count;
            p->snapshot_nodes += w > 1 ? w : 1;
            p->nnodes++;
            j++;
        }
    }
    *out = v;
    *nout = nr;
    return 0;
}

/* A partition name an ask may name (place_partition_check()'s rule). */
static int partition_name_ok(const char *p, size_t n)
{
    if (!n || n > 255)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] == ',' || (unsigned char)p[i] <= ' ' || p[i] == 0x7f)
            return 0;
    return 1;
}

/*
 * The partition a cluster's recorded capabilities (clusters.capabilities,
 * probe.h cluster_caps as JSON: "partitions": [{"name", "default",
 * "total_nodes", ...}], "total_nodes") mark default, copied to out (256
 * bytes), when it did not hold every node of the cluster (or a count is
 * unknown). 1, or 0: none marked, it held them all, or its name is not
 * one (place_partition_check()).
 */
static int caps_default_partition(const char *caps, char out[256])
{
    json_t *doc, *p;
    size_t i;
    int found = 0;
    /* most clusters' caps (jansson's compact dump) mark none: not parsed */
    if (!caps || !strstr(caps, "\"default\":true"))
        return 0;
    doc = json_loads(caps, 0, NULL);
    json_array_foreach(json_object_get(doc, "partitions"), i, p)
    {
        json_t *name = json_object_get(p, "name");
        json_int_t all =
            json_integer_value(json_object_get(doc, "total_nodes"));
        json_int_t in = json_integer_value(json_object_get(p, "total_nodes"));
        size_t len = json_string_length(name);
        if (!json_is_true(json_object_get(p, "default")) ||
            !json_is_string(name))
            continue;
        if ((all > 0 && in >= all) ||
            !partition_name_ok(json_string_value(name), len) ||
            strlen(json_string_value(name)) != len)
            break;
        memcpy(out, json_string_value(name), len + 1);
        found = 1;
        break;
    }
    json_decref(doc);
    return found;
}

int place_restrict_partition(const struct fleet *f, const char *partition,
                             struct place_cluster *cands, size_t n,
                             struct node_row **rows, size_t *nrows,
                             exa_error_t *err)
{
    struct node_row *v;
    size_t nv = 0, total = 0, k = 0;
    char name[256];
    if (partition && place_partition_check(partition, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        total += cands[i].nnodes;
    v = xcalloc(total ? total : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        struct place_cluster *p = &cands[i];
        size_t first = nv;
        if (partition) {
            snprintf(name, sizeof(name), "%s", partition);
        } else {
            /* cands are in f's order (place_load_candidates()) */
            while (k < f->nr && strcmp(f->v[k].def.name, p->name) < 0)
                k++;
            if (k == f->nr || strcmp(f->v[k].def.name, p->name) ||
                !caps_default_partition(f->v[k].row.capabilities, name))
                continue;
        }
        /* the summary rows of the partition's nodes (each row's
         * partitions list, store_node_summary_list()) */
        for (size_t r = 0; r < p->nnodes; r++)
            if (csv_has_any(p->nodes[r].partitions, name))
                v[nv++] = p->nodes[r];
        p->nodes = nv > first ? v + first : NULL;
        p->nnodes = nv - first;
        memcpy(p->partition, name, sizeof(name));
        p->partition_default = !partition;
    }
    *rows = v;
    *nrows = nv;
    return 0;
}

int place_partition_check(const char *p, exa_error_t *err)
{
    size_t n = p ? strlen(p) : 0;
    if (!n || n > 255)
        return exa_err(err, EXA_EUSAGE,
                       "partition '%s' is not a partition name: expected 1 "
                       "to 255 bytes",
                       p ? p : "");
    /* sbatch -p takes a list too: each of its names */
    size_t k = 0;
    for (const char *c = p, *e; c; c = *e ? e + 1 : NULL) {
        e = strchr(c, ',');
        if (!e)
            e = c + strlen(c);
        if (++k > PLACE_PARTITIONS_MAX)
            return exa_err(err, EXA_EUSAGE,
                           "partition '%s': a list of at most %d names "
                           "expected",
                           p, PLACE_PARTITIONS_MAX);
        if (!partition_name_ok(c, (size_t)(e - c)))
            return exa_err(err, EXA_EUSAGE,
                           "partition '%s' is not a partition name: expected "
                           "a name (or names separated by ','), without "
                           "spaces or control characters",
                           p);
    }
    return 0;
}

void place_json_mark_stale(json_t *arr, const char *key,
                           const struct strvec *failed,
                           const struct strvec *errors)
{
    size_t i;
    json_t *o;
    if (!json_is_array(arr))
        return;
    json_array_foreach(arr, i, o)
    {
        const char *name = jx_get_str(o, key, "");
        json_t *e = json_null();
        for (size_t k = 0; k < failed->nr; k++)
            if (!strcmp(failed->v[k], name)) {
                json_decref(e);
                e = jx_str(errors->v[k]); /* invalid UTF-8 as U+FFFD */
                json_object_set_new(o, "stale", json_true());
            }
        json_object_set_new(o, "stale_error", e);
    }
}
