/*
 * parse_slurm.c - squeue, sacct, scontrol show job and sbatch parsers.
 *
 * squeue and sacct print the same kind of table with different column
 * names, so both come down to one record builder: each column gets a role
 * (from the header name; without a header from a table of well-known field
 * lists validated against every row, and failing that from the values'
 * shapes), and a row is turned into a struct slurm_job by role. The rules
 * that differ by tool (squeue's projected START/END times, sacct's steps)
 * are applied after the row is read. Nothing here trusts a column position
 * that the header or the values did not confirm: a record whose field count
 * differs from the header is reported, not guessed at.
 */
#include "libsched/parse_slurm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "libdiscovery/gres.h"
#include "libhostlist/hostlist.h"
#include "libsched/slurm_table.h"
#include "libutil/duration.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* ---------------------------------------------------------------- states */

static const struct {
    const char *lng, *cmp, *norm;
} job_states[] = {
    { "PENDING", "PD", "PENDING" },       { "REQUEUED", "RQ", "PENDING" },
    { "REQUEUE_HOLD", "RH", "PENDING" },  { "REQUEUE_FED", "RF", "PENDING" },
    { "RESV_DEL_HOLD", "RD", "PENDING" }, { "SPECIAL_EXIT", "SE", "PENDING" },
    { "CONFIGURING", "CF", "PENDING" },   { "RUNNING", "R", "RUNNING" },
    { "COMPLETING", "CG", "RUNNING" },    { "STAGE_OUT", "SO", "RUNNING" },
    { "SIGNALING", "SI", "RUNNING" },     { "RESIZING", "RS", "RUNNING" },
    { "SUSPENDED", "S", "SUSPENDED" },    { "STOPPED", "ST", "SUSPENDED" },
    { "COMPLETED", "CD", "COMPLETED" },   { "FAILED", "F", "FAILED" },
    { "OUT_OF_MEMORY", "OOM", "FAILED" }, { "NODE_FAIL", "NF", "FAILED" },
    { "BOOT_FAIL", "BF", "FAILED" },      { "PREEMPTED", "PR", "FAILED" },
    { "CANCELLED", "CA", "CANCELLED" },   { "REVOKED", "RV", "CANCELLED" },
    { "TIMEOUT", "TO", "TIMEOUT" },       { "DEADLINE", "DL", "TIMEOUT" },
};
#define NSTATES (sizeof(job_states) / sizeof(job_states[0]))

/* Is v exactly a compact job state code ("R", "PD", "CG", "OOM")? */
static int compact_state(const char *v)
{
    for (size_t i = 0; i < NSTATES; i++)
        if (!strcmp(v, job_states[i].cmp))
            return 1;
    return 0;
}

static char *trim_dup(const char *s)
{
    size_t n;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
                 s[n - 1] == '\n'))
        n--;
    return xstrndup(s, n);
}

const char *slurm_job_state_normalize(const char *token, char **raw)
{
    char w[64];
    size_t n = 0;
    const char *s, *match = NULL;
    int nmatch = 0;

    if (raw)
        *raw = token ? trim_dup(token) : NULL;
    if (!token)
        return "UNKNOWN";
    s = token;
    while (*s == ' ' || *s == '\t')
        s++;
    while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n' &&
           n + 1 < sizeof(w))
        w[n++] = (char)toupper((unsigned char)*s++);
    w[n] = '\0';
    if (n && w[n - 1] == '+')
        w[--n] = '\0';
    if (!n)
        return "UNKNOWN";
    for (size_t i = 0; i < NSTATES; i++)
        if (!strcmp(w, job_states[i].lng) || !strcmp(w, job_states[i].cmp))
            return job_states[i].norm;
    if (n < 4)
        return "UNKNOWN";
    for (size_t i = 0; i < NSTATES; i++)
        if (!strncmp(job_states[i].lng, w, n)) {
            if (!match || strcmp(match, job_states[i].norm))
                nmatch++;
            match = job_states[i].norm;
        }
    return nmatch == 1 ? match : "UNKNOWN";
}

int slurm_job_state_terminal(const char *st)
{
    return st && (!strcmp(st, "COMPLETED") || !strcmp(st, "FAILED") ||
                  !strcmp(st, "CANCELLED") || !strcmp(st, "TIMEOUT"));
}

/* Does token read as a job state word (known, truncated, or shaped so)? */
static int state_shaped(const char *v)
{
    size_t n = 0;
    if (strcmp(slurm_job_state_normalize(v, NULL), "UNKNOWN"))
        return 1;
    for (; v[n] && v[n] != ' '; n++)
        if (!(isupper((unsigned char)v[n]) || v[n] == '_' ||
              (v[n] == '+' && (v[n + 1] == '\0' || v[n + 1] == ' '))))
            return 0;
    return n >= 4;
}

/* ----------------------------------------------------------------- roles */

enum role {
    R_IGNORE, R_ID, R_ID_RAW, R_STATE, R_STATE_COMPACT, R_EXIT, R_START,
    R_END, R_SUBMIT, R_ELAPSED, R_ELAPSED_RAW, R_TRES_ALLOC, R_TRES_PER_JOB,
    R_TRES_PER_NODE, R_NODES, R_NODELIST, R_NODELIST_REASON, R_REASON,
    R_PARTITION, R_ACCOUNT, R_USER, R_NAME, R_NCPUS, R_TIMELIMIT,
    R_TIMELIMIT_RAW, R_TIMELEFT, R_TOTALCPU, R_MAXRSS, R_BATCHHOST,
    R_CLUSTER, R_PRIORITY,
};

struct name_role {
    const char *name;
    enum role role;
};

static const struct name_role squeue_names[] = {
    { "JOBID", R_ID },              { "STATE", R_STATE },
    { "ST", R_STATE_COMPACT },      { "START_TIME", R_START },
    { "END_TIME", R_END },          { "SUBMIT_TIME", R_SUBMIT },
    { "TIME", R_ELAPSED },          { "TIME_LIMIT", R_TIMELIMIT },
    { "TIME_LEFT", R_TIMELEFT },    { "TRES_ALLOC", R_TRES_ALLOC },
    { "TRES_PER_JOB", R_TRES_PER_JOB }, { "TRES_PER_NODE", R_TRES_PER_NODE },
    { "NODES", R_NODES },           { "NODELIST", R_NODELIST },
    { "NODELIST(REASON)", R_NODELIST_REASON }, { "REASON", R_REASON },
    { "PARTITION", R_PARTITION },   { "ACCOUNT", R_ACCOUNT },
    { "USER", R_USER },             { "NAME", R_NAME },
    { "CPUS", R_NCPUS },            { "EXEC_HOST", R_BATCHHOST },
    { "BATCHHOST", R_BATCHHOST },   { "CLUSTER", R_CLUSTER },
    { "PRIORITY", R_PRIORITY },
    { "ARRAY_JOB_ID", R_IGNORE },   { "ARRAY_TASK_ID", R_IGNORE },
    { "MIN_CPUS", R_IGNORE },       { "MIN_TMP_DISK", R_IGNORE },
    { "DEPENDENCY", R_IGNORE },     { "FEATURES", R_IGNORE },
    { "GROUP", R_IGNORE },          { "OVER_SUBSCRIBE", R_IGNORE },
    { "SOCKETS_PER_NODE", R_IGNORE }, { "CORES_PER_SOCKET", R_IGNORE },
    { "THREADS_PER_CORE", R_IGNORE }, { "COMMENT", R_IGNORE },
    { "MIN_MEMORY", R_IGNORE },     { "REQ_NODES", R_IGNORE },
    { "COMMAND", R_IGNORE },        { "CONTIGUOUS", R_IGNORE },
    { "QOS", R_IGNORE },            { "UID", R_IGNORE },
    { "RESERVATION", R_IGNORE },    { "WCKEY", R_IGNORE },
    { "LICENSES", R_IGNORE },       { "EXC_NODES", R_IGNORE },
    { "CORE_SPEC", R_IGNORE },      { "NICE", R_IGNORE },
    { "SCHEDNODES", R_IGNORE },     { "S:C:T", R_IGNORE },
    { "WORK_DIR", R_IGNORE },       { "CPUS_PER_TASK", R_IGNORE },
    { "TRES_PER_TASK", R_IGNORE },  { "TRES_PER_SOCKET", R_IGNORE },
    { "JOBID_RAW", R_ID_RAW },      { "USERNAME", R_USER },
    { "ACCRUE_TIME", R_IGNORE },    { "ELIGIBLE_TIME", R_IGNORE },
    { "PENDING_TIME", R_IGNORE },   { "NUM_TASKS", R_IGNORE },
    { "GRES", R_TRES_PER_NODE },    { "HET_JOB_ID", R_IGNORE },
    { "HET_JOB_OFFSET", R_IGNORE }, { "HET_JOB_ID_SET", R_IGNORE },
    { "EXIT_CODE", R_IGNORE },      { "LAST_SCHED_EVAL", R_IGNORE },
    { "STEPID", R_ID },             { "MCS_LABEL", R_IGNORE },
    { "PREEMPT_TIME", R_IGNORE },   { "SUSPEND_TIME", R_IGNORE },
    { "DEADLINE", R_IGNORE },       { "STDOUT", R_IGNORE },
    { "STDERR", R_IGNORE },         { "TRES_PER_SOCKET", R_IGNORE },
    { "MIN_MEMORY_PER_CPU", R_IGNORE },
    { NULL, R_IGNORE },
};

