/*
 * timeutil.h - ISO-8601 UTC timestamps <-> epoch seconds, and clocks.
 *
 * exa stores and prints every time as "YYYY-MM-DDTHH:MM:SSZ" (UTC, whole
 * seconds). Input is more varied: PM100's CSV export, sacct and Python
 * tools write "YYYY-MM-DD HH:MM:SS", "...T...", fractional seconds and
 * "+00:00" offsets, so the parser accepts the subset of ISO 8601 /
 * RFC 3339 §5.6 that these produce.
 */
#ifndef EXA_TIMEUTIL_H
#define EXA_TIMEUTIL_H

#include <stddef.h>
#include <time.h>

#include "libutil/error.h"

/* Buffer size that holds any string time_format_iso8601() writes. */
#define TIME_ISO_MAX 32

/*
 * Parse s into seconds since the epoch (UTC). Accepted forms:
 *   YYYY-MM-DD
 *   YYYY-MM-DD[T| ]HH:MM[:SS[.frac]][Z|z|+HH:MM|-HH:MM|+HHMM|+HH]
 * A time without an offset is taken as UTC. Fractional seconds are
 * truncated. Leading/trailing spaces are not allowed. Returns 0 and sets
 * *out, or -1 with err (EXA_EPARSE, quoting s) for anything else,
 * including out-of-range fields (month 13, 25:00, Feb 30).
 */
int time_parse_iso8601(const char *s, time_t *out, exa_error_t *err);

/*
 * Parse a time as a scheduler prints it: Slurm's "YYYY-MM-DDTHH:MM:SS"
 * (local time of the host that printed it, no zone: sacct(1), squeue(1)
 * "TIME FORMAT"), or epoch seconds, possibly fractional (Slurm with
 * SLURM_TIME_FORMAT=%s, Flux t_submit/t_run), or "YYYY-MM-DDTHH:MM:SSZ"
 * (UTC: Flux and mock times as the adapters report them). Returns the
 * epoch second,
 * or -1 for NULL, "", "Unknown", "None", "N/A" and anything else.
 */
time_t time_parse_sched(const char *s);

/* Write t as "YYYY-MM-DDTHH:MM:SSZ" into buf (n >= TIME_ISO_MAX). */
void time_format_iso8601(time_t t, char *buf, size_t n);

/* Monotonic clock in seconds (CLOCK_MONOTONIC), for elapsed times. */
double time_monotonic(void);

/*
 * CPU seconds (user + system) used so far by this process, all its threads
 * included (getrusage RUSAGE_SELF); with children non-zero, also by its
 * waited-for children (RUSAGE_CHILDREN).
 */
double time_cpu_seconds(int children);

#endif
