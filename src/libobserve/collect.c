/*
 * collect.c - sources for real clusters: which commands the exporter
 * runs, and how their output becomes an obs_snapshot.
 *
 * Two commands per cluster and interval, chosen to carry everything the
 * metrics need in one call each: `sinfo -N -O` with GresUsed (GPUs in use
 * per node) and `squeue -a -r -O` with tres-alloc (GPUs actually
 * allocated; %b is N/A for jobs submitted with --gpus), account, user and
 * the expanded node list. Fields are '|'-suffixed so blanks in values do
 * not shift columns; the parsers find the columns by their header names.
 * Job names are left out: they are free text chosen by users, the one
 * field that could carry the separator, and job_id already identifies
 * the job. The parsing adapters are pure (bytes in, records out) so the
 * exporter is tested on captured outputs without any cluster.
 */
#include "libobserve/collect.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libdiscovery/parse_sinfo.h"
#include "libfleet/gate.h"
#include "libsched/parse_flux.h"
#include "libsched/parse_message.h"
#include "libsched/parse_slurm.h"
#include "libtransport/transport.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

const char *const obs_slurm_nodes_argv[] = {
    "sinfo",
    "-N",
    "-O",
    "NodeList:|,CPUs:|,Memory:|,Gres:|,GresUsed:|,StateLong:|,"
    "Partition:",
    NULL,
};

const char *const obs_slurm_jobs_argv[] = {
    "squeue",
    "-a",
    "-r",
    "-O",
    "JobID:|,Partition:|,UserName:|,Account:|,State:|,NumCPUs:|,"
    "tres-alloc:|,NodeList:|,Reason:",
    NULL,
};

const char *const obs_flux_nodes_argv[] = {"flux", "resource", "list", NULL};
const char *const obs_flux_status_argv[] = {"flux", "resource", "status", NULL};
const char *const obs_flux_R_argv[] = {"flux", "resource", "R", NULL};
const char *const obs_flux_alloc_argv[] = {"flux", "resource", "R",
                                           "--states=allocated", NULL};

/* fields flux-core 0.88 has (it has no ngpus: GPUs come from R), joined
 * by 0x1F so an empty {queue} keeps its place; --count=0: every active
 * job (flux-jobs(1) stops at 1,000 by default, and with --no-header it
 * says nothing of it, so a busy system's series would be short without
 * a word) */
const char *const obs_flux_jobs_argv[] = {
    "flux",
    "jobs",
    "-A",
    "--no-header",
    "--count=0",
    "-o",
    FLUX_JOBS_OBSERVE_FORMAT,
    NULL,
};

static char *dup_or_null(const char *s)
{
    return s && *s ? xstrdup(s) : NULL;
}

/*
 * The commands above print a header first; output without it is an error
 * message or something else entirely (the parsers are lenient by design
 * and would read it as a record of unknowns).
 */
static int expect_header(const char *buf, size_t len, const char *hdr,
                         const char *tool, exa_error_t *err)
{
    size_t skip = 0, n = strlen(hdr);
    while (skip < len && (buf[skip] == '\n' || buf[skip] == '\r'))
        skip++;
    if (len - skip >= n && !memcmp(buf + skip, hdr, n))
        return 0;
    {
        /* the first line, whatever it is (parse_message.h) */
        char *m = tool_message(buf + skip, len - skip, 120);
        int rc = exa_err(err, EXA_EPARSE, "%s printed no '%s' header: '%s'",
                         tool, hdr, m ? m : "");
        free(m);
        return rc;
    }
}