static const struct name_role sacct_names[] = {
    { "JOBID", R_ID },              { "JOBIDRAW", R_ID_RAW },
    { "JOBNAME", R_NAME },          { "STATE", R_STATE },
    { "EXITCODE", R_EXIT },         { "START", R_START },
    { "END", R_END },               { "SUBMIT", R_SUBMIT },
    { "ELAPSED", R_ELAPSED },       { "ELAPSEDRAW", R_ELAPSED_RAW },
    { "ALLOCTRES", R_TRES_ALLOC },  { "NODELIST", R_NODELIST },
    { "PARTITION", R_PARTITION },   { "ACCOUNT", R_ACCOUNT },
    { "USER", R_USER },             { "NCPUS", R_NCPUS },
    { "ALLOCCPUS", R_NCPUS },       { "TIMELIMIT", R_TIMELIMIT },
    { "TIMELIMITRAW", R_TIMELIMIT_RAW }, { "TOTALCPU", R_TOTALCPU },
    { "MAXRSS", R_MAXRSS },         { "CLUSTER", R_CLUSTER },
    { "GROUP", R_IGNORE },          { "CPUTIMERAW", R_IGNORE },
    { "NNODES", R_IGNORE },         { "MAXVMSIZE", R_IGNORE },
    { "REQCPUS", R_IGNORE },        { "REQMEM", R_IGNORE },
    { "REQNODES", R_IGNORE },       { "CONSTRAINTS", R_IGNORE },
    { "ELIGIBLE", R_IGNORE },       { "SUSPENDED", R_IGNORE },
    { "DERIVEDEXITCODE", R_IGNORE }, { "ALLOCNODES", R_IGNORE },
    { "MAXDISKREAD", R_IGNORE },    { "MAXDISKWRITE", R_IGNORE },
    { "MAXPAGES", R_IGNORE },       { "CPUTIME", R_IGNORE },
    { "USERCPU", R_IGNORE },        { "SYSTEMCPU", R_IGNORE },
    { "WORKDIR", R_IGNORE },        { "COMMENT", R_IGNORE },
    { "ADMINCOMMENT", R_IGNORE },   { "QOS", R_IGNORE },
    { "REQTRES", R_IGNORE },        { "RESERVATION", R_IGNORE },
    { "UID", R_IGNORE },            { "GID", R_IGNORE },
    { "NTASKS", R_IGNORE },         { "AVECPU", R_IGNORE },
    { "MAXRSSNODE", R_IGNORE },     { "AVERSS", R_IGNORE },
    { "REQGRES", R_IGNORE },        { "ALLOCGRES", R_IGNORE },
    { "PRIORITY", R_IGNORE },       { "FLAGS", R_IGNORE },
    { "STDOUT", R_IGNORE },         { "STDERR", R_IGNORE },
    { "CPUTIMERAW", R_IGNORE },     { "CONSUMEDENERGY", R_IGNORE },
    { "ELAPSEDRAW", R_ELAPSED_RAW }, { "RESERVED", R_IGNORE },
    { "PLANNED", R_IGNORE },        { "WCKEY", R_IGNORE },
    { "ALLOCGRES", R_TRES_PER_JOB }, { "REASON", R_REASON },
    { "JOBIDRAW", R_ID_RAW },       { "NODELIST", R_NODELIST },
    { "TRESUSAGEINTOT", R_IGNORE }, { "TRESUSAGEOUTTOT", R_IGNORE },
    { "PLANNEDCPU", R_IGNORE },     { "PLANNEDCPURAW", R_IGNORE },
    { "ELIGIBLE", R_IGNORE },       { "ASSOCID", R_IGNORE },
    { "BLOCKID", R_IGNORE },        { "MAXRSSTASK", R_IGNORE },
    { "MAXVMSIZENODE", R_IGNORE },  { "AVEVMSIZE", R_IGNORE },
    { "NTASKS", R_IGNORE },         { "LAYOUT", R_IGNORE },
    { "SUBMITLINE", R_IGNORE },     { "CONTAINER", R_IGNORE },
    { NULL, R_IGNORE },
};

static _Thread_local const struct name_role *cur_names;

/*
 * Role of header name u (upper case). Fixed-width formats cut long names
 * to the column width ("TIME_LIMI", "NODELIST(R"), so an unknown name of
 * 4+ characters that is a prefix of exactly one known name takes its role.
 */
static int lookup_role(const struct name_role *t, const char *u,
                       enum role *r)
{
    size_t n = strlen(u), hits = 0;
    enum role pr = R_IGNORE;
    for (size_t i = 0; t[i].name; i++)
        if (!strcmp(t[i].name, u)) {
            *r = t[i].role;
            return 1;
        }
    if (n < 4)
        return 0;
    for (size_t i = 0; t[i].name; i++)
        if (!strncmp(t[i].name, u, n)) {
            hits++;
            pr = t[i].role;
        }
    if (hits != 1)
        return 0;
    *r = pr;
    return 1;
}

static int known_cur(const char *u)
{
    enum role r;
    return lookup_role(cur_names, u, &r);
}

static void upper(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (; *s && *s != '%' && k + 1 < n; s++)
        buf[k++] = (char)toupper((unsigned char)*s);
    buf[k] = '\0';
}

/* ------------------------------------------------------------ validators */

static int is_int(const char *s)
{
    if (!*s || strlen(s) > 15)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

static int none_token(const char *v)
{
    return !*v || !strcasecmp(v, "Unknown") || !strcasecmp(v, "None") ||
           !strcasecmp(v, "N/A") || !strcmp(v, "(null)");
}

static int is_iso(const char *v)
{
    static const char pat[] = "dddd-dd-ddTdd:dd:dd";
    size_t i;
    for (i = 0; pat[i]; i++) {
        if (!v[i])
            return 0;
        if (pat[i] == 'd' ? !isdigit((unsigned char)v[i]) : v[i] != pat[i])
            return 0;
    }
    return 1;
}

static int is_job_id(const char *v)
{
    const char *p = v;
    if (!isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '_') {
        p++;
        if (*p == '[') {
            while (*p && *p != ']') {
                if (!isdigit((unsigned char)*p) && !strchr("[,-%:", *p))
                    return 0;
                p++;
            }
            if (*p != ']')
                return 0;
            p++;
        } else {
            if (!isdigit((unsigned char)*p))
                return 0;
            while (isdigit((unsigned char)*p))
                p++;
        }
    }
    if (*p == '+') {
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == '.') {
        p++;
        if (!*p)
            return 0;
        while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '+'))
            p++;
    }
    return *p == '\0';
}

static int valid_for(enum role r, const char *v)
{
    double d;
    switch (r) {
    case R_ID: return is_job_id(v);
    case R_ID_RAW: return is_int(v);
    case R_STATE: case R_STATE_COMPACT: return state_shaped(v);
    case R_EXIT: {
        const char *c = strchr(v, ':');
        if (!*v)
            return 1;
        if (!c)
            return is_int(v);
        {
            char *a = xstrndup(v, (size_t)(c - v));
            int ok = is_int(a) && is_int(c + 1);
            free(a);
            return ok;
        }
    }
    case R_START: case R_END: case R_SUBMIT:
        return none_token(v) || is_iso(v) || is_int(v);
    case R_ELAPSED: case R_TIMELIMIT: case R_TIMELEFT: case R_TOTALCPU:
        return slurm_duration_parse(v, &d) >= 0;
    case R_ELAPSED_RAW: case R_TIMELIMIT_RAW: case R_NCPUS: case R_NODES:
        return !*v || is_int(v) || slurm_duration_parse(v, &d) == 0;
    case R_TRES_ALLOC: return !*v || strchr(v, '=') || none_token(v);
    case R_MAXRSS: {
        size_t n = strlen(v);
        if (!n)
            return 1;
        for (size_t i = 0; i + 1 < n; i++)
            if (!isdigit((unsigned char)v[i]) && v[i] != '.')
                return 0;
        return 1;
    }
    case R_PRIORITY: {
        char *end;
        if (!*v)
            return 1;
        (void)strtod(v, &end);
        return *end == '\0';
    }
    default: return 1;
    }
}

/* ----------------------------------------------- well-known field lists */

struct layout {
    char sep;            /* ' ' for blank-separated only, 0 for any */
    const char *fields;  /* header names separated by single spaces */
};

