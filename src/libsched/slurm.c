/*
 * slurm.c - the Slurm adapter: sbatch, batched squeue + sacct, scancel.
 *
 * Status is one query per poll for every tracked id, not one per job
 * (shared/REFERENCE.md §6 item 28): `squeue -h -j ID1,ID2,...` with a
 * format whose fields are separated by 0x1F (the ASCII unit separator, a
 * byte no job name or reason can contain), then, for the ids that left the
 * queue or ended, one `sacct -X -P -n --delimiter=0x1F -S SINCE -j ...`
 * (-X: the allocation line, not the steps; -S explicit because sacct's
 * default window depends on the options, sacct(1)). Ids are chunked so a
 * command line stays far below ARG_MAX and ssh's limits. A site without
 * accounting falls back to one `scontrol show job -o` (every job the
 * controller still remembers). An id nobody knows stays UNKNOWN; the batch
 * never fails for it.
 *
 * Submit names the job after its run id and, when the reply is lost
 * (transport error after sbatch may have run), looks the name up with
 * `squeue --name` and `sacct --name` before trying again, so a dropped
 * connection never makes a second job (§6 item 26).
 *
 * The formats parsed here are the ones this file asks for, so the small
 * splitters below are all it needs; the general-purpose parsers for
 * arbitrary user formats live in parse_squeue.c and parse_sacct.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libsched/parse_slurm.h"
#include "libsched/runscript.h"
#include "libsched/sched.h"
#include "libsched/sched_lines.h"
#include "libutil/xalloc.h"

#define US "\x1f"

/* One row the scheduler printed, before it is matched to a tracked id. */
struct row {
    char *fields[10];
    size_t nf;
};

/* Split line (modified in place) on 0x1F. */
static size_t split_us(char *line, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line;

    while (n < max) {
        char *sep = strchr(p, 0x1f);
        fields[n++] = p;
        if (!sep)
            break;
        *sep = '\0';
        p = sep + 1;
    }
    return n;
}

static int is_null_time(const char *s)
{
    return !*s || !strcmp(s, "N/A") || !strcmp(s, "Unknown") ||
           !strcmp(s, "None") || !strcmp(s, "(null)");
}

static void copy_time(char *dst, size_t n, const char *s)
{
    if (is_null_time(s))
        dst[0] = '\0';
    else
        xsnprintf(dst, n, "%.*s", (int)(n - 1), s);
}

/* "N:S" or "N" -> exit, signal. */
static void parse_exit(const char *s, int *exit_code, int *sig)
{
    char *end;
    long e = strtol(s, &end, 10);

    if (end == s)
        return;
    *exit_code = (int)e;
    if (*end == ':') {
        const char *p = end + 1;
        long g = strtol(p, &end, 10);
        if (end != p)
            *sig = (int)g;
    } else {
        *sig = -1;
    }
}

/* TRES "cpu=1,mem=500M,node=1,gres/gpu=2" -> gpus, cpus, nodes. */
static void parse_tres(const char *s, int *gpus, int *cpus, int *nodes)
{
    long untyped = -1, typed = 0;
    int any_typed = 0;
    const char *p = s;

    if (!*s)
        return;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[128];
        char *eq;

        xsnprintf(item, sizeof(item), "%.*s", (int)(len < 127 ? len : 127), p);
        eq = strchr(item, '=');
        if (eq) {
            char *end;
            long v;
            *eq = '\0';
            v = strtol(eq + 1, &end, 10);
            if (end != eq + 1 && !*end) {
                if (!strcmp(item, "gres/gpu"))
                    untyped = v;
                else if (starts_with(item, "gres/gpu:")) {
                    typed += v;
                    any_typed = 1;
                } else if (!strcmp(item, "cpu"))
                    *cpus = (int)v;
                else if (!strcmp(item, "node"))
                    *nodes = (int)v;
            }
        }
        p += len;
        if (*p == ',')
            p++;
    }
    if (untyped >= 0)
        *gpus = (int)untyped;
    else if (any_typed)
        *gpus = (int)typed;
    else
        *gpus = 0; /* AllocTRES printed without GPUs: none allocated */
}

