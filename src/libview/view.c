/*
 * view.c - the read views (see view.h): the fleet, jobs, placement,
 * capacity, queue, models, costs, carbon and the audit log as JSON.
 * The CLI's --json, the REST API and MCP print what these return.
 */
#include "libview/view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libdiscovery/preflight.h"
#include "libfleet/capacity.h"
#include "libfleet/carbon.h"
#include "libfleet/connect.h"
#include "libfleet/cost.h"
#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libfleet/readops.h"
#include "libfleet/registry.h"
#include "libsched/resources.h"
#include "libstore/audit.h"
#include "libstore/finops.h"
#include "libstore/hostkeys.h"
#include "libstore/jobs.h"
#include "libstore/models.h"
#include "libstore/nodes.h"
#include "libutil/duration.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

/* ---- redaction ---- */

static void push_unique(char ***v, size_t *n, const char *s)
{
    if (!s || !*s)
        return;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i], s))
            return;
    *v = xrealloc(*v, (*n + 1) * sizeof(**v));
    (*v)[(*n)++] = xstrdup(s);
}

static void add_one_path(struct view_secrets *s, const char *p)
{
    char *pub;
    push_unique(&s->paths, &s->npaths, p);
    pub = xstrfmt("%s.pub", p);
    push_unique(&s->paths, &s->npaths, pub);
    free(pub);
}

/*
 * A key path as written, and the forms ssh(1) prints it in: "~/" and
 * "$HOME/" expanded with this process's HOME (ssh runs here), a relative
 * one made absolute against the working directory.
 */
static void add_path(struct view_secrets *s, const char *p)
{
    const char *home = getenv("HOME");
    char cwd[4096];
    if (!p || !*p)
        return;
    add_one_path(s, p);
    if (home && *home && strlen(home) > 1) {
        const char *rest = NULL;
        if (!strncmp(p, "~/", 2))
            rest = p + 1;
        else if (!strncmp(p, "$HOME/", 6))
            rest = p + 5;
        else if (!strncmp(p, "${HOME}/", 8))
            rest = p + 7;
        if (rest) {
            char *x = xstrfmt("%s%s", home, rest);
            add_one_path(s, x);
            free(x);
        }
    }
    if (p[0] != '/' && p[0] != '~' && p[0] != '$' && getcwd(cwd, sizeof(cwd))) {
        char *x = xstrfmt("%s/%s", cwd, p);
        add_one_path(s, x);
        free(x);
    }
}

static char *regpath_of(const struct view_ctx *vc, exa_error_t *err)
{
    return vc->regpath ? xstrdup(vc->regpath) : registry_default_path(err);
}

int view_secrets_load(const struct view_ctx *vc, struct view_secrets *out,
                      exa_error_t *err)
{
    struct registry reg = REGISTRY_INIT;
    struct cluster_row *rows = NULL;
    size_t n = 0;
    char *rp;
    memset(out, 0, sizeof(*out));
    if (!(rp = regpath_of(vc, err)))
        return -1;
    if (registry_load(rp, &reg, err) < 0) {
        free(rp);
        return -1;
    }
    free(rp);
    for (size_t i = 0; i < reg.nr; i++) {
        push_unique(&out->users, &out->nusers, reg.defs[i].ssh_user);
        add_path(out, reg.defs[i].ssh_key);
    }
    registry_release(&reg);
    if (store_cluster_list(vc->st, &rows, &n, err) < 0) {
        view_secrets_release(out);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        push_unique(&out->users, &out->nusers, rows[i].ssh_user);
        add_path(out, rows[i].ssh_key);
        cluster_row_release(&rows[i]);
    }
    free(rows);
    /* the server's own pinned host keys (known_hosts.d/NAME), which
     * preflight and ssh errors name */
    {
        char *kh = fleet_known_hosts_dir();
        if (kh && *kh)
            push_unique(&out->paths, &out->npaths, kh);
        free(kh);
    }
    return 0;
}

void view_secrets_release(struct view_secrets *s)
{
    for (size_t i = 0; i < s->nusers; i++)
        free(s->users[i]);
    for (size_t i = 0; i < s->npaths; i++)
        free(s->paths[i]);
    free(s->users);
    free(s->paths);
    memset(s, 0, sizeof(*s));
}

