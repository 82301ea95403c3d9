/*
 * hpc_fleet_int.h - private helpers of the `exa hpc` fleet commands
 * (hpc_discover.c, hpc_govern.c, hpc_place.c), defined in
 * hpc_fleet_common.c. Not for other commands: the public entry points are
 * in hpc_fleet.h.
 */
#ifndef EXA_HPC_FLEET_INT_H
#define EXA_HPC_FLEET_INT_H

#include <getopt.h>
#include <jansson.h>

#include "cmd/cmd.h"
#include "libstore/store.h"
#include "libutil/error.h"

/* Print msg as "✓ msg" in text mode (nothing with --quiet), or
 * {"ok": true, "message": msg} in JSON mode. */
void out_ok(struct exa_ctx *ctx, const char *msg);

/*
 * Resolve the clusters.yaml path into *regpath (caller frees) and open the
 * default store into *st. Returns 0, or the exit status after printing the
 * error (then *regpath is NULL, *st untouched). Release with close_fleet().
 */
int open_fleet(struct exa_ctx *ctx, store_t **st, char **regpath);

/* Close st and free regpath, as opened by open_fleet(). */
void close_fleet(store_t *st, char *regpath);

/* getopt_long(argc, argv, shortopts, longopts, NULL). Callers set
 * optind = 0 and opterr = 0 before the first call. */
int next_opt(int argc, char **argv, const char *shortopts,
             const struct option *longopts);

/* Print a usage error naming argv[optind - 1] (the option getopt just
 * refused); returns the usage exit status (2). */
int bad_option(struct exa_ctx *ctx, int argc, char **argv);

/* Parse s, the value of option opt, as an integer in 0..1000000 into *out.
 * Returns 0, or the usage exit status after printing the error. */
int parse_int_opt(struct exa_ctx *ctx, const char *opt, const char *s,
                  int *out);

/* The JSON document text (a cluster's stored capabilities) parsed; JSON
 * null when text is NULL or not JSON. Caller owns the reference. */
json_t *caps_json(const char *text);

#endif
