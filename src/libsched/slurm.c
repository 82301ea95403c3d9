/*
 * slurm.c - the Slurm adapter: sbatch, batched squeue + sacct, scancel.
 *
 * Status is one query per poll for every tracked id, not one per job
 * (doc/reference.md §6 item 28): `squeue -j ID1,ID2,... -o FMT` with a
 * format that leads every record with 0x1E and separates fields with 0x1F
 * (ASCII record/unit separators, bytes no job name or reason can hold),
 * then, for the ids that left the queue or ended, one `sacct -X
 * --parsable2 --delimiter=0x1F -S SINCE -j ... -o FIELDS` (-X: the
 * allocation line, not the steps; -S explicit because sacct's default
 * window depends on the options, sacct(1)). Ids are chunked so a command
 * line stays far below ARG_MAX and ssh's limits. A site without
 * accounting falls back to one `scontrol show job -o` (every job the
 * controller still remembers). An id nobody knows stays UNKNOWN; the batch
 * never fails for it.
 *
 * Every output is read by the parsers `exa debug parse` runs and the
 * conformance tests check (squeue_parse, sacct_parse, scontrol_jobs_parse,
 * sbatch_parse_streams in parse_slurm.h); this file never splits a line
 * itself. The queries keep their header line, so the columns are named by
 * the output, not by position. What a record says is then copied into the
 * adapter's struct sched_job: strings that do not fit its fields are
 * dropped (an id: the row cannot be a tracked job) or cut at a character
 * boundary (reason, raw state), and counts above INT_MAX are unknown.
 *
 * Submit names the job after its run id and, when the reply is lost
 * (transport error after sbatch may have run), looks the name up with
 * `squeue --name` and `sacct --name` before trying again, so a dropped
 * connection never makes a second job (§6 item 26).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libsched/parse_slurm.h"
#include "libsched/runscript.h"
#include "libsched/sched.h"
#include "libutil/parse.h"
#include "libutil/xalloc.h"

#define US "\x1f"

/* squeue format: id, state, reason, submit, start, end (squeue(1) -o);
 * header kept: JOBID STATE REASON SUBMIT_TIME START_TIME END_TIME. */
static const char squeue_fmt[] =
    "\x1e%i" US "%T" US "%r" US "%V" US "%S" US "%e";
/* sacct fields (sacct(1) --format); header kept. NodeList: where a job
 * that left the queue ran (sched_job.node; the provisioner's black-hole
 * nodes, WORKERS.md §9.4). */
static const char sacct_fields[] =
    "JobID,State,ExitCode,Submit,Start,End,ElapsedRaw,AllocTRES,NCPUS,NNodes,"
    "NodeList";

/* Where a record came from: scontrol reports requested, not allocated,
 * resources for a pending job. */
enum rec_src { SRC_SQUEUE, SRC_SACCT, SRC_SCONTROL };

/* Copy s into dst[n], cut at a UTF-8 character boundary when it is longer
 * (never aborts: scheduler text has no length limit). */
static void copy_cut(char *dst, size_t n, const char *s)
{
    size_t l = strlen(s);

    if (l >= n) {
        size_t k = n - 1;
        /* s[k] continues a character: cut before its lead, at most 3
         * bytes back (UTF-8); text that is no UTF-8 is cut at n - 1 */
        while (k && n - 1 - k < 3 && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        l = ((unsigned char)s[k] & 0xC0) == 0x80 || !k ? n - 1 : k;
    }
    memcpy(dst, s, l);
    dst[l] = '\0';
}

/* A time that does not fit its field is no time the adapter can use. */
static void copy_time(char *dst, size_t n, const char *s)
{
    if (s && strlen(s) < n)
        memcpy(dst, s, strlen(s) + 1);
}

static int int_count(int has, long long v)
{
    return has && v >= 0 && v <= INT_MAX ? (int)v : -1;
}

/*
 * The adapter's view of one parsed record: 0 with *j filled, -1 when the
 * record has no id or one too long to be tracked.
 */
static int job_from_record(const struct slurm_job *r, enum rec_src src,
                           struct sched_job *j)
{
    if (!r->id || !*r->id || strlen(r->id) >= sizeof(j->id))
        return -1;
    sched_job_init(j, r->id);
    j->state = r->state ? sched_state_parse(r->state) : SCHED_UNKNOWN;
    if (r->raw_state)
        copy_cut(j->raw_state, sizeof(j->raw_state), r->raw_state);
    if (r->reason && strcmp(r->reason, "None"))
        copy_cut(j->reason, sizeof(j->reason), r->reason);
    if (r->has_exit && (src == SRC_SACCT || sched_state_terminal(j->state))) {
        j->exit_code = r->exit_code;
        j->signal = r->has_signal ? r->signal : -1;
    }
    /* the parsers drop a pending job's start and a live job's end for
     * squeue and scontrol (projections, not facts) */
    copy_time(j->submit, sizeof(j->submit), r->submit);
    copy_time(j->start, sizeof(j->start), r->start);
    copy_time(j->end, sizeof(j->end), r->end);
    if (r->has_elapsed && r->elapsed_s >= 0 && r->elapsed_s < 9e18)
        j->elapsed_s = (long long)r->elapsed_s;
    if (j->state != SCHED_PENDING) {
        j->gpus = int_count(r->has_gpus, r->gpus);
        j->cpus = int_count((r->have & SJ_NCPUS) != 0, r->ncpus);
        j->nodes = int_count(r->has_nnodes, r->nnodes);
    }
    if (r->batch_host && *r->batch_host && strcmp(r->batch_host, "None"))
        copy_cut(j->node, sizeof(j->node), r->batch_host);
    else if (r->nodelist.nr)
        copy_cut(j->node, sizeof(j->node), r->nodelist.v[0]);
    return 0;
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
    case SCHED_FAILED:
        return 6;
    case SCHED_CANCELLED:
        return 5;
    case SCHED_TIMEOUT:
        return 4;
    case SCHED_COMPLETED:
        return 3;
    default:
        return 0;
    }
}

