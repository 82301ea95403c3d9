/*
 * view.h - the read views of exa as JSON documents, one code path for
 * `exa ... --json`, the REST API (src/server/api.c) and MCP (libmcp).
 *
 * Each view takes a struct view_ctx and returns a new json_t reference
 * (caller json_decref()s) or NULL with err. Error codes the front ends
 * map: EXA_ENOTFOUND for an unknown name or id (REST 404), EXA_EUSAGE
 * for a bad argument (400), EXA_ENOTAPPROVED for a cluster that is not
 * ACTIVE (409), EXA_ETRANSPORT/EXA_ESCHED/EXA_ETIMEOUT for a cluster
 * that could not be asked (502), EXA_ECONFIG for the database (500).
 *
 * redact = 1 (REST, MCP) removes every ssh user, key path and key
 * material: the ssh_user and ssh_key members, a job's remote_dir, and
 * (view_redact) any string holding a registered cluster's key path or
 * holding its ssh user as a word, is rewritten. Fingerprints
 * and host names stay. No view emits NaN or Infinity (null instead,
 * libutil/json.h). Shapes are documented in doc/openapi.json.
 */
#ifndef EXA_VIEW_H
#define EXA_VIEW_H

#include <jansson.h>

#include "libstore/store.h"
#include "libutil/error.h"

struct view_ctx {
    store_t *st;         /* borrowed, open */
    const char *regpath; /* clusters.yaml; NULL: registry_default_path() */
    int redact;          /* 1: no ssh user, key path or key material */
};

/* ---- the fleet ---- */

/*
 * Every registered cluster (the merged fleet, sorted by name): name,
 * scheduler, transport, host, ssh_port, key_fingerprint,
 * host_key_fingerprint, state, approved_by, requested_by, reason,
 * capabilities (parsed), tenant, node/dcgm exporter ports,
 * carbon_intensity, cost_per_gpu_hour, in_registry, audit_mismatch,
 * updated_at, host_key_mismatch ({approved, seen, seen_at} or null), and
 * unless redact ssh_user and ssh_key. `exa hpc clusters --json`.
 */
json_t *view_clusters(const struct view_ctx *vc, exa_error_t *err);

/*
 * One cluster as in view_clusters plus "nodes" (view_nodes' list),
 * "snapshot_age_s" (integer seconds or null), "captured_at" (or null),
 * "gpus_total", "gpus_idle". EXA_ENOTFOUND for an unknown name.
 */
json_t *view_cluster(const struct view_ctx *vc, const char *name,
                     exa_error_t *err);

/*
 * The node snapshot of cluster (platform.db, as `hpc nodes --save` and
 * refreshes saved it): a list of {node, state, raw_state, cpus, mem_mb,
 * gpus, gpus_used (or null), gpu_model, partitions [..], flags [..],
 * captured_at}. EXA_ENOTFOUND for an unknown cluster.
 */
json_t *view_nodes(const struct view_ctx *vc, const char *cluster,
                   exa_error_t *err);

/* ---- jobs ---- */

struct view_job_filter {
    const char *cluster, *model, *state; /* NULL: any */
    const char *since; /* ISO-8601 UTC prefix (view_parse_since) or NULL */
    long long limit;   /* 0: all */
    long long offset;  /* paging */
};

/* Recorded jobs, newest first: a list of job rows (every column of the
 * jobs table, libstore/jobs.h job_rec_to_json). `exa hpc jobs --json`. */
json_t *view_jobs(const struct view_ctx *vc, const struct view_job_filter *f,
                  exa_error_t *err);

struct jsonw;
/*
 * The document view_jobs gives, written to w as it is read (the same
 * bytes once dumped, libutil/jsonw.h), for the CLI's `exa --json hpc
 * jobs`: no json_t per value, so 1,000 jobs cost a quarter of what they
 * do through view_jobs and jansson. The rows are read first: returns 0
 * with the array written (the caller finishes w), or -1 with err and
 * nothing written. vc->redact must be 0 (BUG otherwise): the redacting
 * front ends use view_jobs.
 */
int view_jobs_write(const struct view_ctx *vc, const struct view_job_filter *f,
                    struct jsonw *w, exa_error_t *err);

