/*
 * duration.h - Slurm and Flux durations: parse what the schedulers print,
 * parse what users type (sbatch --time), format both ways.
 *
 * Formats: Slurm prints elapsed and limit times as [D-]HH:MM:SS, MM:SS or
 * M:SS, TotalCPU as MM:SS.mmm (src/common/parse_time.c, secs2time_str), and
 * UNLIMITED / INVALID / Partition_Limit / N/A where there is no value.
 * sbatch(1) --time accepts "minutes", "minutes:seconds",
 * "hours:minutes:seconds", "days-hours", "days-hours:minutes" and
 * "days-hours:minutes:seconds". Flux Standard Duration (RFC 23) is a
 * non-negative float with an optional unit s, m, h or d, or "inf".
 */
#ifndef EXA_DURATION_H
#define EXA_DURATION_H

#include <stddef.h>

/*
 * Parse a duration as Slurm prints it (squeue %M/%l/%L, sacct Elapsed,
 * Timelimit, TotalCPU). Leading/trailing blanks are ignored.
 * Returns 1 and sets *secs (seconds, may be fractional) for a value,
 * 0 for a "no value" token (UNLIMITED, INVALID, Partition_Limit, N/A,
 * NONE, empty), -1 when s is not a duration (*secs untouched).
 */
int slurm_duration_parse(const char *s, double *secs);

/*
 * slurm_duration_parse() without its path for the exact printed shapes
 * (H:MM:SS and the like): the same answer for every s, by the general
 * reading only. For the tests and the fuzzer that hold the two equal.
 */
int slurm_duration_parse_unfixed(const char *s, double *secs);

/*
 * Parse an sbatch --time argument (sbatch(1) semantics: a bare number is
 * minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S). "UNLIMITED"/"infinite" give
 * *secs = -1. Returns 0 or -1 on malformed input (*secs untouched).
 */
int slurm_time_arg_parse(const char *s, long long *secs);

/*
 * Parse a Flux Standard Duration ("0.057s", "1.765m", "1.667h", "1d",
 * "30" = seconds, "inf"). *secs is seconds (INFINITY for inf).
 * Returns 0, or -1 when s is not an FSD.
 */
int fsd_parse(const char *s, double *secs);

/*
 * Format secs as an FSD into buf (n bytes): seconds below 60 as "Ns",
 * below an hour as minutes, below a day as hours, else days, with at
 * most 4 significant digits and trailing zeros dropped ("1.765m").
 * Negative or non-finite secs give "inf".
 */
void fsd_format(double secs, char *buf, size_t n);

/*
 * Format whole seconds as Slurm does: "D-HH:MM:SS" when secs is a day or
 * more, else "HH:MM:SS". Negative secs give "UNLIMITED".
 */
void slurm_duration_format(long long secs, char *buf, size_t n);

#endif
