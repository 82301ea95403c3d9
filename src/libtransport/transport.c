/*
 * transport.c - the vtable dispatch, the `local` transport and selection
 * from the environment.
 *
 * local runs argv with subprocess_run() (execvp, no shell) and copies files
 * for put/get, creating parent directories, so mock and single-host setups
 * use the same code path as ssh with no remote in between.
 */
#include "libtransport/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libutil/log.h"
#include "libutil/shquote.h"
#include "libutil/subprocess.h"
#include "libutil/target.h"
#include "libutil/xalloc.h"

void transport_result_release(struct transport_result *res)
{
    strbuf_release(&res->out);
    strbuf_release(&res->err);
    res->rc = -1;
    res->signal = 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The -v trace of one command (log_debug, so only with --verbose or
 * EXAMLOPS_LOG_LEVEL=debug): where it ran, its argv shell-quoted as one
 * could paste it, how long it took and how it ended (doc/verbose.md).
 */
static void trace_run(const struct transport *t, const char *const *argv,
                      double secs, int rc, const struct transport_result *res,
                      const exa_error_t *err)
{
    struct strbuf cmd = STRBUF_INIT;
    shquote_argv(&cmd, argv);
    if (rc < 0)
        log_debug("ran on %s: %s (%.3f s): failed: %s", t->desc, cmd.buf, secs,
                  err ? err->text : "?");
    else if (res->rc < 0)
        log_debug("ran on %s: %s (%.3f s): killed by signal %d", t->desc,
                  cmd.buf, secs, res->signal);
    else
        log_debug("ran on %s: %s (%.3f s): exit %d", t->desc, cmd.buf, secs,
                  res->rc);
    strbuf_release(&cmd);
}

int transport_run(struct transport *t, const char *const *argv,
                  const char *stdin_data, size_t stdin_len, double timeout_s,
                  struct transport_result *res, exa_error_t *err)
{
    int trace = log_get_level() >= LOG_DEBUG, rc;
    double t0 = trace ? now_s() : 0;
    if (timeout_s <= 0)
        timeout_s = t->timeout_s;
    strbuf_reset(&res->out);
    strbuf_reset(&res->err);
    res->rc = -1;
    res->signal = 0;
    rc = t->ops->run(t, argv, stdin_data, stdin_len, timeout_s, res, err);
    if (trace)
        trace_run(t, argv, now_s() - t0, rc, res, err);
    return rc;
}

/* First non-empty line of s, trimmed, at most 200 bytes. */
static void first_line(const struct strbuf *s, char *dst, size_t n)
{
    const char *p = s->buf, *e;
    size_t len;

    while (*p == '\n' || *p == ' ' || *p == '\r' || *p == '\t')
        p++;
    e = strchr(p, '\n');
    len = e ? (size_t)(e - p) : strlen(p);
    while (len && (p[len - 1] == '\r' || p[len - 1] == ' '))
        len--;
    if (len >= n)
        len = n - 1;
    memcpy(dst, p, len);
    dst[len] = '\0';
}

int transport_run_ok(struct transport *t, const char *const *argv,
                     const char *stdin_data, size_t stdin_len,
                     struct transport_result *res, exa_error_t *err)
{
    if (transport_run(t, argv, stdin_data, stdin_len, 0, res, err) < 0)
        return -1;
    if (res->rc == 0)
        return 0;
    return transport_exit_error(t, argv, res, err);
}

int transport_exit_error(const struct transport *t, const char *const *argv,
                         const struct transport_result *res, exa_error_t *err)
{
    char line[201];

    first_line(res->err.len ? &res->err : &res->out, line, sizeof(line));
    if (res->rc < 0)
        return exa_err(err, EXA_ESCHED, "'%s' on '%s' killed by signal %d%s%s",
                       argv[0], t->host, res->signal, *line ? ": " : "", line);
    return exa_err(err, EXA_ESCHED, "'%s' on '%s' exited %d%s%s", argv[0],
                   t->host, res->rc, *line ? ": " : "", line);
}

/* The -v trace of a copy: direction, paths, duration, outcome. */
static void trace_copy(const struct transport *t, const char *what,
                       const char *from, const char *to, double secs, int rc,
                       const exa_error_t *err)
{
    if (rc < 0)
        log_debug("%s on %s: %s -> %s (%.3f s): failed: %s", what, t->desc,
                  from, to, secs, err ? err->text : "?");
    else
        log_debug("%s on %s: %s -> %s (%.3f s): ok", what, t->desc, from, to,
                  secs);
}

void transport_progress_begin(struct transport_progress *p, const char *label,
                              unsigned long long total, double now)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->label, sizeof(p->label), "%.*s", (int)sizeof(p->label) - 1,
             label);
    p->total = total;
    p->t0 = p->last_t = now;
}

