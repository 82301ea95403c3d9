/*
 * task.c - the `exa task` group: queue tasks for dial-back workers and
 * look at them (libtask/engine.h, libtask/view.h). Commands work on
 * platform.db directly, so they need no running engine: `exa serve
 * --worker-listen` hands the tasks out when workers ask.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/groups.h"
#include "libstore/store.h"
#include "libtask/engine.h"
#include "libtask/proto.h"
#include "libtask/view.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static int parse_id(struct exa_ctx *ctx, const char *s, long long *id)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 1)
        return out_usage(ctx, "task id '%s': expected a positive integer", s);
    *id = v;
    return 0;
}

static int task_submit_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"cpus", required_argument, NULL, 'c'},
        {"gpus", required_argument, NULL, 'g'},
        {"ram-mb", required_argument, NULL, 'r'},
        {"label", required_argument, NULL, 'l'},
        {"timeout", required_argument, NULL, 't'},
        {"count", required_argument, NULL, 'n'},
        {"env", required_argument, NULL, 'e'},
        {"cwd", required_argument, NULL, 'd'},
        {"artifact", required_argument, NULL, 'o'},
        {"noop", no_argument, NULL, 'N'},
        {"cluster", required_argument, NULL, 'C'},
        {NULL, 0, NULL, 0},
    };
    json_t *spec = json_object(), *labels = json_array(), *env = json_object();
    json_t *outs = json_array(), *av = json_array(), *ids = json_array();
    long long v, count = 1;
    struct tp_spec sp;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st = NULL;
    int c, rc = 0, noop = 0;
    const char *cluster = NULL;
    double now;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
        case 'g':
        case 'r':
        case 'n':
            if ((rc = cmd_parse_uint(ctx, argv[optind - 1], optarg, &v)))
                goto out;
            if (c == 'n')
                count = v;
            else
                json_object_set_new(spec,
                                    c == 'c'   ? "cpus"
                                    : c == 'g' ? "gpus"
                                               : "ram_mb",
                                    json_integer(v));
            break;
        case 't': {
            char *end;
            double t;
            errno = 0;
            t = strtod(optarg, &end);
            if (errno || end == optarg || *end || !isfinite(t)) {
                rc = out_usage(ctx, "--timeout expects seconds, got '%s'",
                               optarg);
                goto out;
            }
            json_object_set_new(spec, "timeout_s", json_real(t));
            break;
        }
        case 'l':
            json_array_append_new(labels, jx_str(optarg));
            break;
        case 'o':
            json_array_append_new(outs, jx_str(optarg));
            break;
        case 'e': {
            const char *eq = strchr(optarg, '=');
            char *k;
            if (!eq || eq == optarg) {
                rc = out_usage(ctx, "--env '%s': expected NAME=VALUE", optarg);
                goto out;
            }
            k = xstrndup(optarg, (size_t)(eq - optarg));
            json_object_set_new(env, k, jx_str(eq + 1));
            free(k);
            break;
        }
        case 'd':
            json_object_set_new(spec, "cwd", jx_str(optarg));
            break;
        case 'N':
            noop = 1;
            break;
        case 'C':
            cluster = optarg;
            break;
        case ':':
            rc = out_usage(ctx, "option '%s' needs a value", argv[optind - 1]);
            goto out;
        default:
            rc = out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
            goto out;
        }
    }
    if (optind < argc && !strcmp(argv[optind], "--"))
        optind++;
    if (optind >= argc && !noop) {
        rc = out_usage(ctx, "the command to run goes after '--': "
                            "exa task submit [options] -- ARGV...");
        goto out;
    }
    if (cluster && !tp_name_ok(cluster)) {
        rc = out_usage(ctx,
                       "--cluster '%s': expected a name of "
                       "[A-Za-z0-9._-]",
                       cluster);
        goto out;
    }
    if (count < 1 || count > 100000) {
        rc = out_usage(ctx, "--count must be 1 to 100000");
        goto out;
    }
    for (int i = optind; i < argc; i++)
        json_array_append_new(av, jx_str(argv[i]));
    json_object_set_new(spec, "kind", json_string(noop ? "noop" : "exec"));
    json_object_set(spec, "argv", av);
    json_object_set(spec, "env", env);
    json_object_set(spec, "labels", labels);
    json_object_set(spec, "outputs", outs);
    if (tp_spec_decode(spec, &sp, &err) < 0) {
        rc = out_errorf(ctx, EXA_EUSAGE, NULL, "%s", err.text);
        goto out;
    }
    if (!(st = store_open(NULL, &err))) {
        tp_spec_release(&sp);
        rc = out_error(ctx, &err, NULL);
        goto out;
    }
    now = te_wallclock(NULL);
    if (store_begin(st, &err) < 0)
        goto fail;
    for (long long i = 0; i < count; i++) {
        long long id;
        if (task_submit_pinned(st, &sp, cluster, NULL, now, &id, &err) < 0) {
            store_rollback(st);
            goto fail;
        }
        json_array_append_new(ids, json_integer(id));
    }
    if (store_commit(st, &err) < 0) {
        store_rollback(st);
        goto fail;
    }
    tp_spec_release(&sp);
    te_ring(st->path);
    {
        exa_error_t e2 = EXA_ERROR_INIT; /* a lock error: no warning */
        if (te_engine_running(st->path, &e2) == 0)
            out_warn(ctx,
                     "no task engine is running on '%s' ('exa serve "
                     "--worker-listen HOST:PORT'); queued until one starts",
                     st->path);
    }
    if (ctx->out == OUT_JSON) {
        json_t *d = json_object();
        json_object_set(d, "tasks", ids);
        out_json(ctx, d);
    } else {
        for (size_t i = 0; i < json_array_size(ids); i++)
            printf("%lld\n", json_integer_value(json_array_get(ids, i)));
    }
    goto out;
