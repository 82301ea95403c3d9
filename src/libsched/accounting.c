/*
 * accounting.c - job accounting from sacct or the Flux eventlog and R,
 * asked over the cluster's transport (see accounting.h for the formulas
 * and why hours are allocation hours).
 *
 * sacct's answer is read by sacct_parse (parse_slurm.h), the parser `exa
 * debug parse sacct` runs, and GPUs come from libres's TRES parser; this
 * file only picks the allocation record and sums the steps. The command
 * runs without -X so the step lines are there when the allocation line
 * carries no TotalCPU (sacct(1): the allocation's TotalCPU is only filled
 * once the steps are accounted).
 */
#include "libsched/accounting.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libsched/parse_flux.h"
#include "libsched/parse_slurm.h"
#include "libutil/duration.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

/* sacct(1) --format; the header is kept so sacct_parse names the
 * columns, and '|' (--parsable2) is safe: no field here is free text. */
#define SACCT_FIELDS                                                           \
    "JobID,ElapsedRaw,AllocTRES,TotalCPU,Start,End,Submit,"                    \
    "NNodes,AllocCPUS"

void sched_acct_init(struct sched_acct *a)
{
    memset(a, 0, sizeof(*a));
    a->queue_seconds = a->run_seconds = a->cpu_seconds = -1;
    a->nodes = a->cpus = a->gpus = -1;
    a->gpu_hours = a->cpu_hours = -1;
}

static void iso_of(time_t t, char *buf, size_t n)
{
    if (t < 0)
        buf[0] = '\0';
    else
        time_format_iso8601(t, buf, n);
}

static time_t time_of(const char *s)
{
    return s ? time_parse_sched(s) : -1;
}

/* job_id's accounting out of parsed sacct rows: 0, or -1 with err
 * (EXA_ENOTFOUND: no allocation line for it). */
static int acct_pick(const struct slurm_jobs *jobs, const char *job_id,
                     struct sched_acct *out, exa_error_t *err)
{
    const struct slurm_job *alloc = NULL;
    double steps_cpu = 0;
    int any_step = 0;
    time_t sub, st, en;

    sched_acct_init(out);
    for (size_t i = 0; i < jobs->njobs && !alloc; i++)
        if (jobs->jobs[i].id && !strcmp(jobs->jobs[i].id, job_id))
            alloc = &jobs->jobs[i];
    if (!alloc)
        return exa_err(err, EXA_ENOTFOUND, "sacct has no record of job '%s'",
                       job_id);
    /* the steps (ID.batch, ID.0, ...): only their CPU time is of use */
    for (size_t i = 0; i < jobs->nsteps; i++) {
        const struct slurm_job *st_ = &jobs->steps[i];
        if (st_->job_id && !strcmp(st_->job_id, job_id) && st_->has_total_cpu) {
            steps_cpu += st_->total_cpu_s;
            any_step = 1;
        }
    }
    if (alloc->has_elapsed)
        out->run_seconds = alloc->elapsed_s;
    /* gpus: unknown when AllocTRES is empty, cut or overflows (libres) */
    if (alloc->has_gpus)
        out->gpus = alloc->gpus;
    if (alloc->has_total_cpu)
        out->cpu_seconds = alloc->total_cpu_s;
    if (alloc->has_nnodes)
        out->nodes = alloc->nnodes;
    if (alloc->have & SJ_NCPUS)
        out->cpus = alloc->ncpus;
    st = time_of(alloc->start);
    en = time_of(alloc->end);
    sub = time_of(alloc->submit);
    if (any_step && (out->cpu_seconds <= 0))
        out->cpu_seconds = steps_cpu;
    iso_of(sub, out->submit, sizeof(out->submit));
    iso_of(st, out->start, sizeof(out->start));
    iso_of(en, out->end, sizeof(out->end));
    if (sub >= 0 && st >= sub)
        out->queue_seconds = (double)(st - sub);
    if (out->run_seconds < 0 && st >= 0 && en >= st)
        out->run_seconds = (double)(en - st);
    if (out->run_seconds >= 0) {
        if (out->gpus >= 0)
            out->gpu_hours = (double)out->gpus * out->run_seconds / 3600.0;
        if (out->cpus >= 0)
            out->cpu_hours = (double)out->cpus * out->run_seconds / 3600.0;
    }
    return 0;
}

