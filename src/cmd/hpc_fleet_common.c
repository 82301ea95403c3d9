/*
 * hpc_fleet_common.c - helpers shared by the `exa hpc` fleet commands
 * (hpc_discover.c, hpc_govern.c, hpc_place.c): flag parsing over
 * getopt_long, opening the store with clusters.yaml, the "ok" line, the
 * transport for an ad-hoc --host (pinned key of a registered cluster, else
 * a key trusted for one run only) and writing a probed inventory as a
 * cluster's node snapshot. They print through output.c like the commands
 * themselves; only the fleet command files include hpc_fleet_int.h.
 */
#include "cmd/hpc_fleet_int.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libdiscovery/probe.h"
#include "libfleet/connect.h"
#include "libfleet/governance.h"
#include "libstore/nodes.h"
#include "libtransport/transport.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/subprocess.h"
#include "libutil/xalloc.h"

/* "✓ msg" in text mode, {"ok": true, "message": msg} in JSON mode. */
void out_ok(struct exa_ctx *ctx, const char *msg)
{
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "ok", json_true());
        jx_set(d, "message", jx_str(msg));
        out_json(ctx, d);
    } else if (!ctx->quiet) {
        printf("\u2713 %s\n", msg);
    }
}

/* Open the store and resolve clusters.yaml; 0 or an exit status. */
int open_fleet(struct exa_ctx *ctx, store_t **st, char **regpath)
{
    exa_error_t err = EXA_ERROR_INIT;
    *regpath = registry_default_path(&err);
    if (!*regpath)
        return out_error(ctx, &err, NULL);
    *st = store_open(NULL, &err);
    if (!*st) {
        free(*regpath);
        *regpath = NULL;
        return out_error(ctx, &err, NULL);
    }
    return 0;
}

void close_fleet(store_t *st, char *regpath)
{
    store_close(st);
    free(regpath);
}

/* getopt_long over argv with a leading '+' behaviour off; reset first. */
int next_opt(int argc, char **argv, const char *shortopts,
             const struct option *longopts)
{
    return getopt_long(argc, argv, shortopts, longopts, NULL);
}

int bad_option(struct exa_ctx *ctx, int argc, char **argv)
{
    const char *a = optind - 1 < argc && optind > 0 ? argv[optind - 1] : "?";
    return out_usage(ctx, "unknown or incomplete option '%s'", a);
}

int parse_int_opt(struct exa_ctx *ctx, const char *opt, const char *s, int *out)
{
    long long v;
    int rc = cmd_parse_uint(ctx, opt, s, &v);
    if (rc)
        return rc;
    if (v > 1000000)
        return out_usage(ctx, "option '%s' is too large: %s", opt, s);
    *out = (int)v;
    return 0;
}

json_t *caps_json(const char *text)
{
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    return j ? j : json_null();
}

/*
 * Run a local helper program (ssh-keyscan, ssh-keygen) with argv, no
 * shell, stdin /dev/null, capturing up to 1 MiB of stdout; a wall-clock
 * cap of timeout_s. Returns its exit status, or -1 with err.
 */
int run_local(const char *const *argv, double timeout_s, struct strbuf *out,
              exa_error_t *err)
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

/* ---- transports and snapshots ---- */

int is_local_host(const char *h)
{
    return !h || !*h || !strcmp(h, "local") || !strcmp(h, "localhost");
}

/*
 * A transport for an ad-hoc --host (detect, nodes, gpus). A host that a
 * registered cluster names (same host and port) uses that cluster's
 * pinned key. Otherwise discovery is read-only, so the key offered now is
 * trusted for this run only (ssh-keyscan into a temporary file) and its
 * fingerprint is reported through *fpr; it is pinned only by connect.
 */
struct transport *adhoc_transport(const char *host, const char *user,
                                  const char *key, int port,
                                  const struct fleet *f, char **tmpfile,
                                  char **fpr, exa_error_t *err)
{
    struct ssh_config cfg = {0};
    struct transport *t;
    char *kh = NULL;
    *tmpfile = NULL;
    *fpr = NULL;
    if (is_local_host(host))
        return transport_local_new();
    for (size_t i = 0; f && i < f->nr; i++)
        if (f->v[i].def.host && !strcmp(f->v[i].def.host, host) &&
            f->v[i].def.ssh_port == port && f->v[i].row.host_key_fingerprint)
            kh = fleet_known_hosts_path(f->v[i].def.name);
    if (!kh) {
        struct strbuf scan = STRBUF_INIT;
        char portbuf[16], tmpl[] = "/tmp/exa-known-hosts-XXXXXX";
        const char *kargv[] = {"ssh-keyscan", "-p", portbuf, "--", host,
                               NULL};
        int fd;
        snprintf(portbuf, sizeof(portbuf), "%d", port);
        if (run_local(kargv, 30, &scan, err) != 0 || !scan.len) {
            if (!err->text[0])
                exa_err(err, EXA_ETRANSPORT, "no host key offered");
            exa_err_prefix(err,
                           "ssh to '%s' failed: cannot read its host "
                           "key",
                           host);
            strbuf_release(&scan);
            return NULL;
        }
        *fpr = fleet_host_key_fingerprint(scan.buf, NULL);
        fd = mkstemp(tmpl);
        if (fd < 0 || write(fd, scan.buf, scan.len) != (ssize_t)scan.len) {
            exa_err(err, EXA_ECONFIG, "cannot write a temporary known_hosts");
            if (fd >= 0)
                close(fd);
            strbuf_release(&scan);
            return NULL;
        }
        close(fd);
        strbuf_release(&scan);
        kh = xstrdup(tmpl);
        *tmpfile = xstrdup(tmpl);
    }
    cfg.host = host;
    cfg.user = user;
    cfg.key = key;
    cfg.port = port;
    cfg.known_hosts = kh;
    t = transport_ssh_new(&cfg, err);
    free(kh);
    return t;
}

void drop_tmpfile(char *p)
{
    if (p)
        unlink(p);
    free(p);
}
