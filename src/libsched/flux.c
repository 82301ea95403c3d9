/*
 * flux.c - the Flux adapter: flux batch / flux submit --cc, one `flux jobs`
 * for every tracked id, the eventlog for ids it no longer lists, and the
 * job's R for what was allocated.
 *
 * Every output is read by the pure parsers of parse_flux.h, the ones
 * `exa debug parse flux-*` runs: the status query (FLUX_JOBS_STATUS_FORMAT,
 * fields joined by 0x1F so an empty t_run cannot shift columns) by
 * flux_jobs_parse_format(), `flux job info ID eventlog` (RFC 18) by
 * flux_eventlog_parse(), `flux job info ID R` (RFC 20) by
 * flux_job_accounting(), `flux batch` by flux_submit_ids(). Nothing here
 * splits a line. Times go into struct sched_job as UTC ISO-8601
 * ("2026-12-01T18:05:28Z"), as `exa hpc jobs` prints them.
 * Measured against flux-core 0.88.0 (tests/fixtures/flux-real).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsched/parse_flux.h"
#include "libsched/runscript.h"
#include "libsched/sched.h"
#include "libutil/json.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

/* Largest epoch time (seconds) taken from Flux: year ~5138. */
#define FLUX_MAX_EPOCH 1e11

/* Allocation read from a job's R, cached: R does not change once set. */
struct flux_alloc {
    char *id;
    long long nodes, cores, gpus;
};

struct flux_priv {
    struct flux_alloc *a;
    size_t n, alloc;
};

/* Strip the F58 prefix (UTF-8 ƒ, ASCII f) for comparisons. */
static const char *f58_body(const char *id)
{
    if ((unsigned char)id[0] == 0xc6 && (unsigned char)id[1] == 0x92)
        return id + 2;
    if (id[0] == 'f' || id[0] == '_')
        return id + 1;
    return id;
}

/* Copy s into dst[n], cut at a UTF-8 boundary when it does not fit. */
static void set_str(char *dst, size_t n, const char *s)
{
    size_t l = s ? strlen(s) : 0;

    if (l >= n) {
        l = n - 1;
        while (l && ((unsigned char)s[l] & 0xC0) == 0x80)
            l--;
    }
    if (l)
        memcpy(dst, s, l);
    dst[l] = '\0';
}

/* Epoch seconds (a JSON number) as UTC ISO-8601 into dst, when plausible. */
static void set_time(char *dst, size_t n, const json_t *v)
{
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    char buf[TIME_ISO_MAX];

    if (!isfinite(d) || d <= 0 || d > FLUX_MAX_EPOCH)
        return;
    time_format_iso8601((time_t)d, buf, sizeof(buf));
    set_str(dst, n, buf);
}

static long long seconds_of(const json_t *v)
{
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    if (!isfinite(d) || d < 0 || d > FLUX_MAX_EPOCH)
        return -1;
    return (long long)(d + 0.5);
}

/* exit_code / signal of a parsed job or summary into j (terminal only). */
static void set_exit(struct sched_job *j, const json_t *o)
{
    const json_t *ex = json_object_get(o, "exit_code");
    const json_t *sig = json_object_get(o, "signal");

    if (!sched_state_terminal(j->state))
        return;
    if (json_is_integer(ex)) {
        j->exit_code = (int)json_integer_value(ex);
        j->signal = 0;
    }
    if (json_is_integer(sig)) {
        j->signal = (int)json_integer_value(sig);
        if (!json_is_integer(ex))
            j->exit_code = -1;
    }
}

/* One job of flux_jobs_parse_format() (FLUX_JOBS_STATUS_FORMAT) into j. */
static void job_from_row(const json_t *o, struct sched_job *j)
{
    j->state = sched_state_parse(jx_get_str(o, "state", "UNKNOWN"));
    set_str(j->raw_state, sizeof(j->raw_state), jx_get_str(o, "raw_state", ""));
    set_time(j->submit, sizeof(j->submit), json_object_get(o, "submit"));
    set_time(j->start, sizeof(j->start), json_object_get(o, "start"));
    if (sched_state_terminal(j->state))
        set_time(j->end, sizeof(j->end), json_object_get(o, "end"));
    set_exit(j, o);
    j->elapsed_s = seconds_of(json_object_get(o, "elapsed_s"));
}

