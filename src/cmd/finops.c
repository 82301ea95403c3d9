/*
 * finops.c - the `exa finops` group: carbon estimates and records, and the
 * cost providers (doc/reference.md §2.4, §4.11, §4.12; doc/finops.md).
 *
 * `carbon` and `cost` are commands with sub-commands (`exa finops carbon
 * estimate`), as in the reference; each sub-command parses its own
 * options. The formulas live in libfleet (carbon.c, cost.c); this file
 * only reads flags, picks the hours and prints the reference's shapes.
 * `carbon record MODEL` takes the hours the scheduler's accounting
 * recorded for the model version's job unless hours are given, and
 * refuses when none were recorded rather than guessing.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/groups.h"
#include "libfleet/carbon.h"
#include "libfleet/cost.h"
#include "libstore/audit.h"
#include "libstore/store.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "libview/view.h"

/* Parse a finite decimal option value or fail with a usage error (2). */
static int parse_num(struct exa_ctx *ctx, const char *opt, const char *s,
                     double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return out_usage(ctx, "option '%s' expects a number, got '%s'", opt, s);
    *out = v;
    return 0;
}

/* ---- carbon: options shared by estimate and record ---- */

struct carbon_opts {
    const char *provider; /* --provider, or NULL */
    int have_gpu, have_cpu;
    double gpu_hours, cpu_hours;
    struct carbon_params params;
    /* record only */
    const char *run_id;
    long long version; /* -1: latest */
    const char *model;
};

enum {
    OPT_GPU_HOURS = 256,
    OPT_CPU_HOURS,
    OPT_GRID,
    OPT_PUE,
    OPT_GPU_TDP,
    OPT_CPU_TDP,
    OPT_METHOD,
    OPT_RUN_ID,
    OPT_VERSION,
    OPT_PROVIDER,
};

