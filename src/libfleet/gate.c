/*
 * gate.c - open a cluster for a purpose (see gate.h).
 *
 * Before this file each command resolved its cluster, built its transport
 * and decided for itself whether approval and the pinned host key
 * mattered, and several did not. Here the order is fixed: resolve (name,
 * else the environment target, else mock), compare the pinned host key
 * with the approved fingerprint, require ACTIVE for scheduling, then build
 * the transport and the adapter. A first `true` over ssh lets ssh itself
 * judge the server's key before any real command runs; other connection
 * failures are left to the commands (an outage is not a refusal).
 *
 * The jobs-table writers live here too, so a job's status and accounting
 * are written by one function whoever submitted the job.
 */
#include "libfleet/gate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libfleet/connect.h"
#include "libfleet/registry.h"
#include "libsched/jobid.h"
#include "libsched/runscript.h"
#include "libstore/audit.h"
#include "libstore/hostkeys.h"
#include "libutil/atomic.h"
#include "libutil/strbuf.h"
#include "libutil/subprocess.h"
#include "libutil/target.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

struct gate {
    char *name;
    char *kind; /* slurm | flux | mock | other (no adapter) */
    int mock;
    store_t *st;
    int own_st;
    char *regpath;
    char *actor;
    struct fleet f;
    struct fleet_cluster *c;
    struct transport *t;
    struct sched *s;
};

static int streq0(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

/* The one local rule (libutil/target.h), as connect.c applies it. */
static int cluster_is_ssh(const struct fleet_cluster *c)
{
    return !target_is_local(c->def.transport, c->def.host);
}

static void out_name(const struct gate_req *req, const char *name)
{
    if (req->cluster_out && req->cluster_out_len)
        snprintf(req->cluster_out, req->cluster_out_len, "%s",
                 name ? name : "");
}

void gate_close(struct gate *g)
{
    if (!g)
        return;
    sched_free(g->s);
    transport_close(g->t);
    fleet_release(&g->f);
    if (g->own_st)
        store_close(g->st);
    free(g->name);
    free(g->kind);
    free(g->regpath);
    free(g->actor);
    free(g);
}

const char *gate_name(const struct gate *g)
{
    return g->name;
}

const char *gate_scheduler(const struct gate *g)
{
    return g->kind;
}

int gate_is_mock(const struct gate *g)
{
    return g->mock;
}

const struct fleet_cluster *gate_cluster(const struct gate *g)
{
    return g->c;
}

struct sched *gate_sched(struct gate *g)
{
    return g->s;
}

struct transport *gate_transport(struct gate *g)
{
    return g->t;
}

store_t *gate_store(struct gate *g)
{
    return g->st;
}

int gate_is_mock_job(const char *cluster, const char *scheduler)
{
    return cluster && scheduler && !strcmp(scheduler, "mock") &&
           (!strcmp(cluster, GATE_MOCK_CLUSTER) ||
            !strcmp(cluster, GATE_LOCAL_CLUSTER));
}

/* ---- host keys ---- */

/* The most of a known_hosts file read (1 MiB; a pin holds a few lines). */
#define PIN_MAX_BYTES (1u << 20)

/*
 * Read path whole (at most PIN_MAX_BYTES). *whole (may be NULL) is 1 when
 * the text is the entire file and holds no NUL byte, i.e. when what C
 * string code sees is everything ssh will read; 0 otherwise.
 */
static char *read_text_whole(const char *path, int *eno, int *whole)
{
    FILE *fp = fopen(path, "re");
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    int cut = 0;
    if (!fp) {
        *eno = errno;
        return NULL;
    }
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) {
        if (sb.len >= PIN_MAX_BYTES) {
            cut = 1;
            break;
        }
        strbuf_add(&sb, buf, n);
    }
    fclose(fp);
    if (whole)
        *whole = !cut && strlen(sb.buf) == sb.len;
    return strbuf_detach(&sb, NULL);
}

static char *read_text(const char *path, int *eno)
{
    return read_text_whole(path, eno, NULL);
}

char *gate_pinned_fingerprint(const char *cluster, exa_error_t *err)
{
    char *path = fleet_known_hosts_path(cluster), *text, *fpr;
    int eno = 0;
    text = read_text(path, &eno);
    if (!text) {
        exa_err(err, EXA_ENOTFOUND, "no pinned host key for '%s' in '%s': %s",
                cluster, path, strerror(eno));
        free(path);
        return NULL;
    }
    fpr = fleet_host_key_fingerprint(text, err);
    free(text);
    free(path);
    return fpr;
}

/* Call fn(line, len, arg) for each key line of known_hosts text: not
 * blank, not a comment, not an @revoked line (which trusts nothing). */
static void kh_key_lines(const char *text,
                         void (*fn)(const char *, size_t, void *), void *arg)
{
    const char *p = text;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t'))
            q++;
        if (q < p + n && *q != '#' && *q != '\r' &&
            !(p + n - q >= 8 && !strncmp(q, "@revoked", 8)))
            fn(p, n, arg);
        p += n + (e ? 1 : 0);
    }
}

struct kh_match {
    const char *fpr;
    struct strbuf *keep; /* lines with fpr (gate_host_key_lines) */
    char *other;         /* first other fingerprint (gate_check_host_key) */
    int other_seen, n;
};

static void kh_match_line(const char *line, size_t len, void *arg)
{
    struct kh_match *m = arg;
    char *l = xstrndup(line, len);
    char *f = fleet_pubkey_fingerprint(l, NULL);
    free(l);
    m->n++;
    if (f && !strcmp(f, m->fpr)) {
        if (m->keep) {
            strbuf_add(m->keep, line, len);
            strbuf_addch(m->keep, '\n');
        }
    } else if (!m->other_seen) {
        m->other_seen = 1;
        m->other = f;
        f = NULL;
    }
    free(f);
}

