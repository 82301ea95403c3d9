/*
 * auth.c - the `exa auth` group: API tokens of `exa serve` (REST, the
 * console, MCP over HTTP; doc/console.md). `token create` prints the
 * token once; platform.db keeps only its SHA-256 (libauth/auth.h).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/groups.h"
#include "libauth/auth.h"
#include "libstore/audit.h"
#include "libstore/store.h"
#include "libstore/tokens.h"
#include "libutil/duration.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static int token_create(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"user", required_argument, NULL, 'u'},
        {"role", required_argument, NULL, 'r'},
        {"expires", required_argument, NULL, 'e'},
        {NULL, 0, NULL, 0},
    };
    const char *user = NULL, *role_s = NULL;
    enum auth_role role;
    double secs = 0;
    long long id = 0;
    char *token = NULL, *actor;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    int c, rc;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":u:r:e:", opts, NULL)) != -1) {
        switch (c) {
        case 'u':
            user = optarg;
            break;
        case 'r':
            role_s = optarg;
            break;
        case 'e':
            if (fsd_parse(optarg, &secs) < 0 || !isfinite(secs) || secs < 1 ||
                secs > 10.0 * 366 * 86400)
                return out_usage(ctx,
                                 "--expires '%s': expected a duration "
                                 "like 90m, 12h or 30d (at most 10 years)",
                                 optarg);
            break;
        case ':':
            return out_usage(ctx, "option '%s' needs a value",
                             argv[optind - 1]);
        default:
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (!user)
        return out_usage(ctx, "--user NAME is required");
    if (!role_s)
        return out_usage(ctx, "--role viewer|operator|admin is required");
    role = auth_role_parse(role_s);
    if (role == AUTH_ROLE_NONE)
        return out_usage(ctx,
                         "unknown role '%s': expected viewer, operator or "
                         "admin",
                         role_s);
    if (auth_user_check(user, &err) < 0)
        return out_usage(ctx, "%s", err.text);
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    actor = audit_actor();
    rc = auth_token_create(st, user, role, (long long)ceil(secs), "cli", actor,
                           &token, &id, &err);
    free(actor);
    store_close(st);
    if (rc < 0)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "id", json_integer(id));
        jx_set(d, "user", jx_str(user));
        jx_set(d, "role", jx_str(auth_role_name(role)));
        jx_set(d, "token", jx_str(token));
        out_json(ctx, d);
    } else {
        /* the token alone on stdout, so $(exa auth token create ...)
         * captures it; the note goes to stderr */
        printf("%s\n", token);
        if (!ctx->quiet)
            fprintf(stderr,
                    "token %lld for '%s' (%s): shown once, only its "
                    "SHA-256 is stored\n",
                    id, user, auth_role_name(role));
    }
    memset(token, 0, strlen(token));
    free(token);
    return 0;
}

static int token_list(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {"ID",      "User",    "Role", "Created",
                                       "Expires", "Revoked", NULL};
    struct token_row *v = NULL;
    size_t n = 0;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    int rc;
    if ((rc = cmd_no_args(ctx, argc, argv)))
        return rc;
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    rc = store_token_list(st, &v, &n, &err);
    store_close(st);
    if (rc < 0)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_object();
            jx_set(o, "id", json_integer(v[i].id));
            jx_set(o, "user", jx_str(v[i].user));
            jx_set(o, "role", jx_str(v[i].role));
            jx_set(o, "created_at", jx_str(v[i].created_at));
            jx_set(o, "expires_at", jx_str(v[i].expires_at));
            jx_set(o, "revoked_at", jx_str(v[i].revoked_at));
            json_array_append_new(a, o);
        }
        out_json(ctx, a);
    } else if (!n) {
        out_info(ctx, "No API tokens. Make one with 'exa auth token create "
                      "--user NAME --role viewer'.");
    } else {
        struct out_table *t = out_table_create(cols);
        for (size_t i = 0; i < n; i++) {
            char id[32];
            snprintf(id, sizeof(id), "%lld", v[i].id);
            const char *row[] = {id,
                                 v[i].user,
                                 v[i].role,
                                 v[i].created_at,
                                 v[i].expires_at ? v[i].expires_at : "never",
                                 v[i].revoked_at};
            out_table_row(t, row);
        }
        out_table_print(ctx, t);
    }
    token_rows_free(v, n);
    return 0;
}

static int token_revoke(struct exa_ctx *ctx, int argc, char **argv)
{
    long long id;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    char *actor, msg[96];
    int rc;
    if (argc != 2)
        return out_usage(ctx, "expected one token ID (see 'exa auth token "
                              "list')");
    if ((rc = cmd_parse_uint(ctx, "ID", argv[1], &id)))
        return rc;
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    actor = audit_actor();
    rc = auth_token_revoke(st, id, "cli", actor, &err);
    free(actor);
    store_close(st);
    if (rc < 0)
        return out_error(ctx, &err,
                         err.code == EXA_ENOTFOUND ? "exa auth token list"
                                                   : NULL);
    snprintf(msg, sizeof(msg), "Token %lld revoked.", id);
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        jx_set(d, "ok", json_true());
        jx_set(d, "id", json_integer(id));
        jx_set(d, "message", jx_str(msg));
        out_json(ctx, d);
    } else {
        out_info(ctx, "\u2713 %s", msg);
    }
    return 0;
}

static int cmd_token(struct exa_ctx *ctx, int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "create"))
        return token_create(ctx, argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "list"))
        return token_list(ctx, argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "revoke"))
        return token_revoke(ctx, argc - 1, argv + 1);
    if (argc < 2)
        return out_usage(ctx, "'exa auth token' needs a sub-command: "
                              "create, list, revoke");
    return out_usage(ctx,
                     "'%s' is not an 'exa auth token' sub-command: expected "
                     "one of create, list, revoke",
                     argv[1]);
}

static const struct exa_cmd auth_cmds[] = {
    {"token", cmd_token,
     "create --user NAME --role viewer|operator|admin [--expires DURATION] "
     "| list | revoke ID",
     "API tokens of exa serve (REST, console, MCP over HTTP)",
     "create prints a new 256-bit token once (platform.db keeps only its\n"
     "SHA-256); --expires takes 90m, 12h, 30d. Roles: viewer reads;\n"
     "operator also runs place and preflight; admin also approves, rejects\n"
     "and reads the audit log. list shows ids, users, roles and times,\n"
     "never tokens; revoke ID refuses the token from then on. Each change\n"
     "is an audit event. See doc/console.md.\n\n"
     "Options:\n"
     "  create                the token's owner and role are required\n"
     "  --user NAME           who the token acts for (audit events name it)\n"
     "  --role ROLE           viewer, operator or admin\n"
     "  --expires DURATION    lifetime, e.g. 90m, 12h, 30d (default: never)\n"
     "  list                  every token's id, user, role, created, expires\n"
     "                        and revoked time (no secrets)\n"
     "  revoke ID             the id 'list' shows; refused from then on\n"
     "Example: exa auth token create --user alice --role viewer "
     "--expires 30d"},
    {NULL},
};

const struct exa_group group_auth = {"auth", "API tokens and roles", auth_cmds};
