/*
 * view.c - JSON read views of tasks, attempts, workers and their events
 * (view.h), built from libstore/tasks.h records.
 */
#include "libtask/view.h"

#include <stdlib.h>
#include <string.h>

#include "libstore/tasks.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"

static json_t *t_or_null(double t)
{
    return t > 0 ? jx_real(t) : json_null();
}

static json_t *i_or_null(long long v)
{
    return jx_int_or_null(v != TASK_NULL_INT, v);
}

static json_t *labels_arr(const char *s)
{
    json_t *a = json_array();
    const char *p = s;
    while (p && *p) {
        const char *c = strchr(p, ',');
        char *l = c ? xstrndup(p, (size_t)(c - p)) : xstrdup(p);
        json_array_append_new(a, jx_str(l));
        free(l);
        p = c ? c + 1 : NULL;
    }
    return a;
}

static json_t *task_obj(const struct task_rec *t, int with_spec)
{
    json_t *o = json_object(), *spec = json_loads(t->spec, 0, NULL);
    json_object_set_new(o, "id", json_integer(t->id));
    json_object_set_new(o, "state", jx_str(t->state));
    json_object_set_new(o, "attempt", json_integer(t->attempt));
    json_object_set_new(o, "cpus", json_integer(t->cpus));
    json_object_set_new(o, "gpus", json_integer(t->gpus));
    json_object_set_new(o, "ram_mb", json_integer(t->ram_mb));
    json_object_set_new(o, "timeout_s", jx_real(t->timeout_s));
    json_object_set_new(o, "labels", labels_arr(t->labels));
    json_object_set_new(o, "cluster", jx_str(t->cluster));
    json_object_set_new(o, "run_id", jx_str(t->run_id));
    json_object_set_new(o, "argv",
                        spec && json_object_get(spec, "argv")
                            ? json_incref(json_object_get(spec, "argv"))
                            : json_array());
    json_object_set_new(o, "worker", jx_str(t->worker_id));
    json_object_set_new(o, "exit_code", i_or_null(t->exit_code));
    json_object_set_new(o, "signal", i_or_null(t->signal));
    json_object_set_new(o, "done_attempt", i_or_null(t->done_attempt));
    json_object_set_new(o, "infra_failures", json_integer(t->infra_failures));
    json_object_set_new(o, "reason", jx_str(t->reason));
    json_object_set_new(o, "created_at", t_or_null(t->created_at));
    json_object_set_new(o, "ended_at", t_or_null(t->ended_at));
    if (with_spec && spec)
        json_object_set(o, "spec", spec);
    json_decref(spec);
    return o;
}

json_t *task_view_list(store_t *st, const char *state, long long limit,
                       exa_error_t *err)
{
    struct task_rec *v = NULL;
    size_t n = 0;
    long long counts[5];
    static const char *const names[5] = {"queued", "leased", "done", "failed",
                                         "cancelled"};
    json_t *doc, *arr, *c;
    if (store_task_list(st, state, limit, &v, &n, err) < 0 ||
        store_task_counts(st, counts, err) < 0) {
        task_rec_free_list(v, n);
        return NULL;
    }
    doc = json_object();
    arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, task_obj(&v[i], 0));
    c = json_object();
    for (int i = 0; i < 5; i++)
        json_object_set_new(c, names[i], json_integer(counts[i]));
    json_object_set_new(doc, "tasks", arr);
    json_object_set_new(doc, "counts", c);
    task_rec_free_list(v, n);
    return doc;
}

static json_t *attempts_arr(store_t *st, long long id, exa_error_t *err)
{
    struct attempt_rec *v = NULL;
    size_t n = 0;
    json_t *arr;
    if (store_attempt_list(st, id, &v, &n, err) < 0)
        return NULL;
    arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "attempt", json_integer(v[i].attempt));
        json_object_set_new(o, "worker", jx_str(v[i].worker_id));
        json_object_set_new(o, "leased_at", t_or_null(v[i].leased_at));
        json_object_set_new(o, "ended_at", t_or_null(v[i].ended_at));
        json_object_set_new(o, "outcome",
                            v[i].outcome ? jx_str(v[i].outcome)
                                         : json_string("running"));
        json_object_set_new(o, "cause", jx_str(v[i].cause));
        json_object_set_new(o, "exit_code", i_or_null(v[i].exit_code));
        json_object_set_new(o, "signal", i_or_null(v[i].signal));
        json_array_append_new(arr, o);
    }
    attempt_rec_free_list(v, n);
    return arr;
}

