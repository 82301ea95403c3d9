/*
 * forest.c - the XGBoost random forest (see forest.h). Every XGBoost call
 * is checked and its last-error text carried into exa_error_t; handles
 * are freed on every path.
 */
#include "libpipeline/forest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <xgboost/c_api.h>

#include "libutil/xalloc.h"

struct rf_model {
    BoosterHandle booster;
};

static void quiet_once(void)
{
    static int done;
    if (!done) {
        XGBSetGlobalConfig("{\"verbosity\": 0}");
        done = 1;
    }
}

static int xgb_err(exa_error_t *err, const char *what)
{
    return exa_err(err, EXA_EFAIL, "xgboost %s: %s", what, XGBGetLastError());
}

static int set(BoosterHandle b, const char *k, const char *v, exa_error_t *err)
{
    if (XGBoosterSetParam(b, k, v))
        return xgb_err(err, k);
    return 0;
}

static int setf(BoosterHandle b, const char *k, double v, exa_error_t *err)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.17g", v);
    return set(b, k, buf, err);
}

rf_model_t *rf_train(const float *X, size_t nrow, size_t ncol, const float *y,
                     const struct rf_params *p, exa_error_t *err)
{
    DMatrixHandle d = NULL;
    BoosterHandle b = NULL;
    rf_model_t *m;
    double mean = 0;

    quiet_once();
    if (!nrow) {
        exa_err(err, EXA_EFAIL, "no rows to train on");
        return NULL;
    }
    for (size_t i = 0; i < nrow; i++)
        mean += y[i];
    mean /= (double)nrow;
    if (XGDMatrixCreateFromMat(X, (bst_ulong)nrow, (bst_ulong)ncol, NAN, &d)) {
        xgb_err(err, "creating training matrix");
        return NULL;
    }
    if (XGDMatrixSetFloatInfo(d, "label", y, (bst_ulong)nrow)) {
        xgb_err(err, "setting labels");
        goto fail;
    }
    if (XGBoosterCreate(&d, 1, &b)) {
        xgb_err(err, "creating booster");
        goto fail;
    }
    if (set(b, "verbosity", "0", err) || set(b, "booster", "gbtree", err) ||
        set(b, "objective", "reg:squarederror", err) ||
        set(b, "tree_method", "exact", err) ||
        setf(b, "num_parallel_tree", p->n_trees, err) ||
        setf(b, "max_depth", p->max_depth, err) || set(b, "eta", "1", err) ||
        setf(b, "subsample", p->subsample, err) ||
        setf(b, "colsample_bynode", p->colsample_bynode, err) ||
        set(b, "lambda", "1e-5", err) || setf(b, "base_score", mean, err) ||
        setf(b, "seed", p->seed, err) || setf(b, "nthread", p->nthread, err))
        goto fail;
    if (XGBoosterUpdateOneIter(b, 0, d)) {
        xgb_err(err, "training");
        goto fail;
    }
    XGDMatrixFree(d);
    m = xcalloc(1, sizeof(*m));
    m->booster = b;
    return m;
fail:
    if (b)
        XGBoosterFree(b);
    XGDMatrixFree(d);
    return NULL;
}

int rf_predict(rf_model_t *m, const float *X, size_t nrow, size_t ncol,
               double *out, exa_error_t *err)
{
    DMatrixHandle d = NULL;
    bst_ulong len = 0;
    const float *res = NULL;

    if (!nrow)
        return 0;
    if (XGDMatrixCreateFromMat(X, (bst_ulong)nrow, (bst_ulong)ncol, NAN, &d))
        return xgb_err(err, "creating prediction matrix");
    if (XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &res)) {
        XGDMatrixFree(d);
        return xgb_err(err, "predicting");
    }
    if (len != nrow) {
        XGDMatrixFree(d);
        return exa_err(err, EXA_EFAIL,
                       "xgboost returned %llu predictions for %zu rows",
                       (unsigned long long)len, nrow);
    }
    for (size_t i = 0; i < nrow; i++)
        out[i] = res[i];
    XGDMatrixFree(d);
    return 0;
}

int rf_save_json(rf_model_t *m, struct strbuf *out, exa_error_t *err)
{
    bst_ulong len = 0;
    const char *buf = NULL;
    if (XGBoosterSaveModelToBuffer(m->booster, "{\"format\": \"json\"}", &len,
                                   &buf))
        return xgb_err(err, "saving model");
    strbuf_add(out, buf, (size_t)len);
    return 0;
}

rf_model_t *rf_load_json(const char *buf, size_t len, exa_error_t *err)
{
    BoosterHandle b = NULL;
    rf_model_t *m;
    quiet_once();
    if (XGBoosterCreate(NULL, 0, &b)) {
        xgb_err(err, "creating booster");
        return NULL;
    }
    if (XGBoosterLoadModelFromBuffer(b, buf, (bst_ulong)len)) {
        exa_err(err, EXA_EPARSE, "xgboost loading model: %s",
                XGBGetLastError());
        XGBoosterFree(b);
        return NULL;
    }
    m = xcalloc(1, sizeof(*m));
    m->booster = b;
    return m;
}

void rf_destroy(rf_model_t *m)
{
    if (!m)
        return;
    XGBoosterFree(m->booster);
    free(m);
}