int gate_host_key_lines(const char *text, const char *fpr, struct strbuf *out)
{
    struct kh_match m = {0};
    size_t before = out->len;
    m.fpr = fpr;
    m.keep = out;
    kh_key_lines(text, kh_match_line, &m);
    free(m.other);
    return out->len > before ? 0 : -1;
}

/* Run a local helper (ssh-keyscan), no shell; its stdout into out. */
static int run_helper(const char *const *argv, double timeout_s,
                      struct strbuf *out, exa_error_t *err)
{
    struct subprocess_opts o = {0};
    struct subprocess_result r = SUBPROCESS_RESULT_INIT;
    int rc;
    o.timeout_s = timeout_s;
    o.max_output = 1u << 20;
    if (subprocess_run(argv, &o, &r, err) < 0) {
        subprocess_result_release(&r);
        return -1;
    }
    strbuf_addbuf(out, &r.out);
    rc = r.exit_code;
    if (rc != 0 || !r.out.len) {
        strbuf_rtrim(&r.err);
        exa_err(err, EXA_ETRANSPORT, "'%s' exited %d%s%s", argv[0], rc,
                r.err.len ? ": " : "", r.err.buf);
        rc = -1;
    }
    subprocess_result_release(&r);
    return rc;
}

/* ssh-keyscan -p PORT -- HOST: the keys the server offers now. */
static int keyscan(const char *host, int port, struct strbuf *out,
                   exa_error_t *err)
{
    char portbuf[16];
    const char *argv[] = {"ssh-keyscan", "-p", portbuf, "--", host, NULL};
    snprintf(portbuf, sizeof(portbuf), "%d", port > 0 ? port : 22);
    return run_helper(argv, 30, out, err);
}

/* Refuse cluster c: mark it and fill err with both fingerprints. */
static int mismatch(store_t *st, const struct fleet_cluster *c,
                    const char *approved, const char *seen, const char *where,
                    exa_error_t *err)
{
    exa_error_t e = EXA_ERROR_INIT;
    /* the observation is best effort; the refusal is not */
    if (st)
        store_hostkey_mismatch_set(st, c->def.name, approved, seen, &e);
    return exa_err(err, EXA_ETRANSPORT,
                   "host key for '%s' changed: cluster '%s' was approved "
                   "with %s but %s %s",
                   c->def.host ? c->def.host : "?", c->def.name,
                   approved ? approved : "no host key", where,
                   seen ? seen : "no key");
}

int gate_check_host_key(store_t *st, const struct fleet_cluster *c,
                        exa_error_t *err)
{
    const char *approved = c->row.host_key_fingerprint;
    exa_error_t e = EXA_ERROR_INIT;
    char *pinned;
    int rc = 0;

    if (!cluster_is_ssh(c) || !approved || !*approved)
        return 0; /* never pinned (clusters.yaml only): ssh decides */
    pinned = gate_pinned_fingerprint(c->def.name, &e);
    if (pinned && !strcmp(pinned, approved)) {
        /* ssh trusts every key of the file: each must be the approved one
         * (a key appended by 'ssh-keyscan >>' after a re-key is not) */
        char *path = fleet_known_hosts_path(c->def.name), *text;
        struct kh_match m = {0};
        int eno = 0, whole = 0;
        m.fpr = approved;
        if ((text = read_text_whole(path, &eno, &whole)))
            kh_key_lines(text, kh_match_line, &m);
        /* a NUL byte or a file past the cap hides lines from the check
         * that ssh would still read: refuse what cannot be checked */
        if (!text || !whole)
            m.other_seen = 1;
        free(text);
        free(path);
        if (m.other_seen) {
            free(pinned);
            pinned = m.other ? m.other : xstrdup("an unreadable key");
        }
    }
    if (!pinned || strcmp(pinned, approved))
        rc = mismatch(st, c, approved, pinned, "the pinned known_hosts holds",
                      err);
    else if (st)
        store_hostkey_mismatch_clear(st, c->def.name, &e);
    free(pinned);
    return rc;
}

int gate_check_error(struct gate *g, exa_error_t *err)
{
    struct strbuf scan = STRBUF_INIT;
    char *offered = NULL;
    int rc;
    if (!g || !g->c || !err || err->code != EXA_ETRANSPORT)
        return 0;
    if (!strstr(err->text, "host key for '") ||
        (!strstr(err->text, "changed") && !strstr(err->text, "unknown")))
        return 0;
    if (strstr(err->text, "was approved with"))
        return 1; /* already ours */
    if (keyscan(g->c->def.host, g->c->def.ssh_port, &scan, NULL) == 0)
        offered = fleet_host_key_fingerprint(scan.buf, NULL);
    if (offered && g->c->row.host_key_fingerprint &&
        !strcmp(offered, g->c->row.host_key_fingerprint)) {
        /* The server still offers the approved key: what ssh refused is
         * the pin (or the name it is pinned under), not the server. Say
         * so, and do not mark the cluster as a mismatch. */
        exa_err(err, EXA_ETRANSPORT,
                "ssh refused the host key of '%s' (cluster '%s'), although "
                "the server offers the approved %s: the pinned known_hosts "
                "does not vouch for it ('exa hpc connect' pins it again)",
                g->c->def.host ? g->c->def.host : "?", g->c->def.name, offered);
    } else {
        rc = mismatch(g->st, g->c, g->c->row.host_key_fingerprint, offered,
                      "the server offers", err);
        (void)rc;
    }
    strbuf_release(&scan);
    free(offered);
    return 1;
}

