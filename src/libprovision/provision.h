/*
 * provision.h - the Slurm provisioner of seed 003 (shared/WORKERS.md §9):
 * for queued tasks that no attached worker can take it submits, on an
 * ACTIVE cluster and through the gate (libfleet/gate.h, GATE_SCHEDULE),
 * a batch job whose payload is `exa worker` dialling back to the engine.
 *
 * Configuration: provisioners.json (operator-owned; EXAMLOPS_PROVISIONERS,
 * default ~/.config/examlops/provisioners.json):
 *   {"provisioners": [{"name": "testa", "cluster": "testa",
 *     "engine_url": "http://127.0.0.1:8765", "remote_exa": "exa",
 *     "insecure_http": false, "allow_root": false,
 *     "provision_timeout_s": 900, "max_idle_s": 300, "drain_s": 300,
 *     "provision_delay_s": 5, "submit_min_interval_s": 10,
 *     "reconcile_s": 30, "exclude_node_s": 3600,
 *     "output_dir": ".exa/provision",
 *     "breaker": {"failed_starts": 3, "failed_submits": 10},
 *     "profiles": [{"name": "cpu1", "cpus": 1, "gpus": 0, "ram_mb": 1000,
 *       "labels": [], "sbatch": ["--partition=debug", "--time=5"],
 *       "prerun": ["module load exa"], "walltime_s": 300}]}]}
 * Unknown members are refused (a typo must not silently mean a default).
 *
 * Rules: demand is the queued tasks older than provision_delay_s grouped
 * by shape; a shape some attached, non-draining worker could take asks
 * for nothing; otherwise the smallest fitting profile (gpus, cpus, ram_mb,
 * name) is chosen, and asked for only when it has no outstanding request,
 * its breaker is closed and the cluster's submit interval has passed. The
 * request row is written (state intent) before sbatch runs; the job name
 * is exa-<engine id>-<profile>-<request>; the join token travels only in
 * the script on sbatch's stdin. Reconcile runs one squeue per cluster: a
 * request past its deadline is scancel'ed (timeout), one that left the
 * queue before attaching is failed with sacct's state and the tail of its
 * output, a job with our prefix and no row is cancelled (orphan), and an
 * intent row finds its job by name or fails. A squeue that fails changes
 * nothing. The breaker opens after failed_starts start failures (or
 * failed_submits submit errors) in a row, until `exa provision resume`.
 *
 * Black-hole nodes (WORKERS.md §9.4): a request that ended before
 * attaching strikes the node sacct's NodeList names, a black-hole drain
 * (§6.3, libtask/engine.c) the node the worker registered from; the
 * PROV_EXCLUDE_STRIKES-th strike on one node for a cluster's profile
 * within exclude_node_s excludes it: that profile's sbatch command line
 * gets --exclude=NODE[,NODE...] (the command line beats the profile's
 * #SBATCH lines, sbatch(1) "INPUT ENVIRONMENT VARIABLES") until
 * exclude_node_s later, event worker_node_excluded. A strike counts
 * toward one exclusion only. On a cluster whose every node of the
 * partition is excluded, sbatch refuses the job ("Requested node
 * configuration is not available"): a submit error, as the breaker
 * counts them.
 */
#ifndef EXA_PROVISION_H
#define EXA_PROVISION_H

#include <jansson.h>
#include <stddef.h>

#include "libstore/store.h"
#include "libutil/error.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"

/* Black-hole nodes: the default of "exclude_node_s" (1 h, GlideinWMS's
 * 20 min sleep made longer because exa keeps going meanwhile), its
 * largest value (7 days; strikes older than that are forgotten), and the
 * strikes that exclude a node. */
#define PROV_EXCLUDE_NODE_S 3600.0
#define PROV_EXCLUDE_NODE_MAX_S (7 * 86400.0)
#define PROV_EXCLUDE_STRIKES 2

struct prov_profile {
    char *name;
    long long cpus, gpus, ram_mb;
    char **labels, **sbatch, **prerun; /* NULL-terminated */
    size_t nlabels, nsbatch, nprerun;
    double walltime_s;
};

struct prov_entry {
    char *name, *cluster, *engine_url, *remote_exa, *output_dir, *pin;
    int insecure_http, allow_root;
    double provision_timeout_s, max_idle_s, drain_s, provision_delay_s;
    double submit_min_interval_s, reconcile_s;
    double exclude_node_s; /* black-hole nodes: window and exclusion, 0 off */
    long long failed_starts, failed_submits;
    struct prov_profile *p;
    size_t np;
};

struct prov_config {
    struct prov_entry *v;
    size_t n;
};

void prov_config_release(struct prov_config *c);
/* Parse provisioners.json text (untrusted length len). 0, or -1 with err
 * (EXA_ECONFIG naming the member: "provisioner 'testa' profile 'cpu1':
 * 'cpus' must be an integer from 1 to 4096"). */
int prov_config_parse(const char *text, size_t len, struct prov_config *out,
                      exa_error_t *err);
/* The path (malloc'ed): $EXAMLOPS_PROVISIONERS, else
 * ${XDG_CONFIG_HOME:-$HOME/.config}/examlops/provisioners.json. */
