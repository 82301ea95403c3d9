/*
 * provision.c - the provisioner (provision.h): configuration, the
 * decision, submission without orphan windows, reconcile, the breaker,
 * shutdown and the status view.
 *
 * Every cluster action opens the cluster through gate_open(GATE_SCHEDULE)
 * (ACTIVE, the pinned host key, the cluster's own transport); sbatch is
 * run through that transport with the script on stdin, so the join token
 * is never in an argv, an environment or a file on the login node. squeue
 * goes through the adapter (sched_queue, one call per cluster per
 * reconcile), the state of a job that left the queue through
 * sched_status_batch, its output through sched_logs.
 */
#include "libprovision/provision.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libfleet/gate.h"
#include "libhostlist/hostlist.h"
#include "libsched/parse_slurm.h"
#include "libsched/sched.h"
#include "libstore/provreq.h"
#include "libstore/tasks.h"
#include "libtask/engine.h"
#include "libtask/proto.h"
#include "libtask/token.h"
#include "libtransport/transport.h"
#include "libutil/json.h"
#include "libutil/shquote.h"
#include "libutil/tlspin.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

/* ---- configuration ---- */

static void strv_free(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void prov_config_release(struct prov_config *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct prov_entry *e = &c->v[i];
        for (size_t k = 0; k < e->np; k++) {
            struct prov_profile *p = &e->p[k];
            free(p->name);
            strv_free(p->labels, p->nlabels);
            strv_free(p->sbatch, p->nsbatch);
            strv_free(p->prerun, p->nprerun);
        }
        free(e->p);
        free(e->name);
        free(e->cluster);
        free(e->engine_url);
        free(e->remote_exa);
        free(e->output_dir);
        free(e->pin);
    }
    free(c->v);
    memset(c, 0, sizeof(*c));
}

static int known_keys(const json_t *o, const char *const *keys,
                      const char *where, exa_error_t *err)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        int ok = 0;
        (void)v;
        for (size_t i = 0; keys[i]; i++)
            ok |= !strcmp(keys[i], k);
        if (!ok)
            return exa_err(err, EXA_ECONFIG, "%s: unknown member '%s'", where,
                           k);
    }
    return 0;
}

static int get_secs(const json_t *o, const char *key, double def, double lo,
                    double hi, double *out, const char *where, exa_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v) || !(json_number_value(v) >= lo) ||
        json_number_value(v) > hi)
        return exa_err(err, EXA_ECONFIG,
                       "%s: '%s' must be seconds from %g to %g", where, key, lo,
                       hi);
    *out = json_number_value(v);
    return 0;
}

static int get_count(const json_t *o, const char *key, long long def,
                     long long lo, long long hi, long long *out,
                     const char *where, exa_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo ||
        json_integer_value(v) > hi)
        return exa_err(err, EXA_ECONFIG,
                       "%s: '%s' must be an integer from %lld to %lld", where,
                       key, lo, hi);
    *out = json_integer_value(v);
    return 0;
}

static int get_string(const json_t *o, const char *key, const char *def,
                      int required, char **out, const char *where,
                      exa_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        if (required)
            return exa_err(err, EXA_ECONFIG, "%s: '%s' is required", where,
                           key);
        *out = def ? xstrdup(def) : NULL;
        return 0;
    }
    if (!json_is_string(v) || !json_string_length(v) ||
        strlen(json_string_value(v)) != json_string_length(v) ||
        strchr(json_string_value(v), '\n'))
        return exa_err(err, EXA_ECONFIG,
                       "%s: '%s' must be a non-empty one-line string", where,
                       key);
    *out = xstrdup(json_string_value(v));
    return 0;
}

/* An array of one-line strings; names only when names. */
static int get_lines(const json_t *o, const char *key, int names, char ***out,
                     size_t *n, const char *where, exa_error_t *err)
{
    const json_t *a = json_object_get(o, key);
    char **v;
    if (!a) {
        *out = xcalloc(1, sizeof(char *));
        *n = 0;
        return 0;
    }
    if (!json_is_array(a) || json_array_size(a) > 256)
        return exa_err(err, EXA_ECONFIG, "%s: '%s' must be an array of strings",
                       where, key);
    v = xcalloc(json_array_size(a) + 1, sizeof(char *));
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *s = json_array_get(a, i);
        if (!json_is_string(s) ||
            strlen(json_string_value(s)) != json_string_length(s) ||
            strchr(json_string_value(s), '\n') ||
            (names && !tp_name_ok(json_string_value(s)))) {
            strv_free(v, i);
            return exa_err(err, EXA_ECONFIG,
                           "%s: '%s' entry %zu must be a one-line string%s",
                           where, key, i, names ? " of [A-Za-z0-9._-]" : "");
        }
        v[i] = xstrdup(json_string_value(s));
    }
    *out = v;
    *n = json_array_size(a);
    return 0;
}

static int parse_profile(const json_t *o, const char *prov,
                         struct prov_profile *p, exa_error_t *err)
{
    static const char *const keys[] = {"name",   "cpus",       "gpus",
                                       "ram_mb", "labels",     "sbatch",
                                       "prerun", "walltime_s", NULL};
    char where[200];
    xsnprintf(where, sizeof(where), "provisioner '%s' profile", prov);
    if (!json_is_object(o))
        return exa_err(err, EXA_ECONFIG, "%s: must be an object", where);
    if (get_string(o, "name", NULL, 1, &p->name, where, err) < 0)
        return -1;
    if (!tp_name_ok(p->name))
        return exa_err(err, EXA_ECONFIG, "%s '%s': name must be [A-Za-z0-9._-]",
                       where, p->name);
    xsnprintf(where, sizeof(where), "provisioner '%s' profile '%s'", prov,
              p->name);
    if (known_keys(o, keys, where, err) < 0 ||
        get_count(o, "cpus", 1, 1, 4096, &p->cpus, where, err) < 0 ||
        get_count(o, "gpus", 0, 0, 1024, &p->gpus, where, err) < 0 ||
        get_count(o, "ram_mb", 0, 0, 1LL << 40, &p->ram_mb, where, err) < 0 ||
        get_lines(o, "labels", 1, &p->labels, &p->nlabels, where, err) < 0 ||
        get_lines(o, "sbatch", 0, &p->sbatch, &p->nsbatch, where, err) < 0 ||
        get_lines(o, "prerun", 0, &p->prerun, &p->nprerun, where, err) < 0 ||
        get_secs(o, "walltime_s", 3600, 60, 30 * 86400.0, &p->walltime_s, where,
                 err) < 0)
        return -1;
    return 0;
}

