/*
 * parse.h - overflow-checked number parsing for everything exa reads from
 * a scheduler or a tool (squeue, sacct, sinfo, scontrol, sbatch, flux,
 * nvidia-smi): the one place where digits become integers.
 *
 * Cursor style (doc/style.md "Strings and memory"): a parser reads at
 * *cur, never past end, and advances *cur only on success; on failure it
 * returns -1 and leaves *cur and the out-parameter untouched. Nothing here
 * skips blanks, accepts a '+' sign, reads hex or octal, or depends on the
 * locale or errno: a number is exactly what Slurm and Flux print, and the
 * caller decides what may surround it. The *_span and *_str forms require
 * the whole span (or NUL-terminated string) to be the number.
 *
 * Overflow policy (one for the whole product): a value that does not fit
 * its type is not a number (-1), and a sum of counts that would overflow
 * fails (count_add returns -1, the accumulator untouched); callers report
 * such a count as unknown (-1 / JSON null), never wrapped, never clamped.
 */
#ifndef EXA_PARSE_H
#define EXA_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Unsigned decimal: one or more ASCII digits, value <= UINT64_MAX.
 * Reads the longest run of digits at *cur (leading zeros allowed); a run
 * whose value overflows fails as a whole. Returns 0 with *out set and
 * *cur past the digits, or -1 (no digit at *cur, overflow).
 */
int parse_u64(const char **cur, const char *end, uint64_t *out);

/*
 * Signed decimal: an optional '-' then digits, INT64_MIN..INT64_MAX
 * ("-0" is 0). '+' is not accepted (no scheduler prints it). Returns 0
 * with *out set and *cur advanced, or -1 ("", "-", "+1", overflow).
 */
int parse_i64(const char **cur, const char *end, int64_t *out);

/*
 * Non-negative count: like parse_i64 without a sign, 0..INT64_MAX, so the
 * result fits a long long. Returns 0 or -1 (no digit, > INT64_MAX).
 */
int parse_count(const char **cur, const char *end, int64_t *out);

/* The whole of s[0..len) is the number (no blanks). 0, or -1. */
int parse_u64_span(const char *s, size_t len, uint64_t *out);
int parse_i64_span(const char *s, size_t len, int64_t *out);
int parse_count_span(const char *s, size_t len, int64_t *out);

/* The whole NUL-terminated s is the number (s may be NULL: -1). */
int parse_u64_str(const char *s, uint64_t *out);
int parse_i64_str(const char *s, int64_t *out);
int parse_count_str(const char *s, int64_t *out);

/* Same for a count into an int (0..INT_MAX), e.g. an exit code or
 * signal number; -1 past INT_MAX. */
int parse_int_str(const char *s, int *out);

/*
 * A size as Slurm prints memory (sinfo %m, sacct ReqMem/MaxRSS, TRES
 * mem=): digits, an optional fraction ".DD", an optional suffix K, M, G,
 * T, P or E (either case; powers of 1024, Slurm's convert_num_unit),
 * without a suffix in units of default_unit bytes (Slurm: MiB, 1 << 20).
 * The result is in bytes, the fraction truncated to a whole byte:
 * "3.91G" is 4198330531 bytes. Returns 0 with *bytes set and *cur past the
 * suffix, or -1 (no digit, a '.' without digits, default_unit 0, or more
 * than UINT64_MAX bytes: "16E", "20000000T").
 */
int parse_size(const char **cur, const char *end, uint64_t default_unit,
               uint64_t *bytes);

/* parse_size over the whole NUL-terminated s. */
int parse_size_str(const char *s, uint64_t default_unit, uint64_t *bytes);

/*
 * A finite decimal real as tools print it: optional '-', digits, optional
 * '.' and digits (at least one digit in all), optional exponent e[+-]N;
 * no "inf", "nan", hex or leading '+'. At most 63 bytes. Returns 0 with
 * *out set and *cur advanced, or -1 (not that grammar, not finite).
 */
int parse_real(const char **cur, const char *end, double *out);

/* parse_real over the whole NUL-terminated s. */
int parse_real_str(const char *s, double *out);

/*
 * *acc += v for non-negative counts without signed overflow. Returns 0,
 * or -1 when v < 0, *acc < 0 or the sum exceeds INT64_MAX (*acc
 * untouched): the caller then treats the total as unknown.
 */
int count_add(int64_t *acc, int64_t v);

/* *acc *= v, same contract as count_add (both non-negative). */
int count_mul(int64_t *acc, int64_t v);

/*
 * Match the single byte c at *cur: 0 and advance, or -1. Handy between
 * numbers ("N:S" exit codes, "lo-hi" ranges).
 */
int parse_char(const char **cur, const char *end, char c);

#endif
