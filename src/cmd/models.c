/*
 * models.c - the `exa models` group: registered model versions with their
 * metrics, stage and lineage (the job, cluster and scheduler that made
 * them), read from platform.db.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/groups.h"
#include "cmd/models_cost.h"
#include "libstore/models.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"
#include "libview/view.h"

static void fmt_real(char *buf, size_t n, double v, const char *suffix)
{
    if (isfinite(v))
        snprintf(buf, n, "%.2f%s", v, suffix);
    else
        snprintf(buf, n, "-");
}

static void fmt_int(char *buf, size_t n, long long v)
{
    if (v == JOB_NULL_INT)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%lld", v);
}

static int cmd_list(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {"Model", "Versions",   "Latest", "Stage",
                                       "RMSE",  "Registered", NULL};
    exa_error_t err = EXA_ERROR_INIT;
    struct model_summary *list = NULL;
    size_t n = 0;
    store_t *st;
    int rc;

    if ((rc = cmd_no_args(ctx, argc, argv)))
        return rc;
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        struct view_ctx vc = {st, NULL, 0};
        json_t *arr = view_models(&vc, &err);
        store_close(st);
        if (!arr)
            return out_error(ctx, &err, NULL);
        out_json(ctx, arr);
        return 0;
    }
    if (store_model_list(st, &list, &n, &err) < 0) {
        store_close(st);
        return out_error(ctx, &err, NULL);
    }
    store_close(st);
    if (!n) {
        out_info(ctx, "No model versions registered yet. Train one with "
                      "'exa pipeline run --model JPCP --dataset "
                      "PM100Dataset --dummy'.");
    } else {
        struct out_table *t = out_table_create(cols);
        for (size_t i = 0; i < n; i++) {
            char nv[32], lv[32], rmse[32];
            const char *row[6];
            fmt_int(nv, sizeof(nv), list[i].versions);
            fmt_int(lv, sizeof(lv), list[i].latest_version);
            fmt_real(rmse, sizeof(rmse), list[i].latest_rmse, "");
            row[0] = list[i].model;
            row[1] = nv;
            row[2] = lv;
            row[3] = list[i].latest_stage;
            row[4] = rmse;
            row[5] = list[i].latest_created_at;
            out_table_row(t, row);
        }
        out_table_print(ctx, t);
    }
    model_summary_free_list(list, n);
    return 0;
}

static void print_version(const struct model_version *mv)
{
    char rmse[32], mse[32], mape[32], tr[32], va[32], sk[32];
    fmt_real(rmse, sizeof(rmse), mv->rmse, " W");
    fmt_real(mse, sizeof(mse), mv->mse, "");
    fmt_real(mape, sizeof(mape), mv->mape, " %");
    fmt_int(tr, sizeof(tr), mv->train_rows);
    fmt_int(va, sizeof(va), mv->val_rows);
    fmt_int(sk, sizeof(sk), mv->skipped_rows);
    printf("%s version %lld\n", mv->model, mv->version);
    printf("  %-16s %s\n", "stage", mv->stage ? mv->stage : "-");
    printf("  %-16s rmse %s, mse %s, mape %s\n", "metrics", rmse, mse, mape);
    printf("  %-16s %s (%s)\n", "dataset", mv->dataset ? mv->dataset : "-",
           mv->dataset_path ? mv->dataset_path : "-");
    printf("  %-16s train %s, validation %s, skipped %s\n", "rows", tr, va, sk);
    printf("  %-16s %s\n", "artifact",
           mv->artifact_path ? mv->artifact_path : "-");
    printf("  %-16s %s\n", "sha256(SUMS)",
           mv->artifact_sha256 ? mv->artifact_sha256 : "-");
    printf("  %-16s job %s on cluster %s (%s), run %s\n", "lineage",
           mv->job_id ? mv->job_id : "-", mv->cluster ? mv->cluster : "-",
           mv->scheduler ? mv->scheduler : "-",
           mv->run_uuid ? mv->run_uuid : "-");
    printf("  %-16s %s\n", "registered", mv->created_at ? mv->created_at : "-");
}

static int cmd_show(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"version", required_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    static const char *const cols[] = {
        "Version", "Stage",   "RMSE",      "MAPE %",     "Train", "Val",
        "Job",     "Cluster", "Scheduler", "Registered", NULL,
    };
    exa_error_t err = EXA_ERROR_INIT;
    struct model_version *list = NULL;
    long long version = 0;
    const char *model;
    size_t n = 0;
    store_t *st;
    int c, rc;

    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'V') {
            if ((rc = cmd_parse_uint(ctx, "--version", optarg, &version)))
                return rc;
            if (version < 1)
                return out_usage(ctx, "option '--version' expects a "
                                      "version number >= 1");
        } else {
            return out_usage(ctx, "option '%s' is unknown or needs a value",
                             argv[optind - 1]);
        }
    }
    if (optind + 1 != argc)
        return out_usage(ctx, "exa models show needs one MODEL");
    model = argv[optind];
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        struct view_ctx vc = {st, NULL, 0};
        json_t *doc = view_model(&vc, model, version, &err);
        store_close(st);
        if (!doc)
            return out_error(ctx, &err,
                             err.code != EXA_ENOTFOUND ? NULL
                             : version ? "see 'exa models show MODEL' for "
                                         "its versions"
                                       : "see 'exa models list'");
        out_json(ctx, doc);
        return 0;
    }
    rc = store_model_versions(st, model, version, &list, &n, &err);
    store_close(st);
    if (rc < 0)
        return out_error(ctx, &err, NULL);
    if (!n) {
        if (version)
            return out_errorf(ctx, EXA_ENOTFOUND,
                              "see 'exa models show MODEL' for its versions",
                              "model '%s' has no version %lld", model, version);
        return out_errorf(ctx, EXA_ENOTFOUND, "see 'exa models list'",
                          "no versions of model '%s' are registered", model);
    }
    if (version) {
        print_version(&list[0]);
    } else {
        struct out_table *t = out_table_create(cols);
        printf("Model %s: %zu version(s)\n", model, n);
        for (size_t i = 0; i < n; i++) {
            const struct model_version *mv = &list[i];
            char v[32], rmse[32], mape[32], tr[32], va[32];
            const char *row[10];
            fmt_int(v, sizeof(v), mv->version);
            fmt_real(rmse, sizeof(rmse), mv->rmse, "");
            fmt_real(mape, sizeof(mape), mv->mape, "");
            fmt_int(tr, sizeof(tr), mv->train_rows);
            fmt_int(va, sizeof(va), mv->val_rows);
            row[0] = v;
            row[1] = mv->stage;
            row[2] = rmse;
            row[3] = mape;
            row[4] = tr;
            row[5] = va;
            row[6] = mv->job_id;
            row[7] = mv->cluster;
            row[8] = mv->scheduler;
            row[9] = mv->created_at;
            out_table_row(t, row);
        }
        out_table_print(ctx, t);
        out_info(ctx, "Artifacts of the latest: %s",
                 list[n - 1].artifact_path ? list[n - 1].artifact_path : "-");
    }
    model_version_free_list(list, n);
    return 0;
}

static const struct exa_cmd cmds[] = {
    {"list", cmd_list, "", "models with registered versions",
     "Lists every model with a registered version: its versions, the\n"
     "latest one's stage and metrics. --json prints the full rows.\n"
     "Example: exa models list"},
    {"show", cmd_show, "MODEL [--version N]",
     "versions of a model with metrics, stage and job lineage",
     "Without --version: every version, oldest first. With --version N:\n"
     "that version in full (metrics, dataset, rows, artifact directory\n"
     "and its SHA-256, the job/cluster/scheduler that trained it).\n"
     "Exit 1 when the model or version is not registered.\n\n"
     "Options:\n"
     "  MODEL                 the model (JPCP)\n"
     "  --version N           one version in full (default: every version)\n"
     "Example: exa models show JPCP --version 3"},
    {"cost", cmd_models_cost, MODELS_COST_USAGE, MODELS_COST_SUMMARY,
     MODELS_COST_HELP},
    {"cost-list", cmd_models_cost_list, MODELS_COST_LIST_USAGE,
     MODELS_COST_LIST_SUMMARY,
     "Sums the cost rows 'exa models cost --record' stored, per model and\n"
     "provider. Takes no options.\n"
     "Example: exa models cost-list"},
    {NULL},
};

const struct exa_group group_models = {
    "models", "model versions, lineage and cost", cmds};
