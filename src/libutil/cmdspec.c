/*
 * cmdspec.c - read a scheduler or GPU command line into the column spec
 * of its output (cmdspec.h). Pure: no process is run, no shell is used.
 */
#include "libutil/cmdspec.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* ---- splitting ---------------------------------------------------- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* One $'...' escape at *pp (just past the backslash) into w. */
static void ansi_escape(const char **pp, struct strbuf *w)
{
    const char *p = *pp;
    int c = (unsigned char)*p;
    switch (c) {
    case 'n':
        strbuf_addch(w, '\n');
        p++;
        break;
    case 't':
        strbuf_addch(w, '\t');
        p++;
        break;
    case 'r':
        strbuf_addch(w, '\r');
        p++;
        break;
    case 'a':
        strbuf_addch(w, '\a');
        p++;
        break;
    case 'e':
    case 'E':
        strbuf_addch(w, 0x1b);
        p++;
        break;
    case 'x': {
        int v = 0, n = 0;
        p++;
        while (n < 2 && hexval((unsigned char)*p) >= 0) {
            v = v * 16 + hexval((unsigned char)*p++);
            n++;
        }
        if (n)
            strbuf_addch(w, (char)v);
        else
            strbuf_addstr(w, "\\x");
        break;
    }
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7': {
        int v = 0, n = 0;
        while (n < 3 && *p >= '0' && *p <= '7') {
            v = v * 8 + (*p++ - '0');
            n++;
        }
        strbuf_addch(w, (char)v);
        break;
    }
    case '\0':
        strbuf_addch(w, '\\');
        break;
    default: /* \\ \' \" \? and anything else: the character itself */
        strbuf_addch(w, (char)c);
        p++;
        break;
    }
    *pp = p;
}

static int is_op(int c)
{
    /* '<' and '>' stay in words: notes write placeholders as <user> */
    return c == '|' || c == '&' || c == ';' || c == '(' || c == ')';
}

static void end_cmd(struct strvec **cmds, size_t *n, size_t *alloc,
                    struct strvec *cur)
{
    if (!cur->nr)
        return;
    ALLOC_GROW(*cmds, *n + 1, *alloc);
    (*cmds)[(*n)++] = *cur;
    strvec_init(cur);
}

int cmd_split(const char *s, struct strvec **cmds, size_t *ncmds,
              exa_error_t *err)
{
    struct strvec cur = STRVEC_INIT;
    struct strbuf w = STRBUF_INIT;
    size_t n = 0, alloc = 0;
    int inword = 0;
    const char *p = s ? s : "";

    *cmds = NULL;
    *ncmds = 0;
    for (;;) {
        int c = (unsigned char)*p;
        if (!c || isspace(c) || is_op(c)) {
            if (inword) {
                strvec_push(&cur, w.buf);
                strbuf_reset(&w);
                inword = 0;
            }
            if (!c)
                break;
            if (is_op(c))
                end_cmd(cmds, &n, &alloc, &cur);
            p++;
            continue;
        }
        inword = 1;
        if (c == '\'') {
            const char *e = strchr(p + 1, '\'');
            if (!e)
                goto unterminated;
            strbuf_add(&w, p + 1, (size_t)(e - p - 1));
            p = e + 1;
        } else if (c == '$' && p[1] == '\'') {
            p += 2;
            while (*p && *p != '\'') {
                if (*p == '\\') {
                    p++;
                    ansi_escape(&p, &w);
                } else {
                    strbuf_addch(&w, *p++);
                }
            }
            if (!*p)
                goto unterminated;
            p++;
        } else if (c == '"') {
            p++;
            while (*p && *p != '"') {
                if (*p == '\\' && p[1] && strchr("\"\\$`", p[1])) {
                    strbuf_addch(&w, p[1]);
                    p += 2;
                } else {
                    strbuf_addch(&w, *p++);
                }
            }
            if (!*p)
                goto unterminated;
            p++;
        } else if (c == '\\') {
            if (p[1]) {
                strbuf_addch(&w, p[1]);
                p += 2;
            } else {
                p++;
            }
        } else {
            strbuf_addch(&w, (char)c);
            p++;
        }
    }
    end_cmd(cmds, &n, &alloc, &cur);
    strvec_clear(&cur);
    strbuf_release(&w);
    *ncmds = n;
    return 0;
unterminated:
    strvec_clear(&cur);
    strbuf_release(&w);
    cmd_split_free(*cmds, n);
    *cmds = NULL;
    return exa_err(err, EXA_EUSAGE, "command line '%s': unterminated quote", s);
}

