/*
 * subprocess.c - posix_spawnp with captured output, a time cap and a size
 * cap.
 *
 * One poll() loop feeds stdin and drains stdout and stderr, so a child that
 * writes a lot while we are still writing its input never deadlocks. The
 * child leads its own process group; on expiry the whole group gets SIGTERM
 * and, after SUBPROCESS_KILL_GRACE_S, SIGKILL, so an ssh or a shell with
 * grandchildren cannot outlive the cap. An exec failure is posix_spawnp's
 * return value, so "not found" is an error, not exit status 127.
 * SIGPIPE is ignored in the parent while stdin is written (a child that
 * exits early must not kill exa) and restored to default in the child.
 * The child's exit wakes the poll() itself (a pidfd, else a SIGCHLD
 * self-pipe), so a run ends when the child does, never on a sleep tick.
 */
#include "libutil/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libutil/xalloc.h"

extern char **environ;

double subprocess_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void subprocess_result_release(struct subprocess_result *res)
{
    strbuf_release(&res->out);
    strbuf_release(&res->err);
    res->exit_code = -1;
    res->signal = 0;
    res->timed_out = 0;
    res->truncated = 0;
    res->elapsed_s = 0.0;
    res->wakeups = 0;
}

/* New environment: environ with each "K=V" of add replacing or appended. */
static char **build_env(const char *const *add)
{
    size_t n = 0, nadd = 0, i, j;
    char **env;

    while (environ && environ[n])
        n++;
    while (add && add[nadd])
        nadd++;
    env = xcalloc(n + nadd + 1, sizeof(*env));
    for (i = 0; i < n; i++)
        env[i] = environ[i];
    for (j = 0; j < nadd; j++) {
        const char *eq = strchr(add[j], '=');
        size_t klen = eq ? (size_t)(eq - add[j]) : strlen(add[j]);
        size_t k;
        for (k = 0; k < n; k++) {
            if (!strncmp(env[k], add[j], klen) && env[k][klen] == '=')
                break;
        }
        env[k] = (char *)add[j];
        if (k == n)
            n++;
    }
    env[n] = NULL;
    return env;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/* Bytes one read asks for: a whole pipe buffer (pipe(7): 64 KiB unless
 * F_SETPIPE_SZ changed it). */
#define READ_CHUNK 65536

/*
 * One read(2) of fd straight into sb's spare room (no bounce buffer: a
 * command's output of megabytes was copied twice). Keeps at most cap
 * bytes in sb: one byte past cap is still read, so that a stream of
 * exactly cap bytes is not over, and *over then set. Returns what
 * read(2) returned.
 */
static ssize_t read_into(int fd, struct strbuf *sb, size_t cap, int *over)
{
    size_t room = sb->len < cap ? cap - sb->len : 0;
    size_t want = room < READ_CHUNK ? room + 1 : READ_CHUNK;
    ssize_t r;
    strbuf_grow(sb, want);
    r = read(fd, sb->buf + sb->len, want);
    if (r > 0) {
        size_t keep = (size_t)r < room ? (size_t)r : room;
        strbuf_setlen(sb, sb->len + keep);
        if ((size_t)r > room)
            *over = 1;
    }
    return r;
}

/* Read what fd holds now (non-blocking) into sb, up to cap. */
static void drain(int fd, struct strbuf *sb, size_t cap, int *over,
                  const char **over_stream, const char *name)
{
    ssize_t r;
    int o = 0;

    if (fd < 0)
        return;
    while ((r = read_into(fd, sb, cap, &o)) > 0) {
        if (o) {
            *over = 1;
            if (!*over_stream)
                *over_stream = name;
            return;
        }
    }
}

/* The file execvp(3) would run for name: name itself when it holds a '/',
 * else the first executable regular file NAME in a directory of $PATH
 * (default "/bin:/usr/bin"); malloc'd, or NULL when there is none. */
static char *path_lookup(const char *name)
{
    const char *path = getenv("PATH"), *p, *e;
    struct stat sb;
    if (strchr(name, '/'))
        return xstrdup(name);
    if (!path || !*path)
        path = "/bin:/usr/bin";
    for (p = path;; p = e + 1) {
        char *cand;
        e = strchr(p, ':');
        if (!e)
            e = p + strlen(p);
        cand = e > p ? xstrfmt("%.*s/%s", (int)(e - p), p, name)
                     : xstrfmt("./%s", name); /* an empty entry: "." */
        if (access(cand, X_OK) == 0 && stat(cand, &sb) == 0 &&
            S_ISREG(sb.st_mode))
            return cand;
        free(cand);
        if (!*e)
            return NULL;
    }
}

/*
 * Start argv[0] (looked up on PATH) with stdin, stdout and stderr on the
 * given descriptors, in a process group of its own, with every signal
 * unblocked and SIGPIPE at its default, in cwd (NULL: ours) and with env
 * (NULL: ours). posix_spawnp(3): glibc starts the child with
 * CLONE_VM|CLONE_VFORK, so no page table is copied however large exa is
 * (exa serve, the exporter), and an exec failure, or a chdir failure, is
 * its return value. A file the kernel will not execute (ENOEXEC: a
 * script without "#!", such as a site's wrapper for sbatch) runs under
 * /bin/sh, as execvp(3) runs it. Returns 0 with *pid set, or an errno
 * value.
 */
static int spawn_child(const char *const *argv, char **env, const char *cwd,
                       int in_fd, int out_fd, int err_fd, pid_t *pid)
{
    char *script = NULL;
    const char **shv = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, def;
    int rc;

    if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
        return rc;
    if ((rc = posix_spawnattr_init(&at)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    sigemptyset(&none);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    /* dup2 onto 0, 1 and 2 clears close-on-exec there; the pipe ends
     * themselves are close-on-exec and vanish at the exec */
    if ((rc = posix_spawn_file_actions_adddup2(&fa, in_fd, 0)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, err_fd, 2)) != 0 ||
        (cwd && (rc = posix_spawn_file_actions_addchdir_np(&fa, cwd)) != 0) ||
        (rc = posix_spawnattr_setpgroup(&at, 0)) != 0 ||
        (rc = posix_spawnattr_setsigmask(&at, &none)) != 0 ||
        (rc = posix_spawnattr_setsigdefault(&at, &def)) != 0 ||
        (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                                POSIX_SPAWN_SETSIGMASK |
                                                POSIX_SPAWN_SETSIGDEF)) != 0)
        goto out;
    rc = posix_spawnp(pid, argv[0], &fa, &at, (char *const *)argv,
                      env ? env : environ);
    if (rc == ENOEXEC && (script = path_lookup(argv[0])) != NULL) {
        size_t n = 0;
        while (argv[n])
            n++;
        shv = xcalloc(n + 2, sizeof(*shv));
        shv[0] = "/bin/sh";
        shv[1] = script;
        for (size_t i = 1; i <= n; i++)
            shv[i + 1] = argv[i];
        rc = posix_spawn(pid, "/bin/sh", &fa, &at, (char *const *)shv,
                         env ? env : environ);
    }
out:
    free(shv);
    free(script);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/*
 * Exit notification. A pidfd (pidfd_open(2), Linux 5.3) polls readable
 * when the child exits. Where the kernel has none, a SIGCHLD handler
 * writes one byte to the pipe of every run waiting in this process (the
 * self-pipe trick); each run then tries waitpid(WNOHANG) on its own child.
 * The waiter slots and their pipes are created once and never closed, so
 * the handler never writes to a descriptor that was closed and reused;
 * a stale byte only costs one spurious wake-up.
 */
#define WAKE_SLOTS 32
struct wake_slot {
    atomic_int active; /* 1 while a run owns the slot */
    atomic_int wfd;    /* write end, -1 until created */
    int rfd;           /* read end, owned by the run holding the slot */
};
static struct wake_slot wake_slots[WAKE_SLOTS];
static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static struct sigaction wake_old_chld;
static atomic_int use_pidfd = 1;

void subprocess_use_pidfd(int on)
{
    atomic_store(&use_pidfd, on ? 1 : 0);
}

static void wake_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;

    for (int i = 0; i < WAKE_SLOTS; i++) {
        int fd = atomic_load(&wake_slots[i].wfd);
        if (fd >= 0 && atomic_load(&wake_slots[i].active)) {
            if (write(fd, "", 1) < 0) {
                /* a full pipe already holds a wake-up */
            }
        }
    }
    if (wake_old_chld.sa_flags & SA_SIGINFO) {
        if (wake_old_chld.sa_sigaction)
            wake_old_chld.sa_sigaction(sig, si, uc);
    } else if (wake_old_chld.sa_handler != SIG_DFL &&
               wake_old_chld.sa_handler != SIG_IGN) {
        wake_old_chld.sa_handler(sig);
    }
    errno = saved;
}

static void wake_install(void)
{
    struct sigaction sa;

    for (int i = 0; i < WAKE_SLOTS; i++)
        atomic_init(&wake_slots[i].wfd, -1);
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = wake_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, &wake_old_chld);
}