static int parse_entry(const json_t *o, struct prov_entry *e, exa_error_t *err)
{
    static const char *const keys[] = {"name",
                                       "cluster",
                                       "engine_url",
                                       "remote_exa",
                                       "insecure_http",
                                       "allow_root",
                                       "pin",
                                       "provision_timeout_s",
                                       "max_idle_s",
                                       "drain_s",
                                       "provision_delay_s",
                                       "submit_min_interval_s",
                                       "reconcile_s",
                                       "exclude_node_s",
                                       "output_dir",
                                       "breaker",
                                       "profiles",
                                       NULL};
    static const char *const bkeys[] = {"failed_starts", "failed_submits",
                                        NULL};
    char where[160];
    const json_t *b, *ps;
    if (!json_is_object(o))
        return exa_err(err, EXA_ECONFIG, "provisioner: must be an object");
    if (get_string(o, "name", NULL, 1, &e->name, "provisioner", err) < 0)
        return -1;
    if (!tp_name_ok(e->name))
        return exa_err(err, EXA_ECONFIG,
                       "provisioner '%s': name must be [A-Za-z0-9._-]",
                       e->name);
    xsnprintf(where, sizeof(where), "provisioner '%s'", e->name);
    if (known_keys(o, keys, where, err) < 0 ||
        get_string(o, "cluster", e->name, 0, &e->cluster, where, err) < 0 ||
        get_string(o, "engine_url", NULL, 1, &e->engine_url, where, err) < 0 ||
        get_string(o, "remote_exa",
                   getenv("EXAMLOPS_HPC_REMOTE_EXA") &&
                           *getenv("EXAMLOPS_HPC_REMOTE_EXA")
                       ? getenv("EXAMLOPS_HPC_REMOTE_EXA")
                       : "exa",
                   0, &e->remote_exa, where, err) < 0 ||
        get_string(o, "output_dir", ".exa/provision", 0, &e->output_dir, where,
                   err) < 0 ||
        get_string(o, "pin", NULL, 0, &e->pin, where, err) < 0 ||
        get_secs(o, "provision_timeout_s", 900, 1, 6 * 3600.0,
                 &e->provision_timeout_s, where, err) < 0 ||
        get_secs(o, "max_idle_s", 300, 0, 86400, &e->max_idle_s, where, err) <
            0 ||
        get_secs(o, "drain_s", 300, 0, 86400, &e->drain_s, where, err) < 0 ||
        get_secs(o, "provision_delay_s", 5, 0, 3600, &e->provision_delay_s,
                 where, err) < 0 ||
        get_secs(o, "submit_min_interval_s", 10, 0, 3600,
                 &e->submit_min_interval_s, where, err) < 0 ||
        get_secs(o, "reconcile_s", 30, 0.5, 3600, &e->reconcile_s, where, err) <
            0 ||
        get_secs(o, "exclude_node_s", PROV_EXCLUDE_NODE_S, 0,
                 PROV_EXCLUDE_NODE_MAX_S, &e->exclude_node_s, where, err) < 0)
        return -1;
    if (strncmp(e->engine_url, "http://", 7) &&
        strncmp(e->engine_url, "https://", 8))
        return exa_err(err, EXA_ECONFIG,
                       "%s: 'engine_url' must start with http:// or https://",
                       where);
    if (!tp_name_ok(e->cluster))
        return exa_err(err, EXA_ECONFIG, "%s: 'cluster' must be a name", where);
    if (e->pin && !tlspin_valid(e->pin))
        return exa_err(err, EXA_ECONFIG,
                       "%s: 'pin' must be sha256//BASE64 (44 base64 "
                       "characters; ';' between several)",
                       where);
    e->insecure_http = json_is_true(json_object_get(o, "insecure_http"));
    e->allow_root = json_is_true(json_object_get(o, "allow_root"));
    if (!strncmp(e->engine_url, "http://", 7) && !e->insecure_http &&
        strncmp(e->engine_url, "http://127.", 11) &&
        strncmp(e->engine_url, "http://[::1]", 12) &&
        strncmp(e->engine_url, "http://localhost", 16))
        return exa_err(err, EXA_ECONFIG,
                       "%s: plain http beyond loopback needs "
                       "\"insecure_http\": true",
                       where);
    b = json_object_get(o, "breaker");
    e->failed_starts = 3;
    e->failed_submits = 10;
    if (b) {
        char bw[200];
        xsnprintf(bw, sizeof(bw), "%s breaker", where);
        if (!json_is_object(b) || known_keys(b, bkeys, bw, err) < 0 ||
            get_count(b, "failed_starts", 3, 1, 1000, &e->failed_starts, bw,
                      err) < 0 ||
            get_count(b, "failed_submits", 10, 1, 1000, &e->failed_submits, bw,
                      err) < 0)
            return err && err->text[0]
                       ? -1
                       : exa_err(err, EXA_ECONFIG, "%s: must be an object", bw);
    }
    ps = json_object_get(o, "profiles");
    if (!json_is_array(ps) || !json_array_size(ps) || json_array_size(ps) > 64)
        return exa_err(err, EXA_ECONFIG,
                       "%s: 'profiles' must be an array of 1 to 64", where);
    e->p = xcalloc(json_array_size(ps), sizeof(*e->p));
    for (size_t i = 0; i < json_array_size(ps); i++) {
        e->np = i + 1;
        if (parse_profile(json_array_get(ps, i), e->name, &e->p[i], err) < 0)
            return -1;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(e->p[k].name, e->p[i].name))
                return exa_err(err, EXA_ECONFIG,
                               "%s: profile '%s' is named twice", where,
                               e->p[i].name);
    }
    return 0;
}

int prov_config_parse(const char *text, size_t len, struct prov_config *out,
                      exa_error_t *err)
{
    json_error_t je;
    json_t *j, *a;
    struct prov_config c = {NULL, 0};
    static const char *const keys[] = {"provisioners", NULL};
    if (len > (1u << 20))
        return exa_err(err, EXA_ECONFIG, "provisioners.json is over 1 MiB");
    j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return exa_err(err, EXA_ECONFIG, "provisioners.json line %d: %s",
                       je.line, je.text);
    a = json_object_get(j, "provisioners");
    if (!json_is_object(j) ||
        known_keys(j, keys, "provisioners.json", err) < 0 ||
        !json_is_array(a) || json_array_size(a) > 64) {
        json_decref(j);
        if (err && err->text[0])
            return -1;
        return exa_err(err, EXA_ECONFIG,
                       "provisioners.json: expected {\"provisioners\": [...]}");
    }
    c.v = xcalloc(json_array_size(a) + 1, sizeof(*c.v));
    for (size_t i = 0; i < json_array_size(a); i++) {
        c.n = i + 1;
        if (parse_entry(json_array_get(a, i), &c.v[i], err) < 0)
            goto fail;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(c.v[k].name, c.v[i].name)) {
                exa_err(err, EXA_ECONFIG,
                        "provisioners.json: provisioner '%s' is named twice",
                        c.v[i].name);
                goto fail;
            }
    }
    json_decref(j);
    *out = c;
    return 0;