/* squeue: the default format, exa's own, and formats of common tools. */
static const struct layout squeue_layouts[] = {
    { 0, "JOBID STATE TIME TIME_LIMIT TIME_LEFT START_TIME END_TIME "
         "SUBMIT_TIME NODES CPUS PARTITION ACCOUNT USER NAME REASON NODELIST "
         "TRES_PER_NODE" }, /* SLURM_SQUEUE_FORMAT with --noheader */
    { 0, "JOBID PARTITION NAME USER STATE TIME TIME_LIMIT NODES "
         "NODELIST(REASON) TRES_PER_NODE" },
    { ' ', "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)" },
    { 0, "JOBID ACCOUNT USER PARTITION STATE NODES CPUS TRES_ALLOC" },
    { 0, "JOBID STATE TIME TIME_LIMIT NODELIST(REASON)" },
    { 0, "JOBID STATE REASON PRIORITY NODELIST(REASON)" },
    { 0, "JOBID STATE REASON PRIORITY" },
    { 0, "JOBID STATE REASON NODELIST(REASON)" },
    { 0, "JOBID NAME USER STATE NODES" },
    { 0, "JOBID STATE NAME" },
    { 0, "CLUSTER JOBID STATE NAME" },
    { 0, "STATE START_TIME END_TIME" },
    { 0, "PARTITION STATE CPUS REASON USER" },
    /* JobID|Account or UserName|State|NumNodes|NumCPUs|tres-alloc: the
     * second column is left unnamed, it is one or the other */
    { 0, "JOBID - STATE NODES CPUS TRES_ALLOC" },
    { 0, "JOBID STATE" },
    { 0, "STATE" },
    { 0, "JOBID" },
    { 0, "PARTITION" },
    { 0, NULL },
};

/* sacct: exa's own field lists, then lists used by common tools. */
static const struct layout sacct_layouts[] = {
    { 0, "JOBID JOBIDRAW STATE EXITCODE START END SUBMIT ELAPSEDRAW "
         "ALLOCTRES NODELIST PARTITION ACCOUNT USER JOBNAME NCPUS "
         "TIMELIMITRAW" }, /* SLURM_SACCT_FIELDS with --noheader */
    { 0, "JOBID STATE EXITCODE START END ALLOCTRES ELAPSEDRAW" },
    { 0, "JOBID STATE EXITCODE START END ALLOCTRES ELAPSEDRAW TIMELIMIT" },
    { 0, "JOBID STATE EXITCODE START END ALLOCTRES ELAPSEDRAW NODELIST" },
    { 0, "JOBID STATE EXITCODE ALLOCTRES CLUSTER" },
    { 0, "JOBID JOBNAME STATE EXITCODE ELAPSEDRAW ALLOCTRES" },
    { 0, "JOBID STATE EXITCODE DERIVEDEXITCODE" },
    { 0, "STATE EXITCODE START END" },
    { 0, "JOBID STATE EXITCODE" },
    { 0, "JOBID STATE" },
    { 0, "STATE" },
    { 0, "JOBID JOBNAME USER GROUP START END ELAPSED CPUTIMERAW PARTITION "
         "NCPUS NNODES NODELIST MAXRSS MAXVMSIZE STATE" },
    { 0, "STATE JOBID REQCPUS REQMEM REQNODES CONSTRAINTS SUBMIT ELIGIBLE "
         "START ELAPSED SUSPENDED END EXITCODE DERIVEDEXITCODE ALLOCNODES "
         "NCPUS MAXDISKREAD MAXDISKWRITE MAXPAGES MAXRSS MAXVMSIZE CPUTIME "
         "USERCPU SYSTEMCPU TOTALCPU PARTITION" },
    { 0, "STATE JOBID REQCPUS REQMEM REQNODES CONSTRAINTS SUBMIT ELIGIBLE "
         "START ELAPSED SUSPENDED END EXITCODE DERIVEDEXITCODE ALLOCNODES "
         "NCPUS MAXDISKREAD MAXDISKWRITE MAXPAGES MAXRSS MAXVMSIZE CPUTIME "
         "USERCPU SYSTEMCPU TOTALCPU" },
    { 0, "JOBID USER GROUP PARTITION START END STATE REQMEM MAXRSS NCPUS "
         "TOTALCPU NNODES WORKDIR ELAPSED EXITCODE COMMENT CLUSTER NODELIST "
         "TIMELIMIT TIMELIMITRAW JOBIDRAW JOBNAME" },
    { 0, "JOBID JOBNAME PARTITION ACCOUNT ALLOCCPUS STATE EXITCODE" },
    { 0, "JOBID JOBNAME STATE" },
    { 0, "JOBID USER ACCOUNT ALLOCCPUS ELAPSED TOTALCPU CPUTIME MAXRSS "
         "REQMEM" },
    { 0, NULL },
};

/* Set by headerless_roles: a well-known field list fitted every row. */
static _Thread_local int layout_matched;

/* Split a layout into roles (names resolved through tbl); count. */
static size_t layout_roles(const char *fields, const struct name_role *tbl,
                           enum role *roles, size_t max)
{
    size_t n = 0;
    const char *p = fields;
    while (*p && n < max) {
        const char *e = strchr(p, ' ');
        char name[64];
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l >= sizeof(name))
            l = sizeof(name) - 1;
        memcpy(name, p, l);
        name[l] = '\0';
        if (!lookup_role(tbl, name, &roles[n]))
            roles[n] = R_IGNORE;
        n++;
        p += l;
        while (*p == ' ')
            p++;
    }
    return n;
}

/* Is the last role a free-text column that may hold blanks? */
static int free_text(enum role r)
{
    return r == R_NODELIST_REASON || r == R_REASON;
}

/* Columns whose values have a checkable shape (valid_for is not "any"). */
static int role_typed(enum role r)
{
    switch (r) {
    case R_ID: case R_ID_RAW: case R_STATE: case R_STATE_COMPACT:
    case R_EXIT: case R_START: case R_END: case R_SUBMIT: case R_ELAPSED:
    case R_TIMELIMIT: case R_TIMELEFT: case R_TOTALCPU: case R_ELAPSED_RAW:
    case R_TIMELIMIT_RAW: case R_NCPUS: case R_NODES: case R_TRES_ALLOC:
    case R_MAXRSS: case R_PRIORITY:
        return 1;
    default:
        return 0;
    }
}

/*
 * Blank-separated rows lose their empty cells: "2.batch  batch    (blank
 * partition)  research  1  COMPLETED  0:0" has one token fewer than the
 * columns. Place the nt tokens on the n columns in order, leaving n - nt
 * columns empty, so that every token fits its column and as many typed
 * columns as possible get a value; among equal placements the earlier
 * columns are left empty (blank Partition/Account on step lines).
 * Fills map[column] = token index or -1. Returns 0, or -1 when no
 * placement fits (or more than 3 cells would be empty).
 */
static int align_tokens(const enum role *roles, size_t n, char **tok,
                        size_t nt, long *map)
{
    int *best;
    unsigned char *pick;
    size_t w = nt + 1;
    int rc = -1;
    if (nt > n || n - nt > 3 || n > 128)
        return -1;
    best = xcalloc((n + 1) * w, sizeof(*best));
    pick = xcalloc((n + 1) * w, 1);
    /* best[i][j]: max typed columns filled placing tok[j..] on cols[i..] */
    for (size_t i = n + 1; i-- > 0;)
        for (size_t j = nt + 1; j-- > 0;) {
            int *b = &best[i * w + j];
            if (i == n) {
                *b = j == nt ? 0 : -1000;
                continue;
            }
            {
                int skip = n - i > nt - j ? best[(i + 1) * w + j] : -1000;
                int take = -1000;
                if (j < nt && valid_for(roles[i], tok[j]) &&
                    best[(i + 1) * w + j + 1] > -1000)
                    take = best[(i + 1) * w + j + 1] + role_typed(roles[i]);
                if (skip >= take && skip > -1000) {
                    *b = skip;
                    pick[i * w + j] = 1;
                } else {
                    *b = take;
                    pick[i * w + j] = 2;
                }
            }
        }
    if (best[0] > -1000) {
        size_t j = 0;
        for (size_t i = 0; i < n; i++) {
            if (pick[i * w + j] == 2)
                map[i] = (long)j++;
            else
                map[i] = -1;
        }
        rc = 0;
    }
    free(best);
    free(pick);
    return rc;
}

/*
 * Column territories of a blank-separated fixed-width table, from its
 * full rows (exactly n tokens, up to 2000 of them). A column whose values
 * all end at one offset but start at several is right-aligned (squeue
 * %.8j, sacct's default columns) and owns the blanks to its left; one
 * whose values all start at one offset is left-aligned (-O fields) and
 * owns the blanks to its right; with no evidence (a single full row)
 * right-aligned is assumed, Slurm's default for fixed-width text.
 * ext gets 4 * n offsets: n territories [lo, hi), then the n extents
 * where values were seen. Returns 0, or -1 without a full row.
 */
