/*
 * ssh.c - the `ssh` transport: the system OpenSSH client, one multiplexed
 * connection, strict host keys.
 *
 * Every command is `ssh <options> -l USER -p PORT -i KEY -- HOST '<cmd>'`
 * where <cmd> is the argv quoted word by word by shquote_argv(): the remote
 * login shell splits it back into exactly argv, so no argument can become
 * shell syntax. Options (ssh_config(5)): BatchMode=yes (never prompt),
 * StrictHostKeyChecking=yes with UserKnownHostsFile=<exa's file> and
 * GlobalKnownHostsFile=/dev/null (only the key exa pinned counts),
 * ControlMaster=auto + ControlPath=<private dir>/%C + ControlPersist=60 (one
 * TCP/SSH connection serves every command of a poll loop). put and get
 * stream bytes through `cat` on the same connection, so they need no sftp
 * subsystem and no second authentication.
 *
 * ssh exits 255 for its own failures, and passes on a remote command's
 * status, which may be 255 too. After a 255 exa asks the ControlMaster
 * (`ssh -O check`): when it is alive the connection worked and 255 is the
 * command's (a result, so `sbatch` exiting 255 is the scheduler's failure,
 * exit 5, with its message); when not, ssh failed (exit 4). Its stderr
 * then tells a refused host key (unknown or changed) apart from other
 * connection errors, and exa reports which with the host named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libtransport/transport.h"
#include "libutil/shquote.h"
#include "libutil/subprocess.h"
#include "libutil/xalloc.h"

struct ssh_priv {
    char *host, *user, *key, *known_hosts, *control_dir, *ssh_program;
    int port;
    char tag[9]; /* 8 hex digits of the identity (known_hosts, key) */
};

char *transport_ssh_default_known_hosts(void)
{
    const char *x = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");

    if (x && *x)
        return xstrfmt("%s/examlops/known_hosts", x);
    return xstrfmt("%s/.config/examlops/known_hosts", home ? home : "");
}

void transport_ssh_base_argv(struct transport *t, struct strvec *argv)
{
    struct ssh_priv *p = t->priv;

    strvec_push(argv, p->ssh_program);
    strvec_pushl(argv, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                 "-o", "GlobalKnownHostsFile=/dev/null", NULL);
    strvec_pushf(argv, "-oUserKnownHostsFile=%s", p->known_hosts);
    strvec_pushl(argv, "-o", "ControlMaster=auto", NULL);
    /* %C hashes host, port and user only: the tag keeps a master opened
     * under another known_hosts or key from serving this transport
     * (a reused master skips host key verification). */
    strvec_pushf(argv, "-oControlPath=%s/%s-%%C", p->control_dir, p->tag);
    strvec_push(argv, "-o");
    strvec_pushf(argv, "ControlPersist=%d", TRANSPORT_SSH_PERSIST_S);
    strvec_pushl(argv, "-o", "ConnectTimeout=15", "-o",
                 "ServerAliveInterval=30", "-o", "LogLevel=ERROR", NULL);
    if (p->port) {
        strvec_push(argv, "-p");
        strvec_pushf(argv, "%d", p->port);
    }
    if (p->key)
        strvec_pushl(argv, "-i", p->key, "-o", "IdentitiesOnly=yes", NULL);
    if (p->user)
        strvec_pushl(argv, "-l", p->user, NULL);
    strvec_pushl(argv, "--", p->host, NULL);
}

/* Map ssh's own failure (exit 255) to an error naming the host. */
static int ssh_failure(struct transport *t, const struct strbuf *e,
                       exa_error_t *err)
{
    struct ssh_priv *p = t->priv;
    const char *s = e->buf;
    char line[201];
    const char *nl;
    size_t n;

    if (strstr(s, "REMOTE HOST IDENTIFICATION HAS CHANGED") ||
        strstr(s, "Host key for") /* "...has changed and you have requested" */)
        return exa_err(err, EXA_ETRANSPORT,
                       "host key for '%s' changed: refusing to connect "
                       "(check %s)",
                       p->host, p->known_hosts);
    if (strstr(s, "host key is known") ||
        strstr(s, "Host key verification failed"))
        return exa_err(err, EXA_ETRANSPORT,
                       "host key for '%s' unknown: not in %s (pin it first)",
                       p->host, p->known_hosts);
    while (*s == '\n' || *s == ' ')
        s++;
    nl = strchr(s, '\n');
    n = nl ? (size_t)(nl - s) : strlen(s);
    if (n >= sizeof(line))
        n = sizeof(line) - 1;
    /* ssh ends lines with CRLF when it has a terminal; no CR or blank
     * may end the message */
    while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    memcpy(line, s, n);
    line[n] = '\0';
    return exa_err(err, EXA_ETRANSPORT, "ssh to '%s' failed%s%s", p->host,
                   *line ? ": " : "", line);
}

