/*
 * run.h - `exa pipeline run` in mock mode: the main job end to end in
 * this process (doc/design.md §7, with the mock scheduler and the
 * local transport).
 *
 * Order, so that bad input changes nothing on disk:
 *   1. resolve model and dataset names, load and parse the dataset;
 *   2. create the staging directory under the models root (fails on an
 *      unwritable data directory before anything is recorded);
 *   3. open platform.db (a corrupt file is reported and left untouched);
 *   4. record the job: cluster "local", scheduler "mock", job id
 *      "mock-<8 hex>", run_uuid (12 hex), state RUNNING;
 *   5. split, train, evaluate, write the artifacts into staging;
 *   6. register the version: in one transaction take the next number,
 *      rename staging to <models_root>/<model>/<version>/, insert the
 *      version with lineage, link it to the job;
 *   7. finish the job COMPLETED (exit 0) with end time, run_seconds (wall
 *      clock), cpu_seconds (getrusage); or FAILED (exit 1) with the
 *      reason when steps 5-6 failed, leaving no model directory and no
 *      version.
 * The request is plain data so other front ends (the server, the cluster
 * path) can reuse it.
 */
#ifndef EXA_RUN_H
#define EXA_RUN_H

#include <signal.h>

#include "libpipeline/train.h"
#include "libstore/jobs.h"
#include "libstore/models.h"

struct pipeline_run_request {
    struct train_request train;
    const char *db_path;     /* NULL: store_default_path() */
    const char *models_root; /* NULL: pipeline_models_root() */
    /*
     * NULL: train in this process (steps 5-6 cannot be interrupted).
     * Otherwise the caller's SIGINT/SIGTERM handler stores the signal
     * number here (the only thing a handler may safely do). Training and
     * the artifact write then run in a child process, which is killed
     * as soon as the value becomes nonzero; the value is also checked
     * between steps. An interrupted run removes its staging directory,
     * registers nothing and, once its job is recorded, finishes it
     * FAILED with the reason "interrupted by signal N". The caller must
     * not have used XGBoost (OpenMP) in this process before: its thread
     * pool does not survive fork().
     */
    volatile sig_atomic_t *interrupted;
};

struct pipeline_run_result {
    struct job_rec job;      /* the job row as finally recorded */
    int job_recorded;        /* job holds a row of platform.db */
    struct model_version mv; /* the registered version (on success) */
    struct trained_model tm; /* metrics, counts (valid after fit) */
    char *db_path;           /* platform.db used */
};

/*
 * Resolve the models root: ${XDG_DATA_HOME:-$HOME/.local/share}/examlops/
 * models. malloc'ed, or NULL with err (EXA_ECONFIG) when neither is set.
 */
char *pipeline_models_root(exa_error_t *err);

/* 12 random hex digits (run ids) into buf (>= 13 bytes). */
void pipeline_random_hex(char *buf, size_t ndigits);

/*
 * Run req in mock mode as described above, filling *res (initialised
 * here; release with pipeline_run_result_release in every case). Returns
 * 0 on success, or -1 with err: EXA_EUSAGE (unknown model/dataset),
 * EXA_ECONFIG (dataset file, data directory, database), EXA_EPARSE
 * (malformed dataset, nothing recorded), EXA_EFAIL (training failed or
 * interrupted by a signal; the job is recorded FAILED when
 * res->job_recorded).
 */
int pipeline_run_mock(const struct pipeline_run_request *req,
                      struct pipeline_run_result *res, exa_error_t *err);

void pipeline_run_result_release(struct pipeline_run_result *res);

#endif