static int column_extents(const struct slurm_table *t, size_t n, size_t *ext)
{
    size_t seen = 0, s0[128], e0[128];
    size_t lo[128], hi[128];
    int svar[128] = { 0 }, evar[128] = { 0 };
    if (n > 128)
        return -1;
    for (size_t r = 0; r < t->nrows && seen < 2000; r++) {
        const struct slurm_row *row = &t->rows[r];
        if (row->nf != n || !row->off || row->sliced)
            continue;
        for (size_t k = 0; k < n; k++) {
            size_t a = row->off[2 * k], b = row->off[2 * k + 1];
            if (!seen) {
                s0[k] = lo[k] = a;
                e0[k] = hi[k] = b;
                continue;
            }
            if (a != s0[k])
                svar[k] = 1;
            if (b != e0[k])
                evar[k] = 1;
            if (a < lo[k])
                lo[k] = a;
            if (b > hi[k])
                hi[k] = b;
        }
        seen++;
    }
    if (!seen)
        return -1;
    for (size_t k = 0; k < n; k++) {
        int left = !svar[k] && evar[k];
        ext[2 * n + 2 * k] = lo[k];
        ext[2 * n + 2 * k + 1] = hi[k];
        /* right-aligned (or unknown): from the previous column's end */
        ext[2 * k] = left || k == 0 ? lo[k] : hi[k - 1];
        ext[2 * k + 1] = hi[k];
        if (left && k + 1 < n)
            ext[2 * k + 1] = lo[k + 1];
    }
    return 0;
}

/*
 * Place the tokens of a blank-separated row whose token count differs
 * from the column count by where they stand: each token goes to the
 * column whose seen values it overlaps most, else whose blanks it stands
 * in (column_extents), else the nearest, columns in order; tokens landing in one column are
 * joined with a blank (a job name "x; touch"), columns that get none are
 * empty (a blank Partition on a step line). Fixed-width output puts a
 * value under its column whether it is left- or right-aligned. Returns n
 * malloc'ed cells (free with free_cells) that all fit their roles, or
 * NULL.
 */
static char **place_by_offsets(const size_t *ext, const struct slurm_row *row,
                               const enum role *roles, size_t n)
{
    struct strbuf *cell;
    char **out;
    size_t prev = 0;
    if (!ext || !row->off || !row->nf || n > 128)
        return NULL;
    cell = xcalloc(n, sizeof(*cell));
    for (size_t k = 0; k < n; k++)
        strbuf_init(&cell[k], 0);
    for (size_t j = 0; j < row->nf; j++) {
        size_t a = row->off[2 * j], b = row->off[2 * j + 1];
        size_t best = n, best_ov = 0, near = n, near_d = (size_t)-1;
        /* where values were seen first, then the blanks each column owns */
        for (int level = 1; level >= 0 && best == n; level--)
            for (size_t k = prev; k < n; k++) {
                size_t ra = ext[level * 2 * n + 2 * k];
                size_t rb = ext[level * 2 * n + 2 * k + 1];
                size_t lo = a > ra ? a : ra, hi = b < rb ? b : rb;
                size_t d = b <= ra ? ra - b : a >= rb ? a - rb : 0;
                if (hi > lo && hi - lo > best_ov) {
                    best_ov = hi - lo;
                    best = k;
                }
                if (level == 0 && d < near_d) {
                    near_d = d;
                    near = k;
                }
            }
        if (best == n)
            best = near;
        if (best == n)
            goto fail;
        if (cell[best].len)
            strbuf_addch(&cell[best], ' ');
        strbuf_addstr(&cell[best], row->f[j]);
        prev = best;
    }
    for (size_t k = 0; k < n; k++)
        if (cell[k].len && !valid_for(roles[k], cell[k].buf))
            goto fail;
    out = xcalloc(n, sizeof(*out));
    for (size_t k = 0; k < n; k++)
        out[k] = strbuf_detach(&cell[k], NULL);
    free(cell);
    return out;
fail:
    for (size_t k = 0; k < n; k++)
        strbuf_release(&cell[k]);
    free(cell);
    return NULL;
}

static void free_cells(char **c, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(c[k]);
    free(c);
}

/*
 * Shape of a cell that only a typed column prints: an ISO time, a
 * duration with a colon ("1:00", "2-00:00:00"), or a GRES/TRES request.
 * 1 = typed shape, 0 = neutral ("N/A", "None", empty), -1 = other text.
 */
static int typed_shape(const char *v)
{
    double d;
    if (none_token(v))
        return 0;
    if (is_iso(v))
        return 1;
    if (strchr(v, ':') && isdigit((unsigned char)v[0]) &&
        slurm_duration_parse(v, &d) == 1)
        return 1;
    if (!strncmp(v, "gres/", 5) || !strncmp(v, "gres:", 5) ||
        !strncmp(v, "cpu=", 4) || !strncmp(v, "billing=", 8))
        return 1;
    return -1;
}

/* Free-text roles that a well-known layout may put on any value. */
static int free_role(enum role r)
{
    switch (r) {
    case R_REASON: case R_NODELIST_REASON: case R_NODELIST:
    case R_PARTITION: case R_USER: case R_ACCOUNT: case R_NAME:
        return 1;
    default:
        return 0;
    }
}

/*
 * A layout whose free-text column holds, on every full row, a time, a
 * duration or a GRES request (and nothing else but "N/A"-like blanks)
 * has put a typed column under a text role ("123 RUNNING 1:00" read as
 * JOBID STATE NAME): it is not the layout the output was printed with.
 */
static int layout_plausible(const struct slurm_table *t, const enum role *roles,
                            size_t n, size_t check)
{
    for (size_t k = 0; k < n; k++) {
        int typed = 0, other = 0;
        if (!free_role(roles[k]))
            continue;
        for (size_t r = 0; r < check; r++) {
            const struct slurm_row *row = &t->rows[r];
            int sh;
            /* a longer row may be a free-text tail joined into the last
             * column: the columns before it still stand where they are */
            if (row->nf < n || (row->nf > n && k == n - 1))
                continue;
            sh = typed_shape(row->f[k]);
            if (sh > 0)
                typed++;
            else if (sh < 0)
                other++;
        }
        if (typed && !other)
            return 0;
    }
    return 1;
}

/*
 * Column shape over the full rows of a headerless table: 'i' (ISO times
 * and blanks), 'd' (durations with a colon and blanks such as
 * UNLIMITED/N/A), 'f' (durations of which some have a fractional part:
 * sacct prints CPU times as MM:SS.mmm, never an elapsed time), or 0.
 */
static char column_shape(const struct slurm_table *t, size_t k, size_t n)
{
    int iso = 0, dur = 0, frac = 0, other = 0;
    size_t check = t->nrows < 200 ? t->nrows : 200;
    for (size_t r = 0; r < check; r++) {
        const struct slurm_row *row = &t->rows[r];
        const char *v;
        double d;
        if (row->nf != n)
            continue;
        v = row->f[k];
        if (is_iso(v))
            iso++;
        else if (strchr(v, ':') && isdigit((unsigned char)v[0]) &&
                 slurm_duration_parse(v, &d) == 1) {
            dur++;
            if (strchr(v, '.'))
                frac++;
        } else if (!(none_token(v) || slurm_duration_parse(v, &d) == 0))
            other++;
    }
    if (other)
        return 0;
    if (iso && !dur)
        return 'i';
    if (dur && !iso)
        return frac ? 'f' : 'd';
    return 0;
}

/*
 * Choose roles for a headerless table: the first well-known field list
 * whose every typed column validates on every row (up to 200 rows), else
 * roles guessed from the values. Returns the number of roles.
 */
