/*
 * gres.h - count GPUs in a Slurm GRES string (sinfo %G / Gres / GresUsed,
 * squeue tres-per-node / tres-per-job) and in a TRES string (sacct
 * AllocTRES, squeue tres-alloc, scontrol TRES=).
 *
 * Rules: shared/cases/FORMAT.md "GRES strings" and "gpus" (gres.conf(5),
 * sinfo(1) %G, sacct(1) AllocTRES).
 */
#ifndef EXA_GRES_H
#define EXA_GRES_H

#include <stddef.h>

struct gres_info {
    long long gpus;   /* sum of counts of entries named exactly "gpu" */
    char types[256];  /* distinct GPU types joined by ',' in order; "" if none */
    int entries;      /* well-formed entries seen (any name) */
};

/*
 * Parse a GRES string: entries split on commas outside parentheses, a
 * trailing "(...)" dropped, an optional leading "gres/" or "gres:" dropped,
 * forms name:N, name:TYPE:N, name:TYPE:no_consume:N; an entry whose last
 * field is not an integer is ignored (a truncated column). "(null)",
 * "N/A" and "" give zero entries. Always succeeds; fills *out.
 */
void gres_parse(const char *s, struct gres_info *out);

/*
 * GPU count of a TRES string "billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1":
 * the untyped gres/gpu=N when present, else the sum of typed
 * gres/gpu:TYPE=N, else 0. Returns 1 with *gpus set, or 0 when there is no
 * value: s is NULL, empty, "N/A", "(null)", or truncated (an entry without
 * '=', a non-integer gpu count, or a trailing '+').
 */
int tres_gpus(const char *s, long long *gpus);

#endif