/* The summary of flux_eventlog_parse() into j. 0, or -1 without a state. */
static int job_from_eventlog(const json_t *doc, struct sched_job *j)
{
    const json_t *sum = json_object_get(doc, "summary");
    const char *state = jx_get_str(sum, "state", NULL);
    const char *fstate = jx_get_str(sum, "flux_state", "");
    const char *result = jx_get_str(sum, "result", NULL);
    const json_t *exc = json_object_get(sum, "exception");
    const json_t *st = json_object_get(sum, "start");
    const json_t *en = json_object_get(sum, "end");

    if (!state)
        return -1;
    j->state = sched_state_parse(state);
    /* flux's own word: the result once inactive (flux spells CANCELED) */
    if (!strcmp(fstate, "INACTIVE") && result)
        set_str(j->raw_state, sizeof(j->raw_state),
                !strcmp(result, "CANCELLED") ? "CANCELED" : result);
    else
        set_str(j->raw_state, sizeof(j->raw_state), fstate);
    if (json_is_object(exc))
        set_str(j->reason, sizeof(j->reason), jx_get_str(exc, "type", ""));
    set_time(j->submit, sizeof(j->submit), json_object_get(sum, "submit"));
    set_time(j->start, sizeof(j->start), st);
    if (sched_state_terminal(j->state))
        set_time(j->end, sizeof(j->end), en);
    set_exit(j, sum);
    if (json_is_number(st) && json_is_number(en) && json_number_value(st) > 0) {
        double d = json_number_value(en) - json_number_value(st);
        if (isfinite(d) && d >= 0 && d <= FLUX_MAX_EPOCH)
            j->elapsed_s = (long long)(d + 0.5);
    }
    return 0;
}

static struct flux_priv *priv(struct sched *s)
{
    if (!s->priv)
        s->priv = xcalloc(1, sizeof(struct flux_priv));
    return s->priv;
}

static void flux_destroy(struct sched *s)
{
    struct flux_priv *p = s->priv;
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->a[i].id);
    free(p->a);
    free(p);
    s->priv = NULL;
}

/*
 * What R says job id was allocated (nodes, cores, GPUs), from the cache
 * or `flux job info ID R`. 0, or -1 when R cannot be had (not allocated
 * yet, or the job is unknown).
 */
static int job_alloc(struct sched *s, const char *id, struct flux_alloc *out)
{
    struct flux_priv *p = priv(s);
    const char *argv[] = {"flux", "job", "info", id, "R", NULL};
    struct transport_result res = TRANSPORT_RESULT_INIT;
    struct flux_job_acct acct;
    json_t *R = NULL, *none = NULL;
    int rc = -1;

    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->a[i].id, id)) {
            *out = p->a[i];
            return 0;
        }
    if (transport_run(s->t, argv, NULL, 0, 0, &res, NULL) < 0 || res.rc != 0)
        goto out;
    if (!(R = json_loadb(res.out.buf, res.out.len, 0, NULL)))
        goto out;
    none = json_array();
    if (flux_job_accounting(none, R, &acct, NULL) < 0)
        goto out;
    ALLOC_GROW(p->a, p->n + 1, p->alloc);
    p->a[p->n].id = xstrdup(id);
    p->a[p->n].nodes = acct.nodes;
    p->a[p->n].cores = acct.cores;
    p->a[p->n].gpus = acct.gpus;
    *out = p->a[p->n++];
    rc = 0;
out:
    json_decref(R);
    json_decref(none);
    transport_result_release(&res);
    return rc;
}

static int clamp_int(long long v)
{
    return v < 0 ? -1 : v > 0x7fffffff ? 0x7fffffff : (int)v;
}

/* 1 when out's reason may come from `flux jobs --json`: a pending job
 * (why it waits) or one that ended other than COMPLETED (its exception),
 * without a reason yet. */
static int wants_reason(const struct sched_job *j)
{
    return !j->reason[0] &&
           (j->state == SCHED_PENDING ||
            (sched_state_terminal(j->state) && j->state != SCHED_COMPLETED));
}

/*
 * The reason of each listed job the status format cannot give
 * (out[i].reason): the format has no such field, so one `flux jobs --json
 * ID...` for those of wants_reason() gives, for a pending job, the words
 * of the default table's INFO column ("held", "depends:...",
 * "priority-wait", "priority-hold"; flux_jobs_parse()), and for a job
 * that ended FAILED, CANCELED or TIMEOUT the type of its fatal exception
 * (severity 0: "timeout", "cancel", "exec", ...; none when it simply
 * exited non-zero), as the eventlog path gives. ids are matched through
 * map (f58 bodies). None wanted: nothing run. A failure leaves the
 * reasons empty.
 */
