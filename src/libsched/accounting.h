/*
 * accounting.h - what a finished job really used, read from the scheduler
 * over the cluster's own transport (doc/design.md §6: the reference ran
 * sacct locally, never recorded run_seconds and priced Flux at 0 h,
 * doc/reference.md §6 items 2, 3, 16).
 *
 *   slurm  `sacct -P -j ID[,ID...] -o JobID,ElapsedRaw,AllocTRES,TotalCPU,
 *          Start,End,Submit,NNodes,AllocCPUS` (sacct(1)); the allocation
 *          line (JobID == ID) gives the times, ElapsedRaw and the
 *          allocation; TotalCPU is taken from it, or summed over the step
 *          lines (ID.batch, ID.0, ...) when the allocation line says 0.
 *   flux   `flux job info ID eventlog` and `flux job info ID R` (RFC 18,
 *          RFC 20) through flux_job_accounting() (parse_flux.h).
 *
 * Hours are allocation hours: gpu_hours = gpus * run_seconds / 3600 and
 * cpu_hours = cpus * run_seconds / 3600, what the site gave the job and
 * what a site bills, not TotalCPU (the CPU time the processes consumed,
 * kept apart as cpu_seconds): an idle reserved core is still a core
 * nobody else could use.
 */
#ifndef EXA_ACCOUNTING_H
#define EXA_ACCOUNTING_H

#include <stddef.h>

#include "libsched/sched.h"
#include "libutil/error.h"

struct sched_acct {
    char submit[40], start[40], end[40]; /* ISO-8601 UTC "…Z", "" unknown */
    double queue_seconds;                /* submit -> start, -1 unknown */
    double run_seconds;          /* ElapsedRaw / start -> finish, -1 unknown */
    double cpu_seconds;          /* TotalCPU (user + system), -1 unknown */
    long long nodes, cpus, gpus; /* allocated in total, -1 unknown */
    double gpu_hours, cpu_hours; /* allocation hours (above), -1 unknown */
};

/* Everything unknown. */
void sched_acct_init(struct sched_acct *a);

/*
 * Parse the output of the sacct command above (text[0..len), '|'
 * separated, header line kept) for job_id with sacct_parse(). Slurm
 * prints times in the cluster's local time zone without an offset; they
 * are converted with this process's TZ (set TZ to the cluster's zone when
 * they differ). gpus (and so gpu_hours) is -1 when AllocTRES is empty,
 * cut, or holds a GPU count or typed sum past INT64_MAX (libres/gres.h:
 * never wrapped). Returns 0, or -1 with err (EXA_ENOTFOUND: no
 * allocation line for the job; EXA_EPARSE: sacct_parse refused the text).
 */
int sched_acct_parse_sacct(const char *text, size_t len, const char *job_id,
                           struct sched_acct *out, exa_error_t *err);

/*
 * Ask the scheduler of s, over its transport, for the accounting of the
 * ended job job_id and fill *out. Slurm accounting reaches slurmdbd
 * asynchronously, so a missing or still-running record is asked again up
 * to `tries` times, one second apart (tries < 1: 1). Returns 0, or -1
 * with err (EXA_ENOTFOUND: no record; EXA_ETRANSPORT; EXA_ESCHED: the
 * command failed; EXA_EUSAGE: mock and other schedulers without
 * accounting).
 */
int sched_accounting(struct sched *s, const char *job_id, int tries,
                     struct sched_acct *out, exa_error_t *err);

/* Job ids per sacct call of sched_accounting_batch(). */
#define SACCT_BATCH_IDS 200

/*
 * sched_accounting() for n ended jobs at once: ids[0..n) (borrowed,
 * checked against the job-id grammar by the caller, libsched/jobid.h);
 * out[0..n) and found[0..n) are the caller's. Slurm: one `sacct -P -j
 * ID,ID,...` per SACCT_BATCH_IDS ids, and for ids whose record is
 * missing or still lacks its end another round one second later, up to
 * tries rounds (< 1: 1); Flux: sched_accounting() per id. found[i] is 1
 * when out[i] holds a record (complete or the best there was), 0 when the
 * scheduler has none. Returns 0, or -1 with err (EXA_ETRANSPORT,
 * EXA_ESCHED, EXA_EPARSE: the first sacct call that failed; EXA_EUSAGE:
 * mock and other schedulers without accounting), after which found[]
 * tells what was read: a failed sacct call leaves only its own ids
 * unfound (and not asked again), the other calls are still made and
 * their records kept.
 */
int sched_accounting_batch(struct sched *s, const char *const *ids, size_t n,
                           int tries, struct sched_acct *out, int *found,
                           exa_error_t *err);

#endif
