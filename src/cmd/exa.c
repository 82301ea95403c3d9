/*
 * exa.c - the front end: global flags, the group table, dispatch, help and
 * "did you mean".
 *
 * Global flags (--json, -o/--output, -q, -v, -y, -V) are accepted before
 * the group (`exa --json hpc jobs`, the reference's form) and anywhere
 * after the command, up to a `--`; they are removed from argv before the
 * command sees it, so command parsers only see their own options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/docgen.h"
#include "cmd/groups.h"
#include "libutil/log.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static const struct exa_group *const groups[] = {
    &group_pipeline, &group_models,    &group_hpc, &group_finops, &group_auth,
    &group_task,     &group_provision, &group_mcp, &group_debug,  NULL,
};

/* Top-level commands that are not groups (`exa train` runs on clusters). */
static const struct exa_cmd top_cmds[] = {
    {"train", cmd_train, TRAIN_USAGE,
     "train a model in this process (the payload of cluster runs)",
     "Loads the dataset, trains and evaluates the model and writes its\n"
     "artifacts (model.json, encoders.json, metrics.json, SHA256SUMS) to\n"
     "DIR; prints the summary as JSON. 'exa pipeline run --cluster' runs\n"
     "it on the cluster; it registers nothing itself.\n\n"
     "Options:\n"
     "  --model M             zoo model (JPCP)\n"
     "  --dataset D           dataset (PM100Dataset)\n"
     "  --dataset-path FILE   the CSV file to read\n"
     "  --out DIR             where the artifacts go\n"
     "  --dummy               only the first 50 usable rows of each split\n"
     "  --threads N           training threads (default 2)\n"
     "  --max-skip SHARE      fail above this share of skipped records\n"
     "                        (default 10%)\n"
     "Example: exa train --model JPCP --dataset PM100Dataset "
     "--dataset-path pm100.csv --out /tmp/jpcp --dummy"},
    {"serve", cmd_serve, SERVE_USAGE,
     "serve /metrics, /healthz, the REST API and the Facility console",
     "Collects every EXAMLOPS_EXPORTER_INTERVAL_S (default 30) seconds: one\n"
     "sinfo and one squeue per ACTIVE cluster, cached for all scrapes.\n"
     "--listen defaults to 127.0.0.1:9477 (EXAMLOPS_SERVE_LISTEN); --once\n"
     "collects once and prints the exposition instead of serving.\n"
     "The REST API (/api/v1/, doc/openapi.json) and the console (/) need a\n"
     "token from 'exa auth token create'. --tls-cert/--tls-key serve HTTPS;\n"
     "a listen address beyond loopback without TLS is refused unless\n"
     "--insecure-http (a TLS reverse proxy in front; add --secure-cookies).\n"
     "--metrics-token-file FILE (or EXAMLOPS_SERVE_METRICS_TOKEN) makes\n"
     "/metrics need 'Authorization: Bearer TOKEN'. --trusted-proxy ADDR: "
     "requests\n"
     "from ADDR are counted (failed logins) and audited under their last\n"
     "X-Forwarded-For address. Listening loads libmicrohttpd.so.12 (exit 3\n"
     "without it). See doc/console.md.\n\n"
     "Options:\n"
     "  --listen HOST:PORT    where to serve (default 127.0.0.1:9477,\n"
     "                        EXAMLOPS_SERVE_LISTEN; port 0 picks one)\n"
     "  --interval SECONDS    seconds between collections (default 30,\n"
     "                        EXAMLOPS_EXPORTER_INTERVAL_S)\n"
     "  --once                collect once, print the exposition, exit\n"
     "  --tls-cert FILE       PEM certificate chain; serve HTTPS\n"
     "  --tls-key FILE        PEM private key of --tls-cert\n"
     "  --insecure-http       allow plain HTTP beyond loopback (default\n"
     "                        off: refused without TLS)\n"
     "  --metrics-token TOKEN  /metrics needs this Bearer token (16\n"
     "                        bytes at least; default none; seen in ps)\n"
     "  --metrics-token-file FILE  the same token from FILE's first line\n"
     "  --secure-cookies      mark session cookies Secure without TLS here\n"
     "                        (a TLS reverse proxy in front)\n"
     "  --trusted-proxy ADDR  the reverse proxy whose X-Forwarded-For is\n"
     "                        believed (default none)\n"
     "  --worker-listen HOST:PORT  also listen for dial-back workers\n"
     "                        (doc/workers.md; default off)\n"
     "  --worker-insecure-http  plain HTTP on --worker-listen beyond\n"
     "                        loopback (default off: refused without TLS)\n"
     "  --worker-tls-cert FILE  PEM certificate; the worker API over HTTPS\n"
     "                        (TLS 1.2/1.3); serve logs its key's pin\n"
     "                        sha256//B64 for exa worker --pin\n"
     "  --worker-tls-key FILE  PEM private key of --worker-tls-cert\n"
     "Example: exa serve --listen 127.0.0.1:9477 --interval 60"},
    {"worker", cmd_worker, WORKER_USAGE,
     "run a dial-back worker; 'worker list' and 'worker token' too",
     "exa worker --url URL --worker-id ID --join-token-stdin [--cpus N]\n"
     "  [--gpus N] [--ram-mb N] [--capacity N] [--labels L,M] [--walltime S]\n"
     "  [--max-idle S] [--drain S] [--engine-lost S] [--pin sha256//B64]\n"
     "  [--allow-root]: register with the one-line join token on stdin,\n"
     "  run leased tasks, exit 0 after --max-idle seconds without work (75\n"
     "  when the engine stays unreachable, 1 when it refuses the worker or\n"
     "  its TLS key is not --pin's, 64 on a protocol mismatch, 3\n"
     "  without libcurl.so.4, which only the worker loads).\n"
     "exa worker list: the workers the engine knows.\n"
     "exa worker token --worker-id ID [--ttl S]: a single-use join token\n"
     "  (default 1020 s) on stdout, for a worker started by hand.\n\n"
     "Options:\n"
     "  --url URL             the engine, http[s]://HOST:PORT of\n"
     "                        'exa serve --worker-listen'\n"
     "  --worker-id ID        this worker's name ([A-Za-z0-9._-])\n"
     "  --join-token-stdin    read the one-line join token from stdin\n"
     "  --cpus N              CPUs offered (default 1)\n"
     "  --gpus N              GPUs offered (default 0)\n"
     "  --ram-mb N            memory offered in MiB (default 0)\n"
     "  --capacity N          tasks at once (default --cpus)\n"
     "  --labels L,M          labels tasks may ask for (default none)\n"
     "  --walltime S          seconds this worker may live (default none)\n"
     "  --max-idle S          exit after S seconds without work (default:\n"
     "                        the engine's, 300)\n"
     "  --drain S             seconds running tasks get to finish on\n"
     "                        SIGTERM (default 300)\n"
     "  --engine-lost S       give up (exit 75) after S seconds without\n"
     "                        the engine (default: the engine's)\n"
     "  --pin sha256//B64     the engine's TLS public key pin (exa serve\n"
     "                        logs it; ';' between several): with it the\n"
     "                        key is the trust, no CA or host name check;\n"
     "                        without it https needs a CA-signed\n"
     "                        certificate; a mismatch: exit 1 at once\n"
     "  --allow-root          run as root (default refused)\n"
     "  list                  the workers the engine knows\n"
     "  token                 a join token for --worker-id (--ttl S)\n"
     "Example: exa worker token --worker-id w1 | exa worker --url "
     "http://127.0.0.1:9478 --worker-id w1 --join-token-stdin"},
    {"task-shim", cmd_task_shim, "PARENT_PID DIR CWD -- ARGV...",
     "run one task for 'exa worker' (internal)", NULL},
    {NULL},
};