fail:
    tp_spec_release(&sp);
    rc = out_error(ctx, &err, NULL);
out:
    store_close(st);
    json_decref(spec);
    json_decref(labels);
    json_decref(env);
    json_decref(outs);
    json_decref(av);
    json_decref(ids);
    return rc;
}

static char *argv_text(json_t *a)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < json_array_size(a); i++) {
        if (i)
            strbuf_addch(&sb, ' ');
        strbuf_addstr(&sb, json_string_value(json_array_get(a, i)));
    }
    return strbuf_detach(&sb, NULL);
}

static int task_list_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"state", required_argument, NULL, 's'},
        {"limit", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    static const char *const states[] = {"queued", "leased",    "done",
                                         "failed", "cancelled", NULL};
    static const char *const cols[] = {"ID",   "State",  "Attempt", "Worker",
                                       "Exit", "Reason", "Argv",    NULL};
    const char *state = NULL;
    long long limit = 0;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    json_t *doc, *ts;
    int c, rc, ok;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            state = optarg;
            ok = 0;
            for (int i = 0; states[i]; i++)
                ok |= !strcmp(states[i], state);
            if (!ok)
                return out_usage(ctx,
                                 "--state '%s': expected queued, leased, "
                                 "done, failed or cancelled",
                                 state);
            break;
        case 'n':
            if ((rc = cmd_parse_uint(ctx, "--limit", optarg, &limit)))
                return rc;
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
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    doc = task_view_list(st, state, limit, &err);
    store_close(st);
    if (!doc)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        out_json(ctx, doc);
        return 0;
    }
    ts = json_object_get(doc, "tasks");
    if (!json_array_size(ts)) {
        out_info(ctx, "No tasks. Queue one with 'exa task submit -- CMD'.");
    } else {
        struct out_table *t = out_table_create(cols);
        for (size_t i = 0; i < json_array_size(ts); i++) {
            json_t *x = json_array_get(ts, i);
            char id[24], att[24], ex[24];
            char *a = argv_text(json_object_get(x, "argv"));
            const char *row[8];
            json_t *e = json_object_get(x, "exit_code");
            xsnprintf(id, sizeof(id), "%lld", jx_get_int(x, "id", 0));
            xsnprintf(att, sizeof(att), "%lld", jx_get_int(x, "attempt", 0));
            if (json_is_integer(e))
                xsnprintf(ex, sizeof(ex), "%lld", json_integer_value(e));
            row[0] = id;
            row[1] = jx_get_str(x, "state", NULL);
            row[2] = att;
            row[3] = jx_get_str(x, "worker", NULL);
            row[4] = json_is_integer(e) ? ex : NULL;
            row[5] = jx_get_str(x, "reason", NULL);
            row[6] = a;
            row[7] = NULL;
            out_table_row(t, row);
            free(a);
        }
        out_table_print(ctx, t);
    }
    json_decref(doc);
    return 0;
}