int sched_acct_parse_sacct(const char *text, size_t len, const char *job_id,
                           struct sched_acct *out, exa_error_t *err)
{
    struct slurm_jobs jobs;
    const char *kind;
    exa_error_t pe = EXA_ERROR_INIT;
    int rc;

    memset(&jobs, 0, sizeof(jobs));
    sched_acct_init(out);
    if (sacct_parse(text, len, &jobs, &kind, &pe) < 0)
        return exa_err(err, EXA_EPARSE, "sacct output for job '%s': %s", job_id,
                       pe.text);
    rc = acct_pick(&jobs, job_id, out, err);
    slurm_jobs_free(&jobs);
    return rc;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A record is complete once its end is there: a partial record right
 * after the end lacks it (lib-testbed.sh). */
static int acct_complete(const struct sched_acct *a)
{
    return a->end[0] && a->run_seconds >= 0;
}

/*
 * sched_accounting_batch() for Slurm: `sacct -P -j ID,ID,... -o FIELDS`
 * for up to SACCT_BATCH_IDS ids a call, each answer parsed once; ids
 * whose record is missing or incomplete are asked again, one second
 * apart, up to tries rounds. A call that fails (transport, sacct, parse)
 * costs only its own ids: they are not asked again, the other calls are
 * still made and used, and the first failure is returned (-1, err).
 */
static int slurm_accounting_batch(struct sched *s, const char *const *ids,
                                  size_t n, int tries, struct sched_acct *out,
                                  int *found, exa_error_t *err)
{
    char *want = xcalloc(n ? n : 1, 1);
    size_t *idx = xcalloc(SACCT_BATCH_IDS, sizeof(*idx));
    int rc = 0;

    memset(want, 1, n);
    for (int t = 0; t < tries; t++) {
        size_t left = 0, i = 0;
        for (size_t k = 0; k < n; k++)
            left += want[k];
        if (!left)
            break;
        if (t)
            sleep_s(1.0);
        while (i < n) {
            struct strbuf list = STRBUF_INIT;
            struct transport_result res = TRANSPORT_RESULT_INIT;
            struct slurm_jobs jobs;
            const char *kind;
            exa_error_t pe = EXA_ERROR_INIT, ce = EXA_ERROR_INIT;
            int failed = 0;
            size_t k = 0;
            for (; i < n && k < SACCT_BATCH_IDS; i++) {
                if (!want[i])
                    continue;
                if (k)
                    strbuf_addch(&list, ',');
                strbuf_addstr(&list, ids[i]);
                idx[k++] = i;
            }
            if (k) {
                const char *argv[] = {"sacct", "-P",         "-j", list.buf,
                                      "-o",    SACCT_FIELDS, NULL};
                memset(&jobs, 0, sizeof(jobs));
                if (transport_run_ok(s->t, argv, NULL, 0, &res, &ce) < 0) {
                    failed = 1;
                } else if (sacct_parse(res.out.buf, res.out.len, &jobs, &kind,
                                       &pe) < 0) {
                    failed = 1;
                    exa_err(&ce, EXA_EPARSE, "sacct output for job '%s': %s",
                            ids[idx[0]], pe.text);
                } else {
                    for (size_t j = 0; j < k; j++) {
                        struct sched_acct a;
                        if (acct_pick(&jobs, ids[idx[j]], &a, NULL) < 0)
                            continue;
                        out[idx[j]] = a;
                        found[idx[j]] = 1;
                        if (acct_complete(&a))
                            want[idx[j]] = 0;
                    }
                }
                slurm_jobs_free(&jobs);
                if (failed) {
                    /* this chunk's ids go without; the rest go on */
                    for (size_t j = 0; j < k; j++)
                        want[idx[j]] = 0;
                    if (rc == 0 && err)
                        *err = ce;
                    rc = -1;
                }
            }
            transport_result_release(&res);
            strbuf_release(&list);
        }
    }
    free(idx);
    free(want);
    return rc;
}

static int slurm_accounting(struct sched *s, const char *job_id, int tries,
                            struct sched_acct *out, exa_error_t *err)
{
    int found = 0;
    if (slurm_accounting_batch(s, &job_id, 1, tries, out, &found, err) < 0)
        return -1;
    if (!found) /* what there is, complete or not, is better than nothing */
        return exa_err(err, EXA_ENOTFOUND, "sacct has no record of job '%s'",
                       job_id);
    return 0;
}

static int flux_run_json(struct sched *s, const char *const *argv,
                         struct strbuf *out, exa_error_t *err)
{
    struct transport_result res = TRANSPORT_RESULT_INIT;
    int rc = transport_run_ok(s->t, argv, NULL, 0, &res, err);
    if (rc == 0)
        strbuf_addbuf(out, &res.out);
    transport_result_release(&res);
    return rc;
}

static int flux_accounting(struct sched *s, const char *job_id,
                           struct sched_acct *out, exa_error_t *err)
{
    const char *ev[] = {"flux", "job", "info", job_id, "eventlog", NULL};
    const char *rr[] = {"flux", "job", "info", job_id, "R", NULL};
    struct strbuf evt = STRBUF_INIT, rt = STRBUF_INIT;
    struct flux_job_acct fa;
    json_t *log = NULL, *R = NULL, *sum;
    int rc = -1;