static const struct option carbon_longopts[] = {
    {"gpu-hours", required_argument, NULL, OPT_GPU_HOURS},
    {"cpu-hours", required_argument, NULL, OPT_CPU_HOURS},
    {"grid-intensity", required_argument, NULL, OPT_GRID},
    {"pue", required_argument, NULL, OPT_PUE},
    {"gpu-tdp", required_argument, NULL, OPT_GPU_TDP},
    {"cpu-tdp", required_argument, NULL, OPT_CPU_TDP},
    {"grid-method", required_argument, NULL, OPT_METHOD},
    {"provider", required_argument, NULL, OPT_PROVIDER},
    {"run-id", required_argument, NULL, OPT_RUN_ID},
    {"version", required_argument, NULL, OPT_VERSION},
    {"model-version", required_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/*
 * Parse argv (argv[0] is the sub-command). record says whether MODEL,
 * --run-id and --version are accepted. Returns 0 or an exit status.
 */
static int parse_carbon_opts(struct exa_ctx *ctx, int argc, char **argv,
                             int record, struct carbon_opts *o)
{
    int c, rc;
    memset(o, 0, sizeof(*o));
    o->version = -1;
    carbon_params_default(&o->params);
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:", carbon_longopts, NULL)) != -1) {
        rc = 0;
        switch (c) {
        case OPT_GPU_HOURS:
            o->have_gpu = 1;
            rc = parse_num(ctx, "--gpu-hours", optarg, &o->gpu_hours);
            break;
        case OPT_CPU_HOURS:
            o->have_cpu = 1;
            rc = parse_num(ctx, "--cpu-hours", optarg, &o->cpu_hours);
            break;
        case OPT_GRID:
            rc = parse_num(ctx, "--grid-intensity", optarg,
                           &o->params.grid_intensity);
            break;
        case OPT_PUE:
            rc = parse_num(ctx, "--pue", optarg, &o->params.pue);
            break;
        case OPT_GPU_TDP:
            rc = parse_num(ctx, "--gpu-tdp", optarg, &o->params.gpu_tdp_w);
            break;
        case OPT_CPU_TDP:
            rc = parse_num(ctx, "--cpu-tdp", optarg, &o->params.cpu_tdp_w);
            break;
        case OPT_METHOD:
            o->params.method = optarg;
            break;
        case 'p':
        case OPT_PROVIDER:
            o->provider = optarg;
            break;
        case OPT_RUN_ID:
            if (!record)
                return out_usage(ctx, "option '--run-id' applies to "
                                      "'carbon record' only");
            o->run_id = optarg;
            break;
        case OPT_VERSION: {
            long long v = -1;
            if (!record)
                return out_usage(ctx, "option '--version' applies to "
                                      "'carbon record' only");
            rc = cmd_parse_uint(ctx, "--version", optarg, &v);
            o->version = v;
            break;
        }
        case ':':
            return out_usage(ctx, "option '%s' needs a value",
                             argv[optind - 1]);
        default:
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (record) {
        if (optind >= argc)
            return out_usage(ctx, "carbon record needs a MODEL");
        o->model = argv[optind++];
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    return 0;
}

/* The exit status for a failed estimate, with a hint where one helps. */
static int estimate_error(struct exa_ctx *ctx, const exa_error_t *err)
{
    const char *hint = NULL;
    if (strstr(err->text, "no CPU-hours term"))
        hint = "use --provider green-ai-default, which accounts CPU-hours, "
               "or give --gpu-hours alone";
    else if (!strncmp(err->text, "nothing to account for", 22))
        hint = "give --gpu-hours H and/or --cpu-hours H";
    return out_error(ctx, err, hint);
}

static void fmt_pct(char *buf, size_t n, double frac)
{
    snprintf(buf, n, "\u00b1%.0f%%", frac * 100.0);
}

static void fmt_inputs(char *buf, size_t n, const struct carbon_result *r)
{
    if (!strcmp(r->provider->name, "ccf-like"))
        snprintf(buf, n, "grid %g g/kWh, PUE %g, %g kWh per GPU-h",
                 r->grid_intensity, r->pue, r->params.kwh_per_gpu_h);
    else if (!strcmp(r->provider->name, "codecarbon-like"))
        snprintf(buf, n,
                 "grid %g g/kWh, PUE %g, GPU %g W, CPU %g W, "
                 "RAM %g GB x %g W/GB",
                 r->grid_intensity, r->pue, r->params.gpu_tdp_w,
                 r->params.cpu_tdp_w, r->params.ram_gb, r->params.ram_w_per_gb);
    else
        snprintf(buf, n, "grid %g g/kWh, PUE %g, GPU %g W, CPU %g W",
                 r->grid_intensity, r->pue, r->params.gpu_tdp_w,
                 r->params.cpu_tdp_w);
}

/* Text view of an estimate: the reference's rows plus the inputs. */
static void print_estimate(struct exa_ctx *ctx, const struct carbon_result *r)
{
    static const char *const cols[] = {"Metric", "Value", NULL};
    struct out_table *t = out_table_create(cols);
    char kwh[64], co2[64], unc[32], inputs[160];
    snprintf(kwh, sizeof(kwh), "%.3f", r->kwh);
    snprintf(co2, sizeof(co2), "%.1f", r->co2e_g);
    fmt_pct(unc, sizeof(unc), r->provider->uncertainty);
    fmt_inputs(inputs, sizeof(inputs), r);
    out_info(ctx, "Carbon estimate \u2014 %g GPU-h, %g CPU-core-h",
             r->gpu_hours, r->cpu_hours);
    out_table_row(t, (const char *const[]){"Energy (kWh)", kwh});
    out_table_row(t, (const char *const[]){"CO2e (g)", co2});
    out_table_row(t, (const char *const[]){"Provider", r->provider->name});
    out_table_row(t, (const char *const[]){"Uncertainty", unc});
    out_table_row(
        t, (const char *const[]){"Signal type",
                                 carbon_signal_type_name(r->signal_type)});
    out_table_row(t, (const char *const[]){"Method", r->method});
    out_table_row(t, (const char *const[]){"Inputs", inputs});
    out_table_print(ctx, t);
}

static int carbon_estimate_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    struct carbon_opts o;
    struct carbon_result r;
    exa_error_t err = EXA_ERROR_INIT;
    const struct carbon_provider *prov;
    int rc = parse_carbon_opts(ctx, argc, argv, 0, &o);
    if (rc)
        return rc;
    if (!(prov = carbon_provider_resolve(o.provider, &err)))
        return out_error(ctx, &err, "see 'exa finops carbon providers'");
    if (carbon_estimate(prov, &o.params, o.gpu_hours, o.cpu_hours, &r, &err) <
        0)
        return estimate_error(ctx, &err);
    if (ctx->out == OUT_JSON)
        out_json(ctx, carbon_result_json(&r));
    else
        print_estimate(ctx, &r);
    return 0;
}

/*
 * Pick the hours for `carbon record`: the flags when given, else the
 * version's job row. Fills *gpu, *cpu, *version (the version used, -1 for
 * none) and *run_uuid (owned, may be NULL). Returns 0 or an exit status.
 */
static int record_hours(struct exa_ctx *ctx, store_t *st,
                        const struct carbon_opts *o, double *gpu, double *cpu,
                        long long *version, char **run_uuid, int *from_job)
{
    struct cost_usage *u = NULL, *v;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    int rc = 0;
    *from_job = 0;
    *run_uuid = NULL;
    if (o->have_gpu || o->have_cpu) {
        *gpu = o->gpu_hours;
        *cpu = o->cpu_hours;
        *version = -1;
        if (o->version < 0)
            return 0;
    }
    if (cost_usage_list(st, o->model, o->version, &u, &n, &err) < 0)
        return out_error(ctx, &err, NULL);
    if (!n) {
        if (o->version >= 0)
            rc = out_errorf(
                ctx, EXA_ENOTFOUND, "see 'exa models list' for its versions",
                "model '%s' has no version %lld", o->model, o->version);
        else
            rc = out_errorf(ctx, EXA_ENOTFOUND,
                            "train one with 'exa pipeline run', or give "
                            "--gpu-hours H to record known hours",
                            "model '%s' has no registered version", o->model);
        goto out;
    }
    v = &u[n - 1]; /* the one asked for, or the latest */
    *version = v->version;
    *run_uuid = v->run_uuid ? xstrdup(v->run_uuid) : NULL;
    if (o->have_gpu || o->have_cpu)
        goto out;
    if (!v->linked) {
        rc = out_errorf(ctx, EXA_EFAIL,
                        "give --gpu-hours H (and --cpu-hours H) to record "
                        "known hours",
                        "version %lld of '%s' has no job on record, so no "
                        "GPU- or CPU-hours",
                        v->version, o->model);
        goto out;
    }
    if (!v->has_gpu && !v->has_cpu) {
        rc = out_errorf(ctx, EXA_EFAIL,
                        "the scheduler's accounting did not reach exa; give "
                        "--gpu-hours H (and --cpu-hours H) to record known "
                        "hours",
                        "GPU- and CPU-hours of version %lld of '%s' (job "
                        "'%s' on '%s') were not recorded",
                        v->version, o->model, v->job_id ? v->job_id : "?",
                        v->cluster ? v->cluster : "?");
        goto out;
    }
    *gpu = v->has_gpu ? v->gpu_hours : 0;
    *cpu = v->has_cpu ? v->cpu_hours : 0;
    *from_job = 1;
    if (!v->has_cpu)
        out_warn(ctx,
                 "CPU-hours of version %lld of '%s' were not recorded; "
                 "the record covers GPU-hours only",
                 v->version, o->model);
out:
    if (rc) {
        free(*run_uuid);
        *run_uuid = NULL;
    }
    cost_usage_free(u, n);
    return rc;
}

static int carbon_record_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    struct carbon_opts o;
    struct carbon_result r;
    exa_error_t err = EXA_ERROR_INIT;
    const struct carbon_provider *prov;
    store_t *st = NULL;
    double gpu = 0, cpu = 0;
    long long version = -1, id = 0;
    char *run_uuid = NULL, *actor = NULL, *msg = NULL;
    const char *run_id;
    int from_job = 0, changed = 0;
    json_t *doc;
    int rc = parse_carbon_opts(ctx, argc, argv, 1, &o);
    if (rc)
        return rc;
    if (!(prov = carbon_provider_resolve(o.provider, &err)))
        return out_error(ctx, &err, "see 'exa finops carbon providers'");
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    rc = record_hours(ctx, st, &o, &gpu, &cpu, &version, &run_uuid, &from_job);
    if (rc)
        goto out;
    if (carbon_estimate(prov, &o.params, gpu, cpu, &r, &err) < 0) {
        rc = estimate_error(ctx, &err);
        goto out;
    }
    /* Reports need an accounting signal (GHG Protocol scope 2). */
    if (r.signal_type != CARBON_SIGNAL_ACCOUNTING) {
        rc = out_errorf(ctx, EXA_EFAIL,
                        "use an accounting method: average_grid_mix, "
                        "static_default, operator_supplied or residual_mix",
                        "grid signal '%s' is a %s signal; carbon records "
                        "need an accounting signal",
                        r.method, carbon_signal_type_name(r.signal_type));
        goto out;
    }
    run_id = o.run_id ? o.run_id : run_uuid;
    actor = audit_actor();
    if (carbon_record(st, o.model, version, run_id, &r, "cli", actor, &id,
                      &changed, &err) < 0) {
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    if (version >= 0)
        msg = xstrfmt("Recorded %.3f kWh / %.1f gCO2e for %s version %lld "
                      "(provider: %s)",
                      r.kwh, r.co2e_g, o.model, version, prov->name);
    else
        msg = xstrfmt("Recorded %.3f kWh / %.1f gCO2e for %s (provider: %s)",
                      r.kwh, r.co2e_g, o.model, prov->name);
    if (!changed) {
        char *m2 = xstrfmt("%s; already recorded, unchanged", msg);
        free(msg);
        msg = m2;
    }
    if (ctx->out == OUT_JSON) {
        doc = carbon_result_json(&r);
        jx_set(doc, "ok", json_true());
        jx_set(doc, "message", jx_str(msg));
        jx_set(doc, "id", json_integer(id));
        jx_set(doc, "model", jx_str(o.model));
        jx_set(doc, "version", jx_int_or_null(version >= 0, version));
        jx_set(doc, "run_id", jx_str(run_id));
        jx_set(doc, "hours_from", jx_str(from_job ? "job" : "flags"));
        jx_set(doc, "changed", json_boolean(changed));
        out_json(ctx, doc);
    } else {
        out_info(ctx, "\u2713 %s", msg);
    }
out:
    free(msg);
    free(actor);
    free(run_uuid);
    store_close(st);
    return rc;
}

static int carbon_report_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {NULL, 0, NULL, 0},
    };
    const char *model = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    struct carbon_totals t;
    store_t *st;
    int c, rc;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:", longopts, NULL)) != -1) {
        if (c == 'm')
            model = optarg;
        else if (c == ':')
            return out_usage(ctx, "option '%s' needs a value",
                             argv[optind - 1]);
        else
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        struct view_ctx vc = {st, NULL, 0};
        json_t *doc = view_carbon(&vc, model, &err);
        store_close(st);
        if (!doc)
            return out_error(ctx, &err, NULL);
        out_json(ctx, doc);
        return 0;
    }
    rc = carbon_totals_get(st, model, &t, &err);
    store_close(st);
    if (rc < 0)
        return out_error(ctx, &err, NULL);
    if (!t.n) {
        out_info(ctx,
                 "No carbon records yet%s%s%s. Record one with: exa "
                 "finops carbon record MODEL",
                 model ? " for '" : "", model ? model : "", model ? "'" : "");
        return 0;
    }
    {
        static const char *const cols[] = {"Metric", "Value", NULL};
        struct out_table *tb = out_table_create(cols);
        char n[32], kwh[64], g[64], kg[64];
        snprintf(n, sizeof(n), "%lld", t.n);
        snprintf(kwh, sizeof(kwh), "%.3f", t.kwh);
        snprintf(g, sizeof(g), "%.1f", t.co2e_g);
        snprintf(kg, sizeof(kg), "%.3f", t.co2e_g / 1000.0);
        out_info(ctx, "Carbon report%s%s", model ? ": " : "",
                 model ? model : "");
        out_table_row(tb, (const char *const[]){"Runs", n});
        out_table_row(tb, (const char *const[]){"Total energy (kWh)", kwh});
        out_table_row(tb, (const char *const[]){"Operational CO2e (g)", g});
        out_table_row(tb, (const char *const[]){"Operational CO2e (kg)", kg});
        out_table_row(tb, (const char *const[]){"Embodied CO2e",
                                                "unavailable (not modelled)"});
        out_table_print(ctx, tb);
    }
    return 0;
}