static size_t headerless_roles(const struct slurm_table *t,
                               const struct layout *layouts,
                               const struct name_role *tbl, enum role *roles,
                               size_t max, int *merge_tail)
{
    size_t check = t->nrows < 200 ? t->nrows : 200;
    *merge_tail = 0;
    layout_matched = 0;
    if (!t->nrows)
        return 0;
    for (int pass = 0; pass < 2; pass++)
    for (size_t li = 0; layouts[li].fields; li++) {
        size_t n, bad = 0;
        int ok = 1, tail, full = 0;
        size_t ext[512];
        int have_ext;
        if (layouts[li].sep && layouts[li].sep != t->sep)
            continue;
        n = layout_roles(layouts[li].fields, tbl, roles, max);
        tail = t->sep == ' ' && free_text(roles[n - 1]);
        have_ext = t->sep == ' ' && n <= 128 && column_extents(t, n, ext) == 0;
        for (size_t r = 0; r < check && ok; r++) {
            const struct slurm_row *row = &t->rows[r];
            int row_ok = 1;
            if (pass == 1 && row->nf != n && t->sep == ' ') {
                long map[128];
                char **c = place_by_offsets(have_ext ? ext : NULL, row,
                                            roles, n);
                if (c)
                    free_cells(c, n);
                else if (row->nf > n ||
                         align_tokens(roles, n, row->f, row->nf, map) < 0)
                    row_ok = 0;
            } else if (row->nf != n && !(tail && row->nf > n)) {
                row_ok = 0;
            } else {
                full = 1;
                for (size_t k = 0; k < n && row_ok; k++) {
                    if (k == n - 1 && tail && row->nf > n)
                        continue;
                    if (!valid_for(roles[k], row->f[k]))
                        row_ok = 0;
                }
            }
            /* a stray row (a job name with a blank) must not sink a
             * layout every other row fits; it is reported, not guessed */
            if (!row_ok && (pass == 0 || ++bad * 10 > check))
                ok = 0;
        }
        if (ok && full && !layout_plausible(t, roles, n, check))
            ok = 0;
        if (ok && full) {
            *merge_tail = tail;
            layout_matched = 1;
            return n;
        }
    }
    /* guess from the values: id and state from the first row, times and
     * durations from the shape of each column over every full row */
    {
        const struct slurm_row *row = &t->rows[0];
        size_t n = row->nf < max ? row->nf : max;
        int have_id = 0, have_state = 0, have_exit = 0, nts = 0, nd = 0;
        int is_squeue = tbl == squeue_names;
        size_t ts[4];
        static const enum role squeue_durs[] = { R_ELAPSED, R_TIMELIMIT,
                                                 R_TIMELEFT };
        for (size_t k = 0; k < n; k++) {
            const char *v = row->f[k];
            char shape = column_shape(t, k, row->nf);
            roles[k] = R_IGNORE;
            if (!have_id && is_job_id(v)) {
                roles[k] = R_ID;
                have_id = 1;
            } else if (!have_state &&
                       strcmp(slurm_job_state_normalize(v, NULL),
                              "UNKNOWN") && strlen(v) > 2) {
                roles[k] = R_STATE;
                have_state = 1;
            } else if (!have_state && is_squeue && compact_state(v)) {
                roles[k] = R_STATE_COMPACT;
                have_state = 1;
            } else if (!is_squeue && !have_exit && strchr(v, ':') &&
                       valid_for(R_EXIT, v) && *v) {
                roles[k] = R_EXIT;
                have_exit = 1;
            } else if (shape == 'i' && nts < 4) {
                ts[nts++] = k;
            } else if (shape == 'f') {
                roles[k] = is_squeue ? R_IGNORE : R_TOTALCPU;
            } else if (shape == 'd') {
                if (is_squeue) {
                    if (nd < 3)
                        roles[k] = squeue_durs[nd];
                } else if (!nd) {
                    roles[k] = R_ELAPSED;
                }
                nd++;
            } else if (strstr(v, "cpu=")) {
                roles[k] = R_TRES_ALLOC;
            } else if (is_squeue && (!strncmp(v, "gres/", 5) ||
                                     !strncmp(v, "gres:", 5))) {
                roles[k] = R_TRES_PER_NODE;
            }
        }
        if (nts == 1) {
            roles[ts[0]] = R_START;
        } else if (nts == 2) {
            roles[ts[0]] = R_START;
            roles[ts[1]] = R_END;
        } else if (nts >= 3) {
            roles[ts[0]] = R_SUBMIT;
            roles[ts[nts - 2]] = R_START;
            roles[ts[nts - 1]] = R_END;
        }
        return n;
    }
}

/* ------------------------------------------------------------- records */

static char *time_value(const char *v)
{
    if (none_token(v))
        return NULL;
    if (is_int(v)) {
        time_t t = (time_t)strtoll(v, NULL, 10);
        struct tm tm;
        char buf[32];
        if (!gmtime_r(&t, &tm))
            return NULL;
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
        return xstrdup(buf);
    }
    return xstrdup(v);
}

#define MAX_ARRAY_IDS 10000

/*
 * Array task ranges "5-1024", "1,3,5-7", "1-10:2" (Slurm's --array
 * syntax, sbatch(1)): count the tasks without expanding them, then list
 * them when there are at most MAX_ARRAY_IDS (a pending array of a million
 * tasks is one squeue line; listing it would be untrusted input turned
 * into unbounded memory).
 */
static void array_ranges(const char *s, struct slurm_job *j)
{
    long long count = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *p = s;
        size_t k = 0;
        if (pass == 1) {
            if (!count || count > MAX_ARRAY_IDS)
                return;
            j->array_task_ids = xcalloc((size_t)count, sizeof(long long));
        }
        while (*p) {
            char *end;
            long long lo, hi, step = 1;
            lo = strtoll(p, &end, 10);
            if (end == p || lo < 0)
                return;
            hi = lo;
            p = end;
            if (*p == '-') {
                hi = strtoll(p + 1, &end, 10);
                if (end == p + 1 || hi < lo)
                    return;
                p = end;
                if (*p == ':') {
                    step = strtoll(p + 1, &end, 10);
                    if (end == p + 1 || step < 1)
                        return;
                    p = end;
                }
            }
            if (*p && *p != ',')
                return;
            if (pass == 0) {
                count += (hi - lo) / step + 1;
                if (count > (1LL << 40))
                    return;
            } else {
                for (long long v = lo; v <= hi; v += step)
                    j->array_task_ids[k++] = v;
            }
            if (*p == ',')
                p++;
        }
        if (pass == 0)
            j->array_task_count = count;
        else
            j->n_array_task_ids = k;
    }
}

/* Fill array / het parts from the id. */
static void id_parts(struct slurm_job *j)
{
    const char *id = j->job_id ? j->job_id : j->id;
    const char *us, *plus;
    if (!id)
        return;
    us = strchr(id, '_');
    plus = strchr(id, '+');
    if (us) {
        const char *task = us + 1;
        j->array_job_id = xstrndup(id, (size_t)(us - id));
        j->array_task = xstrdup(task);
        if (*task == '[') {
            /* "[2-4%25]" or "[5-1024]" or "[1,3,5-7]" */
            char *inner = xstrdup(task + 1), *pct, *rb;
            rb = strchr(inner, ']');
            if (rb)
                *rb = '\0';
            pct = strchr(inner, '%');
            if (pct) {
                *pct = '\0';
                j->array_max_running = strtoll(pct + 1, NULL, 10);
            }
            array_ranges(inner, j);
            free(inner);
        }
    } else if (plus && isdigit((unsigned char)plus[1])) {
        j->het_job_id = xstrndup(id, (size_t)(plus - id));
        j->het_offset = strtoll(plus + 1, NULL, 10);
    }
}

/* GPU count from a tres-per-job / tres-per-node value; 0 when none. */
static int tres_per_gpus(const char *v, long long *gpus)
{
    struct gres_info gi;
    if (none_token(v))
        return 0;
    gres_parse(v, &gi);
    if (!gi.entries)
        return 0;
    *gpus = gi.gpus;
    return 1;
}

struct row_ctx {
    int squeue;          /* apply squeue's projected-time rules */
    size_t host_budget;  /* node names left to expand in this parse */
};

/* Node names one parse may expand in all; past it, lists stay as printed. */
#define HOST_BUDGET 2000000

static void build_job(struct slurm_job *j, char **f, size_t nf,
                      const enum role *roles, size_t nroles,
                      struct row_ctx *ctx)
{
    const char *state = NULL, *state_c = NULL, *start = NULL, *end = NULL;
    const char *tres_alloc = NULL, *tres_job = NULL, *tres_node = NULL;
    const char *id = NULL, *id2 = NULL;
    long long nodes = -1;
    int have_alloc = 0;