json_t *task_view_attempts(store_t *st, long long id, exa_error_t *err)
{
    struct task_rec t;
    json_t *doc, *arr;
    if (store_task_get(st, id, &t, err) < 0)
        return NULL;
    task_rec_release(&t);
    if (!(arr = attempts_arr(st, id, err)))
        return NULL;
    doc = json_object();
    json_object_set_new(doc, "task", json_integer(id));
    json_object_set_new(doc, "attempts", arr);
    return doc;
}

json_t *task_view_show(store_t *st, long long id, exa_error_t *err)
{
    struct task_rec t;
    json_t *o, *arr;
    char *body = NULL;
    if (store_task_get(st, id, &t, err) < 0)
        return NULL;
    if (!(arr = attempts_arr(st, id, err))) {
        task_rec_release(&t);
        return NULL;
    }
    o = task_obj(&t, 1);
    json_object_set_new(o, "attempts", arr);
    if (t.done_attempt != TASK_NULL_INT &&
        store_result_get(st, id, t.done_attempt, &body, err) > 0) {
        json_t *r = json_loads(body, 0, NULL);
        json_object_set_new(o, "result", r ? r : json_null());
    } else {
        json_object_set_new(o, "result", json_null());
    }
    free(body);
    task_rec_release(&t);
    return o;
}

json_t *worker_view_list(store_t *st, double now, exa_error_t *err)
{
    struct worker_rec *v = NULL;
    size_t n = 0;
    json_t *doc, *arr;
    if (store_worker_list(st, &v, &n, err) < 0)
        return NULL;
    arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        struct attempt_rec *a = NULL;
        size_t na = 0;
        if (store_attempt_open(st, v[i].id, &a, &na, err) < 0) {
            json_decref(o);
            json_decref(arr);
            worker_rec_free_list(v, n);
            return NULL;
        }
        attempt_rec_free_list(a, na);
        json_object_set_new(o, "id", jx_str(v[i].id));
        json_object_set_new(o, "cluster", jx_str(v[i].cluster));
        json_object_set_new(o, "profile", jx_str(v[i].profile));
        json_object_set_new(o, "job", jx_str(v[i].slurm_job_id));
        json_object_set_new(o, "node", jx_str(v[i].node));
        json_object_set_new(o, "host", jx_str(v[i].host));
        json_object_set_new(o, "state", jx_str(v[i].state));
        json_object_set_new(o, "incarnation", json_integer(v[i].incarnation));
        json_object_set_new(o, "capacity", json_integer(v[i].capacity));
        json_object_set_new(o, "leases", json_integer((long long)na));
        json_object_set_new(o, "cpus", json_integer(v[i].cpus));
        json_object_set_new(o, "gpus", json_integer(v[i].gpus));
        json_object_set_new(o, "ram_mb", json_integer(v[i].ram_mb));
        json_object_set_new(o, "labels", labels_arr(v[i].labels));
        json_object_set_new(o, "registered_at", t_or_null(v[i].registered_at));
        json_object_set_new(o, "last_seen_at", t_or_null(v[i].last_seen_at));
        json_object_set_new(o, "walltime_left_s",
                            v[i].walltime_end_at > 0
                                ? jx_real(v[i].walltime_end_at - now)
                                : json_null());
        json_object_set_new(o, "exit_reason", jx_str(v[i].exit_reason));
        json_array_append_new(arr, o);
    }
    worker_rec_free_list(v, n);
    doc = json_object();
    json_object_set_new(doc, "workers", arr);
    return doc;
}

json_t *worker_view_events(store_t *st, const char *kind, long long after_id,
                           long long limit, exa_error_t *err)
{
    struct wevent_rec *v = NULL;
    size_t n = 0;
    json_t *doc, *arr;
    if (store_wevent_list(st, kind, after_id, limit, &v, &n, err) < 0)
        return NULL;
    arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object(), *d;
        json_object_set_new(o, "id", json_integer(v[i].id));
        json_object_set_new(o, "ts", jx_real(v[i].ts));
        json_object_set_new(o, "kind", jx_str(v[i].kind));
        json_object_set_new(o, "cluster", jx_str(v[i].cluster));
        json_object_set_new(o, "profile", jx_str(v[i].profile));
        json_object_set_new(o, "worker", jx_str(v[i].worker_id));
        json_object_set_new(o, "task", i_or_null(v[i].task_id));
        json_object_set_new(o, "attempt", i_or_null(v[i].attempt));
        d = v[i].detail ? json_loads(v[i].detail, 0, NULL) : NULL;
        json_object_set_new(o, "detail", d ? d : json_null());
        json_array_append_new(arr, o);
    }
    wevent_rec_free_list(v, n);
    doc = json_object();
    json_object_set_new(doc, "events", arr);
    return doc;
}