fail:
    json_decref(j);
    prov_config_release(&c);
    return -1;
}

char *prov_config_path(void)
{
    const char *e = getenv("EXAMLOPS_PROVISIONERS");
    const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
    if (e && *e)
        return xstrdup(e);
    if (x && *x)
        return xstrfmt("%s/examlops/provisioners.json", x);
    return xstrfmt("%s/.config/examlops/provisioners.json", h ? h : ".");
}

int prov_config_load(const char *path, struct prov_config *out,
                     exa_error_t *err)
{
    char *p = path ? xstrdup(path) : prov_config_path();
    struct strbuf sb = STRBUF_INIT;
    char buf[8192];
    ssize_t n;
    int fd = open(p, O_RDONLY | O_CLOEXEC), rc;
    memset(out, 0, sizeof(*out));
    if (fd < 0) {
        rc = errno == ENOENT ? 0
                             : exa_err(err, EXA_ECONFIG, "cannot read '%s': %s",
                                       p, strerror(errno));
        free(p);
        return rc;
    }
    while ((n = read(fd, buf, sizeof(buf))) > 0 && sb.len <= (1u << 20))
        strbuf_add(&sb, buf, (size_t)n);
    close(fd);
    rc = prov_config_parse(sb.buf, sb.len, out, err);
    if (rc < 0)
        exa_err_prefix(err, "'%s'", p);
    strbuf_release(&sb);
    free(p);
    return rc < 0 ? -1 : 1;
}

/* ---- the provisioner ---- */

struct prov_cstate {
    char name[129];
    double last_submit;
};

struct provisioner {
    store_t *st;
    char eid[9];
    struct prov_config cfg;
    char *regpath, *keyfile;
    double last_reconcile;
    double token_slack_s; /* past provision_timeout_s: the token's exp */
    struct prov_cstate cs[64];
    size_t ncs;
    struct prov_counters c;
};

struct provisioner *prov_new(store_t *st, const char *engine_id,
                             struct prov_config *cfg, const char *regpath,
                             const char *keyfile)
{
    struct provisioner *p = xcalloc(1, sizeof(*p));
    p->st = st;
    xsnprintf(p->eid, sizeof(p->eid), "%s", engine_id);
    p->cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    p->regpath = regpath ? xstrdup(regpath) : NULL;
    p->keyfile = keyfile ? xstrdup(keyfile) : NULL;
    p->token_slack_s = 120;
    return p;
}

void prov_set_token_slack(struct provisioner *p, double slack_s)
{
    if (slack_s >= 0)
        p->token_slack_s = slack_s;
}

void prov_free(struct provisioner *p)
{
    if (!p)
        return;
    prov_config_release(&p->cfg);
    free(p->regpath);
    free(p->keyfile);
    free(p);
}

void prov_counters_get(struct provisioner *p, struct prov_counters *out)
{
    *out = p->c;
}

const struct prov_config *prov_config_of(const struct provisioner *p)
{
    return &p->cfg;
}

static struct prov_cstate *cstate(struct provisioner *p, const char *name)
{
    for (size_t i = 0; i < p->ncs; i++)
        if (!strcmp(p->cs[i].name, name))
            return &p->cs[i];
    if (p->ncs >= sizeof(p->cs) / sizeof(p->cs[0]))
        return &p->cs[0];
    xsnprintf(p->cs[p->ncs].name, sizeof(p->cs[p->ncs].name), "%s", name);
    return &p->cs[p->ncs++];
}

static int event(store_t *st, double now, const char *kind, const char *cl,
                 const char *prof, const char *worker, json_t *d,
                 exa_error_t *err)
{
    char *s = d ? jx_dumps_canonical(d) : NULL;
    int rc = store_wevent_add(st, now, kind, cl, prof, worker, TASK_NULL_INT,
                              TASK_NULL_INT, s, err);
    free(s);
    json_decref(d);
    return rc;
}

static int has_label(char **v, size_t n, const char *l)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], l))
            return 1;
    return 0;
}

/* Every label of the comma list want is a label of p or its name. */
static int profile_fits(const struct prov_profile *p,
                        const struct task_shape *s)
{
    const char *q = s->labels;
    if (p->cpus < s->cpus || p->gpus < s->gpus || p->ram_mb < s->ram_mb ||
        p->walltime_s < s->timeout_s + 120)
        return 0;
    while (q && *q) {
        const char *c = strchr(q, ',');
        char *l = c ? xstrndup(q, (size_t)(c - q)) : xstrdup(q);
        int ok = has_label(p->labels, p->nlabels, l) || !strcmp(l, p->name);
        free(l);
        if (!ok)
            return 0;
        q = c ? c + 1 : NULL;
    }
    return 1;
}

static int worker_fits(const struct worker_rec *w, const struct task_shape *s,
                       double now)
{
    const char *q = s->labels;
    if (strcmp(w->state, "attached") || w->drain_requested ||
        w->cpus < s->cpus || w->gpus < s->gpus || w->ram_mb < s->ram_mb)
        return 0;
    if (s->cluster && (!w->cluster || strcmp(w->cluster, s->cluster)))
        return 0; /* pinned to another cluster's workers */
    if (w->walltime_end_at > 0 && w->walltime_end_at - now < s->timeout_s + 60)
        return 0;
    while (q && *q) {
        const char *c = strchr(q, ',');
        size_t n = c ? (size_t)(c - q) : strlen(q);
        const char *h = w->labels;
        /* the worker's profile name counts as a label, as in profile_fits */
        int ok =
            w->profile && strlen(w->profile) == n && !strncmp(w->profile, q, n);
        while (h && *h) {
            const char *d = strchr(h, ',');
            size_t m = d ? (size_t)(d - h) : strlen(h);
            if (m == n && !strncmp(h, q, n))
                ok = 1;
            h = d ? d + 1 : NULL;
        }
        if (!ok)
            return 0;
        q = c ? c + 1 : NULL;
    }
    return 1;
}

static char *kv_key(const char *prov, const char *prof)
{
    return xstrfmt("prov_resume:%s/%s", prov, prof);
}

/* 1 when the breaker of (e, prof) is open: the last failed_starts
 * requests since the last resume all failed to start, or the last
 * failed_submits all failed to submit. */