    memset(j, 0, sizeof(*j));
    strvec_init(&j->nodelist);
    j->state = NULL; /* no state column: null, never a guess */
    for (size_t k = 0; k < nf && k < nroles; k++) {
        const char *v = f[k];
        double d;
        switch (roles[k]) {
        case R_ID:
            if (!id)
                id = v;
            else if (!id2)
                id2 = v;
            break;
        case R_ID_RAW:
            free(j->job_id_raw);
            j->job_id_raw = xstrdup(v);
            j->have |= SJ_JOB_ID_RAW;
            break;
        case R_STATE: state = v; break;
        case R_STATE_COMPACT: state_c = v; break;
        case R_EXIT: {
            const char *c = strchr(v, ':');
            if (!*v || !valid_for(R_EXIT, v))
                break;
            j->has_exit = 1;
            j->exit_code = (int)strtol(v, NULL, 10);
            if (c) {
                j->has_signal = 1;
                j->signal = (int)strtol(c + 1, NULL, 10);
            }
            break;
        }
        case R_START: start = v; break;
        case R_END: end = v; break;
        case R_SUBMIT:
            free(j->submit);
            j->submit = time_value(v);
            j->have |= SJ_SUBMIT;
            break;
        case R_ELAPSED:
            if (slurm_duration_parse(v, &d) == 1) {
                j->has_elapsed = 1;
                j->elapsed_s = d;
            }
            break;
        case R_ELAPSED_RAW:
            if (is_int(v)) {
                j->has_elapsed = 1;
                j->elapsed_s = (double)strtoll(v, NULL, 10);
            }
            break;
        case R_TRES_ALLOC: tres_alloc = v; have_alloc = 1; break;
        case R_TRES_PER_JOB: tres_job = v; break;
        case R_TRES_PER_NODE: tres_node = v; break;
        case R_NODES: if (is_int(v)) nodes = strtoll(v, NULL, 10); break;
        case R_NODELIST_REASON:
            if (*v == '(' && v[strlen(v) - 1] == ')') {
                free(j->reason);
                j->reason = xstrndup(v + 1, strlen(v) - 2);
                j->have |= SJ_REASON;
                break;
            }
            /* fall through */
        case R_NODELIST:
            j->have |= SJ_NODELIST;
            strvec_clear(&j->nodelist);
            if (!none_token(v) && strcmp(v, "None assigned")) {
                exa_error_t e = EXA_ERROR_INIT;
                size_t cap = ctx->host_budget < HOSTLIST_MAX_HOSTS
                                 ? ctx->host_budget : HOSTLIST_MAX_HOSTS;
                long n = cap ? hostlist_expand(v, &j->nodelist, cap, &e) : -1;
                if (n < 0)
                    strvec_push(&j->nodelist, v);
                else
                    ctx->host_budget -= (size_t)n;
            }
            break;
        case R_REASON:
            free(j->reason);
            j->reason = xstrdup(v);
            j->have |= SJ_REASON;
            break;
        case R_PARTITION:
            free(j->partition);
            j->partition = *v ? xstrdup(v) : NULL;
            j->have |= SJ_PARTITION;
            break;
        case R_ACCOUNT:
            free(j->account);
            j->account = *v ? xstrdup(v) : NULL;
            j->have |= SJ_ACCOUNT;
            break;
        case R_USER:
            free(j->user);
            j->user = *v ? xstrdup(v) : NULL;
            j->have |= SJ_USER;
            break;
        case R_NAME:
            free(j->name);
            j->name = *v ? xstrdup(v) : NULL;
            j->have |= SJ_NAME;
            break;
        case R_NCPUS:
            if (is_int(v)) {
                j->ncpus = strtoll(v, NULL, 10);
                j->have |= SJ_NCPUS;
            }
            break;
        case R_TIMELIMIT:
            if (!j->has_time_limit) {
                int rc = slurm_duration_parse(v, &d);
                j->have |= SJ_TIME_LIMIT;
                if (rc == 1) {
                    j->has_time_limit = 1;
                    j->time_limit_s = (long long)d;
                }
            }
            break;
        case R_TIMELIMIT_RAW:
            j->have |= SJ_TIME_LIMIT;
            if (!j->has_time_limit && is_int(v)) {
                j->has_time_limit = 1;
                j->time_limit_s = strtoll(v, NULL, 10) * 60;
            }
            break;
        case R_TIMELEFT:
            j->have |= SJ_TIME_LEFT;
            if (slurm_duration_parse(v, &d) == 1) {
                j->has_time_left = 1;
                j->time_left_s = (long long)d;
            }
            break;
        case R_TOTALCPU:
            j->have |= SJ_TOTAL_CPU;
            if (slurm_duration_parse(v, &d) == 1) {
                j->has_total_cpu = 1;
                j->total_cpu_s = d;
            }
            break;
        case R_MAXRSS:
            free(j->max_rss);
            j->max_rss = *v ? xstrdup(v) : NULL;
            j->have |= SJ_MAX_RSS;
            break;
        case R_BATCHHOST:
            free(j->batch_host);
            j->batch_host = none_token(v) ? NULL : xstrdup(v);
            j->have |= SJ_BATCH_HOST;
            break;
        case R_CLUSTER:
            free(j->cluster);
            j->cluster = xstrdup(v);
            j->have |= SJ_CLUSTER;
            break;
        default: break;
        }
    }
    /* two JOBID columns (%A and %i): the array/het form is the id */
    if (id && id2 && strcmp(id, id2)) {
        if (strpbrk(id2, "_+") && !strpbrk(id, "_+")) {
            const char *tmp = id;
            id = id2;
            id2 = tmp;
        }
        free(j->job_id_raw);
        j->job_id_raw = xstrdup(id2);
        j->have |= SJ_JOB_ID_RAW;
    }
    if (id && *id)
        j->id = xstrdup(id);
    else if (j->job_id_raw && *j->job_id_raw)
        j->id = xstrdup(j->job_id_raw); /* JobIDRaw alone names the job */
    if (state && !*state)
        state = NULL;
    if (state_c && !*state_c)
        state_c = NULL;
    if (state || state_c)
        j->state = slurm_job_state_normalize(state ? state : state_c,
                                             &j->raw_state);
    if (start && !(ctx->squeue && j->state && !strcmp(j->state, "PENDING")))
        j->start = time_value(start);
    if (end && !(ctx->squeue && !slurm_job_state_terminal(j->state)))
        j->end = time_value(end);
    if (have_alloc) {
        long long g;
        if (tres_gpus(tres_alloc, &g)) {
            j->has_gpus = 1;
            j->gpus = g;
        }
    }
    if (!j->has_gpus && tres_job) {
        long long g;
        if (tres_per_gpus(tres_job, &g)) {
            j->has_gpus = 1;
            j->gpus = g;
        }
    }
    if (!j->has_gpus && tres_node) {
        long long g;
        if (tres_per_gpus(tres_node, &g)) {
            j->has_gpus = 1;
            j->gpus = g * (nodes > 0 ? nodes : 1);
        }
    }
}

static void job_free(struct slurm_job *j)
{
    free(j->id);
    free(j->job_id);
    free(j->step);
    free(j->array_job_id);
    free(j->array_task);
    free(j->array_task_ids);
    free(j->het_job_id);
    free(j->raw_state);
    free(j->start);
    free(j->end);
    free(j->submit);
    free(j->partition);
    free(j->account);
    free(j->user);
    free(j->name);
    free(j->reason);
    free(j->batch_host);
    free(j->job_id_raw);
    free(j->max_rss);
    free(j->cluster);
    strvec_clear(&j->nodelist);
}

void slurm_jobs_free(struct slurm_jobs *jobs)
{
    for (size_t i = 0; i < jobs->njobs; i++)
        job_free(&jobs->jobs[i]);
    for (size_t i = 0; i < jobs->nsteps; i++)
        job_free(&jobs->steps[i]);
    for (size_t i = 0; i < jobs->nerrors; i++)
        free(jobs->errors[i].id);
    free(jobs->jobs);
    free(jobs->steps);
    free(jobs->errors);
    memset(jobs, 0, sizeof(*jobs));
}

static void add_error(struct slurm_jobs *jobs, long record, long expected,
                      long got, const char *id)
{
    struct slurm_rec_error *e;
    ALLOC_GROW(jobs->errors, jobs->nerrors + 1, jobs->errors_alloc);
    e = &jobs->errors[jobs->nerrors++];
    e->record = record;
    e->kind = "field_count_mismatch";
    e->expected_fields = expected;
    e->got_fields = got;
    e->id = id ? xstrdup(id) : NULL;
}

