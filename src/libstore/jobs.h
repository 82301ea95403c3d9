/*
 * jobs.h - typed access to the jobs table (doc/design.md §4): every
 * job exa ran or tracks, on any cluster, with any scheduler.
 *
 * A job is identified by (cluster, job_id): two Slurm clusters can both
 * have job 42 (the reference keyed on (scheduler, job_id) and mixed them
 * up). struct job_rec mirrors every column of the table; an absent value
 * (SQL NULL) is a NULL string, JOB_NULL_INT for integers and NaN for
 * reals, so one struct serves insert, partial update and read.
 *
 * State words are the normalized vocabulary of DESIGN §3: PENDING RUNNING
 * SUSPENDED COMPLETED FAILED CANCELLED TIMEOUT UNKNOWN; raw_state keeps
 * the scheduler's own word. Times are ISO-8601 UTC "YYYY-MM-DDTHH:MM:SSZ".
 */
#ifndef EXA_STORE_JOBS_H
#define EXA_STORE_JOBS_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>

#include "libstore/store.h"
#include "libutil/strvec.h"

/* An integer column holding SQL NULL. */
#define JOB_NULL_INT LLONG_MIN

struct job_rec {
    long long id;    /* rowid; set by insert and reads */
    char *cluster;   /* registry name, "local" for mock runs */
    char *scheduler; /* slurm | flux | mock */
    char *job_id;    /* scheduler's id as a string ("123_4") */
    char *run_uuid;  /* exa's run id (12 hex), also in the job name */
    char *job_name;
    char *kind; /* train (default) | serve */
    char *model, *dataset;
    char *state;         /* normalized; default PENDING */
    char *raw_state;     /* scheduler's word (OUT_OF_MEMORY, ...) */
    char *reason;        /* why FAILED/CANCELLED, or the pending reason */
    long long exit_code; /* process exit status, JOB_NULL_INT if unknown */
    long long signal;    /* terminating signal, kept apart from exit */
    char *submit_time, *start_time, *end_time;
    double queue_seconds;        /* submit -> start */
    double run_seconds;          /* start -> end, wall clock */
    double cpu_seconds;          /* CPU time used (user + system) */
    long long nodes, gpus, cpus; /* allocated: nodes, GPUs and CPUs total */
    double gpu_hours, cpu_hours;
    char *remote_dir;              /* working directory on the cluster */
    long long model_version;       /* version registered from this job */
    char *created_at, *updated_at; /* set by the store */
};

/* Every string NULL, integers JOB_NULL_INT, reals NaN. */
void job_rec_init(struct job_rec *j);
/* Free the strings of j and re-initialise it. */
void job_rec_release(struct job_rec *j);
/* Free an array returned by store_job_list (n elements); NULL is fine. */
void job_rec_free_list(struct job_rec *list, size_t n);

/*
 * Insert a new job row from j (borrowed). cluster, scheduler and job_id are
 * required; state defaults to PENDING and kind to train when NULL;
 * created_at/updated_at are set to now. Sets *id_out (may be NULL) to the
 * new rowid. Returns 0, or -1 with err: EXA_EUSAGE for a missing required
 * field, EXA_EFAIL when (cluster, job_id) is already recorded,
 * EXA_ECONFIG for a database error.
 */
int store_job_insert(store_t *st, const struct job_rec *j, long long *id_out,
                     exa_error_t *err);

/*
 * store_job_insert() guarded by the cluster's approval: in one BEGIN
 * IMMEDIATE transaction read clusters.state of j->cluster and insert j
 * only when it is 'ACTIVE', so no job row is written for a cluster that
 * a concurrent reject has just taken out. When (cluster, job_id) is
 * already recorded the row is updated with j's non-absent fields instead
 * (a retried submission). Returns 0, or -1 with err (nothing written):
 * EXA_ENOTAPPROVED "cluster 'X' is STATE: ..." when the row is not ACTIVE,
 * EXA_ENOTFOUND when the cluster has no row, as store_job_insert()
 * otherwise.
 */
int store_job_insert_active(store_t *st, const struct job_rec *j,
                            long long *id_out, exa_error_t *err);

struct cluster_row;
/*
 * A rule over a clusters row (borrowed, read inside the insert's
 * transaction): 0 to allow, -1 with err to refuse. libfleet passes
 * governance_verify_cluster(), so the audit binding is checked in the
 * same transaction that records the job.
 */