static int breaker_open(store_t *st, const struct prov_entry *e,
                        const char *prof, char **last_error, exa_error_t *err)
{
    struct provreq *v = NULL;
    size_t n = 0;
    char *k = kv_key(e->name, prof), *val = NULL;
    double resumed = 0;
    long long lim = e->failed_starts > e->failed_submits ? e->failed_starts
                                                         : e->failed_submits;
    int found = store_engine_get(st, k, &val, err), open = 0;
    long long starts = 0, submits = 0;
    free(k);
    if (found < 0)
        return -1;
    if (found)
        resumed = strtod(val, NULL);
    free(val);
    if (store_provreq_recent(st, e->name, prof, lim, &v, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n && v[i].created_at > resumed; i++) {
        int start =
            v[i].reason && (!strcmp(v[i].reason, "ended_before_attach") ||
                            !strcmp(v[i].reason, "timeout"));
        int submit = v[i].reason && !strcmp(v[i].reason, "submit_error");
        if (!start && !submit)
            break;
        if (start)
            starts++;
        if (submit)
            submits++;
        if (i == 0 && last_error && v[i].detail)
            *last_error = xstrdup(v[i].detail);
    }
    if (starts >= e->failed_starts || submits >= e->failed_submits)
        open = 1;
    provreq_free_list(v, n);
    return open;
}

/* pin: the entry's, else the engine's worker_pin, else NULL */
static char *render_script(const struct prov_entry *e,
                           const struct prov_profile *pf, const char *wid,
                           const char *req, const char *token, const char *pin)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "#!/bin/bash\n");
    for (size_t i = 0; i < pf->nsbatch; i++) {
        if (starts_with(pf->sbatch[i], "#SBATCH"))
            strbuf_addf(&sb, "%s\n", pf->sbatch[i]);
        else
            strbuf_addf(&sb, "#SBATCH %s\n", pf->sbatch[i]);
    }
    for (size_t i = 0; i < pf->nprerun; i++)
        strbuf_addf(&sb, "%s\n", pf->prerun[i]);
    strbuf_addstr(&sb, "exec ");
    shquote_append(&sb, e->remote_exa);
    strbuf_addstr(&sb, " worker --url ");
    shquote_append(&sb, e->engine_url);
    if (pin) {
        strbuf_addstr(&sb, " --pin ");
        shquote_append(&sb, pin);
    }
    strbuf_addf(&sb,
                " --worker-id %s --cpus %lld --gpus %lld --ram-mb %lld"
                " --walltime %.0f --max-idle %.0f --drain %.0f",
                wid, pf->cpus, pf->gpus, pf->ram_mb, pf->walltime_s,
                e->max_idle_s, e->drain_s);
    if (pf->nlabels) {
        strbuf_addstr(&sb, " --labels ");
        for (size_t i = 0; i < pf->nlabels; i++)
            strbuf_addf(&sb, "%s%s", i ? "," : "", pf->labels[i]);
    }
    if (e->allow_root)
        strbuf_addstr(&sb, " --allow-root");
    strbuf_addf(&sb, " --join-token-stdin <<'EXA_JOIN_%s'\n%s\nEXA_JOIN_%s\n",
                req, token, req);
    return strbuf_detach(&sb, NULL);
}

static struct gate *open_cluster(struct provisioner *p, const char *cluster,
                                 exa_error_t *err)
{
    struct gate_req gr;
    memset(&gr, 0, sizeof(gr));
    gr.cluster = cluster;
    gr.purpose = GATE_SCHEDULE;
    gr.st = p->st;
    gr.regpath = p->regpath;
    gr.actor = "exa-provisioner";
    return gate_open(&gr, err);
}

void prov_sbatch_argv(const struct prov_entry *e, const char *job_name,
                      const char *exclude, struct strvec *argv)
{
    strvec_push(argv, "sbatch");
    strvec_push(argv, "--parsable");
    strvec_pushf(argv, "--job-name=%s", job_name);
    strvec_pushf(argv, "--output=%s/%%j.out", e->output_dir);
    strvec_push(argv, "--no-requeue");
    strvec_pushf(argv, "--signal=B:USR1@%.0f", e->drain_s);
    if (exclude && *exclude)
        strvec_pushf(argv, "--exclude=%s", exclude);
}

/* The strikes of (e's cluster, pf) inside the window: a node with two
 * becomes an exclusion (event worker_node_excluded). Returns the number
 * of new exclusions, -1 with err. */
