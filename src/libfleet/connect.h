/*
 * connect.h - the one place that turns a registered cluster into a
 * libtransport connection, and names the file its host key is pinned in.
 *
 * `exa hpc ...`, `exa pipeline run --cluster`, and the exporter collectors
 * all reach a cluster through these functions, so the local-vs-ssh rule,
 * the pinned known_hosts file and the per-command cap are the same
 * everywhere (doc/design.md §2, §5 step 2).
 */
#ifndef EXA_FLEET_CONNECT_H
#define EXA_FLEET_CONNECT_H

#include "libtransport/transport.h"
#include "libutil/error.h"

struct fleet_cluster;

/*
 * The connection fields of one cluster (all borrowed; any may be NULL
 * except name). Callers holding another shape of cluster (the exporter's
 * fleet view) fill this instead of a struct fleet_cluster.
 */
struct fleet_conn {
    const char *name;      /* the cluster's name: picks the known_hosts file */
    const char *transport; /* "local", "ssh", or NULL (= "ssh") */
    const char *host;      /* NULL, "", "local", "localhost": this machine */
    const char *ssh_user;  /* NULL: ssh's default */
    const char *ssh_key;   /* identity file path, or NULL */
    int ssh_port;          /* <= 0: 22 */
};

/*
 * The directory `exa hpc connect` pins host keys in:
 * ${XDG_CONFIG_HOME:-$HOME/.config}/examlops/known_hosts.d (HOME unset or
 * empty: "."). Never fails; caller frees.
 */
char *fleet_known_hosts_dir(void);

/*
 * The pinned known_hosts file of cluster (a cluster name):
 * fleet_known_hosts_dir() + "/" + cluster. The file may not exist (the
 * cluster was never connected over ssh). Never fails; caller frees.
 */
char *fleet_known_hosts_path(const char *cluster);

/*
 * A new transport for c:
 *   - local (transport_local_new) when target_is_local(c->transport,
 *     c->host) (libutil/target.h): transport "local", or no transport
 *     and host NULL, "", "local" or "localhost";
 *   - else ssh (transport_ssh_new) when c->transport is NULL or "ssh", to
 *     ssh_user@host:ssh_port with ssh_key, checking the host key against
 *     fleet_known_hosts_path(c->name) only (StrictHostKeyChecking=yes);
 *   - any other transport value fails with EXA_ECONFIG
 *     "unknown transport 'X' of 'NAME'".
 * Either way the per-command cap (t->timeout_s) is EXAMLOPS_SLURM_CMD_TIMEOUT
 * in seconds, default TRANSPORT_DEFAULT_TIMEOUT_S (30); a set value that
 * is not a positive number fails with EXA_ECONFIG (transport_env_seconds).
 * Nothing connects until the first command.
 * Returns the transport (caller frees with transport_close()), or NULL
 * with err.
 */
struct transport *fleet_conn_transport(const struct fleet_conn *c,
                                       exa_error_t *err);

/*
 * fleet_conn_transport() over the merged definition of a registered
 * cluster (c->def: name, transport, host, ssh_user, ssh_key, ssh_port);
 * same rules, return and errors. c is borrowed.
 */
struct transport *fleet_cluster_transport(const struct fleet_cluster *c,
                                          exa_error_t *err);

#endif