void cmd_split_free(struct strvec *cmds, size_t ncmds)
{
    for (size_t i = 0; i < ncmds; i++)
        strvec_clear(&cmds[i]);
    free(cmds);
}

/* ---- column names ------------------------------------------------- */

struct alias {
    const char *key, *name;
};

/* squeue -o %X letters -> header names (squeue(1) "-o <output_format>") */
static const struct alias squeue_letters[] = {
    {"a", "ACCOUNT"},
    {"A", "JOBID"},
    {"B", "EXEC_HOST"},
    {"b", "TRES_PER_NODE"},
    {"c", "MIN_CPUS"},
    {"C", "CPUS"},
    {"d", "MIN_TMP_DISK"},
    {"D", "NODES"},
    {"e", "END_TIME"},
    {"E", "DEPENDENCY"},
    {"f", "FEATURES"},
    {"F", "ARRAY_JOB_ID"},
    {"g", "GROUP"},
    {"G", "GROUP"},
    {"h", "OVER_SUBSCRIBE"},
    {"H", "SOCKETS_PER_NODE"},
    {"i", "JOBID"},
    {"I", "CORES_PER_SOCKET"},
    {"j", "NAME"},
    {"J", "THREADS_PER_CORE"},
    {"k", "COMMENT"},
    {"K", "ARRAY_TASK_ID"},
    {"l", "TIME_LIMIT"},
    {"L", "TIME_LEFT"},
    {"m", "MIN_MEMORY"},
    {"M", "TIME"},
    {"n", "REQ_NODES"},
    {"N", "NODELIST"},
    {"o", "COMMAND"},
    {"O", "CONTIGUOUS"},
    {"p", "PRIORITY"},
    {"P", "PARTITION"},
    {"q", "QOS"},
    {"Q", "PRIORITY"},
    {"r", "REASON"},
    {"R", "NODELIST(REASON)"},
    {"S", "START_TIME"},
    {"t", "ST"},
    {"T", "STATE"},
    {"u", "USER"},
    {"U", "UID"},
    {"v", "RESERVATION"},
    {"V", "SUBMIT_TIME"},
    {"w", "WCKEY"},
    {"W", "LICENSES"},
    {"x", "EXC_NODES"},
    {"X", "CORE_SPEC"},
    {"y", "NICE"},
    {"Y", "SCHEDNODES"},
    {"z", "S:C:T"},
    {"Z", "WORK_DIR"},
    {NULL, NULL},
};

/* squeue -O names whose header differs from the upper-cased name */
static const struct alias squeue_long[] = {
    {"username", "USER"},
    {"userid", "UID"},
    {"groupname", "GROUP"},
    {"statecompact", "ST"},
    {"numnodes", "NODES"},
    {"numcpus", "CPUS"},
    {"numtasks", "NUM_TASKS"},
    {"timeused", "TIME"},
    {"timelimit", "TIME_LIMIT"},
    {"timeleft", "TIME_LEFT"},
    {"starttime", "START_TIME"},
    {"endtime", "END_TIME"},
    {"submittime", "SUBMIT_TIME"},
    {"gres", "TRES_PER_NODE"},
    {"batchhost", "EXEC_HOST"},
    {"reasonlist", "NODELIST(REASON)"},
    {"minmemory", "MIN_MEMORY"},
    {"mincpus", "MIN_CPUS"},
    {"mintmpdisk", "MIN_TMP_DISK"},
    {"jobarrayid", "JOBID"},
    {"arrayjobid", "ARRAY_JOB_ID"},
    {"arraytaskid", "ARRAY_TASK_ID"},
    {"workdir", "WORK_DIR"},
    {"exitcode", "EXIT_CODE"},
    {"prioritylong", "PRIORITY"},
    {"hetjobid", "HET_JOB_ID"},
    {"hetjoboffset", "HET_JOB_OFFSET"},
    {"schednodes", "SCHEDNODES"},
    {"reqnodes", "REQ_NODES"},
    {"excnodes", "EXC_NODES"},
    {"oversubscribe", "OVER_SUBSCRIBE"},
    {NULL, NULL},
};

