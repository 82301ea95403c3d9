/*
 * byname.h - find the jobs a scheduler holds under one job name.
 *
 * Every exa submission carries its run id in the job name (sched.h
 * sched_job_name()), so "is there already a job for this run?" is a query
 * by name: what `exa pipeline run` asks before it submits, to adopt a job
 * a killed exa left behind instead of making a second one.
 */
#ifndef EXA_SCHED_BYNAME_H
#define EXA_SCHED_BYNAME_H

#include <stddef.h>

#include "libsched/sched.h"
#include "libutil/error.h"

/*
 * The jobs named exactly name on the scheduler of s, over its transport:
 *   slurm  one `squeue -h --me --name=NAME -o SLURM_SQUEUE_FORMAT`
 *          (squeue(1) -n, the jobs still in the queue; --me: the user exa
 *          runs as, as sacct lists by default, so that another user's job
 *          given the same name is never taken for exa's; read by
 *          squeue_parse_own), then, only when it lists no
 *          job that is not yet terminal, one `sacct -X -n --parsable2
 *          --delimiter=0x1F --name=NAME -S SINCE -E now -o
 *          SLURM_SACCT_FIELDS` (sacct(1) --name; the finished ones),
 *          both read by the pure parsers of parse_slurm.h;
 *   flux   one `flux jobs -a --name=NAME -o "{id.f58} {status_abbrev}"`
 *          (flux-jobs(1) --name; -a: inactive jobs too; the header kept
 *          so the columns are found by name), read by flux_jobs_parse
 *          (parse_flux.h).
 * since (epoch seconds; <= 0: seven days ago) bounds the sacct window;
 * Flux keeps inactive jobs until purged and has no window.
 * *out receives a malloc'ed array of *n jobs (NULL when none; free()
 * it), one per distinct id, each with id, state, raw_state and, when
 * printed, submit (as the scheduler prints it); a job listed by both
 * squeue and sacct appears once, with squeue's view. The order is the
 * scheduler's, which promises nothing: a caller that wants the newest
 * compares submit times.
 * Returns 0 (possibly *n == 0), or -1 with err and nothing allocated:
 * EXA_EUSAGE for mock or an empty name, the transport's code when no
 * command could be run, EXA_ESCHED when the scheduler command failed
 * ("squeue on 'HOST' exited 1: MESSAGE").
 */
int sched_find_by_name(struct sched *s, const char *name, long long since,
                       struct sched_job **out, size_t *n, exa_error_t *err);

#endif
