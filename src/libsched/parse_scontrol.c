/*
 * parse_scontrol.c - `scontrol show job` output, one "Key=Value ..." line
 * per job (-o) or several lines per job. A value runs to the next blank
 * that is followed by "Key=", so job names and reasons may hold blanks.
 * Keys map to the same roles as squeue's columns and go through the shared
 * record builder (parse_slurm.c); ids come from ArrayJobId/ArrayTaskId or
 * HetJobId/HetJobOffset when present. Source: scontrol(1) show job.
 */
#include "libsched/parse_slurm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libsched/parse_slurm_int.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static const struct slurm_name_role scontrol_names[] = {
    {"JOBSTATE", R_STATE},
    {"EXITCODE", R_EXIT},
    {"STARTTIME", R_START},
    {"ENDTIME", R_END},
    {"SUBMITTIME", R_SUBMIT},
    {"RUNTIME", R_ELAPSED},
    {"TIMELIMIT", R_TIMELIMIT},
    {"TRES", R_TRES_ALLOC},
    {"NODELIST", R_NODELIST},
    {"REASON", R_REASON},
    {"PARTITION", R_PARTITION},
    {"ACCOUNT", R_ACCOUNT},
    {"JOBNAME", R_NAME},
    {"NUMCPUS", R_NCPUS},
    {"BATCHHOST", R_BATCHHOST},
    {"NUMNODES", R_NODES},
    {"TRESPERJOB", R_TRES_PER_JOB},
    {"TRESPERNODE", R_TRES_PER_NODE},
    {"STDOUT", R_STDOUT},
    {NULL, R_IGNORE},
};

/* Is s (at a blank boundary) the start of "Key="? */
static int key_start(const char *s, const char *end)
{
    const char *p = s;
    if (!isalpha((unsigned char)*p))
        return 0;
    while (p < end &&
           (isalnum((unsigned char)*p) || *p == '_' || *p == ':' || *p == '/'))
        p++;
    return p < end && *p == '=';
}

static void scontrol_one(const char *s, size_t len, struct slurm_jobs *jobs)
{
    const char *end = s + len, *p = s;
    /* as many keys as the record has (no fixed table: a key past it
     * would be lost, StdOut comes late in the line) */
    char **kv_k = NULL, **kv_v = NULL, **f = NULL;
    enum slurm_role *roles = NULL;
    size_t kv_alloc = 0;
    size_t n = 0;
    const char *jobid = NULL, *ajid = NULL, *atid = NULL, *hjid = NULL,
               *hoff = NULL, *uid = NULL;
    struct slurm_job j;
    /* the cells are this function's: copied (cells_kept 0) */
    struct slurm_row_ctx ctx = {
        1, HOSTLIST_MAX_HOSTS, 0, NULL, NULL, &jobs->strings, 0, NULL, NULL, 0};
    size_t nf = 0;

    while (p < end) {
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
        if (n == kv_alloc) {
            kv_alloc = kv_alloc ? 2 * kv_alloc : 64;
            kv_k = xrealloc(kv_k, kv_alloc * sizeof(*kv_k));
            kv_v = xrealloc(kv_v, kv_alloc * sizeof(*kv_v));
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
    f = xcalloc(n ? n : 1, sizeof(*f));
    roles = xcalloc(n ? n : 1, sizeof(*roles));
    for (size_t i = 0; i < n; i++) {
        char u[64];
        enum slurm_role r;
        slurm_upper(kv_k[i], u, sizeof(u));
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
        else if (slurm_lookup_role(scontrol_names, u, &r)) {
            f[nf] = kv_v[i];
            roles[nf++] = r;
        }
    }
    if (jobid) {
        char *id;
        slurm_build_job(&j, f, nf, roles, nf, &ctx);
        if (ajid && atid)
            id = xstrfmt("%s_%s", ajid, atid);
        else if (hjid && hoff)
            id = xstrfmt("%s+%s", hjid, hoff);
        else
            id = xstrdup(jobid);
        j.id = arena_strdup(&jobs->strings, id);
        free(id);
        if (uid) {
            const char *par = strchr(uid, '(');
            j.user = arena_strndup(&jobs->strings, uid,
                                   par ? (size_t)(par - uid) : strlen(uid));
            j.have |= SJ_USER;
        }
        slurm_id_parts(&j, &jobs->strings);
        ALLOC_GROW(jobs->jobs, jobs->njobs + 1, jobs->jobs_alloc);
        jobs->jobs[jobs->njobs++] = j;
    }
    for (size_t i = 0; i < n; i++) {
        free(kv_k[i]);
        free(kv_v[i]);
    }
    free(kv_k);
    free(kv_v);
    free(f);
    free(roles);
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