int transport_progress_line(struct transport_progress *p,
                            unsigned long long done, double now, char *buf,
                            size_t len)
{
    int step;
    double secs = now - p->t0, rate;
    if (!p->total || done >= p->total)
        return 0;
    step = (int)(done * 10 / p->total);
    if (step <= p->last_step && now - p->last_t < TRANSPORT_PROGRESS_PERIOD_S)
        return 0;
    if (step > p->last_step)
        p->last_step = step;
    p->last_t = now;
    p->lines++;
    rate = secs > 0 ? (double)done / secs : 0;
    if (rate > 0)
        snprintf(buf, len, "%s: %.1f of %.1f MB (%d%%), %.1f MB/s, ETA %.0f s",
                 p->label, (double)done / 1e6, (double)p->total / 1e6,
                 (int)(done * 100 / p->total), rate / 1e6,
                 (double)(p->total - done) / rate);
    else
        snprintf(buf, len, "%s: %.1f of %.1f MB (%d%%)", p->label,
                 (double)done / 1e6, (double)p->total / 1e6,
                 (int)(done * 100 / p->total));
    return 1;
}

void transport_progress_summary(const struct transport_progress *p, double now,
                                char *buf, size_t len)
{
    double secs = now - p->t0;
    snprintf(buf, len, "%s: %.1f MB in %.1f s, %.1f MB/s", p->label,
             (double)p->total / 1e6, secs,
             secs > 0 ? (double)p->total / 1e6 / secs : 0);
}

void transport_progress_done(struct transport *t, unsigned long long done)
{
    char line[768];
    if (t->progress &&
        transport_progress_line(t->progress, done, now_s(), line, sizeof(line)))
        log_status("%s", line);
}

int transport_put(struct transport *t, const char *local_path,
                  const char *remote_path, exa_error_t *err)
{
    int trace = log_get_level() >= LOG_DEBUG, rc;
    double t0 = now_s();
    struct transport_progress p;
    struct stat st;
    char line[768];

    t->progress = NULL;
    if (stat(local_path, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size >= TRANSPORT_PROGRESS_MIN && log_status_enabled()) {
        snprintf(line, sizeof(line), "put '%s' to '%s' on %s", local_path,
                 remote_path, t->desc);
        transport_progress_begin(&p, line, (unsigned long long)st.st_size, t0);
        t->progress = &p;
    }
    rc = t->ops->put(t, local_path, remote_path, err);
    if (t->progress && rc == 0) {
        transport_progress_summary(&p, now_s(), line, sizeof(line));
        log_status("%s", line);
    }
    t->progress = NULL;
    if (trace)
        trace_copy(t, "put", local_path, remote_path, now_s() - t0, rc, err);
    return rc;
}

int transport_get(struct transport *t, const char *remote_path,
                  const char *local_path, exa_error_t *err)
{
    int trace = log_get_level() >= LOG_DEBUG, rc;
    double t0 = trace ? now_s() : 0;
    rc = t->ops->get(t, remote_path, local_path, err);
    if (trace)
        trace_copy(t, "get", remote_path, local_path, now_s() - t0, rc, err);
    return rc;
}

void transport_close(struct transport *t)
{
    if (!t)
        return;
    if (t->sync_nr || t->sync_err_path) /* never left unsynced */
        transport_sync_pending(t, NULL);
    if (t->ops->close)
        t->ops->close(t);
    free(t->desc);
    free(t->host);
    free(t);
}

const char *transport_describe(const struct transport *t)
{
    return t->desc;
}

/* ---- deferred fsync (transport_defer_sync) ---- */

void transport_defer_sync(struct transport *t, int on)
{
    t->defer_sync = on;
}

/* fsync the pending files and forget them, remembering the first
 * failure (its path and errno) for transport_sync_pending(). Runs in the
 * parent as a local command's child starts (subprocess on_spawn). */
static void sync_now(void *arg)
{
    struct transport *t = arg;
    for (size_t i = 0; i < t->sync_nr; i++) {
        int fd = open(t->sync_paths[i], O_RDONLY | O_CLOEXEC);
        int e = 0;
        if (fd < 0 || fsync(fd) < 0)
            e = errno;
        if (fd >= 0)
            close(fd);
        if (e && !t->sync_errno) {
            t->sync_errno = e;
            t->sync_err_path = t->sync_paths[i];
            t->sync_paths[i] = NULL; /* kept for the message */
        } else {
            free(t->sync_paths[i]);
            t->sync_paths[i] = NULL;
        }
    }
    t->sync_nr = 0;
}

int transport_sync_pending(struct transport *t, exa_error_t *err)
{
    int e;
    sync_now(t);
    free(t->sync_paths);
    t->sync_paths = NULL;
    t->sync_alloc = 0;
    if (!(e = t->sync_errno))
        return 0;
    exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", t->sync_err_path,
            strerror(e));
    free(t->sync_err_path);
    t->sync_err_path = NULL;
    t->sync_errno = 0;
    return -1;
}