/* Let ssh judge the server's key once, before the caller's commands. */
static int probe_ssh(struct gate *g, exa_error_t *err)
{
    const char *argv[] = {"true", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    exa_error_t e = EXA_ERROR_INIT;
    int rc = transport_run(g->t, argv, NULL, 0, 0, &r, &e);
    transport_result_release(&r);
    if (rc == 0)
        return 0;
    if (gate_check_error(g, &e)) {
        if (err)
            *err = e;
        return -1;
    }
    return 0; /* an outage is the commands' business */
}

/* ---- the environment target ---- */

struct env_target {
    const char *kind, *transport, *host, *user, *key;
    int port;
};

static int env_target(struct env_target *t, exa_error_t *err)
{
    const char *port = getenv("EXAMLOPS_HPC_SSH_PORT");
    memset(t, 0, sizeof(*t));
    t->kind = sched_kind_from_env();
    t->transport = getenv("EXAMLOPS_HPC_TRANSPORT");
    t->host = getenv("EXAMLOPS_HPC_SSH_HOST");
    t->user = getenv("EXAMLOPS_HPC_SSH_USER");
    t->key = getenv("EXAMLOPS_HPC_SSH_KEY");
    if (t->host && !*t->host)
        t->host = NULL;
    if (t->user && !*t->user)
        t->user = NULL;
    if (t->key && !*t->key)
        t->key = NULL;
    if (!t->transport || !*t->transport)
        t->transport = t->host ? "ssh" : "local";
    if (strcmp(t->transport, "ssh") && strcmp(t->transport, "local"))
        return exa_err(err, EXA_ECONFIG,
                       "unknown EXAMLOPS_HPC_TRANSPORT '%s' (expected local "
                       "or ssh)",
                       t->transport);
    t->port = 22;
    if (port && *port) {
        char *end;
        long p;
        errno = 0;
        p = strtol(port, &end, 10);
        if (errno || *end || p < 1 || p > 65535)
            return exa_err(err, EXA_ECONFIG,
                           "EXAMLOPS_HPC_SSH_PORT must be a port number, not "
                           "'%s'",
                           port);
        t->port = (int)p;
    }
    if (!strcmp(t->transport, "ssh") && !t->host)
        return exa_err(err, EXA_ECONFIG,
                       "EXAMLOPS_HPC_TRANSPORT is 'ssh' but "
                       "EXAMLOPS_HPC_SSH_HOST is not set");
    /* the one local rule, as transport_from_env() applies it */
    {
        const char *raw = getenv("EXAMLOPS_HPC_TRANSPORT");
        if (target_is_local(raw && *raw ? raw : NULL, t->host)) {
            t->transport = "local";
            t->host = NULL;
        }
    }
    return 0;
}

static int target_matches(const struct env_target *t,
                          const struct fleet_cluster *c)
{
    int ssh = cluster_is_ssh(c);
    if (!streq0(c->def.scheduler, t->kind))
        return 0;
    if (ssh != !strcmp(t->transport, "ssh"))
        return 0;
    if (!ssh)
        return 1;
    return streq0(c->def.host, t->host) && c->def.ssh_port == t->port &&
           streq0(c->def.ssh_user, t->user);
}

char *gate_env_name(const char *scheduler, const char *transport,
                    const char *host, int port)
{
    char *s;
    if (transport && !strcmp(transport, "ssh"))
        s = xstrfmt("env-%s-%s-%d", scheduler ? scheduler : "unknown",
                    host ? host : "", port > 0 ? port : 22);
    else
        s = xstrfmt("env-%s-local", scheduler ? scheduler : "unknown");
    for (char *p = s; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
            *p = '-';
    if (strlen(s) > 63)
        s[63] = '\0';
    return s;
}

/* Does the known_hosts line's host field name host:port? */
static int kh_line_names(const char *line, size_t len, const char *host,
                         int port)
{
    size_t hl = 0;
    char want[300];
    const char *p = line;
    while (hl < len && line[hl] != ' ' && line[hl] != '\t')
        hl++;
    if (port == 22)
        snprintf(want, sizeof(want), "%s", host);
    else
        snprintf(want, sizeof(want), "[%s]:%d", host, port);
    while (p < line + hl) {
        const char *e = memchr(p, ',', (size_t)(line + hl - p));
        size_t n = e ? (size_t)(e - p) : (size_t)(line + hl - p);
        if (n == strlen(want) && !memcmp(p, want, n))
            return 1;
        p += n + 1;
    }
    return 0;
}

/* The host key lines to pin for an environment target: its entries in
 * EXAMLOPS_HPC_SSH_KNOWN_HOSTS, else what ssh-keyscan reads now. */
static int target_host_keys(const struct env_target *t, struct strbuf *out,
                            exa_error_t *err)
{
    const char *kh = getenv("EXAMLOPS_HPC_SSH_KNOWN_HOSTS");
    if (kh && *kh) {
        int eno = 0;
        char *text = read_text(kh, &eno);
        const char *p = text;
        while (p && *p) {
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n && *p != '#' && kh_line_names(p, n, t->host, t->port)) {
                strbuf_add(out, p, n);
                strbuf_addch(out, '\n');
            }
            p += n + (e ? 1 : 0);
        }
        free(text);
        if (out->len)
            return 0;
    }
    if (keyscan(t->host, t->port, out, err) < 0)
        return exa_err_prefix(err, "cannot read the host key of '%s' port %d",
                              t->host, t->port);
    return 0;
}

/* Register the unmatched target PENDING; always fails (not approved). */
static int register_target(struct gate *g, const struct env_target *t,
                           const struct gate_req *req, exa_error_t *err)
{
    struct gov_connect_req q = {0};
    struct gov_result res = {0};
    struct strbuf keys = STRBUF_INIT;
    char *base = gate_env_name(t->kind, t->transport, t->host, t->port);
    char *name = xstrdup(base), *hfpr = NULL, *kfpr = NULL, *pub = NULL;
    char *khdir = NULL, *khpath = NULL;
    int rc = -1;

    for (int i = 2; fleet_find(&g->f, name) && i < 100; i++) {
        free(name);
        name = xstrfmt("%.58s-%d", base, i);
    }
    if (!strcmp(t->transport, "ssh")) {
        if (target_host_keys(t, &keys, err) < 0)
            goto out;
        if (!(hfpr = fleet_host_key_fingerprint(keys.buf, err)))
            goto out;
        {
            struct strbuf one = STRBUF_INIT;
            gate_host_key_lines(keys.buf, hfpr, &one);
            strbuf_release(&keys);
            keys = one;
        }
        khdir = fleet_known_hosts_dir();
        khpath = fleet_known_hosts_path(name);
        if (mkdir_p(khdir, 0700, err) < 0 ||
            atomic_write_file(khpath, keys.buf, keys.len, 0600, err) < 0)
            goto out;
    }
    if (t->key) {
        pub = xstrfmt("%s.pub", t->key);
        kfpr = fleet_pubkey_file_fingerprint(pub, NULL);
    }
    q.name = name;
    q.scheduler = t->kind;
    q.transport = t->transport;
    q.host = t->host;
    q.ssh_user = t->user;
    q.ssh_port = t->port;
    q.ssh_key = t->key;
    q.key_fingerprint = kfpr;
    q.host_key_fingerprint = hfpr;
    if (gov_connect(g->st, g->regpath, &q, g->actor, &res, err) < 0)
        goto out;
    out_name(req, name);
    if (!strcmp(t->transport, "ssh"))
        exa_err(err, EXA_ENOTAPPROVED,
                "the environment's target (%s over ssh to %s%s%s port %d) is "
                "no registered cluster: registered it as '%s' (PENDING) — a "
                "sysadmin must approve it ('exa hpc approve %s')",
                t->kind, t->user ? t->user : "", t->user ? "@" : "", t->host,
                t->port, name, name);
    else
        exa_err(err, EXA_ENOTAPPROVED,
                "the environment's target (%s, local transport) is no "
                "registered cluster: registered it as '%s' (PENDING) — a "
                "sysadmin must approve it ('exa hpc approve %s')",
                t->kind, name, name);
out:
    strbuf_release(&keys);
    free(base);
    free(name);
    free(hfpr);
    free(kfpr);
    free(pub);
    free(khdir);
    free(khpath);
    return rc;
}

/* Resolve the environment target to a registered cluster name. */
static int resolve_env(struct gate *g, const struct gate_req *req, char **name,
                       exa_error_t *err)
{
    struct env_target t;
    struct strbuf hits = STRBUF_INIT;
    const char *first = NULL;
    int nhits = 0;

    if (env_target(&t, err) < 0)
        return -1;
    if (strcmp(t.kind, "slurm") && strcmp(t.kind, "flux") &&
        strcmp(t.kind, "mock"))
        return exa_err(err, EXA_EUSAGE,
                       "unknown scheduler '%s' (set EXAMLOPS_HPC_SCHEDULER "
                       "to slurm, flux or mock)",
                       t.kind);
    for (size_t i = 0; i < g->f.nr; i++)
        if (target_matches(&t, &g->f.v[i])) {
            if (!nhits++)
                first = g->f.v[i].def.name;
            strbuf_addf(&hits, "%s%s", nhits > 1 ? ", " : "",
                        g->f.v[i].def.name);
        }
    if (nhits == 1) {
        *name = xstrdup(first);
        strbuf_release(&hits);
        return 0;
    }
    if (nhits > 1) {
        exa_err(err, EXA_EUSAGE,
                "the environment's target matches several clusters (%s): "
                "pass --cluster",
                hits.buf);
        strbuf_release(&hits);
        return -1;
    }
    strbuf_release(&hits);
    return register_target(g, &t, req, err);
}

/* ---- open ---- */

/* Does the environment name a remote host (transport_from_env() would
 * build an ssh transport)? Mock mode never does: the mock scheduler runs
 * the payload through its transport, so mock over ssh is a target like
 * any other (resolve_env()), not mock mode. */
static int env_wants_ssh(void)
{
    const char *k = getenv("EXAMLOPS_HPC_TRANSPORT");
    const char *h = getenv("EXAMLOPS_HPC_SSH_HOST");
    if (k && *k)
        return !strcmp(k, "ssh");
    return h && *h;
}

static int open_mock(struct gate *g, const struct gate_req *req,
                     exa_error_t *err)
{
    g->mock = 1;
    g->kind = xstrdup("mock");
    if (!g->name)
        g->name = xstrdup(GATE_MOCK_CLUSTER);
    out_name(req, g->name);
    /* mock mode is local: a forced mock (a mock job's row) must not reach
     * the environment's host, which nobody approved */
    if (env_wants_ssh())
        g->t = transport_local_new();
    else if (!(g->t = transport_from_env(err)))
        return -1;
    if (!(g->s = sched_new("mock", g->t, err)))
        return -1;
    return 0;
}

struct gate *gate_open(const struct gate_req *req, exa_error_t *err)
{
    struct gate *g = xcalloc(1, sizeof(*g));
    const char *name = req->cluster;
    char *resolved = NULL;

    g->actor = req->actor ? xstrdup(req->actor) : audit_actor();
    if (req->st) {
        g->st = req->st;
    } else {
        if (!(g->st = store_open(req->db_path, err)))
            goto fail;
        g->own_st = 1;
    }
    if ((!name || !*name) && req->use_env && !req->mock) {
        const char *c = getenv("EXAMLOPS_HPC_CLUSTER");
        name = c && *c ? c : NULL;
    }
    if (req->mock ||
        ((!name || !*name) &&
         (!req->use_env ||
          (!strcmp(sched_kind_from_env(), "mock") && !env_wants_ssh())))) {
        g->name = name && *name ? xstrdup(name) : NULL;
        if (open_mock(g, req, err) < 0)
            goto fail;
        return g;
    }
    g->regpath =
        req->regpath ? xstrdup(req->regpath) : registry_default_path(err);
    if (!g->regpath || fleet_load(g->st, g->regpath, &g->f, err) < 0)
        goto fail;
    if (!name || !*name) {
        if (resolve_env(g, req, &resolved, err) < 0)
            goto fail;
        name = resolved;
    }
    out_name(req, name);
    if (cluster_name_check(name, NULL, err) < 0)
        goto fail;
    if (!(g->c = fleet_find(&g->f, name))) {
        exa_err(err, EXA_ENOTFOUND,
                "unknown cluster: '%s' (run 'exa hpc connect' first)", name);
        goto fail;
    }
    g->name = xstrdup(name);
    g->kind = xstrdup(g->c->def.scheduler ? g->c->def.scheduler : "unknown");
    if (req->purpose == GATE_SCHEDULE) {
        if (fleet_require_active(&g->f, name, err) < 0)
            goto fail;
        if (strcmp(g->kind, "slurm") && strcmp(g->kind, "flux") &&
            strcmp(g->kind, "mock")) {
            exa_err(err, EXA_EUSAGE,
                    "cluster '%s' has scheduler '%s': scheduling needs "
                    "slurm, flux or mock",
                    name, g->kind);
            goto fail;
        }
    }
    if (gate_check_host_key(g->st, g->c, err) < 0)
        goto fail;
    if (!(g->t = fleet_cluster_transport(g->c, err)))
        goto fail;
    if (cluster_is_ssh(g->c) && probe_ssh(g, err) < 0)
        goto fail;
    if (!strcmp(g->kind, "slurm") || !strcmp(g->kind, "flux") ||
        !strcmp(g->kind, "mock")) {
        if (!(g->s = sched_new(g->kind, g->t, err)))
            goto fail;
    }
    free(resolved);
    return g;
fail:
    free(resolved);
    gate_close(g);
    return NULL;
}

/* ---- the jobs table ---- */

/* The audit binding, checked again in the job row's transaction. */
static int bound_to_chain(store_t *st, const struct cluster_row *row, void *arg,
                          exa_error_t *err)
{
    (void)arg;
    return governance_verify_cluster(st, row, err);
}

int gate_job_insert(struct gate *g, const struct job_rec *j, long long *id_out,
                    exa_error_t *err)
{
    struct job_rec row = *j; /* shallow: only the cluster is swapped */
    exa_error_t e = EXA_ERROR_INIT;
    row.cluster = g->name;
    if (g->mock)
        return store_job_upsert(g->st, &row, id_out, err);
    if (store_job_insert_checked(g->st, &row, bound_to_chain, NULL, id_out,
                                 &e) == 0)
        return 0;
    if (e.code == EXA_ENOTAPPROVED && g->s) {
        /* rejected while we submitted: take the job back */
        exa_error_t ce = EXA_ERROR_INIT;
        if (sched_cancel(g->s, j->job_id, &ce) == 0)
            exa_err_prefix(&e, "job cancelled");
    }
    if (err)
        *err = e;
    return -1;
}

int gate_recheck_active(struct gate *g, exa_error_t *err)
{
    struct cluster_row row = {0};
    int found, rc = -1;
    if (g->mock)
        return 0;
    found = store_cluster_get(g->st, g->name, &row, err);
    if (found < 0)
        return -1;
    if (!found)
        rc = exa_err(err, EXA_ENOTFOUND, "unknown cluster: '%s'", g->name);
    else if (!row.state || strcmp(row.state, "ACTIVE"))
        rc = exa_err(err, EXA_ENOTAPPROVED,
                     "cluster '%s' is %s: nothing is recorded ('exa hpc "
                     "approve %s')",
                     g->name, row.state ? row.state : "unknown", g->name);
    else
        rc = bound_to_chain(g->st, &row, NULL, err);
    cluster_row_release(&row);
    return rc;
}

void gate_submit_out_release(struct gate_submit_out *out)
{
    sched_submit_result_release(&out->sr);
    strvec_clear(&out->command);
    free(out->script);
    out->script = NULL;
    free(out->remote_dir);
    out->remote_dir = NULL;
}

/* Cancel the ids of sr from index k on (a submission exa will not keep);
 * a cancel that fails is a warning of sr: "job N submitted but <why>, and
 * cancelling it failed: ...". */
static void cancel_ids(struct gate *g, struct sched_submit_result *sr, size_t k,
                       const char *why)
{
    for (; k < sr->ids.nr; k++) {
        exa_error_t ce = EXA_ERROR_INIT;
        if (sched_cancel(g->s, sr->ids.v[k], &ce) < 0)
            strvec_pushf(&sr->warnings,
                         "job %s submitted but %s, and cancelling it "
                         "failed: %s",
                         sr->ids.v[k], why, ce.text);
    }
}

int gate_submit(struct gate *g, const struct gate_submit_req *r,
                struct gate_submit_out *out, exa_error_t *err)
{
    static const struct sched_resources none = SCHED_RESOURCES_INIT;
    const struct sched_resources *res = r->res ? r->res : &none;
    char tmpdir[] = "/tmp/exa-submit-XXXXXX";
    char *payload_remote = NULL, *runsh = NULL, *title = NULL;
    const char *base;
    struct strvec payload = STRVEC_INIT;
    struct strbuf text = STRBUF_INIT;
    int rc = -1, made = 0;

    memset(out, 0, sizeof(*out));
    strvec_init(&out->sr.ids);
    strvec_init(&out->sr.warnings);
    strvec_init(&out->command);
    if (!g->s)
        return exa_err(err, EXA_EUSAGE,
                       "cluster '%s' has no scheduler exa can submit to",
                       g->name);
    sched_new_run_id(out->run_id);
    if (!(out->remote_dir = sched_remote_jobdir(g->s, out->run_id, err)))
        goto out;
    base = strrchr(r->script, '/');
    base = base ? base + 1 : r->script;
    payload_remote = xstrfmt("%s/payload-%s", out->remote_dir, base);
    /* the staged files are made durable while sbatch runs (the command
     * the submission runs next), and checked before any job is recorded */
    if (!r->dry_run && g->t)
        transport_defer_sync(g->t, 1);
    if (!r->dry_run &&
        transport_put(g->t, r->script, payload_remote, err) < 0) {
        gate_check_error(g, err);
        goto out;
    }
    strvec_pushl(&payload, "bash", payload_remote, NULL);
    for (size_t i = 0; r->args && r->args[i]; i++)
        strvec_push(&payload, r->args[i]);
    title = xstrfmt("exa hpc submit %s (run %s)", base, out->run_id);
    {
        struct runscript rs = {title, out->remote_dir, NULL,
                               (const char *const *)payload.v};
        if (runscript_render(&rs, &text, err) < 0)
            goto out;
    }
    if (!mkdtemp(tmpdir)) {
        exa_err(err, EXA_ECONFIG, "cannot create a temporary directory: %s",
                strerror(errno));
        goto out;
    }
    made = 1;
    runsh = xstrfmt("%s/run.sh", tmpdir);
    if (runscript_write(runsh, text.buf, err) < 0)
        goto out;
    {
        struct sched_submit_req req = {runsh, out->remote_dir, out->run_id,
                                       res};
        sched_submit_result_release(&out->sr);
        g->s->dry_run = r->dry_run;
        rc = sched_submit(g->s, &req, &out->sr, err);
        g->s->dry_run = 0;
        if (rc < 0) {
            gate_check_error(g, err);
            goto out;
        }
        rc = -1;
        if (r->dry_run) { /* rendered, nothing submitted or recorded */
            strvec_pushv(&out->command, (const char **)g->s->dry_argv.v);
            out->script = strbuf_detach(&text, NULL);
            rc = 0;
            goto out;
        }
    }
    if (g->t) {
        exa_error_t e = EXA_ERROR_INIT;
        transport_defer_sync(g->t, 0);
        if (transport_sync_pending(g->t, &e) < 0) {
            /* a job whose files may not survive a crash is not kept */
            cancel_ids(g, &out->sr, 0, "its files were not written");
            exa_err_prefix(&e, "staging the job's files (submitted jobs "
                               "cancelled)");
            if (err)
                *err = e;
            goto out;
        }
    }
    for (size_t i = 0; i < out->sr.ids.nr; i++) {
        struct job_rec j;
        char now[32];
        char *name = sched_job_name(res->job_name, out->run_id);
        exa_error_t e = EXA_ERROR_INIT;
        job_rec_init(&j);
        store_now(now, sizeof(now));
        j.scheduler = g->kind;
        j.job_id = (char *)out->sr.ids.v[i];
        j.run_uuid = out->run_id;
        j.job_name = name;
        j.kind = (char *)(r->kind ? r->kind : "batch");
        j.state = "PENDING";
        j.submit_time = now;
        j.remote_dir = out->remote_dir;
        if (res->nodes)
            j.nodes = res->nodes;
        if (res->gpus)
            j.gpus = res->gpus;
        if (res->cpus_per_task)
            j.cpus = res->cpus_per_task * (res->ntasks ? res->ntasks : 1);
        if (gate_job_insert(g, &j, NULL, &e) < 0) {
            /* A job exa could not record was never checked ACTIVE in the
             * job row's transaction and would be invisible to status,
             * reconcile and accounting: cancel it and every later id of
             * this submission (gate_job_insert() cancelled this one
             * already when the cluster stopped being ACTIVE). */
            size_t k = e.code == EXA_ENOTAPPROVED ? i + 1 : i;
            free(name);
            cancel_ids(g, &out->sr, k, "not recorded");
            if (err)
                *err = e;
            goto out;
        }
        free(name);
    }
    rc = 0;
out:
    if (g->t && !r->dry_run) { /* a failure left files pending: sync them */
        transport_defer_sync(g->t, 0);
        (void)transport_sync_pending(g->t, NULL);
    }
    if (runsh)
        unlink(runsh);
    if (made)
        rmdir(tmpdir);
    strvec_clear(&payload);
    strbuf_release(&text);
    free(payload_remote);
    free(runsh);
    free(title);
    return rc;
}

/* Scheduler time (Slurm local ISO, Flux epoch) -> UTC "…Z"; "" if none. */
static int to_utc(const char *s, char *buf, size_t n, time_t *epoch)
{
    time_t t = time_parse_sched(s);
    buf[0] = '\0';
    if (t < 0)
        return -1;
    time_format_iso8601(t, buf, n);
    if (epoch)
        *epoch = t;
    return 0;
}

int gate_job_record(struct gate *g, const struct sched_job *j, int tries,
                    struct sched_acct *acct, exa_error_t *err)
{
    return gate_record_status(g->st, g->s, g->name, j, tries, acct, err);
}

/*
 * Write what j says about its job on cluster, with the accounting a (NULL:
 * none; then a terminal job's run time and hours come from j itself).
 * Returns 1 when written, 0 when the job is not recorded (nothing
 * written), -1 with err for a database error.
 */
static int record_one(store_t *st, const char *cluster,
                      const struct sched_job *j, const struct sched_acct *acct,
                      exa_error_t *err)
{
    struct job_rec ch;
    struct sched_acct a;
    char sub[TIME_ISO_MAX], start[TIME_ISO_MAX], end[TIME_ISO_MAX];
    time_t ts = 0, tst = 0, te = 0;
    int has_sub, has_start, has_end, term;
    exa_error_t e = EXA_ERROR_INIT;

    term = sched_state_terminal(j->state);
    if (acct)
        a = *acct;
    job_rec_init(&ch);
    ch.state = (char *)sched_state_name(j->state);
    ch.raw_state = j->raw_state[0] ? (char *)j->raw_state : NULL;
    ch.reason = j->reason[0] ? (char *)j->reason : NULL;
    if (j->exit_code >= 0)
        ch.exit_code = j->exit_code;
    if (j->signal >= 0 && term)
        ch.signal = j->signal;
    has_sub = to_utc(j->submit, sub, sizeof(sub), &ts) == 0;
    has_start = to_utc(j->start, start, sizeof(start), &tst) == 0;
    has_end = to_utc(j->end, end, sizeof(end), &te) == 0;
    if (has_sub)
        ch.submit_time = sub;
    if (has_start)
        ch.start_time = start;
    if (has_end)
        ch.end_time = end;
    if (has_sub && has_start && tst >= ts)
        ch.queue_seconds = (double)(tst - ts);
    if (j->gpus >= 0)
        ch.gpus = j->gpus;
    if (j->cpus >= 0)
        ch.cpus = j->cpus;
    if (j->nodes >= 0)
        ch.nodes = j->nodes;
    if (term && acct) {
        if (a.submit[0])
            ch.submit_time = a.submit;
        if (a.start[0])
            ch.start_time = a.start;
        if (a.end[0])
            ch.end_time = a.end;
        if (a.queue_seconds >= 0)
            ch.queue_seconds = a.queue_seconds;
        if (a.run_seconds >= 0)
            ch.run_seconds = a.run_seconds;
        if (a.cpu_seconds >= 0)
            ch.cpu_seconds = a.cpu_seconds;
        if (a.nodes >= 0)
            ch.nodes = a.nodes;
        if (a.cpus >= 0)
            ch.cpus = a.cpus;
        if (a.gpus >= 0)
            ch.gpus = a.gpus;
        if (a.gpu_hours >= 0)
            ch.gpu_hours = a.gpu_hours;
        if (a.cpu_hours >= 0)
            ch.cpu_hours = a.cpu_hours;
    } else if (term) {
        /* no accounting: what the status said is all there is */
        if (j->elapsed_s >= 0)
            ch.run_seconds = (double)j->elapsed_s;
        else if (has_start && has_end && te >= tst)
            ch.run_seconds = (double)(te - tst);
        if (ch.run_seconds == ch.run_seconds) { /* not NaN */
            if (j->gpus >= 0)
                ch.gpu_hours = j->gpus * ch.run_seconds / 3600.0;
            if (j->cpus >= 0)
                ch.cpu_hours = j->cpus * ch.run_seconds / 3600.0;
        }
    }
    if (store_job_update(st, cluster, j->id, &ch, &e) < 0) {
        if (e.code == EXA_ENOTFOUND)
            return 0;
        if (err)
            *err = e;
        return -1;
    }
    return 1;
}

int gate_record_status(store_t *st, struct sched *s, const char *cluster,
                       const struct sched_job *j, int tries,
                       struct sched_acct *acct, exa_error_t *err)
{
    struct sched_acct a;
    int have = 0, r;

    sched_acct_init(&a);
    if (j->state == SCHED_UNKNOWN)
        return 0;
    if (sched_state_terminal(j->state) && s &&
        sched_accounting(s, j->id, tries < 1 ? 1 : tries, &a, NULL) == 0)
        have = 1;
    r = record_one(st, cluster, j, have ? &a : NULL, err);
    if (r <= 0)
        return r;
    if (acct)
        *acct = a;
    return have;
}

int gate_job_record_batch(struct gate *g, const struct sched_job *jobs,
                          size_t n, int tries, exa_error_t *err)
{
    const char **ids = xcalloc(n ? n : 1, sizeof(*ids));
    long *slot = xcalloc(n ? n : 1, sizeof(*slot));
    struct sched_acct *acct;
    int *found;
    size_t m = 0;
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        slot[i] = -1;
        if (jobs[i].state != SCHED_UNKNOWN &&
            sched_state_terminal(jobs[i].state)) {
            slot[i] = (long)m;
            ids[m++] = jobs[i].id;
        }
    }
    acct = xcalloc(m ? m : 1, sizeof(*acct));
    found = xcalloc(m ? m : 1, sizeof(*found));
    /* no accounting (a transport failure, mock): status only, as for one */
    if (m && g->s)
        sched_accounting_batch(g->s, ids, m, tries < 1 ? 1 : tries, acct, found,
                               NULL);
    /* every row is tried: one that fails does not keep the others
     * behind; the first failure is what err reports */
    for (size_t i = 0; i < n; i++) {
        const struct sched_acct *a = NULL;
        exa_error_t e = EXA_ERROR_INIT;
        if (jobs[i].state == SCHED_UNKNOWN)
            continue;
        if (slot[i] >= 0 && found[slot[i]])
            a = &acct[slot[i]];
        if (record_one(g->st, g->name, &jobs[i], a, &e) < 0) {
            if (rc == 0 && err)
                *err = e;
            rc = -1;
        }
    }
    free(found);
    free(acct);
    free(slot);
    free(ids);
    return rc;
}

