/*
 * models_cost.c - `exa models cost MODEL [--record]` and `exa models
 * cost-list` (doc/reference.md §2.3, doc/finops.md).
 *
 * The reference read hours from sacct or flux on the local host, invented
 * them for mock jobs, looked at the latest MLflow versions only and
 * appended a row per run. Here every version of the model is costed from
 * the hours its job row holds (filled in by the scheduler's accounting
 * over the cluster's transport), a version without recorded hours is
 * named and skipped, and the row for (model, version, provider) is
 * upserted, so `--record` twice leaves the same rows.
 *
 * The display keeps the reference's columns and adds Provider and CPU
 * Hours, which exa records; JSON rows are keyed by the column names.
 */
#include "cmd/models_cost.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfleet/cost.h"
#include "libstore/audit.h"
#include "libstore/store.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "libview/view.h"

/* "$9.25", or 4 places when 2 would round the stored value. */
static void fmt_usd(char *buf, size_t n, double usd)
{
    if (fabs(cost_round(usd, 2) - usd) < 1e-9)
        snprintf(buf, n, "$%.2f", usd);
    else
        snprintf(buf, n, "$%.4f", usd);
}

/* The warnings for the versions rep skipped or costed in part. */
static void print_outcomes(struct exa_ctx *ctx, const char *model,
                           const struct cost_record_report *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        const struct cost_version_outcome *o = &rep->v[i];
        switch (o->outcome) {
        case COST_NO_JOB:
            out_warn(ctx,
                     "version %lld of '%s' has no job on record; no "
                     "cost recorded",
                     o->version, model);
            break;
        case COST_NO_HOURS:
            out_warn(ctx,
                     "GPU- and CPU-hours of version %lld of '%s' (job "
                     "'%s' on '%s') were not recorded; no cost recorded",
                     o->version, model, o->job_id ? o->job_id : "?",
                     o->cluster ? o->cluster : "?");
            break;
        case COST_GPU_ONLY:
            out_warn(ctx,
                     "CPU-hours of version %lld of '%s' were not "
                     "recorded; its cost covers GPU-hours only",
                     o->version, model);
            break;
        case COST_CPU_ONLY:
            out_warn(ctx,
                     "GPU-hours of version %lld of '%s' were not "
                     "recorded; its cost covers CPU-hours only",
                     o->version, model);
            break;
        case COST_RECORDED:
            break;
        }
    }
}

/*
 * Cost every version of model with provider prov (libfleet's
 * cost_record_model: one transaction, one audit event when something
 * changed) and report the skipped versions. 0 or an exit status (printed).
 */
static int record_costs(struct exa_ctx *ctx, store_t *st, const char *model,
                        const struct cost_provider *prov)
{
    struct cost_params p;
    struct cost_record_report rep;
    exa_error_t err = EXA_ERROR_INIT;
    char *actor, *hint = NULL;
    int rc = 0;
    if (cost_params_from_env(&p, &err) < 0)
        return out_error(ctx, &err, NULL);
    actor = audit_actor();
    if (cost_record_model(st, model, prov, &p, "cli", actor, &rep, &err) < 0) {
        if (err.code == EXA_ENOTFOUND)
            hint =
                xstrfmt("train one with 'exa pipeline run --model %s'", model);
        else if (err.code == EXA_EFAIL)
            hint = xstrdup("hours come from the scheduler's accounting when "
                           "a job ends; see doc/finops.md");
        print_outcomes(ctx, model, &rep);
        rc = out_error(ctx, &err, hint);
        goto out;
    }
    print_outcomes(ctx, model, &rep);
    out_info(ctx,
             "\u2713 Recorded cost data for %zu version(s) of %s "
             "(provider: %s, %zu changed)",
             rep.recorded, model, prov->name, rep.changed);
out:
    cost_record_report_release(&rep);
    free(actor);
    free(hint);
    return rc;
}

/* "▁▂▃▄▅▆▇█" sparkline of values (text mode). */
static void sparkline(struct strbuf *sb, const double *v, size_t n)
{
    static const char *const ticks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                        "\u2585", "\u2586", "\u2587", "\u2588"};
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = hi > lo ? (size_t)((v[i] - lo) / (hi - lo) * 7.0 + 0.5) : 3;
        strbuf_addstr(sb, ticks[k > 7 ? 7 : k]);
    }
}