static int one_id(struct exa_ctx *ctx, int argc, char **argv, long long *id)
{
    if (argc != 2 || argv[1][0] == '-')
        return out_usage(ctx, "expected one task id");
    return parse_id(ctx, argv[1], id);
}

static int task_show_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    long long id;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    json_t *doc;
    int rc;
    if ((rc = one_id(ctx, argc, argv, &id)))
        return rc;
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    doc = task_view_show(st, id, &err);
    store_close(st);
    if (!doc)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        out_json(ctx, doc);
        return 0;
    }
    {
        char *a = argv_text(json_object_get(doc, "argv"));
        json_t *r = json_object_get(doc, "result");
        printf("Task %lld: %s (attempt %lld)\n", id,
               jx_get_str(doc, "state", "?"), jx_get_int(doc, "attempt", 0));
        printf("  argv:    %s\n", a);
        printf("  worker:  %s\n", jx_get_str(doc, "worker", "-"));
        if (jx_get_str(doc, "reason", NULL))
            printf("  reason:  %s\n", jx_get_str(doc, "reason", ""));
        if (json_is_object(r)) {
            json_t *arts = json_object_get(r, "artifacts");
            printf("  exit:    %lld\n", jx_get_int(r, "exit_code", -1));
            for (size_t i = 0; i < json_array_size(arts); i++)
                printf("  artifact %s  %s  %lld bytes\n",
                       jx_get_str(json_array_get(arts, i), "name", "?"),
                       jx_get_str(json_array_get(arts, i), "sha256", "?"),
                       jx_get_int(json_array_get(arts, i), "size", 0));
            if (*jx_get_str(r, "stdout_tail", ""))
                printf("  stdout:\n%s", jx_get_str(r, "stdout_tail", ""));
        }
        free(a);
    }
    json_decref(doc);
    return 0;
}

static int task_attempts_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {"Attempt", "Worker", "Outcome",
                                       "Cause",   "Exit",   NULL};
    long long id;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    json_t *doc, *as;
    int rc;
    struct out_table *t;
    if ((rc = one_id(ctx, argc, argv, &id)))
        return rc;
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    doc = task_view_attempts(st, id, &err);
    store_close(st);
    if (!doc)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        out_json(ctx, doc);
        return 0;
    }
    as = json_object_get(doc, "attempts");
    t = out_table_create(cols);
    for (size_t i = 0; i < json_array_size(as); i++) {
        json_t *x = json_array_get(as, i), *e = json_object_get(x, "exit_code");
        char att[24], ex[24];
        const char *row[6];
        xsnprintf(att, sizeof(att), "%lld", jx_get_int(x, "attempt", 0));
        if (json_is_integer(e))
            xsnprintf(ex, sizeof(ex), "%lld", json_integer_value(e));
        row[0] = att;
        row[1] = jx_get_str(x, "worker", NULL);
        row[2] = jx_get_str(x, "outcome", NULL);
        row[3] = jx_get_str(x, "cause", NULL);
        row[4] = json_is_integer(e) ? ex : NULL;
        row[5] = NULL;
        out_table_row(t, row);
    }
    out_table_print(ctx, t);
    json_decref(doc);
    return 0;
}