/*
 * After an exit status of 255: is the ControlMaster alive? `ssh -O check`
 * (ssh(1)) over the same ControlPath exits 0 when a master serves this
 * host; then the connection worked and 255 was the remote command's own
 * status. When ssh itself failed (could not connect, lost the
 * connection), no master is left running. 1 alive, 0 not.
 */
static int ssh_master_alive(struct transport *t)
{
    struct strvec argv = STRVEC_INIT;
    struct subprocess_opts o = {0};
    struct subprocess_result sr = SUBPROCESS_RESULT_INIT;
    exa_error_t e = EXA_ERROR_INIT;
    int alive;

    transport_ssh_base_argv(t, &argv);
    /* ... -- HOST: insert "-O check" before the "--" */
    {
        struct strvec v = STRVEC_INIT;
        for (size_t i = 0; i < argv.nr; i++) {
            if (!strcmp(argv.v[i], "--") && i + 2 == argv.nr)
                strvec_pushl(&v, "-O", "check", NULL);
            strvec_push(&v, argv.v[i]);
        }
        strvec_clear(&argv);
        argv = v;
    }
    o.timeout_s = 10;
    o.max_output = 65536;
    alive = subprocess_run(argv.v, &o, &sr, &e) == 0 && sr.exit_code == 0;
    strvec_clear(&argv);
    subprocess_result_release(&sr);
    return alive;
}

/* 1 when stderr says ssh refused the host key (never the command's). */
static int host_key_refused(const char *s)
{
    return strstr(s, "REMOTE HOST IDENTIFICATION HAS CHANGED") ||
           strstr(s, "Host key for") || strstr(s, "host key is known") ||
           strstr(s, "Host key verification failed");
}

/* subprocess on_stdin: the bytes of a put handed to ssh so far */
static void put_progress(void *arg, size_t written)
{
    transport_progress_done(arg, (unsigned long long)written);
}

/* Run the shell command line cmd on the remote host; during a reported
 * put (t->progress), each write of stdin counts as its progress. */
static int ssh_exec(struct transport *t, const char *cmd, const char *what,
                    const char *stdin_data, size_t stdin_len, double timeout_s,
                    struct transport_result *res, exa_error_t *err)
{
    struct ssh_priv *p = t->priv;
    struct strvec argv = STRVEC_INIT;
    struct subprocess_opts o = {0};
    struct subprocess_result sr = SUBPROCESS_RESULT_INIT;
    int rc;

    transport_ssh_base_argv(t, &argv);
    strvec_push(&argv, cmd);
    o.stdin_data = stdin_data ? stdin_data : (stdin_len ? "" : NULL);
    o.stdin_len = stdin_len;
    o.timeout_s = timeout_s;
    o.max_output = TRANSPORT_MAX_OUTPUT;
    if (t->progress && stdin_len) {
        o.on_stdin = put_progress;
        o.on_stdin_arg = t;
    }
    rc = subprocess_run(argv.v, &o, &sr, err);
    strvec_clear(&argv);
    strbuf_take(&res->out, &sr.out);
    strbuf_addbuf(&res->err, &sr.err);
    res->rc = sr.exit_code;
    res->signal = sr.signal;
    if (rc < 0 && sr.timed_out)
        exa_err(err, EXA_ETIMEOUT, "'%s' on '%s' timed out after %g s", what,
                p->host, timeout_s);
    else if (rc == 0 && sr.exit_code == 255 &&
             (host_key_refused(sr.err.buf) || !ssh_master_alive(t)))
        rc = ssh_failure(t, &sr.err, err);
    /* else 255 was the remote command's status: a result (libsched
     * reports it as the scheduler's failure with its own message) */
    subprocess_result_release(&sr);
    return rc;
}

static int ssh_run(struct transport *t, const char *const *argv,
                   const char *stdin_data, size_t stdin_len, double timeout_s,
                   struct transport_result *res, exa_error_t *err)
{
    struct strbuf cmd = STRBUF_INIT;
    int rc;

