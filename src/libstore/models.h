/*
 * models.h - the model registry in platform.db (model_versions,
 * doc/design.md §4): numbered versions of each model with their
 * metrics, lifecycle stage, dataset, artifact and the job that made them.
 *
 * The reference kept versions in MLflow; exa keeps them next to the jobs
 * so lineage (version -> job -> cluster) is one join and needs no server.
 * Versions of a model are 1, 2, 3, ... with no gaps: the next number is
 * taken and the row inserted inside one IMMEDIATE transaction, so two
 * concurrent registrations cannot get the same number.
 */
#ifndef EXA_STORE_MODELS_H
#define EXA_STORE_MODELS_H

#include <jansson.h>
#include <stddef.h>

#include "libstore/jobs.h"
#include "libstore/store.h"

struct model_version {
    long long id;           /* rowid */
    char *model;            /* "JPCP" */
    long long version;      /* 1-based, assigned by store_model_register */
    char *stage;            /* None | Staging | Canary | Production */
    double rmse, mse, mape; /* validation metrics; NaN when absent */
    char *metrics;          /* the full metrics as a JSON object text */
    char *dataset;          /* "PM100Dataset" */
    char *dataset_path;     /* file the rows came from */
    long long train_rows, val_rows, skipped_rows; /* JOB_NULL_INT: absent */
    char *artifact_path;   /* directory holding model.json etc. */
    char *artifact_sha256; /* hex SHA-256 of the artifact's SHA256SUMS */
    long long job_ref;     /* jobs.id of the producing job, or JOB_NULL_INT */
    char *cluster, *scheduler, *job_id, *run_uuid; /* lineage, copied */
    /* trained by a task of the engine (--via worker): its id and attempt
     * (JOB_NULL_INT otherwise) and the worker (NULL); job_id is then the
     * worker's Slurm job */
    long long task_id, task_attempt;
    char *worker_id;
    char *created_at; /* set by the store */
};

/* Strings NULL, integers JOB_NULL_INT, reals NaN. */
void model_version_init(struct model_version *mv);
void model_version_release(struct model_version *mv);
void model_version_free_list(struct model_version *list, size_t n);

/*
 * Called by store_model_register inside its transaction once the version
 * number is known, before the row is inserted: typically renames the
 * artifact directory into models/<model>/<version>/ and sets
 * mv->artifact_path (which it may replace, freeing the old value).
 * Returns 0, or -1 with err to abort the registration. unpublish undoes
 * it when the insert or commit then fails.
 */
typedef int (*model_publish_f)(struct model_version *mv, void *arg,
                               exa_error_t *err);
typedef void (*model_unpublish_f)(struct model_version *mv, void *arg);

/*
 * Register a new version of mv->model: in one BEGIN IMMEDIATE
 * transaction, take max(version)+1 for the model, set mv->version, call
 * publish (may be NULL), insert the row from mv (stage defaults to None),
 * and, when mv->job_ref is set, record the version on that job
 * (jobs.model_version); then commit. On success mv->id, mv->version and
 * mv->created_at are set. Returns 0, or -1 with err (publish's error, or
 * EXA_ECONFIG for the database) having rolled back and unpublished: no
 * version is registered.
 */
int store_model_register(store_t *st, struct model_version *mv,
                         model_publish_f publish, model_unpublish_f unpublish,
                         void *arg, exa_error_t *err);

/* One line per model for `exa models list`. */
struct model_summary {
    char *model;
    long long versions; /* how many registered */
    long long latest_version;
    char *latest_stage;
    double latest_rmse; /* NaN when absent */
    char *latest_created_at;
};
void model_summary_free_list(struct model_summary *list, size_t n);

/*
 * All models with at least one version, sorted by name. *out is a
 * malloc'ed array of *n (NULL when none), freed with
 * model_summary_free_list(). Returns 0 or -1 with err (EXA_ECONFIG).
 */
int store_model_list(store_t *st, struct model_summary **out, size_t *n,
                     exa_error_t *err);

/*
 * Versions of model, oldest first; version > 0 selects just that one.
 * out and n as for store_model_list (freed with model_version_free_list).
 * Returns 0 (possibly with *n == 0) or -1 with err (EXA_ECONFIG).
 */
int store_model_versions(store_t *st, const char *model, long long version,
                         struct model_version **out, size_t *n,
                         exa_error_t *err);

/*
 * New JSON object for mv: its columns, "metrics": {rmse, mse, mape},
 * "evaluation": the stored metrics text parsed back (null if absent or not
 * JSON) and "lineage": {job_ref, job_id, cluster, scheduler, run_uuid,
 * and for a version a task trained: task_id, task_attempt, worker_id}.
 * NaN values become null.
 */
json_t *model_version_to_json(const struct model_version *mv);

#endif
