/*
 * provision.c - the `exa provision` group: the Slurm provisioner's state
 * (libprovision/provision.h). `exa serve --worker-listen` runs the
 * provisioner when provisioners.json exists; these commands read and
 * steer it through platform.db and the gate.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/groups.h"
#include "libprovision/provision.h"
#include "libstore/store.h"
#include "libtask/engine.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

static int load(struct exa_ctx *ctx, struct prov_config *cfg, int *rc)
{
    exa_error_t err = EXA_ERROR_INIT;
    int found = prov_config_load(NULL, cfg, &err);
    if (found < 0) {
        *rc = out_error(ctx, &err, NULL);
        return -1;
    }
    if (!found) {
        char *p = prov_config_path();
        *rc = out_errorf(ctx, EXA_ECONFIG,
                         "write it (see doc/workers.md) or set "
                         "EXAMLOPS_PROVISIONERS",
                         "no provisioners configured: '%s' does not exist", p);
        free(p);
        return -1;
    }
    return 0;
}

static int status_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {
        "Provisioner", "Profile", "Cpus", "Gpus",       "RAM_MB",
        "Outstanding", "Breaker", "Pin",  "Last error", NULL};
    static const char *const rcols[] = {"Request", "Profile", "Job",
                                        "State",   "Reason",  NULL};
    static const char *const xcols[] = {"Cluster", "Profile", "Excluded node",
                                        "Until",   "Reason",  NULL};
    struct prov_config cfg;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    json_t *doc, *ps, *rs;
    int rc;
    if ((rc = cmd_no_args(ctx, argc, argv)))
        return rc;
    if (load(ctx, &cfg, &rc) < 0)
        return rc;
    if (!(st = store_open(NULL, &err))) {
        prov_config_release(&cfg);
        return out_error(ctx, &err, NULL);
    }
    doc = prov_view_status(st, &cfg, 20, (double)time(NULL), &err);
    store_close(st);
    prov_config_release(&cfg);
    if (!doc)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        out_json(ctx, doc);
        return 0;
    }
    ps = json_object_get(doc, "provisioners");
    {
        const char *pin =
            jx_get_str(json_object_get(doc, "engine"), "worker_pin", NULL);
        out_info(ctx, "Worker pin: %s",
                 pin ? pin
                     : "none (the worker listener is plain HTTP or has "
                       "not run)");
    }
    {
        struct out_table *t = out_table_create(cols);
        for (size_t i = 0; i < json_array_size(ps); i++) {
            json_t *p = json_array_get(ps, i),
                   *prof = json_object_get(p, "profiles");
            for (size_t k = 0; k < json_array_size(prof); k++) {
                json_t *x = json_array_get(prof, k);
                char c[24], g[24], r[24];
                const char *row[10];
                json_t *m = json_object_get(p, "pin_match");
                xsnprintf(c, sizeof(c), "%lld", jx_get_int(x, "cpus", 0));
                xsnprintf(g, sizeof(g), "%lld", jx_get_int(x, "gpus", 0));
                xsnprintf(r, sizeof(r), "%lld", jx_get_int(x, "ram_mb", 0));
                row[0] = jx_get_str(p, "name", NULL);
                row[1] = jx_get_str(x, "name", NULL);
                row[2] = c;
                row[3] = g;
                row[4] = r;
                row[5] = json_is_true(json_object_get(x, "outstanding")) ? "yes"
                                                                         : "no";
                row[6] = json_is_true(json_object_get(x, "breaker_open"))
                             ? "open"
                             : "closed";
                /* its own pin against the engine's, or the engine's */
                row[7] = json_is_boolean(m)
                             ? (json_is_true(m) ? "match" : "mismatch")
                         : jx_get_str(p, "pin", NULL) ? "engine's"
                                                      : "none";
                row[8] = jx_get_str(x, "last_error", NULL);
                row[9] = NULL;
                out_table_row(t, row);
            }
        }
        out_table_print(ctx, t);
    }
    /* black-hole nodes: sbatch --exclude until the time shown */
    rs = json_object_get(doc, "exclusions");
    if (json_array_size(rs)) {
        struct out_table *t = out_table_create(xcols);
        for (size_t i = 0; i < json_array_size(rs); i++) {
            json_t *x = json_array_get(rs, i);
            char until[TIME_ISO_MAX];
            const char *row[6];
            time_format_iso8601(
                (time_t)json_number_value(json_object_get(x, "until")), until,
                sizeof(until));
            row[0] = jx_get_str(x, "cluster", NULL);
            row[1] = jx_get_str(x, "profile", NULL);
            row[2] = jx_get_str(x, "node", NULL);
            row[3] = until;
            row[4] = jx_get_str(x, "reason", NULL);
            row[5] = NULL;
            out_table_row(t, row);
        }
        out_table_print(ctx, t);
    }
    rs = json_object_get(doc, "requests");
    if (json_array_size(rs)) {
        struct out_table *t = out_table_create(rcols);
        for (size_t i = 0; i < json_array_size(rs); i++) {
            json_t *x = json_array_get(rs, i);
            const char *row[6] = {
                jx_get_str(x, "id", NULL),     jx_get_str(x, "profile", NULL),
                jx_get_str(x, "job", NULL),    jx_get_str(x, "state", NULL),
                jx_get_str(x, "reason", NULL), NULL};
            out_table_row(t, row);
        }
        out_table_print(ctx, t);
    }
    json_decref(doc);
    return 0;
}

