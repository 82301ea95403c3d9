/*
 * facility.c - the reference dashboard's read routes
 * (doc/reference.md §4.15: /api/v1/facility/overview, queue, job,
 * fleet) computed from exa's own data: recorded jobs belong to their
 * cluster (never "cluster = scheduler name"), GPUs come from each
 * cluster's node snapshot, GPU-hours from the jobs' accounting.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfleet/capacity.h"
#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libfleet/registry.h"
#include "libstore/audit.h"
#include "libstore/jobs.h"
#include "libstore/nodes.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"
#include "libview/view.h"

int view_get_job_(const struct view_ctx *vc, const char *cluster,
                  const char *job_id, struct job_rec *j, exa_error_t *err);

/* The reference's running and queued state words (§4.15 notes), plus
 * exa's normalized ones. */
static int is_running(const char *s)
{
    return s && (!strcmp(s, "RUNNING") || !strcmp(s, "R") ||
                 !strcmp(s, "COMPLETING"));
}

static int is_queued(const char *s)
{
    return s && (!strcmp(s, "SUBMITTED") || !strcmp(s, "PENDING") ||
                 !strcmp(s, "PD") || !strcmp(s, "CONFIGURING"));
}

static json_t *int_or_null(long long v)
{
    return jx_int_or_null(v != JOB_NULL_INT, v);
}

/* Seconds a queued job has waited: queue_seconds when recorded, else now
 * minus submit_time; -1 unknown. */
static double wait_s(const struct job_rec *j, time_t now)
{
    time_t t;
    if (isfinite(j->queue_seconds))
        return j->queue_seconds;
    t = j->submit_time ? place_parse_utc(j->submit_time) : 0;
    return t > 0 && now >= t ? (double)(now - t) : -1;
}

static char *regpath_of(const struct view_ctx *vc, exa_error_t *err)
{
    return vc->regpath ? xstrdup(vc->regpath) : registry_default_path(err);
}

static json_t *redacted(const struct view_ctx *vc, json_t *doc,
                        exa_error_t *err)
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

json_t *view_facility_overview(const struct view_ctx *vc, const char *cluster,
                               exa_error_t *err)
{
    struct job_filter f = {0};
    struct job_rec *jobs = NULL;
    size_t n = 0;
    struct fleet fl = {NULL, 0};
    char *rp;
    long long nodes = 0, gpus = 0, running = 0, queued = 0;
    json_t *clusters = json_array(), *parts = json_object(), *plist, *fac;
    const char *k;
    json_t *v;

    if (!(rp = regpath_of(vc, err)))
        goto fail;
    if (fleet_load(vc->st, rp, &fl, err) < 0) {
        free(rp);
        goto fail;
    }
    free(rp);
    if (cluster && !fleet_find(&fl, cluster)) {
        exa_err(err, EXA_ENOTFOUND, "unknown cluster '%s'", cluster);
        fleet_release(&fl);
        goto fail;
    }
    for (size_t i = 0; i < fl.nr; i++)
        if (!cluster || !strcmp(cluster, fl.v[i].def.name))
            json_array_append_new(clusters, jx_str(fl.v[i].def.name));
    fleet_release(&fl);
    f.cluster = cluster;
    if (store_job_list(vc->st, &f, &jobs, &n, err) < 0)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const struct job_rec *j = &jobs[i];
        int r = is_running(j->state), q = is_queued(j->state);
        /* a job's partition is not recorded: group by its cluster */
        const char *pn = j->cluster ? j->cluster : "default";
        json_t *p;
        if (!r && !q)
            continue;
        if (!(p = json_object_get(parts, pn))) {
            p = json_object();
            jx_set(p, "name", jx_str(pn));
            jx_set(p, "running", json_integer(0));
            jx_set(p, "queued", json_integer(0));
            jx_set(p, "gpusAllocated", json_integer(0));
            json_object_set_new(parts, pn, p);
        }
        if (r) {
            long long g = j->gpus != JOB_NULL_INT ? j->gpus : 0;
            running++;
            nodes += j->nodes != JOB_NULL_INT ? j->nodes : 0;
            gpus += g;
            jx_set(p, "running",
                   json_integer(
                       json_integer_value(json_object_get(p, "running")) + 1));
            jx_set(p, "gpusAllocated",
                   json_integer(
                       json_integer_value(json_object_get(p, "gpusAllocated")) +
                       g));
        } else {
            queued++;
            jx_set(p, "queued",
                   json_integer(
                       json_integer_value(json_object_get(p, "queued")) + 1));
        }
    }
    job_rec_free_list(jobs, n);
    plist = json_array();
    json_object_foreach(parts, k, v) json_array_append(plist, v);
    json_decref(parts);
    fac = json_object();
    jx_set(fac, "nodesAllocated", json_integer(nodes));
    jx_set(fac, "gpusAllocated", json_integer(gpus));
    jx_set(fac, "jobsRunning", json_integer(running));
    jx_set(fac, "queueDepth", json_integer(queued));
    jx_set(fac, "clusters", clusters);
    jx_set(fac, "partitions", plist);
    {
        json_t *d = json_object();
        jx_set(d, "facility", fac);
        return redacted(vc, d, err);
    }
