/*
 * trust.c - keyscan, pin, client-key fingerprint and the probes that
 * trust a scanned or pinned key (see trust.h). Moved here from
 * cmd/hpc_fleet_common.c and cmd/hpc_discover.c so that no front end runs
 * a subprocess or builds a transport.
 */
#include "libfleet/trust.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libdiscovery/probe.h"
#include "libfleet/connect.h"
#include "libfleet/gate.h"
#include "libfleet/governance.h"
#include "libtransport/transport.h"
#include "libutil/atomic.h"
#include "libutil/subprocess.h"
#include "libutil/target.h"
#include "libutil/xalloc.h"

/* Run local argv (no shell, stdin /dev/null), appending up to 1 MiB of
 * stdout to out; its exit status (non-zero sets err with its stderr,
 * EXA_ETRANSPORT), or -1 with err when it could not run. */
static int run_local(const char *const *argv, double timeout_s,
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
    if (rc != 0) {
        strbuf_rtrim(&r.err);
        exa_err(err, EXA_ETRANSPORT, "'%s' exited %d%s%s", argv[0], rc,
                r.err.len ? ": " : "", r.err.buf);
    }
    subprocess_result_release(&r);
    return rc;
}

int fleet_keyscan(const char *host, int port, struct strbuf *scan, char **fpr,
                  exa_error_t *err)
{
    char portbuf[16];
    const char *argv[] = {"ssh-keyscan", "-p", portbuf, "--", host, NULL};
    size_t before = scan->len;
    if (fpr)
        *fpr = NULL;
    snprintf(portbuf, sizeof(portbuf), "%d", port);
    if (run_local(argv, 30, scan, err) != 0 || scan->len == before) {
        if (!err->text[0])
            exa_err(err, EXA_ETRANSPORT, "ssh-keyscan returned no key");
        err->code = EXA_ETRANSPORT;
        exa_err_prefix(err, "cannot read the host key of '%s' port %d", host,
                       port);
        return -1;
    }
    if (fpr && !(*fpr = fleet_host_key_fingerprint(scan->buf + before, err)))
        return -1;
    return 0;
}

char *fleet_pin_host_key(const char *cluster, const struct strbuf *scan,
                         exa_error_t *err)
{
    char *dir = fleet_known_hosts_dir();
    char *path = fleet_known_hosts_path(cluster);
    char *fpr = fleet_host_key_fingerprint(scan->buf, NULL);
    struct strbuf one = STRBUF_INIT;
    /* only the key whose fingerprint the approval records: ssh trusts
     * every key of the file (gate_check_host_key() refuses others) */
    if (!fpr || gate_host_key_lines(scan->buf, fpr, &one) < 0)
        strbuf_addbuf(&one, scan);
    free(fpr);
    if (mkdir_p(dir, 0700, err) < 0 ||
        atomic_write_file(path, one.buf, one.len, 0600, err) < 0) {
        strbuf_release(&one);
        free(dir);
        free(path);
        return NULL;
    }
    strbuf_release(&one);
    free(dir);
    return path;
}

char *fleet_client_key_fingerprint(const char *key, exa_error_t *err)
{
    char *pub = xstrfmt("%s.pub", key), *fpr;
    struct strbuf out = STRBUF_INIT;
    const char *argv[] = {"ssh-keygen", "-y", "-P", "", "-f", key, NULL};
    fpr = fleet_pubkey_file_fingerprint(pub, NULL);
    free(pub);
    if (fpr)
        return fpr;
    if (access(key, R_OK)) {
        exa_err(err, EXA_ECONFIG, "cannot read ssh key '%s': %s", key,
                strerror(errno));
        return NULL;
    }
    if (run_local(argv, 10, &out, err) == 0)
        fpr = fleet_pubkey_fingerprint(out.buf, err);
    else
        exa_err_prefix(err, "cannot derive the public key of '%s'", key);
    strbuf_release(&out);
    return fpr;
}