/* sinfo -o %X letters -> header names (sinfo(1) "-o <output_format>") */
static const struct alias sinfo_letters[] = {
    {"a", "AVAIL"},
    {"A", "NODES(A/I)"},
    {"b", "ACTIVE_FEATURES"},
    {"c", "CPUS"},
    {"C", "CPUS(A/I/O/T)"},
    {"d", "TMP_DISK"},
    {"D", "NODES"},
    {"e", "FREE_MEM"},
    {"E", "REASON"},
    {"f", "AVAIL_FEATURES"},
    {"F", "NODES(A/I/O/T)"},
    {"g", "GROUPS"},
    {"G", "GRES"},
    {"h", "OVERSUBSCRIBE"},
    {"H", "TIMESTAMP"},
    {"l", "TIMELIMIT"},
    {"L", "DEFAULTTIME"},
    {"m", "MEMORY"},
    {"n", "HOSTNAMES"},
    {"N", "NODELIST"},
    {"o", "NODE_ADDR"},
    {"O", "CPU_LOAD"},
    {"p", "PRIORITY"},
    {"P", "PARTITION"},
    {"r", "ROOT"},
    {"R", "PARTITION"},
    {"s", "JOB_SIZE"},
    {"t", "STATE"},
    {"T", "STATE"},
    {"u", "USER"},
    {"V", "CLUSTER"},
    {"v", "VERSION"},
    {"w", "WEIGHT"},
    {"X", "SOCKETS"},
    {"Y", "CORES"},
    {"Z", "THREADS"},
    {"z", "S:C:T"},
    {NULL, NULL},
};

/* sinfo -O names whose header differs from the upper-cased name */
static const struct alias sinfo_long[] = {
    {"nodehost", "HOSTNAMES"},
    {"nodeaddr", "NODE_ADDR"},
    {"statelong", "STATE"},
    {"statecompact", "STATE"},
    {"cpusstate", "CPUS(A/I/O/T)"},
    {"allocmem", "ALLOCMEM"},
    {"freemem", "FREE_MEM"},
    {"gresused", "GRES_USED"},
    {"partitionname", "PARTITION"},
    {"nodeai", "NODES(A/I)"},
    {"nodeaiot", "NODES(A/I/O/T)"},
    {"features", "AVAIL_FEATURES"},
    {"features_act", "ACTIVE_FEATURES"},
    {"cpusload", "CPU_LOAD"},
    {"time", "TIMELIMIT"},
    {"available", "AVAIL"},
    {"disk", "TMP_DISK"},
    {NULL, NULL},
};

/* flux jobs / flux resource fields -> header words (flux-jobs(1),
 * flux-resource(1) OUTPUT FORMAT) */
static const struct alias flux_fields[] = {
    {"id", "JOBID"},
    {"id.f58", "JOBID"},
    {"id.f58plain", "JOBID"},
    {"id.dec", "JOBID"},
    {"id.hex", "JOBID"},
    {"id.words", "JOBID"},
    {"id.dothex", "JOBID"},
    {"id.kvs", "JOBID"},
    {"userid", "UID"},
    {"username", "USER"},
    {"urgency", "URG"},
    {"priority", "PRI"},
    {"state_single", "ST"},
    {"status_abbrev", "ST"},
    {"result_abbrev", "RS"},
    {"returncode", "RC"},
    {"waitstatus", "WSTATUS"},
    {"exception.type", "EXCEPTION-TYPE"},
    {"exception.note", "EXCEPTION-NOTE"},
    {"exception.severity", "EXCEPTION-SEVERITY"},
    {"exception.occurred", "EXCEPTION-OCCURRED"},
    {"contextual_time", "TIME"},
    {"contextual_info", "INFO"},
    {"inactive_reason", "INACTIVE-REASON"},
    {"rlist", "LIST"},
    {"timestamp", "TIME"},
    {NULL, NULL},
};

static const char *alias_find(const struct alias *t, const char *key,
                              int nocase)
{
    for (size_t i = 0; t[i].key; i++)
        if (nocase ? !strcasecmp(t[i].key, key) : !strcmp(t[i].key, key))
            return t[i].name;
    return NULL;
}

