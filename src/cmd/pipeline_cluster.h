/*
 * pipeline_cluster.h - the front end of `exa pipeline run --cluster`
 * (libpipeline/cluster_run.h) and the hook through which `exa hpc wait`
 * resumes a cluster run.
 */
#ifndef EXA_PIPELINE_CLUSTER_H
#define EXA_PIPELINE_CLUSTER_H

#include <stddef.h>

#include "cmd/cmd.h"
#include "libsched/resources.h"

struct pipeline_cluster_opts {
    const char *model, *dataset;
    const char *dataset_path; /* NULL: the dataset's default file */
    int dummy;
    int stage_dataset;
    int nthread;
    double max_skip; /* --max-skip, when max_skip_set */
    int max_skip_set;
    int dry_run;                /* --dry-run */
    const char *cluster;        /* NAME or "auto" */
    const char *run_id;         /* --run-id, or NULL: derived */
    int new_run;                /* --new */
    struct sched_resources res; /* flags; the environment fills the rest */
    int via_worker;             /* --via worker (libtask/pipeline_task.h) */
};

/* Run o (its res is released here). Returns the exit status. */
int pipeline_cluster_run(struct exa_ctx *ctx, struct pipeline_cluster_opts *o);

/*
 * For `exa hpc wait`: when ids is one job whose row on cluster is a
 * cluster run waiting for its registration (cluster_run_pending), wait
 * for it and finish the registration, returning the exit status.
 * Returns -1 when the job is not such a run (the caller waits as usual).
 */
int pipeline_cluster_wait_hook(struct exa_ctx *ctx, const char *cluster,
                               char **ids, size_t n);

#endif