/* ---- local ---- */

static int local_run(struct transport *t, const char *const *argv,
                     const char *stdin_data, size_t stdin_len, double timeout_s,
                     struct transport_result *res, exa_error_t *err)
{
    struct subprocess_opts o = {0};
    struct subprocess_result sr = SUBPROCESS_RESULT_INIT;
    int rc;

    o.stdin_data = stdin_data ? stdin_data : (stdin_len ? "" : NULL);
    o.stdin_len = stdin_len;
    o.timeout_s = timeout_s;
    o.max_output = TRANSPORT_MAX_OUTPUT;
    if (t->sync_nr) { /* deferred puts: made durable while the child runs */
        o.on_spawn = sync_now;
        o.on_spawn_arg = t;
    }
    rc = subprocess_run(argv, &o, &sr, err);
    strbuf_take(&res->out, &sr.out);
    strbuf_addbuf(&res->err, &sr.err);
    res->rc = sr.exit_code;
    res->signal = sr.signal;
    if (rc < 0 && sr.timed_out)
        exa_err(err, EXA_ETIMEOUT, "'%s' on '%s' timed out after %g s", argv[0],
                t->host, timeout_s);
    subprocess_result_release(&sr);
    return rc;
}

/* mkdir -p of the parent directory of path; new directories 0700. */
static int mkdir_parents(const char *path, exa_error_t *err)
{
    char *dir = xstrdup(path), *p;

    for (p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
            int e = errno;
            exa_err(err, EXA_ECONFIG, "cannot create '%s': %s", dir,
                    strerror(e));
            free(dir);
            return -1;
        }
        *p = '/';
    }
    free(dir);
    return 0;
}

/* Copy src to dst through a temp file and rename (nothing half-written);
 * t (may be NULL) hears the bytes written (transport_progress_done). */
static int copy_file(struct transport *t, const char *src, const char *dst,
                     exa_error_t *err)
{
    unsigned long long sent = 0;
    char buf[65536];
    char *tmp;
    int in, out;
    ssize_t r;
    struct stat st;
    char rs[PATH_MAX], rd[PATH_MAX];
    int defer = t && t->defer_sync;

    if (realpath(src, rs) && realpath(dst, rd) && !strcmp(rs, rd))
        return 0; /* same file: nothing to do */
    in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        int e = errno;
        return exa_err(err, e == ENOENT ? EXA_ENOTFOUND : EXA_ECONFIG,
                       "cannot read '%s': %s", src, strerror(e));
    }
    if (mkdir_parents(dst, err) < 0) {
        close(in);
        return -1;
    }
    if (fstat(in, &st) < 0)
        st.st_mode = 0644;
    tmp = xstrfmt("%s.tmp.%ld", dst, (long)getpid());
    /* private like the ssh copy: the owner's bits only (0644 -> 0600) */
    out =
        open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 0700);
    if (out < 0) {
        int e = errno;
        close(in);
        free(tmp);
        return exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", dst,
                       strerror(e));
    }
    while ((r = read(in, buf, sizeof(buf))) > 0) {
        ssize_t off = 0;
        while (off < r) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                r = -1;
                break;
            }
            off += w;
        }
        if (r < 0)
            break;
        sent += (unsigned long long)r;
        if (t)
            transport_progress_done(t, sent);
    }
    close(in);
    if (r < 0 || (!defer && fsync(out) < 0) || close(out) < 0 ||
        rename(tmp, dst) < 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", dst,
                       strerror(e));
    }
    free(tmp);
    if (defer) {
        ALLOC_GROW(t->sync_paths, t->sync_nr + 1, t->sync_alloc);
        t->sync_paths[t->sync_nr++] = xstrdup(dst);
    }
    return 0;
}