typedef int (*store_cluster_check_f)(store_t *st, const struct cluster_row *row,
                                     void *arg, exa_error_t *err);

/*
 * store_job_insert_active() that also calls check (may be NULL) on the
 * cluster's row once its state is known to be ACTIVE, before the insert,
 * in the same transaction; a refusal writes nothing and returns -1 with
 * check's err.
 */
int store_job_insert_checked(store_t *st, const struct job_rec *j,
                             store_cluster_check_f check, void *arg,
                             long long *id_out, exa_error_t *err);

/*
 * Update the job (cluster, job_id) with every non-absent field of changes
 * (borrowed; its cluster, job_id, id and created_at are ignored), and set
 * updated_at to now. Absent fields keep their stored value. Returns 0, or
 * -1 with err: EXA_ENOTFOUND when no such job, EXA_ECONFIG for a database
 * error.
 */
int store_job_update(store_t *st, const char *cluster, const char *job_id,
                     const struct job_rec *changes, exa_error_t *err);

/*
 * Insert j, or when (cluster, job_id) is already recorded update it with
 * j's non-absent fields (as store_job_update; a retried submission that
 * finds its job again). *id_out (may be NULL) gets the row's id either
 * way. Returns 0 or -1 with err as for insert/update.
 */
int store_job_upsert(store_t *st, const struct job_rec *j, long long *id_out,
                     exa_error_t *err);

/*
 * Read the job (cluster, job_id) into *out (initialised here; release
 * with job_rec_release). Returns 0, or -1 with err: EXA_ENOTFOUND,
 * EXA_ECONFIG.
 */
int store_job_get(store_t *st, const char *cluster, const char *job_id,
                  struct job_rec *out, exa_error_t *err);

/* Filter for store_job_list; NULL/0 members do not filter. */
struct job_filter {
    const char *model;
    const char *cluster;
    const char *state;
    const char *run_uuid;
    long long limit; /* at most this many rows; 0 = all */
    /* submitted (else created) at or after this ISO-8601 UTC text,
     * compared as text; NULL: any */
    const char *since;
    long long offset; /* skip this many rows first (paging); 0 = none */
};

/*
 * List jobs matching f (NULL: all), newest first (by id). *out is a
 * malloc'ed array of *n records (NULL when none) that the caller frees
 * with job_rec_free_list(). Returns 0 or -1 with err (EXA_ECONFIG).
 */
int store_job_list(store_t *st, const struct job_filter *f,
                   struct job_rec **out, size_t *n, exa_error_t *err);

/*
 * The distinct clusters on which job_id is recorded, sorted by name,
 * pushed onto clusters; the scheduler of each row onto schedulers (same
 * order; may be NULL). 0 or -1 with err (EXA_ECONFIG).
 */
int store_job_clusters(store_t *st, const char *job_id, struct strvec *clusters,
                       struct strvec *schedulers, exa_error_t *err);

/*
 * The jobs of cluster whose state is not terminal (not COMPLETED, FAILED,
 * CANCELLED or TIMEOUT), oldest first, as store_job_list() returns them
 * (*out freed with job_rec_free_list()). 0 or -1 with err.
 */
int store_job_list_open(store_t *st, const char *cluster, struct job_rec **out,
                        size_t *n, exa_error_t *err);

/*
 * The distinct (cluster, scheduler) pairs that have a job in a
 * non-terminal state, sorted by cluster, pushed onto clusters and
 * schedulers (same order). 0 or -1 with err.
 */
int store_job_open_clusters(store_t *st, struct strvec *clusters,
                            struct strvec *schedulers, exa_error_t *err);

/*
 * New JSON object with every column of j under its column name; absent
 * values are null and reals are never NaN/Infinity (libutil/json.h).
 */
json_t *job_rec_to_json(const struct job_rec *j);

struct jsonw;
/*
 * Write j to w as the value job_rec_to_json(j) would dump to: the same
 * keys, order and bytes (libutil/jsonw.h), without a json_t per value,
 * for lists of thousands of jobs (`exa --json hpc jobs --limit 0`).
 */
void job_rec_write_json(const struct job_rec *j, struct jsonw *w);

#endif