static void print_rows(struct exa_ctx *ctx, const char *model,
                       const struct cost_row *rows, size_t n,
                       const char *trend_provider)
{
    static const char *const cols[] = {
        "Version",   "Run ID",    "Job ID",    "Cluster",
        "Provider",  "GPU Hours", "CPU Hours", "Cost (USD)",
        "GPU Share", "Recorded",  NULL,
    };
    struct out_table *t = out_table_create(cols);
    double *trend = xcalloc(n ? n : 1, sizeof(*trend));
    size_t ntrend = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cost_row *r = &rows[i];
        char ver[32], run[16], gpu[32], cpu[32], usd[32], day[16];
        snprintf(ver, sizeof(ver), "%lld", r->version);
        snprintf(run, sizeof(run), "%.8s", r->run_uuid ? r->run_uuid : "");
        snprintf(gpu, sizeof(gpu), "%.2f", r->gpu_hours);
        snprintf(cpu, sizeof(cpu), "%.2f", r->cpu_hours);
        fmt_usd(usd, sizeof(usd), r->cost_usd);
        snprintf(day, sizeof(day), "%.10s",
                 r->recorded_at ? r->recorded_at : "");
        out_table_row(t, (const char *const[]){
                             ver, r->run_uuid ? run : NULL, r->job_id,
                             r->cluster, r->provider, r->has_gpu ? gpu : NULL,
                             r->has_cpu ? cpu : NULL, usd, NULL,
                             r->recorded_at ? day : NULL});
        if (r->has_gpu && trend_provider &&
            !strcmp(r->provider, trend_provider))
            trend[ntrend++] = r->gpu_hours;
    }
    out_info(ctx, "Model Cost History: %s", model);
    out_table_print(ctx, t);
    if (ntrend > 1 && ctx->out != OUT_JSON) {
        struct strbuf sb = STRBUF_INIT;
        sparkline(&sb, trend, ntrend);
        out_info(ctx, "GPU-hours trend: %s", sb.buf);
        strbuf_release(&sb);
    }
    free(trend);
}

int cmd_models_cost(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"record", no_argument, NULL, 'r'},
        {"provider", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    const char *model, *pflag = NULL;
    const struct cost_provider *prov;
    exa_error_t err = EXA_ERROR_INIT;
    struct cost_row *rows = NULL;
    size_t n = 0;
    store_t *st;
    int c, record = 0, rc = 0;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":rp:", longopts, NULL)) != -1) {
        if (c == 'r')
            record = 1;
        else if (c == 'p')
            pflag = optarg;
        else if (c == ':')
            return out_usage(ctx, "option '%s' needs a value",
                             argv[optind - 1]);
        else
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
    }
    if (optind >= argc)
        return out_usage(ctx, "exa models cost needs a MODEL");
    model = argv[optind++];
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    prov = cost_provider_resolve(pflag, &err);
    if (!prov && (record || pflag))
        return out_error(ctx, &err, "see 'exa finops cost providers'");
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    if (record && (rc = record_costs(ctx, st, model, prov)))
        goto out;
    if (cost_rows_list(st, model, &rows, &n, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (!n && ctx->out != OUT_JSON) {
        out_info(ctx, "No cost data for %s. Run with --record to ingest.",
                 model);
        goto out;
    }
    print_rows(ctx, model, rows, n,
               prov ? prov->name : (n ? rows[0].provider : NULL));
out:
    cost_rows_free(rows, n);
    store_close(st);
    return rc;
}

int cmd_models_cost_list(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {
        "Model",           "Provider",         "Runs",
        "Total GPU-Hours", "Total Cost (USD)", NULL};
    exa_error_t err = EXA_ERROR_INIT;
    struct cost_summary *s = NULL;
    size_t n = 0;
    store_t *st;
    int rc;
    if ((rc = cmd_no_args(ctx, argc, argv)))
        return rc;
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        struct view_ctx vc = {st, NULL, 0};
        json_t *arr = view_costs(&vc, &err);
        store_close(st);
        if (!arr)
            return out_error(ctx, &err, NULL);
        out_json(ctx, arr);
        return 0;
    }
    rc = cost_summary_list(st, &s, &n, &err);
    store_close(st);
    if (rc < 0)
        return out_error(ctx, &err, NULL);
    if (!n) {
        out_info(ctx, "\u2713 No cost data recorded. Run: exa models cost "
                      "<MODEL> --record");
    } else {
        struct out_table *t = out_table_create(cols);
        for (size_t i = 0; i < n; i++) {
            char runs[32], gpu[32], usd[32];
            snprintf(runs, sizeof(runs), "%lld", s[i].n_runs);
            snprintf(gpu, sizeof(gpu), "%.2f", s[i].total_gpu_hours);
            fmt_usd(usd, sizeof(usd), s[i].total_cost_usd);
            out_table_row(t, (const char *const[]){s[i].model, s[i].provider,
                                                   runs, gpu, usd});
        }
        out_info(ctx, "Model Cost Summary");
        out_table_print(ctx, t);
    }
    cost_summary_free(s, n);
    return 0;
}