static int refresh_profile(store_t *st, const struct prov_entry *e,
                           const char *prof, double now, exa_error_t *err)
{
    struct node_strikes *v = NULL;
    size_t n = 0;
    int made = 0;
    if (e->exclude_node_s <= 0)
        return 0;
    if (store_node_strikes_since(st, e->cluster, prof, now - e->exclude_node_s,
                                 &v, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *d;
        double until = now + e->exclude_node_s;
        if (v[i].count < PROV_EXCLUDE_STRIKES || !hostlist_node_ok(v[i].node))
            continue;
        if (store_begin(st, err) < 0)
            goto fail;
        d = json_object();
        json_object_set_new(d, "node", json_string(v[i].node));
        json_object_set_new(d, "profile", json_string(prof));
        json_object_set_new(d, "cluster", json_string(e->cluster));
        json_object_set_new(d, "reason", jx_str(v[i].kinds));
        json_object_set_new(d, "strikes", json_integer(v[i].count));
        json_object_set_new(d, "until", jx_real(until));
        if (store_node_exclude(st, e->cluster, prof, v[i].node, v[i].kinds, now,
                               until, err) < 0 ||
            event(st, now, "worker_node_excluded", e->cluster, prof, NULL, d,
                  err) < 0 ||
            store_commit(st, err) < 0) {
            store_rollback(st);
            goto fail;
        }
        made++;
    }
    node_strikes_free(v, n);
    return made;
fail:
    node_strikes_free(v, n);
    return -1;
}

int prov_exclusions_refresh(store_t *st, const struct prov_config *cfg,
                            double now, exa_error_t *err)
{
    int made = 0;
    for (size_t i = 0; i < cfg->n; i++)
        for (size_t k = 0; k < cfg->v[i].np; k++) {
            int r =
                refresh_profile(st, &cfg->v[i], cfg->v[i].p[k].name, now, err);
            if (r < 0)
                return -1;
            made += r;
        }
    return made;
}

int prov_excluded_nodes(store_t *st, const char *cluster, const char *profile,
                        double now, struct strbuf *out, exa_error_t *err)
{
    struct node_exclusion *v = NULL;
    size_t n = 0;
    if (store_node_exclusions(st, cluster, profile, now, &v, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!hostlist_node_ok(v[i].node))
            continue; /* never onto a command line */
        if (out->len)
            strbuf_addch(out, ',');
        strbuf_addstr(out, v[i].node);
    }
    node_exclusions_free(v, n);
    return 0;
}

int prov_node_strike(store_t *st, const struct prov_entry *e,
                     const char *profile, const char *node, const char *kind,
                     const char *ref, double now, exa_error_t *err)
{
    if (e->exclude_node_s <= 0)
        return 0;
    if (store_node_strike_add(st, e->cluster, profile, node, kind, ref, now,
                              err) < 0)
        return -1;
    return refresh_profile(st, e, profile, now, err);
}

/* Ask for one job of profile pf of e. 1 submitted, 0 failed (recorded),
 * -1 database error. */
static int submit(struct provisioner *p, const struct prov_entry *e,
                  const struct prov_profile *pf, double now, exa_error_t *err)
{
    struct provreq r;
    char req[9], wid[300], name[300], *tok = NULL, *script = NULL;
    char *mk = NULL;
    struct strvec av = STRVEC_INIT;
    struct strbuf excl = STRBUF_INIT;
    struct gate *g;
    exa_error_t serr = EXA_ERROR_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    struct sbatch_result sr;
    int rc = -1;
    token_random_hex(req, 4);
    xsnprintf(wid, sizeof(wid), "%s-%s-%s", e->cluster, pf->name, req);
    xsnprintf(name, sizeof(name), "exa-%s-%s-%s", p->eid, pf->name, req);
    memset(&r, 0, sizeof(r));
    r.id = req;
    r.provisioner = e->name;
    r.cluster = e->cluster;
    r.profile = pf->name;
    r.worker_id = wid;
    r.job_name = name;
    r.created_at = now;
    r.deadline_at = now + e->provision_timeout_s;
    /* 1. the intent row, then the token */
    if (store_provreq_insert(p->st, &r, err) < 0)
        return -1;
    tok = task_join_mint(p->st, p->keyfile, wid, e->cluster, pf->name, req,
                         e->provision_timeout_s + p->token_slack_s, now, err);
    if (!tok)
        return -1;
    cstate(p, e->cluster)->last_submit = now;
    g = open_cluster(p, e->cluster, &serr);
    if (!g)
        goto failed;
    /* 2. the script, 3. sbatch with exa's options on its command line */
    {
        /* an https engine_url without its own pin: the engine's key */
        char *epin = NULL;
        if (!e->pin && !strncmp(e->engine_url, "https://", 8) &&
            store_engine_get(p->st, "worker_pin", &epin, NULL) > 0 && !*epin) {
            free(epin);
            epin = NULL;
        }
        script = render_script(e, pf, wid, req, tok, e->pin ? e->pin : epin);
        free(epin);
    }
    mk = xstrfmt("mkdir -p -m 0700 %s", e->output_dir);
    {
        const char *argv[] = {"sh", "-c", mk, NULL};
        struct transport_result mr = TRANSPORT_RESULT_INIT;
        transport_run(gate_transport(g), argv, NULL, 0, 30, &mr, NULL);
        transport_result_release(&mr);
    }
    /* black-hole nodes (WORKERS.md §9.4): on the command line, so the
     * profile's own lines cannot undo it; a database error here leaves
     * the submission without it rather than not asking at all */
    if (refresh_profile(p->st, e, pf->name, now, NULL) >= 0)
        prov_excluded_nodes(p->st, e->cluster, pf->name, now, &excl, NULL);
    prov_sbatch_argv(e, name, excl.buf, &av);
    if (transport_run(gate_transport(g), (const char *const *)av.v, script,
                      strlen(script), 60, &res, &serr) < 0) {
        gate_close(g);
        goto failed;
    }
    gate_close(g);
    memset(&sr, 0, sizeof(sr));
    if (res.rc != 0 ||
        sbatch_parse_streams(res.out.buf, res.out.len, res.err.buf, res.err.len,
                             &sr, &serr) < 0) {
        if (!serr.text[0])
            xsnprintf(serr.text, sizeof(serr.text), "%.500s",
                      res.err.len ? res.err.buf : res.out.buf);
        sbatch_result_free(&sr);
        goto failed;
    }
    /* fault hook (WORKERS.md §13 T13b): die in the crash window between
     * sbatch and the row that records it; the restart adopts the job by
     * its name from the intent row */
    {
        const char *f = getenv("EXAMLOPS_WORKER_FAULT");
        if (f && !strcmp(f, "crash_after_sbatch"))
            _exit(137);
    }
    /* 4. submitted, in one transaction with its event */
    if (store_begin(p->st, err) < 0) {
        sbatch_result_free(&sr);
        goto out;
    }
    {
        json_t *d = json_object();
        json_object_set_new(d, "job", json_string(sr.job_id));
        json_object_set_new(d, "request", json_string(req));
        if (store_provreq_update(p->st, req, "submitted", sr.job_id, now, 0,
                                 NULL, NULL, err) < 0 ||
            event(p->st, now, "worker_provisioned", e->cluster, pf->name, wid,
                  d, err) < 0 ||
            store_commit(p->st, err) < 0) {
            store_rollback(p->st);
            sbatch_result_free(&sr);
            goto out;
        }
    }
    sbatch_result_free(&sr);
    p->c.submitted++;
    rc = 1;
    goto out;
failed:
    /* 5. the submission failed: recorded, counts toward the breaker */
    p->c.submit_failed++;
    {
        json_t *d = json_object();
        json_object_set_new(d, "reason", json_string("submit_error"));
        json_object_set_new(d, "detail", jx_str(serr.text));
        if (store_begin(p->st, err) < 0)
            goto out;
        if (store_provreq_update(p->st, req, "failed", NULL, 0, now,
                                 "submit_error", serr.text, err) < 0 ||
            event(p->st, now, "worker_provision_failed", e->cluster, pf->name,
                  wid, d, err) < 0 ||
            store_commit(p->st, err) < 0) {
            store_rollback(p->st);
            goto out;
        }
    }
    rc = 0;
out:
    transport_result_release(&res);
    if (tok) {
        memset(tok, 0, strlen(tok));
        free(tok);
    }
    if (script) {
        memset(script, 0, strlen(script));
        free(script);
    }
    free(mk);
    strvec_clear(&av);
    strbuf_release(&excl);
    return rc;
}

static int outstanding(store_t *st, const char *prov, const char *prof,
                       exa_error_t *err)
{
    struct provreq *v = NULL;
    size_t n = 0;
    int found = 0;
    if (store_provreq_list(st, prov, "live", 0, &v, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].profile, prof))
            found = 1;
    provreq_free_list(v, n);
    return found;
}

