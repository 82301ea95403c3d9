/*
 * metrics.h - the Prometheus families of the dial-back workers
 * (shared/WORKERS.md §11), appended to `exa serve`'s /metrics. Labels are
 * bounded to cluster, profile, state and fixed words; never a worker or
 * task id, and never token material.
 */
#ifndef EXA_PROVISION_METRICS_H
#define EXA_PROVISION_METRICS_H

#include "libprovision/provision.h"
#include "libstore/store.h"
#include "libtask/engine.h"
#include "libutil/strbuf.h"

/*
 * Append the exposition to out: exa_workers{cluster,profile,state},
 * exa_worker_registrations_total{result}, exa_worker_lost_total,
 * exa_tasks{state}, exa_task_leases_total,
 * exa_task_lease_expired_total{cause}, exa_task_results_total{outcome},
 * exa_longpoll_parked, and with p (may be NULL)
 * exa_provision_requests_total{outcome}, exa_provision_outstanding
 * {cluster,profile}, exa_scheduler_command_errors_total{command}.
 * st is a connection of the caller's thread. 0, or -1 with err.
 */
int worker_metrics_render(task_engine_t *e, struct provisioner *p, store_t *st,
                          struct strbuf *out, exa_error_t *err);

#endif
