/*
 * transport.h - how exa runs a command on a cluster: the `struct transport`
 * vtable and its three implementations.
 *
 *   local  fork/execvp on this machine (never a shell); put/get copy files
 *   ssh    the system OpenSSH client with BatchMode, StrictHostKeyChecking=yes
 *          against a known_hosts file exa names, and one ControlMaster
 *          connection reused by every command (ControlPersist=60); the remote
 *          command is the argv shell-quoted by shquote_argv(); put/get stream
 *          bytes through `cat` over the same connection
 *   fake   tests and benches: argv glob -> fixture output, a call log, and
 *          fault injection (fail the Nth call, drop the Nth reply, delays)
 *
 * A transport never interprets command output; a non-zero exit status is a
 * result, not a transport error. Transport errors (EXA_ETRANSPORT: cannot
 * start, connection refused, host key; EXA_ETIMEOUT: the per-command cap)
 * are the only -1 returns of transport_run().
 */
#ifndef EXA_TRANSPORT_H
#define EXA_TRANSPORT_H

#include <stddef.h>

#include "libutil/error.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"

/* Seconds the ssh transport's ControlMaster outlives its last command
 * (ControlPersist). */
#define TRANSPORT_SSH_PERSIST_S 60

/* Default per-command cap in seconds (EXAMLOPS_SLURM_CMD_TIMEOUT). */
#define TRANSPORT_DEFAULT_TIMEOUT_S 30.0
/* Per-stream output cap of one command (bytes). */
#define TRANSPORT_MAX_OUTPUT ((size_t)256 << 20)

struct transport_result {
    int rc;            /* exit status 0..255, or -1 when killed by a signal */
    int signal;        /* terminating signal, else 0 */
    struct strbuf out; /* stdout bytes */
    struct strbuf err; /* stderr bytes */
};
#define TRANSPORT_RESULT_INIT                                                  \
    {                                                                          \
        -1, 0, STRBUF_INIT, STRBUF_INIT                                        \
    }
/* Free res's buffers and reset it to TRANSPORT_RESULT_INIT, so a result
 * may be reused for the next transport_run(). */
void transport_result_release(struct transport_result *res);

struct transport;

struct transport_ops {
    const char *kind; /* "local", "ssh", "fake" */
    int (*run)(struct transport *t, const char *const *argv,
               const char *stdin_data, size_t stdin_len, double timeout_s,
               struct transport_result *res, exa_error_t *err);
    int (*put)(struct transport *t, const char *local_path,
               const char *remote_path, exa_error_t *err);
    int (*get)(struct transport *t, const char *remote_path,
               const char *local_path, exa_error_t *err);
    void (*close)(struct transport *t);
};

struct transport_progress;

struct transport {
    const struct transport_ops *ops;
    char *desc;       /* "local", "ssh alice@login1:22": for messages */
    char *host;       /* host name used in messages ("localhost" for local) */
    double timeout_s; /* default per-command cap */
    void *priv;
    /* set by transport_put for the length of one reported copy, else NULL;
     * a put op passes the bytes it has sent to transport_progress_done() */
    struct transport_progress *progress;
    /* transport_defer_sync(): local puts whose fsync waits for the next
     * command (done while it runs) or for transport_sync_pending() */
    int defer_sync;
    char **sync_paths;
    size_t sync_nr, sync_alloc;
    int sync_errno;      /* errno of the first deferred fsync that failed */
    char *sync_err_path; /* its file */
};

/*
 * The progress of one copy. transport_put reports a put of at least
 * TRANSPORT_PROGRESS_MIN bytes when log_status_enabled() (stderr is a
 * terminal, or -v): while it runs, a line on stderr at each further 10 %
 * or after 2 s without one (bytes, percent, rate, ETA), and when it ends
 * a summary (bytes, seconds, rate). The caller's own summary is for the
 * other cases (a pipe, no -v).
 */
#define TRANSPORT_PROGRESS_MIN (1024 * 1024)
#define TRANSPORT_PROGRESS_PERIOD_S 2.0

struct transport_progress {
    char label[512];          /* "put 'A' to 'B' on ssh alice@h:22" */
    unsigned long long total; /* bytes of the copy */
    double t0, last_t;        /* start, last line (seconds, monotonic) */
    int last_step;            /* the last 10 % step reported (0..10) */
    int lines;                /* lines written so far */
};

/* Start p for a copy of total bytes at time now (seconds); label is
 * copied (cut to fit). */
void transport_progress_begin(struct transport_progress *p, const char *label,
                              unsigned long long total, double now);
