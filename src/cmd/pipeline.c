/*
 * pipeline.c - the `exa pipeline` group (`pipeline run`) and `exa train`.
 *
 * `pipeline run` turns flags and environment into a run request and hands
 * it to libpipeline (run.h); this file only resolves defaults, prints
 * progress on a terminal and reports the outcome. `exa train` is the
 * payload a cluster job runs: train in this process and publish the
 * artifact directory, with no database.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/groups.h"
#include "cmd/pipeline_cluster.h"
#include "libpipeline/run.h"
#include "libpipeline/train.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* Progress lines on a terminal: step, elapsed seconds, detail. */
static void show_step(void *arg, const char *step, double seconds,
                      const char *detail)
{
    struct exa_ctx *ctx = arg;
    if (!ctx->tty || ctx->quiet)
        return;
    printf("  %-9s %7.2fs  %s\n", step, seconds, detail);
    fflush(stdout);
}

/* Set by the first SIGINT/SIGTERM of a mock run; libpipeline polls it. */
static volatile sig_atomic_t run_interrupted;

static void on_interrupt(int sig)
{
    run_interrupted = sig;
}

/*
 * Catch SIGINT and SIGTERM around a mock run so it can clean up (run.h):
 * the handler only stores the signal number, and SA_RESETHAND lets a
 * second one kill at once. A signal this process inherited as ignored
 * (nohup, `cmd &` in a script) stays ignored.
 */