/* Replace every occurrence of needle in *s by with; 1 when changed. */
static int replace_all(struct strbuf *sb, const char *needle, const char *with)
{
    size_t nl = strlen(needle);
    struct strbuf out = STRBUF_INIT;
    const char *p = sb->buf, *q;
    int changed = 0;
    if (!nl)
        return 0;
    while ((q = strstr(p, needle))) {
        strbuf_add(&out, p, (size_t)(q - p));
        strbuf_addstr(&out, with);
        p = q + nl;
        changed = 1;
    }
    if (!changed) {
        strbuf_release(&out);
        return 0;
    }
    strbuf_addstr(&out, p);
    strbuf_release(sb);
    *sb = out;
    return 1;
}

/* Characters that may be part of a user name: a match of the name is
 * replaced only when neither neighbour is one. */
static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
           c == '$';
}

/* Replace every whole-word occurrence of word in *sb; 1 when changed. */
static int replace_word(struct strbuf *sb, const char *word, const char *with)
{
    size_t wl = strlen(word);
    struct strbuf out = STRBUF_INIT;
    const char *p = sb->buf, *q, *from = sb->buf;
    int changed = 0;
    if (!wl)
        return 0;
    while ((q = strstr(p, word))) {
        int left = q > sb->buf && name_char(q[-1]);
        int right = name_char(q[wl]);
        if (left || right) {
            p = q + 1;
            continue;
        }
        strbuf_add(&out, from, (size_t)(q - from));
        strbuf_addstr(&out, with);
        p = from = q + wl;
        changed = 1;
    }
    if (!changed) {
        strbuf_release(&out);
        return 0;
    }
    strbuf_addstr(&out, from);
    strbuf_release(sb);
    *sb = out;
    return 1;
}

/* The rewrite of s: key paths always, ssh users only when users. */
static char *redact_text(char *s, const struct view_secrets *sec, int users)
{
    struct strbuf sb = STRBUF_INIT;
    int changed = 0;
    if (!s)
        return s;
    strbuf_addstr(&sb, s);
    for (size_t i = 0; i < sec->npaths; i++)
        changed |= replace_all(&sb, sec->paths[i], "[redacted]");
    for (size_t i = 0; users && i < sec->nusers; i++)
        changed |= replace_word(&sb, sec->users[i], "[redacted]");
    if (!changed) {
        strbuf_release(&sb);
        return s;
    }
    free(s);
    return strbuf_detach(&sb, NULL);
}

char *view_redact_text(char *s, const struct view_secrets *sec)
{
    return redact_text(s, sec, 1);
}

/* Members whose strings are free text (messages, quoted command output),
 * where an ssh user may stand as a word; everything below "details" too. */
static int free_text_key(const char *k)
{
    static const char *const keys[] = {
        "reason",  "message", "error",           "detail", "details", "why",
        "explain", "output",  "contextual_info", "text",   "hint",    "stderr",
        "stdout",  "note"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strcmp(k, keys[i]))
            return 1;
    return 0;
}

static void redact_node(json_t *doc, const struct view_secrets *sec, int ft)
{
    if (json_is_object(doc)) {
        const char *k;
        json_t *v;
        void *tmp;
        json_object_del(doc, "ssh_user");
        json_object_del(doc, "ssh_key");
        json_object_del(doc, "remote_dir");
        json_object_foreach_safe(doc, tmp, k, v)
        {
            int kft = ft || free_text_key(k);
            if (json_is_string(v)) {
                char *t = redact_text(xstrdup(json_string_value(v)), sec, kft);
                if (strcmp(t, json_string_value(v)))
                    json_object_set_new(doc, k, jx_str(t));
                free(t);
            } else {
                redact_node(v, sec, kft);
            }
        }
    } else if (json_is_array(doc)) {
        size_t i;
        json_t *v;
        json_array_foreach(doc, i, v)
        {
            if (json_is_string(v)) {
                char *t = redact_text(xstrdup(json_string_value(v)), sec, ft);
                if (strcmp(t, json_string_value(v)))
                    json_array_set_new(doc, i, jx_str(t));
                free(t);
            } else {
                redact_node(v, sec, ft);
            }
        }
    }
}