/* sacct -S: the earliest submit (or creation) time of the rows. */
static long long earliest(const struct job_rec *rows, size_t n)
{
    long long since = 0;
    for (size_t i = 0; i < n; i++) {
        time_t t;
        if ((rows[i].submit_time &&
             time_parse_iso8601(rows[i].submit_time, &t, NULL) == 0) ||
            (rows[i].created_at &&
             time_parse_iso8601(rows[i].created_at, &t, NULL) == 0))
            if (!since || (long long)t < since)
                since = (long long)t;
    }
    return since;
}

int gate_reconcile(struct gate *g, size_t *updated, exa_error_t *err)
{
    struct job_rec *rows = NULL;
    struct sched_job *jobs;
    const char **ids;
    size_t n = 0, done = 0;
    int rc = 0;

    if (updated)
        *updated = 0;
    if (!g->s)
        return 0;
    if (store_job_list_open(g->st, g->name, &rows, &n, err) < 0)
        return -1;
    if (!n)
        return 0;
    ids = xcalloc(n, sizeof(*ids));
    jobs = xcalloc(n, sizeof(*jobs));
    for (size_t i = 0; i < n; i++)
        ids[i] = rows[i].job_id;
    g->s->sacct_since = earliest(rows, n);
    if (sched_status_batch(g->s, ids, n, jobs, err) < 0) {
        gate_check_error(g, err);
        rc = -1;
        goto out;
    }
    /* one sacct per SACCT_BATCH_IDS ended jobs, not one per job */
    if (gate_job_record_batch(g, jobs, n, 3, err) < 0) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        done += jobs[i].state != SCHED_UNKNOWN &&
                sched_state_terminal(jobs[i].state);
    if (updated)
        *updated = done;
out:
    free(ids);
    free(jobs);
    job_rec_free_list(rows, n);
    return rc;
}