    sched_acct_init(out);
    if (flux_run_json(s, ev, &evt, err) < 0)
        goto out;
    if (!(log = flux_eventlog_parse(evt.buf, evt.len, err)))
        goto out;
    if (flux_run_json(s, rr, &rt, NULL) == 0) {
        json_error_t je;
        R = json_loadb(rt.buf, rt.len, 0, &je);
    }
    if (flux_job_accounting(log, R, &fa, err) < 0)
        goto out;
    out->queue_seconds = fa.queue_seconds;
    out->run_seconds = fa.run_seconds;
    out->nodes = fa.nodes;
    out->cpus = fa.cores;
    out->gpus = fa.gpus;
    out->gpu_hours = fa.gpu_hours;
    out->cpu_hours = fa.cpu_hours;
    sum = json_object_get(log, "summary");
    {
        static const char *const k[] = {"submit", "start", "end"};
        char *dst[] = {out->submit, out->start, out->end};
        for (int i = 0; i < 3; i++) {
            json_t *v = json_object_get(sum, k[i]);
            if (json_is_number(v) && json_number_value(v) > 0)
                time_format_iso8601((time_t)json_number_value(v), dst[i],
                                    sizeof(out->submit));
        }
    }
    rc = 0;
out:
    json_decref(log);
    json_decref(R);
    strbuf_release(&evt);
    strbuf_release(&rt);
    return rc;
}

int sched_accounting(struct sched *s, const char *job_id, int tries,
                     struct sched_acct *out, exa_error_t *err)
{
    const char *name = sched_name(s);

    sched_acct_init(out);
    if (tries < 1)
        tries = 1;
    if (!strcmp(name, "slurm"))
        return slurm_accounting(s, job_id, tries, out, err);
    if (!strcmp(name, "flux"))
        return flux_accounting(s, job_id, out, err);
    return exa_err(err, EXA_EUSAGE, "scheduler '%s' keeps no accounting", name);
}

int sched_accounting_batch(struct sched *s, const char *const *ids, size_t n,
                           int tries, struct sched_acct *out, int *found,
                           exa_error_t *err)
{
    const char *name = sched_name(s);

    for (size_t i = 0; i < n; i++) {
        sched_acct_init(&out[i]);
        found[i] = 0;
    }
    if (tries < 1)
        tries = 1;
    if (!strcmp(name, "slurm"))
        return n ? slurm_accounting_batch(s, ids, n, tries, out, found, err)
                 : 0;
    if (!strcmp(name, "flux")) {
        /* one eventlog and R per job: Flux keeps them per job (RFC 18) */
        for (size_t i = 0; i < n; i++) {
            exa_error_t e = EXA_ERROR_INIT;
            if (flux_accounting(s, ids[i], &out[i], &e) == 0)
                found[i] = 1;
            else if (e.code == EXA_ETRANSPORT) {
                if (err)
                    *err = e;
                return -1;
            }
        }
        return 0;
    }
    return exa_err(err, EXA_EUSAGE, "scheduler '%s' keeps no accounting", name);
}
