/*
 * forest.c - the XGBoost random forest (see forest.h). Every XGBoost call
 * is checked and its last-error text carried into exa_error_t; handles
 * are freed on every path.
 *
 * libxgboost (and its libgomp, libdmlc and libstdc++) is not linked: the
 * first rf_train or rf_load_json dlopen()s it and takes the C API
 * functions used here as pointers typed from <xgboost/c_api.h>, so every
 * command that neither trains nor predicts starts without mapping it.
 */
#include "libpipeline/forest.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <xgboost/c_api.h>

#include "libutil/dlib.h"
#include "libutil/xalloc.h"

struct rf_model {
    BoosterHandle booster;
};

/* The XGBoost C API functions forest.c calls, resolved by xgb_load(). */
static struct {
    __typeof__(&XGBGetLastError) GetLastError;
    __typeof__(&XGBSetGlobalConfig) SetGlobalConfig;
    __typeof__(&XGDMatrixCreateFromMat) DMatrixCreateFromMat;
    __typeof__(&XGDMatrixSetFloatInfo) DMatrixSetFloatInfo;
    __typeof__(&XGDMatrixFree) DMatrixFree;
    __typeof__(&XGBoosterCreate) BoosterCreate;
    __typeof__(&XGBoosterFree) BoosterFree;
    __typeof__(&XGBoosterSetParam) BoosterSetParam;
    __typeof__(&XGBoosterUpdateOneIter) BoosterUpdateOneIter;
    __typeof__(&XGBoosterPredict) BoosterPredict;
    __typeof__(&XGBoosterSaveModelToBuffer) BoosterSaveModelToBuffer;
    __typeof__(&XGBoosterLoadModelFromBuffer) BoosterLoadModelFromBuffer;
} xgb;
static pthread_once_t xgb_once = PTHREAD_ONCE_INIT;
static exa_error_t xgb_error = EXA_ERROR_INIT; /* text empty when loaded */

const char *rf_library_name(void)
{
    const char *e = getenv("EXAMLOPS_XGBOOST_LIBRARY");
    return e && *e ? e : RF_LIBRARY;
}

static void xgb_open(void)
{
    static const struct dlib_sym syms[] = {
        DLIB_SYM(xgb, GetLastError, XGBGetLastError),
        DLIB_SYM(xgb, SetGlobalConfig, XGBSetGlobalConfig),
        DLIB_SYM(xgb, DMatrixCreateFromMat, XGDMatrixCreateFromMat),
        DLIB_SYM(xgb, DMatrixSetFloatInfo, XGDMatrixSetFloatInfo),
        DLIB_SYM(xgb, DMatrixFree, XGDMatrixFree),
        DLIB_SYM(xgb, BoosterCreate, XGBoosterCreate),
        DLIB_SYM(xgb, BoosterFree, XGBoosterFree),
        DLIB_SYM(xgb, BoosterSetParam, XGBoosterSetParam),
        DLIB_SYM(xgb, BoosterUpdateOneIter, XGBoosterUpdateOneIter),
        DLIB_SYM(xgb, BoosterPredict, XGBoosterPredict),
        DLIB_SYM(xgb, BoosterSaveModelToBuffer, XGBoosterSaveModelToBuffer),
        DLIB_SYM(xgb, BoosterLoadModelFromBuffer, XGBoosterLoadModelFromBuffer),
    };
    const struct dlib_spec spec = {
        "XGBoost",
        rf_library_name(),
        "install Debian's libxgboost0, or set EXAMLOPS_XGBOOST_LIBRARY",
        "XGBoost 1.6 or later",
        EXA_EFAIL,
        syms,
        sizeof(syms) / sizeof(syms[0]),
    };

    if (dlib_open(&spec, &xgb_error) < 0)
        return;
    xgb.SetGlobalConfig("{\"verbosity\": 0}");
}

/* Load libxgboost once per process; 0, or -1 with err naming it. */
static int xgb_load(exa_error_t *err)
{
    pthread_once(&xgb_once, xgb_open);
    if (xgb_error.text[0])
        return exa_err(err, xgb_error.code, "%s", xgb_error.text);
    return 0;
}

int rf_available(exa_error_t *err)
{
    return xgb_load(err);
}

static int xgb_err(exa_error_t *err, const char *what)
{
    return exa_err(err, EXA_EFAIL, "xgboost %s: %s", what, xgb.GetLastError());
}

static int set(BoosterHandle b, const char *k, const char *v, exa_error_t *err)
{
    if (xgb.BoosterSetParam(b, k, v))
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

    if (xgb_load(err) < 0)
        return NULL;
    if (!nrow) {
        exa_err(err, EXA_EFAIL, "no rows to train on");
        return NULL;
    }
    for (size_t i = 0; i < nrow; i++)
        mean += y[i];
    mean /= (double)nrow;
    if (xgb.DMatrixCreateFromMat(X, (bst_ulong)nrow, (bst_ulong)ncol, NAN,
                                 &d)) {
        xgb_err(err, "creating training matrix");
        return NULL;
    }
    if (xgb.DMatrixSetFloatInfo(d, "label", y, (bst_ulong)nrow)) {
        xgb_err(err, "setting labels");
        goto fail;
    }
    if (xgb.BoosterCreate(&d, 1, &b)) {
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
    if (xgb.BoosterUpdateOneIter(b, 0, d)) {
        xgb_err(err, "training");
        goto fail;
    }
    xgb.DMatrixFree(d);
    m = xcalloc(1, sizeof(*m));
    m->booster = b;
    return m;
fail:
    if (b)
        xgb.BoosterFree(b);
    xgb.DMatrixFree(d);
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
    if (xgb.DMatrixCreateFromMat(X, (bst_ulong)nrow, (bst_ulong)ncol, NAN, &d))
        return xgb_err(err, "creating prediction matrix");
    if (xgb.BoosterPredict(m->booster, d, 0, 0, 0, &len, &res)) {
        xgb.DMatrixFree(d);
        return xgb_err(err, "predicting");
    }
    if (len != nrow) {
        xgb.DMatrixFree(d);
        return exa_err(err, EXA_EFAIL,
                       "xgboost returned %llu predictions for %zu rows",
                       (unsigned long long)len, nrow);
    }
    for (size_t i = 0; i < nrow; i++)
        out[i] = res[i];
    xgb.DMatrixFree(d);
    return 0;
}

int rf_save_json(rf_model_t *m, struct strbuf *out, exa_error_t *err)
{
    bst_ulong len = 0;
    const char *buf = NULL;
    if (xgb.BoosterSaveModelToBuffer(m->booster, "{\"format\": \"json\"}", &len,
                                     &buf))
        return xgb_err(err, "saving model");
    strbuf_add(out, buf, (size_t)len);
    return 0;
}

rf_model_t *rf_load_json(const char *buf, size_t len, exa_error_t *err)
{
    BoosterHandle b = NULL;
    rf_model_t *m;
    if (xgb_load(err) < 0)
        return NULL;
    if (xgb.BoosterCreate(NULL, 0, &b)) {
        xgb_err(err, "creating booster");
        return NULL;
    }
    if (xgb.BoosterLoadModelFromBuffer(b, buf, (bst_ulong)len)) {
        exa_err(err, EXA_EPARSE, "xgboost loading model: %s",
                xgb.GetLastError());
        xgb.BoosterFree(b);
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
    xgb.BoosterFree(m->booster);
    free(m);
}