json_t *view_redact(json_t *doc, const struct view_secrets *sec)
{
    redact_node(doc, sec, 0);
    return doc;
}

/* doc redacted when vc asks for it; NULL doc passes through. */
static json_t *finish(const struct view_ctx *vc, json_t *doc, exa_error_t *err)
{
    struct view_secrets sec;
    if (!doc || !vc->redact)
        return doc;
    if (view_secrets_load(vc, &sec, err) < 0) {
        json_decref(doc);
        return NULL;
    }
    view_redact(doc, &sec);
    view_secrets_release(&sec);
    return doc;
}

/* ---- the fleet ---- */

static int load_fleet(const struct view_ctx *vc, struct fleet *f,
                      exa_error_t *err)
{
    char *rp = regpath_of(vc, err);
    int rc;
    f->v = NULL;
    f->nr = 0;
    if (!rp)
        return -1;
    rc = fleet_load(vc->st, rp, f, err);
    free(rp);
    return rc;
}

static json_t *caps_of(const char *text)
{
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    return j ? j : json_null();
}

static json_t *mismatch_json(const struct hostkey_mismatch *m)
{
    json_t *o;
    if (!m->cluster)
        return json_null();
    o = json_object();
    jx_set(o, "approved", jx_str(m->approved));
    jx_set(o, "seen", jx_str(m->seen));
    jx_set(o, "seen_at", jx_str(m->seen_at));
    return o;
}

static json_t *cluster_json(const struct view_ctx *vc,
                            const struct fleet_cluster *c)
{
    json_t *o = json_object();
    const struct cluster_def *d = &c->def;
    struct hostkey_mismatch m;
    jx_set(o, "name", jx_str(d->name));
    jx_set(o, "scheduler", jx_str(d->scheduler));
    jx_set(o, "transport", jx_str(d->transport));
    jx_set(o, "host", jx_str(d->host));
    if (!vc->redact)
        jx_set(o, "ssh_user", jx_str(d->ssh_user));
    jx_set(o, "ssh_port", json_integer(d->ssh_port));
    if (!vc->redact)
        jx_set(o, "ssh_key", jx_str(d->ssh_key));
    jx_set(o, "key_fingerprint", jx_str(c->row.key_fingerprint));
    jx_set(o, "host_key_fingerprint", jx_str(c->row.host_key_fingerprint));
    jx_set(o, "state", jx_str(cluster_state_name(c->state)));
    jx_set(o, "approved_by", jx_str(c->row.approved_by));
    jx_set(o, "requested_by", jx_str(c->row.requested_by));
    jx_set(o, "reason", jx_str(c->row.reason));
    jx_set(o, "capabilities", caps_of(c->row.capabilities));
    jx_set(o, "tenant", jx_str(d->tenant));
    jx_set(o, "node_exporter_port",
           json_integer(cluster_def_node_exporter_port(d)));
    jx_set(o, "dcgm_exporter_port",
           json_integer(cluster_def_dcgm_exporter_port(d)));
    jx_set(o, "carbon_intensity",
           d->has_carbon_intensity ? jx_real(d->carbon_intensity) : NULL);
    jx_set(o, "cost_per_gpu_hour",
           d->has_cost_per_gpu_hour ? jx_real(d->cost_per_gpu_hour) : NULL);
    jx_set(o, "in_registry", json_boolean(c->in_yaml));
    jx_set(o, "audit_mismatch", jx_str(c->audit_mismatch));
    jx_set(o, "updated_at", jx_str(c->row.updated_at));
    memset(&m, 0, sizeof(m));
    store_hostkey_mismatch_get(vc->st, d->name, &m, NULL);
    jx_set(o, "host_key_mismatch", mismatch_json(&m));
    hostkey_mismatch_release(&m);
    return o;
}

json_t *view_clusters(const struct view_ctx *vc, exa_error_t *err)
{
    struct fleet f;
    json_t *a;
    if (load_fleet(vc, &f, err) < 0)
        return NULL;
    a = json_array();
    for (size_t i = 0; i < f.nr; i++)
        json_array_append_new(a, cluster_json(vc, &f.v[i]));
    fleet_release(&f);
    return finish(vc, a, err);
}