static int resume_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    struct prov_config cfg;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    int rc;
    if (argc != 2 || argv[1][0] == '-')
        return out_usage(ctx, "expected one profile name");
    if (load(ctx, &cfg, &rc) < 0)
        return rc;
    if (!(st = store_open(NULL, &err))) {
        prov_config_release(&cfg);
        return out_error(ctx, &err, NULL);
    }
    rc = prov_resume(st, &cfg, argv[1], te_wallclock(NULL), &err);
    store_close(st);
    prov_config_release(&cfg);
    if (rc < 0)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        json_object_set_new(d, "resumed", json_string(argv[1]));
        out_json(ctx, d);
    } else {
        out_info(ctx, "Profile '%s' resumed: its breaker is closed.", argv[1]);
    }
    return 0;
}

static int shutdown_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"drain", no_argument, NULL, 'd'},
        {NULL, 0, NULL, 0},
    };
    struct prov_config cfg;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    int c, rc, drain = 0, n;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c != 'd')
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        drain = 1;
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (load(ctx, &cfg, &rc) < 0)
        return rc;
    if (!(st = store_open(NULL, &err))) {
        prov_config_release(&cfg);
        return out_error(ctx, &err, NULL);
    }
    n = prov_shutdown_store(st, &cfg, NULL, drain, te_wallclock(NULL), &err);
    store_close(st);
    prov_config_release(&cfg);
    if (n < 0)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        json_object_set_new(d, "cancelled", json_integer(n));
        json_object_set_new(d, "drain", json_boolean(drain));
        out_json(ctx, d);
    } else {
        out_info(ctx, "Cancelled %d outstanding request(s)%s.", n,
                 drain ? "; attached workers drain" : "");
    }
    return 0;
}

static const struct exa_cmd prov_cmds[] = {
    {"status", status_cmd, "",
     "profiles, outstanding requests, breakers and recent requests",
     "Reads provisioners.json and platform.db: the worker listener's\n"
     "public-key pin (sha256//..., recorded by exa serve --worker-tls-cert),\n"
     "each profile with its cluster, its outstanding request, breaker\n"
     "state and Pin (match / mismatch: the provisioner's \"pin\" against\n"
     "the engine's; engine's: its workers get the engine's pin; none),\n"
     "then the recent requests. Takes no options; --json prints the\n"
     "document (engine.worker_pin, provisioners[].pin, .pin_match).\n"
     "Example: exa provision status"},
    {"resume", resume_cmd, "PROFILE",
     "close a profile's breaker after repeated failed starts",
     "The profile's breaker opens after repeated failed starts and no\n"
     "request is made for it; resume closes it (an audit event).\n\n"
     "Options:\n"
     "  PROFILE               a profile of provisioners.json\n"
     "Example: exa provision resume gpu-small"},
    {"shutdown", shutdown_cmd, "[--drain]",
     "cancel every outstanding request; --drain also drains attached workers",
     "Cancels every outstanding request (its Slurm job) and records it.\n\n"
     "Options:\n"
     "  --drain               also ask the attached workers to drain:\n"
     "                        finish their tasks and exit (default: they\n"
     "                        keep running)\n"
     "Example: exa provision shutdown --drain"},
    {NULL},
};

const struct exa_group group_provision = {
    "provision",
    "the Slurm provisioner of dial-back workers: status, resume, shutdown",
    prov_cmds,
};