/*
 * Fold the status of one printed row into the tracked job j. An exact id
 * match wins; rows "ID_N" of an array whose parent "ID" is tracked are
 * aggregated (any live task keeps the array live; otherwise the worst
 * terminal state, the highest exit code).
 */
static int state_rank(enum sched_state s)
{
    switch (s) {
    case SCHED_FAILED: return 6;
    case SCHED_CANCELLED: return 5;
    case SCHED_TIMEOUT: return 4;
    case SCHED_COMPLETED: return 3;
    default: return 0;
    }
}

static void merge_child(struct sched_job *j, const struct sched_job *c, int *nchild)
{
    int live_j = !sched_state_terminal(j->state) && j->state != SCHED_UNKNOWN;
    int live_c = !sched_state_terminal(c->state) && c->state != SCHED_UNKNOWN;

    if ((*nchild)++ == 0) {
        char id[128];
        memcpy(id, j->id, sizeof(id));
        *j = *c;
        memcpy(j->id, id, sizeof(id));
        return;
    }
    if (live_c && !live_j) {
        j->state = c->state;
        memcpy(j->raw_state, c->raw_state, sizeof(j->raw_state));
    } else if (live_c && live_j) {
        if (c->state == SCHED_RUNNING)
            j->state = SCHED_RUNNING;
    } else if (!live_c && !live_j && state_rank(c->state) > state_rank(j->state)) {
        j->state = c->state;
        memcpy(j->raw_state, c->raw_state, sizeof(j->raw_state));
    }
    if (c->exit_code > j->exit_code)
        j->exit_code = c->exit_code;
    if (c->start[0] && (!j->start[0] || strcmp(c->start, j->start) < 0))
        memcpy(j->start, c->start, sizeof(j->start));
    if (c->end[0] && strcmp(c->end, j->end) > 0)
        memcpy(j->end, c->end, sizeof(j->end));
    if (c->elapsed_s > j->elapsed_s)
        j->elapsed_s = c->elapsed_s;
    if (c->gpus > 0)
        j->gpus = (j->gpus > 0 ? j->gpus : 0) + c->gpus;
}

/* Tracked ids, indexed, and per id how array children were merged. */
struct tracked {
    const char *const *ids;
    size_t n;
    int *nchild; /* per id: array children merged so far (-1: exact seen) */
    struct sched_idmap map;
};

static void assign(struct tracked *tk, struct sched_job *out,
                   const struct sched_job *row)
{
    const char *us = strchr(row->id, '_');
    long i = sched_idmap_find(&tk->map, row->id, strlen(row->id));

    if (i >= 0) {
        /* the same id may be tracked twice (two records): fill every one */
        for (; i >= 0; i = tk->map.next[i]) {
            char id[128];
            memcpy(id, out[i].id, sizeof(id));
            out[i] = *row;
            memcpy(out[i].id, id, sizeof(id));
            tk->nchild[i] = -1;
        }
        return;
    }
    if (!us)
        return;
    for (i = sched_idmap_find(&tk->map, row->id, (size_t)(us - row->id));
         i >= 0; i = tk->map.next[i])
        if (tk->nchild[i] >= 0)
            merge_child(&out[i], row, &tk->nchild[i]);
}

/* squeue format: id, state, reason, submit, start, end, elapsed(raw %M). */
static const char squeue_fmt[] = "%i" US "%T" US "%r" US "%V" US "%S" US "%e";
/* sacct fields, same order as parse_sacct_line reads them. */
static const char sacct_fields[] =
    "JobID,State,ExitCode,Submit,Start,End,ElapsedRaw,AllocTRES";

int sched_slurm_parse_squeue_line(char *line, struct sched_job *j)
{
    char *f[8];
    size_t nf = split_us(line, f, 8);

    if (nf < 6 || !*f[0])
        return -1;
    sched_job_init(j, f[0]);
    j->state = sched_slurm_state(f[1]);
    xsnprintf(j->raw_state, sizeof(j->raw_state), "%.63s", f[1]);
    if (strcmp(f[2], "None"))
        xsnprintf(j->reason, sizeof(j->reason), "%.127s", f[2]);
    copy_time(j->submit, sizeof(j->submit), f[3]);
    if (j->state != SCHED_PENDING)
        copy_time(j->start, sizeof(j->start), f[4]);
    if (sched_state_terminal(j->state))
        copy_time(j->end, sizeof(j->end), f[5]);
    return 0;
}