static void listed_reasons(struct sched *s, const struct sched_idmap *map,
                           const char *const *ids, size_t n,
                           struct sched_job *out)
{
    struct strvec argv = STRVEC_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    size_t nw = 0;

    strvec_pushl(&argv, "flux", "jobs", "--json", NULL);
    for (size_t i = 0; i < n; i++)
        if (wants_reason(&out[i])) {
            strvec_push(&argv, ids[i]);
            nw++;
        }
    /* flux jobs exits 1 when it lists none of the ids: stdout is read
     * whatever the status */
    if (nw && transport_run(s->t, argv.v, NULL, 0, 0, &res, NULL) == 0 &&
        res.out.len) {
        const char *kind = NULL;
        json_t *doc = flux_jobs_parse(res.out.buf, res.out.len, &kind, NULL);
        const json_t *jobs = json_object_get(doc, "jobs"), *o;
        size_t k;
        json_array_foreach(jobs, k, o)
        {
            const char *wait = jx_get_str(o, "reason", NULL);
            const json_t *ex = json_object_get(o, "exception");
            /* a fatal exception only (severity 0), as the eventlog path
             * and flux's own inactive reason: job-list keeps the most
             * severe, which may be a non-fatal one (an epilog's, 2) */
            const char *exc = jx_get_int(ex, "severity", -1) == 0
                                  ? jx_get_str(ex, "type", NULL)
                                  : NULL;
            const char *b = f58_body(jx_get_str(o, "id", ""));
            if (!*b)
                continue;
            for (long i = sched_idmap_find(map, b, strlen(b)); i >= 0;
                 i = map->next[i]) {
                const char *why = out[i].state == SCHED_PENDING ? wait : exc;
                if (wants_reason(&out[i]) && why && *why)
                    set_str(out[i].reason, sizeof(out[i].reason), why);
            }
        }
        json_decref(doc);
    }
    strvec_clear(&argv);
    transport_result_release(&res);
}

static int flux_status_batch(struct sched *s, const char *const *ids, size_t n,
                             struct sched_job *out, exa_error_t *err)
{
    struct transport_result res = TRANSPORT_RESULT_INIT;
    struct strvec argv = STRVEC_INIT;
    exa_error_t e1 = EXA_ERROR_INIT;
    struct sched_idmap map;
    int asked = 0;

    sched_idmap_build(&map, ids, n, f58_body);
    strvec_pushl(&argv, "flux", "jobs", "--no-header", "-o",
                 FLUX_JOBS_STATUS_FORMAT, NULL);
    for (size_t i = 0; i < n; i++)
        strvec_push(&argv, ids[i]);
    if (transport_run(s->t, argv.v, NULL, 0, 0, &res, &e1) == 0) {
        const char *kind = NULL;
        json_t *doc = flux_jobs_parse_format(
            res.out.buf, res.out.len, FLUX_JOBS_STATUS_FORMAT, &kind, NULL);
        const json_t *jobs = json_object_get(doc, "jobs"), *o;
        size_t k;
        asked = 1;
        /* unknown ids: flux jobs prints the others and "JobID X unknown" */
        json_array_foreach(jobs, k, o)
        {
            const char *b = f58_body(jx_get_str(o, "id", ""));
            for (long i = sched_idmap_find(&map, b, strlen(b)); i >= 0;
                 i = map.next[i])
                job_from_row(o, &out[i]);
        }
        json_decref(doc);
    } else {
        sched_note_failure(s, &e1); /* an outage, not unknown jobs */
    }
    strvec_clear(&argv);
    /* the listed ones: before the eventlogs */
    listed_reasons(s, &map, ids, n, out);
    sched_idmap_free(&map);
    for (size_t i = 0; i < n; i++) {
        const char *ev[] = {"flux", "job", "info", ids[i], "eventlog", NULL};
        json_t *doc;
        if (out[i].state != SCHED_UNKNOWN)
            continue;
        if (transport_run(s->t, ev, NULL, 0, 0, &res, &e1) < 0) {
            sched_note_failure(s, &e1);
            continue;
        }
        asked = 1;
        if (res.rc == 0 &&
            (doc = flux_eventlog_parse(res.out.buf, res.out.len, NULL))) {
            job_from_eventlog(doc, &out[i]);
            json_decref(doc);
        }
    }
    /* what was allocated, for jobs that got resources */
    for (size_t i = 0; i < n; i++) {
        struct flux_alloc a;
        if (!out[i].start[0] || out[i].state == SCHED_UNKNOWN ||
            out[i].state == SCHED_PENDING)
            continue;
        if (job_alloc(s, ids[i], &a) == 0) {
            out[i].nodes = clamp_int(a.nodes);
            out[i].cpus = clamp_int(a.cores);
            out[i].gpus = clamp_int(a.gpus);
        }
    }
    transport_result_release(&res);
    if (!asked) {
        if (err)
            *err = e1;
        return -1;
    }
    return 0;
}