char *prov_config_path(void);
/* Read and parse path (NULL: prov_config_path()). Returns 1 loaded, 0 the
 * file does not exist (out empty), -1 with err. */
int prov_config_load(const char *path, struct prov_config *out,
                     exa_error_t *err);

struct provisioner;

/*
 * A provisioner over st (borrowed) for the engine engine_id (8 hex), with
 * cfg (taken; released by prov_free). regpath: clusters.yaml (NULL: the
 * default); keyfile: the join-token key (NULL: next to the database).
 */
struct provisioner *prov_new(store_t *st, const char *engine_id,
                             struct prov_config *cfg, const char *regpath,
                             const char *keyfile);
void prov_free(struct provisioner *p);
/* The clock allowance in seconds (>= 0; default 120) that a join token
 * gets past its request's provision_timeout_s: exp = submit +
 * provision_timeout_s + slack_s (WORKERS.md 5.1). exa serve passes the
 * engine's own join_skew_s (EXAMLOPS_WORKER_JOIN_SKEW_S), the tolerance
 * it applies to nbf/exp, so both ends use one number. */
void prov_set_token_slack(struct provisioner *p, double slack_s);

/* One pass at time now: the decision (every call) and the reconcile (at
 * start and every reconcile_s). Returns the number of sbatch calls made,
 * -1 with err on a database error (scheduler errors are recorded on the
 * request rows and in the counters, not returned). */
int prov_tick(struct provisioner *p, double now, exa_error_t *err);
/* Reconcile every cluster now. 0 or -1 (database). */
int prov_reconcile(struct provisioner *p, double now, exa_error_t *err);

/*
 * Cancel every outstanding (intent or submitted) request of the engine
 * engine_id in st: an intent row is first looked up by name; each job is
 * scancel'ed through the gate and the row set cancelled. drain also asks
 * every attached worker to drain. Returns the number cancelled, -1 with
 * err (a cluster that could not be reached leaves its rows as they are
 * and is named in err after the others were done).
 */
int prov_shutdown_store(store_t *st, const struct prov_config *cfg,
                        const char *regpath, int drain, double now,
                        exa_error_t *err);

/*
 * sbatch's argv for one request of e (exa's own options, WORKERS.md §9.3):
 * sbatch --parsable --job-name=JOB_NAME --output=OUTPUT_DIR/%j.out
 * --no-requeue --signal=B:USR1@DRAIN_S, then --exclude=EXCLUDE when
 * exclude is neither NULL nor "" (a comma list of node names that
 * prov_excluded_nodes checked). Appended to argv (caller-owned).
 */
void prov_sbatch_argv(const struct prov_entry *e, const char *job_name,
                      const char *exclude, struct strvec *argv);
/*
 * The nodes excluded at now (s) from (cluster, profile), appended to out
 * as a comma list ("n1,n2", sorted; only names hostlist_node_ok accepts).
 * 0 or -1 with err.
 */
int prov_excluded_nodes(store_t *st, const char *cluster, const char *profile,
                        double now, struct strbuf *out, exa_error_t *err);
/*
 * Record a strike of kind ("failed_start" or "black_hole"; ref the request
 * or worker id) on node for e's cluster and profile at now, then exclude
 * the node when that made PROV_EXCLUDE_STRIKES (prov_exclusions_refresh).
 * Nothing when e->exclude_node_s is 0. Returns 1 when the node became
 * excluded, 0 not, -1 with err (EXA_EUSAGE for a node that is no Slurm
 * node name; nothing recorded).
 */
int prov_node_strike(store_t *st, const struct prov_entry *e,
                     const char *profile, const char *node, const char *kind,
                     const char *ref, double now, exa_error_t *err);
/* Turn the strikes of every profile of cfg into exclusions (two on one
 * node within its entry's exclude_node_s, counted since the node's last
 * exclusion began). Returns the number of new exclusions, -1 with err. */
int prov_exclusions_refresh(store_t *st, const struct prov_config *cfg,
                            double now, exa_error_t *err);

/* Counters for /metrics (bounded labels). */
struct prov_counters {
    unsigned long long submitted, submit_failed, timeouts, start_failed;
    unsigned long long orphans, squeue_errors, attached;
};
void prov_counters_get(struct provisioner *p, struct prov_counters *out);
/* p's configuration (borrowed; valid until prov_free). */
const struct prov_config *prov_config_of(const struct provisioner *p);

/* {"provisioners": [{name, cluster, profiles: [{name, cpus, gpus, ram_mb,
 * outstanding, breaker_open, last_error, excluded_nodes: [NODE]}]}],
 * "exclusions": [{cluster, profile, node, reason, since, until}] (those in
 * force at now), "requests": [...]} */
json_t *prov_view_status(store_t *st, const struct prov_config *cfg,
                         long long limit, double now, exa_error_t *err);
/* Close the breaker of profile (name, or "provisioner/name"). 0, or -1
 * with err (EXA_ENOTFOUND for an unknown profile). */
int prov_resume(store_t *st, const struct prov_config *cfg, const char *profile,
                double now, exa_error_t *err);

#endif