int sched_slurm_parse_sacct_line(char *line, struct sched_job *j)
{
    char *f[10];
    size_t nf = split_us(line, f, 10);
    char *end;

    if (nf < 8 || !*f[0] || strchr(f[0], '.'))
        return -1; /* a step line (-X should prevent it) or garbage */
    sched_job_init(j, f[0]);
    j->state = sched_slurm_state(f[1]);
    xsnprintf(j->raw_state, sizeof(j->raw_state), "%.63s", f[1]);
    parse_exit(f[2], &j->exit_code, &j->signal);
    copy_time(j->submit, sizeof(j->submit), f[3]);
    copy_time(j->start, sizeof(j->start), f[4]);
    copy_time(j->end, sizeof(j->end), f[5]);
    if (*f[6]) {
        long long e = strtoll(f[6], &end, 10);
        if (!*end)
            j->elapsed_s = e;
    }
    parse_tres(f[7], &j->gpus, &j->cpus, &j->nodes);
    return 0;
}

/* scontrol show job -o: one line of Key=Value words per job. */
int sched_slurm_parse_scontrol_line(const char *line, struct sched_job *j)
{
    char jobid[64] = "", arr_job[64] = "", arr_task[64] = "";
    char state[64] = "", reason[128] = "", exitc[32] = "";
    char submit[40] = "", start[40] = "", endt[40] = "", tres[256] = "";
    const char *p = line;

    while (*p) {
        const char *sp, *eq;
        size_t klen, vlen;
        while (*p == ' ')
            p++;
        sp = strchr(p, ' ');
        if (!sp)
            sp = p + strlen(p);
        eq = memchr(p, '=', (size_t)(sp - p));
        if (eq) {
            klen = (size_t)(eq - p);
            vlen = (size_t)(sp - eq - 1);
#define TAKE(key, dst)                                                      \
    if (klen == strlen(key) && !strncmp(p, key, klen))                      \
        xsnprintf(dst, sizeof(dst), "%.*s",                                 \
                  (int)(vlen < sizeof(dst) - 1 ? vlen : sizeof(dst) - 1), eq + 1);
            TAKE("JobId", jobid)
            TAKE("ArrayJobId", arr_job)
            TAKE("ArrayTaskId", arr_task)
            TAKE("JobState", state)
            TAKE("Reason", reason)
            TAKE("ExitCode", exitc)
            TAKE("SubmitTime", submit)
            TAKE("StartTime", start)
            TAKE("EndTime", endt)
            TAKE("TRES", tres)
#undef TAKE
        }
        p = sp;
    }
    if (!*jobid)
        return -1;
    if (*arr_job && *arr_task) {
        char id[128];
        xsnprintf(id, sizeof(id), "%.60s_%.60s", arr_job, arr_task);
        sched_job_init(j, id);
    } else {
        sched_job_init(j, jobid);
    }
    j->state = sched_slurm_state(state);
    xsnprintf(j->raw_state, sizeof(j->raw_state), "%s", state);
    if (strcmp(reason, "None"))
        xsnprintf(j->reason, sizeof(j->reason), "%s", reason);
    if (sched_state_terminal(j->state))
        parse_exit(exitc, &j->exit_code, &j->signal);
    copy_time(j->submit, sizeof(j->submit), submit);
    if (j->state != SCHED_PENDING)
        copy_time(j->start, sizeof(j->start), start);
    if (sched_state_terminal(j->state))
        copy_time(j->end, sizeof(j->end), endt);
    if (*tres && j->state != SCHED_PENDING)
        parse_tres(tres, &j->gpus, &j->cpus, &j->nodes);
    return 0;
}

