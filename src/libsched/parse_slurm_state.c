/*
 * parse_slurm_state.c - the Slurm job state table: long and compact state
 * names normalized to exa's eight states (doc/formats.md "Job
 * states"), and the state-shape tests the table parsers use to recognize a
 * state column without a header. One table serves squeue, sacct, scontrol
 * and sched.c, so a state is never normalized two ways.
 */
#include "libsched/parse_slurm.h"

#include <ctype.h>
#include <string.h>

#include "libsched/parse_slurm_int.h"
#include "libutil/xalloc.h"

static const struct {
    const char *lng, *cmp, *norm;
} job_states[] = {
    {"PENDING", "PD", "PENDING"},       {"REQUEUED", "RQ", "PENDING"},
    {"REQUEUE_HOLD", "RH", "PENDING"},  {"REQUEUE_FED", "RF", "PENDING"},
    {"RESV_DEL_HOLD", "RD", "PENDING"}, {"SPECIAL_EXIT", "SE", "PENDING"},
    {"CONFIGURING", "CF", "PENDING"},   {"RUNNING", "R", "RUNNING"},
    {"COMPLETING", "CG", "RUNNING"},    {"STAGE_OUT", "SO", "RUNNING"},
    {"SIGNALING", "SI", "RUNNING"},     {"RESIZING", "RS", "RUNNING"},
    {"SUSPENDED", "S", "SUSPENDED"},    {"STOPPED", "ST", "SUSPENDED"},
    {"COMPLETED", "CD", "COMPLETED"},   {"FAILED", "F", "FAILED"},
    {"OUT_OF_MEMORY", "OOM", "FAILED"}, {"NODE_FAIL", "NF", "FAILED"},
    {"BOOT_FAIL", "BF", "FAILED"},      {"PREEMPTED", "PR", "FAILED"},
    {"CANCELLED", "CA", "CANCELLED"},   {"REVOKED", "RV", "CANCELLED"},
    {"TIMEOUT", "TO", "TIMEOUT"},       {"DEADLINE", "DL", "TIMEOUT"},
};
#define NSTATES (sizeof(job_states) / sizeof(job_states[0]))

/* Is v exactly a compact job state code ("R", "PD", "CG", "OOM")? */
int slurm_compact_state(const char *v)
{
    for (size_t i = 0; i < NSTATES; i++)
        if (!strcmp(v, job_states[i].cmp))
            return 1;
    return 0;
}

const char *slurm_trim_span(const char *s, size_t *n)
{
    size_t l;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    l = strlen(s);
    while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r' ||
                 s[l - 1] == '\n'))
        l--;
    *n = l;
    return s;
}

char *slurm_trim_dup(const char *s)
{
    size_t n;
    s = slurm_trim_span(s, &n);
    return xstrndup(s, n);
}

const char *slurm_job_state_normalize(const char *token, char **raw)
{
    char w[64];
    size_t n = 0;
    const char *s, *match = NULL;
    int nmatch = 0;

    if (raw)
        *raw = token ? slurm_trim_dup(token) : NULL;
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
    /* first bytes compared inline: a strcmp per table entry was most of
     * a large sacct's state parsing */
    for (size_t i = 0; i < NSTATES; i++)
        if ((w[0] == job_states[i].lng[0] && !strcmp(w, job_states[i].lng)) ||
            (w[0] == job_states[i].cmp[0] && !strcmp(w, job_states[i].cmp)))
            return job_states[i].norm;
    if (n < 4)
        return "UNKNOWN";
    for (size_t i = 0; i < NSTATES; i++)
        if (w[0] == job_states[i].lng[0] && !strncmp(job_states[i].lng, w, n)) {
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
int slurm_state_shaped(const char *v)
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
