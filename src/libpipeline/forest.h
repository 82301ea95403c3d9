/*
 * forest.h - random-forest regression on libxgboost's C API
 * (https://xgboost.readthedocs.io/en/release_1.7.0/c.html; random forests:
 * https://xgboost.readthedocs.io/en/release_1.7.0/tutorials/rf.html).
 *
 * JPCP is a RandomForestRegressor in the reference (scikit-learn). exa
 * trains the same kind of model with XGBoost in random-forest mode: one
 * boosting round of n_trees parallel trees, learning rate 1, each tree on
 * a row subsample (like the bootstrap), near-zero L2 regularisation, so
 * the prediction is the average of the trees. Training is deterministic
 * for a given seed. XGBoost's own logging is silenced.
 *
 * Defaults: 100 trees (scikit-learn's n_estimators), depth 16, rows 0.8,
 * features per split 1.0. scikit-learn's regressor considers every
 * feature at each split (max_features=1.0); with JPCP's two features a
 * per-node sample of 0.8 rounds down to one feature per split, which on
 * the sample data more than doubled the validation rmse (196 W vs 87 W
 * on an earlier draft of the sample).
 */
#ifndef EXA_FOREST_H
#define EXA_FOREST_H

#include <stddef.h>

#include "libutil/error.h"
#include "libutil/strbuf.h"

struct rf_params {
    int n_trees; /* num_parallel_tree */
    int max_depth;
    double subsample;        /* rows per tree, (0, 1] */
    double colsample_bynode; /* features per split, (0, 1] */
    int seed;
    int nthread; /* CPU threads, >= 1 */
};
#define RF_PARAMS_DEFAULT                                                      \
    {                                                                          \
        100, 16, 0.8, 1.0, 42, 2                                               \
    }

typedef struct rf_model rf_model_t;

/*
 * libxgboost is loaded at run time (dlopen(3)) by the first rf_train or
 * rf_load_json, never at start-up: RF_LIBRARY, the soname of Debian's
 * libxgboost0, or the path in EXAMLOPS_XGBOOST_LIBRARY when set (for a
 * build elsewhere, and for tests of a missing library). A load failure
 * is EXA_EFAIL, "cannot load XGBoost library 'NAME': <dlerror>", and
 * every later call in the process gives the same error.
 */
#define RF_LIBRARY "libxgboost.so.0"

/* The library name rf_train/rf_load_json load (static string or env). */
const char *rf_library_name(void);

/* Load libxgboost now: 0, or -1 with err as described above. */
int rf_available(exa_error_t *err);

/*
 * Train on X (nrow x ncol floats, row-major) against y (nrow). nrow must
 * be >= 1. Returns the model (free with rf_destroy) or NULL with err
 * (EXA_EFAIL with XGBoost's message, or the load error above).
 */
rf_model_t *rf_train(const float *X, size_t nrow, size_t ncol, const float *y,
                     const struct rf_params *p, exa_error_t *err);

/* Predict nrow rows of X (nrow x ncol) into out (nrow doubles). 0/-1. */
int rf_predict(rf_model_t *m, const float *X, size_t nrow, size_t ncol,
               double *out, exa_error_t *err);

/* Append the model in XGBoost's JSON model format to out. 0/-1. */
int rf_save_json(rf_model_t *m, struct strbuf *out, exa_error_t *err);

/* Load a model saved by rf_save_json. NULL with err (EXA_EPARSE; EXA_EFAIL
 * when libxgboost cannot be loaded). */
rf_model_t *rf_load_json(const char *buf, size_t len, exa_error_t *err);

void rf_destroy(rf_model_t *m);

#endif