/* Feed every line of text to parse(), assigning rows to tracked ids. */
static void feed_lines(struct strbuf *text, struct tracked *tk,
                       struct sched_job *out,
                       int (*parse)(char *, struct sched_job *))
{
    char *p = text->buf;

    while (p && *p) {
        char *nl = strchr(p, '\n');
        struct sched_job row;
        if (nl)
            *nl = '\0';
        if (parse(p, &row) == 0)
            assign(tk, out, &row);
        p = nl ? nl + 1 : NULL;
    }
}

static int scontrol_parse_adapter(char *line, struct sched_job *j)
{
    return sched_slurm_parse_scontrol_line(line, j);
}

static void since_arg(struct sched *s, char *buf, size_t n)
{
    if (s->sacct_since > 0) {
        time_t t = (time_t)s->sacct_since - 60; /* clock skew margin */
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    } else {
        xsnprintf(buf, n, "now-7days");
    }
}

static int accounting_missing(const struct strbuf *e)
{
    return strstr(e->buf, "accounting storage is disabled") ||
           strstr(e->buf, "AccountingStorageType") ||
           strstr(e->buf, "No such file or directory") ||
           strstr(e->buf, "command not found");
}

static int slurm_status_batch(struct sched *s, const char *const *ids, size_t n,
                              struct sched_job *out, exa_error_t *err)
{
    struct strvec chunks = STRVEC_INIT, left = STRVEC_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    struct tracked tk = { ids, n, xcalloc(n, sizeof(int)), { 0 } };
    exa_error_t e1 = EXA_ERROR_INIT;
    int asked = 0, rc = 0;
    char since[40];

    sched_idmap_build(&tk.map, ids, n, NULL);
    /* 1. squeue for every id. */
    sched_chunk_ids(ids, n, s->sacct_chunk_bytes, &chunks);
    for (size_t c = 0; c < chunks.nr; c++) {
        const char *argv[] = { "squeue", "-h", "-j", chunks.v[c], "-o",
                               squeue_fmt, NULL };
        if (transport_run(s->t, argv, NULL, 0, 0, &res, &e1) < 0)
            continue; /* this poll learns nothing from squeue */
        asked = 1;
        /* exit 1 + "Invalid job id specified" when none is known */
        feed_lines(&res.out, &tk, out, sched_slurm_parse_squeue_line);
    }
    strvec_clear(&chunks);

    /* 2. sacct for ids not live in the queue (gone, or ended there). */
    for (size_t i = 0; i < n; i++)
        if (out[i].state == SCHED_UNKNOWN || sched_state_terminal(out[i].state))
            strvec_push(&left, ids[i]);
    if (left.nr && s->slurm_accounting != 0) {
        since_arg(s, since, sizeof(since));
        sched_chunk_ids(left.v, left.nr, s->sacct_chunk_bytes, &chunks);
        for (size_t c = 0; c < chunks.nr; c++) {
            char delim[16];
            const char *argv[] = { "sacct", "-X", "-P", "-n", delim, "-S", since,
                                   "-j", chunks.v[c], "-o", sacct_fields, NULL };
            xsnprintf(delim, sizeof(delim), "--delimiter=%s", US);
            if (transport_run(s->t, argv, NULL, 0, 0, &res, &e1) < 0)
                continue;
            asked = 1;
            if (res.rc != 0 && accounting_missing(&res.err)) {
                s->slurm_accounting = 0;
                break;
            }
            if (res.rc == 0)
                s->slurm_accounting = 1;
            feed_lines(&res.out, &tk, out, sched_slurm_parse_sacct_line);
        }
        strvec_clear(&chunks);
    }

    /* 3. No accounting: the controller's memory of finished jobs. */
    if (left.nr && s->slurm_accounting == 0) {
        const char *argv[] = { "scontrol", "show", "job", "-o", NULL };
        if (transport_run(s->t, argv, NULL, 0, 0, &res, &e1) == 0) {
            asked = 1;
            feed_lines(&res.out, &tk, out, scontrol_parse_adapter);
        }
    }
    if (!asked) {
        rc = -1;
        if (err)
            *err = e1;
    }
    strvec_clear(&left);
    free(tk.nchild);
    sched_idmap_free(&tk.map);
    transport_result_release(&res);
    return rc;
}