/*
 * Whether a progress line is due with done bytes sent at time now: at a
 * 10 % step not yet reported or TRANSPORT_PROGRESS_PERIOD_S after the last
 * line, never at done >= total (the end has its summary). When due,
 * writes "LABEL: D of T MB (P%), R MB/s, ETA S s" (MB = 10^6 bytes) into
 * buf (len bytes), counts it and returns 1; else 0.
 */
int transport_progress_line(struct transport_progress *p,
                            unsigned long long done, double now, char *buf,
                            size_t len);
/* The summary at time now: "LABEL: T MB in S s, R MB/s" into buf. */
void transport_progress_summary(const struct transport_progress *p, double now,
                                char *buf, size_t len);
/* For put ops: done bytes sent so far; writes a due line with
 * log_status(). A no-op when t->progress is NULL. */
void transport_progress_done(struct transport *t, unsigned long long done);

/*
 * Run argv (NULL-terminated) on the target with stdin bytes (may be NULL),
 * killing it after timeout_s seconds (<= 0: t->timeout_s). Returns 0 when
 * the command ran (res->rc holds its status, 0 or not), -1 on a transport
 * failure or timeout with err filled (the message names the host).
 * res must be TRANSPORT_RESULT_INIT; the caller releases it.
 */
int transport_run(struct transport *t, const char *const *argv,
                  const char *stdin_data, size_t stdin_len, double timeout_s,
                  struct transport_result *res, exa_error_t *err);

/*
 * Like transport_run, and also fails (EXA_ESCHED) when the command exits
 * non-zero: "'sbatch' on 'login1' exited 1: <first stderr line>".
 */
int transport_run_ok(struct transport *t, const char *const *argv,
                     const char *stdin_data, size_t stdin_len,
                     struct transport_result *res, exa_error_t *err);

/*
 * The EXA_ESCHED error for a command that ran and exited non-zero (res of
 * transport_run of argv): "'squeue' on 'login1' exited 1: <first line of
 * stderr, else stdout>" (or "killed by signal N"). Always returns -1.
 */
int transport_exit_error(const struct transport *t, const char *const *argv,
                         const struct transport_result *res, exa_error_t *err);

/*
 * Copy local_path to remote_path through a temporary file and a rename.
 * The copy is private: missing parent directories are created 0700 and
 * the file keeps only the owner's bits of the local mode (0644 -> 0600,
 * 0755 -> 0700), from its first byte (ssh: under umask 077). -v traces it
 * (doc/verbose.md); a large one reports its progress (transport_progress
 * below). Over ssh the copy may take t->timeout_s plus one second per
 * TRANSPORT_PUT_MIN_RATE bytes. 0 or -1 with err.
 */
#define TRANSPORT_PUT_MIN_RATE 1e6 /* bytes per second */
int transport_put(struct transport *t, const char *local_path,
                  const char *remote_path, exa_error_t *err);
/*
 * Defer the fsync of local puts (on = 1) or stop deferring (on = 0; what
 * is pending stays pending). While deferred, a local put writes its file
 * through a temp file and rename as always but does not wait for it to
 * reach the disk; the next command run on t fsyncs the pending files
 * while its child runs (subprocess on_spawn), so a submission's staged
 * files are made durable during sbatch instead of before it. The files
 * are durable once transport_sync_pending() returns 0; until then a crash
 * of this machine may leave a file at its name with part of its bytes
 * (gate_submit records no job before the sync said 0, as a job submitted
 * just before a crash goes unrecorded either way). Puts over ssh are not
 * affected (the remote side writes them).
 */
void transport_defer_sync(struct transport *t, int on);
/*
 * fsync every file a deferred put left pending (those the last command
 * did not already) and forget them. Returns 0, or -1 with err
 * (EXA_ECONFIG) naming the first file that could not be made durable.
 */
int transport_sync_pending(struct transport *t, exa_error_t *err);

/* Copy remote_path to local_path. 0 or -1 with err (ENOTFOUND if absent). */
int transport_get(struct transport *t, const char *remote_path,
                  const char *local_path, exa_error_t *err);
/* Close connections and free t. NULL is accepted. */
void transport_close(struct transport *t);
/* Human description ("ssh alice@login1:2222"); borrowed. */
const char *transport_describe(const struct transport *t);

/* ---- local ---- */
/* New local transport (never fails); host "localhost", timeout
 * TRANSPORT_DEFAULT_TIMEOUT_S. Free with transport_close(). */
struct transport *transport_local_new(void);