int obs_parse_slurm_nodes(const char *buf, size_t len, struct obs_snapshot *s,
                          exa_error_t *err)
{
    struct sinfo_result res;
    const char *kind = NULL;
    memset(&res, 0, sizeof(res));
    if (expect_header(buf, len, "NODELIST|", "sinfo", err) < 0)
        return -1;
    {
        /* the format that printed buf names its columns and separator */
        struct cmd_spec spec = CMD_SPEC_INIT;
        int rc;
        cmd_spec_from_argv(obs_slurm_nodes_argv, 4, &spec);
        rc = sinfo_parse_cmd(buf, len, &spec, &res, &kind, err);
        cmd_spec_release(&spec);
        if (rc < 0) {
            sinfo_result_free(&res);
            return -1;
        }
    }
    if (res.is_groups) {
        sinfo_result_free(&res);
        return exa_err(err, EXA_EPARSE,
                       "sinfo printed node counts, not node names");
    }
    for (size_t i = 0; i < res.nnodes; i++) {
        const struct sinfo_node *in = &res.nodes[i];
        struct obs_node *n = obs_snapshot_add_node(s);
        n->name = xstrdup(in->name ? in->name : "");
        n->state = xstrdup(in->state ? in->state : "unknown");
        n->raw_state = dup_or_null(in->raw_state);
        for (size_t p = 0; p < in->partitions.nr; p++)
            strvec_push(&n->partitions, in->partitions.v[p]);
        n->cpus = in->has_cpus ? in->cpus : -1;
        n->mem_mb = in->has_mem ? in->mem_mb : -1;
        n->gpus = in->has_gres ? in->gpus : -1;
        n->gpus_used = in->has_gres_used ? in->gpus_used : -1;
        n->gpu_model = dup_or_null(in->gpu_type);
    }
    sinfo_result_free(&res);
    return 0;
}

/* A copy of s in the snapshot's arena when non-empty, else NULL. */
static char *pool(struct obs_snapshot *s, const char *v)
{
    return v && *v ? arena_strndup(&s->strings, v, strlen(v)) : NULL;
}

/* squeue's rows become struct slurm_job (about 360 bytes each) only a
 * block at a time, so a queue of 100,000 jobs never holds 36 MB of parser
 * records next to the snapshot. */
#define JOBS_BLOCK 4096

static void take_jobs(void *ctx, struct slurm_jobs *jobs)
{
    struct obs_snapshot *s = ctx;
    for (size_t i = 0; i < jobs->njobs; i++) {
        struct slurm_job *in = &jobs->jobs[i];
        struct obs_job *j;
        if (!in->id || !*in->id)
            continue;
        j = obs_snapshot_add_job(s);
        /* short strings copied into the snapshot's arena: one block per
         * 64 KiB instead of five mallocs per job */
        j->pooled = 1;
        j->id = pool(s, in->id);
        j->state = pool(s, in->state ? in->state : "UNKNOWN");
        j->user = pool(s, in->user);
        j->account = pool(s, in->account);
        j->partition = pool(s, in->partition);
        if (in->reason && strcmp(in->reason, "None"))
            j->reason = pool(s, in->reason);
        j->cpus = (in->have & SJ_NCPUS) ? in->ncpus : -1;
        j->gpus = in->has_gpus ? in->gpus : -1;
        /* the expanded node names and their array, in the arena too */
        if (in->nodelist.nr) {
            size_t nr = in->nodelist.nr;
            const char **v = arena_alloc(&s->strings, (nr + 1) * sizeof(*v));
            for (size_t k = 0; k < nr; k++)
                v[k] = arena_strndup(&s->strings, in->nodelist.v[k],
                                     strlen(in->nodelist.v[k]));
            v[nr] = NULL;
            strvec_clear(&j->nodes);
            j->nodes.v = v;
            j->nodes.nr = nr;
            j->nodes.alloc = nr + 1;
        }
    }
}

int obs_parse_slurm_jobs(const char *buf, size_t len, struct obs_snapshot *s,
                         exa_error_t *err)
{
    struct cmd_spec spec = CMD_SPEC_INIT;
    int rc;

    /* an empty queue prints only the header (or nothing) */
    if (len == 0 || strspn(buf, " \t\r\n") == len)
        return 0;
    if (expect_header(buf, len, "JOBID|", "squeue", err) < 0)
        return -1;
    cmd_spec_from_argv(obs_slurm_jobs_argv, 5, &spec);
    rc =
        squeue_parse_cmd_blocks(buf, len, &spec, JOBS_BLOCK, take_jobs, s, err);
    cmd_spec_release(&spec);
    return rc;
}