static void catch_interrupts(struct sigaction old[2])
{
    static const int sigs[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_interrupt;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

static void restore_interrupts(const struct sigaction old[2])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

/*
 * The scheduler this run would use: EXAMLOPS_HPC_SCHEDULER, else the
 * legacy EXAMLOPS_SLURM_MODE, else mock. Returns NULL (and an error
 * printed) for a value that is none of mock, slurm, flux.
 */
static const char *scheduler_from_env(struct exa_ctx *ctx, int *rc)
{
    static const char *const known[] = {"mock", "slurm", "flux"};
    const char *var = "EXAMLOPS_HPC_SCHEDULER";
    const char *v = getenv(var);
    if (!v || !*v) {
        var = "EXAMLOPS_SLURM_MODE";
        v = getenv(var);
    }
    if (!v || !*v)
        return "mock";
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(v, known[i]))
            return known[i];
    *rc = out_errorf(ctx, EXA_ECONFIG, "set it to mock, slurm or flux",
                     "%s='%s' is not a known scheduler", var, v);
    return NULL;
}

/* --max-skip SHARE: "0.25" or "25%", in [0, 1]. 0 or a usage error. */
static int parse_share(struct exa_ctx *ctx, const char *s, double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (end != s && *end == '%' && !end[1]) {
        v /= 100;
        end++;
    }
    if (end == s || *end || errno || !(v >= 0 && v <= 1))
        return out_usage(ctx,
                         "--max-skip '%s': expected a share of the records "
                         "between 0 and 1 (0.25) or a percentage (25%%)",
                         s);
    *out = v;
    return 0;
}

/* The train request's warnings (skipped records): on stderr always. */
static void show_warning(void *arg, const char *msg)
{
    out_warn(arg, "%s", msg);
}

static int parse_threads(struct exa_ctx *ctx, const char *s, int *out)
{
    long long v;
    int rc = cmd_parse_uint(ctx, "--threads", s, &v);
    if (rc)
        return rc;
    if (v < 1 || v > 256)
        return out_usage(ctx, "option '--threads' expects 1..256, got '%s'", s);
    *out = (int)v;
    return 0;
}

static int bad_option(struct exa_ctx *ctx, char **argv)
{
    if (optopt)
        return out_usage(ctx, "option '-%c' is unknown or needs a value",
                         optopt);
    return out_usage(ctx, "option '%s' is unknown or needs a value",
                     argv[optind - 1]);
}

static void print_outcome(struct exa_ctx *ctx,
                          const struct pipeline_run_result *r)
{
    const struct job_rec *j = &r->job;
    const struct model_version *mv = &r->mv;
    char mape[32] = "n/a";
    if (isfinite(mv->mape))
        snprintf(mape, sizeof(mape), "%.2f%%", mv->mape);
    printf("Trained %s version %lld on %s: rmse %.2f W per node, mape %s, "
           "stage %s\n",
           mv->model, mv->version, mv->dataset, mv->rmse, mape, mv->stage);
    printf("model:   %s/model.json (encoders.json beside it, sha256 of "
           "SHA256SUMS %.12s...)\n",
           mv->artifact_path, mv->artifact_sha256);
    printf("metrics: %s/metrics.json, and in platform.db "
           "(exa models show %s --version %lld)\n",
           mv->artifact_path, mv->model, mv->version);
    printf("job:     %s on cluster %s (%s) %s in %.2fs, %.2f CPU-s, recorded "
           "in %s (exa hpc jobs)\n",
           j->job_id, j->cluster, j->scheduler, j->state, j->run_seconds,
           j->cpu_seconds, r->db_path);
}

static json_t *outcome_json(const struct pipeline_run_result *r)
{
    const struct model_version *mv = &r->mv;
    json_t *o = json_object();
    jx_set(o, "job", job_rec_to_json(&r->job));
    jx_set(o, "model", jx_str(mv->model));
    jx_set(o, "version", json_integer(mv->version));
    jx_set(o, "stage", jx_str(mv->stage));
    jx_set(o, "metrics", trained_model_metrics_json(&r->tm));
    jx_set(o, "artifact_path", jx_str(mv->artifact_path));
    jx_set(o, "artifact_sha256", jx_str(mv->artifact_sha256));
    jx_set(o, "dataset", jx_str(mv->dataset));
    jx_set(o, "dataset_path", jx_str(mv->dataset_path));
    jx_set(o, "records", json_integer((json_int_t)r->tm.records));
    jx_set(o, "train_rows", json_integer(mv->train_rows));
    jx_set(o, "val_rows", json_integer(mv->val_rows));
    jx_set(o, "skipped_rows", json_integer(mv->skipped_rows));
    jx_set(o, "dummy", json_boolean(r->tm.dummy));
    jx_set(o, "db_path", jx_str(r->db_path));
    return o;
}

static const char *dataset_hint(const exa_error_t *err)
{
    if (strstr(err->text, "dataset file"))
        return "pass --dataset-path FILE or set EXAMLOPS_PM100_PATH "
               "(doc/pm100.md)";
    if (strstr(err->text, "unknown model") ||
        strstr(err->text, "unknown dataset"))
        return "see 'exa pipeline run --help'";
    return NULL;
}

static int cmd_run(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"dataset", required_argument, NULL, 'd'},
        {"dummy", no_argument, NULL, 'D'},
        {"dataset-path", required_argument, NULL, 'P'},
        {"cluster", required_argument, NULL, 'C'},
        {"gpus", required_argument, NULL, 'g'},
        {"threads", required_argument, NULL, 'T'},
        {"stage-dataset", no_argument, NULL, 'S'},
        {"partition", required_argument, NULL, 1000},
        {"qos", required_argument, NULL, 1001},
        {"account", required_argument, NULL, 1002},
        {"time", required_argument, NULL, 1003},
        {"nodes", required_argument, NULL, 1004},
        {"cpus-per-task", required_argument, NULL, 1005},
        {"mem", required_argument, NULL, 1006},
        {"constraint", required_argument, NULL, 1007},
        {"ntasks", required_argument, NULL, 1008},
        {"run-id", required_argument, NULL, 'R'},
        {"new", no_argument, NULL, 'N'},
        {"max-skip", required_argument, NULL, 1100},
        {"dry-run", no_argument, NULL, 1101},
        {"via", required_argument, NULL, 1102},
        {NULL, 0, NULL, 0},
    };
    static const char *const res_keys[] = {
        "partition",     "qos", "account",    "time",  "nodes",
        "cpus_per_task", "mem", "constraint", "ntasks"};
    struct sched_resources ask = SCHED_RESOURCES_INIT;
    int stage = 0, nres = 0;
    struct pipeline_run_request req;
    struct pipeline_run_result res;
    struct sigaction oldsig[2];
    exa_error_t err = EXA_ERROR_INIT;
    const char *cluster = NULL, *sched, *run_id = NULL;
    char *path = NULL;
    int c, rc = 0, new_run = 0, dry_run = 0, via_worker = 0, nbatch = 0;
    long long gpus = 0;

    memset(&req, 0, sizeof(req));
    req.train.model = "JPCP";
    req.train.dataset = "PM100Dataset";
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "m:d:C:g:", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            req.train.model = optarg;
            break;
        case 'd':
            req.train.dataset = optarg;
            break;
        case 'D':
            req.train.dummy = 1;
            break;
        case 'P':
            req.train.dataset_path = optarg;
            break;
        case 'C':
            cluster = optarg;
            break;
        case 'g':
            if ((rc = cmd_parse_uint(ctx, "--gpus", optarg, &gpus)))
                goto usage_out;
            break;
        case 'T':
            if ((rc = parse_threads(ctx, optarg, &req.train.nthread)))
                goto usage_out;
            break;
        case 'S':
            stage = 1;
            break;
        case 'R':
            run_id = optarg;
            break;
        case 'N':
            new_run = 1;
            break;
        case 1100:
            if ((rc = parse_share(ctx, optarg, &req.train.max_skip)))
                goto usage_out;
            req.train.max_skip_set = 1;
            break;
        case 1101:
            dry_run = 1;
            break;
        case 1102:
            if (!strcmp(optarg, "worker")) {
                via_worker = 1;
            } else if (!strcmp(optarg, "batch")) {
                via_worker = 0;
            } else {
                rc = out_usage(ctx,
                               "--via '%s': expected batch (a Slurm or "
                               "Flux job of its own, the default) or worker "
                               "(a task on a dial-back worker of the "
                               "cluster)",
                               optarg);
                goto usage_out;
            }
            break;
        case 1000:
        case 1001:
        case 1002:
        case 1003:
        case 1004:
        case 1005:
        case 1006:
        case 1007:
        case 1008:
            if (sched_resources_set(&ask, res_keys[c - 1000], optarg, &err) <
                0) {
                rc = out_usage(ctx, "%s", err.text);
                goto usage_out;
            }
            nres++;
            if (c != 1003 && c != 1005 && c != 1008)
                nbatch++; /* a worker's profile decides these */
            break;
        default:
            rc = bad_option(ctx, argv);
            goto usage_out;
        }
    }
    if (optind < argc) {
        rc = out_usage(ctx, "unexpected argument '%s'", argv[optind]);
        goto usage_out;
    }
    if (run_id && new_run) {
        rc = out_usage(ctx, "--run-id and --new exclude each other");
        goto usage_out;
    }
    /* EXAMLOPS_HPC_CLUSTER names the cluster as --cluster does (DESIGN
     * §5); the flag wins. A run the user pointed at a cluster never falls
     * back to training on this machine. */
    if (!cluster) {
        const char *ec = getenv("EXAMLOPS_HPC_CLUSTER");
        if (ec && *ec)
            cluster = ec;
    }
    if (via_worker && !cluster) {
        rc = out_usage(ctx, "--via worker needs --cluster NAME (the cluster "
                            "whose workers run the task)");
        goto usage_out;
    }
    if (via_worker && (nbatch || stage)) {
        rc = out_usage(ctx,
                       "--via worker takes --gpus, --cpus-per-task, --ntasks "
                       "and --time (the task's timeout); --stage-dataset, "
                       "--partition, --qos, --account, --nodes, --mem and "
                       "--constraint need --via batch (a worker's profile in "
                       "provisioners.json decides them)");
        goto usage_out;
    }
    if (cluster) {
        struct pipeline_cluster_opts po;
        memset(&po, 0, sizeof(po));
        po.model = req.train.model;
        po.dataset = req.train.dataset;
        po.dataset_path = req.train.dataset_path;
        po.dummy = req.train.dummy;
        po.stage_dataset = stage;
        po.nthread = req.train.nthread;
        po.max_skip = req.train.max_skip;
        po.max_skip_set = req.train.max_skip_set;
        po.dry_run = dry_run;
        po.cluster = cluster;
        po.run_id = run_id;
        po.new_run = new_run;
        po.res = ask;
        po.res.gpus = gpus;
        po.via_worker = via_worker;
        return pipeline_cluster_run(ctx, &po);
    }
    sched_resources_release(&ask);
    if (stage || nres || run_id || new_run || dry_run)
        return out_usage(ctx, "--stage-dataset, --run-id, --new, --dry-run "
                              "and resource options need --cluster NAME|auto");
    if (!(sched = scheduler_from_env(ctx, &rc)))
        return rc;
    if (strcmp(sched, "mock"))
        return out_errorf(
            ctx, EXA_EUSAGE,
            "name the cluster: --cluster NAME|auto (see 'exa hpc clusters'), "
            "or unset EXAMLOPS_HPC_SCHEDULER to train in this process",
            "cluster runs (scheduler %s) need --cluster NAME|auto", sched);
    if (gpus > 0)
        return out_errorf(ctx, EXA_EUSAGE, "drop --gpus for a mock run",
                          "--gpus %lld needs a cluster run; mock runs train "
                          "on this machine's CPUs",
                          gpus);
    if (!req.train.dataset_path) {
        const struct zoo_dataset *d = zoo_dataset_find(req.train.dataset, &err);
        if (!d)
            return out_error(ctx, &err, "see 'exa pipeline run --help'");
        path = zoo_dataset_default_path(d, EXA_DATADIR, EXA_SRCDIR);
        req.train.dataset_path = path;
    }
    req.train.progress = show_step;
    req.train.progress_arg = ctx;
    req.train.warn = show_warning;
    if (ctx->tty && !ctx->quiet) {
        printf("Running %s on %s in this process (scheduler mock, cluster "
               "local)%s\n",
               req.train.model, req.train.dataset,
               req.train.dummy ? ", --dummy" : "");
        fflush(stdout);
    }

    run_interrupted = 0;
    req.interrupted = &run_interrupted;
    catch_interrupts(oldsig);
    rc = pipeline_run_mock(&req, &res, &err);
    restore_interrupts(oldsig);
    if (rc < 0) {
        char hint[256];
        const char *h = dataset_hint(&err);
        if (res.job_recorded) {
            snprintf(hint, sizeof(hint),
                     "job %s on cluster local is "
                     "recorded as FAILED; see 'exa hpc jobs'",
                     res.job.job_id);
            h = hint;
        }
        rc = out_error(ctx, &err, h);
    } else if (ctx->out == OUT_JSON) {
        out_json(ctx, outcome_json(&res));
    } else {
        print_outcome(ctx, &res);
    }
    pipeline_run_result_release(&res);
    free(path);
    return rc;
