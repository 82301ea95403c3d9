/*
 * sched.c - what every adapter shares: state names and normalization,
 * selection by name and environment, job names with run ids, id chunking
 * and the remote job directory.
 *
 * Slurm state normalization is parse_slurm_state.c's table
 * (doc/formats.md "Job states"), mapped onto enum sched_state here.
 */
#include "libsched/sched.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "libsched/parse_slurm.h"
#include "libutil/xalloc.h"

static const char *const state_names[] = {
    "PENDING", "RUNNING",   "SUSPENDED", "COMPLETED",
    "FAILED",  "CANCELLED", "TIMEOUT",   "UNKNOWN",
};

const char *sched_state_name(enum sched_state s)
{
    return (unsigned)s <= SCHED_UNKNOWN ? state_names[s] : "UNKNOWN";
}

enum sched_state sched_state_parse(const char *name)
{
    for (int i = 0; i <= SCHED_UNKNOWN; i++)
        if (name && !strcmp(name, state_names[i]))
            return (enum sched_state)i;
    return SCHED_UNKNOWN;
}

int sched_state_terminal(enum sched_state s)
{
    return s == SCHED_COMPLETED || s == SCHED_FAILED || s == SCHED_CANCELLED ||
           s == SCHED_TIMEOUT;
}

/* The one Slurm state table lives with the parsers (parse_slurm_state.c). */
enum sched_state sched_slurm_state(const char *raw)
{
    if (!raw)
        return SCHED_UNKNOWN;
    return sched_state_parse(slurm_job_state_normalize(raw, NULL));
}

enum sched_state sched_flux_state(const char *state, const char *result)
{
    if (!state)
        return SCHED_UNKNOWN;
    if (!strcmp(state, "DEPEND") || !strcmp(state, "PRIORITY") ||
        !strcmp(state, "SCHED") || !strcmp(state, "D") || !strcmp(state, "P") ||
        !strcmp(state, "S") || !strcmp(state, "NEW"))
        return SCHED_PENDING;
    if (!strcmp(state, "RUN") || !strcmp(state, "CLEANUP") ||
        !strcmp(state, "R") || !strcmp(state, "C"))
        return SCHED_RUNNING;
    if (!strcmp(state, "CD"))
        return SCHED_COMPLETED;
    if (!strcmp(state, "F"))
        return SCHED_FAILED;
    if (!strcmp(state, "CA"))
        return SCHED_CANCELLED;
    if (!strcmp(state, "TO"))
        return SCHED_TIMEOUT;
    if (!strcmp(state, "INACTIVE")) {
        if (!result || !*result)
            return SCHED_UNKNOWN;
        if (!strcmp(result, "COMPLETED"))
            return SCHED_COMPLETED;
        if (!strcmp(result, "CANCELED") || !strcmp(result, "CANCELLED"))
            return SCHED_CANCELLED;
        if (!strcmp(result, "TIMEOUT"))
            return SCHED_TIMEOUT;
        return SCHED_FAILED;
    }
    return SCHED_UNKNOWN;
}

void sched_job_init(struct sched_job *j, const char *id)
{
    memset(j, 0, sizeof(*j));
    if (id)
        xsnprintf(j->id, sizeof(j->id), "%.127s", id);
    j->state = SCHED_UNKNOWN;
    j->exit_code = -1;
    j->signal = -1;
    j->elapsed_s = -1;
    j->gpus = -1;
    j->cpus = -1;
    j->nodes = -1;
}

void sched_submit_result_release(struct sched_submit_result *r)
{
    strvec_clear(&r->ids);
    strvec_clear(&r->warnings);
}

const char *sched_kind_from_env(void)
{
    const char *k = getenv("EXAMLOPS_HPC_SCHEDULER");

    if (k && *k)
        return k;
    k = getenv("EXAMLOPS_SLURM_MODE");
    if (k && *k) {
        if (!strcmp(k, "real") || !strcmp(k, "slurm"))
            return "slurm";
        return k;
    }
    return "mock";
}

struct sched *sched_new(const char *kind, struct transport *t, exa_error_t *err)
{
    struct sched *s;

    if (strcmp(kind, "slurm") && strcmp(kind, "flux") && strcmp(kind, "mock")) {
        exa_err(err, EXA_EUSAGE,
                "unknown scheduler '%s' (expected slurm, flux or mock)", kind);
        return NULL;
    }
    s = xcalloc(1, sizeof(*s));
    s->t = t;
    s->submit_attempts = 3;
    s->flux_accounting = -1;
    s->slurm_accounting = -1;
    s->sacct_chunk_bytes = 96 * 1024;
    s->log_max_bytes = SCHED_LOG_MAX_DEFAULT;
    strvec_init(&s->dry_argv);
    if (!strcmp(kind, "slurm"))
        sched_slurm_init(s);
    else if (!strcmp(kind, "flux"))
        sched_flux_init(s);
    else
        sched_mock_init(s);
    return s;
}