    shquote_argv(&cmd, argv);
    rc = ssh_exec(t, cmd.buf, argv[0], stdin_data, stdin_len, timeout_s, res,
                  err);
    strbuf_release(&cmd);
    return rc;
}

static int read_all(const char *path, struct strbuf *sb, exa_error_t *err)
{
    char buf[65536];
    ssize_t r;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        int e = errno;
        return exa_err(err, e == ENOENT ? EXA_ENOTFOUND : EXA_ECONFIG,
                       "cannot read '%s': %s", path, strerror(e));
    }
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        strbuf_add(sb, buf, (size_t)r);
    close(fd);
    if (r < 0)
        return exa_err(err, EXA_ECONFIG, "cannot read '%s': %s", path,
                       strerror(errno));
    return 0;
}

static int ssh_put(struct transport *t, const char *local_path,
                   const char *remote_path, exa_error_t *err)
{
    struct strbuf data = STRBUF_INIT, cmd = STRBUF_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char *dir = xstrdup(remote_path), *slash = strrchr(dir, '/');
    struct stat st;
    int rc = -1;

    if (read_all(local_path, &data, err) < 0)
        goto out;
    if (stat(local_path, &st) < 0)
        st.st_mode = 0644;
    /* umask 077 && mkdir -p DIR && cat > PATH.tmp && chmod MODE PATH.tmp
     * && mv PATH.tmp PATH: the copy is private from its first byte (a
     * staged dataset may be confidential): new directories 0700, the file
     * the owner's bits of the local mode only (0644 -> 0600). */
    strbuf_addstr(&cmd, "umask 077 && ");
    if (slash && slash != dir) {
        *slash = '\0';
        strbuf_addstr(&cmd, "mkdir -p -- ");
        shquote_append(&cmd, dir);
        strbuf_addstr(&cmd, " && ");
    }
    strbuf_addstr(&cmd, "cat > ");
    shquote_append(&cmd, remote_path);
    strbuf_addstr(&cmd, ".exa-tmp && chmod ");
    strbuf_addf(&cmd, "%o ", (unsigned)(st.st_mode & 0700));
    shquote_append(&cmd, remote_path);
    strbuf_addstr(&cmd, ".exa-tmp && mv -f -- ");
    shquote_append(&cmd, remote_path);
    strbuf_addstr(&cmd, ".exa-tmp ");
    shquote_append(&cmd, remote_path);
    /* the command cap, plus the time the bytes take at the slowest rate a
     * copy may have (a 1 GB dataset must not hit the 30 s of a command) */
    if (ssh_exec(t, cmd.buf, "put", data.buf, data.len,
                 t->timeout_s + (double)data.len / TRANSPORT_PUT_MIN_RATE, &res,
                 err) < 0)
        goto out;
    if (res.rc != 0) {
        strbuf_rtrim(&res.err);
        exa_err(err, EXA_ETRANSPORT, "put '%s' on '%s' failed: %s", remote_path,
                t->host, res.err.buf);
        goto out;
    }
    rc = 0;
out:
    free(dir);
    strbuf_release(&data);
    strbuf_release(&cmd);
    transport_result_release(&res);
    return rc;
}

static int ssh_get(struct transport *t, const char *remote_path,
                   const char *local_path, exa_error_t *err)
{
    const char *argv[] = {"cat", "--", remote_path, NULL};
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char *tmp = NULL;
    int fd, rc = -1;

    if (ssh_run(t, argv, NULL, 0, t->timeout_s, &res, err) < 0)
        goto out;
    if (res.rc != 0) {
        strbuf_rtrim(&res.err);
        exa_err(err,
                strstr(res.err.buf, "No such file") ? EXA_ENOTFOUND
                                                    : EXA_ETRANSPORT,
                "get '%s' from '%s' failed: %s", remote_path, t->host,
                res.err.buf);
        goto out;
    }
    tmp = xstrfmt("%s.tmp.%ld", local_path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", local_path,
                strerror(errno));
        goto out;
    }
    {
        size_t off = 0;
        while (off < res.out.len) {
            ssize_t w = write(fd, res.out.buf + off, res.out.len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                break;
            off += (size_t)w;
        }
        if (off < res.out.len || close(fd) < 0 || rename(tmp, local_path) < 0) {
            exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", local_path,
                    strerror(errno));
            unlink(tmp);
            goto out;
        }
    }
    rc = 0;
