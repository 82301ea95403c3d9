/*
 * trust.h - the trust step of discovery and connect, below the front
 * ends: read a host's offered keys (ssh-keyscan), probe through a
 * transport that trusts exactly those keys, pin them for a cluster, and
 * the OpenSSH fingerprint of a client key (doc/design.md §1.2, §6).
 *
 * Discovery is read-only, so an ad-hoc host is probed with the key it
 * offers now, trusted for that run only; a host and port that a
 * registered cluster names always uses that cluster's pinned key. Only
 * `connect` pins (fleet_pin_host_key), under fleet_known_hosts_dir().
 */
#ifndef EXA_FLEET_TRUST_H
#define EXA_FLEET_TRUST_H

#include "libstore/store.h"
#include "libutil/error.h"
#include "libutil/strbuf.h"

struct fleet;
struct fleet_cluster;
struct inventory;

/*
 * Append the known_hosts lines host offers on port (1..65535) to scan:
 * runs `ssh-keyscan -p PORT -- HOST` locally (no shell, stdin /dev/null,
 * 30 s cap, 1 MiB of output), and into *fpr (may be NULL; caller frees)
 * the OpenSSH "SHA256:..." fingerprint of its preferred key
 * (fleet_host_key_fingerprint). 0, or -1 with err (EXA_ETRANSPORT
 * "cannot read the host key of 'HOST' port PORT: ..." when ssh-keyscan
 * fails or prints no key; EXA_EPARSE when no fingerprint can be derived).
 */
int fleet_keyscan(const char *host, int port, struct strbuf *scan, char **fpr,
                  exa_error_t *err);

/*
 * Pin scan (known_hosts lines from fleet_keyscan) as cluster's host key:
 * only the lines of its preferred key (fleet_host_key_fingerprint(), the
 * fingerprint connect records; gate_host_key_lines()), written atomically, mode
 * 0600, to fleet_known_hosts_path(cluster), the directory created 0700. Returns
 * that path (caller frees), or NULL with err (EXA_ECONFIG).
 */
char *fleet_pin_host_key(const char *cluster, const struct strbuf *scan,
                         exa_error_t *err);

/*
 * The OpenSSH fingerprint of the client key at path key: from
 * "<key>.pub", else from `ssh-keygen -y -P "" -f KEY` (unencrypted keys;
 * 10 s cap). Caller frees; NULL with err (EXA_ECONFIG when key is not
 * readable, EXA_ETRANSPORT when ssh-keygen fails).
 */
char *fleet_client_key_fingerprint(const char *key, exa_error_t *err);

/*
 * Probe the inventory (probe_inventory(); sched NULL or "auto": detect) of
 * an ad-hoc target: this machine when target_is_local(NULL, host), else
 * ssh user@host:port with key. A host and port that a registered cluster
 * of f (may be NULL) names with a pinned host key is checked against that
 * pin; otherwise the key ssh-keyscan reads now is trusted for this probe
 * only (a temporary known_hosts, removed before returning) and its
 * fingerprint goes to *fpr (may be NULL; caller frees; stays NULL for
 * local or pinned targets). inv is filled (inventory_release() it either
 * way). 0, or -1 with err (EXA_ETRANSPORT when no host key could be read
 * or ssh failed, a changed pinned key included).
 */
int fleet_probe_adhoc(const char *host, const char *user, const char *key,
                      int port, const struct fleet *f, const char *sched,
                      struct inventory *inv, char **fpr, exa_error_t *err);

/*
 * Probe a host for `connect` through a transport that trusts exactly the
 * keys in scan (the ones about to be pinned; ignored for a local host).
 * Same inv and error conventions as fleet_probe_adhoc().
 */
int fleet_probe_scanned(const char *host, const char *user, const char *key,
                        int port, const struct strbuf *scan, const char *sched,
                        struct inventory *inv, exa_error_t *err);

/*
 * Probe registered cluster name (st borrowed; regpath NULL: the default
 * clusters.yaml), opened for reading through the gate (libfleet/gate.h:
 * a host key that does not match the approval is refused, EXA_ETRANSPORT
 * naming both fingerprints, and the cluster marked); sched NULL: the
 * cluster's scheduler when known, else detect. Same inv and error
 * conventions as fleet_probe_adhoc(); EXA_ENOTFOUND for an unknown name.
 */
int fleet_probe_cluster(store_t *st, const char *regpath, const char *name,
                        const char *sched, struct inventory *inv,
                        exa_error_t *err);

#endif
