/*
 * docgen.c - the hidden `exa debug commands`: the command tables printed
 * as man pages, as a bash completion script, or (for that script, at
 * completion time) as the registered cluster names. The Makefile builds
 * the man pages (build/man/) and the completion from these at build time, so
 * they never drift from the tables that drive dispatch and --help.
 *
 * Man pages are man(7) roff (groff_man(7)): .TH, .SH, .SS, .TP, .nf/.fi,
 * with every '\' written as \e, every '-' as \- and a leading '.' or '\''
 * guarded by \&, so `man --warnings -l PAGE` is silent. Completion is a
 * bash function for `complete -F` (bash(1) "Programmable Completion").
 */
#include "cmd/docgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfleet/registry.h"
#include "libstore/clusters.h"
#include "libstore/store.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

/* The environment exa reads: name, default ("" none), one sentence. */
static const struct env_var {
    const char *name, *def, *what;
} env_vars[] = {
    {"EXAMLOPS_DB", "$XDG_DATA_HOME/examlops/platform.db",
     "platform.db, exa's state; a path whose directory does not exist is "
     "an error (doc/store.md)"},
    {"EXAMLOPS_HPC_REGISTRY", "$HOME/.config/examlops/clusters.yaml",
     "clusters.yaml, the cluster connection definitions"},
    {"EXAMLOPS_HPC_CLUSTER", "",
     "the cluster commands use when --cluster is not given"},
    {"EXAMLOPS_HPC_SCHEDULER", "mock",
     "the environment target's scheduler: mock, slurm or flux (legacy "
     "EXAMLOPS_SLURM_MODE)"},
    {"EXAMLOPS_HPC_TRANSPORT", "local",
     "the environment target's transport: local or ssh"},
    {"EXAMLOPS_HPC_SSH_HOST", "", "the environment target's ssh host"},
    {"EXAMLOPS_HPC_SSH_USER", "", "the environment target's ssh user"},
    {"EXAMLOPS_HPC_SSH_KEY", "", "the environment target's private key file"},
    {"EXAMLOPS_HPC_SSH_PORT", "22", "the environment target's ssh port"},
    {"EXAMLOPS_HPC_SSH_KNOWN_HOSTS", "",
     "a known_hosts file to pin the environment target's host key from"},
    {"EXAMLOPS_HPC_WORKDIR", "$XDG_DATA_HOME/examlops/jobs",
     "the local job directories (mock and local clusters)"},
    {"EXAMLOPS_HPC_REMOTE_WORKDIR", "~/.exa/jobs",
     "the job directories on a cluster"},
    {"EXAMLOPS_HPC_REMOTE_EXA", "exa",
     "the exa binary a cluster run starts on the cluster"},
    {"EXAMLOPS_HPC_PARTITION", "", "the partition (queue) jobs ask for"},
    {"EXAMLOPS_HPC_QOS", "", "the QOS jobs ask for"},
    {"EXAMLOPS_HPC_ACCOUNT", "", "the account (Flux bank) jobs ask for"},
    {"EXAMLOPS_HPC_TIME", "", "the time limit jobs ask for"},
    {"EXAMLOPS_HPC_NODES", "", "the node count jobs ask for"},
    {"EXAMLOPS_HPC_GPUS", "", "the GPUs in total jobs ask for"},
    {"EXAMLOPS_HPC_POLL_INTERVAL", "10",
     "seconds between the status polls of a wait"},
    {"EXAMLOPS_SLURM_CMD_TIMEOUT", "30",
     "seconds one scheduler command may take"},
    {"EXAMLOPS_SLURM_MAX_WAIT_S", "86400", "seconds a wait may take in all"},
    {"EXAMLOPS_ENGINE_ABSENT_S", "60",
     "seconds 'exa pipeline run --via worker' waits while no task engine "
     "runs on platform.db before it gives up (the task stays queued)"},
    {"EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS", "5",
     "polls in a row a job may be unknown to the scheduler before a wait "
     "fails"},
    {"EXAMLOPS_HPC_LOG_MAX_BYTES", "8388608",
     "the most bytes of a job log 'exa hpc logs' shows (its tail)"},
    {"EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S", "300",
     "seconds after which place and capacity refresh a node snapshot"},
    {"EXAMLOPS_PLACEMENT_PROVIDER", "least-loaded",
     "the placement provider: least-loaded, carbon-aware or cost-aware"},
    {"EXAMLOPS_COST_PROVIDER", "flat-rate", "the cost provider"},
    {"EXAMLOPS_CARBON_PROVIDER", "green-ai-default", "the carbon provider"},
    {"GPU_COST_PER_HOUR", "2.50", "USD per GPU-hour (flat-rate)"},
    {"CPU_COST_PER_HOUR", "0.05", "USD per CPU-hour (flat-rate)"},
    {"EXAMLOPS_PM100_PATH", "", "the PM100 CSV file pipeline runs read"},
    {"EXAMLOPS_ACTOR", "",
     "a name recorded beside the OS user in audit events"},
    {"EXAMLOPS_TENANT", "default", "the tenant label of file_sd targets"},
    {"EXAMLOPS_EXPORTER_INTERVAL_S", "30",
     "seconds between the collections of 'exa serve'"},
    {"EXAMLOPS_SERVE_LISTEN", "127.0.0.1:9477",
     "the address 'exa serve' binds"},
    {"EXAMLOPS_SERVE_METRICS_TOKEN", "",
     "the Bearer token /metrics of 'exa serve' needs (unset: open)"},
    {"EXAMLOPS_SERVE_AUTH_FAIL_LIMIT", "5",
     "failed authentications per address and 5 minutes before 'exa serve' "
     "answers 429"},
    {"EXAMLOPS_SERVE_AUTH_FAIL_DELAY_S", "1",
     "the first Retry-After of that 429, doubling per failure to 60 s"},
    {"EXAMLOPS_JOB_MAP_DIR", "", "where 'exa hpc job-map' writes its files"},
    {"EXAMLOPS_LOG_LEVEL", "warn",
     "debug prints what -v prints, such as every command run on a cluster "
     "(doc/verbose.md)"},
    {"EXAMLOPS_XGBOOST_LIBRARY", "libxgboost.so.0",
     "the XGBoost library training loads at run time (dlopen)"},
    {"EXAMLOPS_CRYPTO_LIBRARY", "libcrypto.so.3",
     "the libcrypto exa loads at run time (dlopen) for its first token, "
     "HMAC, streaming hash or random draw"},
    {"EXAMLOPS_NETTLE_LIBRARY", "libnettle.so.8",
     "the libnettle exa loads at run time (dlopen) for its first one-shot "
     "SHA-256 (audit events, job rows)"},
    {"EXAMLOPS_CURL_LIBRARY", "libcurl.so.4",
     "the libcurl 'exa worker' loads at run time (dlopen)"},
    {"EXAMLOPS_MICROHTTPD_LIBRARY", "libmicrohttpd.so.12",
     "the libmicrohttpd 'exa serve' and 'exa mcp serve --transport http' "
     "load at run time (dlopen)"},
    {"XDG_DATA_HOME", "$HOME/.local/share", "the base of exa's data"},
    {"XDG_CONFIG_HOME", "$HOME/.config", "the base of exa's configuration"},
    {NULL, NULL, NULL},
};