static char *upper_dup(const char *s, size_t n, int dash_to_us)
{
    char *u = xstrndup(s, n);
    for (char *p = u; *p; p++) {
        *p = (char)toupper((unsigned char)*p);
        if (dash_to_us && *p == '-')
            *p = '_';
    }
    return u;
}

static void add_col(struct cmd_spec *sp, size_t *alloc, char *name,
                    size_t width, const char *after, size_t after_len)
{
    struct cmd_column *c;
    ALLOC_GROW(sp->cols, sp->ncols + 1, *alloc);
    c = &sp->cols[sp->ncols++];
    c->name = name;
    c->width = width;
    c->after = xstrndup(after ? after : "", after ? after_len : 0);
}

/* Set sep when every separator between columns is one non-blank string;
 * set sliceable when rows can be cut by widths and literals alone. */
static void finish_cols(struct cmd_spec *sp)
{
    const char *s = NULL;
    int same = sp->ncols > 1;
    sp->sliceable = sp->ncols > 0;
    for (size_t i = 0; i + 1 < sp->ncols; i++) {
        const char *a = sp->cols[i].after;
        int blank = 1;
        for (const char *p = a; *p; p++)
            if (*p != ' ')
                blank = 0;
        if (!sp->cols[i].width && blank)
            sp->sliceable = 0;
        if (!*a || blank || (s && strcmp(s, a)))
            same = 0;
        s = a;
    }
    for (size_t i = 0; i < sp->ncols && same; i++)
        if (sp->cols[i].width)
            same = 0;
    free(sp->sep);
    sp->sep = same ? xstrdup(s) : NULL;
}

/*
 * A Slurm -o format: literal text and %[.][width]X items (squeue, sinfo).
 * Text before the first item is dropped (exa's 0x1E record lead).
 */
static void slurm_short_format(struct cmd_spec *sp, const char *fmt,
                               const struct alias *letters)
{
    size_t alloc = 0;
    const char *p = fmt;
    while (*p && *p != '%')
        p++;
    while (*p) {
        size_t width = 0;
        char key[2] = {0, 0};
        const char *name, *lit;
        if (p[1] == '%') {
            p += 2;
            continue;
        }
        p++;
        if (*p == '.')
            p++;
        while (isdigit((unsigned char)*p))
            width = width * 10 + (size_t)(*p++ - '0');
        if (!*p)
            break;
        key[0] = *p++;
        name = alias_find(letters, key, 0);
        lit = p;
        while (*p && *p != '%')
            p++;
        add_col(sp, &alloc, xstrdup(name ? name : "-"), width, lit,
                (size_t)(p - lit));
    }
    finish_cols(sp);
}

/*
 * A Slurm -O format: "name[:[.][size][suffix]]" items joined by ','.
 * Without ':' the width is 20 (squeue/sinfo's default) and nothing
 * follows; with ':' and no digits the value is printed as is.
 */
static void slurm_long_format(struct cmd_spec *sp, const char *fmt,
                              const struct alias *names)
{
    size_t alloc = 0;
    const char *p = fmt;
    while (*p) {
        const char *e = p, *colon;
        size_t width = 20, nl;
        const char *suf = "", *name;
        size_t suf_len = 0;
        char *key;
        while (*e && *e != ',')
            e++;
        colon = memchr(p, ':', (size_t)(e - p));
        nl = colon ? (size_t)(colon - p) : (size_t)(e - p);
        if (colon) {
            const char *q = colon + 1;
            width = 0;
            if (*q == '.')
                q++;
            while (q < e && isdigit((unsigned char)*q))
                width = width * 10 + (size_t)(*q++ - '0');
            suf = q;
            suf_len = (size_t)(e - q);
        }
        key = xstrndup(p, nl);
        for (char *k = key; *k; k++)
            *k = (char)tolower((unsigned char)*k);
        name = alias_find(names, key, 0);
        if (nl)
            add_col(sp, &alloc, name ? xstrdup(name) : upper_dup(p, nl, 1),
                    width, suf, suf_len);
        free(key);
        p = *e ? e + 1 : e;
    }
    finish_cols(sp);
}

