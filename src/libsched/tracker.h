/*
 * tracker.h - wait for a set of jobs with bounded, batched polling.
 *
 * Each round asks the adapter once for every job not yet terminal
 * (sched_status_batch: one squeue + at most one sacct on Slurm), then
 * sleeps the poll interval. Bounds (shared/REFERENCE.md §4.2): overall
 * deadline, and a streak of UNKNOWN answers per job after which the wait
 * gives up with an error naming the job. The job is then reported UNKNOWN,
 * never FAILED: exa does not know that it failed. A whole-batch transport
 * failure (controller or ssh down) counts as one UNKNOWN poll for each job.
 */
#ifndef EXA_TRACKER_H
#define EXA_TRACKER_H

#include "libsched/sched.h"

struct tracker_opts {
    double poll_interval_s; /* EXAMLOPS_HPC_POLL_INTERVAL, default 10 */
    double max_wait_s;      /* EXAMLOPS_SLURM_MAX_WAIT_S, default 86400 */
    int max_unknown;        /* EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS, default 5 */
    /* Called after every poll with the current view; may be NULL. */
    void (*progress)(void *arg, const struct sched_job *jobs, size_t n,
                     double elapsed_s, int poll);
    void *arg;
    /* Sleep used between polls (tests pass a fake); NULL: nanosleep. */
    void (*sleep_fn)(void *arg, double seconds);
};

/* Fill o with the defaults above, overridden by the environment variables
 * named there (seconds, a count); progress/sleep_fn/arg are cleared.
 * 0, or -1 with err (EXA_ECONFIG) on a value that is not positive. */
int tracker_opts_from_env(struct tracker_opts *o, exa_error_t *err);

/*
 * Poll until every job in ids[0..n) is terminal. out (caller-owned, n
 * entries): out[i] holds the last status of ids[i] (also on failure);
 * *polls (may be NULL) the number of sched_status_batch() rounds. Returns 0 when all are terminal
 * (whatever their state), -1 with err: EXA_ETIMEOUT when the deadline
 * passed ("N job(s) not terminal after S s: ID..."), EXA_ENOTFOUND when a
 * job stayed UNKNOWN for max_unknown polls in a row ("job 'ID' not
 * observable after 5 consecutive polls").
 */
int tracker_wait(struct sched *s, const char *const *ids, size_t n,
                 const struct tracker_opts *o, struct sched_job *out,
                 int *polls, exa_error_t *err);

#endif