static size_t levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = xcalloc(lb + 1, sizeof(*row));
    size_t res;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t sub = prev + (a[i - 1] != b[j - 1]);
            size_t del = row[j] + 1, ins = row[j - 1] + 1;
            row[j] =
                sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            prev = cur;
        }
    }
    res = row[lb];
    free(row);
    return res;
}

/* Closest name within distance 2 (or a prefix match), or NULL. */
static const char *suggest(const char *word, const char *const *names)
{
    const char *best = NULL;
    size_t bestd = 3;
    for (; *names; names++) {
        size_t d = levenshtein(word, *names);
        if (starts_with(*names, word) && strlen(word) >= 2)
            d = d < 1 ? d : 1;
        if (d < bestd) {
            bestd = d;
            best = *names;
        }
    }
    return best;
}

static void print_main_help(FILE *fp)
{
    fprintf(fp, "usage: exa [--json | -o json|table] [-q] [-v] [-y] [-V] "
                "GROUP COMMAND [ARGS]\n\n"
                "exa runs training jobs on the HPC clusters a site already "
                "operates.\n\ngroups:\n");
    for (size_t i = 0; groups[i]; i++)
        fprintf(fp, "  %-10s %s\n", groups[i]->name, groups[i]->summary);
    fprintf(fp, "\ncommands:\n");
    for (size_t i = 0; top_cmds[i].name; i++)
        fprintf(fp, "  %-10s %s\n", top_cmds[i].name, top_cmds[i].summary);
    fprintf(fp, "\nRun 'exa GROUP --help' (or 'exa help GROUP [COMMAND]') for "
                "the commands of a group,\n'exa help env' for the "
                "environment variables; man exa(1).\n"
                "Exit codes: 0 ok, 1 failure, 2 usage, 3 configuration, "
                "4 transport, 5 scheduler, 6 not approved.\n");
}

