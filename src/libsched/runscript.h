/*
 * runscript.h - the scheduler-neutral run.sh every exa job executes.
 *
 * No #SBATCH or #flux: lines: resources travel as command-line flags, so
 * the same script serves `sbatch` and `flux batch` (doc/reference.md
 * §4.10). The script is bash with `set -euo pipefail`; every value is
 * shell-quoted by shquote(); the payload replaces the shell via `exec`.
 * Logs are not the script's business: the submit command directs them to
 * <remote_dir>/<jobid>.out|err (runscript_log_pattern()).
 */
#ifndef EXA_RUNSCRIPT_H
#define EXA_RUNSCRIPT_H

#include "libutil/error.h"
#include "libutil/strbuf.h"

struct runscript {
    const char *title;       /* comment line; may be NULL */
    const char *remote_dir;  /* `cd` here first (made if missing) */
    const char *const *env;  /* "NAME=VALUE" exports; may be NULL */
    const char *const *argv; /* payload, NULL-terminated, non-empty */
};

/*
 * Append the script text to out. -1 with err (EXA_EUSAGE) when argv is
 * empty or an env entry is not NAME=VALUE with NAME [A-Za-z_][A-Za-z0-9_]*.
 */
int runscript_render(const struct runscript *rs, struct strbuf *out,
                     exa_error_t *err);

/* Write text (NUL-terminated) to the local path with mode 0700 (temp file,
 * then rename: never half-written). Not fsync()ed: path is a local
 * staging copy in a temporary directory, and transport_put() makes the
 * copy the scheduler reads durable where it lands (an fsync here was
 * 0.4-0.6 ms of every `exa hpc submit`). 0, or -1 with err (EXA_ECONFIG
 * naming the path and the errno text). */
int runscript_write(const char *path, const char *text, exa_error_t *err);

/*
 * The --output/--error value for sched ("slurm", else Flux): Slurm
 * "<dir with % doubled>/%j.<ext>" (sbatch(1) "filename pattern"), Flux
 * "<dir>/{{id}}.<ext>" (flux-submit(1) mustache templates). ext: "out" or
 * "err". malloc'ed; the caller frees.
 */
char *runscript_log_pattern(const char *sched, const char *remote_dir,
                            const char *ext);

#endif
