/*
 * connect.c - cluster -> transport (see connect.h).
 *
 * Four callers used to build this themselves and had drifted apart (only
 * one applied EXAMLOPS_SLURM_CMD_TIMEOUT, one rejected unknown transport
 * kinds, the known_hosts path was computed three times). The plain-field
 * struct fleet_conn lets the exporter's fleet view, which does not carry
 * a struct fleet_cluster, share the same code.
 */
#include "libfleet/connect.h"

#include <stdlib.h>
#include <string.h>

#include "libfleet/governance.h"
#include "libutil/strbuf.h"
#include "libutil/target.h"
#include "libutil/xalloc.h"

char *fleet_known_hosts_dir(void)
{
    const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
    if (x && *x)
        return xstrfmt("%s/examlops/known_hosts.d", x);
    return xstrfmt("%s/.config/examlops/known_hosts.d", h && *h ? h : ".");
}

char *fleet_known_hosts_path(const char *cluster)
{
    char *dir = fleet_known_hosts_dir();
    char *p = xstrfmt("%s/%s", dir, cluster);
    free(dir);
    return p;
}

struct transport *fleet_conn_transport(const struct fleet_conn *c,
                                       exa_error_t *err)
{
    struct transport *t;
    double cap;

    if (transport_env_seconds("EXAMLOPS_SLURM_CMD_TIMEOUT",
                              TRANSPORT_DEFAULT_TIMEOUT_S, &cap, err) < 0)
        return NULL;
    if (target_is_local(c->transport, c->host)) {
        t = transport_local_new();
    } else if (!c->transport || !strcmp(c->transport, "ssh")) {
        struct ssh_config cfg;
        char *kh = fleet_known_hosts_path(c->name);
        memset(&cfg, 0, sizeof(cfg));
        cfg.host = c->host;
        cfg.user = c->ssh_user;
        cfg.key = c->ssh_key;
        cfg.port = c->ssh_port > 0 ? c->ssh_port : 22;
        cfg.known_hosts = kh;
        t = transport_ssh_new(&cfg, err);
        free(kh);
        if (!t)
            return NULL;
    } else {
        exa_err(err, EXA_ECONFIG, "unknown transport '%s' of '%s'",
                c->transport, c->name);
        return NULL;
    }
    t->timeout_s = cap;
    return t;
}

struct transport *fleet_cluster_transport(const struct fleet_cluster *c,
                                          exa_error_t *err)
{
    struct fleet_conn conn;
    conn.name = c->def.name;
    conn.transport = c->def.transport;
    conn.host = c->def.host;
    conn.ssh_user = c->def.ssh_user;
    conn.ssh_key = c->def.ssh_key;
    conn.ssh_port = c->def.ssh_port;
    return fleet_conn_transport(&conn, err);
}