static json_t *split_json(const char *csv)
{
    json_t *a = json_array();
    const char *p = csv;
    while (p && *p) {
        const char *q = strchr(p, ',');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n) {
            char *t = xstrndup(p, n);
            json_array_append_new(a, jx_str(t));
            free(t);
        }
        p = q ? q + 1 : NULL;
    }
    return a;
}

static json_t *nodes_json(const struct node_row *r, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        jx_set(o, "node", jx_str(r[i].node));
        jx_set(o, "state", jx_str(r[i].state));
        jx_set(o, "raw_state", jx_str(r[i].raw_state));
        jx_set(o, "cpus", json_integer(r[i].cpus));
        jx_set(o, "mem_mb", json_integer(r[i].mem_mb));
        jx_set(o, "gpus", json_integer(r[i].gpus));
        jx_set(o, "gpus_used",
               jx_int_or_null(r[i].gpus_used >= 0, r[i].gpus_used));
        jx_set(o, "gpu_model", jx_str(r[i].gpu_model));
        jx_set(o, "partitions", split_json(r[i].partitions));
        jx_set(o, "flags", split_json(r[i].flags));
        jx_set(o, "captured_at", jx_str(r[i].captured_at));
        json_array_append_new(a, o);
    }
    return a;
}

/* 0 when name is a cluster of f; else -1 with EXA_ENOTFOUND. */
static const struct fleet_cluster *
find_cluster(const struct fleet *f, const char *name, exa_error_t *err)
{
    const struct fleet_cluster *c = name ? fleet_find(f, name) : NULL;
    if (!c)
        exa_err(err, EXA_ENOTFOUND, "unknown cluster '%s'", name ? name : "");
    return c;
}

json_t *view_nodes(const struct view_ctx *vc, const char *cluster,
                   exa_error_t *err)
{
    struct fleet f;
    struct node_row *rows = NULL;
    size_t n = 0;
    json_t *a = NULL;
    if (load_fleet(vc, &f, err) < 0)
        return NULL;
    if (find_cluster(&f, cluster, err) &&
        store_nodes_list(vc->st, cluster, &rows, &n, err) == 0)
        a = nodes_json(rows, n);
    node_rows_free(rows, n);
    fleet_release(&f);
    return finish(vc, a, err);
}

json_t *view_cluster(const struct view_ctx *vc, const char *name,
                     exa_error_t *err)
{
    struct fleet f;
    const struct fleet_cluster *c;
    struct node_row *rows = NULL;
    size_t n = 0;
    json_t *o = NULL;
    struct place_ask ask = {0, 0, 1, NULL};
    struct place_capacity cap;
    if (load_fleet(vc, &f, err) < 0)
        return NULL;
    if (!(c = find_cluster(&f, name, err)) ||
        store_nodes_list(vc->st, name, &rows, &n, err) < 0)
        goto out;
    o = cluster_json(vc, c);
    place_capacity_of(rows, n, &ask, time(NULL), &cap);
    jx_set(o, "nodes", nodes_json(rows, n));
    jx_set(o, "gpus_total", json_integer(cap.total_gpus));
    jx_set(o, "gpus_idle", json_integer(cap.idle_gpus));
    jx_set(o, "snapshot_age_s",
           jx_int_or_null(cap.age_s >= 0, (long long)llround(cap.age_s)));
    jx_set(o, "captured_at", place_iso_or_null(cap.captured_at));
out:
    node_rows_free(rows, n);
    fleet_release(&f);
    return finish(vc, o, err);
}

/* ---- jobs ---- */

/* The rows of vf (NULL: all), newest first; 0 or -1 with err. */
static int list_jobs(const struct view_ctx *vc,
                     const struct view_job_filter *vf, struct job_rec **list,
                     size_t *n, exa_error_t *err)
{
    struct job_filter f = {0};
    if (vf) {
        f.cluster = vf->cluster;
        f.model = vf->model;
        f.state = vf->state;
        f.since = vf->since;
        f.limit = vf->limit;
        f.offset = vf->offset;
    }
    if (f.limit < 0 || f.offset < 0)
        return exa_err(err, EXA_EUSAGE,
                       "limit and offset must not be negative");
    return store_job_list(vc->st, &f, list, n, err);
}