usage_out:
    sched_resources_release(&ask);
    return rc;
}

int cmd_train(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"dataset", required_argument, NULL, 'd'},
        {"dummy", no_argument, NULL, 'D'},
        {"dataset-path", required_argument, NULL, 'P'},
        {"out", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, 'T'},
        {"max-skip", required_argument, NULL, 1100},
        {NULL, 0, NULL, 0},
    };
    struct train_request req;
    struct trained_model tm;
    exa_error_t err = EXA_ERROR_INIT;
    const char *out = NULL;
    char sha[65];
    int c, rc;

    memset(&req, 0, sizeof(req));
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "m:d:", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            req.model = optarg;
            break;
        case 'd':
            req.dataset = optarg;
            break;
        case 'D':
            req.dummy = 1;
            break;
        case 'P':
            req.dataset_path = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'T':
            if ((rc = parse_threads(ctx, optarg, &req.nthread)))
                return rc;
            break;
        case 1100:
            if ((rc = parse_share(ctx, optarg, &req.max_skip)))
                return rc;
            req.max_skip_set = 1;
            break;
        default:
            return bad_option(ctx, argv);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (!req.model || !req.dataset || !req.dataset_path || !out)
        return out_usage(ctx, "exa train needs --model, --dataset, "
                              "--dataset-path and --out");
    req.progress = show_step;
    req.progress_arg = ctx;
    req.warn = show_warning;
    if (pipeline_train_to_dir(&req, out, &tm, sha, &err) < 0) {
        rc = out_error(ctx, &err, dataset_hint(&err));
    } else {
        json_t *doc = trained_model_summary_json(&tm);
        jx_set(doc, "artifact_path", jx_str(out));
        jx_set(doc, "artifact_sha256", jx_str(sha));
        out_json(ctx, doc);
        rc = 0;
    }
    trained_model_release(&tm);
    return rc;
}

