/*
 * cmd.h - what every `exa` command file shares: the command table types,
 * the invocation context (global flags) and the output helpers.
 *
 * A group file (hpc.c, pipeline.c, ...) defines one `struct exa_group`
 * whose command table drives dispatch, help and "did you mean". Command
 * functions return the process exit status (doc/exit-codes.md) and print
 * only through the helpers below, so --json mode always prints exactly one
 * JSON document on stdout.
 */
#ifndef EXA_CMD_H
#define EXA_CMD_H

#include <jansson.h>
#include <stdio.h>

#include "libutil/error.h"

enum out_mode { OUT_TABLE = 0, OUT_JSON };

struct exa_ctx {
    enum out_mode out; /* -o table|json, --json */
    int quiet;         /* -q: no info/hint lines */
    int verbose;       /* -v: detail lines */
    int yes;           /* -y: answer yes to prompts */
    int tty;           /* stdout is a terminal (and not json) */
    int emitted;       /* a JSON document was already printed */
    const char *prog;  /* "exa hpc jobs", for messages */
};

/*
 * A command: argv[0] is the command name; options follow. getopt_long may
 * be used (set optind = 0 first). Returns the exit status.
 */
typedef int (*exa_cmd_f)(struct exa_ctx *ctx, int argc, char **argv);

struct exa_cmd {
    const char *name;
    exa_cmd_f fn;
    const char *usage;   /* "JOBID... [--cluster NAME]" */
    const char *summary; /* one line for the group help */
    const char *help;    /* longer text for `--help`, or NULL */
};

struct exa_group {
    const char *name;
    const char *summary;
    const struct exa_cmd *cmds; /* terminated by { NULL } */
};

/* ---- output helpers (output.c) ---- */

/* Print doc (stolen reference) as the single JSON document on stdout. */
void out_json(struct exa_ctx *ctx, json_t *doc);

struct jsonw;
/* End w, a document streamed to stdout (libutil/jsonw.h) in out_json's
 * place: marks it emitted and reports a failed write as out_json does. */
void out_jsonw_finish(struct exa_ctx *ctx, struct jsonw *w);

/*
 * Report a failure and return its exit status. In JSON mode prints
 * {"error": text, "exit_code": N, "hint": hint} on stdout; otherwise
 * "exa: error: text" (and "hint: ...") on stderr. hint may be NULL.
 */
int out_error(struct exa_ctx *ctx, const exa_error_t *err, const char *hint);
/* Like out_error with a code and formatted text. */
int out_errorf(struct exa_ctx *ctx, enum exa_errc code, const char *hint,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Usage error (exit 2) naming the command's usage line. */
int out_usage(struct exa_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Informational line on stdout; silent in JSON and quiet modes. */
void out_info(struct exa_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Detail line, only with --verbose and never in JSON mode. */
void out_detail(struct exa_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Warning on stderr (also in JSON mode: stdout stays one document). */
void out_warn(struct exa_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Ask a yes/no question on the terminal. Returns 1 for yes. --yes answers
 * yes; with no terminal on stdin (or in JSON mode without --yes) it
 * answers no, so nothing is approved by accident.
 */
int out_confirm(struct exa_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * A table: columns by display name. In table mode prints aligned text and
 * the caption "N item(s)"; in JSON mode prints a list of objects keyed by
 * the column names (the reference's shape) unless the caller prints its
 * own document instead.
 */
struct out_table;
struct out_table *out_table_create(const char *const *columns);
/* Add a row; values[i] may be NULL (printed "-", JSON null). Copied. */
void out_table_row(struct out_table *t, const char *const *values);
/* Print (table mode) or emit as JSON; destroys t. */
void out_table_print(struct exa_ctx *ctx, struct out_table *t);
/* Free t without printing (error paths); NULL is accepted. */
void out_table_destroy(struct out_table *t);

/*
 * For a command that takes no arguments (argv[0] is its name): 0 when
 * argc is 1, else a usage error (printed; returns 2) calling argv[1] an
 * unknown option when it starts with '-', an unexpected argument if not.
 */
int cmd_no_args(struct exa_ctx *ctx, int argc, char **argv);

/* Parse a non-negative integer option value or fail with a usage error. */
int cmd_parse_uint(struct exa_ctx *ctx, const char *opt, const char *s,
                   long long *out);

/*
 * The hint for an EXA_ENOTAPPROVED error about cluster name, into buf: a
 * REJECTED cluster (err's text says "is REJECTED") needs a new connect
 * before an approval can work, so the hint says that; otherwise "a
 * sysadmin approves it: exa hpc approve NAME". Returns buf.
 */
const char *cmd_not_approved_hint(const exa_error_t *err, const char *name,
                                  char *buf, size_t len);

/* Print the help of one command (used by groups for --help). */
void cmd_print_help(const char *group, const struct exa_cmd *cmd, FILE *fp);

#endif
