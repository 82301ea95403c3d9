/*
 * byname.c - the jobs a scheduler holds under one job name (byname.h).
 *
 * The adapters' own submit paths look a name up to recover a lost sbatch
 * reply; this is the same question asked by a caller before it submits,
 * and answered with the scheduler's state of every job found, so the
 * caller can tell a job it may adopt (queued or running) from one that
 * already ended. It asks through the general-purpose parsers of
 * parse_slurm.h and parse_flux.h instead of a private splitter, and runs
 * at most two commands: squeue first, sacct only when the queue holds no
 * live job of that name.
 */
#include "libsched/byname.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsched/parse_flux.h"
#include "libsched/parse_slurm.h"
#include "libutil/xalloc.h"

struct found {
    struct sched_job *v;
    size_t n, alloc;
};

/* Add (id, state) unless id is there already; the first view wins. */
static void found_add(struct found *f, const char *id, const char *state,
                      const char *raw, const char *submit)
{
    if (!id || !*id)
        return;
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].id, id))
            return;
    if (f->n == f->alloc) {
        f->alloc = f->alloc ? 2 * f->alloc : 4;
        f->v = xrealloc(f->v, f->alloc * sizeof(*f->v));
    }
    sched_job_init(&f->v[f->n], id);
    f->v[f->n].state = state ? sched_state_parse(state) : SCHED_UNKNOWN;
    if (raw)
        xsnprintf(f->v[f->n].raw_state, sizeof(f->v[f->n].raw_state), "%.63s",
                  raw);
    if (submit)
        xsnprintf(f->v[f->n].submit, sizeof(f->v[f->n].submit), "%.39s",
                  submit);
    f->n++;
}

static int any_live(const struct found *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (!sched_state_terminal(f->v[i].state))
            return 1;
    return 0;
}

/* Add the records of sj whose name is name (or unnamed: the command
 * already filtered by name). */
static void add_slurm(struct found *f, const struct slurm_jobs *sj,
                      const char *name)
{
    for (size_t i = 0; i < sj->njobs; i++) {
        const struct slurm_job *j = &sj->jobs[i];
        if ((j->have & SJ_NAME) && j->name && strcmp(j->name, name))
            continue;
        found_add(f, j->id, j->state, j->raw_state, j->submit);
    }
}

typedef int (*slurm_parse_f)(const char *buf, size_t len,
                             struct slurm_jobs *jobs, const char **kind,
                             exa_error_t *err);

/* Run argv and add what parse reads from its output. */
static int ask_slurm(struct sched *s, const char *const *argv,
                     slurm_parse_f parse, const char *name, struct found *f,
                     exa_error_t *err)
{
    struct transport_result res = TRANSPORT_RESULT_INIT;
    struct slurm_jobs sj;
    const char *kind = NULL;
    int rc = -1;

    memset(&sj, 0, sizeof(sj));
    if (transport_run_ok(s->t, argv, NULL, 0, &res, err) < 0)
        goto out;
    if (res.out.len && parse(res.out.buf, res.out.len, &sj, &kind, err) < 0)
        goto out;
    add_slurm(f, &sj, name);
    rc = 0;
out:
    slurm_jobs_free(&sj);
    transport_result_release(&res);
    return rc;
}

static int find_slurm(struct sched *s, const char *name, long long since,
                      struct found *f, exa_error_t *err)
{
    char *namearg = xstrfmt("--name=%s", name);
    char *delim = xstrfmt("--delimiter=%s", SLURM_SACCT_DELIMITER);
    char start[64];
    int rc = -1;

    {
        const char *argv[] = {
            "squeue", "-h", "--me", namearg, "-o", SLURM_SQUEUE_FORMAT, NULL};
        if (ask_slurm(s, argv, squeue_parse_own, name, f, err) < 0)
            goto out;
    }
    if (any_live(f)) {
        rc = 0;
        goto out;
    }
    if (since > 0) {
        time_t t = (time_t)since - 60; /* clock skew margin */
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%S", &tm);
    } else {
        xsnprintf(start, sizeof(start), "now-7days");
    }
    {
        const char *argv[] = {"sacct", "-X",    "-n", "--parsable2",
                              delim,   namearg, "-S", start,
                              "-E",    "now",   "-o", SLURM_SACCT_FIELDS,
                              NULL};
        if (ask_slurm(s, argv, sacct_parse, name, f, err) < 0)
            goto out;
    }
    rc = 0;
out:
    free(namearg);
    free(delim);
    return rc;
}

static int find_flux(struct sched *s, const char *name, struct found *f,
                     exa_error_t *err)
{
    char *namearg = xstrfmt("--name=%s", name);
    const char *argv[] = {
        "flux", "jobs", "-a", namearg, "-o", "{id.f58} {status_abbrev}", NULL};
    struct transport_result res = TRANSPORT_RESULT_INIT;
    const char *kind = NULL;
    json_t *doc = NULL, *jobs;
    int rc = -1;

    if (transport_run_ok(s->t, argv, NULL, 0, &res, err) < 0)
        goto out;
    if (!res.out.len) {
        rc = 0;
        goto out;
    }
    if (!(doc = flux_jobs_parse(res.out.buf, res.out.len, &kind, err)))
        goto out;
    jobs = json_object_get(doc, "jobs");
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *j = json_array_get(jobs, i);
        found_add(f, json_string_value(json_object_get(j, "id")),
                  json_string_value(json_object_get(j, "state")),
                  json_string_value(json_object_get(j, "raw_state")), NULL);
    }
    rc = 0;
out:
    json_decref(doc);
    transport_result_release(&res);
    free(namearg);
    return rc;
}

int sched_find_by_name(struct sched *s, const char *name, long long since,
                       struct sched_job **out, size_t *n, exa_error_t *err)
{
    struct found f = {NULL, 0, 0};
    const char *kind = sched_name(s);
    int rc;

    if (!name || !*name)
        return exa_err(err, EXA_EUSAGE, "a job name to look up is empty");
    if (!strcmp(kind, "slurm"))
        rc = find_slurm(s, name, since, &f, err);
    else if (!strcmp(kind, "flux"))
        rc = find_flux(s, name, &f, err);
    else
        return exa_err(err, EXA_EUSAGE,
                       "scheduler '%s' cannot look jobs up "
                       "by name",
                       kind);
    if (rc < 0) {
        free(f.v);
        return -1;
    }
    *out = f.v;
    *n = f.n;
    return 0;
}