/* sacct --format a,b%20,c: names upper case, widths after '%'. */
static void sacct_format(struct cmd_spec *sp, const char *fmt, int fixed)
{
    size_t alloc = 0;
    const char *p = fmt;
    while (*p) {
        const char *e = p, *pct;
        size_t width = 0, nl;
        while (*e && *e != ',')
            e++;
        pct = memchr(p, '%', (size_t)(e - p));
        nl = pct ? (size_t)(pct - p) : (size_t)(e - p);
        if (pct)
            for (const char *q = pct + 1; q < e && isdigit((unsigned char)*q);
                 q++)
                width = width * 10 + (size_t)(*q - '0');
        if (nl)
            add_col(sp, &alloc, upper_dup(p, nl, 0), fixed ? width : 0,
                    fixed ? " " : "", fixed ? 1 : 0);
        p = *e ? e + 1 : e;
    }
}

/* A Flux format: literal text and {[?:][+:]field[!conv][:spec]} items. */
static void flux_format(struct cmd_spec *sp, const char *fmt)
{
    size_t alloc = 0;
    const char *p = fmt;
    if (!strchr(fmt, '{'))
        return; /* a named format ("long", "deps"): columns unknown */
    while (*p && *p != '{')
        p++;
    while (*p == '{') {
        const char *e = strchr(p, '}'), *f = p + 1, *fe, *lit, *name;
        char *key;
        if (!e)
            break;
        while ((f[0] == '?' || f[0] == '+') && f[1] == ':')
            f += 2;
        if (f[0] == '?' && f[1] == '+' && f[2] == ':')
            f += 3;
        fe = f;
        while (fe < e && *fe != '!' && *fe != ':')
            fe++;
        key = xstrndup(f, (size_t)(fe - f));
        name = alias_find(flux_fields, key, 0);
        lit = e + 1;
        p = lit;
        while (*p && *p != '{')
            p++;
        add_col(sp, &alloc,
                name ? xstrdup(name) : upper_dup(key, strlen(key), 0), 0, lit,
                (size_t)(p - lit));
        free(key);
    }
    finish_cols(sp);
}

/* nvidia-smi --query-gpu=a,b,c: query fields as given, ", " between. */
static void nvsmi_query(struct cmd_spec *sp, const char *q)
{
    size_t alloc = 0;
    const char *p = q;
    while (*p) {
        const char *e = p;
        while (*e && *e != ',')
            e++;
        if (e > p)
            add_col(sp, &alloc, xstrndup(p, (size_t)(e - p)), 0, ", ", 2);
        p = *e ? e + 1 : e;
    }
    finish_cols(sp);
}

/* ---- options ------------------------------------------------------ */

struct opts {
    const char *short_arg;       /* short options taking an argument */
    const char *const *long_arg; /* long options taking an argument */
};

static const char *const squeue_long_arg[] = {
    "account", "clusters", "format", "Format",    "iterate",  "jobs",
    "job",     "licenses", "name",   "partition", "qos",      "reservation",
    "sort",    "states",   "state",  "user",      "nodelist", NULL,
};
static const char *const sinfo_long_arg[] = {
    "clusters",  "format", "Format", "iterate", "nodes",
    "partition", "sort",   "states", NULL,
};
static const char *const sacct_long_arg[] = {
    "accounts",      "constraints", "endtime",   "file",   "gid",
    "group",         "nnodes",      "cpus",      "jobs",   "timelimit-min",
    "timelimit-max", "clusters",    "nodelist",  "name",   "format",
    "fields",        "qos",         "partition", "reason", "starttime",
    "state",         "uid",         "user",      "wckeys", "associations",
    "delimiter",     "array",       NULL,
};
static const char *const flux_long_arg[] = {
    "format", "filter", "user",   "queue",   "count",      "since",
    "name",   "level",  "states", "include", "skip-empty", NULL,
};
static const char *const nvsmi_long_arg[] = {
    "query-gpu",          "format", "id", "filename", "loop", "loop-ms",
    "query-compute-apps", NULL,
};

/*
 * Walk argv[from..] as getopt would, calling fn for each option that
 * takes an argument (name: the long name, or the one-letter string) and
 * each flag (val NULL).
 */
typedef void (*opt_fn)(struct cmd_spec *sp, const char *name, const char *val,
                       void *ctx);

