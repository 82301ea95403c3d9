/*
 * fake.c - the `fake` transport for tests and benches.
 *
 * Rules map a glob over the space-joined argv (fnmatch(3), first match
 * wins, optionally limited to N answers so a test can script a sequence:
 * RUNNING twice, then gone from squeue) to fixture bytes and an exit
 * status, or to a handler that builds the reply from the ids it was asked
 * about. Every call is logged, which is how the batching tests count
 * squeue and sacct invocations. Faults: the Nth call fails before running;
 * the Nth reply is dropped after the rule answered (the command "ran", as
 * when an ssh connection dies after sbatch succeeded).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libtransport/transport.h"
#include "libutil/xalloc.h"

struct fake_rule {
    char *glob;
    char *out, *err;
    int rc;
    double delay_s;
    int times; /* remaining answers; -1 unlimited */
    fake_handler_f handler;
    void *arg;
};

struct fake_file {
    char *path;
    struct strbuf data;
};

struct fake_priv {
    struct fake_rule *rules;
    size_t nr_rules, alloc_rules;
    struct strvec calls;
    struct fake_file *files;
    size_t nr_files, alloc_files;
    int fail_nth, drop_nth;
};

static struct fake_priv *P(struct transport *t)
{
    return t->priv;
}

static void sleep_s(double s)
{
    struct timespec ts;

    if (s <= 0)
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static struct fake_file *find_file(struct fake_priv *p, const char *path)
{
    for (size_t i = 0; i < p->nr_files; i++)
        if (!strcmp(p->files[i].path, path))
            return &p->files[i];
    return NULL;
}

void transport_fake_set_file(struct transport *t, const char *path,
                             const char *data, size_t len)
{
    struct fake_priv *p = P(t);
    struct fake_file *f = find_file(p, path);

    if (!f) {
        ALLOC_GROW(p->files, p->nr_files + 1, p->alloc_files);
        f = &p->files[p->nr_files++];
        f->path = xstrdup(path);
        strbuf_init(&f->data, 0);
    }
    strbuf_reset(&f->data);
    strbuf_add(&f->data, data, len);
}

const struct strbuf *transport_fake_file(struct transport *t, const char *path)
{
    struct fake_file *f = find_file(P(t), path);
    return f ? &f->data : NULL;
}

/* Log the call; returns its 1-based number. */
static int log_call(struct fake_priv *p, const char *joined)
{
    strvec_push(&p->calls, joined);
    return (int)p->calls.nr;
}

static int fake_run(struct transport *t, const char *const *argv,
                    const char *stdin_data, size_t stdin_len, double timeout_s,
                    struct transport_result *res, exa_error_t *err)
{
    struct fake_priv *p = P(t);
    struct strbuf joined = STRBUF_INIT;
    struct fake_rule *r = NULL;
    int n, rc = 0;

    for (size_t i = 0; argv[i]; i++) {
        if (i)
            strbuf_addch(&joined, ' ');
        strbuf_addstr(&joined, argv[i]);
    }
    n = log_call(p, joined.buf);
    if (p->fail_nth && n == p->fail_nth) {
        strbuf_release(&joined);
        return exa_err(err, EXA_ETRANSPORT, "connection to '%s' refused",
                       t->host);
    }
    for (size_t i = 0; i < p->nr_rules; i++) {
        if (p->rules[i].times == 0)
            continue;
        if (!fnmatch(p->rules[i].glob, joined.buf, 0)) {
            r = &p->rules[i];
            break;
        }
    }
    if (!r) {
        res->rc = 127;
        strbuf_addf(&res->err, "fake: no rule for '%s'\n", joined.buf);
        strbuf_release(&joined);
        return 0;
    }
    if (r->times > 0)
        r->times--;
    if (r->delay_s > 0) {
        if (timeout_s > 0 && r->delay_s > timeout_s) {
            sleep_s(timeout_s);
            strbuf_release(&joined);
            return exa_err(err, EXA_ETIMEOUT,
                           "'%s' on '%s' timed out after %g s", argv[0],
                           t->host, timeout_s);
        }
        sleep_s(r->delay_s);
    }
    if (r->handler) {
        rc = r->handler(r->arg, argv, stdin_data, stdin_len, res, err);
    } else {
        strbuf_addstr(&res->out, r->out);
        strbuf_addstr(&res->err, r->err);
        res->rc = r->rc;
    }
    strbuf_release(&joined);
    if (rc == 0 && p->drop_nth && n == p->drop_nth) {
        strbuf_reset(&res->out);
        strbuf_reset(&res->err);
        res->rc = -1;
        return exa_err(err, EXA_ETRANSPORT,
                       "connection to '%s' lost before '%s' answered", t->host,
                       argv[0]);
    }
    return rc;
}

static int fake_put(struct transport *t, const char *local_path,
                    const char *remote_path, exa_error_t *err)
{
    struct fake_priv *p = P(t);
    struct strbuf data = STRBUF_INIT, line = STRBUF_INIT;
    char buf[65536];
    ssize_t r;
    int fd, n;

    strbuf_addf(&line, "put %s %s", local_path, remote_path);
    n = log_call(p, line.buf);
    strbuf_release(&line);
    if (p->fail_nth && n == p->fail_nth)
        return exa_err(err, EXA_ETRANSPORT, "connection to '%s' refused",
                       t->host);
    fd = open(local_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return exa_err(err, EXA_ENOTFOUND, "cannot read '%s': %s", local_path,
                       strerror(errno));
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        strbuf_add(&data, buf, (size_t)r);
    close(fd);
    transport_fake_set_file(t, remote_path, data.buf, data.len);
    strbuf_release(&data);
    return 0;
}

static int fake_get(struct transport *t, const char *remote_path,
                    const char *local_path, exa_error_t *err)
{
    struct fake_priv *p = P(t);
    struct strbuf line = STRBUF_INIT;
    struct fake_file *f;
    const char *data = NULL;
    size_t len = 0;
    int fd, n;

    strbuf_addf(&line, "get %s", remote_path);
    n = log_call(p, line.buf);
    if (p->fail_nth && n == p->fail_nth) {
        strbuf_release(&line);
        return exa_err(err, EXA_ETRANSPORT, "connection to '%s' refused",
                       t->host);
    }
    f = find_file(p, remote_path);
    if (f) {
        data = f->data.buf;
        len = f->data.len;
    } else {
        for (size_t i = 0; i < p->nr_rules; i++) {
            if (p->rules[i].times != 0 && !p->rules[i].handler &&
                !fnmatch(p->rules[i].glob, line.buf, 0)) {
                data = p->rules[i].out;
                len = strlen(data);
                break;
            }
        }
    }
    strbuf_release(&line);
    if (!data)
        return exa_err(err, EXA_ENOTFOUND,
                       "get '%s' from '%s' failed: "
                       "No such file or directory",
                       remote_path, t->host);
    fd = open(local_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
        if (fd >= 0)
            close(fd);
        return exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", local_path,
                       strerror(errno));
    }
    close(fd);
    return 0;
}

static void fake_close(struct transport *t)
{
    struct fake_priv *p = P(t);

    for (size_t i = 0; i < p->nr_rules; i++) {
        free(p->rules[i].glob);
        free(p->rules[i].out);
        free(p->rules[i].err);
    }
    free(p->rules);
    for (size_t i = 0; i < p->nr_files; i++) {
        free(p->files[i].path);
        strbuf_release(&p->files[i].data);
    }
    free(p->files);
    strvec_clear(&p->calls);
    free(p);
}

static const struct transport_ops fake_ops = {
    "fake", fake_run, fake_put, fake_get, fake_close,
};

struct transport *transport_fake_new(void)
{
    struct transport *t = xcalloc(1, sizeof(*t));
    struct fake_priv *p = xcalloc(1, sizeof(*p));

    strvec_init(&p->calls);
    t->ops = &fake_ops;
    t->priv = p;
    t->desc = xstrdup("fake");
    t->host = xstrdup("fake");
    t->timeout_s = TRANSPORT_DEFAULT_TIMEOUT_S;
    return t;
}

static struct fake_rule *new_rule(struct transport *t, const char *glob,
                                  int times)
{
    struct fake_priv *p = P(t);
    struct fake_rule *r;

    ALLOC_GROW(p->rules, p->nr_rules + 1, p->alloc_rules);
    r = &p->rules[p->nr_rules++];
    memset(r, 0, sizeof(*r));
    r->glob = xstrdup(glob);
    r->times = times > 0 ? times : -1;
    return r;
}

void transport_fake_add(struct transport *t, const char *glob, const char *out,
                        const char *err_text, int rc, double delay_s, int times)
{
    struct fake_rule *r = new_rule(t, glob, times);

    r->out = xstrdup(out ? out : "");
    r->err = xstrdup(err_text ? err_text : "");
    r->rc = rc;
    r->delay_s = delay_s;
}

int transport_fake_add_file(struct transport *t, const char *glob,
                            const char *out_path, int rc, int times)
{
    struct strbuf sb = STRBUF_INIT;
    char buf[65536];
    ssize_t r;
    int fd = open(out_path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -1;
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        strbuf_add(&sb, buf, (size_t)r);
    close(fd);
    transport_fake_add(t, glob, sb.buf, "", rc, 0, times);
    strbuf_release(&sb);
    return 0;
}

void transport_fake_add_handler(struct transport *t, const char *glob,
                                fake_handler_f handler, void *arg, int times)
{
    struct fake_rule *r = new_rule(t, glob, times);

    r->out = xstrdup("");
    r->err = xstrdup("");
    r->handler = handler;
    r->arg = arg;
}

void transport_fake_fail_nth(struct transport *t, int n)
{
    P(t)->fail_nth = n;
}

void transport_fake_drop_nth(struct transport *t, int n)
{
    P(t)->drop_nth = n;
}

size_t transport_fake_ncalls(struct transport *t)
{
    return P(t)->calls.nr;
}

size_t transport_fake_count(struct transport *t, const char *glob)
{
    struct fake_priv *p = P(t);
    size_t n = 0;

    for (size_t i = 0; i < p->calls.nr; i++)
        if (!fnmatch(glob, p->calls.v[i], 0))
            n++;
    return n;
}

const char *transport_fake_call(struct transport *t, size_t i)
{
    struct fake_priv *p = P(t);
    return i < p->calls.nr ? p->calls.v[i] : NULL;
}