/* Claim a slot: its read end (drained of stale bytes) in *rfd; -1 when
 * every slot is taken or no pipe can be made. */
static int wake_claim(int *rfd)
{
    pthread_once(&wake_once, wake_install);
    for (int i = 0; i < WAKE_SLOTS; i++) {
        int zero = 0;
        if (!atomic_compare_exchange_strong(&wake_slots[i].active, &zero, 1))
            continue;
        if (atomic_load(&wake_slots[i].wfd) < 0) {
            int p[2];
            if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
                atomic_store(&wake_slots[i].active, 0);
                return -1;
            }
            wake_slots[i].rfd = p[0];
            atomic_store(&wake_slots[i].wfd, p[1]);
        } else {
            char buf[64];
            while (read(wake_slots[i].rfd, buf, sizeof(buf)) > 0)
                ;
        }
        *rfd = wake_slots[i].rfd;
        return i;
    }
    return -1;
}

static void wake_release(int slot)
{
    if (slot >= 0)
        atomic_store(&wake_slots[slot].active, 0);
}

/*
 * SIGPIPE is ignored while any run writes to a child's stdin (a child that
 * exits early must give EPIPE, not kill exa). Runs on several threads
 * share one disposition: the first to begin saves it, the last to end puts
 * it back (a save and restore per run would let two overlapping runs
 * leave it ignored for good, or restore it under a run still writing).
 */