static int long_takes(const struct opts *o, const char *name)
{
    for (size_t i = 0; o->long_arg[i]; i++)
        if (!strcmp(o->long_arg[i], name))
            return 1;
    return 0;
}

static void walk_opts(const char *const *argv, size_t argc, size_t from,
                      const struct opts *o, struct cmd_spec *sp, opt_fn fn,
                      void *ctx)
{
    for (size_t i = from; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        if (!strncmp(a, "--", 2)) {
            const char *eq = strchr(a + 2, '=');
            char *name =
                eq ? xstrndup(a + 2, (size_t)(eq - a - 2)) : xstrdup(a + 2);
            if (eq)
                fn(sp, name, eq + 1, ctx);
            else if (long_takes(o, name) && i + 1 < argc)
                fn(sp, name, argv[++i], ctx);
            else
                fn(sp, name, NULL, ctx);
            free(name);
        } else if (a[0] == '-' && a[1]) {
            for (const char *p = a + 1; *p; p++) {
                char nm[2] = {*p, 0};
                if (strchr(o->short_arg, *p)) {
                    if (p[1])
                        fn(sp, nm, p + 1, ctx);
                    else if (i + 1 < argc)
                        fn(sp, nm, argv[++i], ctx);
                    break;
                }
                fn(sp, nm, NULL, ctx);
            }
        }
    }
}

static void set_state_filter(struct cmd_spec *sp, const char *v)
{
    free(sp->state_filter);
    sp->state_filter = NULL;
    if (!*v || strchr(v, ',') || !strcasecmp(v, "all"))
        return;
    sp->state_filter = upper_dup(v, strlen(v), 0);
}

struct slurm_ctx {
    const char *short_fmt, *long_fmt, *states;
    const char *delimiter, *sacct_fmt;
    int parsable, longfmt, brief;
};

static void slurm_opt(struct cmd_spec *sp, const char *name, const char *val,
                      void *vctx)
{
    struct slurm_ctx *c = vctx;
    enum cmd_tool t = sp->tool;
    if (t == CMD_TOOL_SACCT) {
        if (!strcmp(name, "n") || !strcmp(name, "noheader"))
            sp->noheader = 1;
        else if (!strcmp(name, "P") || !strcmp(name, "parsable2"))
            c->parsable = 2;
        else if (!strcmp(name, "p") || !strcmp(name, "parsable"))
            c->parsable = 1;
        else if (!strcmp(name, "b") || !strcmp(name, "brief"))
            c->brief = 1;
        else if (!strcmp(name, "l") || !strcmp(name, "long"))
            c->longfmt = 1;
        else if (val && (!strcmp(name, "o") || !strcmp(name, "format") ||
                         !strcmp(name, "fields")))
            c->sacct_fmt = val;
        else if (val && !strcmp(name, "delimiter"))
            c->delimiter = val;
        return;
    }
    if (!strcmp(name, "h") || !strcmp(name, "noheader"))
        sp->noheader = 1;
    else if (!strcmp(name, "l") || !strcmp(name, "long"))
        c->longfmt = 1;
    else if (val && (!strcmp(name, "o") || !strcmp(name, "format")))
        c->short_fmt = val, c->long_fmt = NULL;
    else if (val && (!strcmp(name, "O") || !strcmp(name, "Format")))
        c->long_fmt = val, c->short_fmt = NULL;
    else if (val && t == CMD_TOOL_SQUEUE &&
             (!strcmp(name, "t") || !strcmp(name, "states") ||
              !strcmp(name, "state")))
        c->states = val;
}

/* sacct's default field list (sacct(1): no --format) and its widths. */
static const char *const sacct_default[] = {
    "JOBID%12",     "JOBNAME%10", "PARTITION%10", "ACCOUNT%10",
    "ALLOCCPUS%10", "STATE%10",   "EXITCODE%8",   NULL,
};
static const char *const sacct_brief[] = {
    "JOBID%12",
    "STATE%10",
    "EXITCODE%8",
    NULL,
};

