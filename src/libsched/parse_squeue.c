/*
 * parse_squeue.c - squeue output: squeue's column names and the field
 * lists of well-known headerless formats, handed to the shared table walk
 * (parse_slurm_table.c). `scontrol show job` text, which some tools feed
 * where squeue output is expected, goes to parse_scontrol.c instead.
 * Source: squeue(1) -o/-O field names.
 */
#include "libsched/parse_slurm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_slurm_int.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

const struct slurm_name_role slurm_squeue_names[] = {
    {"JOBID", R_ID},
    /* no squeue header: the name of SLURM_SQUEUE_FORMAT's closing %i in
     * its headerless layout below */
    {"JOBID_END", R_ID_END},
    {"STATE", R_STATE},
    {"ST", R_STATE_COMPACT},
    {"START_TIME", R_START},
    {"END_TIME", R_END},
    {"SUBMIT_TIME", R_SUBMIT},
    {"TIME", R_ELAPSED},
    {"TIME_LIMIT", R_TIMELIMIT},
    {"TIME_LEFT", R_TIMELEFT},
    {"TRES_ALLOC", R_TRES_ALLOC},
    {"TRES_PER_JOB", R_TRES_PER_JOB},
    {"TRES_PER_NODE", R_TRES_PER_NODE},
    {"NODES", R_NODES},
    {"NODELIST", R_NODELIST},
    {"NODELIST(REASON)", R_NODELIST_REASON},
    {"REASON", R_REASON},
    {"PARTITION", R_PARTITION},
    {"ACCOUNT", R_ACCOUNT},
    {"USER", R_USER},
    {"NAME", R_NAME},
    {"CPUS", R_NCPUS},
    {"EXEC_HOST", R_BATCHHOST},
    {"BATCHHOST", R_BATCHHOST},
    {"CLUSTER", R_CLUSTER},
    {"PRIORITY", R_PRIORITY},
    {"ARRAY_JOB_ID", R_IGNORE},
    {"ARRAY_TASK_ID", R_IGNORE},
    {"MIN_CPUS", R_IGNORE},
    {"MIN_TMP_DISK", R_IGNORE},
    {"DEPENDENCY", R_IGNORE},
    {"FEATURES", R_IGNORE},
    {"GROUP", R_IGNORE},
    {"OVER_SUBSCRIBE", R_IGNORE},
    {"SOCKETS_PER_NODE", R_IGNORE},
    {"CORES_PER_SOCKET", R_IGNORE},
    {"THREADS_PER_CORE", R_IGNORE},
    {"COMMENT", R_IGNORE},
    {"MIN_MEMORY", R_IGNORE},
    {"REQ_NODES", R_IGNORE},
    {"COMMAND", R_IGNORE},
    {"CONTIGUOUS", R_IGNORE},
    {"QOS", R_IGNORE},
    {"UID", R_IGNORE},
    {"RESERVATION", R_IGNORE},
    {"WCKEY", R_IGNORE},
    {"LICENSES", R_IGNORE},
    {"EXC_NODES", R_IGNORE},
    {"CORE_SPEC", R_IGNORE},
    {"NICE", R_IGNORE},
    {"SCHEDNODES", R_IGNORE},
    {"S:C:T", R_IGNORE},
    {"WORK_DIR", R_IGNORE},
    {"CPUS_PER_TASK", R_IGNORE},
    {"TRES_PER_TASK", R_IGNORE},
    {"TRES_PER_SOCKET", R_IGNORE},
    {"JOBID_RAW", R_ID_RAW},
    {"USERNAME", R_USER},
    {"ACCRUE_TIME", R_IGNORE},
    {"ELIGIBLE_TIME", R_IGNORE},
    {"PENDING_TIME", R_IGNORE},
    {"NUM_TASKS", R_IGNORE},
    {"GRES", R_TRES_PER_NODE},
    {"HET_JOB_ID", R_IGNORE},
    {"HET_JOB_OFFSET", R_IGNORE},
    {"HET_JOB_ID_SET", R_IGNORE},
    {"EXIT_CODE", R_IGNORE},
    {"LAST_SCHED_EVAL", R_IGNORE},
    {"STEPID", R_ID},
    {"MCS_LABEL", R_IGNORE},
    {"PREEMPT_TIME", R_IGNORE},
    {"SUSPEND_TIME", R_IGNORE},
    {"DEADLINE", R_IGNORE},
    {"STDOUT", R_IGNORE},
    {"STDERR", R_IGNORE},
    {"TRES_PER_SOCKET", R_IGNORE},
    {"MIN_MEMORY_PER_CPU", R_IGNORE},
    {NULL, R_IGNORE},
};