static int carbon_providers_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {"Name", "Kind", "Uncertainty", "Status",
                                       NULL};
    exa_error_t err = EXA_ERROR_INIT;
    const struct carbon_provider *def;
    json_t *arr;
    struct out_table *t;
    int rc;
    if ((rc = cmd_no_args(ctx, argc, argv)))
        return rc;
    def = carbon_provider_resolve(NULL, &err);
    if (!def)
        out_warn(ctx, "%s", err.text);
    if (ctx->out == OUT_JSON) {
        arr = json_array();
        for (size_t i = 0; carbon_providers[i]; i++) {
            const struct carbon_provider *p = carbon_providers[i];
            json_t *o = json_object();
            jx_set(o, "name", jx_str(p->name));
            jx_set(o, "kind", jx_str(p->kind));
            jx_set(o, "default", json_boolean(p == def));
            jx_set(o, "ok", json_true());
            jx_set(o, "methodology", jx_str(p->methodology));
            jx_set(o, "uncertainty", jx_real(p->uncertainty));
            jx_set(o, "cpu_hours_term", json_boolean(p->has_cpu_term));
            jx_set(o, "error", NULL);
            json_array_append_new(arr, o);
        }
        out_json(ctx, arr);
        return 0;
    }
    out_info(ctx, "Carbon providers");
    t = out_table_create(cols);
    for (size_t i = 0; carbon_providers[i]; i++) {
        const struct carbon_provider *p = carbon_providers[i];
        char name[96], unc[32];
        snprintf(name, sizeof(name), "%s%s", p->name,
                 p == def ? " (default)" : "");
        fmt_pct(unc, sizeof(unc), p->uncertainty);
        out_table_row(t, (const char *const[]){name, p->kind, unc, "ok"});
    }
    out_table_print(ctx, t);
    return 0;
}

