/*
 * cluster_artifacts.c - what a finished cluster job leaves behind, taken
 * home: its final state and the scheduler's accounting written on the job
 * row, the tail of its stderr when it failed, and, when it COMPLETED, its
 * artifacts fetched into a staging directory, checked line by line against
 * SHA256SUMS and published as the next model version inside the
 * registration transaction. Split out of cluster_run.c, which keeps the
 * orchestration (resolve, place, preflight, submit, wait, resume) and calls
 * in here through cluster_run_int.h; the two public artifact functions
 * (cluster_run_verify_artifacts, cluster_run_fetch_artifacts) stay declared
 * in cluster_run.h.
 */
#include "libpipeline/cluster_run_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfleet/gate.h"
#include "libpipeline/train.h"
#include "libutil/atomic.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

/* The artifact files `exa train` writes, in SHA256SUMS order. */
static const char *const artifact_files[] = {"model.json", "encoders.json",
                                             "metrics.json"};
#define NARTIFACTS 3
/* Largest artifact file fetched (a forest of a full PM100 run is MBs). */
#define MAX_ARTIFACT_BYTES ((size_t)1 << 30)

/* Append fmt with v when known, else the text unknown (with its own
 * leading separator). */
static void acct_part(struct strbuf *sb, int known, const char *fmt, double v,
                      const char *unknown)
{
    if (known)
        strbuf_addf(sb, fmt, v);
    else
        strbuf_addstr(sb, unknown);
}

/* Append sep and "N what" for n >= 0, else sep and unknown. */
static void acct_count(struct strbuf *sb, const char *sep, long long n,
                       const char *what, const char *unknown)
{
    strbuf_addstr(sb, sep);
    if (n >= 0)
        strbuf_addf(sb, "%lld %s", n, what);
    else
        strbuf_addstr(sb, unknown);
}

void cluster_run_acct_line(const struct sched_acct *a, struct strbuf *out)
{
    /* -1 is "unknown" (a job cancelled before it started has no
     * allocation): said in words, never printed as a count */
    acct_part(out, a->queue_seconds >= 0, "%.0f s queued", a->queue_seconds,
              "queue time unknown");
    acct_part(out, a->run_seconds >= 0, ", %.0f s run", a->run_seconds,
              ", run time unknown");
    acct_count(out, ", ", a->gpus, "GPU(s)", "GPUs unknown");
    acct_count(out, ", ", a->cpus, "CPU(s)", "CPUs unknown");
    acct_part(out, a->gpu_hours >= 0, ": %.4f GPU-h", a->gpu_hours,
              ": GPU-h unknown");
    acct_part(out, a->cpu_hours >= 0, ", %.4f CPU-h", a->cpu_hours,
              ", CPU-h unknown");
}

/* Record the final status and the accounting on the job row, through the
 * gate's one writer of scheduler status (libfleet/gate.h). */
void cluster_run_record_end(store_t *st, struct sched *s,
                            const struct cluster_run_hooks *h,
                            struct cluster_run_result *res)
{
    const struct sched_job *j = &res->last;
    exa_error_t e = EXA_ERROR_INIT;
    int r;

    sched_acct_init(&res->acct);
    r = gate_record_status(st, s, res->job.cluster, j, 10, &res->acct, &e);
    if (r == 1) {
        const struct sched_acct *a = &res->acct;
        struct strbuf line = STRBUF_INIT;
        res->have_acct = 1;
        cluster_run_acct_line(a, &line);
        hook_step(h, "accounting", "%s", line.buf);
        strbuf_release(&line);
    } else if (sched_state_terminal(j->state)) {
        hook_step(h, "accounting", "unavailable%s%s", e.text[0] ? ": " : "",
                  e.text);
    }
    {
        struct job_rec fresh;
        if (store_job_get(st, res->job.cluster, res->job.job_id, &fresh,
                          NULL) == 0) {
            job_rec_release(&res->job);
            res->job = fresh;
        }
    }
}

char *cluster_run_tail_lines(const char *text, size_t len, int n)
{
    size_t i = len;
    while (i > 0 && (text[i - 1] == '\n' || text[i - 1] == ' '))
        i--;
    len = i;
    while (i > 0) {
        if (text[i - 1] == '\n' && --n == 0)
            break;
        i--;
    }
    return xstrndup(text + i, len - i);
}

void cluster_run_keep_stderr_tail(struct sched *s,
                                  struct cluster_run_result *res)
{
    struct strbuf sb = STRBUF_INIT;
    char *path;
    if (!res->job.remote_dir)
        return;
    path = xstrfmt("%s/%s.err", res->job.remote_dir, res->job.job_id);
    /* The last 64 KiB hold far more than CLUSTER_RUN_STDERR_LINES lines;
     * a job's stderr can be gigabytes and is never read whole. */
    if (sched_fetch_tail(s, path, (size_t)64 << 10, &sb, NULL) == 0 && sb.len)
        res->stderr_tail =
            cluster_run_tail_lines(sb.buf, sb.len, CLUSTER_RUN_STDERR_LINES);
    strbuf_release(&sb);
    free(path);
}