static void print_group_help(const struct exa_group *g, FILE *fp)
{
    fprintf(fp, "usage: exa %s COMMAND [ARGS]\n\n%s\n\ncommands:\n", g->name,
            g->summary);
    for (const struct exa_cmd *c = g->cmds; c->name; c++)
        fprintf(fp, "  %-14s %s\n", c->name, c->summary);
    fprintf(fp, "\nRun 'exa %s COMMAND --help' for a command's options.\n",
            g->name);
}

/*
 * Remove global flags from argv (in place), filling ctx. Returns 0, or an
 * exit status (2) after printing a usage error. *want_version is set for
 * -V/--version.
 */
static int strip_globals(struct exa_ctx *ctx, int *argc, char **argv,
                         int *want_version)
{
    int out = 1, dashdash = 0;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *v;
        if (dashdash) {
            argv[out++] = argv[i];
            continue;
        }
        if (!strcmp(a, "--")) {
            dashdash = 1;
            argv[out++] = argv[i];
        } else if (!strcmp(a, "--json")) {
            ctx->out = OUT_JSON;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output") ||
                   skip_prefix(a, "--output=", &v)) {
            if (a[1] == 'o' || !strcmp(a, "--output")) {
                if (i + 1 >= *argc)
                    return out_usage(ctx,
                                     "option '%s' needs a value: "
                                     "json or table",
                                     a);
                v = argv[++i];
            }
            if (!strcmp(v, "json"))
                ctx->out = OUT_JSON;
            else if (!strcmp(v, "table"))
                ctx->out = OUT_TABLE;
            else
                return out_usage(ctx,
                                 "unknown output format '%s': "
                                 "expected json or table",
                                 v);
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            ctx->quiet = 1;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            ctx->verbose = 1;
        } else if (!strcmp(a, "-y") || !strcmp(a, "--yes")) {
            ctx->yes = 1;
        } else if ((!strcmp(a, "-V") || !strcmp(a, "--version")) && out == 1) {
            /* Only before the group: `exa models show M --version N`
             * is that command's own option. */
            *want_version = 1;
        } else {
            argv[out++] = argv[i];
        }
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

static int is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help");
}

static int run_cmd(struct exa_ctx *ctx, const char *group,
                   const struct exa_cmd *c, int argc, char **argv)
{
    char prog[128];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cmd_print_help(group, c, stdout);
            return 0;
        }
    }
    snprintf(prog, sizeof(prog), "exa%s%s %s", group[0] ? " " : "", group,
             c->name);
    ctx->prog = prog;
    return c->fn(ctx, argc, argv);
}