int view_jobs_write(const struct view_ctx *vc, const struct view_job_filter *vf,
                    struct jsonw *w, exa_error_t *err)
{
    struct job_rec *list = NULL;
    size_t n = 0;
    if (vc->redact)
        BUG("view_jobs_write of a redacted view");
    if (list_jobs(vc, vf, &list, &n, err) < 0)
        return -1;
    jsonw_arr_begin(w);
    for (size_t i = 0; i < n; i++)
        job_rec_write_json(&list[i], w);
    jsonw_arr_end(w);
    job_rec_free_list(list, n);
    return 0;
}

json_t *view_jobs(const struct view_ctx *vc, const struct view_job_filter *vf,
                  exa_error_t *err)
{
    struct job_rec *list = NULL;
    size_t n = 0;
    json_t *a;
    if (list_jobs(vc, vf, &list, &n, err) < 0)
        return NULL;
    a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, job_rec_to_json(&list[i]));
    job_rec_free_list(list, n);
    return finish(vc, a, err);
}

/* Read one job into *j; cluster NULL: the only cluster having it. */
static int get_job(const struct view_ctx *vc, const char *cluster,
                   const char *job_id, struct job_rec *j, exa_error_t *err)
{
    struct strvec cl = STRVEC_INIT;
    int rc;
    if (!job_id || !*job_id)
        return exa_err(err, EXA_EUSAGE, "no job id given");
    if (!cluster) {
        if (store_job_clusters(vc->st, job_id, &cl, NULL, err) < 0)
            return -1;
        if (cl.nr == 0) {
            strvec_clear(&cl);
            return exa_err(err, EXA_ENOTFOUND, "unknown job '%s'", job_id);
        }
        if (cl.nr > 1) {
            char *names = fleet_join(&cl);
            exa_err(err, EXA_EUSAGE,
                    "job '%s' is recorded on clusters %s; name one", job_id,
                    names);
            free(names);
            strvec_clear(&cl);
            return -1;
        }
        cluster = cl.v[0];
    }
    rc = store_job_get(vc->st, cluster, job_id, j, err);
    if (rc < 0 && err && err->code == EXA_ENOTFOUND)
        exa_err(err, EXA_ENOTFOUND, "unknown job '%s' on cluster '%s'", job_id,
                cluster);
    strvec_clear(&cl);
    return rc;
}

json_t *view_job(const struct view_ctx *vc, const char *cluster,
                 const char *job_id, exa_error_t *err)
{
    struct job_rec j;
    json_t *o;
    job_rec_init(&j);
    if (get_job(vc, cluster, job_id, &j, err) < 0) {
        job_rec_release(&j);
        return NULL;
    }
    o = job_rec_to_json(&j);
    job_rec_release(&j);
    return finish(vc, o, err);
}

/* Exposed to facility.c through a private prototype. */
int view_get_job_(const struct view_ctx *vc, const char *cluster,
                  const char *job_id, struct job_rec *j, exa_error_t *err);
int view_get_job_(const struct view_ctx *vc, const char *cluster,
                  const char *job_id, struct job_rec *j, exa_error_t *err)
{
    return get_job(vc, cluster, job_id, j, err);
}

/* ---- placement and capacity ---- */

