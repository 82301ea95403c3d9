/*
 * readops.h - read-only operations on a registered cluster, below the
 * front ends: list its scheduler queue, save a probed inventory as its
 * node snapshot, and refresh a snapshot that is missing or older than the
 * age limit through the cluster's own connection (libfleet/connect.h).
 * `exa hpc queue`, `hpc nodes --save`, `hpc capacity`, `hpc place` and
 * `hpc connect` call these; the REST API and workers will.
 */
#ifndef EXA_FLEET_READOPS_H
#define EXA_FLEET_READOPS_H

#include <stddef.h>
#include <time.h>

#include "libsched/sched.h"
#include "libstore/store.h"
#include "libutil/error.h"

struct fleet;
struct fleet_cluster;
struct inventory;
struct place_cluster;
struct strvec;

/*
 * The queue of registered cluster name, opened for reading through the
 * gate (libfleet/gate.h: registry resolved, pinned host key checked, a
 * mismatch refused), through the adapter's queue op (sched_queue()). st
 * is borrowed; regpath NULL: the default clusters.yaml. out is
 * initialised here; release it with sched_queue_release() either way. A
 * cluster whose scheduler exa has no adapter for (e.g. "nvidia-smi") has
 * an empty queue. -1 with err: the gate's (EXA_ENOTFOUND, EXA_ETRANSPORT
 * for a host key mismatch naming both fingerprints), the transport's,
 * EXA_ESCHED when the scheduler command failed.
 */
int fleet_cluster_queue(store_t *st, const char *regpath, const char *name,
                        struct sched_queue *out, exa_error_t *err);

/* The strings of v joined with ','; NULL when v is empty. Caller frees. */
char *fleet_join(const struct strvec *v);

/*
 * Replace cluster's node snapshot in st (store_nodes_replace(), one
 * transaction, captured_at = now) with the nodes of inv, which must have
 * been probed on that cluster's own host. 0, or -1 with err (EXA_ECONFIG).
 */
int fleet_snapshot_save(store_t *st, const char *cluster,
                        const struct inventory *inv, exa_error_t *err);

/*
 * Probe the inventory of registered cluster name, opened for reading
 * through the gate (as fleet_cluster_queue()), with a per-command cap of
 * timeout_s seconds (<= 0: the connection's), and save it as its
 * snapshot. *nnodes (may be NULL) gets the number of nodes saved. 0, or
 * -1 with err (the gate's, the transport's, the probe's or the store's;
 * nothing saved).
 */
int fleet_snapshot_refresh(store_t *st, const char *regpath, const char *name,
                           double timeout_s, size_t *nnodes, exa_error_t *err);

/* Snapshots older than this many seconds are stale unless
 * EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S says otherwise (place_max_age_from_env). */
#define FLEET_SNAPSHOT_MAX_AGE_DEFAULT_S 300

/*
 * For every ACTIVE cluster of f whose scheduler has a probe: when its
 * snapshot in st is missing, of unknown age or older than max_age_s
 * seconds at now (max_age_s <= 0: never stale), refresh it
 * (fleet_snapshot_refresh, 15 s per command). A refresh that fails leaves
 * the old snapshot; its cluster name goes to failed_names and the error
 * text to failed_errors (same index; either may be NULL). Returns the
 * number refreshed, or -1 with err when the snapshots cannot be read.
 */
int fleet_refresh_stale(store_t *st, const char *regpath, const struct fleet *f,
                        int max_age_s, time_t now, struct strvec *failed_names,
                        struct strvec *failed_errors, exa_error_t *err);

/*
 * fleet_refresh_stale over candidates already read (place_load_candidates:
 * the ACTIVE clusters with their node summary rows, borrowed), so a
 * placement reads the summary once for its refresh check and its
 * decision. The same clusters are refreshed, in the same order, with the
 * same failures reported. Returns the number refreshed; after a return > 0
 * the caller's candidates are out of date (read them again).
 */
int fleet_refresh_stale_of(store_t *st, const char *regpath,
                           const struct place_cluster *cands, size_t ncands,
                           int max_age_s, time_t now,
                           struct strvec *failed_names,
                           struct strvec *failed_errors);

struct preflight_ask;
struct preflight_report;

/*
 * Run the preflight checks of libdiscovery (preflight_run) for ask on
 * registered cluster c over its own connection: the pinned host key
 * (fleet_known_hosts_path) and the fingerprint recorded at connect are
 * checked for ssh; the work directory is EXAMLOPS_HPC_REMOTE_WORKDIR,
 * else (local) EXAMLOPS_HPC_WORKDIR or ${XDG_DATA_HOME:-~/.local/share}/
 * examlops/runs, else (ssh) "exa-runs" under the remote home; remote_exa
 * (NULL: "exa") is the exa program checked with --version. ask->user
 * defaults to c's ssh_user. rep is filled (preflight_report_release()).
 * 0, or -1 with err when no connection could be built (EXA_ECONFIG); a
 * failed check is a failed entry of rep, not an error.
 */
int fleet_cluster_preflight(const struct fleet_cluster *c,
                            const struct preflight_ask *ask,
                            const char *remote_exa,
                            struct preflight_report *rep, exa_error_t *err);

#endif