static int decide(struct provisioner *p, double now, exa_error_t *err)
{
    struct task_shape *sh = NULL;
    struct worker_rec *ws = NULL;
    size_t nsh = 0, nws = 0;
    double delay = 1e18;
    int submitted = 0, rc = -1;
    for (size_t i = 0; i < p->cfg.n; i++)
        if (p->cfg.v[i].provision_delay_s < delay)
            delay = p->cfg.v[i].provision_delay_s;
    if (!p->cfg.n)
        return 0;
    if (store_task_shapes(p->st, now - delay, &sh, &nsh, err) < 0 ||
        store_worker_list(p->st, &ws, &nws, err) < 0)
        goto out;
    for (size_t s = 0; s < nsh; s++) {
        const struct prov_entry *be = NULL;
        const struct prov_profile *bp = NULL;
        int taken = 0;
        for (size_t w = 0; w < nws && !taken; w++)
            taken = worker_fits(&ws[w], &sh[s], now);
        if (taken)
            continue;
        /* the smallest fitting profile: (gpus, cpus, ram_mb, name) */
        for (size_t i = 0; i < p->cfg.n; i++)
            for (size_t k = 0; k < p->cfg.v[i].np; k++) {
                const struct prov_profile *pf = &p->cfg.v[i].p[k];
                if (!profile_fits(pf, &sh[s]))
                    continue;
                if (sh[s].cluster && strcmp(p->cfg.v[i].cluster, sh[s].cluster))
                    continue; /* a pinned task: its cluster's profiles only */
                if (!bp || pf->gpus < bp->gpus ||
                    (pf->gpus == bp->gpus &&
                     (pf->cpus < bp->cpus ||
                      (pf->cpus == bp->cpus &&
                       (pf->ram_mb < bp->ram_mb ||
                        (pf->ram_mb == bp->ram_mb &&
                         strcmp(pf->name, bp->name) < 0)))))) {
                    bp = pf;
                    be = &p->cfg.v[i];
                }
            }
        if (!bp) {
            if (store_task_shape_reason(p->st, &sh[s], "no_profile_fits", err) <
                0)
                goto out;
            continue;
        }
        {
            int o = outstanding(p->st, be->name, bp->name, err), b;
            struct prov_cstate *cs = cstate(p, be->cluster);
            if (o < 0)
                goto out;
            if (o)
                continue; /* one outstanding request per profile */
            b = breaker_open(p->st, be, bp->name, NULL, err);
            if (b < 0)
                goto out;
            if (b)
                continue;
            if (cs->last_submit > 0 &&
                now - cs->last_submit < be->submit_min_interval_s)
                continue;
            if ((o = submit(p, be, bp, now, err)) < 0)
                goto out;
            submitted += o;
            if (!o && breaker_open(p->st, be, bp->name, NULL, err) == 1) {
                json_t *d = json_object();
                json_object_set_new(d, "last_error",
                                    json_string("submit_error"));
                event(p->st, now, "worker_provision_paused", be->cluster,
                      bp->name, NULL, d, NULL);
            }
        }
    }
    rc = submitted;
out:
    task_shapes_free(sh, nsh);
    worker_rec_free_list(ws, nws);
    return rc;
}

/* ---- reconcile ---- */

static int fail_request(struct provisioner *p, const struct prov_entry *e,
                        const struct provreq *r, const char *state,
                        const char *reason, const char *detail,
                        const char *node, double now, exa_error_t *err)
{
    json_t *d = json_object();
    int was_open;
    json_object_set_new(d, "reason", json_string(reason));
    json_object_set_new(d, "job", jx_str(r->job_id));
    json_object_set_new(d, "detail", jx_str(detail));
    if (node && *node)
        json_object_set_new(d, "node", json_string(node));
    was_open = e ? breaker_open(p->st, e, r->profile, NULL, NULL) == 1 : 1;
    if (store_begin(p->st, err) < 0) {
        json_decref(d);
        return -1;
    }
    if (store_provreq_update(p->st, r->id, state, NULL, 0, now, reason, detail,
                             err) < 0 ||
        event(p->st, now, "worker_provision_failed", r->cluster, r->profile,
              r->worker_id, d, err) < 0 ||
        store_commit(p->st, err) < 0) {
        store_rollback(p->st);
        return -1;
    }
    if (e && !was_open && breaker_open(p->st, e, r->profile, NULL, NULL) == 1) {
        json_t *pd = json_object();
        json_object_set_new(pd, "last_error", json_string(reason));
        event(p->st, now, "worker_provision_paused", r->cluster, r->profile,
              NULL, pd, NULL);
    }
    return 0;
}

static const struct prov_entry *entry_of(const struct prov_config *c,
                                         const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].name, name))
            return &c->v[i];
    return NULL;
}