/* ---- artifacts ---- */

static int slurp(const char *path, struct strbuf *out, exa_error_t *err)
{
    FILE *fp = fopen(path, "re");
    char buf[65536];
    size_t n;
    if (!fp)
        return exa_err(err, EXA_EFAIL, "cannot read '%s': %s", path,
                       strerror(errno));
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) {
        if (out->len + n > MAX_ARTIFACT_BYTES) {
            fclose(fp);
            return exa_err(err, EXA_EFAIL, "'%s' is larger than %zu bytes",
                           path, MAX_ARTIFACT_BYTES);
        }
        strbuf_add(out, buf, n);
    }
    fclose(fp);
    return 0;
}

int cluster_run_verify_artifacts(const char *dir, char sha_hex[65],
                                 exa_error_t *err)
{
    struct strbuf sums = STRBUF_INIT;
    char *path = xstrfmt("%s/SHA256SUMS", dir), *p;
    int seen[NARTIFACTS] = {0}, rc = -1;

    if (slurp(path, &sums, err) < 0)
        goto out;
    sha256_hex(sums.buf, sums.len, sha_hex);
    for (p = sums.buf; p && *p;) {
        char *nl = strchr(p, '\n'), *name, want[65], got[65];
        struct strbuf data = STRBUF_INIT;
        char *fpath;
        int k = -1;
        if (nl)
            *nl = '\0';
        if (!*p) {
            p = nl ? nl + 1 : NULL;
            continue;
        }
        if (strlen(p) < 67 || p[64] != ' ' || (p[65] != ' ' && p[65] != '*')) {
            exa_err(err, EXA_EFAIL, "SHA256SUMS: malformed line '%.80s'", p);
            goto out;
        }
        memcpy(want, p, 64);
        want[64] = '\0';
        name = p + 66;
        for (int i = 0; i < NARTIFACTS; i++)
            if (!strcmp(name, artifact_files[i]))
                k = i;
        if (k < 0) {
            exa_err(err, EXA_EFAIL,
                    "SHA256SUMS names an unexpected file "
                    "'%.80s'",
                    name);
            goto out;
        }
        fpath = xstrfmt("%s/%s", dir, name);
        if (slurp(fpath, &data, err) < 0) {
            free(fpath);
            strbuf_release(&data);
            goto out;
        }
        sha256_hex(data.buf, data.len, got);
        free(fpath);
        strbuf_release(&data);
        for (char *q = want; *q; q++)
            if (*q >= 'A' && *q <= 'F')
                *q = (char)(*q - 'A' + 'a');
        if (strcmp(want, got)) {
            exa_err(err, EXA_EFAIL,
                    "checksum mismatch for '%s': SHA256SUMS "
                    "says %.12s..., the fetched file is %.12s...",
                    name, want, got);
            goto out;
        }
        seen[k] = 1;
        p = nl ? nl + 1 : NULL;
    }
    for (int i = 0; i < NARTIFACTS; i++)
        if (!seen[i]) {
            exa_err(err, EXA_EFAIL, "SHA256SUMS does not list '%s'",
                    artifact_files[i]);
            goto out;
        }
    rc = 0;
out:
    strbuf_release(&sums);
    free(path);
    return rc;
}

char *cluster_run_fetch_artifacts(struct transport *t, const char *remote_dir,
                                  const char *models_root, const char *model,
                                  const char *run_uuid, char sha_hex[65],
                                  exa_error_t *err)
{
    char *final = xstrfmt("%s/%s/run-%s", models_root, model, run_uuid);
    char *staging = atomic_dir_begin(final, err);
    static const char *const all[] = {"SHA256SUMS", "model.json",
                                      "encoders.json", "metrics.json"};

    free(final);
    if (!staging) {
        exa_err_prefix(err, "data directory '%s' is not writable", models_root);
        return NULL;
    }
    for (size_t i = 0; i < 4; i++) {
        char *rp = xstrfmt("%s/out/%s", remote_dir, all[i]);
        char *lp = xstrfmt("%s/%s", staging, all[i]);
        int rc = transport_get(t, rp, lp, err);
        if (rc < 0)
            exa_err_prefix(err, "cannot fetch '%s'", rp);
        free(rp);
        free(lp);
        if (rc < 0)
            goto fail;
    }
    if (cluster_run_verify_artifacts(staging, sha_hex, err) < 0) {
        exa_err_prefix(err, "artifacts of run %s rejected", run_uuid);
        goto fail;
    }
    return staging;
fail:
    atomic_dir_abort(staging);
    free(staging);
    return NULL;
}