fail:
    json_decref(clusters);
    json_decref(parts);
    return NULL;
}

struct waiting {
    const struct job_rec *j;
    double w;
};

static int by_wait_desc(const void *a, const void *b)
{
    const struct waiting *x = a, *y = b;
    return (x->w < y->w) - (x->w > y->w);
}

json_t *view_facility_queue(const struct view_ctx *vc, const char *cluster,
                            exa_error_t *err)
{
    struct job_filter f = {0};
    struct job_rec *jobs = NULL;
    struct waiting *w;
    size_t n = 0, nq = 0;
    time_t now = time(NULL);
    json_t *arr, *q, *d;

    if (cluster) { /* an unknown name is 404, as for the overview */
        struct fleet fl = {NULL, 0};
        char *rp = regpath_of(vc, err);
        int found;
        if (!rp)
            return NULL;
        if (fleet_load(vc->st, rp, &fl, err) < 0) {
            free(rp);
            return NULL;
        }
        free(rp);
        found = fleet_find(&fl, cluster) != NULL;
        fleet_release(&fl);
        if (!found) {
            exa_err(err, EXA_ENOTFOUND, "unknown cluster '%s'", cluster);
            return NULL;
        }
    }
    f.cluster = cluster;
    if (store_job_list(vc->st, &f, &jobs, &n, err) < 0)
        return NULL;
    w = xcalloc(n ? n : 1, sizeof(*w));
    for (size_t i = 0; i < n; i++)
        if (is_queued(jobs[i].state)) {
            w[nq].j = &jobs[i];
            w[nq++].w = wait_s(&jobs[i], now);
        }
    qsort(w, nq, sizeof(*w), by_wait_desc);
    arr = json_array();
    for (size_t i = 0; i < nq && i < 100; i++) {
        const struct job_rec *j = w[i].j;
        json_t *o = json_object();
        jx_set(o, "id", jx_str(j->job_id));
        jx_set(o, "cluster", jx_str(j->cluster));
        jx_set(o, "model", jx_str(j->model));
        jx_set(o, "dataset", jx_str(j->dataset));
        jx_set(o, "state", jx_str(j->state));
        jx_set(o, "waitSec",
               jx_int_or_null(w[i].w >= 0, (long long)llround(w[i].w)));
        jx_set(o, "nodes", int_or_null(j->nodes));
        jx_set(o, "gpus", int_or_null(j->gpus));
        jx_set(o, "submitTime", jx_str(j->submit_time));
        json_array_append_new(arr, o);
    }
    free(w);
    job_rec_free_list(jobs, n);
    q = json_object();
    jx_set(q, "count", json_integer((json_int_t)json_array_size(arr)));
    jx_set(q, "jobs", arr);
    d = json_object();
    jx_set(d, "queue", q);
    return redacted(vc, d, err);
}

json_t *view_facility_job(const struct view_ctx *vc, const char *cluster,
                          const char *job_id, exa_error_t *err)
{
    struct job_rec j;
    json_t *o, *res, *tm, *d;
    job_rec_init(&j);
    if (view_get_job_(vc, cluster, job_id, &j, err) < 0) {
        job_rec_release(&j);
        return NULL;
    }
    o = json_object();
    jx_set(o, "id", jx_str(j.job_id));
    jx_set(o, "cluster", jx_str(j.cluster));
    jx_set(o, "model", jx_str(j.model));
    jx_set(o, "dataset", jx_str(j.dataset));
    jx_set(o, "state", jx_str(j.state));
    res = json_object();
    jx_set(res, "nodes", int_or_null(j.nodes));
    jx_set(res, "gpus", int_or_null(j.gpus));
    jx_set(res, "cpus", int_or_null(j.cpus));
    jx_set(o, "resources", res);
    tm = json_object();
    jx_set(tm, "submit", jx_str(j.submit_time));
    jx_set(tm, "start", jx_str(j.start_time));
    jx_set(tm, "end", jx_str(j.end_time));
    jx_set(tm, "queueSeconds", jx_real(j.queue_seconds));
    jx_set(tm, "runSeconds", jx_real(j.run_seconds));
    jx_set(o, "timing", tm);
    jx_set(o, "exitCode", int_or_null(j.exit_code));
    /* exa has no Prefect flow runs or MLflow: the run id is exa's own */
    jx_set(o, "flowRunId", jx_str(j.run_uuid));
    jx_set(o, "mlflowRunId", NULL);
    job_rec_release(&j);
    d = json_object();
    jx_set(d, "job", o);
    return redacted(vc, d, err);
}

