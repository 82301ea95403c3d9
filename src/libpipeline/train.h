/*
 * train.h - training a zoo model on a dataset, in this process: load,
 * split, fit encoders and model, evaluate, and write the artifacts.
 *
 * This is the part shared by `exa pipeline run` in mock mode (which adds
 * a job record and registers the version, run.h) and `exa train`, the
 * payload a cluster job runs (which only writes the artifact directory).
 *
 * Artifacts (one directory per model version):
 *   model.json     XGBoost JSON model (XGBoosterSaveModelToBuffer)
 *   encoders.json  {"features": [...], "encoders": [cat_encoder, ...]}
 *   metrics.json   metrics, stage, row counts, splits and parameters
 *   SHA256SUMS     "<hex>  <name>" per file above, sha256sum(1) format;
 *                  the artifact's identity is the SHA-256 of this file
 */
#ifndef EXA_TRAIN_H
#define EXA_TRAIN_H

#include <jansson.h>
#include <stddef.h>

#include "libpipeline/encoder.h"
#include "libpipeline/forest.h"
#include "libpipeline/metrics.h"
#include "libpipeline/pm100.h"
#include "libpipeline/zoo.h"
#include "libutil/error.h"

/* Largest dataset file read into memory (the real PM100 CSV is ~1 GiB
 * with full power series). */
#define TRAIN_MAX_DATASET_BYTES ((size_t)4 << 30)

/*
 * Called after each step with its name ("load", "split", "train",
 * "evaluate", "write", "register"), the seconds it took and a short
 * human detail ("600 records, 8 skipped"). Borrowed strings.
 */
typedef void (*pipeline_progress_f)(void *arg, const char *step, double seconds,
                                    const char *detail);

struct train_request {
    const char *model;            /* zoo name, e.g. "JPCP" */
    const char *dataset;          /* zoo name, e.g. "PM100Dataset" */
    const char *dataset_path;     /* file to read (required) */
    int dummy;                    /* first PM100_DUMMY_ROWS of each split */
    int nthread;                  /* training threads; 0 = 2 */
    pipeline_progress_f progress; /* may be NULL */
    void *progress_arg;
    /* Called (with progress_arg) for a warning the user should see even
     * without a terminal, e.g. the skipped records; may be NULL. */
    void (*warn)(void *arg, const char *msg);
    /* The largest share of records (0..1) that may be skipped before the
     * load fails; used only when max_skip_set, else TRAIN_MAX_SKIP. */
    double max_skip;
    int max_skip_set;
};

/* Default share of skipped records that fails a load (`--max-skip`). */
#define TRAIN_MAX_SKIP 0.10

#define JPCP_NFEAT 2

struct trained_model {
    const struct zoo_model *model;
    const struct zoo_dataset *dataset;
    char *dataset_path;
    int dummy;
    struct cat_encoder enc[JPCP_NFEAT]; /* num_nodes_req, user_id */
    rf_model_t *forest;
    struct rf_params params;
    struct reg_metrics metrics; /* on the validation split */
    const char *stage;          /* metrics_stage(rmse) */
    size_t records;             /* data records in the file */
    size_t skipped_rows;        /* records without a usable target */
    size_t train_rows, val_rows;
    size_t unseen_val; /* validation rows with an unseen category */
};

/*
 * Resolve req's model and dataset names in the zoo (EXA_EUSAGE naming the
 * known ones) and load req->dataset_path into t (PM100_TABLE_INIT;
 * release with pm100_table_release). Skipped records are counted per
 * reason and, when there are any, req->warn gets one line: "dataset
 * 'PATH': skipped 296 of 600 records (49.3%): 120 non-finite power
 * sample, 100 zero or negative power, 76 no allocated nodes". Errors:
 * EXA_EUSAGE unknown name, EXA_ECONFIG missing/unreadable file (naming
 * it), EXA_EPARSE malformed CSV (naming the line), EXA_EFAIL when more
 * than the allowed share (max_skip, default TRAIN_MAX_SKIP) of the records
 * was skipped: that text followed by "— more than the allowed 10%
 * (--max-skip)".
 */
int pipeline_load(const struct train_request *req, struct pm100_table *t,
                  exa_error_t *err);

/*
 * Split t, fit the encoders on the training split, train the forest,
 * evaluate on validation, into *tm (zeroed here; release with
 * trained_model_release, also after failure). Returns 0, or -1 with err:
 * EXA_EFAIL when a split has no usable row (naming the window) or
 * XGBoost fails.
 */
int pipeline_fit(const struct train_request *req, const struct pm100_table *t,
                 struct trained_model *tm, exa_error_t *err);

/*
 * Write the artifacts of tm into the existing directory dir and fill
 * sha_hex (65 bytes) with the SHA-256 of SHA256SUMS. 0, or -1 with err
 * (EXA_ECONFIG for files, EXA_EFAIL for XGBoost).
 */
int pipeline_write_artifacts(const struct trained_model *tm, const char *dir,
                             char sha_hex[65], exa_error_t *err);

/*
 * The whole of `exa train`: load, fit and publish the artifacts as
 * out_dir, built in "<out_dir>.tmp-XXXXXX" and renamed into place (out_dir
 * must not exist yet). On failure nothing is left at out_dir. tm as for
 * pipeline_fit. 0 or -1 with err.
 */
int pipeline_train_to_dir(const struct train_request *req, const char *out_dir,
                          struct trained_model *tm, char sha_hex[65],
                          exa_error_t *err);

/* {"rmse","mse","mape"} (null when NaN) as a new JSON object. */
json_t *trained_model_metrics_json(const struct trained_model *tm);
/* Everything metrics.json holds, as a new JSON object. */
json_t *trained_model_summary_json(const struct trained_model *tm);

void trained_model_release(struct trained_model *tm);

/* Hex SHA-256 of buf[0..len) into hex (65 bytes), via OpenSSL EVP. */
void sha256_hex(const void *buf, size_t len, char hex[65]);

#endif