struct subcmd {
    const char *name;
    exa_cmd_f fn;
};

static int dispatch(struct exa_ctx *ctx, const char *what,
                    const struct subcmd *subs, int argc, char **argv)
{
    struct strbuf names = STRBUF_INIT;
    int rc;
    if (argc >= 2)
        for (const struct subcmd *s = subs; s->name; s++)
            if (!strcmp(argv[1], s->name))
                return s->fn(ctx, argc - 1, argv + 1);
    for (const struct subcmd *s = subs; s->name; s++)
        strbuf_addf(&names, "%s%s", s == subs ? "" : ", ", s->name);
    if (argc < 2)
        rc = out_usage(ctx, "'exa finops %s' needs a sub-command: %s", what,
                       names.buf);
    else
        rc = out_usage(ctx,
                       "'%s' is not an 'exa finops %s' sub-command: "
                       "expected one of %s",
                       argv[1], what, names.buf);
    strbuf_release(&names);
    return rc;
}

static int cmd_carbon(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct subcmd subs[] = {
        {"estimate", carbon_estimate_cmd},
        {"record", carbon_record_cmd},
        {"report", carbon_report_cmd},
        {"providers", carbon_providers_cmd},
        {NULL, NULL},
    };
    return dispatch(ctx, "carbon", subs, argc, argv);
}