/*
 * One recorded job: (cluster, job_id) when cluster is given, else the
 * one cluster that has job_id (EXA_EUSAGE "job 'J' is recorded on
 * clusters a, b; name one" when several). EXA_ENOTFOUND when none.
 */
json_t *view_job(const struct view_ctx *vc, const char *cluster,
                 const char *job_id, exa_error_t *err);

/* ---- placement and capacity ---- */

struct view_place_ask {
    int gpus, cpus, nodes; /* nodes >= 1 */
    const char *provider;  /* NULL: $EXAMLOPS_PLACEMENT_PROVIDER, else
                              least-loaded */
    int refresh;           /* 1: refresh stale snapshots first */
    const char *partition; /* the job's partition (list), or NULL:
                              EXAMLOPS_HPC_PARTITION (sched_partition_
                              from_env), else each cluster's default
                              (placement.h place_restrict_partition) */
};

/*
 * Choose a cluster for ask (libfleet/placement.h): the document of
 * `exa hpc place --json --explain` ("cluster" null when nothing fits,
 * "reason", "candidates", "explain", ...; candidates whose stale
 * snapshot could not be refreshed carry "stale_error"). *status (may be
 * NULL): 0 chosen, 6 no ACTIVE cluster, 1 none fits. EXA_EUSAGE for an
 * unknown provider or a bad ask.
 */
json_t *view_place(const struct view_ctx *vc, const struct view_place_ask *ask,
                   int *status, exa_error_t *err);

/* Capacity of every ACTIVE cluster (`exa hpc capacity --json`),
 * refreshing stale snapshots first when refresh. */
json_t *view_capacity(const struct view_ctx *vc, int refresh, exa_error_t *err);

/*
 * The scheduler queue of cluster, asked through the gate (GATE_READ):
 * {"cluster", "jobs": [{job_id, name, user, state, raw_state, partition,
 * nodes, reason}]} (reason: why a job waits, squeue %r / Flux's pending
 * contextual_info, null when none). Under redact a job's user equal to the
 * cluster's ssh user is null. EXA_ENOTFOUND unknown, EXA_ENOTAPPROVED not
 * ACTIVE; a failed scheduler query is "queue of 'X': query failed: ...".
 */
json_t *view_queue(const struct view_ctx *vc, const char *cluster,
                   exa_error_t *err);

/*
 * Preflight of registered cluster name for ask (libdiscovery/
 * preflight.h) over its own connection: the cluster must be ACTIVE
 * (fleet_require_active), then fleet_cluster_preflight() runs;
 * remote_exa as there (NULL: $EXAMLOPS_HPC_REMOTE_EXA, else "exa").
 * Fills rep (release with preflight_report_release either way). `exa
 * hpc preflight` and POST /api/v1/clusters/{name}/preflight call this.
 * 0, or -1 with err: EXA_EUSAGE bad name, EXA_ENOTFOUND unknown,
 * EXA_ENOTAPPROVED not ACTIVE, EXA_ECONFIG no connection. A failed
 * check is rep->ok == 0, not an error.
 */
struct preflight_ask;
struct preflight_report;
int view_preflight(const struct view_ctx *vc, const char *name,
                   const struct preflight_ask *ask, const char *remote_exa,
                   struct preflight_report *rep, exa_error_t *err);

/* ---- models, costs, carbon, audit ---- */

/* [{model, versions, latest_version, stage, rmse, created_at}]. */
json_t *view_models(const struct view_ctx *vc, exa_error_t *err);
/* {"model", "versions": [model version rows]}; version 0: all.
 * EXA_ENOTFOUND when the model (or that version) is not registered. */
json_t *view_model(const struct view_ctx *vc, const char *model,
                   long long version, exa_error_t *err);
/* [{model_name, provider, n_runs, total_gpu_hours, total_cost_usd}]. */
json_t *view_costs(const struct view_ctx *vc, exa_error_t *err);
/* {model, n, total_kwh, operational_co2e_g, scope, embodied_co2e_g,
 * embodied_status}; model NULL: all. */
json_t *view_carbon(const struct view_ctx *vc, const char *model,
                    exa_error_t *err);