/* Write s as roff text: \e for '\', \- for '-', \& before a leading '.'
 * or '\'' of a line. */
static void roff(FILE *fp, const char *s)
{
    int bol = 1;
    for (; *s; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", fp);
        bol = *s == '\n';
        if (*s == '\\')
            fputs("\\e", fp);
        else if (*s == '-')
            fputs("\\-", fp);
        else
            fputc(*s, fp);
    }
}

static void man_header(FILE *fp, const char *name, int section,
                       const char *what)
{
    char up[64];
    size_t i;
    for (i = 0; name[i] && i + 1 < sizeof(up); i++)
        up[i] =
            (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    up[i] = '\0';
    fprintf(fp, ".TH ");
    roff(fp, up);
    fprintf(fp, " %d \"\" \"exa %s\" \"%s\"\n.SH NAME\n", section, EXA_VERSION,
            section == 7 ? "Miscellaneous" : "User Commands");
    roff(fp, name);
    fputs(" \\- ", fp);
    roff(fp, what);
    fputc('\n', fp);
}

static void man_see_also(FILE *fp, const struct exa_group *const *groups,
                         const char *self)
{
    int first = 1;
    fputs(".SH SEE ALSO\n", fp);
    if (strcmp(self, "exa")) {
        fputs(".BR exa (1)", fp);
        first = 0;
    }
    for (size_t i = 0; groups[i]; i++) {
        char page[64];
        snprintf(page, sizeof(page), "exa-%s", groups[i]->name);
        if (!strcmp(page, self))
            continue;
        fputs(first ? "" : ",\n", fp);
        fputs(".BR ", fp);
        roff(fp, page);
        fputs(" (1)", fp);
        first = 0;
    }
    fputs(",\n.BR exa\\-env (7)\n", fp);
}

/* One command: .SS with its usage, the summary, then --help's text as is. */
static void man_cmd(FILE *fp, const char *group, const struct exa_cmd *c)
{
    fputs(".SS \"", fp);
    fputs("exa ", fp);
    if (*group) {
        roff(fp, group);
        fputc(' ', fp);
    }
    roff(fp, c->name);
    fputs("\"\n", fp);
    if (c->usage && *c->usage) {
        fputs(".B exa", fp);
        if (*group) {
            fputc(' ', fp);
            roff(fp, group);
        }
        fputc(' ', fp);
        roff(fp, c->name);
        fputs("\n.RI \"", fp);
        for (const char *p = c->usage; *p; p++)
            if (*p == '"')
                fputs("\\(dq", fp);
            else if (*p == '\\')
                fputs("\\e", fp);
            else if (*p == '-')
                fputs("\\-", fp);
            else
                fputc(*p, fp);
        fputs("\"\n.br\n", fp);
    }
    roff(fp, c->summary);
    fputs(".\n", fp);
    if (c->help) {
        fputs(".PP\n.nf\n", fp);
        roff(fp, c->help);
        fputs("\n.fi\n", fp);
    }
}

static void page_exa(FILE *fp, const struct exa_group *const *groups,
                     const struct exa_cmd *top)
{
    man_header(fp, "exa", 1,
               "run training jobs on the HPC clusters a site "
               "already operates");
    fputs(".SH SYNOPSIS\n.B exa\n.RI \"[\\-\\-json | \\-o json|table] [\\-q] "
          "[\\-v] [\\-y] [\\-V] GROUP COMMAND [ARGS]\"\n"
          ".br\n.B exa help\n.RI \"[GROUP [COMMAND] | env]\"\n",
          fp);
    fputs(".SH DESCRIPTION\nexa discovers what a Slurm or Flux cluster "
          "offers, registers it under a sysadmin's approval, places each job "
          "on the best approved cluster, preflights, submits and waits with "
          "bounded polling, records the job, and turns its GPU\\-hours into "
          "cost and CO2e.\n",
          fp);
    fputs(".SH OPTIONS\nGlobal options go before the group or anywhere "
          "after the command.\n"
          ".TP\n.BR \\-\\-json \", \" \\-o \" json\"\nPrint exactly one JSON "
          "document on stdout, errors included.\n"
          ".TP\n.BR \\-q \", \" \\-\\-quiet\nNo information or hint lines.\n"
          ".TP\n.BR \\-v \", \" \\-\\-verbose\nDetail lines, and on stderr "
          "every command exa runs on a cluster with its host, argv, duration "
          "and exit.\n"
          ".TP\n.BR \\-y \", \" \\-\\-yes\nAnswer yes to prompts (approve, "
          "reject, cancel on Ctrl\\-C).\n"
          ".TP\n.BR \\-V \", \" \\-\\-version\nPrint the version.\n",
          fp);
    fputs(".SH COMMAND GROUPS\n", fp);
    for (size_t i = 0; groups[i]; i++) {
        fputs(".TP\n.BR exa\\-", fp);
        roff(fp, groups[i]->name);
        fputs(" (1)\n", fp);
        roff(fp, groups[i]->summary);
        fputs(".\n", fp);
    }
    fputs(".SH COMMANDS\n", fp);
    for (size_t i = 0; top[i].name; i++)
        man_cmd(fp, "", &top[i]);
    fputs(".SH EXIT STATUS\n.TP\n0\nsuccess\n.TP\n1\nfailure (a job failed, "
          "a check failed, a prompt was refused)\n.TP\n2\nusage\n.TP\n3\n"
          "configuration (files, database)\n.TP\n4\ntransport (ssh, "
          "timeouts)\n.TP\n5\nscheduler\n.TP\n6\ncluster not approved\n",
          fp);
    fputs(".SH ENVIRONMENT\nSee\n.BR exa\\-env (7).\n", fp);
    fputs(".SH EXAMPLES\n.nf\nexa hpc connect login1 \\-\\-name c1 \\-\\-user "
          "alice \\-\\-key ~/.ssh/id_ed25519\nexa \\-y hpc approve c1\nexa "
          "pipeline run \\-\\-cluster auto \\-\\-gpus 1\n.fi\n",
          fp);
    man_see_also(fp, groups, "exa");
}

static void page_group(FILE *fp, const struct exa_group *const *groups,
                       const struct exa_group *g)
{
    char page[64];
    snprintf(page, sizeof(page), "exa-%s", g->name);
    man_header(fp, page, 1, g->summary);
    fputs(".SH SYNOPSIS\n.B exa ", fp);
    roff(fp, g->name);
    fputs("\n.I COMMAND\n.RI [ OPTIONS ]\n.SH DESCRIPTION\n", fp);
    roff(fp, g->summary);
    fputs(". Every command also takes the global options of\n.BR exa (1)\n"
          "and \\-\\-help.\n.SH COMMANDS\n",
          fp);
    for (const struct exa_cmd *c = g->cmds; c->name; c++)
        man_cmd(fp, g->name, c);
    man_see_also(fp, groups, page);
}

static void page_env(FILE *fp, const struct exa_group *const *groups)
{
    man_header(fp, "exa-env", 7, "the environment variables exa reads");
    fputs(".SH DESCRIPTION\nexa reads these variables; the command line "
          "wins over them. Names keep the EXAMLOPS_ prefix of the tools exa "
          "replaces.\n",
          fp);
    fputs(".SH VARIABLES\n", fp);
    for (size_t i = 0; env_vars[i].name; i++) {
        fputs(".TP\n.B ", fp);
        roff(fp, env_vars[i].name);
        fputc('\n', fp);
        roff(fp, env_vars[i].what);
        if (*env_vars[i].def) {
            fputs(" (default ", fp);
            roff(fp, env_vars[i].def);
            fputc(')', fp);
        }
        fputs(".\n", fp);
    }
    man_see_also(fp, groups, "exa-env");
}

/* The long and short options a usage line names ("--cluster/-c C"). */
static void usage_options(const char *usage, struct strvec *out)
{
    for (const char *p = usage; p && *p; p++) {
        const char *s;
        if (p[0] != '-' || (p > usage && p[-1] != ' ' && p[-1] != '[' &&
                            p[-1] != '/' && p[-1] != '|'))
            continue;
        s = p;
        p++;
        if (*p == '-')
            p++;
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
               (*p >= '0' && *p <= '9') || *p == '-')
            p++;
        if (p - s >= 2) {
            char *o = xstrndup(s, (size_t)(p - s));
            int dup = 0;
            for (size_t i = 0; i < out->nr; i++)
                dup |= !strcmp(out->v[i], o);
            if (!dup)
                strvec_push(out, o);
            free(o);
        }
        p--;
    }
}