out:
    free(tmp);
    transport_result_release(&res);
    return rc;
}

static void ssh_close(struct transport *t)
{
    struct ssh_priv *p = t->priv;

    if (!p)
        return;
    free(p->host);
    free(p->user);
    free(p->key);
    free(p->known_hosts);
    free(p->control_dir);
    free(p->ssh_program);
    free(p);
}

static const struct transport_ops ssh_ops = {
    "ssh", ssh_run, ssh_put, ssh_get, ssh_close,
};

/* Make dir (mode 0700) or accept it when it is ours and private. */
static int private_dir(const char *dir, exa_error_t *err)
{
    struct stat st;

    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return exa_err(err, EXA_ECONFIG, "cannot create '%s': %s", dir,
                       strerror(errno));
    if (lstat(dir, &st) < 0)
        return exa_err(err, EXA_ECONFIG, "cannot stat '%s': %s", dir,
                       strerror(errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        return exa_err(err, EXA_ECONFIG,
                       "ssh control directory '%s' is not a private directory "
                       "owned by uid %ld",
                       dir, (long)getuid());
    return 0;
}

struct transport *transport_ssh_new(const struct ssh_config *cfg,
                                    exa_error_t *err)
{
    struct transport *t;
    struct ssh_priv *p;

    if (!cfg->host || !*cfg->host) {
        exa_err(err, EXA_ECONFIG, "ssh transport needs a host");
        return NULL;
    }
    if (cfg->host[0] == '-' || strpbrk(cfg->host, " \t\n'\"\\;")) {
        exa_err(err, EXA_ECONFIG, "invalid ssh host '%s'", cfg->host);
        return NULL;
    }
    if (cfg->user && (cfg->user[0] == '-' || strpbrk(cfg->user, " \t\n@"))) {
        exa_err(err, EXA_ECONFIG, "invalid ssh user '%s'", cfg->user);
        return NULL;
    }
    p = xcalloc(1, sizeof(*p));
    p->host = xstrdup(cfg->host);
    p->user = cfg->user ? xstrdup(cfg->user) : NULL;
    p->key = cfg->key ? xstrdup(cfg->key) : NULL;
    p->port = cfg->port;
    p->known_hosts = cfg->known_hosts ? xstrdup(cfg->known_hosts)
                                      : transport_ssh_default_known_hosts();
    p->control_dir = cfg->control_dir ? xstrdup(cfg->control_dir)
                                      : xstrfmt("/tmp/exa-%ld", (long)getuid());
    p->ssh_program = xstrdup(cfg->ssh_program ? cfg->ssh_program : "ssh");
    {
        /* FNV-1a over "known_hosts\nkey\n<known_hosts contents>": a
         * re-pinned host key (new file contents) must not reuse a master
         * connection that was verified against the old one. */
        unsigned h = 2166136261u;
        const char *parts[2] = {p->known_hosts, p->key ? p->key : ""};
        FILE *kh;
        for (int i = 0; i < 2; i++) {
            for (const char *c = parts[i]; *c; c++)
                h = (h ^ (unsigned char)*c) * 16777619u;
            h = (h ^ '\n') * 16777619u;
        }
        if ((kh = fopen(p->known_hosts, "r"))) {
            char buf[4096];
            size_t n, total = 0;
            while (total < (1u << 20) &&
                   (n = fread(buf, 1, sizeof(buf), kh)) > 0) {
                for (size_t i = 0; i < n; i++)
                    h = (h ^ (unsigned char)buf[i]) * 16777619u;
                total += n;
            }
            fclose(kh);
        }
        xsnprintf(p->tag, sizeof(p->tag), "%08x", h);
    }
    if (private_dir(p->control_dir, err) < 0) {
        struct transport tmp = {0};
        tmp.priv = p;
        ssh_close(&tmp);
        return NULL;
    }
    t = xcalloc(1, sizeof(*t));
    t->ops = &ssh_ops;
    t->priv = p;
    t->host = xstrdup(p->host);
    t->timeout_s = TRANSPORT_DEFAULT_TIMEOUT_S;
    t->desc = xstrfmt("ssh %s%s%s:%d", p->user ? p->user : "",
                      p->user ? "@" : "", p->host, p->port ? p->port : 22);
    return t;
}
