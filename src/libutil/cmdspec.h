/*
 * cmdspec.h - the command line that produced a scheduler's output, read
 * as part of that output: which columns it printed, in which order, how
 * wide, with which separator, whether a header was printed, and which
 * state its filter implies.
 *
 * A pure function of the command text: nothing is run and no shell is
 * involved. A shell-like string is split into words the way sh would
 * (blanks, '...', "...", $'...' with \xHH, backslash escapes), and split
 * into simple commands at unquoted | || && ; & ( ) (not < >: notes
 * write placeholders as <user>), so that
 * "for i in 1 2; do nvidia-smi ...; done", "squeue | tail -n1" and a
 * trailing note "(exit status 6)" are understood. The first simple
 * command whose program is a known tool is the one read.
 *
 * Format sources: squeue(1) -o/-O/-t/-h, sinfo(1) -o/-O/-h, sacct(1)
 * --format/-o/--fields, -P/-p, --delimiter, -n; flux-jobs(1) and
 * flux-resource(1) -o/--format, -n/--no-header; nvidia-smi(1)
 * --query-gpu, --format=csv[,noheader][,nounits].
 */
#ifndef EXA_CMDSPEC_H
#define EXA_CMDSPEC_H

#include <stddef.h>

#include "libutil/error.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"

enum cmd_tool {
    CMD_TOOL_NONE = 0,
    CMD_TOOL_SQUEUE,
    CMD_TOOL_SACCT,
    CMD_TOOL_SINFO,
    CMD_TOOL_FLUX_JOBS,
    CMD_TOOL_FLUX_RESOURCE,
    CMD_TOOL_NVIDIA_SMI,
};

struct cmd_column {
    /*
     * The column's name as the tool prints it in its header: Slurm tools
     * upper case ("JOBID", "TRES_PER_NODE", "CPUS(A/I/O/T)", sacct
     * "ALLOCTRES"), Flux the header word ("JOBID", "QUEUE"), nvidia-smi
     * the query field as given ("memory.total"). Owned by the spec.
     */
    char *name;
    size_t width; /* printed width in bytes, values cut and padded to it
                   * (squeue/sinfo -O default 20, "%.10T", sacct "%25");
                   * 0: printed at its natural length */
    char *after;  /* literal text printed after this column ("|", " ",
                   * "\x1f"; "" for none); owned by the spec */
};

struct cmd_spec {
    enum cmd_tool tool;
    struct cmd_column *cols; /* NULL / 0: the command names no columns
                              * (the tool's default, or unreadable) */
    size_t ncols;
    /*
     * One separator string between every pair of columns, when the
     * command sets one that is not blank (sacct -P "|", --delimiter=X,
     * squeue -o "%i|%T", -O "JobID:|,...", nvidia-smi ", "); NULL else.
     */
    char *sep;
    int sliceable;    /* rows can be cut by widths and literals alone:
                       * every column but the last is fixed width or
                       * followed by a non-blank literal */
    int noheader;     /* the command suppresses the header line */
    int trailing_sep; /* sacct -p: every line ends with the separator */
    /*
     * The state a one-state filter implies (squeue -t R, --states=PD,
     * sacct -s CD, flux jobs -f running), upper case as given ("R",
     * "RUNNING", "PD"); NULL when there is no filter, several states or
     * "all". Callers normalize it with their own state table.
     */
    char *state_filter;
    char *format; /* the format option's text as given (-o, -O,
                   * --format, --query-gpu), or NULL */
};

#define CMD_SPEC_INIT                                                          \
    {                                                                          \
        CMD_TOOL_NONE, NULL, 0, NULL, 0, 0, 0, NULL, NULL                      \
    }

/*
 * Split the shell-like string s into simple commands: *cmds receives an
 * array of *ncmds strvecs (the words of each; caller frees with
 * cmd_split_free). Quotes and escapes are removed as sh would; no
 * expansion happens ($VAR stays as written). Returns 0, or -1 with err
 * (EXA_EUSAGE) on an unterminated quote.
 */
int cmd_split(const char *s, struct strvec **cmds, size_t *ncmds,
              exa_error_t *err);
void cmd_split_free(struct strvec *cmds, size_t ncmds);

/*
 * Fill spec (initialised with CMD_SPEC_INIT) from the words of one
 * command, argv[0] the program ("squeue", "/usr/bin/sacct",
 * "nvidia-smi.exe", "flux"). An unknown program leaves spec->tool
 * CMD_TOOL_NONE. Never fails: options it cannot read are ignored.
 */
void cmd_spec_from_argv(const char *const *argv, size_t argc,
                        struct cmd_spec *spec);

/*
 * Split cmdline (cmd_split) and read the first simple command whose
 * program is a known tool, skipping VAR=value words and "env", "do",
 * "then", "time", "exec". NULL or empty cmdline gives an empty spec and
 * 0. Returns -1 with err only on an unterminated quote.
 */
int cmd_spec_from_string(const char *cmdline, struct cmd_spec *spec,
                         exa_error_t *err);

/*
 * The header line the tool would have printed for spec's columns, into
 * out (appended): the names joined by single blanks ("QUEUE NODELIST").
 * Returns 0, or -1 (out untouched) when spec names no columns.
 */
int cmd_spec_header_line(const struct cmd_spec *spec, struct strbuf *out);

/* Free what spec owns; spec is reset to CMD_SPEC_INIT. */
void cmd_spec_release(struct cmd_spec *spec);

#endif