static void completion(FILE *fp, const struct exa_group *const *groups,
                       const struct exa_cmd *top)
{
    fputs("# bash completion for exa, generated from its command tables\n"
          "# (exa debug commands --format=bash); install as\n"
          "# $(PREFIX)/share/bash-completion/completions/exa\n"
          "_exa() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} "
          "prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local exa=${COMP_WORDS[0]} i w group= cmd=\n"
          "    local globals='--json -o --output -q --quiet -v --verbose -y "
          "--yes -V --version --help'\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        w=${COMP_WORDS[i]}\n"
          "        case $w in -o|--output) ((i++)); continue;; -*) "
          "continue;; esac\n"
          "        if [ -z \"$group\" ]; then group=$w; elif [ -z \"$cmd\" ]; "
          "then cmd=$w; fi\n"
          "    done\n"
          "    case $prev in\n"
          "    --cluster|-c)\n"
          "        COMPREPLY=($(compgen -W \"$(\"$exa\" debug commands "
          "--format=clusters 2>/dev/null)\" -- \"$cur\"))\n"
          "        return;;\n"
          "    -o|--output) COMPREPLY=($(compgen -W 'json table' -- "
          "\"$cur\")); return;;\n"
          "    esac\n"
          "    if [ -z \"$group\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"help",
          fp);
    for (size_t i = 0; groups[i]; i++)
        fprintf(fp, " %s", groups[i]->name);
    for (size_t i = 0; top[i].name; i++)
        fprintf(fp, " %s", top[i].name);
    fputs(" $globals\" -- \"$cur\"))\n        return\n    fi\n"
          "    local subs= opts=\n"
          "    case $group in\n",
          fp);
    for (size_t i = 0; groups[i]; i++) {
        fprintf(fp, "    %s) subs='", groups[i]->name);
        for (const struct exa_cmd *c = groups[i]->cmds; c->name; c++)
            fprintf(fp, "%s%s", c == groups[i]->cmds ? "" : " ", c->name);
        fputs("';;\n", fp);
    }
    fputs("    esac\n"
          "    if [ -n \"$subs\" ] && [ -z \"$cmd\" ]; then\n"
          "        COMPREPLY=($(compgen -W \"$subs --help\" -- \"$cur\"))\n"
          "        return\n    fi\n"
          "    case \"$group $cmd\" in\n",
          fp);
    for (size_t i = 0; groups[i]; i++)
        for (const struct exa_cmd *c = groups[i]->cmds; c->name; c++) {
            struct strvec o = STRVEC_INIT;
            usage_options(c->usage, &o);
            fprintf(fp, "    '%s %s') opts='", groups[i]->name, c->name);
            for (size_t k = 0; k < o.nr; k++)
                fprintf(fp, "%s ", o.v[k]);
            fputs("--help';;\n", fp);
            strvec_clear(&o);
        }
    for (size_t i = 0; top[i].name; i++) {
        struct strvec o = STRVEC_INIT;
        usage_options(top[i].usage, &o);
        fprintf(fp, "    '%s ') opts='", top[i].name);
        for (size_t k = 0; k < o.nr; k++)
            fprintf(fp, "%s ", o.v[k]);
        fputs("--help';;\n", fp);
        strvec_clear(&o);
    }
    fputs("    esac\n"
          "    case $cur in\n"
          "    -*) COMPREPLY=($(compgen -W \"$opts $globals\" -- \"$cur\"));;\n"
          "    *) COMPREPLY=($(compgen -f -- \"$cur\"));;\n"
          "    esac\n"
          "}\n"
          "complete -F _exa exa\n",
          fp);
}

