/*
 * view.h - the task engine's read views as JSON, shared by `exa task`,
 * `exa worker list` and any later REST or MCP route (the libview rule:
 * one shape for every front end). Each returns a new reference (caller
 * json_decref) or NULL with err (EXA_ENOTFOUND for an unknown task,
 * EXA_ECONFIG for the database). Times are Unix seconds (null if unset).
 */
#ifndef EXA_TASK_VIEW_H
#define EXA_TASK_VIEW_H

#include <jansson.h>

#include "libstore/store.h"

/* {"tasks": [{id, state, attempt, cpus, gpus, ram_mb, timeout_s, labels,
 * cluster (pinned, or null), run_id (of `exa pipeline run --via worker`,
 * or null), argv, worker, exit_code, reason, created_at, ended_at}], "counts":
 * {queued, leased, done, failed, cancelled}}; state NULL for all. */
json_t *task_view_list(store_t *st, const char *state, long long limit,
                       exa_error_t *err);
/* One task with its spec, attempts and the winning result. */
json_t *task_view_show(store_t *st, long long id, exa_error_t *err);
/* {"task": id, "attempts": [{attempt, worker, leased_at, ended_at,
 * outcome, cause, exit_code, signal}]} */
json_t *task_view_attempts(store_t *st, long long id, exa_error_t *err);
/* {"workers": [{id, cluster, profile, job, node, host, state,
 * incarnation, capacity, leases, cpus, gpus, ram_mb, labels,
 * registered_at, last_seen_at, walltime_left_s, exit_reason}]} */
json_t *worker_view_list(store_t *st, double now, exa_error_t *err);
/* {"events": [{id, ts, kind, cluster, profile, worker, task, attempt,
 * detail}]} after after_id, kind NULL for all. */
json_t *worker_view_events(store_t *st, const char *kind, long long after_id,
                           long long limit, exa_error_t *err);

#endif