/* Job id from sbatch's stdout (parse_sbatch.c: --parsable or long form). */
static int parse_sbatch(const struct strbuf *out, struct sched_submit_result *r)
{
    struct sbatch_result sr;
    int rc;

    memset(&sr, 0, sizeof(sr));
    strvec_init(&sr.warnings);
    rc = sbatch_parse(out->buf, out->len, &sr, NULL);
    if (rc == 0) {
        xsnprintf(r->job_id, sizeof(r->job_id), "%.127s", sr.job_id);
        if (sr.cluster)
            xsnprintf(r->cluster, sizeof(r->cluster), "%.63s", sr.cluster);
        for (size_t i = 0; i < sr.warnings.nr; i++)
            strvec_push(&r->warnings, sr.warnings.v[i]);
    }
    sbatch_result_free(&sr);
    return rc;
}

/* Look a job name up in the queue, then in accounting. 1 found, 0 not,
 * -1 when neither could be asked. */
static int lookup_by_name(struct sched *s, const char *name, char *id, size_t n,
                          exa_error_t *err)
{
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char namearg[300], delim[16];
    int asked = 0, found = 0;

    xsnprintf(namearg, sizeof(namearg), "--name=%.280s", name);
    xsnprintf(delim, sizeof(delim), "--delimiter=%s", US);
    {
        const char *argv[] = { "squeue", "-h", namearg, "-o", "%i", NULL };
        if (transport_run(s->t, argv, NULL, 0, 0, &res, err) == 0 && res.rc == 0) {
            asked = 1;
            strbuf_trim(&res.out);
            if (res.out.len) {
                char *nl = strchr(res.out.buf, '\n');
                if (nl)
                    *nl = '\0';
                xsnprintf(id, n, "%.*s", (int)n - 1, res.out.buf);
                found = 1;
            }
        }
    }
    if (!found) {
        const char *argv[] = { "sacct", "-X", "-P", "-n", delim, namearg, "-S",
                               "now-1days", "-o", "JobID", NULL };
        if (transport_run(s->t, argv, NULL, 0, 0, &res, err) == 0 && res.rc == 0) {
            asked = 1;
            strbuf_trim(&res.out);
            if (res.out.len) {
                char *nl = strchr(res.out.buf, '\n');
                if (nl)
                    *nl = '\0';
                xsnprintf(id, n, "%.*s", (int)n - 1, res.out.buf);
                found = 1;
            }
        }
    }
    transport_result_release(&res);
    return found ? 1 : asked ? 0 : -1;
}

static int slurm_submit(struct sched *s, const struct sched_submit_req *req,
                        struct sched_submit_result *out, exa_error_t *err)
{
    struct strvec argv = STRVEC_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char *script = xstrfmt("%s/run.sh", req->remote_dir);
    char *name = sched_job_name(req->res ? req->res->job_name : NULL, req->run_id);
    char *o = runscript_log_pattern("slurm", req->remote_dir, "out");
    char *e = runscript_log_pattern("slurm", req->remote_dir, "err");
    int rc = -1;

    if (transport_put(s->t, req->script_path, script, err) < 0)
        goto out;
    strvec_pushl(&argv, "sbatch", "--parsable", NULL);
    strvec_pushf(&argv, "--job-name=%s", name);
    if (req->res && sched_resources_slurm_argv(req->res, &argv, err) < 0)
        goto out;
    strvec_pushf(&argv, "--output=%s", o);
    strvec_pushf(&argv, "--error=%s", e);
    strvec_pushf(&argv, "--chdir=%s", req->remote_dir);
    strvec_push(&argv, script);