/* ---- ssh ---- */
struct ssh_config {
    const char *host; /* required */
    const char *user; /* NULL: ssh's default */
    const char *key;  /* identity file path, or NULL */
    int port;         /* 0: 22 */
    const char
        *known_hosts; /* NULL:
                         ${XDG_CONFIG_HOME:-~/.config}/examlops/known_hosts */
    const char
        *control_dir; /* NULL: /tmp/exa-<uid> (short: sun_path is 108 bytes) */
    const char *ssh_program; /* NULL: "ssh" (tests may point at a wrapper) */
};
/* New ssh transport; NULL with err when host is missing or the control
 * directory cannot be made private. Nothing connects until the first run. */
struct transport *transport_ssh_new(const struct ssh_config *cfg,
                                    exa_error_t *err);
/*
 * The ssh argv prefix used for every command (exposed for tests and the
 * bench): ssh -o BatchMode=yes ... [-p PORT] [-i KEY] [-l USER] HOST.
 */
void transport_ssh_base_argv(struct transport *t, struct strvec *argv);
/* Default known_hosts path (malloc'ed). */
char *transport_ssh_default_known_hosts(void);

/* ---- fake ---- */
struct transport_fake_call; /* opaque */
/*
 * A dynamic reply: fill res from argv/stdin and return 0, or return -1 with
 * err for a transport failure. Used when fixtures depend on the ids asked.
 */
typedef int (*fake_handler_f)(void *arg, const char *const *argv,
                              const char *stdin_data, size_t stdin_len,
                              struct transport_result *res, exa_error_t *err);

/* New fake transport with no rules (every command exits 127); host
 * "fake". Free with transport_close(). */
struct transport *transport_fake_new(void);
/*
 * Add a rule: the first rule whose fnmatch(3) glob matches the argv joined
 * by single spaces answers with out/err/rc after delay_s seconds (a delay
 * beyond the timeout reports a timeout after sleeping the timeout).
 * times > 0 limits how many calls the rule answers (then it is skipped);
 * 0 means unlimited. Strings are copied. Unmatched commands exit 127 with
 * "fake: no rule for '<cmd>'" on stderr.
 */
void transport_fake_add(struct transport *t, const char *glob, const char *out,
                        const char *err_text, int rc, double delay_s,
                        int times);
/* Like transport_fake_add with stdout read from a fixture file. Returns -1
 * when the file cannot be read. */
int transport_fake_add_file(struct transport *t, const char *glob,
                            const char *out_path, int rc, int times);
/* A rule answered by handler(arg, ...). */
void transport_fake_add_handler(struct transport *t, const char *glob,
                                fake_handler_f handler, void *arg, int times);
/* Call n (1-based, counted over run/put/get) fails with EXA_ETRANSPORT
 * without running; 0 disables. */
void transport_fake_fail_nth(struct transport *t, int n);
/* Call n runs (the rule answers and counts) but its reply is lost: the
 * caller gets EXA_ETRANSPORT "connection to 'fake' lost". */
void transport_fake_drop_nth(struct transport *t, int n);
/* Number of calls so far, and how many matched glob (joined argv). */
size_t transport_fake_ncalls(struct transport *t);
size_t transport_fake_count(struct transport *t, const char *glob);
/* Joined argv of call i (0-based), or NULL; borrowed. */
const char *transport_fake_call(struct transport *t, size_t i);
/* Bytes the fake holds for a remote path after put (NULL if none);
 * borrowed. get of a path answers from here, else from a rule "get PATH". */
const struct strbuf *transport_fake_file(struct transport *t, const char *path);
void transport_fake_set_file(struct transport *t, const char *path,
                             const char *data, size_t len);

/* ---- selection from the environment ---- */
/*
 * Build the transport the environment asks for: EXAMLOPS_HPC_TRANSPORT
 * (local | ssh; default: local when target_is_local(NULL, HOST), i.e.
 * EXAMLOPS_HPC_SSH_HOST unset, empty, "local" or "localhost", else ssh),
 * EXAMLOPS_HPC_SSH_{HOST,USER,KEY,PORT}, EXAMLOPS_HPC_SSH_KNOWN_HOSTS and
 * the cap EXAMLOPS_SLURM_CMD_TIMEOUT (seconds, default 30). NULL with err
 * (EXA_ECONFIG) on a bad value.
 */
struct transport *transport_from_env(exa_error_t *err);

/* Parse a positive number of seconds from env var name, else def; -1 with
 * err (EXA_ECONFIG) when set but not a positive number. */
int transport_env_seconds(const char *name, double def, double *out,
                          exa_error_t *err);

#endif