/* Shared table walk for squeue and sacct. */
static int parse_table(const char *buf, size_t len, struct slurm_jobs *jobs,
                       const struct name_role *tbl,
                       const struct layout *layouts, int is_sacct,
                       exa_error_t *err)
{
    struct slurm_table t;
    enum role roles[128];
    size_t nroles = 0;
    int merge_tail = 0;
    struct row_ctx ctx = { !is_sacct, HOST_BUDGET };
    size_t ext[512];
    int have_ext = 0;

    memset(&t, 0, sizeof(t));
    cur_names = tbl;
    if (slurm_table_split(buf, len, known_cur, &t, err) < 0)
        return -1;
    if (t.error_line && !t.nrows && !t.hdr) {
        exa_err(err, EXA_ESCHED, "%s", t.error_line);
        slurm_table_free(&t);
        return -2;
    }
    if (t.hdr) {
        nroles = t.nhdr < 128 ? t.nhdr : 128;
        for (size_t i = 0; i < nroles; i++) {
            char u[64];
            upper(t.hdr[i], u, sizeof(u));
            if (!lookup_role(tbl, u, &roles[i]))
                roles[i] = R_IGNORE;
        }
    } else {
        nroles = headerless_roles(&t, layouts, tbl, roles, 128, &merge_tail);
        if (t.sep != ' ' && t.nrows && !t.not_all_trailing &&
            !layout_matched) {
            /* every line ends with the separator: sacct -p, not -P */
            slurm_table_drop_trailing(&t);
            nroles = headerless_roles(&t, layouts, tbl, roles, 128,
                                      &merge_tail);
        }
    }
    have_ext = t.sep == ' ' && nroles && nroles <= 128 &&
               column_extents(&t, nroles, ext) == 0;
    for (size_t r = 0; r < t.nrows; r++) {
        struct slurm_row *row = &t.rows[r];
        struct slurm_job j;
        char **f = row->f;
        size_t nf = row->nf;
        char *joined = NULL;
        long id_col = -1;

        for (size_t k = 0; k < nroles; k++)
            if (roles[k] == R_ID || (id_col < 0 && roles[k] == R_ID_RAW)) {
                id_col = (long)k;
                if (roles[k] == R_ID)
                    break;
            }
        if (t.hdr && t.sep != ' ' && nf != t.nhdr) {
            add_error(jobs, (long)r + 1, (long)t.nhdr, (long)nf,
                      id_col >= 0 && (size_t)id_col < nf ? f[id_col] : NULL);
            continue;
        }
        if (!t.hdr && nf != nroles) {
            if (merge_tail && nf > nroles) {
                struct strbuf sb = STRBUF_INIT;
                for (size_t k = nroles - 1; k < nf; k++) {
                    if (sb.len)
                        strbuf_addch(&sb, ' ');
                    strbuf_addstr(&sb, f[k]);
                }
                joined = strbuf_detach(&sb, NULL);
            } else if (t.sep != ' ') {
                add_error(jobs, (long)r + 1, (long)nroles, (long)nf,
                          id_col >= 0 && (size_t)id_col < nf ? f[id_col]
                                                             : NULL);
                continue;
            }
        }
        if (t.sep == ' ' && nf != nroles && !row->sliced && nroles) {
            char **c = place_by_offsets(have_ext ? ext : NULL, row, roles,
                                        nroles);
            if (c) {
                build_job(&j, c, nroles, roles, nroles, &ctx);
                free_cells(c, nroles);
                free(joined);
                goto built;
            }
        }
        if (t.sep == ' ' && nf < nroles && !row->sliced) {
            long map[128];
            char **g;
            if (align_tokens(roles, nroles, f, nf, map) == 0) {
                g = xcalloc(nroles, sizeof(*g));
                for (size_t k = 0; k < nroles; k++)
                    g[k] = map[k] >= 0 ? f[map[k]] : (char *)"";
                build_job(&j, g, nroles, roles, nroles, &ctx);
                free(g);
                goto built;
            }
        }
        if (joined) {
            char *save = f[nroles - 1];
            f[nroles - 1] = joined;
            build_job(&j, f, nroles, roles, nroles, &ctx);
            f[nroles - 1] = save;
            free(joined);
        } else {
            build_job(&j, f, nf, roles, nroles, &ctx);
        }
built:
        if (is_sacct && j.id && strchr(j.id, '.')) {
            const char *dot = strchr(j.id, '.');
            j.job_id = xstrndup(j.id, (size_t)(dot - j.id));
            j.step = xstrdup(dot + 1);
            id_parts(&j);
            ALLOC_GROW(jobs->steps, jobs->nsteps + 1, jobs->steps_alloc);
            jobs->steps[jobs->nsteps++] = j;
        } else {
            id_parts(&j);
            ALLOC_GROW(jobs->jobs, jobs->njobs + 1, jobs->jobs_alloc);
            jobs->jobs[jobs->njobs++] = j;
        }
    }
    slurm_table_free(&t);
    return 0;
}

/* First non-blank line starts with "JobId=": scontrol show job output. */
static int looks_scontrol(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    return len - i >= 6 && !strncmp(buf + i, "JobId=", 6);
}

int squeue_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                 const char **kind, exa_error_t *err)
{
    int rc;
    *kind = "parse_error";
    if (looks_scontrol(buf, len))
        return scontrol_jobs_parse(buf, len, jobs, kind, err);
    rc = parse_table(buf, len, jobs, squeue_names, squeue_layouts, 0, err);
    if (rc == -2)
        *kind = "slurm_error";
    return rc < 0 ? -1 : 0;
}

int sacct_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                const char **kind, exa_error_t *err)
{
    int rc;
    *kind = "parse_error";
    rc = parse_table(buf, len, jobs, sacct_names, sacct_layouts, 1, err);
    if (rc == -2)
        *kind = "slurm_error";
    return rc < 0 ? -1 : 0;
}

/* ---------------------------------------------------------- scontrol */

static const struct name_role scontrol_names[] = {
    { "JOBSTATE", R_STATE },    { "EXITCODE", R_EXIT },
    { "STARTTIME", R_START },   { "ENDTIME", R_END },
    { "SUBMITTIME", R_SUBMIT }, { "RUNTIME", R_ELAPSED },
    { "TIMELIMIT", R_TIMELIMIT }, { "TRES", R_TRES_ALLOC },
    { "NODELIST", R_NODELIST }, { "REASON", R_REASON },
    { "PARTITION", R_PARTITION }, { "ACCOUNT", R_ACCOUNT },
    { "JOBNAME", R_NAME },      { "NUMCPUS", R_NCPUS },
    { "BATCHHOST", R_BATCHHOST }, { "NUMNODES", R_NODES },
    { "TRESPERJOB", R_TRES_PER_JOB }, { "TRESPERNODE", R_TRES_PER_NODE },
    { NULL, R_IGNORE },
};

/* Is s (at a blank boundary) the start of "Key="? */
static int key_start(const char *s, const char *end)
{
    const char *p = s;
    if (!isalpha((unsigned char)*p))
        return 0;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == ':' ||
                       *p == '/'))
        p++;
    return p < end && *p == '=';
}

static void scontrol_one(const char *s, size_t len, struct slurm_jobs *jobs)
{
    const char *end = s + len, *p = s;
    char *kv_k[160], *kv_v[160];
    size_t n = 0;
    char *f[160];
    enum role roles[160];
    const char *jobid = NULL, *ajid = NULL, *atid = NULL, *hjid = NULL,
               *hoff = NULL, *uid = NULL;
    struct slurm_job j;
    struct row_ctx ctx = { 1, HOSTLIST_MAX_HOSTS };
    size_t nf = 0;

    while (p < end && n < 160) {
        const char *k, *eq, *v, *q;
        while (p < end && isspace((unsigned char)*p))
            p++;
        if (p >= end)
            break;
        k = p;
        eq = memchr(p, '=', (size_t)(end - p));
        if (!eq)
            break;
        v = eq + 1;
        q = v;
        /* value runs to the next blank followed by Key= */
        for (;;) {
            while (q < end && !isspace((unsigned char)*q))
                q++;
            if (q >= end)
                break;
            {
                const char *r = q;
                while (r < end && isspace((unsigned char)*r))
                    r++;
                if (r >= end || key_start(r, end))
                    break;
                q = r;
            }
        }
        kv_k[n] = xstrndup(k, (size_t)(eq - k));
        kv_v[n] = xstrndup(v, (size_t)(q - v));
        {
            size_t l = strlen(kv_v[n]);
            while (l && isspace((unsigned char)kv_v[n][l - 1]))
                kv_v[n][--l] = '\0';
        }
        n++;
        p = q;
    }
    for (size_t i = 0; i < n; i++) {
        char u[64];
        enum role r;
        upper(kv_k[i], u, sizeof(u));
        if (!strcmp(u, "JOBID"))
            jobid = kv_v[i];
        else if (!strcmp(u, "ARRAYJOBID"))
            ajid = kv_v[i];
        else if (!strcmp(u, "ARRAYTASKID"))
            atid = kv_v[i];
        else if (!strcmp(u, "HETJOBID"))
            hjid = kv_v[i];
        else if (!strcmp(u, "HETJOBOFFSET"))
            hoff = kv_v[i];
        else if (!strcmp(u, "USERID"))
            uid = kv_v[i];
        else if (lookup_role(scontrol_names, u, &r)) {
            f[nf] = kv_v[i];
            roles[nf++] = r;
        }
    }
    if (jobid) {
        build_job(&j, f, nf, roles, nf, &ctx);
        if (ajid && atid)
            j.id = xstrfmt("%s_%s", ajid, atid);
        else if (hjid && hoff)
            j.id = xstrfmt("%s+%s", hjid, hoff);
        else
            j.id = xstrdup(jobid);
        if (uid) {
            const char *par = strchr(uid, '(');
            j.user = xstrndup(uid, par ? (size_t)(par - uid) : strlen(uid));
            j.have |= SJ_USER;
        }
        id_parts(&j);
        ALLOC_GROW(jobs->jobs, jobs->njobs + 1, jobs->jobs_alloc);
        jobs->jobs[jobs->njobs++] = j;
    }
    for (size_t i = 0; i < n; i++) {
        free(kv_k[i]);
        free(kv_v[i]);
    }
}

int scontrol_jobs_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                        const char **kind, exa_error_t *err)
{
    const char *p = buf, *end = buf + len, *rec = NULL;
    *kind = "parse_error";
    /* a record starts at a line beginning with JobId= */
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        const char *q = p;
        if (!e)
            e = end;
        while (q < e && isspace((unsigned char)*q))
            q++;
        if ((size_t)(e - q) >= 6 && !strncmp(q, "JobId=", 6)) {
            if (rec)
                scontrol_one(rec, (size_t)(p - rec), jobs);
            rec = q;
        }
        p = e + 1;
    }
    if (rec)
        scontrol_one(rec, (size_t)(end - rec), jobs);
    else if (len)
        return exa_err(err, EXA_EPARSE, "no 'JobId=' record in input");
    return 0;
}