/* Per tracked id: array children merged so far (-1: the exact id was
 * seen), and whether their GPU total overflowed (then it stays unknown). */
struct merged {
    int nchild;
    int gpus_lost;
};

static void merge_child(struct sched_job *j, const struct sched_job *c,
                        struct merged *m)
{
    int live_j = !sched_state_terminal(j->state) && j->state != SCHED_UNKNOWN;
    int live_c = !sched_state_terminal(c->state) && c->state != SCHED_UNKNOWN;

    if (m->nchild++ == 0) {
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
    } else if (!live_c && !live_j &&
               state_rank(c->state) > state_rank(j->state)) {
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
    if (c->gpus > 0 && !m->gpus_lost) {
        int64_t sum = j->gpus > 0 ? j->gpus : 0;
        if (count_add(&sum, c->gpus) < 0 || sum > INT_MAX) {
            j->gpus = -1; /* a total past INT_MAX is unknown, never wrapped */
            m->gpus_lost = 1;
        } else {
            j->gpus = (int)sum;
        }
    }
}

/* Tracked ids, indexed, and per id how array children were merged. */
struct tracked {
    const char *const *ids;
    size_t n;
    struct merged *m; /* per id */
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
            tk->m[i].nchild = -1;
        }
        return;
    }
    if (!us)
        return;
    for (i = sched_idmap_find(&tk->map, row->id, (size_t)(us - row->id));
         i >= 0; i = tk->map.next[i])
        if (tk->m[i].nchild >= 0)
            merge_child(&out[i], row, &tk->m[i]);
}

typedef int (*jobs_parse_f)(const char *buf, size_t len,
                            struct slurm_jobs *jobs, const char **kind,
                            exa_error_t *err);

/* Parse text with parse and assign every record to the tracked ids. Text
 * that does not parse teaches this poll nothing. */
static void feed(const struct strbuf *text, jobs_parse_f parse,
                 enum rec_src src, struct tracked *tk, struct sched_job *out)
{
    struct slurm_jobs jobs;
    const char *kind;

    memset(&jobs, 0, sizeof(jobs));
    if (parse(text->buf, text->len, &jobs, &kind, NULL) == 0)
        for (size_t i = 0; i < jobs.njobs; i++) {
            struct sched_job row;
            if (job_from_record(&jobs.jobs[i], src, &row) == 0)
                assign(tk, out, &row);
        }
    slurm_jobs_free(&jobs);
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
    struct tracked tk = {ids, n, xcalloc(n, sizeof(struct merged)), {0}};
    exa_error_t e1 = EXA_ERROR_INIT;
    int asked = 0, rc = 0;
    char since[40];

