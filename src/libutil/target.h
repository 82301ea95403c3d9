/*
 * target.h - the one rule for "does this target name this machine",
 * used by libtransport (transport_from_env), libfleet (the registered
 * cluster's connection, the default transport of a clusters.yaml entry,
 * ad-hoc discovery) and the front ends, so they never disagree.
 */
#ifndef EXA_TARGET_H
#define EXA_TARGET_H

/*
 * 1 when a target with transport kind (may be NULL) and host (may be
 * NULL) runs on this machine, else 0:
 *   - kind "local", or host NULL, "" or "local" (no remote host named):
 *     1, whatever the other;
 *   - host "localhost": 1 unless a kind is given ("ssh" to a local sshd,
 *     e.g. a login node on another port, is a real, host-key-checked
 *     remote login);
 *   - any other host: 0.
 */
int target_is_local(const char *kind, const char *host);

#endif
