/*
 * docgen.h - the command tables as man pages, bash completion and help
 * topics (docgen.c). exa.c passes its group and top-level tables.
 */
#ifndef EXA_DOCGEN_H
#define EXA_DOCGEN_H

#include "cmd/cmd.h"

/*
 * `exa debug commands [--format=man|bash|clusters|list|commands]
 * [--page=P]`:
 * man: the roff of page P (exa, exa-GROUP, exa-env; default exa) on
 * stdout; bash: the completion script; clusters: the names of
 * clusters.yaml and platform.db, one a line (nothing is created); list:
 * the page file names ("exa.1", "exa-hpc.1", ..., "exa-env.7"); commands:
 * every command of the tables, "GROUP COMMAND" or a top-level "COMMAND",
 * one a line, in table order (t0428 walks their --help). groups
 * is NULL-terminated, top ends with a { NULL } entry. Returns the exit
 * status.
 */
int docgen_run(struct exa_ctx *ctx, const struct exa_group *const *groups,
               const struct exa_cmd *top, int argc, char **argv);

/* `exa help TOPIC` for a topic that is no group: "env" lists the
 * environment variables; anything else is a usage error. */
int docgen_help_topic(struct exa_ctx *ctx, const char *topic);

#endif
