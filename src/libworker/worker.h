/*
 * worker.h - `exa worker`: the dial-back worker (shared/WORKERS.md §6.4).
 *
 * It registers with a join token (handed over in memory: the front end
 * reads it from stdin), keeps the session token in memory only,
 * long-polls for leases, runs each task under a shim in its own session
 * and process group (the shim dies with the worker and takes the task
 * with it), uploads the task's outputs with their SHA-256, reports
 * results until the engine has them, heartbeats from its own thread,
 * drains on SIGUSR1 (Slurm's --signal) and SIGTERM, and exits after
 * max_idle_s without work. It opens no port.
 */
#ifndef EXA_WORKER_H
#define EXA_WORKER_H

#include <stddef.h>

#include "libutil/error.h"

/* Exit statuses of worker_run (sysexits.h numbers where one fits). */
#define WORKER_EXIT_OK 0
#define WORKER_EXIT_REFUSED 1      /* the engine refused the token/session */
#define WORKER_EXIT_PROTOCOL 64    /* 426: no common protocol version */
#define WORKER_EXIT_ENGINE_LOST 75 /* EX_TEMPFAIL: engine away too long */

typedef void (*worker_log_f)(void *ctx, const char *line);

struct worker_opts {
    const char *url;       /* "http://127.0.0.1:8765" (no trailing /) */
    const char *pin;       /* "sha256//BASE64" for CURLOPT_PINNEDPUBLICKEY */
    const char *worker_id; /* a name */
    char *join_token;      /* owned by the caller; cleansed after use */
    long long cpus, gpus, ram_mb, capacity;
    const char *labels;              /* comma list or NULL */
    double walltime_s;               /* 0: unknown */
    double max_idle_s;               /* < 0: the engine's */
    double drain_s;                  /* drain this long before the walltime */
    double engine_lost_s;            /* < 0: the engine's */
    long long protocol;              /* TP_PROTOCOL unless testing skew */
    const char *self_exe;            /* the exa binary for `exa task-shim` */
    const char *spool;               /* node-local directory for attempts */
    const char *slurm_job_id, *node; /* from the environment, or NULL */
    worker_log_f log;                /* one line per event, never a token */
    void *log_ctx;
};

/* Run until idle, drained, refused or the engine is lost; returns one of
 * the WORKER_EXIT_* statuses, with err set when not OK, or -1 with err
 * when it cannot start: libcurl is loaded here (dlopen, libworker's
 * dl_curl_int.h), and a missing one is EXA_ECONFIG naming its soname and
 * Debian package; a spool that cannot be created is EXA_ECONFIG too. */
int worker_run(struct worker_opts *o, exa_error_t *err);

/*
 * The shim (`exa task-shim PARENT_PID DIR CWD -- ARGV...`): becomes a
 * session leader and child subreaper, asks for SIGTERM when its parent
 * dies, starts ARGV in its own process group with stdout and stderr in
 * DIR/stdout and DIR/stderr (stdin /dev/null), waits for it, writes
 * "exit N" or "signal N" to DIR/status, kills what is left of the group
 * and exits. On SIGTERM it SIGKILLs the task's group first. Returns the
 * process exit status for main().
 */
int worker_shim_main(int argc, char **argv);

#endif
