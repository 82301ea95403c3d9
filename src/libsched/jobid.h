/*
 * jobid.h - the job id grammar of each scheduler, checked before an id
 * reaches a command line (scancel, squeue, sacct, flux): an id is never an
 * option, a list or a shell word of its own choosing.
 */
#ifndef EXA_SCHED_JOBID_H
#define EXA_SCHED_JOBID_H

#include "libutil/error.h"

/* Longest id accepted (bytes); struct sched_job keeps 127. */
#define SCHED_JOB_ID_MAX 127

/*
 * Check id against the grammar of scheduler kind:
 *   slurm  N, N_M (array task), N_[SPEC] and N_[SPEC%T] (an array's
 *          pending tasks as squeue prints them; SPEC is comma-separated M
 *          or M-M), N+M (heterogeneous job component); N, M, T decimal
 *          digits (at most 10) (squeue(1) "JOB ID" / sacct(1) JobID)
 *   flux   F58: "ƒ" (U+0192) or "f" then base58 digits
 *          [1-9A-HJ-NP-Za-km-z], or decimal (flux-jobs(1) "JOBID",
 *          RFC 19)
 *   mock   "mock-" then [A-Za-z0-9_-]
 *   NULL   any of the above (the scheduler is not known yet)
 * Returns 0, or -1 with err (EXA_EUSAGE "invalid slurm job id 'X'").
 * An unknown kind is EXA_EUSAGE too.
 */
int sched_job_id_check(const char *kind, const char *id, exa_error_t *err);

#endif