/* squeue: the default format, exa's own, and formats of common tools. */
static const struct slurm_layout squeue_layouts[] = {
    {0, "JOBID STATE TIME TIME_LIMIT TIME_LEFT START_TIME END_TIME "
        "SUBMIT_TIME NODES CPUS PARTITION ACCOUNT USER NAME REASON NODELIST "
        "TRES_PER_NODE JOBID_END"}, /* SLURM_SQUEUE_FORMAT with --noheader */
    {0, "JOBID STATE TIME TIME_LIMIT TIME_LEFT START_TIME END_TIME "
        "SUBMIT_TIME NODES CPUS PARTITION ACCOUNT USER NAME REASON NODELIST "
        "TRES_PER_NODE"}, /* the same before session 14 (no closing id) */
    {0, "JOBID PARTITION NAME USER STATE TIME TIME_LIMIT NODES "
        "NODELIST(REASON) TRES_PER_NODE"},
    {' ', "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)"},
    {0, "JOBID ACCOUNT USER PARTITION STATE NODES CPUS TRES_ALLOC"},
    {0, "JOBID STATE TIME TIME_LIMIT NODELIST(REASON)"},
    {0, "JOBID STATE REASON PRIORITY NODELIST(REASON)"},
    {0, "JOBID STATE REASON PRIORITY"},
    {0, "JOBID STATE REASON NODELIST(REASON)"},
    {0, "JOBID NAME USER STATE NODES"},
    {0, "JOBID STATE NAME"},
    {0, "CLUSTER JOBID STATE NAME"},
    {0, "STATE START_TIME END_TIME"},
    {0, "PARTITION STATE CPUS REASON USER"},
    /* JobID|Account or UserName|State|NumNodes|NumCPUs|tres-alloc: the
     * second column is left unnamed, it is one or the other */
    {0, "JOBID - STATE NODES CPUS TRES_ALLOC"},
    {0, "JOBID STATE"},
    {0, "STATE"},
    {0, "JOBID"},
    {0, "PARTITION"},
    {0, NULL},
};

/* First non-blank line starts with "JobId=": scontrol show job output. */
static int looks_scontrol(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    return len - i >= 6 && !strncmp(buf + i, "JobId=", 6);
}

int squeue_parse_table(const struct slurm_text *in, const struct cmd_spec *spec,
                       struct slurm_jobs *jobs, size_t host_budget,
                       struct slurm_parse_info *info, exa_error_t *err)
{
    return slurm_parse_table_ex(in, jobs, slurm_squeue_names, squeue_layouts, 0,
                                spec, host_budget, info, err);
}

/* SLURM_SQUEUE_FORMAT as exa runs it, without its header */
static const struct slurm_layout squeue_own_layout[] = {
    {SLURM_LAYOUT_OWN,
     "JOBID STATE TIME TIME_LIMIT TIME_LEFT START_TIME END_TIME SUBMIT_TIME "
     "NODES CPUS PARTITION ACCOUNT USER NAME REASON NODELIST TRES_PER_NODE "
     "JOBID_END"},
    {0, NULL},
};

/* buf read with the fixed columns of layout (a SLURM_LAYOUT_OWN one). */
static int parse_fixed(const char *buf, size_t len,
                       const struct slurm_layout *layout,
                       struct slurm_jobs *jobs, const char **kind,
                       exa_error_t *err)
{
    struct slurm_text in = {NULL, 0, buf, len, 0};
    int rc;
    *kind = "parse_error";
    rc = slurm_parse_table_ex(&in, jobs, slurm_squeue_names, layout, 0, NULL,
                              SLURM_HOST_BUDGET, NULL, err);
    if (rc == -2)
        *kind = "slurm_error";
    return rc < 0 ? -1 : 0;
}