struct publish_ctx {
    const char *staging;
    char *model_dir;
    char *final;
};

static int publish(struct model_version *mv, void *arg, exa_error_t *err)
{
    struct publish_ctx *pc = arg;
    free(pc->final);
    pc->final = xstrfmt("%s/%lld", pc->model_dir, mv->version);
    if (atomic_dir_commit(pc->staging, pc->final, 0755, err) < 0) {
        exa_err_prefix(err, "cannot publish version %lld of %s", mv->version,
                       mv->model);
        return -1;
    }
    free(mv->artifact_path);
    mv->artifact_path = xstrdup(pc->final);
    return 0;
}

static void unpublish(struct model_version *mv, void *arg)
{
    struct publish_ctx *pc = arg;
    (void)mv;
    if (rename(pc->final, pc->staging) < 0)
        atomic_dir_abort(pc->final);
}

static double jnum(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : JOB_NULL_INT;
}

/* Fetch, verify and register the artifacts of the COMPLETED job. */
int cluster_run_register_version(store_t *st, struct transport *t,
                                 const char *models_root,
                                 const struct cluster_run_hooks *h,
                                 struct cluster_run_result *res,
                                 exa_error_t *err)
{
    const struct job_rec *j = &res->job;
    char sha[65], *staging;
    double t0 = time_monotonic();

    staging = cluster_run_fetch_artifacts(t, j->remote_dir, models_root,
                                          j->model, j->run_uuid, sha, err);
    if (!staging)
        return -1;
    hook_step(h, "fetch",
              "4 files verified in %.2fs (sha256 of SHA256SUMS "
              "%.12s...)",
              time_monotonic() - t0, sha);
    return cluster_run_register_staged(st, staging, sha, models_root, h, res,
                                       err);
}

int cluster_run_register_staged(store_t *st, char *staging, const char *sha,
                                const char *models_root,
                                const struct cluster_run_hooks *h,
                                struct cluster_run_result *res,
                                exa_error_t *err)
{
    const struct job_rec *j = &res->job;
    struct publish_ctx pc = {0};
    struct strbuf mtext = STRBUF_INIT;
    json_t *m = NULL;
    json_error_t je;
    char *mpath;
    int rc = -1;

    mpath = xstrfmt("%s/metrics.json", staging);
    if (slurp(mpath, &mtext, err) < 0)
        goto out;
    if (!(m = json_loadb(mtext.buf, mtext.len, 0, &je)) || !json_is_object(m)) {
        exa_err(err, EXA_EFAIL, "metrics.json of run %s is not a JSON object",
                j->run_uuid);
        goto out;
    }
    {
        const json_t *met = json_object_get(m, "metrics");
        const char *stage = jx_get_str(m, "stage", NULL);
        const char *dpath = jx_get_str(m, "dataset_path", NULL);
        res->mv.model = xstrdup(j->model);
        res->mv.stage = xstrdup(stage ? stage : "None");
        res->mv.rmse = jnum(met, "rmse");
        res->mv.mse = jnum(met, "mse");
        res->mv.mape = jnum(met, "mape");
        res->mv.metrics = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
        res->mv.dataset = xstrdup(j->dataset ? j->dataset : "");
        res->mv.dataset_path = dpath ? xstrdup(dpath) : NULL;
        res->mv.train_rows = jint(m, "train_rows");
        res->mv.val_rows = jint(m, "val_rows");
        res->mv.skipped_rows = jint(m, "skipped_rows");
    }
    res->mv.artifact_sha256 = xstrdup(sha);
    res->mv.job_ref = j->id;
    res->mv.cluster = xstrdup(j->cluster);
    res->mv.scheduler = xstrdup(j->scheduler);
    res->mv.job_id = xstrdup(j->job_id);
    res->mv.run_uuid = xstrdup(j->run_uuid);
    pc.staging = staging;
    pc.model_dir = xstrfmt("%s/%s", models_root, j->model);
    if (store_model_register(st, &res->mv, publish, unpublish, &pc, err) < 0)
        goto out;
    res->registered = 1;
    res->job.model_version = res->mv.version;
    hook_step(h, "register", "%s version %lld (%s) in '%s'", res->mv.model,
              res->mv.version, res->mv.stage, res->mv.artifact_path);
    rc = 0;
out:
    if (rc < 0)
        atomic_dir_abort(staging);
    json_decref(m);
    strbuf_release(&mtext);
    free(mpath);
    free(staging);
    free(pc.model_dir);
    free(pc.final);
    return rc;
}