static pthread_mutex_t pipe_mu = PTHREAD_MUTEX_INITIALIZER;
static int pipe_users;
static struct sigaction pipe_saved;

static void pipe_ignore_begin(void)
{
    pthread_mutex_lock(&pipe_mu);
    if (pipe_users++ == 0) {
        struct sigaction ign;
        memset(&ign, 0, sizeof(ign));
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        sigaction(SIGPIPE, &ign, &pipe_saved);
    }
    pthread_mutex_unlock(&pipe_mu);
}

static void pipe_ignore_end(void)
{
    pthread_mutex_lock(&pipe_mu);
    if (--pipe_users == 0)
        sigaction(SIGPIPE, &pipe_saved, NULL);
    pthread_mutex_unlock(&pipe_mu);
}

int subprocess_run(const char *const *argv, const struct subprocess_opts *opts,
                   struct subprocess_result *res, exa_error_t *err)
{
    static const struct subprocess_opts none = {0};
    int in_p[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
    int pidfd = -1, wake_fd = -1, slot = -1;
    int devnull = -1, child_errno = 0, status = 0, reaped = 0;
    size_t cap, written = 0;
    char **env = NULL;
    double start, deadline = 0, kill_at = 0;
    int term_sent = 0, kill_sent = 0, over = 0;
    const char *over_stream = NULL;
    pid_t pid;
    ssize_t r;

    if (!opts)
        opts = &none;
    if (!argv || !argv[0])
        return exa_err(err, EXA_EUSAGE, "empty command");
    cap = opts->max_output ? opts->max_output : SUBPROCESS_DEFAULT_MAX_OUTPUT;
    strbuf_reset(&res->out);
    strbuf_reset(&res->err);
    res->exit_code = -1;
    res->signal = 0;
    res->timed_out = 0;
    res->truncated = 0;
    res->elapsed_s = 0;
    res->wakeups = 0;

    if (pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0)
        goto sys_fail;
    if (opts->stdin_data) {
        if (pipe2(in_p, O_CLOEXEC) < 0)
            goto sys_fail;
    } else {
        devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (devnull < 0)
            goto sys_fail;
    }
    if (opts->env)
        env = build_env(opts->env);

    pipe_ignore_begin();

    start = subprocess_now();
    child_errno =
        spawn_child(argv, env, opts->cwd, opts->stdin_data ? in_p[0] : devnull,
                    out_p[1], err_p[1], &pid);
    free(env);
    env = NULL;
    close_fd(&out_p[1]);
    close_fd(&err_p[1]);
    close_fd(&in_p[0]);
    close_fd(&devnull);
    if (child_errno) {
        close_fd(&in_p[1]);
        close_fd(&out_p[0]);
        close_fd(&err_p[0]);
        pipe_ignore_end();
        return exa_err(err, EXA_ETRANSPORT, "cannot run '%s': %s", argv[0],
                       strerror(child_errno));
    }
    if (opts->on_spawn)
        opts->on_spawn(opts->on_spawn_arg);

    if (in_p[1] >= 0) {
        set_nonblock(in_p[1]);
        if (opts->stdin_len == 0)
            close_fd(&in_p[1]);
    }
    set_nonblock(out_p[0]);
    set_nonblock(err_p[0]);
    /*
     * The child is ours and not yet reaped, so its pid cannot be reused
     * before pidfd_open. Without a pidfd, claim a SIGCHLD wake-up pipe:
     * a SIGCHLD that came before the claim is covered by the waitpid
     * every loop turn makes before it polls.
     */
#ifdef SYS_pidfd_open
    if (atomic_load(&use_pidfd))
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    if (pidfd >= 0)
        wake_fd = pidfd;
    else
        slot = wake_claim(&wake_fd);
    if (opts->timeout_s > 0)
        deadline = start + opts->timeout_s;

    while (!reaped) {
        struct pollfd pfd[4]; /* stdin, stdout, stderr, exit wake-up */
        int nfd = 0, wait_ms = -1;
        double now = subprocess_now();
        pid_t w;

        /* Escalate: deadline -> SIGTERM, grace -> SIGKILL. */
        if (!term_sent && deadline > 0 && now >= deadline) {
            res->timed_out = 1;
            kill(-pid, SIGTERM);
            term_sent = 1;
            kill_at = now + SUBPROCESS_KILL_GRACE_S;
        }
        if (over && !term_sent) {
            kill(-pid, SIGTERM);
            term_sent = 1;
            kill_at = now + SUBPROCESS_KILL_GRACE_S;
        }
        if (term_sent && !kill_sent && now >= kill_at) {
            kill(-pid, SIGKILL);
            kill_sent = 1;
        }
        if (term_sent && !kill_sent)
            wait_ms = (int)((kill_at - now) * 1000) + 1;
        else if (!term_sent && deadline > 0)
            wait_ms = (int)((deadline - now) * 1000) + 1;

        /*
         * A daemon the child left behind (ssh's ControlPersist master) may
         * hold our pipes open forever: once the child itself has exited,
         * take what is buffered and stop.
         */
        w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno == ECHILD)) {
            if (w < 0)
                status = 0; /* SIGCHLD ignored: reaped by the kernel */
            reaped = 1;
            drain(out_p[0], &res->out, cap, &over, &over_stream, "stdout");
            drain(err_p[0], &res->err, cap, &over, &over_stream, "stderr");
            break;
        }
        if (in_p[1] >= 0) {
            pfd[nfd].fd = in_p[1];
            pfd[nfd++].events = POLLOUT;
        }
        if (out_p[0] >= 0) {
            pfd[nfd].fd = out_p[0];
            pfd[nfd++].events = POLLIN;
        }
        if (err_p[0] >= 0) {
            pfd[nfd].fd = err_p[0];
            pfd[nfd++].events = POLLIN;
        }
        if (wake_fd >= 0) {
            pfd[nfd].fd = wake_fd;
            pfd[nfd++].events = POLLIN;
        } else if (wait_ms < 0 || wait_ms > 50) {
            wait_ms = 50; /* every wake-up slot taken: look every 50 ms */
        }
        res->wakeups++;
        if (poll(pfd, (nfds_t)nfd, wait_ms) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < nfd; i++) {
            if (!pfd[i].revents)
                continue;
            if (pfd[i].fd == wake_fd) {
                char buf[64];
                if (slot >= 0)
                    while (read(wake_fd, buf, sizeof(buf)) > 0)
                        ;
            } else if (pfd[i].fd == in_p[1]) {
                r = write(in_p[1], opts->stdin_data + written,
                          opts->stdin_len - written);
                if (r > 0) {
                    written += (size_t)r;
                    if (opts->on_stdin)
                        opts->on_stdin(opts->on_stdin_arg, written);
                }
                if ((r < 0 && errno != EAGAIN && errno != EINTR) ||
                    written == opts->stdin_len ||
                    (pfd[i].revents & (POLLERR | POLLHUP)))
                    close_fd(&in_p[1]);
            } else {
                int *fdp = pfd[i].fd == out_p[0] ? &out_p[0] : &err_p[0];
                struct strbuf *sb = fdp == &out_p[0] ? &res->out : &res->err;
                int o = 0;
                r = read_into(*fdp, sb, cap, &o);
                if (r > 0) {
                    if (o) {
                        over = 1;
                        if (!over_stream)
                            over_stream =
                                fdp == &out_p[0] ? "stdout" : "stderr";
                        close_fd(fdp);
                    }
                } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                    close_fd(fdp);
                }
            }
        }
    }
    close_fd(&in_p[1]);
    close_fd(&out_p[0]);
    close_fd(&err_p[0]);
    close_fd(&pidfd);
    wake_release(slot);
    pipe_ignore_end();
    res->elapsed_s = subprocess_now() - start;

    if (WIFEXITED(status)) {
        res->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->signal = WTERMSIG(status);
    }
    if (res->timed_out)
        return exa_err(err, EXA_ETIMEOUT, "'%s' timed out after %g s", argv[0],
                       opts->timeout_s);
    if (over) {
        res->truncated = 1;
        return exa_err(err, EXA_ETRANSPORT,
                       "'%s' wrote more than %zu bytes on %s", argv[0], cap,
                       over_stream);
    }
    return 0;

sys_fail : {
    int e = errno;
    close_fd(&in_p[0]);
    close_fd(&in_p[1]);
    close_fd(&out_p[0]);
    close_fd(&out_p[1]);
    close_fd(&err_p[0]);
    close_fd(&err_p[1]);
    close_fd(&devnull);
    free(env);
    return exa_err(err, EXA_ETRANSPORT, "cannot run '%s': %s", argv[0],
                   strerror(e));
}
}