static int cost_providers_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {
        "Name",   "Alias", "GPU rate (USD/h)", "CPU rate (USD/h)",
        "Method", NULL};
    exa_error_t err = EXA_ERROR_INIT;
    const struct cost_provider *def;
    struct cost_params p;
    struct out_table *t;
    int rc;
    if ((rc = cmd_no_args(ctx, argc, argv)))
        return rc;
    if (cost_params_from_env(&p, &err) < 0)
        return out_error(ctx, &err, NULL);
    def = cost_provider_resolve(NULL, &err);
    if (!def)
        out_warn(ctx, "%s", err.text);
    if (ctx->out == OUT_JSON) {
        json_t *arr = json_array();
        for (size_t i = 0; cost_providers[i]; i++) {
            const struct cost_provider *c = cost_providers[i];
            json_t *o = json_object();
            jx_set(o, "name", jx_str(c->name));
            jx_set(o, "alias", jx_str(c->alias));
            jx_set(o, "default", json_boolean(c == def));
            jx_set(o, "methodology", jx_str(c->methodology));
            jx_set(o, "gpu_rate_usd", jx_real(p.gpu_rate));
            jx_set(o, "cpu_rate_usd", jx_real(p.cpu_rate));
            json_array_append_new(arr, o);
        }
        out_json(ctx, arr);
        return 0;
    }
    out_info(ctx, "Cost providers");
    t = out_table_create(cols);
    for (size_t i = 0; cost_providers[i]; i++) {
        const struct cost_provider *c = cost_providers[i];
        char name[96], g[32], cpu[32];
        snprintf(name, sizeof(name), "%s%s", c->name,
                 c == def ? " (default)" : "");
        snprintf(g, sizeof(g), "%.4g", p.gpu_rate);
        snprintf(cpu, sizeof(cpu), "%.4g", p.cpu_rate);
        out_table_row(
            t, (const char *const[]){name, c->alias, g, cpu, c->methodology});
    }
    out_table_print(ctx, t);
    return 0;
}

