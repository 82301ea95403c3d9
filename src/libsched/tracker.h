/*
 * tracker.h - wait for a set of jobs with bounded, batched polling.
 *
 * Each round asks the adapter once for every job not yet terminal
 * (sched_status_batch: one squeue + at most one sacct on Slurm), then
 * sleeps the poll interval. Bounds (doc/reference.md §4.2): overall
 * deadline, and a streak of UNKNOWN answers per job after which the wait
 * gives up with an error naming the job. The job is then reported UNKNOWN,
 * never FAILED: exa does not know that it failed.
 *
 * Outages are not job states: a poll whose query failed (transport error
 * or timeout, ssh down, a scheduler command that failed such as squeue
 * while slurmctld is down; sched_status_failed()) counts toward no job's
 * UNKNOWN streak, whatever it left UNKNOWN; jobs it did observe are taken.
 * Only the scheduler answering and not knowing a job counts. During an
 * outage the tracker backs off exponentially (poll interval x 2^k, capped
 * at min(60 s, 6 x poll interval) and never below the interval), reports
 * it through outage(), and keeps going until the jobs end or the deadline
 * passes: an outage never ends a wait before max_wait_s.
 */
#ifndef EXA_TRACKER_H
#define EXA_TRACKER_H

#include "libsched/sched.h"

/* What outage() is told. */
struct tracker_outage {
    int active;        /* 1: this poll failed; 0: it answered again */
    long long since;   /* epoch seconds of the outage's first failed poll */
    int failures;      /* failed polls in a row (the last one, when over) */
    double retry_in_s; /* active: the backoff before the next poll */
    double lasted_s;   /* over: seconds from the first failure to now */
    const exa_error_t *error; /* active: the last failure; borrowed */
};

/* The backoff before the next poll after failures (>= 1) failed polls in
 * a row: poll_s x 2^(failures-1), capped at min(60, 6 x poll_s), at least
 * poll_s. Exposed for tests. */
double tracker_backoff(double poll_s, int failures);

struct tracker_opts {
    double poll_interval_s; /* EXAMLOPS_HPC_POLL_INTERVAL, default 10 */
    double max_wait_s;      /* EXAMLOPS_SLURM_MAX_WAIT_S, default 86400 */
    int max_unknown;        /* EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS, default 5 */
    /* Called after every poll with the current view; may be NULL. */
    void (*progress)(void *arg, const struct sched_job *jobs, size_t n,
                     double elapsed_s, int poll);
    void *arg;
    /* Called after each failed poll (active 1) and once when polls work
     * again (active 0); may be NULL. Gets arg. */
    void (*outage)(void *arg, const struct tracker_outage *o);
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
 * *polls (may be NULL) the number of sched_status_batch() rounds. Returns 0
 * when all are terminal (whatever their state), -1 with err: EXA_ETIMEOUT when
 * the deadline passed ("N job(s) not terminal after S s: ID...", with "; the
 * scheduler has been unreachable since HH:MM:SS UTC: ERROR" when an outage was
 * still on), EXA_ENOTFOUND when the scheduler answered max_unknown polls
 * in a row without knowing a job ("job 'ID' not known to the scheduler
 * after 5 consecutive polls").
 */
int tracker_wait(struct sched *s, const char *const *ids, size_t n,
                 const struct tracker_opts *o, struct sched_job *out,
                 int *polls, exa_error_t *err);

#endif
