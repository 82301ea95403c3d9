/*
 * train.c - JPCP training on PM100 (see train.h).
 *
 * Features follow the reference's PM100 configuration: num_nodes_req and
 * user_id, each label-encoded as a string ("<col>_cat"); the target is
 * watts per allocated node. Encoders see only the training split, so the
 * validation score is honest about users the model has never met.
 */
#include "libpipeline/train.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/atomic.h"
#include "libutil/json.h"
#include "libutil/sha256.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

static const char *const feature_names[JPCP_NFEAT] = {"num_nodes_req_cat",
                                                      "user_id_cat"};
static const char *const feature_columns[JPCP_NFEAT] = {"num_nodes_req",
                                                        "user_id"};

void sha256_hex(const void *buf, size_t len, char hex[65])
{
    exa_sha256_hex(buf, len, hex);
}

static void progress(const struct train_request *req, const char *step,
                     double t0, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void progress(const struct train_request *req, const char *step,
                     double t0, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    if (!req->progress)
        return;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    req->progress(req->progress_arg, step, time_monotonic() - t0, detail);
}

int pipeline_load(const struct train_request *req, struct pm100_table *t,
                  exa_error_t *err)
{
    double t0 = time_monotonic();
    if (!zoo_model_find(req->model, err) ||
        !zoo_dataset_find(req->dataset, err))
        return -1;
    if (!req->dataset_path)
        return exa_err(err, EXA_EUSAGE, "no dataset file given");
    if (pm100_load_file(req->dataset_path, TRAIN_MAX_DATASET_BYTES, t, err))
        return -1;
    progress(req, "load", t0,
             "%zu records from '%s', %zu skipped "
             "(no usable power per node)",
             t->records, req->dataset_path, t->skipped);
    if (t->skipped) {
        double max = req->max_skip_set ? req->max_skip : TRAIN_MAX_SKIP;
        double share = (double)t->skipped / (double)t->records;
        struct strbuf sb = STRBUF_INIT;
        const char *sep = ": ";
        strbuf_addf(&sb, "dataset '%s': skipped %zu of %zu records (%.1f%%)",
                    req->dataset_path, t->skipped, t->records, 100 * share);
        for (int i = 0; i < PM100_NSKIP; i++) {
            if (!t->skipped_by[i])
                continue;
            strbuf_addf(&sb, "%s%zu %s", sep, t->skipped_by[i],
                        pm100_skip_reason((enum pm100_skip)i));
            sep = ", ";
        }
        if (share > max) {
            exa_err(err, EXA_EFAIL,
                    "%s \u2014 more than the allowed %g%% (--max-skip)", sb.buf,
                    100 * max);
            strbuf_release(&sb);
            return -1;
        }
        if (req->warn)
            req->warn(req->progress_arg, sb.buf);
        strbuf_release(&sb);
    }
    return 0;
}

static const char *row_feature(const struct pm100_row *r, int f)
{
    return f == 0 ? r->num_nodes_req : r->user_id;
}

/* Encode rows idx[0..n) into X (n x JPCP_NFEAT) and y; count unseen. */
static size_t encode(const struct trained_model *tm,
                     const struct pm100_table *t, const size_t *idx, size_t n,
                     float *X, float *y)
{
    size_t unseen = 0;
    for (size_t i = 0; i < n; i++) {
        const struct pm100_row *r = &t->rows[idx[i]];
        int any = 0;
        for (int f = 0; f < JPCP_NFEAT; f++) {
            size_t code = cat_encoder_code(&tm->enc[f], row_feature(r, f));
            any |= code == tm->enc[f].n;
            X[i * JPCP_NFEAT + (size_t)f] = (float)code;
        }
        unseen += any;
        y[i] = (float)r->target;
    }
    return unseen;
}

int pipeline_fit(const struct train_request *req, const struct pm100_table *t,
                 struct trained_model *tm, exa_error_t *err)
{
    struct rf_params params = RF_PARAMS_DEFAULT;
    struct pm100_split s;
    float *X = NULL, *y = NULL;
    double *pred = NULL, *truth = NULL;
    double t0;
    int rc = -1;

    memset(tm, 0, sizeof(*tm));
    tm->model = zoo_model_find(req->model, err);
    tm->dataset = zoo_dataset_find(req->dataset, err);
    if (!tm->model || !tm->dataset)
        return -1;
    tm->dataset_path = xstrdup(req->dataset_path ? req->dataset_path : "");
    tm->dummy = req->dummy;
    tm->records = t->records;
    tm->skipped_rows = t->skipped;
    tm->stage = "None";
    tm->metrics.rmse = tm->metrics.mse = tm->metrics.mape = NAN;
    if (req->nthread > 0)
        params.nthread = req->nthread;
    tm->params = params;

    t0 = time_monotonic();
    pm100_split(t, req->dummy, &s);
    tm->train_rows = s.ntrain;
    tm->val_rows = s.nval;
    progress(req, "split", t0,
             "%zu train rows [2020-05-01, 2020-09-01), "
             "%zu validation rows [2020-09-01, 2020-10-01)%s",
             s.ntrain, s.nval, req->dummy ? ", --dummy" : "");
    if (!s.ntrain) {
        exa_err(err, EXA_EFAIL,
                "no usable training rows: none of the %zu usable records "
                "has submit_time in [2020-05-01, 2020-09-01) UTC",
                t->nr);
        goto out;
    }
    if (!s.nval) {
        exa_err(err, EXA_EFAIL,
                "no usable validation rows: none of the %zu usable records "
                "has submit_time in [2020-09-01, 2020-10-01) UTC",
                t->nr);
        goto out;
    }

    t0 = time_monotonic();
    for (int f = 0; f < JPCP_NFEAT; f++) {
        const char **vals = xcalloc(s.ntrain, sizeof(*vals));
        for (size_t i = 0; i < s.ntrain; i++)
            vals[i] = row_feature(&t->rows[s.train[i]], f);
        cat_encoder_fit(&tm->enc[f], feature_columns[f], vals, s.ntrain);
        free(vals);
    }
    X = xcalloc(s.ntrain * JPCP_NFEAT, sizeof(*X));
    y = xcalloc(s.ntrain, sizeof(*y));
    encode(tm, t, s.train, s.ntrain, X, y);
    tm->forest = rf_train(X, s.ntrain, JPCP_NFEAT, y, &params, err);
    if (!tm->forest)
        goto out;
    progress(req, "train", t0,
             "random forest, %d trees, on %zu rows "
             "(%zu users, %zu node counts)",
             params.n_trees, s.ntrain, tm->enc[1].n, tm->enc[0].n);

    t0 = time_monotonic();
    free(X);
    free(y);
    X = xcalloc(s.nval * JPCP_NFEAT, sizeof(*X));
    y = xcalloc(s.nval, sizeof(*y));
    tm->unseen_val = encode(tm, t, s.val, s.nval, X, y);
    pred = xcalloc(s.nval, sizeof(*pred));
    truth = xcalloc(s.nval, sizeof(*truth));
    if (rf_predict(tm->forest, X, s.nval, JPCP_NFEAT, pred, err) < 0)
        goto out;
    for (size_t i = 0; i < s.nval; i++)
        truth[i] = t->rows[s.val[i]].target;
    metrics_compute(truth, pred, s.nval, &tm->metrics);
    tm->stage = metrics_stage(tm->metrics.rmse);
    progress(req, "evaluate", t0,
             "rmse %.2f W, mape %.2f%% on %zu rows "
             "(%zu with unseen categories): stage %s",
             tm->metrics.rmse, tm->metrics.mape, tm->metrics.n, tm->unseen_val,
             tm->stage);
    rc = 0;
out:
    free(X);
    free(y);
    free(pred);
    free(truth);
    pm100_split_release(&s);
    return rc;
}

json_t *trained_model_metrics_json(const struct trained_model *tm)
{
    json_t *o = json_object();
    jx_set(o, "rmse", jx_real(tm->metrics.rmse));
    jx_set(o, "mse", jx_real(tm->metrics.mse));
    jx_set(o, "mape", jx_real(tm->metrics.mape));
    return o;
}

static json_t *window(const char *from, const char *to)
{
    json_t *a = json_array();
    json_array_append_new(a, jx_str(from));
    json_array_append_new(a, jx_str(to));
    return a;
}

json_t *trained_model_summary_json(const struct trained_model *tm)
{
    json_t *o = json_object(), *p = json_object(), *g = json_object();
    json_t *feat = json_array(), *splits = json_object();
    jx_set(o, "model", jx_str(tm->model ? tm->model->name : NULL));
    jx_set(o, "dataset", jx_str(tm->dataset ? tm->dataset->name : NULL));
    jx_set(o, "dataset_path", jx_str(tm->dataset_path));
    jx_set(o, "dummy", json_boolean(tm->dummy));
    jx_set(o, "metrics", trained_model_metrics_json(tm));
    jx_set(o, "n_scored", json_integer((json_int_t)tm->metrics.n));
    jx_set(o, "stage", jx_str(tm->stage));
    jx_set(g, "Staging", jx_real(GATE_STAGING_RMSE));
    jx_set(g, "Canary", jx_real(GATE_CANARY_RMSE));
    jx_set(g, "Production", jx_real(GATE_PRODUCTION_RMSE));
    jx_set(o, "gates_rmse_max", g);
    jx_set(o, "records", json_integer((json_int_t)tm->records));
    jx_set(o, "skipped_rows", json_integer((json_int_t)tm->skipped_rows));
    jx_set(o, "train_rows", json_integer((json_int_t)tm->train_rows));
    jx_set(o, "val_rows", json_integer((json_int_t)tm->val_rows));
    jx_set(o, "val_rows_unseen", json_integer((json_int_t)tm->unseen_val));
    jx_set(splits, "train",
           window("2020-05-01T00:00:00Z", "2020-09-01T00:00:00Z"));
    jx_set(splits, "validation",
           window("2020-09-01T00:00:00Z", "2020-10-01T00:00:00Z"));
    jx_set(o, "splits", splits);
    for (int f = 0; f < JPCP_NFEAT; f++)
        json_array_append_new(feat, jx_str(feature_names[f]));
    jx_set(o, "features", feat);
    jx_set(o, "target", jx_str(tm->model ? tm->model->target : NULL));
    jx_set(p, "algorithm", jx_str("xgboost random forest"));
    jx_set(p, "num_parallel_tree", json_integer(tm->params.n_trees));
    jx_set(p, "num_boost_round", json_integer(1));
    jx_set(p, "eta", jx_real(1.0));
    jx_set(p, "max_depth", json_integer(tm->params.max_depth));
    jx_set(p, "subsample", jx_real(tm->params.subsample));
    jx_set(p, "colsample_bynode", jx_real(tm->params.colsample_bynode));
    jx_set(p, "seed", json_integer(tm->params.seed));
    jx_set(p, "nthread", json_integer(tm->params.nthread));
    jx_set(o, "params", p);
    return o;
}

/* Write dir/name atomically and append its line to sums. */
static int put(const char *dir, const char *name, const char *data, size_t len,
               struct strbuf *sums, exa_error_t *err)
{
    char *path = xstrfmt("%s/%s", dir, name);
    char hex[65];
    int rc = atomic_write_file(path, data, len, 0644, err);
    free(path);
    if (rc < 0)
        return -1;
    sha256_hex(data, len, hex);
    strbuf_addf(sums, "%s  %s\n", hex, name);
    return 0;
}

static int put_json(const char *dir, const char *name, json_t *doc,
                    struct strbuf *sums, exa_error_t *err)
{
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    int rc;
    json_decref(doc);
    if (!s)
        return exa_err(err, EXA_EFAIL, "cannot serialize %s", name);
    rc = put(dir, name, s, strlen(s), sums, err);
    free(s);
    return rc;
}

int pipeline_write_artifacts(const struct trained_model *tm, const char *dir,
                             char sha_hex[65], exa_error_t *err)
{
    struct strbuf sums = STRBUF_INIT, model = STRBUF_INIT;
    json_t *enc = json_object(), *arr = json_array(), *feat = json_array();
    int rc = -1;

    for (int f = 0; f < JPCP_NFEAT; f++) {
        json_array_append_new(arr, cat_encoder_to_json(&tm->enc[f]));
        json_array_append_new(feat, jx_str(feature_names[f]));
    }
    jx_set(enc, "features", feat);
    jx_set(enc, "encoders", arr);
    /* Files in name order, so SHA256SUMS is sorted like `sha256sum *`. */
    if (put_json(dir, "encoders.json", enc, &sums, err) < 0 ||
        put_json(dir, "metrics.json", trained_model_summary_json(tm), &sums,
                 err) < 0)
        goto out;
    if (rf_save_json(tm->forest, &model, err) < 0 ||
        put(dir, "model.json", model.buf, model.len, &sums, err) < 0)
        goto out;
    {
        char *path = xstrfmt("%s/SHA256SUMS", dir);
        rc = atomic_write_file(path, sums.buf, sums.len, 0644, err);
        free(path);
    }
    if (rc == 0)
        sha256_hex(sums.buf, sums.len, sha_hex);
out:
    strbuf_release(&sums);
    strbuf_release(&model);
    return rc;
}

int pipeline_train_to_dir(const struct train_request *req, const char *out_dir,
                          struct trained_model *tm, char sha_hex[65],
                          exa_error_t *err)
{
    struct pm100_table t = PM100_TABLE_INIT;
    char *tmp = NULL;
    double t0;
    int rc = -1;

    memset(tm, 0, sizeof(*tm));
    if (pipeline_load(req, &t, err) < 0)
        goto out;
    tmp = atomic_dir_begin(out_dir, err);
    if (!tmp)
        goto out;
    if (pipeline_fit(req, &t, tm, err) < 0)
        goto out;
    t0 = time_monotonic();
    if (pipeline_write_artifacts(tm, tmp, sha_hex, err) < 0 ||
        atomic_dir_commit(tmp, out_dir, 0755, err) < 0)
        goto out;
    progress(req, "write", t0, "artifacts in '%s'", out_dir);
    rc = 0;
out:
    if (rc < 0)
        atomic_dir_abort(tmp);
    free(tmp);
    pm100_table_release(&t);
    return rc;
}

void trained_model_release(struct trained_model *tm)
{
    for (int f = 0; f < JPCP_NFEAT; f++)
        cat_encoder_release(&tm->enc[f]);
    rf_destroy(tm->forest);
    free(tm->dataset_path);
    memset(tm, 0, sizeof(*tm));
}