int main(int argc, char **argv)
{
    struct exa_ctx ctx = {0};
    int want_version = 0, rc;
    const char *names[64];
    size_t n = 0;

    rc = strip_globals(&ctx, &argc, argv, &want_version);
    if (rc)
        return rc;
    ctx.tty = ctx.out != OUT_JSON && isatty(STDOUT_FILENO);
    if (ctx.verbose)
        log_set_level(LOG_DEBUG);
    log_status_quiet(ctx.quiet); /* no progress lines with -q (but -v) */
    if (want_version) {
        if (ctx.out == OUT_JSON)
            printf("{\n  \"version\": \"%s\"\n}\n", EXA_VERSION);
        else
            printf("exa %s\n", EXA_VERSION);
        return 0;
    }
    if (argc < 2 && ctx.out == OUT_JSON) /* one JSON document, not help */
        return out_errorf(&ctx, EXA_EUSAGE, "see 'exa --help'",
                          "no command given");
    /* hidden: the tables as man pages and completion (Makefile) */
    if (argc >= 3 && !strcmp(argv[1], "debug") &&
        !strcmp(argv[2], "commands")) {
        ctx.prog = "exa debug commands";
        return docgen_run(&ctx, groups, top_cmds, argc - 2, argv + 2);
    }
    /* exa help GROUP [COMMAND] | exa help env (git help's form) */
    if (argc >= 3 && !strcmp(argv[1], "help")) {
        for (size_t i = 0; groups[i]; i++) {
            if (strcmp(argv[2], groups[i]->name))
                continue;
            if (argc == 3) {
                print_group_help(groups[i], stdout);
                return 0;
            }
            for (const struct exa_cmd *c = groups[i]->cmds; c->name; c++)
                if (!strcmp(argv[3], c->name)) {
                    cmd_print_help(groups[i]->name, c, stdout);
                    return 0;
                }
            return out_errorf(&ctx, EXA_EUSAGE, "see 'exa help GROUP'",
                              "'%s' is not an 'exa %s' command", argv[3],
                              groups[i]->name);
        }
        for (size_t i = 0; top_cmds[i].name; i++)
            if (!strcmp(argv[2], top_cmds[i].name)) {
                cmd_print_help("", &top_cmds[i], stdout);
                return 0;
            }
        return docgen_help_topic(&ctx, argv[2]);
    }
    if (argc < 2 || is_help(argv[1])) {
        print_main_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; top_cmds[i].name; i++)
        if (!strcmp(argv[1], top_cmds[i].name))
            return run_cmd(&ctx, "", &top_cmds[i], argc - 1, argv + 1);
    for (size_t i = 0; groups[i]; i++) {
        const struct exa_group *g = groups[i];
        if (strcmp(argv[1], g->name))
            continue;
        if (argc < 3 && ctx.out == OUT_JSON) {
            char hint[128];
            snprintf(hint, sizeof(hint), "see 'exa %s --help'", g->name);
            return out_errorf(&ctx, EXA_EUSAGE, hint,
                              "'exa %s' needs a command", g->name);
        }
        if (argc < 3 || is_help(argv[2])) {
            print_group_help(g, argc < 3 ? stderr : stdout);
            return argc < 3 ? 2 : 0;
        }
        n = 0;
        for (const struct exa_cmd *c = g->cmds; c->name; c++) {
            if (!strcmp(argv[2], c->name))
                return run_cmd(&ctx, g->name, c, argc - 2, argv + 2);
            if (n + 1 < sizeof(names) / sizeof(names[0]))
                names[n++] = c->name;
        }
        names[n] = NULL;
        const char *s = suggest(argv[2], names);
        char hint[128];
        if (s)
            snprintf(hint, sizeof(hint), "did you mean 'exa %s %s'?", g->name,
                     s);
        else
            snprintf(hint, sizeof(hint), "see 'exa %s --help'", g->name);
        return out_errorf(&ctx, EXA_EUSAGE, hint,
                          "'%s' is not an 'exa %s' command", argv[2], g->name);
    }
    n = 0;
    for (size_t i = 0; groups[i]; i++)
        names[n++] = groups[i]->name;
    for (size_t i = 0; top_cmds[i].name; i++)
        names[n++] = top_cmds[i].name;
    names[n] = NULL;
    const char *s = suggest(argv[1], names);
    char hint[128];
    if (s)
        snprintf(hint, sizeof(hint), "did you mean 'exa %s'?", s);
    else
        snprintf(hint, sizeof(hint), "see 'exa --help'");
    return out_errorf(&ctx, EXA_EUSAGE, hint, "'%s' is not an exa command",
                      argv[1]);
}