/* The cluster names of clusters.yaml and platform.db, one a line, never
 * creating either (completion runs this on every <TAB>). */
static void cluster_names(FILE *fp)
{
    struct strvec names = STRVEC_INIT;
    struct registry reg = REGISTRY_INIT;
    char *regpath = registry_default_path(NULL);
    char *dbpath = store_default_path(NULL);
    struct stat sb;
    if (regpath && stat(regpath, &sb) == 0 &&
        registry_load(regpath, &reg, NULL) == 0)
        for (size_t i = 0; i < reg.nr; i++)
            strvec_push(&names, reg.defs[i].name);
    if (dbpath && stat(dbpath, &sb) == 0) {
        store_t *st = store_open(dbpath, NULL);
        struct cluster_row *rows = NULL;
        size_t n = 0;
        if (st && store_cluster_list(st, &rows, &n, NULL) == 0) {
            for (size_t i = 0; i < n; i++) {
                int dup = 0;
                for (size_t k = 0; k < names.nr; k++)
                    dup |= !strcmp(names.v[k], rows[i].name);
                if (!dup)
                    strvec_push(&names, rows[i].name);
                cluster_row_release(&rows[i]);
            }
            free(rows);
        }
        store_close(st);
    }
    for (size_t i = 0; i < names.nr; i++)
        fprintf(fp, "%s\n", names.v[i]);
    strvec_clear(&names);
    registry_release(&reg);
    free(regpath);
    free(dbpath);
}