static int task_cancel_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    json_t *done = json_array(), *already = json_array();
    int rc = 0;
    if (argc < 2)
        return out_usage(ctx, "expected one or more task ids");
    for (int i = 1; i < argc; i++) {
        long long id;
        if ((rc = parse_id(ctx, argv[i], &id))) {
            json_decref(done);
            json_decref(already);
            return rc;
        }
    }
    if (!(st = store_open(NULL, &err))) {
        json_decref(done);
        json_decref(already);
        return out_error(ctx, &err, NULL);
    }
    for (int i = 1; i < argc; i++) {
        long long id = strtoll(argv[i], NULL, 10);
        int r = task_cancel(st, id, te_wallclock(NULL), &err);
        if (r < 0) {
            rc = out_error(ctx, &err, NULL);
            break;
        }
        json_array_append_new(r ? already : done, json_integer(id));
        if (ctx->out != OUT_JSON)
            printf(r ? "Task %lld had already ended\n"
                     : "Task %lld cancelled\n",
                   id);
    }
    store_close(st);
    if (!rc && ctx->out == OUT_JSON) {
        json_t *d = json_object();
        json_object_set(d, "cancelled", done);
        json_object_set(d, "already_ended", already);
        out_json(ctx, d);
    }
    json_decref(done);
    json_decref(already);
    return rc;
}

static const struct exa_cmd task_cmds[] = {
    {"submit", task_submit_cmd,
     "[--cpus N] [--gpus N] [--ram-mb N] [--label L]... [--timeout S] "
     "[--count N] [--env K=V]... [--cwd DIR] [--artifact NAME]... "
     "[--cluster C] -- ARGV...",
     "queue a task for dial-back workers (prints its ids)",
     "The task runs on a worker of `exa serve --worker-listen` whose\n"
     "resources and labels fit. --artifact names files the task leaves in its\n"
     "directory ($EXA_TASK_DIR unless --cwd); the worker uploads them with\n"
     "their SHA-256. --timeout (default 3600) is enforced by the worker.\n\n"
     "Options:\n"
     "  --cpus N              CPUs the task needs (default 1)\n"
     "  --gpus N              GPUs the task needs (default 0)\n"
     "  --ram-mb N            memory the task needs in MiB (default 0)\n"
     "  --label L             a label its worker must have (repeatable)\n"
     "  --timeout S           seconds the task may run (default 3600)\n"
     "  --count N             queue N copies (default 1)\n"
     "  --env K=V             set K in the task's environment (repeatable)\n"
     "  --cwd DIR             run in DIR on the worker (default the task's\n"
     "                        own directory, $EXA_TASK_DIR)\n"
     "  --artifact NAME       a file to upload when it ends (repeatable)\n"
     "  --cluster C           only a worker whose join token names cluster\n"
     "                        C may lease it (provisioned workers: their\n"
     "                        provisioner's cluster); default any worker\n"
     "  -- ARGV...            the command to run\n"
     "Example: exa task submit --cpus 2 --artifact out.txt -- sh -c "
     "'date >out.txt'"},
    {"list", task_list_cmd, "[--state STATE] [--limit N]",
     "list tasks with their state, attempt and worker",
     "In id order: id, state, attempt, worker, exit status, reason and\n"
     "argv. --json prints the rows.\n\n"
     "Options:\n"
     "  --state STATE         only queued, leased, done, failed or\n"
     "                        cancelled tasks (default every state)\n"
     "  --limit N             at most N tasks (default all)\n"
     "Example: exa task list --state failed --limit 20"},
    {"show", task_show_cmd, "ID", "show a task, its result and artifacts",
     "The task's state, attempt, argv, worker and reason; once it ended\n"
     "its exit status, each artifact with its SHA-256 and size, and the\n"
     "tail of its stdout. --json prints the whole document.\n\n"
     "Options:\n"
     "  ID                    the id 'task submit' printed\n"
     "Example: exa task show 12"},
    {"attempts", task_attempts_cmd, "ID",
     "list the attempts (leases) of a task and how each ended",
     "One row per lease: attempt, worker, outcome, cause and exit\n"
     "status. --json prints the whole document.\n\n"
     "Options:\n"
     "  ID                    the task's id\n"
     "Example: exa task attempts 12"},
    {"cancel", task_cancel_cmd, "ID...",
     "cancel tasks; a running one is killed at its worker's next heartbeat",
     "A queued task is cancelled at once; a leased one is killed when\n"
     "its worker next reports (its heartbeat).\n\n"
     "Options:\n"
     "  ID...                 the tasks' ids\n"
     "Example: exa task cancel 12 13"},
    {NULL},
};

const struct exa_group group_task = {
    "task",
    "tasks for dial-back workers: submit, list, show, attempts, cancel",
    task_cmds,
};