int squeue_parse_own(const char *buf, size_t len, struct slurm_jobs *jobs,
                     const char **kind, exa_error_t *err)
{
    return parse_fixed(buf, len, squeue_own_layout, jobs, kind, err);
}

static const struct slurm_layout squeue_safe_layout[] = {
    {SLURM_LAYOUT_OWN, "JOBID STATE PARTITION USER REASON NODELIST JOBID_END"},
    {0, NULL},
};

int squeue_parse_safe(const char *buf, size_t len, struct slurm_jobs *jobs,
                      const char **kind, exa_error_t *err)
{
    return parse_fixed(buf, len, squeue_safe_layout, jobs, kind, err);
}

static int cmp_name_by_id(const void *a, const void *b, void *arg)
{
    const struct squeue_name *v = arg;
    return strcmp(v[*(const size_t *)a].id, v[*(const size_t *)b].id);
}

void squeue_names_parse(const char *buf, size_t len, struct squeue_name **out,
                        size_t *n, size_t *refused)
{
    const char *p = buf, *end = buf + len;
    struct squeue_name *v = NULL;
    size_t nv = 0, alloc = 0, k = 0, *pos;
    unsigned char *twice;
    *out = NULL;
    *n = 0;
    *refused = 0;
    while (p < end) {
        const char *rs = memchr(p, 0x1e, (size_t)(end - p));
        const char *e, *a, *b;
        if (!rs)
            break; /* text before the first record: none is printed */
        p = rs + 1;
        e = memchr(p, 0x1e, (size_t)(end - p));
        e = e ? e : end;
        while (e > p && (e[-1] == '\n' || e[-1] == '\r'))
            e--;
        a = memchr(p, 0x1f, (size_t)(e - p));
        b = a ? memrchr(a + 1, 0x1f, (size_t)(e - a - 1)) : NULL;
        if (!a || !b || a == p || (size_t)(a - p) != (size_t)(e - b - 1) ||
            memcmp(p, b + 1, (size_t)(a - p)) ||
            memchr(p, 0, (size_t)(a - p)) ||
            memchr(a + 1, 0, (size_t)(b - a - 1))) {
            ++*refused; /* two ids that differ, or no id, or a NUL */
        } else {
            ALLOC_GROW(v, nv + 1, alloc);
            v[nv].id = xstrndup(p, (size_t)(a - p));
            v[nv].name = xstrndup(a + 1, (size_t)(b - a - 1));
            nv++;
        }
        p = e;
    }
    if (!nv)
        return;
    /* an id on two well-formed records: one was made up */
    pos = xcalloc(nv, sizeof(*pos));
    twice = xcalloc(nv, 1);
    for (size_t i = 0; i < nv; i++)
        pos[i] = i;
    qsort_r(pos, nv, sizeof(*pos), cmp_name_by_id, v);
    for (size_t i = 1; i < nv; i++)
        if (!strcmp(v[pos[i]].id, v[pos[i - 1]].id))
            twice[pos[i]] = twice[pos[i - 1]] = 1;
    for (size_t i = 0; i < nv; i++) {
        if (twice[i]) {
            free(v[i].id);
            free(v[i].name);
            ++*refused;
            continue;
        }
        v[k++] = v[i];
    }
    free(pos);
    free(twice);
    if (!k) {
        free(v);
        return;
    }
    *out = v;
    *n = k;
}

void squeue_names_free(struct squeue_name *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].id);
        free(v[i].name);
    }
    free(v);
}

int squeue_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                 const char **kind, exa_error_t *err)
{
    return squeue_parse_cmd(buf, len, NULL, jobs, kind, err);
}

int squeue_parse_cmd(const char *buf, size_t len, const struct cmd_spec *spec,
                     struct slurm_jobs *jobs, const char **kind,
                     exa_error_t *err)
{
    struct slurm_text in = {NULL, 0, buf, len, 0};
    int rc;
    *kind = "parse_error";
    if (looks_scontrol(buf, len))
        return scontrol_jobs_parse(buf, len, jobs, kind, err);
    if (spec && spec->tool != CMD_TOOL_SQUEUE)
        spec = NULL;
    rc = squeue_parse_table(&in, spec, jobs, SLURM_HOST_BUDGET, NULL, err);
    if (rc == -2)
        *kind = "slurm_error";
    return rc < 0 ? -1 : 0;
}