static int local_put(struct transport *t, const char *local_path,
                     const char *remote_path, exa_error_t *err)
{
    return copy_file(t, local_path, remote_path, err);
}

static int local_get(struct transport *t, const char *remote_path,
                     const char *local_path, exa_error_t *err)
{
    return copy_file(NULL, remote_path, local_path, err);
}

static const struct transport_ops local_ops = {
    "local", local_run, local_put, local_get, NULL,
};

struct transport *transport_local_new(void)
{
    struct transport *t = xcalloc(1, sizeof(*t));

    t->ops = &local_ops;
    t->desc = xstrdup("local");
    t->host = xstrdup("localhost");
    t->timeout_s = TRANSPORT_DEFAULT_TIMEOUT_S;
    return t;
}

/* ---- environment ---- */

int transport_env_seconds(const char *name, double def, double *out,
                          exa_error_t *err)
{
    const char *v = getenv(name);
    char *end;
    double d;

    *out = def;
    if (!v || !*v)
        return 0;
    errno = 0;
    d = strtod(v, &end);
    if (errno || end == v || *end || !(d > 0))
        return exa_err(err, EXA_ECONFIG,
                       "%s must be a positive number of seconds, not '%s'",
                       name, v);
    *out = d;
    return 0;
}

struct transport *transport_from_env(exa_error_t *err)
{
    const char *kind = getenv("EXAMLOPS_HPC_TRANSPORT");
    const char *host = getenv("EXAMLOPS_HPC_SSH_HOST");
    struct transport *t;
    double cap;

    if (transport_env_seconds("EXAMLOPS_SLURM_CMD_TIMEOUT",
                              TRANSPORT_DEFAULT_TIMEOUT_S, &cap, err) < 0)
        return NULL;
    if (!kind || !*kind)
        kind = target_is_local(NULL, host) ? "local" : "ssh";
    if (!strcmp(kind, "local")) {
        t = transport_local_new();
    } else if (!strcmp(kind, "ssh")) {
        struct ssh_config c = {0};
        const char *port = getenv("EXAMLOPS_HPC_SSH_PORT");

        c.host = host && *host ? host : NULL;
        c.user = getenv("EXAMLOPS_HPC_SSH_USER");
        c.key = getenv("EXAMLOPS_HPC_SSH_KEY");
        c.known_hosts = getenv("EXAMLOPS_HPC_SSH_KNOWN_HOSTS");
        if (c.user && !*c.user)
            c.user = NULL;
        if (c.key && !*c.key)
            c.key = NULL;
        if (c.known_hosts && !*c.known_hosts)
            c.known_hosts = NULL;
        if (port && *port) {
            char *end;
            long p = strtol(port, &end, 10);
            if (*end || p < 1 || p > 65535) {
                exa_err(err, EXA_ECONFIG,
                        "EXAMLOPS_HPC_SSH_PORT must be a port number, not '%s'",
                        port);
                return NULL;
            }
            c.port = (int)p;
        }
        if (!c.host) {
            exa_err(err, EXA_ECONFIG,
                    "EXAMLOPS_HPC_TRANSPORT is 'ssh' but EXAMLOPS_HPC_SSH_HOST "
                    "is not set");
            return NULL;
        }
        t = transport_ssh_new(&c, err);
        if (!t)
            return NULL;
    } else {
        exa_err(err, EXA_ECONFIG,
                "unknown EXAMLOPS_HPC_TRANSPORT '%s' (expected local or ssh)",
                kind);
        return NULL;
    }
    t->timeout_s = cap;
    return t;
}