static int reconcile_cluster(struct provisioner *p, const char *cluster,
                             double now, exa_error_t *err)
{
    struct gate *g;
    exa_error_t serr = EXA_ERROR_INIT;
    struct sched_queue q;
    struct provreq *v = NULL;
    size_t n = 0;
    char prefix[32];
    int rc = 0;
    xsnprintf(prefix, sizeof(prefix), "exa-%s-", p->eid);
    memset(&q, 0, sizeof(q));
    if (!(g = open_cluster(p, cluster, &serr))) {
        p->c.squeue_errors++;
        return 0; /* unreachable or not ACTIVE: nothing is decided */
    }
    /* exa's own jobs only: what is cancelled here is found by name, and
     * another user's job name can forge a row of an all-users listing */
    if (sched_queue_own(gate_sched(g), &q, &serr) < 0) {
        /* a failed squeue is not an empty queue: change nothing */
        p->c.squeue_errors++;
        sched_queue_release(&q);
        gate_close(g);
        return 0;
    }
    /* orphans: our prefix, no row */
    for (size_t i = 0; i < q.n; i++) {
        struct provreq r;
        int found;
        if (!q.v[i].name || !starts_with(q.v[i].name, prefix))
            continue;
        found = store_provreq_by_name(p->st, q.v[i].name, &r, err);
        if (found < 0) {
            rc = -1;
            goto out;
        }
        if (found) {
            provreq_release(&r);
            continue;
        }
        if (sched_cancel(gate_sched(g), q.v[i].id, &serr) == 0) {
            json_t *d = json_object();
            json_object_set_new(d, "job", jx_str(q.v[i].id));
            json_object_set_new(d, "name", jx_str(q.v[i].name));
            event(p->st, now, "worker_orphan_cancelled", cluster, NULL, NULL, d,
                  NULL);
            p->c.orphans++;
        }
    }
    if (store_provreq_list(p->st, NULL, "live", 0, &v, &n, err) < 0) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const struct prov_entry *e = entry_of(&p->cfg, v[i].provisioner);
        const struct sched_queue_job *qj = NULL;
        if (strcmp(v[i].cluster, cluster))
            continue;
        for (size_t k = 0; k < q.n; k++)
            if (q.v[k].name && !strcmp(q.v[k].name, v[i].job_name))
                qj = &q.v[k];
        if (!strcmp(v[i].state, "intent")) {
            /* the crash window between the intent row and sbatch */
            if (qj) {
                if (store_provreq_update(p->st, v[i].id, "submitted", qj->id,
                                         now, 0, NULL, NULL, err) < 0) {
                    rc = -1;
                    goto out;
                }
            } else if (fail_request(p, e, &v[i], "failed", "lost_intent",
                                    "no job with this name after a restart",
                                    NULL, now, err) < 0) {
                rc = -1;
                goto out;
            }
            continue;
        }
        if (qj) {
            if (now > v[i].deadline_at) {
                sched_cancel(gate_sched(g), qj->id, NULL);
                p->c.timeouts++;
                if (fail_request(p, e, &v[i], "timeout", "timeout",
                                 qj->reason ? qj->reason : qj->state, NULL, now,
                                 err) < 0) {
                    rc = -1;
                    goto out;
                }
            }
            continue;
        }
        /* it left the queue without attaching */
        {
            struct sched_job sj;
            struct strbuf log = STRBUF_INIT, det = STRBUF_INIT;
            const char *ids[1] = {v[i].job_id};
            int lines = 0;
            memset(&sj, 0, sizeof(sj));
            if (v[i].job_id)
                sched_status_batch(gate_sched(g), ids, 1, &sj, NULL);
            if (v[i].job_id && e)
                sched_logs(gate_sched(g), v[i].job_id, e->output_dir, &log,
                           NULL);
            strbuf_addf(&det, "%s %d:%d",
                        sj.raw_state[0] ? sj.raw_state : "gone", sj.exit_code,
                        sj.signal > 0 ? sj.signal : 0);
            /* the last 20 lines of its output */
            for (size_t k = log.len; k > 0; k--)
                if (log.buf[k - 1] == '\n' && ++lines > 20) {
                    strbuf_addf(&det, "\n%s", log.buf + k);
                    lines = -1;
                    break;
                }
            if (lines >= 0 && log.len)
                strbuf_addf(&det, "\n%s", log.buf);
            if (det.len > 2000)
                strbuf_setlen(&det, 2000);
            p->c.start_failed++;
            rc = fail_request(p, e, &v[i], "failed", "ended_before_attach",
                              det.buf, sj.node, now, err);
            /* the node it ran on (sacct NodeList): a strike (§9.4); a
             * name that is no node name strikes nothing */
            if (rc == 0 && e && hostlist_node_ok(sj.node) &&
                prov_node_strike(p->st, e, v[i].profile, sj.node,
                                 "failed_start", v[i].id, now, err) < 0)
                rc = -1;
            strbuf_release(&log);
            strbuf_release(&det);
            if (rc < 0)
                goto out;
        }
    }
out:
    provreq_free_list(v, n);
    sched_queue_release(&q);
    gate_close(g);
    return rc;
}

int prov_reconcile(struct provisioner *p, double now, exa_error_t *err)
{
    const char *seen[64];
    size_t ns = 0;
    for (size_t i = 0; i < p->cfg.n; i++) {
        int dup = 0;
        for (size_t k = 0; k < ns; k++)
            dup |= !strcmp(seen[k], p->cfg.v[i].cluster);
        if (dup || ns >= 64)
            continue;
        seen[ns++] = p->cfg.v[i].cluster;
        if (reconcile_cluster(p, p->cfg.v[i].cluster, now, err) < 0)
            return -1;
    }
    /* the engine's black-hole strikes since the last pass, then forget
     * what no window can reach */
    if (prov_exclusions_refresh(p->st, &p->cfg, now, err) < 0 ||
        store_node_strikes_prune(p->st, now - PROV_EXCLUDE_NODE_MAX_S, err) < 0)
        return -1;
    p->last_reconcile = now;
    return 0;
}

int prov_tick(struct provisioner *p, double now, exa_error_t *err)
{
    double every = 1e18;
    for (size_t i = 0; i < p->cfg.n; i++)
        if (p->cfg.v[i].reconcile_s < every)
            every = p->cfg.v[i].reconcile_s;
    if (!p->last_reconcile || now - p->last_reconcile >= every)
        if (prov_reconcile(p, now, err) < 0)
            return -1;
    return decide(p, now, err);
}

/* ---- shutdown, status, resume ---- */

