/*
 * hpc_observe.c - `exa hpc prometheus-sd` and `exa hpc job-map`.
 *
 * prometheus-sd turns the saved node snapshots of ACTIVE clusters into a
 * Prometheus file_sd file (libobserve/file_sd.c); it never contacts a
 * cluster, so a cron job can run it every minute at no cost to the
 * schedulers. job-map is the compute-node side of GPU-to-job attribution
 * (libobserve/jobmap.c), run by root from Slurm's Prolog/Epilog; it needs
 * no database and reads only its environment.
 */
#include "cmd/hpc_observe.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "libfleet/registry.h"
#include "libobserve/file_sd.h"
#include "libobserve/fleet_view.h"
#include "libobserve/jobmap.h"
#include "libstore/store.h"
#include "libutil/atomic.h"
#include "libutil/json.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

int cmd_hpc_prometheus_sd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},
        {"cluster", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *cluster = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    struct fv_fleet fleet;
    store_t *st;
    json_t *groups;
    size_t ntargets = 0;
    char *text;
    int c;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'c':
            cluster = optarg;
            if (cluster_name_check(cluster, "--cluster", &err) < 0)
                return out_error(ctx, &err, NULL);
            break;
        default:
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);

    st = store_open(NULL, &err);
    if (!st)
        return out_error(ctx, &err, NULL);
    if (cluster) {
        /* a named cluster must exist and be ACTIVE */
        if (fv_fleet_load(st, cluster, 1, NULL, &fleet, &err) < 0) {
            store_close(st);
            return out_error(ctx, &err, NULL);
        }
        if (fleet.nr == 0) {
            fv_fleet_release(&fleet);
            store_close(st);
            return out_errorf(ctx, EXA_ENOTFOUND, "exa hpc clusters",
                              "unknown cluster '%s'", cluster);
        }
        if (strcmp(fleet.clusters[0].state, "ACTIVE")) {
            char hint[256];
            exa_error_t e = EXA_ERROR_INIT;
            exa_err(&e, EXA_ENOTAPPROVED, "cluster '%s' is %s, not ACTIVE",
                    cluster, fleet.clusters[0].state);
            int rc = out_error(
                ctx, &e,
                cmd_not_approved_hint(&e, cluster, hint, sizeof(hint)));
            fv_fleet_release(&fleet);
            store_close(st);
            return rc;
        }
    } else if (fv_fleet_load(st, NULL, 0, NULL, &fleet, &err) < 0) {
        store_close(st);
        return out_error(ctx, &err, NULL);
    }
    store_close(st);

    for (size_t i = 0; i < fleet.nr; i++)
        if (fleet.clusters[i].nr_nodes == 0)
            out_warn(ctx,
                     "cluster '%s' has no saved node snapshot: run 'exa hpc "
                     "nodes --cluster %s --save'",
                     fleet.clusters[i].name, fleet.clusters[i].name);
    groups = file_sd_build(&fleet, getenv("EXAMLOPS_TENANT"), &ntargets);
    fv_fleet_release(&fleet);
    if (!out) {
        if (ctx->out == OUT_JSON) {
            out_json(ctx, groups);
        } else {
            text = file_sd_render(groups);
            fputs(text, stdout);
            free(text);
            json_decref(groups);
        }
        return 0;
    }
    text = file_sd_render(groups);
    if (atomic_write_file(out, text, strlen(text), 0644, &err) < 0) {
        free(text);
        json_decref(groups);
        return out_error(ctx, &err, "the previous file, if any, is unchanged");
    }
    free(text);
    if (ctx->out == OUT_JSON) {
        json_t *doc = json_object();
        jx_set(doc, "path", jx_str(out));
        jx_set(doc, "groups",
               json_integer((json_int_t)json_array_size(groups)));
        jx_set(doc, "targets", json_integer((json_int_t)ntargets));
        out_json(ctx, doc);
    } else {
        out_info(ctx, "Wrote %zu target%s in %zu group%s to %s", ntargets,
                 ntargets == 1 ? "" : "s", json_array_size(groups),
                 json_array_size(groups) == 1 ? "" : "s", out);
    }
    json_decref(groups);
    return 0;
}

int cmd_hpc_job_map(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},
        {"job-id", required_argument, NULL, 'j'},
        {"gpus", required_argument, NULL, 'g'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = getenv("EXAMLOPS_JOB_MAP_DIR");
    const char *job = getenv("SLURM_JOB_ID"), *gpus = NULL, *source = NULL;
    const char *action;
    exa_error_t err = EXA_ERROR_INIT;
    struct strvec list = STRVEC_INIT;
    int c, n;

    if (!dir || !*dir)
        dir = JOBMAP_DEFAULT_DIR;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            dir = optarg;
            break;
        case 'j':
            job = optarg;
            break;
        case 'g':
            gpus = optarg;
            break;
        default:
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc ||
        (strcmp(argv[optind], "prolog") && strcmp(argv[optind], "epilog")))
        return out_usage(ctx, "expected one action: prolog or epilog");
    action = argv[optind];
    if (!job || !*job)
        return out_usage(ctx, "no job id: set SLURM_JOB_ID or --job-id");
    if (!jobmap_valid_job_id(job))
        return out_usage(ctx, "invalid job id '%s'", job);

    if (!strcmp(action, "prolog")) {
        int rc = gpus ? jobmap_parse_gpus(gpus, &list, &err)
                      : jobmap_gpus_from_env(&list, &source, &err);
        if (rc < 0) {
            strvec_clear(&list);
            return out_error(ctx, &err, NULL);
        }
        if (gpus)
            source = "--gpus";
        n = jobmap_prolog(dir, job, &list, &err);
    } else {
        n = jobmap_epilog(dir, job, &err);
    }
    if (n < 0) {
        strvec_clear(&list);
        return out_error(ctx, &err, NULL);
    }
    if (ctx->out == OUT_JSON) {
        json_t *doc = json_object(), *arr = json_array();
        for (size_t i = 0; i < list.nr; i++)
            json_array_append_new(arr, jx_str(list.v[i]));
        jx_set(doc, "action", jx_str(action));
        jx_set(doc, "job_id", jx_str(job));
        jx_set(doc, "dir", jx_str(dir));
        jx_set(doc, "gpus", !strcmp(action, "prolog") ? arr : json_null());
        if (strcmp(action, "prolog"))
            json_decref(arr);
        jx_set(doc, "gpus_source", jx_str(source));
        jx_set(doc, "files_changed", json_integer(n));
        out_json(ctx, doc);
    } else if (!strcmp(action, "prolog")) {
        out_info(ctx, "Mapped job %s to %zu GPU%s in %s (%d file%s changed)",
                 job, list.nr, list.nr == 1 ? "" : "s", dir, n,
                 n == 1 ? "" : "s");
    } else {
        out_info(ctx, "Unmapped job %s in %s (%d file%s changed)", job, dir, n,
                 n == 1 ? "" : "s");
    }
    strvec_clear(&list);
    return 0;
}