/* A transport to user@host:port trusting only the known_hosts file kh. */
static struct transport *ssh_to(const char *host, const char *user,
                                const char *key, int port, const char *kh,
                                exa_error_t *err)
{
    struct ssh_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.host = host;
    cfg.user = user;
    cfg.key = key;
    cfg.port = port;
    cfg.known_hosts = kh;
    return transport_ssh_new(&cfg, err);
}

/* Write scan to a new private temporary file; its path (caller unlinks
 * and frees) or NULL with err. */
static char *temp_known_hosts(const struct strbuf *scan, exa_error_t *err)
{
    char tmpl[] = "/tmp/exa-known-hosts-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0 || write(fd, scan->buf, scan->len) != (ssize_t)scan->len) {
        exa_err(err, EXA_ECONFIG, "cannot write a temporary known_hosts");
        if (fd >= 0) {
            close(fd);
            unlink(tmpl);
        }
        return NULL;
    }
    close(fd);
    return xstrdup(tmpl);
}

static void drop_temp(char *p)
{
    if (p)
        unlink(p);
    free(p);
}

/* probe_inventory over t, then close t (NULL t: err already set). */
static int probe_and_close(struct transport *t, const char *sched,
                           struct inventory *inv, exa_error_t *err)
{
    int rc;
    if (!t)
        return -1;
    rc = probe_inventory(t, sched, inv, err);
    transport_close(t);
    return rc < 0 ? -1 : 0;
}

int fleet_probe_adhoc(const char *host, const char *user, const char *key,
                      int port, const struct fleet *f, const char *sched,
                      struct inventory *inv, char **fpr, exa_error_t *err)
{
    struct strbuf scan = STRBUF_INIT;
    char *kh = NULL, *tmp = NULL;
    int rc;
    if (fpr)
        *fpr = NULL;
    if (target_is_local(NULL, host))
        return probe_and_close(transport_local_new(), sched, inv, err);
    for (size_t i = 0; f && i < f->nr && !kh; i++)
        if (f->v[i].def.host && !strcmp(f->v[i].def.host, host) &&
            f->v[i].def.ssh_port == port && f->v[i].row.host_key_fingerprint)
            kh = fleet_known_hosts_path(f->v[i].def.name);
    if (!kh) {
        if (fleet_keyscan(host, port, &scan, fpr, err) < 0 ||
            !(tmp = temp_known_hosts(&scan, err))) {
            strbuf_release(&scan);
            return -1;
        }
        kh = xstrdup(tmp);
    }
    rc = probe_and_close(ssh_to(host, user, key, port, kh, err), sched, inv,
                         err);
    free(kh);
    drop_temp(tmp);
    strbuf_release(&scan);
    return rc;
}

int fleet_probe_scanned(const char *host, const char *user, const char *key,
                        int port, const struct strbuf *scan, const char *sched,
                        struct inventory *inv, exa_error_t *err)
{
    char *tmp;
    int rc;
    if (target_is_local(NULL, host))
        return probe_and_close(transport_local_new(), sched, inv, err);
    if (!(tmp = temp_known_hosts(scan, err)))
        return -1;
    rc = probe_and_close(ssh_to(host, user, key, port, tmp, err), sched, inv,
                         err);
    drop_temp(tmp);
    return rc;
}

int fleet_probe_cluster(store_t *st, const char *regpath, const char *name,
                        const char *sched, struct inventory *inv,
                        exa_error_t *err)
{
    struct gate_req req;
    struct gate *g;
    const struct fleet_cluster *c;
    int rc;
    memset(&req, 0, sizeof(req));
    req.cluster = name;
    req.purpose = GATE_READ;
    req.st = st;
    req.regpath = regpath;
    if (!(g = gate_open(&req, err)))
        return -1;
    c = gate_cluster(g);
    if (!sched && strcmp(c->def.scheduler, "unknown") &&
        probe_find(c->def.scheduler))
        sched = c->def.scheduler;
    if ((rc = probe_inventory(gate_transport(g), sched, inv, err)) < 0)
        gate_check_error(g, err);
    gate_close(g);
    return rc < 0 ? -1 : 0;
}