static int probe_accounting(struct sched *s)
{
    if (s->flux_accounting < 0) {
        const char *argv[] = {"flux", "account", "--help", NULL};
        struct transport_result res = TRANSPORT_RESULT_INIT;
        s->flux_accounting =
            transport_run(s->t, argv, NULL, 0, 0, &res, NULL) == 0 &&
            res.rc == 0;
        transport_result_release(&res);
    }
    return s->flux_accounting;
}

/* 1 with ids found, 0 none, -1 when the lookup could not run. */
static int lookup_by_name(struct sched *s, const char *name, struct strvec *ids,
                          exa_error_t *err)
{
    struct strvec argv = STRVEC_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    int rc = -1;

    strvec_pushl(&argv, "flux", "jobs", "-a", "--no-header", NULL);
    strvec_pushf(&argv, "--name=%s", name);
    strvec_pushl(&argv, "-o", "{id.f58}", NULL);
    if (transport_run(s->t, argv.v, NULL, 0, 0, &res, err) == 0 && res.rc == 0)
        rc = flux_submit_ids(res.out.buf, res.out.len, ids) > 0;
    strvec_clear(&argv);
    transport_result_release(&res);
    return rc;
}

static int flux_submit(struct sched *s, const struct sched_submit_req *req,
                       struct sched_submit_result *out, exa_error_t *err)
{
    struct strvec argv = STRVEC_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char *script = xstrfmt("%s/run.sh", req->remote_dir);
    char *name =
        sched_job_name(req->res ? req->res->job_name : NULL, req->run_id);
    char *o = runscript_log_pattern("flux", req->remote_dir, "out");
    char *e = runscript_log_pattern("flux", req->remote_dir, "err");
    const struct sched_resources *r = req->res;
    int rc = -1;

    if (r && r->array) {
        /* flux submit --cc=IDSET: one job per index; no throttle. */
        const char *pct = strchr(r->array, '%');
        size_t len = pct ? (size_t)(pct - r->array) : strlen(r->array);
        if (pct)
            strvec_pushf(
                &out->warnings,
                "array throttle '%s' dropped: flux submit --cc has none", pct);
        strvec_pushl(&argv, "flux", "submit", NULL);
        strvec_pushf(&argv, "--cc=%.*s", (int)len, r->array);
    } else {
        strvec_pushl(&argv, "flux", "batch", NULL);
    }
    strvec_pushf(&argv, "--job-name=%s", name);
    strvec_pushf(&argv, "--output=%s", o);
    strvec_pushf(&argv, "--error=%s", e);
    if (r && sched_resources_flux_argv(r, r->account ? probe_accounting(s) : 0,
                                       &argv, &out->warnings, err) < 0)
        goto out;
    if (!r)
        strvec_push(&argv, "-n1"); /* flux batch needs a slot count */
    if (r && r->array)
        strvec_push(&argv, "bash");
    strvec_push(&argv, script);
    if (s->dry_run) { /* --dry-run: the command, nothing copied or run */
        strvec_clear(&s->dry_argv);
        strvec_pushv(&s->dry_argv, (const char **)argv.v);
        rc = 0;
        goto out;
    }
    if (transport_put(s->t, req->script_path, script, err) < 0)
        goto out;

    for (int attempt = 1; attempt <= s->submit_attempts; attempt++) {
        exa_error_t terr = EXA_ERROR_INIT;
        out->attempts++;
        if (transport_run(s->t, argv.v, NULL, 0, 0, &res, &terr) < 0) {
            int f = lookup_by_name(s, name, &out->ids, NULL);
            if (f == 1) {
                set_str(out->job_id, sizeof(out->job_id), out->ids.v[0]);
                out->reused = 1;
                rc = 0;
                goto out;
            }
            if (err)
                *err = terr;
            if (f < 0)
                goto out;
            continue;
        }
        if (res.rc != 0) {
            strbuf_trim(&res.err);
            exa_err(err, EXA_ESCHED, "flux on '%s' exited %d: %s", s->t->host,
                    res.rc, res.err.buf);
            goto out;
        }
        if (flux_submit_ids(res.out.buf, res.out.len, &out->ids) == 0) {
            exa_err(err, EXA_ESCHED, "flux on '%s' printed no job id",
                    s->t->host);
            goto out;
        }
        /* a job id (flux_jobid_parse) is at most 20 bytes: it fits */
        set_str(out->job_id, sizeof(out->job_id), out->ids.v[0]);
        rc = 0;
        goto out;
    }
out:
    strvec_clear(&argv);
    transport_result_release(&res);
    free(script);
    free(name);
    free(o);
    free(e);
    return rc;
}

