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
 *     "reconcile_s": 30, "output_dir": ".exa/provision",
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
 */
#ifndef EXA_PROVISION_H
#define EXA_PROVISION_H

#include <jansson.h>
#include <stddef.h>

#include "libstore/store.h"
#include "libutil/error.h"

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

/* Counters for /metrics (bounded labels). */
struct prov_counters {
    unsigned long long submitted, submit_failed, timeouts, start_failed;
    unsigned long long orphans, squeue_errors, attached;
};
void prov_counters_get(struct provisioner *p, struct prov_counters *out);

/* {"provisioners": [{name, cluster, profiles: [{name, cpus, gpus, ram_mb,
 * outstanding, breaker_open, last_error}]}], "requests": [...]} */
json_t *prov_view_status(store_t *st, const struct prov_config *cfg,
                         long long limit, exa_error_t *err);
/* Close the breaker of profile (name, or "provisioner/name"). 0, or -1
 * with err (EXA_ENOTFOUND for an unknown profile). */
int prov_resume(store_t *st, const struct prov_config *cfg, const char *profile,
                double now, exa_error_t *err);

#endif