int prov_shutdown_store(store_t *st, const struct prov_config *cfg,
                        const char *regpath, int drain, double now,
                        exa_error_t *err)
{
    struct provreq *v = NULL;
    size_t n = 0;
    int count = 0;
    exa_error_t first = EXA_ERROR_INIT;
    (void)cfg;
    if (store_provreq_list(st, NULL, "live", 0, &v, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct gate_req gr;
        struct gate *g;
        exa_error_t serr = EXA_ERROR_INIT;
        const char *job = v[i].job_id;
        struct sched_queue q;
        memset(&gr, 0, sizeof(gr));
        gr.cluster = v[i].cluster;
        gr.purpose = GATE_SCHEDULE;
        gr.st = st;
        gr.regpath = regpath;
        gr.actor = "exa-provisioner";
        if (!(g = gate_open(&gr, &serr))) {
            if (!first.text[0])
                first = serr;
            continue;
        }
        memset(&q, 0, sizeof(q));
        if (!job && sched_queue_own(gate_sched(g), &q, NULL) == 0)
            for (size_t k = 0; k < q.n; k++)
                if (q.v[k].name && !strcmp(q.v[k].name, v[i].job_name))
                    job = q.v[k].id;
        if (job && sched_cancel(gate_sched(g), job, &serr) < 0 &&
            !first.text[0])
            first = serr;
        if (store_provreq_update(st, v[i].id, "cancelled", job, 0, now,
                                 "shutdown", NULL, err) < 0) {
            sched_queue_release(&q);
            gate_close(g);
            provreq_free_list(v, n);
            return -1;
        }
        count++;
        sched_queue_release(&q);
        gate_close(g);
    }
    provreq_free_list(v, n);
    if (drain && store_worker_request_drain(st, NULL, err) < 0)
        return -1;
    if (first.text[0]) {
        if (err)
            *err = first;
        return -1;
    }
    return count;
}

static json_t *req_json(const struct provreq *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", jx_str(r->id));
    json_object_set_new(o, "provisioner", jx_str(r->provisioner));
    json_object_set_new(o, "cluster", jx_str(r->cluster));
    json_object_set_new(o, "profile", jx_str(r->profile));
    json_object_set_new(o, "worker", jx_str(r->worker_id));
    json_object_set_new(o, "job_name", jx_str(r->job_name));
    json_object_set_new(o, "job", jx_str(r->job_id));
    json_object_set_new(o, "state", jx_str(r->state));
    json_object_set_new(o, "created_at", jx_real(r->created_at));
    json_object_set_new(o, "deadline_at", jx_real(r->deadline_at));
    json_object_set_new(o, "reason", jx_str(r->reason));
    json_object_set_new(o, "detail", jx_str(r->detail));
    return o;
}

json_t *prov_view_status(store_t *st, const struct prov_config *cfg,
                         long long limit, double now, exa_error_t *err)
{
    json_t *doc = json_object(), *ps = json_array(), *rs = json_array();
    json_t *eng = json_object(), *xs = json_array();
    struct provreq *v = NULL;
    struct node_exclusion *xv = NULL;
    size_t n = 0, nx = 0;
    char *epin = NULL;
    json_object_set_new(doc, "exclusions", xs);
    if (store_node_exclusions(st, NULL, NULL, now, &xv, &nx, err) < 0 ||
        store_engine_get(st, "worker_pin", &epin, err) < 0) {
        node_exclusions_free(xv, nx);
        json_decref(eng);
        json_decref(ps);
        json_decref(rs);
        json_decref(doc);
        return NULL;
    }
    if (epin && !*epin) { /* the listener speaks plain HTTP */
        free(epin);
        epin = NULL;
    }
    json_object_set_new(eng, "worker_pin", jx_str(epin));
    json_object_set_new(doc, "engine", eng);
    for (size_t i = 0; i < cfg->n; i++) {
        const struct prov_entry *e = &cfg->v[i];
        json_t *po = json_object(), *profs = json_array();
        for (size_t k = 0; k < e->np; k++) {
            json_t *pr = json_object();
            char *last = NULL;
            int b = breaker_open(st, e, e->p[k].name, &last, err);
            int o = outstanding(st, e->name, e->p[k].name, err);
            if (b < 0 || o < 0) {
                node_exclusions_free(xv, nx);
                free(epin);
                json_decref(pr);
                json_decref(profs);
                json_decref(po);
                json_decref(ps);
                json_decref(rs);
                json_decref(doc);
                free(last);
                return NULL;
            }
            json_object_set_new(pr, "name", json_string(e->p[k].name));
            json_object_set_new(pr, "cpus", json_integer(e->p[k].cpus));
            json_object_set_new(pr, "gpus", json_integer(e->p[k].gpus));
            json_object_set_new(pr, "ram_mb", json_integer(e->p[k].ram_mb));
            json_object_set_new(pr, "outstanding", json_boolean(o));
            json_object_set_new(pr, "breaker_open", json_boolean(b));
            json_object_set_new(pr, "last_error", jx_str(b ? last : NULL));
            free(last);
            {
                json_t *ex = json_array();
                for (size_t x = 0; x < nx; x++)
                    if (!strcmp(xv[x].cluster, e->cluster) &&
                        !strcmp(xv[x].profile, e->p[k].name))
                        json_array_append_new(ex, json_string(xv[x].node));
                json_object_set_new(pr, "excluded_nodes", ex);
            }
            json_array_append_new(profs, pr);
        }
        json_object_set_new(po, "name", json_string(e->name));
        json_object_set_new(po, "cluster", json_string(e->cluster));
        json_object_set_new(po, "engine_url", json_string(e->engine_url));
        json_object_set_new(po, "insecure_http",
                            json_boolean(e->insecure_http));
        /* the pin its workers get (its own, else the engine's) and, when
         * it names one, whether the engine's key is among them */
        json_object_set_new(po, "pin", jx_str(e->pin ? e->pin : epin));
        json_object_set_new(po, "pin_match",
                            !e->pin ? json_null()
                            : epin ? json_boolean(tlspin_list_has(e->pin, epin))
                                   : json_false());
        json_object_set_new(po, "profiles", profs);
        json_array_append_new(ps, po);
    }
    free(epin);
    for (size_t x = 0; x < nx; x++) {
        json_t *o = json_object();
        json_object_set_new(o, "cluster", json_string(xv[x].cluster));
        json_object_set_new(o, "profile", json_string(xv[x].profile));
        json_object_set_new(o, "node", json_string(xv[x].node));
        json_object_set_new(o, "reason", jx_str(xv[x].reason));
        json_object_set_new(o, "since", jx_real(xv[x].since));
        json_object_set_new(o, "until", jx_real(xv[x].until));
        json_array_append_new(xs, o);
    }
    node_exclusions_free(xv, nx);
    if (store_provreq_list(st, NULL, NULL, limit, &v, &n, err) < 0) {
        json_decref(ps);
        json_decref(rs);
        json_decref(doc);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        json_array_append_new(rs, req_json(&v[i]));
    provreq_free_list(v, n);
    json_object_set_new(doc, "provisioners", ps);
    json_object_set_new(doc, "requests", rs);
    return doc;
}

int prov_resume(store_t *st, const struct prov_config *cfg, const char *profile,
                double now, exa_error_t *err)
{
    const char *slash = strchr(profile, '/');
    int done = 0;
    for (size_t i = 0; i < cfg->n; i++) {
        const struct prov_entry *e = &cfg->v[i];
        if (slash && (strlen(e->name) != (size_t)(slash - profile) ||
                      strncmp(e->name, profile, (size_t)(slash - profile))))
            continue;
        for (size_t k = 0; k < e->np; k++) {
            char *key, val[64];
            if (strcmp(e->p[k].name, slash ? slash + 1 : profile))
                continue;
            key = kv_key(e->name, e->p[k].name);
            xsnprintf(val, sizeof(val), "%.6f", now);
            if (store_engine_set(st, key, val, err) < 0) {
                free(key);
                return -1;
            }
            free(key);
            {
                json_t *d = json_object();
                json_object_set_new(d, "provisioner", json_string(e->name));
                event(st, now, "worker_provision_resumed", e->cluster,
                      e->p[k].name, NULL, d, NULL);
            }
            done++;
        }
    }
    if (!done)
        return exa_err(err, EXA_ENOTFOUND,
                       "unknown profile '%s' in provisioners.json", profile);
    return 0;
}