static int flux_cancel(struct sched *s, const char *id, exa_error_t *err)
{
    const char *argv[] = {"flux", "cancel", "--", id, NULL};
    struct transport_result res = TRANSPORT_RESULT_INIT;
    int rc = transport_run_ok(s->t, argv, NULL, 0, &res, err);

    transport_result_release(&res);
    return rc;
}

/*
 * The submit cwd of job id (`flux jobs --json ID`, key "cwd"),
 * malloc'ed, or NULL with err: EXA_ENOTFOUND when flux does not know
 * the id (it exits 1 with "JobID ID unknown" on stderr, as status and
 * cancel say it), else the transport's or EXA_ESCHED.
 */
static char *job_cwd(struct sched *s, const char *id, exa_error_t *err)
{
    const char *argv[] = {"flux", "jobs", "--json", id, NULL};
    struct transport_result res = TRANSPORT_RESULT_INIT;
    const char *kind = NULL;
    json_t *doc = NULL;
    char *cwd = NULL;
    int ran = transport_run_ok(s->t, argv, NULL, 0, &res, err);

    if (ran < 0 && res.rc != 0 && res.err.len) {
        exa_error_t ue = EXA_ERROR_INIT;
        json_t *d = flux_jobs_parse(res.err.buf, res.err.len, &kind, &ue);
        if (!d && kind && !strcmp(kind, "unknown_job"))
            exa_err(err, EXA_ENOTFOUND,
                    "job '%s' not found: flux jobs says "
                    "it is unknown",
                    id);
        json_decref(d);
    }
    if (ran == 0 &&
        (doc = flux_jobs_parse(res.out.buf, res.out.len, &kind, err))) {
        const json_t *j = json_array_get(json_object_get(doc, "jobs"), 0);
        const char *c = jx_get_str(j, "cwd", NULL);
        if (c && *c)
            cwd = xstrdup(c);
        else
            exa_err(err, EXA_ENOTFOUND,
                    "flux jobs --json %s names no job "
                    "with a cwd",
                    id);
    }
    json_decref(doc);
    transport_result_release(&res);
    return cwd;
}

static int flux_logs(struct sched *s, const char *id, const char *remote_dir,
                     struct strbuf *out, exa_error_t *err)
{
    char f58[32];
    uint64_t num;
    char *path, *cwd;
    int rc;

    /* {{id}} in an output template expands to the F58 id with 'ƒ' */
    if (flux_jobid_parse(id, &num) == 0)
        flux_jobid_f58(num, f58, sizeof(f58));
    else
        set_str(f58, sizeof(f58), id);
    if (remote_dir && *remote_dir) {
        /* the --output exa sets (runscript_log_pattern) */
        path = xstrfmt("%s/%s.out", remote_dir, f58);
        rc = sched_fetch_tail(s, path, s->log_max_bytes, out, err);
        free(path);
        return rc;
    }
    /* no job directory: flux batch's default output, flux-{{id}}.out in
     * the submit cwd (`flux job attach` prints nothing for a batch job) */
    if (!(cwd = job_cwd(s, id, err)))
        return -1;
    path = xstrfmt("%s/flux-%s.out", cwd, f58);
    rc = sched_fetch_tail(s, path, s->log_max_bytes, out, err);
    if (rc < 0 && err && err->code == EXA_ENOTFOUND)
        exa_err(err, EXA_ENOTFOUND,
                "no output file for flux job '%s': '%s' does not exist on "
                "'%s' (a batch job's output goes to its --output file)",
                id, path, s->t->host);
    free(path);
    free(cwd);
    return rc;
}

static const struct sched_ops flux_ops = {
    "flux",    flux_submit,  flux_status_batch, flux_cancel,
    flux_logs, flux_destroy, sched_flux_queue,
};

void sched_flux_init(struct sched *s)
{
    s->ops = &flux_ops;
}