int docgen_run(struct exa_ctx *ctx, const struct exa_group *const *groups,
               const struct exa_cmd *top, int argc, char **argv)
{
    const char *format = "list", *page = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (skip_prefix(argv[i], "--format=", &v))
            format = v;
        else if (skip_prefix(argv[i], "--page=", &v))
            page = v;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: exa debug commands "
                   "[--format=man|bash|clusters|list|commands] [--page=P]\n\n"
                   "the command tables as man pages and completion (hidden; "
                   "the Makefile runs it)\n\n"
                   "Options:\n"
                   "  --format=man          the roff of page P\n"
                   "  --format=bash         the bash completion script\n"
                   "  --format=clusters     the registered cluster names\n"
                   "  --format=list         the page file names (default "
                   "format)\n"
                   "  --format=commands     every command, one a line\n"
                   "  --page=P              exa, exa-GROUP or exa-env "
                   "(default exa)\n"
                   "Example: exa debug commands --format=man --page=exa-hpc "
                   "| man -l -\n");
            return 0;
        } else
            return out_usage(ctx,
                             "unknown option '%s': expected "
                             "--format=man|bash|clusters|list|commands "
                             "[--page=P]",
                             argv[i]);
    }
    if (!strcmp(format, "bash")) {
        completion(stdout, groups, top);
        return 0;
    }
    if (!strcmp(format, "clusters")) {
        cluster_names(stdout);
        return 0;
    }
    if (!strcmp(format, "commands")) {
        for (size_t i = 0; groups[i]; i++)
            for (const struct exa_cmd *c = groups[i]->cmds; c->name; c++)
                printf("%s %s\n", groups[i]->name, c->name);
        for (const struct exa_cmd *c = top; c->name; c++)
            printf("%s\n", c->name);
        return 0;
    }
    if (!strcmp(format, "list")) {
        printf("exa.1\n");
        for (size_t i = 0; groups[i]; i++)
            printf("exa-%s.1\n", groups[i]->name);
        printf("exa-env.7\n");
        return 0;
    }
    if (strcmp(format, "man"))
        return out_usage(ctx,
                         "unknown format '%s': expected man, bash, "
                         "clusters, list or commands",
                         format);
    if (!page || !strcmp(page, "exa")) {
        page_exa(stdout, groups, top);
        return 0;
    }
    if (!strcmp(page, "exa-env")) {
        page_env(stdout, groups);
        return 0;
    }
    for (size_t i = 0; groups[i]; i++) {
        const char *g;
        if (skip_prefix(page, "exa-", &g) && !strcmp(g, groups[i]->name)) {
            page_group(stdout, groups, groups[i]);
            return 0;
        }
    }
    return out_usage(ctx, "unknown page '%s': see 'exa debug commands'", page);
}

int docgen_help_topic(struct exa_ctx *ctx, const char *topic)
{
    if (!strcmp(topic, "env")) {
        printf("Environment variables (exa-env(7)):\n");
        for (size_t i = 0; env_vars[i].name; i++)
            printf("  %-32s %s%s%s%s\n", env_vars[i].name, env_vars[i].what,
                   *env_vars[i].def ? " (default " : "", env_vars[i].def,
                   *env_vars[i].def ? ")" : "");
        return 0;
    }
    return out_errorf(ctx, EXA_EUSAGE, "see 'exa help'",
                      "no help topic '%s': expected a group, a group and a "
                      "command, or env",
                      topic);
}