    for (int attempt = 1; attempt <= s->submit_attempts; attempt++) {
        exa_error_t terr = EXA_ERROR_INIT;
        out->attempts++;
        if (transport_run(s->t, argv.v, NULL, 0, 0, &res, &terr) < 0) {
            /* The reply is lost: sbatch may or may not have run. */
            char id[128];
            int f = lookup_by_name(s, name, id, sizeof(id), NULL);
            if (f == 1) {
                xsnprintf(out->job_id, sizeof(out->job_id), "%s", id);
                strvec_push(&out->ids, id);
                out->reused = 1;
                rc = 0;
                goto out;
            }
            if (err)
                *err = terr;
            if (f < 0)
                goto out; /* cannot tell: never risk a second job */
            continue;
        }
        if (res.rc != 0) {
            strbuf_trim(&res.err);
            {
                const char *msg = res.err.buf, *rest;
                char *nl = strchr(res.err.buf, '\n');
                if (nl)
                    *nl = '\0';
                if (skip_prefix(msg, "sbatch: error: ", &rest))
                    msg = rest;
                exa_err(err, EXA_ESCHED, "sbatch on '%s' exited %d: %s",
                        s->t->host, res.rc, msg);
            }
            goto out;
        }
        if (parse_sbatch(&res.out, out) < 0) {
            exa_err(err, EXA_ESCHED, "sbatch on '%s' printed no job id", s->t->host);
            goto out;
        }
        strvec_push(&out->ids, out->job_id);
        {
            /* sbatch warnings go to stderr */
            char *p = res.err.buf;
            while (p && *p) {
                char *nl = strchr(p, '\n');
                if (nl)
                    *nl = '\0';
                if (*p)
                    strvec_push(&out->warnings, p);
                p = nl ? nl + 1 : NULL;
            }
        }
        rc = 0;
        goto out;
    }
out:
    strvec_clear(&argv);
    transport_result_release(&res);
    free(script);
    free(name);
    free(o);
    free(e);
    return rc;
}

static int slurm_cancel(struct sched *s, const char *id, exa_error_t *err)
{
    const char *argv[] = { "scancel", "--", id, NULL };
    struct transport_result res = TRANSPORT_RESULT_INIT;
    int rc = transport_run_ok(s->t, argv, NULL, 0, &res, err);

    transport_result_release(&res);
    return rc;
}

int sched_fetch_file(struct sched *s, const char *remote, struct strbuf *out,
                     exa_error_t *err)
{
    char tmp[] = "/tmp/exa-log-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f;
    char buf[65536];
    size_t r;

    if (fd < 0)
        return exa_err(err, EXA_ECONFIG, "cannot create a temporary file");
    close(fd);
    if (transport_get(s->t, remote, tmp, err) < 0) {
        unlink(tmp);
        return -1;
    }
    f = fopen(tmp, "r");
    if (!f) {
        unlink(tmp);
        return exa_err(err, EXA_ECONFIG, "cannot read '%s'", tmp);
    }
    while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_add(out, buf, r);
    fclose(f);
    unlink(tmp);
    return 0;
}

static int slurm_logs(struct sched *s, const char *id, const char *remote_dir,
                      struct strbuf *out, exa_error_t *err)
{
    char *path;
    int rc;

    if (remote_dir && *remote_dir) {
        path = xstrfmt("%s/%s.out", remote_dir, id);
        rc = sched_fetch_tail(s, path, s->log_max_bytes, out, err);
        free(path);
        return rc;
    }
    /* No recorded directory: ask the controller where StdOut went. */
    {
        const char *argv[] = { "scontrol", "show", "job", "-o", id, NULL };
        struct transport_result res = TRANSPORT_RESULT_INIT;
        const char *p;
        char so[4096];
        size_t n = 0;

        if (transport_run_ok(s->t, argv, NULL, 0, &res, err) < 0) {
            transport_result_release(&res);
            return -1;
        }
        p = strstr(res.out.buf, " StdOut=");
        if (!p) {
            transport_result_release(&res);
            return exa_err(err, EXA_ENOTFOUND, "no log found for job '%s'", id);
        }
        p += 8;
        while (p[n] && p[n] != ' ' && p[n] != '\n' && n < sizeof(so) - 1) {
            so[n] = p[n];
            n++;
        }
        so[n] = '\0';
        transport_result_release(&res);
        return sched_fetch_tail(s, so, s->log_max_bytes, out, err);
    }
}

static const struct sched_ops slurm_ops = {
    "slurm", slurm_submit, slurm_status_batch, slurm_cancel, slurm_logs, NULL,
    sched_slurm_queue,
};

void sched_slurm_init(struct sched *s)
{
    s->ops = &slurm_ops;
}