int gate_cancel(struct gate *g, const char *id, exa_error_t *err)
{
    struct sched_job j;
    struct job_rec r;
    const char *ids[1] = {id};

    if (!g->s)
        return exa_err(err, EXA_EUSAGE,
                       "cluster '%s' has no scheduler exa can cancel on",
                       g->name);
    if (sched_job_id_check(g->kind, id, err) < 0)
        return -1;
    if (store_job_get(g->st, g->name, id, &r, NULL) == 0) {
        g->s->sacct_since = earliest(&r, 1);
        job_rec_release(&r);
    }
    if (sched_status_batch(g->s, ids, 1, &j, err) < 0) {
        gate_check_error(g, err);
        return -1;
    }
    if (j.state == SCHED_UNKNOWN && strstr(id, "_[")) {
        /* squeue does not answer for a task range ("123_[1-5]"): ask
         * about the array job itself */
        char *base = xstrndup(id, (size_t)(strstr(id, "_[") - id));
        const char *b[1] = {base};
        int rc = sched_status_batch(g->s, b, 1, &j, err);
        free(base);
        if (rc < 0)
            return -1;
    }
    if (j.state == SCHED_UNKNOWN && sched_status_failed(g->s, err)) {
        /* not observed (an outage) is no evidence the job is gone */
        gate_check_error(g, err);
        return exa_err_prefix(err,
                              "cannot tell whether job '%s' on cluster "
                              "'%s' runs",
                              id, g->name);
    }
    if (j.state == SCHED_UNKNOWN)
        return exa_err(err, EXA_ENOTFOUND, "job '%s' not found on cluster '%s'",
                       id, g->name);
    if (sched_state_terminal(j.state)) {
        gate_job_record(g, &j, 1, NULL, NULL);
        return exa_err(err, EXA_EFAIL,
                       "job '%s' on cluster '%s' already ended %s: nothing "
                       "cancelled",
                       id, g->name, sched_state_name(j.state));
    }
    if (sched_cancel(g->s, id, err) < 0) {
        gate_check_error(g, err);
        return -1;
    }
    return 0;
}

int gate_job_cluster(store_t *st, const char *id, const char *cluster,
                     char **out, char **scheduler, exa_error_t *err)
{
    struct strvec cl = STRVEC_INIT, sc = STRVEC_INIT;
    int rc = 0;

    *out = NULL;
    if (scheduler)
        *scheduler = NULL;
    if (store_job_clusters(st, id, &cl, &sc, err) < 0)
        return -1;
    if (cluster && *cluster) {
        *out = xstrdup(cluster);
        for (size_t i = 0; i < cl.nr; i++)
            if (!strcmp(cl.v[i], cluster) && scheduler)
                *scheduler = xstrdup(sc.v[i]);
    } else if (cl.nr == 1) {
        *out = xstrdup(cl.v[0]);
        if (scheduler)
            *scheduler = xstrdup(sc.v[0]);
    } else if (cl.nr > 1) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < cl.nr; i++)
            strbuf_addf(&sb, "%s%s", i ? ", " : "", cl.v[i]);
        rc = exa_err(err, EXA_EUSAGE,
                     "job id '%s' is recorded on several clusters (%s): pass "
                     "--cluster",
                     id, sb.buf);
        strbuf_release(&sb);
    }
    strvec_clear(&cl);
    strvec_clear(&sc);
    return rc;
}
