/*
 * sched_lines.h - slurm.c's own line parsers, exposed for the unit
 * tests and fuzz/fuzz_flux_adapter.c. (flux.c has none: it reads Flux
 * output through parse_flux.h.)
 *
 * These read only the formats slurm.c asks its scheduler for
 * (fields separated by 0x1F), plus `scontrol show job -o`. Scheduler
 * output is untrusted: every parser accepts any bytes, maps what it cannot read to "unknown" (empty string, -1, SCHED_UNKNOWN)
 * and never aborts. Times that are not finite or lie outside
 * [0, SCHED_MAX_EPOCH] seconds are treated as unknown.
 */
#ifndef EXA_SCHED_LINES_H
#define EXA_SCHED_LINES_H

#include "libsched/sched.h"

/* Largest epoch time (seconds) accepted from a scheduler: year ~5138. */
#define SCHED_MAX_EPOCH 1e11

/*
 * One row of `squeue -h -o "%i<US>%T<US>%r<US>%V<US>%S<US>%e"` (squeue(1)
 * -o): id, state, reason, submit, start, end. line is modified in place.
 * 0 with j filled, -1 with fewer than 6 fields or no id.
 */
int sched_slurm_parse_squeue_line(char *line, struct sched_job *j);

/*
 * One row of `sacct -X -P -n --delimiter=<US> -o
 * JobID,State,ExitCode,Submit,Start,End,ElapsedRaw,AllocTRES` (sacct(1)
 * --format). line is modified in place. 0 with j filled, -1 with fewer
 * than 8 fields, no id, or a step id ("123.batch").
 */
int sched_slurm_parse_sacct_line(char *line, struct sched_job *j);

/*
 * One line of `scontrol show job -o` (scontrol(1): Key=Value words; array
 * tasks become "ArrayJobId_ArrayTaskId"). 0 with j filled, -1 without a
 * JobId.
 */
int sched_slurm_parse_scontrol_line(const char *line, struct sched_job *j);

#endif