struct view_audit_filter {
    const char *target; /* NULL: all */
    const char *since;  /* NULL: all */
    long long limit;    /* 0: all; else the newest limit events */
};
/* Audit events in id order: [{id, ts, source, actor, action, target,
 * details, prev_hash, hash}]. */
json_t *view_audit(const struct view_ctx *vc, const struct view_audit_filter *f,
                   exa_error_t *err);

/* ---- the reference's dashboard routes (doc/reference.md §4.15) ---- */

/* {"facility": {nodesAllocated, gpusAllocated, jobsRunning, queueDepth,
 * clusters [names], partitions [{name, running, queued, gpusAllocated}]}}
 * from recorded jobs and node snapshots; cluster NULL: all. */
json_t *view_facility_overview(const struct view_ctx *vc, const char *cluster,
                               exa_error_t *err);
/* {"queue": {"jobs": [{id, cluster, model, dataset, state, waitSec,
 * nodes, gpus, submitTime}], "count"}}: queued recorded jobs, longest
 * wait first, at most 100. */
json_t *view_facility_queue(const struct view_ctx *vc, const char *cluster,
                            exa_error_t *err);
/* {"job": {id, cluster, model, dataset, state, resources{nodes, gpus,
 * cpus}, timing{submit, start, end, queueSeconds, runSeconds}, exitCode,
 * flowRunId, mlflowRunId}}; cluster as view_job. */
json_t *view_facility_job(const struct view_ctx *vc, const char *cluster,
                          const char *job_id, exa_error_t *err);
/*
 * {"clusters": [...], "count"}: per cluster the reference's fields
 * (name, scheduler, transport, host, state, approvedBy, requestedBy,
 * reason, capabilities, totalGpus, idleGpus, utilizationPct,
 * gpuHoursUsed, updatedAt) and exa's (gpus_idle, gpus_total,
 * utilization_pct, gpu_hours_used, snapshot_age_s, approved_by,
 * approved_at: time of the latest approve/reject event, or null).
 */
json_t *view_facility_fleet(const struct view_ctx *vc, exa_error_t *err);

/* ---- helpers ---- */

/*
 * Parse a --since / ?since= value: an ISO-8601 UTC time or a prefix of
 * one ("2026-12-01", "2026-12-01T12:03", "2026-12-01 12:03:10", with
 * or without "Z") or an age ("90m", "2h", "1d": that long before now).
 * *out gets the UTC text to compare times with (caller frees). 0 or -1
 * with err (EXA_EUSAGE).
 */
int view_parse_since(const char *s, char **out, exa_error_t *err);

/*
 * The secrets of the registered clusters (ssh users and key paths, with
 * their ".pub" siblings and the forms ssh prints them in: "~/" and
 * "$HOME/" expanded with this process's HOME, a relative path made
 * absolute), from clusters.yaml and platform.db, and this server's
 * known_hosts.d directory (libfleet/connect.h), for view_redact. Release
 * with view_secrets_release.
 */
struct view_secrets {
    char **users;
    size_t nusers;
    char **paths;
    size_t npaths;
};
int view_secrets_load(const struct view_ctx *vc, struct view_secrets *out,
                      exa_error_t *err);
void view_secrets_release(struct view_secrets *s);

/*
 * Rewrite doc in place: members named ssh_user, ssh_key or remote_dir
 * are removed; in every string value each key path of sec (as a
 * substring) is replaced by "[redacted]", and in free text (the strings
 * of members named reason, message, error, detail, details, why,
 * explain, output, contextual_info, text, hint, stderr, stdout or note,
 * and everything below them) also each ssh user as a whole word (not
 * next to a letter, digit, '_', '-', '.' or '$': "root@h", "--user
 * root", "/root/x"). Identifiers and enums (scheduler, state, actor,
 * names) are left alone, so an ssh user "slurm" does not hide the
 * scheduler's name. Returns doc.
 */
json_t *view_redact(json_t *doc, const struct view_secrets *sec);

/* The free-text rewrite (paths and users) of one malloc'ed string, an
 * error message (returns s or a new string, freeing s). */
char *view_redact_text(char *s, const struct view_secrets *sec);

#endif