    sched_idmap_build(&tk.map, ids, n, NULL);
    /* 1. squeue for every id. */
    sched_chunk_ids(ids, n, s->sacct_chunk_bytes, &chunks);
    for (size_t c = 0; c < chunks.nr; c++) {
        const char *argv[] = {"squeue", "-j",       chunks.v[c],
                              "-o",     squeue_fmt, NULL};
        if (transport_run(s->t, argv, NULL, 0, 0, &res, &e1) < 0) {
            sched_note_failure(s, &e1);
            continue; /* this poll learns nothing from squeue */
        }
        asked = 1;
        /* exit 1 + "Invalid job id specified" when none is known; any
         * other failure (controller down) is not an answer */
        if (res.rc != 0 && !strstr(res.err.buf, "Invalid job id")) {
            exa_error_t fe = EXA_ERROR_INIT;
            transport_exit_error(s->t, argv, &res, &fe);
            sched_note_failure(s, &fe);
        }
        feed(&res.out, squeue_parse, SRC_SQUEUE, &tk, out);
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
            const char *argv[] = {
                "sacct", "-X",         "--parsable2", "--delimiter=" US,
                "-S",    since,        "-j",          chunks.v[c],
                "-o",    sacct_fields, NULL};
            if (transport_run(s->t, argv, NULL, 0, 0, &res, &e1) < 0) {
                sched_note_failure(s, &e1);
                continue;
            }
            asked = 1;
            if (res.rc != 0 && accounting_missing(&res.err)) {
                s->slurm_accounting = 0;
                break;
            }
            if (res.rc != 0) {
                exa_error_t fe = EXA_ERROR_INIT;
                transport_exit_error(s->t, argv, &res, &fe);
                sched_note_failure(s, &fe);
            }
            if (res.rc == 0)
                s->slurm_accounting = 1;
            feed(&res.out, sacct_parse, SRC_SACCT, &tk, out);
        }
        strvec_clear(&chunks);
    }

    /* 3. No accounting: the controller's memory of finished jobs. */
    if (left.nr && s->slurm_accounting == 0) {
        const char *argv[] = {"scontrol", "show", "job", "-o", NULL};
        if (transport_run(s->t, argv, NULL, 0, 0, &res, &e1) == 0) {
            asked = 1;
            if (res.rc != 0) {
                exa_error_t fe = EXA_ERROR_INIT;
                transport_exit_error(s->t, argv, &res, &fe);
                sched_note_failure(s, &fe);
            }
            feed(&res.out, scontrol_jobs_parse, SRC_SCONTROL, &tk, out);
        } else {
            sched_note_failure(s, &e1);
        }
    }
    if (!asked) {
        rc = -1;
        if (err)
            *err = e1;
    }
    strvec_clear(&left);
    free(tk.m);
    sched_idmap_free(&tk.map);
    transport_result_release(&res);
    return rc;
}

/*
 * Job id and warnings from sbatch's stdout and stderr (parse_sbatch.c).
 * 0, or -1 with err (EXA_ESCHED) when there is no id line or the id does
 * not fit the result (Slurm ids are 32-bit numbers; the cluster name is
 * cut at a character boundary).
 */
static int parse_submit(const struct transport_result *res, const char *host,
                        struct sched_submit_result *r, exa_error_t *err)
{
    struct sbatch_result sr;
    int rc = -1;

    if (sbatch_parse_streams(res->out.buf, res->out.len, res->err.buf,
                             res->err.len, &sr, NULL) < 0) {
        exa_err(err, EXA_ESCHED, "sbatch on '%s' printed no job id", host);
    } else if (strlen(sr.job_id) >= sizeof(r->job_id)) {
        exa_err(err, EXA_ESCHED,
                "sbatch on '%s' printed a job id of %zu "
                "bytes",
                host, strlen(sr.job_id));
    } else {
        copy_cut(r->job_id, sizeof(r->job_id), sr.job_id);
        if (sr.cluster)
            copy_cut(r->cluster, sizeof(r->cluster), sr.cluster);
        for (size_t i = 0; i < sr.warnings.nr; i++)
            strvec_push(&r->warnings, sr.warnings.v[i]);
        rc = 0;
    }
    sbatch_result_free(&sr);
    return rc;
}

/* The first job id of a parsed answer (malloc'ed), or NULL. */
static char *first_id(const struct strbuf *text, jobs_parse_f parse)
{
    struct slurm_jobs jobs;
    const char *kind;
    char *id = NULL;

    memset(&jobs, 0, sizeof(jobs));
    if (parse(text->buf, text->len, &jobs, &kind, NULL) == 0)
        for (size_t i = 0; i < jobs.njobs && !id; i++)
            if (jobs.jobs[i].id && *jobs.jobs[i].id)
                id = xstrdup(jobs.jobs[i].id);
    slurm_jobs_free(&jobs);
    return id;
}

/* Look a job name up in the queue, then in accounting: 1 with *id
 * (malloc'ed) found, 0 not, -1 when neither could be asked. */
static int lookup_by_name(struct sched *s, const char *name, char **id,
                          exa_error_t *err)
{
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char *namearg = xstrfmt("--name=%s", name);
    int asked = 0;

    *id = NULL;
    {
        const char *argv[] = {"squeue", namearg, "-o", "%i", NULL};
        if (transport_run(s->t, argv, NULL, 0, 0, &res, err) == 0 &&
            res.rc == 0) {
            asked = 1;
            *id = first_id(&res.out, squeue_parse);
        }
    }
    if (!*id) {
        const char *argv[] = {"sacct", "-X", "--parsable2", "--delimiter=" US,
                              namearg, "-S", "now-1days",   "-o",
                              "JobID", NULL};
        if (transport_run(s->t, argv, NULL, 0, 0, &res, err) == 0 &&
            res.rc == 0) {
            asked = 1;
            *id = first_id(&res.out, sacct_parse);
        }
    }
    transport_result_release(&res);
    free(namearg);
    return *id ? 1 : asked ? 0 : -1;
}