void sched_free(struct sched *s)
{
    if (!s)
        return;
    if (s->ops->destroy)
        s->ops->destroy(s);
    strvec_clear(&s->dry_argv);
    free(s->mock_dir);
    free(s);
}

static int valid_run_id(const char *r)
{
    if (!r || !*r || strlen(r) > 64)
        return 0;
    for (; *r; r++)
        if (!((*r >= 'a' && *r <= 'z') || (*r >= 'A' && *r <= 'Z') ||
              (*r >= '0' && *r <= '9') || *r == '_' || *r == '-'))
            return 0;
    return 1;
}

int sched_submit(struct sched *s, const struct sched_submit_req *req,
                 struct sched_submit_result *out, exa_error_t *err)
{
    memset(out, 0, sizeof(*out));
    strvec_init(&out->ids);
    strvec_init(&out->warnings);
    if (!valid_run_id(req->run_id))
        return exa_err(err, EXA_EUSAGE, "invalid run id '%s'",
                       req->run_id ? req->run_id : "");
    if (!req->remote_dir || !*req->remote_dir)
        return exa_err(err, EXA_EUSAGE, "submit needs a remote directory");
    return s->ops->submit(s, req, out, err);
}

int sched_status_batch(struct sched *s, const char *const *ids, size_t n,
                       struct sched_job *out, exa_error_t *err)
{
    int rc;
    for (size_t i = 0; i < n; i++)
        sched_job_init(&out[i], ids[i]);
    s->batch_failed = 0;
    s->batch_err = (exa_error_t)EXA_ERROR_INIT;
    if (!n)
        return 0;
    rc = s->ops->status_batch(s, ids, n, out, err);
    if (rc < 0 && !s->batch_failed) {
        /* nothing could be asked: that is a failed query too */
        s->batch_failed = 1;
        if (err)
            s->batch_err = *err;
        else
            exa_err(&s->batch_err, EXA_ETRANSPORT, "status query failed");
    }
    return rc;
}

int sched_status_failed(const struct sched *s, exa_error_t *err)
{
    if (!s->batch_failed)
        return 0;
    if (err)
        *err = s->batch_err;
    return 1;
}

void sched_note_failure(struct sched *s, const exa_error_t *err)
{
    if (s->batch_failed)
        return;
    s->batch_failed = 1;
    if (err)
        s->batch_err = *err;
    else
        exa_err(&s->batch_err, EXA_ESCHED, "status query failed");
}

int sched_cancel(struct sched *s, const char *id, exa_error_t *err)
{
    return s->ops->cancel(s, id, err);
}

int sched_logs(struct sched *s, const char *id, const char *remote_dir,
               struct strbuf *out, exa_error_t *err)
{
    s->log_truncated = 0;
    if (!s->log_max_bytes)
        s->log_max_bytes = SCHED_LOG_MAX_DEFAULT;
    return s->ops->logs(s, id, remote_dir, out, err);
}

int sched_fetch_tail(struct sched *s, const char *remote, size_t max_bytes,
                     struct strbuf *out, exa_error_t *err)
{
    char nbuf[32];
    const char *argv[] = {"tail", "-c", nbuf, "--", remote, NULL};
    struct transport_result res = TRANSPORT_RESULT_INIT;
    int rc = -1;

    s->log_truncated = 0;
    if (!max_bytes)
        max_bytes = SCHED_LOG_MAX_DEFAULT;
    /* one byte more than kept tells a file of exactly max_bytes apart */
    xsnprintf(nbuf, sizeof(nbuf), "%zu", max_bytes + 1);
    if (transport_run(s->t, argv, NULL, 0, 0, &res, err) < 0)
        goto out;
    if (res.rc != 0) {
        char *nl;
        strbuf_trim(&res.err);
        nl = strchr(res.err.buf, '\n');
        if (nl)
            *nl = '\0';
        exa_err(err,
                strstr(res.err.buf, "No such file") ? EXA_ENOTFOUND
                                                    : EXA_ETRANSPORT,
                "cannot read '%s' on '%s': %s", remote, s->t->host,
                res.err.len ? res.err.buf : "tail failed");
        goto out;
    }
    if (res.out.len > max_bytes) {
        s->log_truncated = 1;
        strbuf_add(out, res.out.buf + (res.out.len - max_bytes), max_bytes);
    } else {
        strbuf_addbuf(out, &res.out);
    }
    rc = 0;
out:
    transport_result_release(&res);
    return rc;
}

const char *sched_name(const struct sched *s)
{
    return s->ops->name;
}

char *sched_job_name(const char *job_name, const char *run_id)
{
    if (job_name && *job_name)
        return xstrfmt("%s.exa-%s", job_name, run_id);
    return xstrfmt("exa-%s", run_id);
}