json_t *view_place(const struct view_ctx *vc, const struct view_place_ask *va,
                   int *status, exa_error_t *err)
{
    struct strvec failed = STRVEC_INIT, errors = STRVEC_INIT;
    struct place_ask ask = {va->gpus, va->cpus, va->nodes, va->partition};
    const char *provider =
        va->provider ? va->provider : getenv("EXAMLOPS_PLACEMENT_PROVIDER");
    const struct place_scorer *scorer = place_scorer_find(provider);
    int max_age = place_max_age_from_env(), st_rc;
    struct fleet f = {NULL, 0};
    struct place_cluster *cands = NULL;
    size_t ncands = 0, nnodes = 0, npnodes = 0;
    struct node_row *nodes = NULL, *pnodes = NULL;
    struct place_result res;
    char *rp = NULL;
    json_t *doc = NULL;

    if (!scorer) {
        struct strbuf names = STRBUF_INIT;
        const struct place_scorer *const *all = place_scorers();
        for (size_t i = 0; all[i]; i++)
            strbuf_addf(&names, "%s%s", i ? ", " : "", all[i]->name);
        exa_err(err, EXA_EUSAGE, "unknown placement provider '%s' (known: %s)",
                provider, names.buf);
        strbuf_release(&names);
        return NULL;
    }
    if (ask.nodes < 1 || ask.gpus < 0 || ask.cpus < 0) {
        exa_err(err, EXA_EUSAGE,
                "invalid ask: gpus and cpus must be >= 0, nodes >= 1");
        return NULL;
    }
    /* as `exa hpc place`: the partition jobs of this process go to */
    if (!ask.partition)
        ask.partition = sched_partition_from_env(NULL);
    if (ask.partition && place_partition_check(ask.partition, err) < 0)
        return NULL;
    if (!(rp = regpath_of(vc, err)))
        return NULL;
    if (fleet_load(vc->st, rp, &f, err) < 0 ||
        place_load_candidates(vc->st, &f, &cands, &ncands, &nodes, &nnodes,
                              err) < 0)
        goto out;
    if (va->refresh && max_age > 0) {
        int n = fleet_refresh_stale_of(vc->st, rp, cands, ncands, max_age,
                                       time(NULL), &failed, &errors);
        if (n > 0) {
            free(cands);
            node_rows_free(nodes, nnodes);
            cands = NULL;
            nodes = NULL;
            ncands = nnodes = 0;
            if (place_load_candidates(vc->st, &f, &cands, &ncands, &nodes,
                                      &nnodes, err) < 0)
                goto out;
        }
    }
    if (place_restrict_partition(&f, ask.partition, cands, ncands, &pnodes,
                                 &npnodes, err) < 0 ||
        place_choose(cands, ncands, &ask, scorer, max_age, time(NULL), &res,
                     err) < 0)
        goto out;
    st_rc = res.chosen >= 0 ? 0 : ncands == 0 ? 6 : 1;
    if (status)
        *status = st_rc;
    doc = place_result_json(&res, 1);
    place_json_mark_stale(json_object_get(doc, "candidates"), "name", &failed,
                          &errors);
    place_json_mark_stale(
        json_object_get(json_object_get(doc, "explain"), "candidates"),
        "cluster", &failed, &errors);
    place_result_release(&res);
out:
    strvec_clear(&failed);
    strvec_clear(&errors);
    free(cands);
    node_rows_free(nodes, nnodes);
    free(pnodes);
    fleet_release(&f);
    free(rp);
    return finish(vc, doc, err);
}

json_t *view_capacity(const struct view_ctx *vc, int refresh, exa_error_t *err)
{
    struct capacity_row *rows = NULL;
    struct fleet f = {NULL, 0};
    struct strvec failed = STRVEC_INIT, errors = STRVEC_INIT;
    size_t n = 0;
    int max_age = place_max_age_from_env();
    char *rp = regpath_of(vc, err);
    json_t *doc = NULL;
    if (!rp)
        return NULL;
    if (refresh && max_age > 0) {
        exa_error_t e = EXA_ERROR_INIT;
        if (fleet_load(vc->st, rp, &f, err) < 0)
            goto out;
        fleet_refresh_stale(vc->st, rp, &f, max_age, time(NULL), &failed,
                            &errors, &e);
    }
    if (capacity_report(vc->st, rp, &rows, &n, err) < 0)
        goto out;
    doc = capacity_json(rows, n);
    place_json_mark_stale(doc, "name", &failed, &errors);
out:
    strvec_clear(&failed);
    strvec_clear(&errors);
    fleet_release(&f);
    capacity_rows_free(rows, n);
    free(rp);
    return finish(vc, doc, err);
}

