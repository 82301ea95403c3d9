/*
 * hpc_fleet_common.c - helpers shared by the `exa hpc` fleet commands
 * (hpc_discover.c, hpc_govern.c, hpc_place.c): flag parsing over
 * getopt_long, opening the store with clusters.yaml and the "ok" line.
 * They print through output.c like the commands themselves; only the
 * fleet command files include hpc_fleet_int.h. The trust step (keyscan,
 * pin) and snapshots live in libfleet (trust.h, readops.h).
 */
#include "cmd/hpc_fleet_int.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libfleet/governance.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"

/* "✓ msg" in text mode, {"ok": true, "message": msg} in JSON mode. */
void out_ok(struct exa_ctx *ctx, const char *msg)
{
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "ok", json_true());
        jx_set(d, "message", jx_str(msg));
        out_json(ctx, d);
    } else if (!ctx->quiet) {
        printf("\u2713 %s\n", msg);
    }
}

/* Open the store and resolve clusters.yaml; 0 or an exit status. */
int open_fleet(struct exa_ctx *ctx, store_t **st, char **regpath)
{
    exa_error_t err = EXA_ERROR_INIT;
    *regpath = registry_default_path(&err);
    if (!*regpath)
        return out_error(ctx, &err, NULL);
    *st = store_open(NULL, &err);
    if (!*st) {
        free(*regpath);
        *regpath = NULL;
        return out_error(ctx, &err, NULL);
    }
    return 0;
}

void close_fleet(store_t *st, char *regpath)
{
    store_close(st);
    free(regpath);
}

/* getopt_long over argv with a leading '+' behaviour off; reset first. */
int next_opt(int argc, char **argv, const char *shortopts,
             const struct option *longopts)
{
    return getopt_long(argc, argv, shortopts, longopts, NULL);
}

int bad_option(struct exa_ctx *ctx, int argc, char **argv)
{
    const char *a = optind - 1 < argc && optind > 0 ? argv[optind - 1] : "?";
    return out_usage(ctx, "unknown or incomplete option '%s'", a);
}

int parse_int_opt(struct exa_ctx *ctx, const char *opt, const char *s, int *out)
{
    long long v;
    int rc = cmd_parse_uint(ctx, opt, s, &v);
    if (rc)
        return rc;
    if (v > 1000000)
        return out_usage(ctx, "option '%s' is too large: %s", opt, s);
    *out = (int)v;
    return 0;
}

json_t *caps_json(const char *text)
{
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    return j ? j : json_null();
}