static int cmd_cost(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct subcmd subs[] = {
        {"providers", cost_providers_cmd},
        {NULL, NULL},
    };
    return dispatch(ctx, "cost", subs, argc, argv);
}

static const struct exa_cmd cmds[] = {
    {"carbon", cmd_carbon, "estimate|record|report|providers [OPTIONS]",
     "energy and CO2e of training, estimated or recorded per model version",
     "  carbon estimate [--gpu-hours H] [--cpu-hours H] [OPTIONS]\n"
     "      kWh and gCO2e for the given hours; writes nothing\n"
     "  carbon record MODEL [--version N] [--gpu-hours H] [--cpu-hours H]\n"
     "      [--run-id ID] [OPTIONS]\n"
     "      record an estimate for MODEL; without hours, the hours the\n"
     "      scheduler recorded for the version's job (latest version unless\n"
     "      --version; --model-version is the same option)\n"
     "  carbon report [--model/-m M]   total energy and CO2e recorded\n"
     "  carbon providers               the providers and the default\n"
     "\n"
     "OPTIONS (estimate, record):\n"
     "  --provider/-p P      green-ai-default (default), codecarbon-like,\n"
     "                       ccf-like; else $EXAMLOPS_CARBON_PROVIDER\n"
     "  --grid-intensity G   gCO2e per kWh (300)\n"
     "  --grid-method M      how G was obtained: static_default (when G is\n"
     "                       300), operator_supplied (otherwise),\n"
     "                       average_grid_mix, residual_mix, ...\n"
     "  --pue X              power usage effectiveness (1.5)\n"
     "  --gpu-tdp W          W per GPU (400)\n"
     "  --cpu-tdp W          W of the CPU (120)\n"
     "\n"
     "Formulas and defaults: doc/finops.md.\n"
     "Example: exa finops carbon estimate --gpu-hours 12"},
    {"cost", cmd_cost, "providers",
     "the cost providers and rates used by 'exa models cost'",
     "  cost providers   list flat-rate and tiered-example with the rates\n"
     "                   in effect (GPU_COST_PER_HOUR, CPU_COST_PER_HOUR)\n"
     "Example: exa finops cost providers"},
    {NULL},
};

const struct exa_group group_finops = {"finops", "GPU-hours, cost and carbon",
                                       cmds};
