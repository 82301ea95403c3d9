/*
 * parse_flux_acct.c - job accounting from a Flux job's eventlog and its
 * R (RFC 20): queue and run seconds from the submit/alloc/start/finish
 * events, nodes, cores and GPUs from the idsets of R_lite, and CPU and
 * GPU hours from both.
 *
 * Kept apart from the eventlog reader because it reads JSON already
 * parsed (flux_eventlog_parse() and `flux job info ID R`), not text.
 */
#include "libsched/parse_flux.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/json.h"

/* ---- accounting ------------------------------------------------------- */

static double event_t(const json_t *events, const char *name)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const json_t *t = json_object_get(ev, "t");
        if (!strcmp(jx_get_str(ev, "name", ""), name) && json_is_number(t))
            return json_number_value(t);
    }
    return -1;
}

static long long idset_count(const char *s)
{
    long long *ids = NULL;
    size_t n = 0;
    if (!s || !*s)
        return 0;
    if (flux_idset_expand(s, &ids, &n) < 0) {
        free(ids);
        return -1;
    }
    free(ids);
    return (long long)n;
}

int flux_job_accounting(const json_t *eventlog, const json_t *R,
                        struct flux_job_acct *acct, exa_error_t *err)
{
    const json_t *events = json_object_get(eventlog, "events");
    double submit, alloc, start, finish;

    acct->nodes = acct->cores = acct->gpus = -1;
    acct->queue_seconds = acct->run_seconds = -1;
    acct->cpu_hours = acct->gpu_hours = -1;
    if (!json_is_array(events))
        events = eventlog;
    submit = event_t(events, "submit");
    alloc = event_t(events, "alloc");
    start = event_t(events, "start");
    finish = event_t(events, "finish");
    if (alloc < 0)
        alloc = start;
    if (submit >= 0 && alloc >= submit)
        acct->queue_seconds = alloc - submit;
    if (start >= 0 && finish >= start)
        acct->run_seconds = finish - start;

    if (R) {
        const json_t *exec = json_object_get(R, "execution");
        const json_t *lite = json_object_get(exec, "R_lite"), *e;
        size_t i;
        if (!json_is_array(lite))
            return exa_err(err, EXA_EPARSE, "R has no execution.R_lite array");
        acct->nodes = acct->cores = acct->gpus = 0;
        json_array_foreach(lite, i, e)
        {
            const json_t *ch = json_object_get(e, "children");
            long long nr = idset_count(jx_get_str(e, "rank", NULL));
            long long nc = idset_count(jx_get_str(ch, "core", NULL));
            long long ng = idset_count(jx_get_str(ch, "gpu", NULL));
            if (nr < 0 || nc < 0 || ng < 0)
                return exa_err(err, EXA_EPARSE,
                               "R_lite entry %zu has a bad idset", i);
            acct->nodes += nr;
            acct->cores += nr * nc;
            acct->gpus += nr * ng;
        }
        if (acct->run_seconds >= 0) {
            acct->cpu_hours = (double)acct->cores * acct->run_seconds / 3600;
            acct->gpu_hours = (double)acct->gpus * acct->run_seconds / 3600;
        }
    }
    return 0;
}