/* -------------------------------------------------------------- JSON */

json_t *slurm_job_to_json(const struct slurm_job *j, int is_step)
{
    json_t *o = json_object();
    jx_set(o, "id", jx_str(j->id));
    jx_set(o, "state", jx_str(j->state));
    jx_set(o, "raw_state", jx_str(j->raw_state));
    jx_set(o, "exit_code", jx_int_or_null(j->has_exit, j->exit_code));
    jx_set(o, "signal", jx_int_or_null(j->has_signal, j->signal));
    jx_set(o, "start", jx_str(j->start));
    jx_set(o, "end", jx_str(j->end));
    if (j->has_elapsed && j->elapsed_s == (double)(long long)j->elapsed_s)
        jx_set(o, "elapsed_s", json_integer((long long)j->elapsed_s));
    else
        jx_set(o, "elapsed_s", j->has_elapsed ? jx_real(j->elapsed_s)
                                              : json_null());
    jx_set(o, "gpus", jx_int_or_null(j->has_gpus, j->gpus));
    if (is_step) {
        jx_set(o, "job_id", jx_str(j->job_id));
        jx_set(o, "step", jx_str(j->step));
    }
    if (j->array_job_id) {
        jx_set(o, "array_job_id", jx_str(j->array_job_id));
        jx_set(o, "array_task", jx_str(j->array_task));
        if (j->array_task_count)
            jx_set(o, "array_task_count", json_integer(j->array_task_count));
        if (j->array_task_ids) {
            json_t *a = json_array();
            for (size_t i = 0; i < j->n_array_task_ids; i++)
                json_array_append_new(a, json_integer(j->array_task_ids[i]));
            jx_set(o, "array_task_ids", a);
        }
        if (j->array_max_running)
            jx_set(o, "array_max_running",
                   json_integer(j->array_max_running));
    }
    if (j->het_job_id) {
        jx_set(o, "het_job_id", jx_str(j->het_job_id));
        jx_set(o, "het_offset", json_integer(j->het_offset));
    }
    if (j->have & SJ_PARTITION) jx_set(o, "partition", jx_str(j->partition));
    if (j->have & SJ_ACCOUNT) jx_set(o, "account", jx_str(j->account));
    if (j->have & SJ_USER) jx_set(o, "user", jx_str(j->user));
    if (j->have & SJ_NAME) jx_set(o, "name", jx_str(j->name));
    if (j->have & SJ_REASON) jx_set(o, "reason", jx_str(j->reason));
    if (j->have & SJ_NODELIST) {
        json_t *a = json_array();
        for (size_t i = 0; i < j->nodelist.nr; i++)
            json_array_append_new(a, jx_str(j->nodelist.v[i]));
        jx_set(o, "nodelist", a);
    }
    if (j->have & SJ_NCPUS) jx_set(o, "ncpus", json_integer(j->ncpus));
    if (j->have & SJ_TIME_LIMIT)
        jx_set(o, "time_limit_s",
               jx_int_or_null(j->has_time_limit, j->time_limit_s));
    if (j->have & SJ_TIME_LEFT)
        jx_set(o, "time_left_s",
               jx_int_or_null(j->has_time_left, j->time_left_s));
    if (j->have & SJ_SUBMIT) jx_set(o, "submit", jx_str(j->submit));
    if (j->have & SJ_TOTAL_CPU)
        jx_set(o, "total_cpu_s",
               j->has_total_cpu ? jx_real(j->total_cpu_s) : json_null());
    if (j->have & SJ_MAX_RSS) jx_set(o, "max_rss", jx_str(j->max_rss));
    if (j->have & SJ_BATCH_HOST)
        jx_set(o, "batch_host", jx_str(j->batch_host));
    if (j->have & SJ_JOB_ID_RAW)
        jx_set(o, "job_id_raw", jx_str(j->job_id_raw));
    if (j->have & SJ_CLUSTER) jx_set(o, "cluster", jx_str(j->cluster));
    return o;
}

json_t *slurm_jobs_to_json(const struct slurm_jobs *jobs, int with_steps)
{
    json_t *doc = json_object(), *a = json_array();
    for (size_t i = 0; i < jobs->njobs; i++)
        json_array_append_new(a, slurm_job_to_json(&jobs->jobs[i], 0));
    jx_set(doc, "jobs", a);
    if (with_steps) {
        a = json_array();
        for (size_t i = 0; i < jobs->nsteps; i++)
            json_array_append_new(a, slurm_job_to_json(&jobs->steps[i], 1));
        jx_set(doc, "steps", a);
    }
    if (jobs->nerrors) {
        a = json_array();
        for (size_t i = 0; i < jobs->nerrors; i++) {
            const struct slurm_rec_error *e = &jobs->errors[i];
            json_t *o = json_object();
            jx_set(o, "record", json_integer(e->record));
            jx_set(o, "kind", jx_str(e->kind));
            jx_set(o, "expected_fields", json_integer(e->expected_fields));
            jx_set(o, "got_fields", json_integer(e->got_fields));
            jx_set(o, "id", jx_str(e->id));
            json_array_append_new(a, o);
        }
        jx_set(doc, "errors", a);
    }
    return doc;
}

/* ------------------------------------------------------------- sbatch */

static int all_digits_n(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/*
 * Is line an id line? mode 1: "Submitted batch job N[ on cluster C]";
 * mode 2: exactly "N" or "N;C" (--parsable). Fills id/cluster.
 */
static int sbatch_id_line(const char *line, int mode, char **id,
                          char **cluster)
{
    char *t = trim_dup(line);
    const char *rest;
    int ok = 0;
    if (mode == 1 && skip_prefix(t, "Submitted batch job ", &rest)) {
        size_t n = 0;
        while (isdigit((unsigned char)rest[n]))
            n++;
        if (n && (!rest[n] || !strncmp(rest + n, " on cluster ", 12))) {
            *id = xstrndup(rest, n);
            *cluster = rest[n] ? trim_dup(rest + n + 12) : NULL;
            if (*cluster && !**cluster) {
                free(*cluster);
                *cluster = NULL;
            }
            ok = 1;
        }
    } else if (mode == 2) {
        const char *semi = strchr(t, ';');
        size_t n = semi ? (size_t)(semi - t) : strlen(t);
        if (all_digits_n(t, n) && (!semi || semi[1])) {
            *id = xstrndup(t, n);
            *cluster = semi ? xstrdup(semi + 1) : NULL;
            ok = 1;
        }
    }
    free(t);
    return ok;
}

int sbatch_parse(const char *buf, size_t len, struct sbatch_result *res,
                 exa_error_t *err)
{
    const char *p = buf, *end = buf + len;
    struct strvec lines = STRVEC_INIT;
    long id_line = -1;
    const char *msg = NULL;

    strvec_init(&res->warnings);
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        size_t l;
        int blank = 1;
        if (!e)
            e = end;
        l = (size_t)(e - p);
        if (l && p[l - 1] == '\r')
            l--;
        for (size_t i = 0; i < l; i++)
            if (!isspace((unsigned char)p[i]))
                blank = 0;
        if (!blank) {
            char *line = xstrndup(p, l);
            strvec_push(&lines, line);
            free(line);
        }
        p = e + 1;
    }
    /* the sentence wins; else the last bare id line (--parsable) */
    for (size_t i = 0; i < lines.nr && id_line < 0; i++)
        if (sbatch_id_line(lines.v[i], 1, &res->job_id, &res->cluster))
            id_line = (long)i;
    for (size_t i = lines.nr; i-- > 0 && id_line < 0;)
        if (sbatch_id_line(lines.v[i], 2, &res->job_id, &res->cluster))
            id_line = (long)i;
    for (size_t i = 0; i < lines.nr; i++) {
        if ((long)i == id_line)
            continue;
        strvec_push(&res->warnings, lines.v[i]);
        if (!msg && strstr(lines.v[i], "error:"))
            msg = lines.v[i];
    }
    if (id_line < 0) {
        if (!msg)
            msg = lines.nr ? lines.v[0] : "sbatch printed no job id";
        while (*msg == ' ')
            msg++;
        exa_err(err, EXA_ESCHED, "%s", msg);
        strvec_clear(&lines);
        return -1;
    }
    strvec_clear(&lines);
    return 0;
}

void sbatch_result_free(struct sbatch_result *res)
{
    free(res->job_id);
    free(res->cluster);
    strvec_clear(&res->warnings);
    memset(res, 0, sizeof(*res));
}

json_t *sbatch_result_to_json(const struct sbatch_result *res)
{
    json_t *o = json_object(), *a = json_array();
    jx_set(o, "job_id", jx_str(res->job_id));
    jx_set(o, "cluster", jx_str(res->cluster));
    for (size_t i = 0; i < res->warnings.nr; i++)
        json_array_append_new(a, jx_str(res->warnings.v[i]));
    jx_set(o, "warnings", a);
    return o;
}