static void read_slurm(const char *const *argv, size_t argc,
                       struct cmd_spec *sp)
{
    static const struct opts squeue_o = {"AMOSaijLnopqRtuwj", squeue_long_arg};
    static const struct opts sinfo_o = {"MOSinoptT", sinfo_long_arg};
    static const struct opts sacct_o = {"ACEfgiIjkKMNoqrSsuWx", sacct_long_arg};
    struct slurm_ctx c = {0};
    const struct opts *o = sp->tool == CMD_TOOL_SQUEUE  ? &squeue_o
                           : sp->tool == CMD_TOOL_SINFO ? &sinfo_o
                                                        : &sacct_o;
    walk_opts(argv, argc, 1, o, sp, slurm_opt, &c);
    if (sp->tool == CMD_TOOL_SACCT) {
        struct strbuf sb = STRBUF_INIT;
        const char *fmt = c.sacct_fmt;
        if (!fmt && !c.longfmt) {
            for (const char *const *d = c.brief ? sacct_brief : sacct_default;
                 *d; d++)
                strbuf_addf(&sb, "%s%s", sb.len ? "," : "", *d);
            fmt = sb.buf;
        }
        if (c.sacct_fmt)
            sp->format = xstrdup(c.sacct_fmt);
        if (fmt) {
            sacct_format(sp, fmt, !c.parsable);
            if (c.parsable) {
                for (size_t i = 0; i + 1 < sp->ncols; i++) {
                    free(sp->cols[i].after);
                    sp->cols[i].after =
                        xstrdup(c.delimiter ? c.delimiter : "|");
                }
                finish_cols(sp);
                if (sp->ncols == 1) {
                    free(sp->sep);
                    sp->sep = xstrdup(c.delimiter ? c.delimiter : "|");
                }
                sp->trailing_sep = c.parsable == 1;
            } else {
                sp->sliceable = 1;
                for (size_t i = 0; i + 1 < sp->ncols; i++)
                    if (!sp->cols[i].width)
                        sp->sliceable = 0;
            }
        }
        strbuf_release(&sb);
        return;
    }
    if (c.states)
        set_state_filter(sp, c.states);
    if (c.long_fmt || c.short_fmt)
        sp->format = xstrdup(c.long_fmt ? c.long_fmt : c.short_fmt);
    if (c.long_fmt)
        slurm_long_format(sp, c.long_fmt,
                          sp->tool == CMD_TOOL_SQUEUE ? squeue_long
                                                      : sinfo_long);
    else if (c.short_fmt)
        slurm_short_format(sp, c.short_fmt,
                           sp->tool == CMD_TOOL_SQUEUE ? squeue_letters
                                                       : sinfo_letters);
    else if (sp->tool == CMD_TOOL_SQUEUE)
        /* squeue(1): the default and -l formats */
        slurm_short_format(sp,
                           c.longfmt
                               ? "%.18i %.9P %.8j %.8u %.8T %.10M %.9l "
                                 "%.6D %R"
                               : "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R",
                           squeue_letters);
}

struct flux_ctx {
    const char *fmt;
};

static void flux_opt(struct cmd_spec *sp, const char *name, const char *val,
                     void *vctx)
{
    struct flux_ctx *c = vctx;
    if (!strcmp(name, "n") || !strcmp(name, "no-header"))
        sp->noheader = 1;
    else if (val && (!strcmp(name, "o") || !strcmp(name, "format")))
        c->fmt = val;
    else if (val && sp->tool == CMD_TOOL_FLUX_JOBS &&
             (!strcmp(name, "f") || !strcmp(name, "filter")))
        set_state_filter(sp, val);
}