json_t *view_queue(const struct view_ctx *vc, const char *cluster,
                   exa_error_t *err)
{
    struct fleet f = {NULL, 0};
    struct sched_queue q = {NULL, 0, 0};
    const struct fleet_cluster *c;
    char *rp = NULL;
    json_t *d = NULL, *jobs;
    if (cluster_name_check(cluster, "cluster", err) < 0)
        return NULL;
    if (!(rp = regpath_of(vc, err)))
        return NULL;
    if (fleet_load(vc->st, rp, &f, err) < 0 ||
        fleet_require_active(&f, cluster, err) < 0 ||
        !(c = find_cluster(&f, cluster, err)))
        goto out;
    if (fleet_cluster_queue(vc->st, rp, cluster, &q, err) < 0) {
        /* never an empty list: the scheduler did not answer */
        exa_err_prefix(err, "queue of '%s': query failed", cluster);
        goto out;
    }
    d = json_object();
    jobs = json_array();
    for (size_t i = 0; i < q.n; i++) {
        json_t *j = json_object();
        int hide = vc->redact && q.v[i].user && c->def.ssh_user &&
                   !strcmp(q.v[i].user, c->def.ssh_user);
        jx_set(j, "job_id", jx_str(q.v[i].id));
        jx_set(j, "name", jx_str(q.v[i].name));
        jx_set(j, "user", hide ? NULL : jx_str(q.v[i].user));
        jx_set(j, "state", jx_str(q.v[i].state));
        jx_set(j, "raw_state", jx_str(q.v[i].raw_state));
        jx_set(j, "partition", jx_str(q.v[i].partition));
        jx_set(j, "nodes",
               q.v[i].nodes >= 0 ? json_integer(q.v[i].nodes) : NULL);
        jx_set(j, "reason", jx_str(q.v[i].reason));
        json_array_append_new(jobs, j);
    }
    jx_set(d, "cluster", jx_str(cluster));
    jx_set(d, "jobs", jobs);
    /* records not believed (sched.h struct sched_queue) */
    jx_set(d, "refused_records", json_integer((json_int_t)q.refused));
out:
    sched_queue_release(&q);
    fleet_release(&f);
    free(rp);
    return finish(vc, d, err);
}

int view_preflight(const struct view_ctx *vc, const char *name,
                   const struct preflight_ask *ask, const char *remote_exa,
                   struct preflight_report *rep, exa_error_t *err)
{
    struct fleet f = {NULL, 0};
    const struct fleet_cluster *c;
    int rc = -1;
    if (!remote_exa)
        remote_exa = getenv("EXAMLOPS_HPC_REMOTE_EXA");
    if (cluster_name_check(name, "NAME", err) < 0)
        return -1;
    if (load_fleet(vc, &f, err) < 0)
        return -1;
    if (fleet_require_active(&f, name, err) < 0 ||
        !(c = find_cluster(&f, name, err)))
        goto out;
    rc = fleet_cluster_preflight(c, ask, remote_exa, rep, err);
out:
    fleet_release(&f);
    return rc;
}

/* ---- models, costs, carbon, audit ---- */

json_t *view_models(const struct view_ctx *vc, exa_error_t *err)
{
    struct model_summary *list = NULL;
    size_t n = 0;
    json_t *arr;
    if (store_model_list(vc->st, &list, &n, err) < 0)
        return NULL;
    arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        jx_set(o, "model", jx_str(list[i].model));
        jx_set(o, "versions", json_integer(list[i].versions));
        jx_set(o, "latest_version", json_integer(list[i].latest_version));
        jx_set(o, "stage", jx_str(list[i].latest_stage));
        jx_set(o, "rmse", jx_real(list[i].latest_rmse));
        jx_set(o, "created_at", jx_str(list[i].latest_created_at));
        json_array_append_new(arr, o);
    }
    model_summary_free_list(list, n);
    return finish(vc, arr, err);
}

json_t *view_model(const struct view_ctx *vc, const char *model,
                   long long version, exa_error_t *err)
{
    struct model_version *list = NULL;
    size_t n = 0;
    json_t *doc, *arr;
    if (!model || !*model) {
        exa_err(err, EXA_EUSAGE, "no model name given");
        return NULL;
    }
    if (store_model_versions(vc->st, model, version, &list, &n, err) < 0)
        return NULL;
    if (!n) {
        if (version)
            exa_err(err, EXA_ENOTFOUND, "model '%s' has no version %lld", model,
                    version);
        else
            exa_err(err, EXA_ENOTFOUND,
                    "no versions of model '%s' are registered", model);
        return NULL;
    }
    doc = json_object();
    arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, model_version_to_json(&list[i]));
    model_version_free_list(list, n);
    jx_set(doc, "model", jx_str(model));
    jx_set(doc, "versions", arr);
    return finish(vc, doc, err);
}

