/*
 * subprocess.h - run one program from an argv, never through a shell.
 *
 * Every scheduler and transport command exa runs goes through
 * subprocess_run(): the child gets its own process group, stdin bytes are
 * fed from memory, stdout and stderr are captured into strbufs with a size
 * cap per stream, and a wall-clock cap ends the whole process group
 * (SIGTERM, then SIGKILL after a grace period). Output of remote tools is
 * untrusted, so the cap is mandatory (a default applies when 0).
 *
 * Runs may overlap on several threads (the exporter runs sinfo and squeue
 * at the same time; `exa serve` runs API commands beside its collector):
 * every descriptor is close-on-exec, each run waits on its own child, the
 * SIGCHLD handler that wakes the runs is installed once (pthread_once)
 * and stays, and SIGPIPE is ignored while any run is under way (a count
 * under a lock; the first saves the disposition, the last restores it).
 */
#ifndef EXA_SUBPROCESS_H
#define EXA_SUBPROCESS_H

#include <stddef.h>

#include "libutil/error.h"
#include "libutil/strbuf.h"

/* Default per-stream output cap: 64 MiB. */
#define SUBPROCESS_DEFAULT_MAX_OUTPUT ((size_t)64 << 20)
/* Seconds between SIGTERM and SIGKILL when the timeout expires. */
#define SUBPROCESS_KILL_GRACE_S 2.0

struct subprocess_opts {
    /* "NAME=VALUE" strings added to (or replacing in) the child's
     * environment; NULL-terminated; NULL for none. */
    const char *const *env;
    /* Bytes written to the child's stdin, then stdin is closed. NULL with
     * len 0: the child's stdin is /dev/null. */
    const char *stdin_data;
    size_t stdin_len;
    /* Wall-clock cap in seconds; <= 0 means no cap. */
    double timeout_s;
    /* Per-stream cap in bytes; 0 means SUBPROCESS_DEFAULT_MAX_OUTPUT. */
    size_t max_output;
    /* Working directory of the child, or NULL for the current one. */
    const char *cwd;
    /* Called in the caller's thread after each write to the child's
     * stdin with the bytes of stdin_data written so far (a copy's
     * progress, libtransport); NULL for none. */
    void (*on_stdin)(void *arg, size_t written);
    void *on_stdin_arg;
    /* Called once in the caller's thread right after the child has been
     * started (its exec done), before any of its output is read:
     * work the caller can do while the child runs (libtransport's
     * deferred fsyncs overlap sbatch this way). The child's output waits
     * in its pipes meanwhile. NULL for none. */
    void (*on_spawn)(void *arg);
    void *on_spawn_arg;
};

struct subprocess_result {
    int exit_code; /* 0..255 when the child exited, else -1 */
    int signal;    /* terminating signal number, else 0 */
    int timed_out; /* 1 when the timeout killed it */
    int truncated; /* 1 when an output cap killed it */
    double elapsed_s;
    /* poll() calls the run made: about one per chunk of output plus one
     * for the exit, however long the child ran (no periodic tick) */
    unsigned wakeups;
    struct strbuf out; /* captured stdout (may hold NUL bytes) */
    struct strbuf err; /* captured stderr */
};

#define SUBPROCESS_RESULT_INIT                                                 \
    {                                                                          \
        -1, 0, 0, 0, 0.0, 0, STRBUF_INIT, STRBUF_INIT                          \
    }

/*
 * Run argv[0] (looked up on PATH by posix_spawnp(3)) with argv
 * (NULL-terminated).
 * opts may be NULL (no env, no stdin, no timeout, default cap).
 *
 * Returns 0 when the program ran to an exit or a signal of its own: res
 * then holds exit_code or signal and the output. Returns -1 with err
 * filled when it could not be started (EXA_ETRANSPORT, "cannot run
 * 'prog': No such file or directory"), when the timeout expired
 * (EXA_ETIMEOUT, "'prog' timed out after 30 s", res->timed_out = 1) or
 * when an output cap was passed (EXA_ETRANSPORT, "'prog' wrote more than
 * N bytes on stdout", res->truncated = 1); the output read so far stays
 * in res. res must be SUBPROCESS_RESULT_INIT or released; the caller
 * releases it with subprocess_result_release().
 */
int subprocess_run(const char *const *argv, const struct subprocess_opts *opts,
                   struct subprocess_result *res, exa_error_t *err);

/* Release the strbufs of res and reset it to SUBPROCESS_RESULT_INIT. */
void subprocess_result_release(struct subprocess_result *res);

/*
 * How a run learns that its child exited. on = 1 (the default): a pidfd
 * (pidfd_open(2), Linux >= 5.3), with the SIGCHLD fallback where the
 * kernel refuses it. on = 0: always the fallback, a SIGCHLD handler
 * (installed once per process, SA_RESTART, chaining to the handler it
 * replaced) that writes to a per-run self-pipe in the poll set. Both wake
 * the run at the child's exit. Tests use 0 to cover the fallback.
 */
void subprocess_use_pidfd(int on);

/* Monotonic clock in seconds (CLOCK_MONOTONIC). */
double subprocess_now(void);

#endif