void sched_new_run_id(char out[13])
{
    unsigned char b[6];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t r = fd >= 0 ? read(fd, b, sizeof(b)) : -1;

    if (fd >= 0)
        close(fd);
    if (r != (ssize_t)sizeof(b)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long v = (unsigned long long)ts.tv_nsec ^
                               ((unsigned long long)getpid() << 20) ^
                               (unsigned long long)ts.tv_sec;
        for (int i = 0; i < 6; i++)
            b[i] = (unsigned char)(v >> (i * 8));
    }
    for (int i = 0; i < 6; i++)
        xsnprintf(out + 2 * i, 3, "%02x", b[i]);
}

void sched_chunk_ids(const char *const *ids, size_t n, size_t max_bytes,
                     struct strvec *out)
{
    struct strbuf sb = STRBUF_INIT;

    for (size_t i = 0; i < n; i++) {
        size_t add = strlen(ids[i]) + (sb.len ? 1 : 0);
        if (sb.len && sb.len + add > max_bytes) {
            strvec_push(out, sb.buf);
            strbuf_reset(&sb);
            add = strlen(ids[i]);
        }
        if (sb.len)
            strbuf_addch(&sb, ',');
        strbuf_addstr(&sb, ids[i]);
    }
    if (sb.len)
        strvec_push(out, sb.buf);
    strbuf_release(&sb);
}

char *sched_remote_jobdir(struct sched *s, const char *run_id, exa_error_t *err)
{
    const char *base = getenv("EXAMLOPS_HPC_REMOTE_WORKDIR");
    char *dir;

    if (!base || !*base)
        base = getenv("EXAMLOPS_HPC_WORKDIR");
    if (base && *base)
        return xstrfmt("%s/%s", base, run_id);
    if (!strcmp(s->t->ops->kind, "ssh")) {
        const char *argv[] = {"printenv", "HOME", NULL};
        struct transport_result res = TRANSPORT_RESULT_INIT;
        if (transport_run_ok(s->t, argv, NULL, 0, &res, err) < 0) {
            transport_result_release(&res);
            return NULL;
        }
        strbuf_trim(&res.out);
        if (res.out.buf[0] != '/') {
            exa_err(err, EXA_ETRANSPORT,
                    "cannot find the home directory on '%s'", s->t->host);
            transport_result_release(&res);
            return NULL;
        }
        dir = xstrfmt("%s/.local/share/examlops/jobs/%s", res.out.buf, run_id);
        transport_result_release(&res);
        return dir;
    }
    {
        const char *x = getenv("XDG_DATA_HOME");
        const char *home = getenv("HOME");
        if (x && *x)
            return xstrfmt("%s/examlops/jobs/%s", x, run_id);
        return xstrfmt("%s/.local/share/examlops/jobs/%s", home ? home : "/tmp",
                       run_id);
    }
}

static size_t hash_bytes(const char *s, size_t len)
{
    size_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static const char *idmap_key(const struct sched_idmap *m, size_t i)
{
    return m->key ? m->key(m->ids[i]) : m->ids[i];
}

void sched_idmap_build(struct sched_idmap *m, const char *const *ids, size_t n,
                       const char *(*key)(const char *))
{
    m->cap = 16;
    while (m->cap < n * 2)
        m->cap <<= 1;
    m->slot = xmalloc(m->cap * sizeof(*m->slot));
    m->next = xmalloc((n ? n : 1) * sizeof(*m->next));
    m->ids = ids;
    m->key = key;
    for (size_t i = 0; i < m->cap; i++)
        m->slot[i] = -1;
    /* insert in reverse so chains list indices in ascending order */
    for (size_t k = n; k-- > 0;) {
        const char *kk = idmap_key(m, k);
        size_t len = strlen(kk), h = hash_bytes(kk, len) & (m->cap - 1);
        m->next[k] = -1;
        while (m->slot[h] >= 0) {
            const char *o = idmap_key(m, (size_t)m->slot[h]);
            if (!strcmp(o, kk)) {
                m->next[k] = m->slot[h];
                break;
            }
            h = (h + 1) & (m->cap - 1);
        }
        m->slot[h] = (long)k;
    }
}

long sched_idmap_find(const struct sched_idmap *m, const char *s, size_t len)
{
    size_t h = hash_bytes(s, len) & (m->cap - 1);

    while (m->slot[h] >= 0) {
        const char *o = idmap_key(m, (size_t)m->slot[h]);
        if (strlen(o) == len && !memcmp(o, s, len))
            return m->slot[h];
        h = (h + 1) & (m->cap - 1);
    }
    return -1;
}

void sched_idmap_free(struct sched_idmap *m)
{
    free(m->slot);
    free(m->next);
    memset(m, 0, sizeof(*m));
}