static int slurm_submit(struct sched *s, const struct sched_submit_req *req,
                        struct sched_submit_result *out, exa_error_t *err)
{
    struct strvec argv = STRVEC_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char *script = xstrfmt("%s/run.sh", req->remote_dir);
    char *name =
        sched_job_name(req->res ? req->res->job_name : NULL, req->run_id);
    char *o = runscript_log_pattern("slurm", req->remote_dir, "out");
    char *e = runscript_log_pattern("slurm", req->remote_dir, "err");
    int rc = -1;

    strvec_pushl(&argv, "sbatch", "--parsable", NULL);
    strvec_pushf(&argv, "--job-name=%s", name);
    if (req->res && sched_resources_slurm_argv(req->res, &argv, err) < 0)
        goto out;
    strvec_pushf(&argv, "--output=%s", o);
    strvec_pushf(&argv, "--error=%s", e);
    strvec_pushf(&argv, "--chdir=%s", req->remote_dir);
    strvec_push(&argv, script);
    if (s->dry_run) { /* --dry-run: the command, nothing copied or run */
        strvec_clear(&s->dry_argv);
        strvec_pushv(&s->dry_argv, (const char **)argv.v);
        rc = 0;
        goto out;
    }
    if (transport_put(s->t, req->script_path, script, err) < 0)
        goto out;

    for (int attempt = 1; attempt <= s->submit_attempts; attempt++) {
        exa_error_t terr = EXA_ERROR_INIT;
        out->attempts++;
        if (transport_run(s->t, argv.v, NULL, 0, 0, &res, &terr) < 0) {
            /* The reply is lost: sbatch may or may not have run. */
            char *id;
            int f = lookup_by_name(s, name, &id, NULL);
            if (f == 1 && strlen(id) < sizeof(out->job_id)) {
                copy_cut(out->job_id, sizeof(out->job_id), id);
                strvec_push(&out->ids, id);
                out->reused = 1;
                free(id);
                rc = 0;
                goto out;
            }
            free(id);
            if (err)
                *err = terr;
            if (f < 0)
                goto out; /* cannot tell: never risk a second job */
            continue;
        }
        if (res.rc != 0) {
            /* the message is sbatch's first error line (parse_sbatch.c) */
            struct sbatch_result sr;
            exa_error_t pe = EXA_ERROR_INIT;
            const char *msg = "", *rest;
            if (sbatch_parse_streams(NULL, 0, res.err.buf, res.err.len, &sr,
                                     &pe) < 0 &&
                res.err.len)
                msg = pe.text;
            if (skip_prefix(msg, "sbatch: error: ", &rest))
                msg = rest;
            exa_err(err, EXA_ESCHED, "sbatch on '%s' exited %d: %s", s->t->host,
                    res.rc, msg);
            sbatch_result_free(&sr);
            goto out;
        }
        if (parse_submit(&res, s->t->host, out, err) < 0)
            goto out;
        strvec_push(&out->ids, out->job_id);
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
    const char *argv[] = {"scancel", "--", id, NULL};
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
        const char *argv[] = {"scontrol", "show", "job", "-o", id, NULL};
        struct transport_result res = TRANSPORT_RESULT_INIT;
        struct slurm_jobs jobs;
        const char *kind;
        char *so = NULL;

        if (transport_run_ok(s->t, argv, NULL, 0, &res, err) < 0) {
            transport_result_release(&res);
            return -1;
        }
        memset(&jobs, 0, sizeof(jobs));
        if (scontrol_jobs_parse(res.out.buf, res.out.len, &jobs, &kind, NULL) ==
            0)
            for (size_t i = 0; i < jobs.njobs && !so; i++)
                if (jobs.jobs[i].std_out && *jobs.jobs[i].std_out)
                    so = xstrdup(jobs.jobs[i].std_out);
        slurm_jobs_free(&jobs);
        transport_result_release(&res);
        if (!so)
            return exa_err(err, EXA_ENOTFOUND, "no log found for job '%s'", id);
        rc = sched_fetch_tail(s, so, s->log_max_bytes, out, err);
        free(so);
        return rc;
    }
}

static const struct sched_ops slurm_ops = {
    "slurm",    slurm_submit, slurm_status_batch, slurm_cancel,
    slurm_logs, NULL,         sched_slurm_queue,
};

void sched_slurm_init(struct sched *s)
{
    s->ops = &slurm_ops;
}