json_t *view_facility_fleet(const struct view_ctx *vc, exa_error_t *err)
{
    struct fleet f = {NULL, 0};
    char *rp = regpath_of(vc, err);
    json_t *arr, *d;
    time_t now = time(NULL);
    if (!rp)
        return NULL;
    if (fleet_load(vc->st, rp, &f, err) < 0) {
        free(rp);
        return NULL;
    }
    free(rp);
    arr = json_array();
    for (size_t i = 0; i < f.nr; i++) {
        const struct fleet_cluster *c = &f.v[i];
        struct node_row *rows = NULL;
        size_t nn = 0;
        struct place_ask ask = {0, 0, 1, NULL};
        struct place_capacity cap;
        struct audit_event ev;
        double gh = 0, ch = 0, util;
        int have_snap, total, idle;
        json_t *o = json_object(), *caps;
        const char *approved_at = NULL;

        memset(&cap, 0, sizeof(cap));
        cap.age_s = -1;
        if (store_nodes_list(vc->st, c->def.name, &rows, &nn, NULL) == 0)
            place_capacity_of(rows, nn, &ask, now, &cap);
        node_rows_free(rows, nn);
        have_snap = nn > 0;
        capacity_hours(vc->st, c->def.name, &gh, &ch, NULL);
        total = cap.total_gpus;
        /* reference: idleGpus defaults to totalGpus with no snapshot */
        idle = have_snap ? cap.idle_gpus : total;
        util = total > 0 ? round(1000.0 * (total - idle) / total) / 10.0 : 0;
        memset(&ev, 0, sizeof(ev));
        if (audit_latest(vc->st, c->def.name, "cluster_", &ev, NULL) == 1 &&
            ev.action &&
            (!strcmp(ev.action, "cluster_approved") ||
             !strcmp(ev.action, "cluster_rejected")))
            approved_at = ev.ts;
        caps = c->row.capabilities ? json_loads(c->row.capabilities, 0, NULL)
                                   : NULL;
        jx_set(o, "name", jx_str(c->def.name));
        jx_set(o, "scheduler", jx_str(c->def.scheduler));
        jx_set(o, "transport", jx_str(c->def.transport));
        jx_set(o, "host", jx_str(c->def.host));
        jx_set(o, "state", jx_str(cluster_state_name(c->state)));
        jx_set(o, "approvedBy", jx_str(c->row.approved_by));
        jx_set(o, "requestedBy", jx_str(c->row.requested_by));
        jx_set(o, "reason", jx_str(c->row.reason));
        jx_set(o, "capabilities", caps);
        jx_set(o, "totalGpus", json_integer(total));
        jx_set(o, "idleGpus", json_integer(idle));
        jx_set(o, "utilizationPct", jx_real(util));
        jx_set(o, "gpuHoursUsed", jx_real(round(gh * 100) / 100));
        jx_set(o, "updatedAt", jx_str(c->row.updated_at));
        jx_set(o, "gpus_total", json_integer(total));
        jx_set(o, "gpus_idle", json_integer(idle));
        jx_set(o, "utilization_pct", jx_real(util));
        jx_set(o, "gpu_hours_used", jx_real(round(gh * 100) / 100));
        jx_set(o, "snapshot_age_s",
               jx_int_or_null(cap.age_s >= 0, (long long)llround(cap.age_s)));
        jx_set(o, "approved_by", jx_str(c->row.approved_by));
        jx_set(o, "approved_at", jx_str(approved_at));
        jx_set(o, "host_key_fingerprint", jx_str(c->row.host_key_fingerprint));
        jx_set(o, "audit_mismatch", jx_str(c->audit_mismatch));
        audit_event_release(&ev);
        json_array_append_new(arr, o);
    }
    fleet_release(&f);
    d = json_object();
    jx_set(d, "count", json_integer((json_int_t)json_array_size(arr)));
    jx_set(d, "clusters", arr);
    return redacted(vc, d, err);
}
