/*
 * models_cost.h - `exa models cost` and `exa models cost-list`, kept out of
 * models.c so the cost view can change without touching the version
 * commands. models.c lists them in its command table.
 */
#ifndef EXA_MODELS_COST_H
#define EXA_MODELS_COST_H

#include "cmd/cmd.h"

#define MODELS_COST_USAGE "MODEL [--record] [--provider P]"
#define MODELS_COST_SUMMARY                                                    \
    "cost per model version from the GPU- and CPU-hours its job recorded"
#define MODELS_COST_HELP                                                       \
    "Lists the recorded cost rows of MODEL. --record first computes the\n"     \
    "cost of every version whose job has recorded hours and stores it,\n"      \
    "once per (version, provider): recording again changes nothing.\n"         \
    "Versions whose hours were not recorded are reported and skipped.\n"       \
    "\n"                                                                       \
    "Options:\n"                                                               \
    "  MODEL                 the model (JPCP)\n"                               \
    "  --record              compute and store the cost of every version\n"    \
    "                        first (default: only list)\n"                     \
    "  --provider, -p P      flat-rate (default) or tiered-example (alias\n"   \
    "                        tiered); else $EXAMLOPS_COST_PROVIDER\n"          \
    "\n"                                                                       \
    "Rates: GPU_COST_PER_HOUR (2.50), CPU_COST_PER_HOUR (0.05) USD/h.\n"       \
    "Formulas: doc/finops.md.\n"                                               \
    "Example: exa models cost JPCP --record --provider tiered-example"

#define MODELS_COST_LIST_USAGE ""
#define MODELS_COST_LIST_SUMMARY "total recorded cost per model and provider"

/*
 * `exa models cost MODEL [--record] [--provider P]`: argv[0] is "cost".
 * Returns the exit status: 1 when MODEL has no version or (with
 * --record) no version has recorded hours, 2 usage, 3 configuration.
 */
int cmd_models_cost(struct exa_ctx *ctx, int argc, char **argv);

/* `exa models cost-list`: argv[0] is "cost-list". Exit status. */
int cmd_models_cost_list(struct exa_ctx *ctx, int argc, char **argv);

#endif