static const struct exa_cmd cmds[] = {
    {"run", cmd_run,
     "[--model JPCP] [--dataset PM100Dataset] [--dummy] "
     "[--dataset-path FILE] [--threads N] [--max-skip SHARE] "
     "[--cluster NAME|auto [--gpus G] "
     "[--stage-dataset] [--partition P] [--qos Q] [--account A] [--time T] "
     "[--nodes N] [--ntasks N] [--cpus-per-task C] [--mem M] "
     "[--constraint C] [--run-id ID | --new] [--dry-run] "
     "[--via batch|worker]]",
     "train a model and register a new version (mock: in this process)",
     "Loads the dataset, splits it by submit_time (train 2020-05-01 to\n"
     "2020-09-01, validation to 2020-10-01, UTC), trains the model,\n"
     "evaluates rmse/mse/mape on validation, writes the artifacts to\n"
     "${XDG_DATA_HOME:-~/.local/share}/examlops/models/MODEL/VERSION/ and\n"
     "registers the version and the job in platform.db.\n\n"
     "Options:\n"
     "  --model M          zoo model (default JPCP)\n"
     "  --dataset D        dataset (default PM100Dataset)\n"
     "  --dummy            only the first 50 usable rows of each split\n"
     "  --dataset-path F   CSV file; default $EXAMLOPS_PM100_PATH, else\n"
     "                     the bundled data/pm100-sample.csv (with\n"
     "                     --cluster: a path on the cluster)\n"
     "  --threads N        training threads (default 2)\n"
     "  --max-skip SHARE   fail when more than this share of the records\n"
     "                     is skipped (no usable power per node; each\n"
     "                     reason is counted and warned about); 0.25 or\n"
     "                     25%, default 10%\n"
     "  --cluster NAME     train on an ACTIVE cluster (auto: placement\n"
     "                     picks one): preflight, submit, wait, fetch and\n"
     "                     verify the artifacts, register with lineage\n"
     "  --gpus G           GPUs for the job in total (cluster runs)\n"
     "  --stage-dataset    copy the local dataset file to the cluster\n"
     "  --run-id ID        the run's id (default: a hash of what was\n"
     "                     asked); the same command again adopts the\n"
     "                     run's queued or running job, or reports the\n"
     "                     version it registered\n"
     "  --new              a new run with a fresh id, even if the same\n"
     "                     run is queued, running or done\n"
     "  --dry-run          resolve the cluster (placement with auto),\n"
     "                     preflight, and print the scheduler command and\n"
     "                     run.sh; nothing is created, copied, submitted\n"
     "                     or recorded\n"
     "  --via V            batch (default): the run is a Slurm or Flux\n"
     "                     job of its own (run.sh); worker: a task of\n"
     "                     the engine, pinned to the dial-back workers of\n"
     "                     --cluster NAME (exa serve --worker-listen and\n"
     "                     its provisioner start them); the artifacts are\n"
     "                     uploaded as task artifacts, checked against\n"
     "                     SHA256SUMS, and the version's lineage names the\n"
     "                     task, attempt, worker and its Slurm job. Takes\n"
     "                     --gpus, --cpus-per-task, --ntasks and --time\n"
     "                     (the task's timeout, default 1:00:00)\n"
     "  --partition P      the partition (Flux: queue); default\n"
     "                     EXAMLOPS_HPC_PARTITION\n"
     "  --qos Q            the quality of service; default EXAMLOPS_HPC_QOS\n"
     "  --account A        the account (Flux: bank); default\n"
     "                     EXAMLOPS_HPC_ACCOUNT\n"
     "  --constraint C     node features the job needs (sbatch\n"
     "                     --constraint)\n"
     "  --time T           the time limit, e.g. 1:00:00; default\n"
     "                     EXAMLOPS_HPC_TIME\n"
     "  --nodes N          nodes; default EXAMLOPS_HPC_NODES\n"
     "  --ntasks N         tasks (sbatch --ntasks)\n"
     "  --cpus-per-task C  CPUs per task (sbatch --cpus-per-task)\n"
     "  --mem M            memory per node, e.g. 16G (sbatch --mem)\n"
     "\nCtrl-C during the wait asks whether to cancel (-y: yes); resume\n"
     "with 'exa hpc wait JOBID --cluster C'; --via worker: Ctrl-C asks\n"
     "whether to cancel the task, and the same command adopts it.\n\n"
     "Exit: 0 ok, 1 training/job failed, preflight failed or malformed\n"
     "dataset, 2 usage or unknown name, 3 dataset file, data directory or\n"
     "database, 4 transport, 5 scheduler, 6 cluster not approved.\n"
     "See doc/pipeline-run.md and doc/cluster-run.md.\n"
     "Example: exa pipeline run --cluster auto --gpus 1 --dry-run"},
    {NULL},
};

const struct exa_group group_pipeline = {
    "pipeline", "train models, inline (mock) or on a cluster", cmds};
