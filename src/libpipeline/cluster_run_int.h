/*
 * cluster_run_int.h - private to cluster_run.c and cluster_artifacts.c:
 * the step hook both report through and the three end-of-job steps that
 * cluster_run.c's wait calls in cluster_artifacts.c. Not for other
 * callers; the public surface is cluster_run.h.
 */
#ifndef EXA_CLUSTER_RUN_INT_H
#define EXA_CLUSTER_RUN_INT_H

#include <stdarg.h>
#include <stdio.h>

#include "libpipeline/cluster_run.h"
#include "libstore/store.h"

/* Report one step to h->step (if any) as ("step", detail); detail is the
 * printf-formatted fmt, cut at 511 bytes. */
static inline void hook_step(const struct cluster_run_hooks *h,
                             const char *step, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void hook_step(const struct cluster_run_hooks *h,
                             const char *step, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    if (!h || !h->step)
        return;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    h->step(h->arg, step, detail);
}

/* Step 6, through gate_record_status() (libfleet/gate.h, the one writer
 * of scheduler status): write res->last's state, raw state, exit code,
 * signal, reason
 * and times (converted to UTC) on the job row res->job, with the
 * scheduler's accounting when s gives it (res->acct, res->have_acct), the
 * status's own figures otherwise; then reload res->job from st. Failures
 * to write are not reported (the row keeps what it had). */
void cluster_run_record_end(store_t *st, struct sched *s,
                            const struct cluster_run_hooks *h,
                            struct cluster_run_result *res);

/*
 * The accounting step's line for a (appended to out): "12 s queued, 30 s
 * run, 1 GPU(s), 4 CPU(s): 0.0083 GPU-h, 0.0333 CPU-h"; a field that is
 * -1 (unknown, e.g. a job cancelled while pending) is said in words
 * ("GPUs unknown"), never printed as -1.
 */
void cluster_run_acct_line(const struct sched_acct *a, struct strbuf *out);

/* After a job that did not complete: the last CLUSTER_RUN_STDERR_LINES
 * lines of <remote_dir>/<job_id>.err (only its last 64 KiB read) into
 * res->stderr_tail (malloc'ed); left NULL when there is no remote_dir or
 * the file cannot be read. */
void cluster_run_keep_stderr_tail(struct sched *s,
                                  struct cluster_run_result *res);

/* Step 7 for the COMPLETED job res->job: fetch its artifacts over t into
 * models_root, verify them, and register the next version of its model
 * (res->mv, res->registered, res->job.model_version). Returns 0, or -1
 * with err filled and the staging directory removed. */
int cluster_run_register_version(store_t *st, struct transport *t,
                                 const char *models_root,
                                 const struct cluster_run_hooks *h,
                                 struct cluster_run_result *res,
                                 exa_error_t *err);

#endif
