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
 * slurm_duration_parse() without its path for the exact printed shapes
 * (H:MM:SS and the like): the same answer for every s, by the general
 * reading only (out of line). slurm_duration_parse() calls it for what
 * that path does not read; the tests and the fuzzer hold the two equal.
 */
int slurm_duration_parse_unfixed(const char *s, double *secs);

/* The two digits at q as a number, or 100 when either is no digit (q[1]
 * is read only after a digit at q[0]: never past a NUL). */
static inline unsigned slurm_duration_2d(const char *q)
{
    unsigned a = (unsigned)(unsigned char)q[0] - '0', b;
    if (a >= 10)
        return 100;
    b = (unsigned)(unsigned char)q[1] - '0';
    return b < 10 ? a * 10 + b : 100;
}

/*
 * The exact shapes Slurm's secs2time_str prints for nearly every job,
 * M:SS, MM:SS, H:MM:SS, HH:MM:SS and D-HH:MM:SS with one- or two-digit
 * days and hours, nothing around them: their seconds, 1, inline, without
 * a call (three per squeue row). 0 for anything else
 * (blanks, longer fields, a minute or second over 59):
 * slurm_duration_parse_unfixed() then reads it, with the same answer for every
 * string read here.
 */
static inline int slurm_duration_fixed(const char *q, double *secs)
{
    unsigned d0 = (unsigned)(unsigned char)q[0] - '0', d1, x, y, z;
    unsigned days = 0;
    int dash = 0;
    if (d0 >= 10)
        return 0;
    d1 = (unsigned)(unsigned char)q[1] - '0';
    x = d1 < 10 ? d0 * 10 + d1 : d0;
    q += d1 < 10 ? 2 : 1;
    if (*q == '-') { /* days, then the hours as x */
        days = x;
        dash = 1;
        d0 = (unsigned)(unsigned char)q[1] - '0';
        if (d0 >= 10)
            return 0;
        d1 = (unsigned)(unsigned char)q[2] - '0';
        x = d1 < 10 ? d0 * 10 + d1 : d0;
        q += d1 < 10 ? 3 : 2;
    }
    if (*q != ':' || (y = slurm_duration_2d(q + 1)) > 59)
        return 0;
    q += 3;
    if (!*q && !dash) { /* M:SS */
        *secs = (double)(x * 60 + y);
        return 1;
    }
    if (*q != ':' || (z = slurm_duration_2d(q + 1)) > 59 || q[3])
        return 0;
    *secs = (double)days * 86400 + (double)(x * 3600 + y * 60 + z);
    return 1;
}

/*
 * Parse a duration as Slurm prints it (squeue %M/%l/%L, sacct Elapsed,
 * Timelimit, TotalCPU). Leading/trailing blanks are ignored.
 * Returns 1 and sets *secs (seconds, may be fractional) for a value,
 * 0 for a "no value" token (UNLIMITED, INVALID, Partition_Limit, N/A,
 * NONE, empty), -1 when s is not a duration (*secs untouched). Inline:
 * the printed shapes are read without a call.
 */
static inline int slurm_duration_parse(const char *s, double *secs)
{
    if (s && slurm_duration_fixed(s, secs))
        return 1;
    return slurm_duration_parse_unfixed(s, secs);
}

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