static long long jint(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

int obs_parse_flux_nodes(const char *buf, size_t len, struct obs_snapshot *s,
                         exa_error_t *err)
{
    return obs_parse_flux_nodes_full(buf, len, NULL, 0, NULL, 0, NULL, 0, s,
                                     err);
}

int obs_parse_flux_nodes_full(const char *buf, size_t len, const char *status,
                              size_t status_len, const char *R, size_t R_len,
                              const char *alloc, size_t alloc_len,
                              struct obs_snapshot *s, exa_error_t *err)
{
    const char *kind = NULL;
    json_t *doc = flux_resource_parse(buf, len, &kind, err), *nodes, *n;
    size_t i;
    if (!doc)
        return -1;
    flux_resource_apply(doc, status, status_len, R, R_len, alloc, alloc_len);
    nodes = json_object_get(doc, "nodes");
    json_array_foreach(nodes, i, n)
    {
        struct obs_node *o = obs_snapshot_add_node(s);
        const json_t *parts = json_object_get(n, "partitions"), *p;
        size_t k;
        o->name = xstrdup(jx_get_str(n, "name", ""));
        o->state = xstrdup(jx_get_str(n, "state", "unknown"));
        o->raw_state = dup_or_null(jx_get_str(n, "raw_state", NULL));
        json_array_foreach(parts, k, p) if (json_is_string(p))
            strvec_push(&o->partitions, json_string_value(p));
        o->cpus = jint(n, "cpus");
        o->gpus = jint(n, "gpus");
        o->cpus_used = jint(n, "cpus_used");
        o->gpus_used = jint(n, "gpus_used");
    }
    json_decref(doc);
    return 0;
}

int obs_parse_flux_jobs(const char *buf, size_t len, struct obs_snapshot *s,
                        exa_error_t *err)
{
    const char *kind = NULL;
    json_t *doc, *jobs, *j;
    size_t i;
    if (len == 0 || strspn(buf, " \t\r\n") == len)
        return 0;
    if (!(doc = flux_jobs_parse_format(buf, len, FLUX_JOBS_OBSERVE_FORMAT,
                                       &kind, err)))
        return -1;
    jobs = json_object_get(doc, "jobs");
    json_array_foreach(jobs, i, j)
    {
        struct obs_job *o = obs_snapshot_add_job(s);
        const json_t *nl = json_object_get(j, "nodelist"), *h;
        size_t k;
        o->id = xstrdup(jx_get_str(j, "id", ""));
        o->state = xstrdup(jx_get_str(j, "state", "UNKNOWN"));
        o->user = dup_or_null(jx_get_str(j, "user", NULL));
        o->partition = dup_or_null(jx_get_str(j, "queue", NULL));
        o->cpus = jint(j, "ncores");
        o->gpus = jint(j, "gpus");
        json_array_foreach(nl, k, h) if (json_is_string(h))
            strvec_push(&o->nodes, json_string_value(h));
    }
    json_decref(doc);
    return 0;
}

/* ---- sources ---- */

struct src_data {
    obs_run_f run;
    void *ctx;
    void (*destroy)(void *ctx);
    void (*after_jobs)(void *ctx); /* NULL, or run after each collection */
    const char *const *nodes_argv, *const *jobs_argv;
    int (*parse_nodes)(const char *, size_t, struct obs_snapshot *,
                       exa_error_t *);
    int (*parse_jobs)(const char *, size_t, struct obs_snapshot *,
                      exa_error_t *);
};

static int run_and_parse(struct obs_source *src, const char *const *argv,
                         int (*parse)(const char *, size_t,
                                      struct obs_snapshot *, exa_error_t *),
                         struct obs_snapshot *s, exa_error_t *err)
{
    struct src_data *d = src->data;
    struct strbuf out = STRBUF_INIT;
    int rc = d->run(d->ctx, argv, &out, err);
    if (rc == 0 && (rc = parse(out.buf, out.len, s, err)) < 0)
        exa_err_prefix(err, "%s on '%s'", argv[0], src->cluster);
    strbuf_release(&out);
    return rc;
}

/*
 * Flux: `flux resource list`, then `flux resource status` (drain states),
 * `flux resource R` (per-node cores and GPUs) and `flux resource R
 * --states=allocated` (the cores and GPUs jobs hold on each node); the
 * last three are optional, their failure leaves what the list says.
 */
static int src_flux_nodes(struct obs_source *src, struct obs_snapshot *s,
                          exa_error_t *err)
{
    struct src_data *d = src->data;
    struct strbuf list = STRBUF_INIT, st = STRBUF_INIT, R = STRBUF_INIT;
    struct strbuf al = STRBUF_INIT;
    int rc = d->run(d->ctx, obs_flux_nodes_argv, &list, err), have_st, have_R;
    int have_al;

    if (rc == 0) {
        have_st = d->run(d->ctx, obs_flux_status_argv, &st, NULL) == 0;
        have_R = d->run(d->ctx, obs_flux_R_argv, &R, NULL) == 0;
        have_al = d->run(d->ctx, obs_flux_alloc_argv, &al, NULL) == 0;
        rc = obs_parse_flux_nodes_full(list.buf, list.len,
                                       have_st ? st.buf : NULL, st.len,
                                       have_R ? R.buf : NULL, R.len,
                                       have_al ? al.buf : NULL, al.len, s, err);
        if (rc < 0)
            exa_err_prefix(err, "flux on '%s'", src->cluster);
    }
    strbuf_release(&list);
    strbuf_release(&st);
    strbuf_release(&R);
    strbuf_release(&al);
    return rc;
}

static int src_nodes(struct obs_source *src, struct obs_snapshot *s,
                     exa_error_t *err)
{
    struct src_data *d = src->data;
    if (d->parse_nodes == obs_parse_flux_nodes)
        return src_flux_nodes(src, s, err);
    return run_and_parse(src, d->nodes_argv, d->parse_nodes, s, err);
}

static int src_jobs(struct obs_source *src, struct obs_snapshot *s,
                    exa_error_t *err)
{
    struct src_data *d = src->data;
    return run_and_parse(src, d->jobs_argv, d->parse_jobs, s, err);
}

static void src_after(struct obs_source *src)
{
    struct src_data *d = src->data;
    if (d->after_jobs)
        d->after_jobs(d->ctx);
}

static void src_destroy(struct obs_source *src)
{
    struct src_data *d = src->data;
    if (d && d->destroy)
        d->destroy(d->ctx);
    free(d);
}

struct obs_source *obs_source_new(const char *cluster, const char *scheduler,
                                  obs_run_f run, void *ctx,
                                  void (*destroy)(void *ctx), exa_error_t *err)
{
    struct obs_source *src;
    struct src_data *d;
    int flux;
    if (!scheduler ||
        (strcmp(scheduler, "slurm") && strcmp(scheduler, "flux"))) {
        exa_err(err, EXA_ECONFIG, "no collector for scheduler '%s' of '%s'",
                scheduler ? scheduler : "unknown", cluster);
        return NULL;
    }
    flux = !strcmp(scheduler, "flux");
    d = xcalloc(1, sizeof(*d));
    d->run = run;
    d->ctx = ctx;
    d->destroy = destroy;
    d->nodes_argv = flux ? obs_flux_nodes_argv : obs_slurm_nodes_argv;
    d->jobs_argv = flux ? obs_flux_jobs_argv : obs_slurm_jobs_argv;
    d->parse_nodes = flux ? obs_parse_flux_nodes : obs_parse_slurm_nodes;
    d->parse_jobs = flux ? obs_parse_flux_jobs : obs_parse_slurm_jobs;
    src = xcalloc(1, sizeof(*src));
    src->cluster = xstrdup(cluster);
    src->prefix = xstrdup(scheduler);
    src->node_cmd = flux ? "flux-resource" : "sinfo";
    src->job_cmd = flux ? "flux-jobs" : "squeue";
    src->nodes = src_nodes;
    src->jobs = src_jobs;
    src->after = src_after;
    src->destroy = src_destroy;
    src->data = d;
    return src;
}

/*
 * A gate source's context. The node and job commands run at the same
 * time (obs_source.concurrent): the transport's run is safe to share
 * between threads (libutil/subprocess.h), gate_check_error() is not (it
 * may record a host key mismatch in platform.db), so it runs under mu.
 */
struct gate_src {
    struct gate *g;
    pthread_mutex_t mu;
    double last_end; /* time_monotonic() when a command last ended; under mu */
};

/* A ControlMaster idle this long may be gone by the time the commands
 * start: under TRANSPORT_SSH_PERSIST_S, with room for a slow command. */
#define GATE_SRC_IDLE_S (TRANSPORT_SSH_PERSIST_S - 20)

static int gate_runner(void *ctx, const char *const *argv, struct strbuf *out,
                       exa_error_t *err)
{
    struct gate_src *gs = ctx;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    int rc = transport_run_ok(gate_transport(gs->g), argv, NULL, 0, &res, err);
    if (rc == 0)
        strbuf_take(out, &res.out);
    pthread_mutex_lock(&gs->mu);
    if (rc < 0)
        gate_check_error(gs->g, err);
    gs->last_end = time_monotonic();
    pthread_mutex_unlock(&gs->mu);
    transport_result_release(&res);
    return rc;
}

/*
 * Before the two commands run at once over ssh: when the cluster's
 * ControlMaster may have lapsed (nothing ran for GATE_SRC_IDLE_S), one
 * `true` opens it again, so the two share one login instead of both
 * logging in (ssh's ControlMaster=auto lets only one of two racing
 * clients become the master). Its failure is left to the commands.
 */
static void gate_prepare(struct obs_source *src)
{
    struct gate_src *gs = ((struct src_data *)src->data)->ctx;
    static const char *const argv[] = {"true", NULL};
    struct transport *t = gate_transport(gs->g);
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t e = EXA_ERROR_INIT;
    double idle;
    if (strcmp(t->ops->kind, "ssh"))
        return;
    pthread_mutex_lock(&gs->mu);
    idle = time_monotonic() - gs->last_end;
    pthread_mutex_unlock(&gs->mu);
    if (idle < GATE_SRC_IDLE_S)
        return;
    if (transport_run(t, argv, NULL, 0, 0, &res, &e) == 0) {
        pthread_mutex_lock(&gs->mu);
        gs->last_end = time_monotonic();
        pthread_mutex_unlock(&gs->mu);
    }
    transport_result_release(&res);
}

static void gate_destroy(void *ctx)
{
    struct gate_src *gs = ctx;
    gate_close(gs->g);
    pthread_mutex_destroy(&gs->mu);
    free(gs);
}

/* Move the cluster's stale job rows forward (best effort: the next
 * collection tries again). Runs after both commands, on one thread. */
static void gate_after_jobs(void *ctx)
{
    struct gate_src *gs = ctx;
    exa_error_t e = EXA_ERROR_INIT;
    gate_reconcile(gs->g, NULL, &e);
}

struct obs_source *obs_collect_factory(const struct fv_cluster *c, void *ctx,
                                       exa_error_t *err)
{
    struct obs_collect_ctx *cc = ctx;
    struct gate_req req = {0};
    struct obs_source *src;
    struct gate_src *gs;
    struct gate *g;
    if (!c->scheduler ||
        (strcmp(c->scheduler, "slurm") && strcmp(c->scheduler, "flux"))) {
        exa_err(err, EXA_ECONFIG, "no collector for scheduler '%s' of '%s'",
                c->scheduler ? c->scheduler : "unknown", c->name);
        return NULL;
    }
    req.cluster = c->name;
    req.purpose = GATE_READ;
    if (!(g = gate_open(&req, err))) {
        if (cc && !cc->refused++ && err)
            cc->first = *err;
        return NULL;
    }
    gs = xcalloc(1, sizeof(*gs));
    gs->g = g;
    gs->last_end = time_monotonic(); /* gate_open() ran ssh just now */
    pthread_mutex_init(&gs->mu, NULL);
    src = obs_source_new(c->name, c->scheduler, gate_runner, gs, gate_destroy,
                         err);
    if (!src) {
        gate_destroy(gs);
        return NULL;
    }
    ((struct src_data *)src->data)->after_jobs = gate_after_jobs;
    src->concurrent = 1;
    src->prepare = gate_prepare;
    return src;
}