json_t *view_costs(const struct view_ctx *vc, exa_error_t *err)
{
    struct cost_summary *s = NULL;
    size_t n = 0;
    json_t *arr;
    if (cost_summary_list(vc->st, &s, &n, err) < 0)
        return NULL;
    arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        jx_set(o, "model_name", jx_str(s[i].model));
        jx_set(o, "provider", jx_str(s[i].provider));
        jx_set(o, "n_runs", json_integer(s[i].n_runs));
        jx_set(o, "total_gpu_hours",
               jx_real(cost_round(s[i].total_gpu_hours, 4)));
        jx_set(o, "total_cost_usd",
               jx_real(cost_round(s[i].total_cost_usd, 4)));
        json_array_append_new(arr, o);
    }
    cost_summary_free(s, n);
    return finish(vc, arr, err);
}

json_t *view_carbon(const struct view_ctx *vc, const char *model,
                    exa_error_t *err)
{
    struct carbon_totals t;
    json_t *doc;
    if (carbon_totals_get(vc->st, model, &t, err) < 0)
        return NULL;
    doc = json_object();
    jx_set(doc, "model", jx_str(model));
    jx_set(doc, "n", json_integer(t.n));
    jx_set(doc, "total_kwh", jx_real(t.kwh));
    jx_set(doc, "operational_co2e_g", jx_real(t.co2e_g));
    /* carbon scope: only operational emissions are modelled */
    jx_set(doc, "scope", jx_str("operational"));
    jx_set(doc, "embodied_co2e_g", NULL);
    jx_set(doc, "embodied_status", jx_str("unavailable"));
    return finish(vc, doc, err);
}

static json_t *event_json(const struct audit_event *ev)
{
    json_t *o = json_object();
    json_t *d = ev->details ? json_loads(ev->details, 0, NULL) : NULL;
    jx_set(o, "id", json_integer(ev->id));
    jx_set(o, "ts", jx_str(ev->ts));
    jx_set(o, "source", jx_str(ev->source));
    jx_set(o, "actor", jx_str(ev->actor));
    jx_set(o, "action", jx_str(ev->action));
    jx_set(o, "target", jx_str(ev->target));
    jx_set(o, "details", d);
    jx_set(o, "prev_hash", jx_str(ev->prev_hash));
    jx_set(o, "hash", jx_str(ev->hash));
    return o;
}

json_t *view_audit(const struct view_ctx *vc, const struct view_audit_filter *f,
                   exa_error_t *err)
{
    struct audit_event *v = NULL;
    size_t n = 0, first = 0;
    json_t *a;
    if (audit_list(vc->st, f ? f->target : NULL, f ? f->since : NULL, &v, &n,
                   err) < 0)
        return NULL;
    if (f && f->limit > 0 && (size_t)f->limit < n)
        first = n - (size_t)f->limit;
    a = json_array();
    for (size_t i = first; i < n; i++)
        json_array_append_new(a, event_json(&v[i]));
    audit_events_free(v, n);
    return finish(vc, a, err);
}

/* ---- helpers ---- */

int view_parse_since(const char *s, char **out, exa_error_t *err)
{
    double secs;
    size_t n = s ? strlen(s) : 0;
    *out = NULL;
    if (n && fsd_parse(s, &secs) == 0 && secs >= 0) {
        char buf[32];
        time_format_iso8601(time(NULL) - (time_t)secs, buf, sizeof(buf));
        *out = xstrdup(buf);
        return 0;
    }
    if (n >= 10 && n <= 20 && s[4] == '-' && s[7] == '-') {
        char *t = xstrdup(s);
        for (size_t i = 0; i < n; i++) {
            if (t[i] == ' ')
                t[i] = 'T';
            if (!strchr("0123456789-:TZ", t[i])) {
                free(t);
                goto bad;
            }
        }
        if (n == 20 && t[19] != 'Z') {
            free(t);
            goto bad;
        }
        if (t[n - 1] == 'Z')
            t[n - 1] = '\0';
        *out = t;
        return 0;
    }
bad:
    return exa_err(err, EXA_EUSAGE,
                   "since '%.64s': expected a UTC time like "
                   "2026-12-01T12:03:10Z (or a prefix) or an age like 2h",
                   s ? s : "");
}