static void nvsmi_opt(struct cmd_spec *sp, const char *name, const char *val,
                      void *vctx)
{
    const char **q = vctx;
    if (!val)
        return;
    if (!strcmp(name, "query-gpu"))
        *q = val;
    else if (!strcmp(name, "format") && strstr(val, "noheader"))
        sp->noheader = 1;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int prog_is(const char *prog, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(prog, name, n) &&
           (!prog[n] || !strcasecmp(prog + n, ".exe"));
}

static enum cmd_tool tool_of(const char *const *argv, size_t argc, size_t *sub)
{
    const char *prog = base_name(argv[0]);
    *sub = 1;
    if (prog_is(prog, "squeue"))
        return CMD_TOOL_SQUEUE;
    if (prog_is(prog, "sacct"))
        return CMD_TOOL_SACCT;
    if (prog_is(prog, "sinfo"))
        return CMD_TOOL_SINFO;
    if (prog_is(prog, "nvidia-smi"))
        return CMD_TOOL_NVIDIA_SMI;
    if (prog_is(prog, "flux") || prog_is(prog, "flux-jobs") ||
        prog_is(prog, "flux-resource")) {
        size_t i = 1;
        if (prog_is(prog, "flux-jobs"))
            return CMD_TOOL_FLUX_JOBS;
        if (prog_is(prog, "flux-resource"))
            return CMD_TOOL_FLUX_RESOURCE;
        while (i < argc && argv[i][0] == '-')
            i++;
        if (i < argc && !strcmp(argv[i], "jobs")) {
            *sub = i + 1;
            return CMD_TOOL_FLUX_JOBS;
        }
        if (i + 1 < argc && !strcmp(argv[i], "resource") &&
            (!strcmp(argv[i + 1], "list") || !strcmp(argv[i + 1], "status"))) {
            *sub = i + 2;
            return CMD_TOOL_FLUX_RESOURCE;
        }
    }
    return CMD_TOOL_NONE;
}

void cmd_spec_from_argv(const char *const *argv, size_t argc,
                        struct cmd_spec *spec)
{
    size_t sub;
    if (!argc || !argv || !argv[0])
        return;
    spec->tool = tool_of(argv, argc, &sub);
    switch (spec->tool) {
    case CMD_TOOL_SQUEUE:
    case CMD_TOOL_SINFO:
    case CMD_TOOL_SACCT:
        read_slurm(argv, argc, spec);
        break;
    case CMD_TOOL_FLUX_JOBS:
    case CMD_TOOL_FLUX_RESOURCE: {
        static const struct opts o = {"ofuqcLsi", flux_long_arg};
        struct flux_ctx c = {NULL};
        walk_opts(argv, argc, sub, &o, spec, flux_opt, &c);
        if (c.fmt) {
            spec->format = xstrdup(c.fmt);
            flux_format(spec, c.fmt);
        }
        break;
    }
    case CMD_TOOL_NVIDIA_SMI: {
        static const struct opts o = {"iflu", nvsmi_long_arg};
        const char *q = NULL;
        walk_opts(argv, argc, 1, &o, spec, nvsmi_opt, &q);
        if (q) {
            spec->format = xstrdup(q);
            nvsmi_query(spec, q);
        }
        break;
    }
    default:
        break;
    }
}

static int skip_word(const char *w)
{
    static const char *const kw[] = {"env",   "do",   "then",    "else",
                                     "time",  "exec", "command", "sudo",
                                     "nohup", "{",    NULL};
    const char *eq = strchr(w, '=');
    if (eq && eq > w && w[0] != '-') {
        for (const char *p = w; p < eq; p++)
            if (!(isalnum((unsigned char)*p) || *p == '_'))
                return 0;
        return 1; /* VAR=value */
    }
    for (size_t i = 0; kw[i]; i++)
        if (!strcmp(kw[i], w))
            return 1;
    return 0;
}

int cmd_spec_from_string(const char *cmdline, struct cmd_spec *spec,
                         exa_error_t *err)
{
    struct strvec *cmds;
    size_t n;
    if (!cmdline || !*cmdline)
        return 0;
    if (cmd_split(cmdline, &cmds, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n && spec->tool == CMD_TOOL_NONE; i++) {
        size_t k = 0;
        while (k < cmds[i].nr && skip_word(cmds[i].v[k]))
            k++;
        if (k < cmds[i].nr)
            cmd_spec_from_argv((const char *const *)cmds[i].v + k,
                               cmds[i].nr - k, spec);
    }
    cmd_split_free(cmds, n);
    return 0;
}

int cmd_spec_header_line(const struct cmd_spec *spec, struct strbuf *out)
{
    if (!spec || !spec->ncols)
        return -1;
    for (size_t i = 0; i < spec->ncols; i++)
        strbuf_addf(out, "%s%s", i ? " " : "", spec->cols[i].name);
    return 0;
}

void cmd_spec_release(struct cmd_spec *spec)
{
    struct cmd_spec z = CMD_SPEC_INIT;
    for (size_t i = 0; i < spec->ncols; i++) {
        free(spec->cols[i].name);
        free(spec->cols[i].after);
    }
    free(spec->cols);
    free(spec->sep);
    free(spec->state_filter);
    free(spec->format);
    *spec = z;
}
