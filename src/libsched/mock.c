/*
 * mock.c - the mock adapter: runs the payload inline, through the same
 * vtable and the same transport as the real schedulers.
 *
 * Submit stages run.sh like the others, then runs `bash <dir>/run.sh` over
 * the transport at once, writes <dir>/<id>.out|err and a record
 * <mock_dir>/<id>.json (state, exit code, times), so a later `exa hpc
 * status` in another process sees the job. Ids are "mock-<run id>". An id
 * without a record is UNKNOWN (as in the reference, §4.5), never an error.
 * Times are UTC "YYYY-MM-DDTHH:MM:SSZ" (timeutil.h) like every stored time;
 * logs and records are written atomically (atomic.h) and a failed write
 * fails the submit or cancel instead of leaving a silent half-file.
 * The job directory lives under the user's data directory, never inside a
 * source checkout (§6 item 32).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "libsched/sched.h"
#include "libutil/atomic.h"
#include "libutil/subprocess.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

const char *sched_mock_dir(struct sched *s)
{
    if (!s->mock_dir) {
        const char *w = getenv("EXAMLOPS_HPC_WORKDIR");
        const char *x = getenv("XDG_DATA_HOME");
        const char *home = getenv("HOME");
        if (w && *w)
            s->mock_dir = xstrfmt("%s/mock_jobs", w);
        else if (x && *x)
            s->mock_dir = xstrfmt("%s/examlops/mock_jobs", x);
        else
            s->mock_dir = xstrfmt("%s/.local/share/examlops/mock_jobs",
                                  home ? home : "/tmp");
    }
    return s->mock_dir;
}

/* Now as "YYYY-MM-DDTHH:MM:SSZ" (UTC), like every time exa stores. */
static void iso_now(char *buf, size_t n)
{
    time_format_iso8601(time(NULL), buf, n);
}

/* Write the record doc to path atomically (readers in other processes
 * never see half a record). */
static int write_record(const char *path, json_t *doc, exa_error_t *err)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    int rc;

    if (!text)
        return exa_err(err, EXA_ECONFIG, "cannot encode record '%s'", path);
    rc = atomic_write_file(path, text, strlen(text), 0600, err);
    free(text);
    return rc;
}

static int mock_submit(struct sched *s, const struct sched_submit_req *req,
                       struct sched_submit_result *out, exa_error_t *err)
{
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char *script = xstrfmt("%s/run.sh", req->remote_dir);
    char *outp = NULL, *errp = NULL, *rec = NULL;
    const char *argv[] = {"bash", script, NULL};
    char start[TIME_ISO_MAX], end[TIME_ISO_MAX];
    double cap = 86400, t0;
    json_t *doc;
    int rc = -1;
    enum sched_state st;

    if (s->dry_run) { /* --dry-run: the command, nothing copied or run */
        strvec_clear(&s->dry_argv);
        strvec_pushv(&s->dry_argv, argv);
        free(script);
        return 0;
    }
    xsnprintf(out->job_id, sizeof(out->job_id), "mock-%s", req->run_id);
    strvec_push(&out->ids, out->job_id);
    out->attempts = 1;
    if (transport_put(s->t, req->script_path, script, err) < 0)
        goto done;
    if (req->res && req->res->array)
        strvec_push(&out->warnings, "mock runs an array as a single job");
    transport_env_seconds("EXAMLOPS_SLURM_MAX_WAIT_S", 86400, &cap, NULL);
    iso_now(start, sizeof(start));
    t0 = subprocess_now();
    if (req->res && req->res->hold) {
        st = SCHED_PENDING;
        end[0] = '\0';
    } else {
        exa_error_t terr = EXA_ERROR_INIT;
        if (transport_run(s->t, argv, NULL, 0, cap, &res, &terr) < 0) {
            st = terr.code == EXA_ETIMEOUT ? SCHED_TIMEOUT : SCHED_FAILED;
        } else {
            st = res.rc == 0 ? SCHED_COMPLETED : SCHED_FAILED;
        }
        iso_now(end, sizeof(end));
        outp = xstrfmt("%s/%s.out", req->remote_dir, out->job_id);
        errp = xstrfmt("%s/%s.err", req->remote_dir, out->job_id);
        if (mkdir_p(req->remote_dir, 0700, err) < 0 ||
            atomic_write_file(outp, res.out.buf, res.out.len, 0644, err) < 0 ||
            atomic_write_file(errp, res.err.buf, res.err.len, 0644, err) < 0)
            goto done;
    }
    if (mkdir_p(sched_mock_dir(s), 0700, err) < 0)
        goto done;
    rec = xstrfmt("%s/%s.json", sched_mock_dir(s), out->job_id);
    doc = json_pack("{s:s, s:s, s:s, s:s}", "id", out->job_id, "state",
                    sched_state_name(st), "remote_dir", req->remote_dir,
                    "submit", start);
    if (st != SCHED_PENDING) {
        json_object_set_new(doc, "start", json_string(start));
        json_object_set_new(doc, "end", json_string(end));
        json_object_set_new(
            doc, "elapsed_s",
            json_integer((json_int_t)(subprocess_now() - t0 + 0.5)));
        if (res.rc >= 0)
            json_object_set_new(doc, "exit_code", json_integer(res.rc));
        json_object_set_new(doc, "signal", json_integer(res.signal));
    }
    if (write_record(rec, doc, err) < 0) {
        json_decref(doc);
        goto done;
    }
    json_decref(doc);
    rc = 0;
done:
    transport_result_release(&res);
    free(script);
    free(outp);
    free(errp);
    free(rec);
    return rc;
}

static int mock_status_batch(struct sched *s, const char *const *ids, size_t n,
                             struct sched_job *out, exa_error_t *err)
{
    for (size_t i = 0; i < n; i++) {
        char *rec = xstrfmt("%s/%s.json", sched_mock_dir(s), ids[i]);
        json_t *doc = strchr(ids[i], '/') ? NULL : json_load_file(rec, 0, NULL);
        const char *v;

        free(rec);
        if (!doc)
            continue;
        v = json_string_value(json_object_get(doc, "state"));
        out[i].state = sched_state_parse(v);
        xsnprintf(out[i].raw_state, sizeof(out[i].raw_state), "%.63s",
                  v ? v : "");
        if ((v = json_string_value(json_object_get(doc, "submit"))))
            xsnprintf(out[i].submit, sizeof(out[i].submit), "%.39s", v);
        if ((v = json_string_value(json_object_get(doc, "start"))))
            xsnprintf(out[i].start, sizeof(out[i].start), "%.39s", v);
        if ((v = json_string_value(json_object_get(doc, "end"))))
            xsnprintf(out[i].end, sizeof(out[i].end), "%.39s", v);
        if (json_is_integer(json_object_get(doc, "exit_code")))
            out[i].exit_code =
                (int)json_integer_value(json_object_get(doc, "exit_code"));
        if (json_is_integer(json_object_get(doc, "signal")))
            out[i].signal =
                (int)json_integer_value(json_object_get(doc, "signal"));
        if (json_is_integer(json_object_get(doc, "elapsed_s")))
            out[i].elapsed_s =
                json_integer_value(json_object_get(doc, "elapsed_s"));
        out[i].gpus = 0;
        json_decref(doc);
    }
    return 0;
}

static int mock_cancel(struct sched *s, const char *id, exa_error_t *err)
{
    char *rec = xstrfmt("%s/%s.json", sched_mock_dir(s), id);
    json_t *doc = strchr(id, '/') ? NULL : json_load_file(rec, 0, NULL);
    int rc = 0;

    if (!doc) {
        rc = exa_err(err, EXA_ENOTFOUND, "mock job '%s' not found", id);
    } else if (json_string_value(json_object_get(doc, "state")) &&
               !strcmp(json_string_value(json_object_get(doc, "state")),
                       "PENDING")) {
        char now[TIME_ISO_MAX];
        iso_now(now, sizeof(now));
        json_object_set_new(doc, "state", json_string("CANCELLED"));
        json_object_set_new(doc, "end", json_string(now));
        rc = write_record(rec, doc, err);
    }
    json_decref(doc);
    free(rec);
    return rc;
}

static int mock_logs(struct sched *s, const char *id, const char *remote_dir,
                     struct strbuf *out, exa_error_t *err)
{
    char *path;
    int rc;

    if (!remote_dir || !*remote_dir) {
        char *rec = xstrfmt("%s/%s.json", sched_mock_dir(s), id);
        json_t *doc = strchr(id, '/') ? NULL : json_load_file(rec, 0, NULL);
        const char *d = json_string_value(json_object_get(doc, "remote_dir"));
        free(rec);
        if (!d) {
            json_decref(doc);
            return exa_err(err, EXA_ENOTFOUND, "no log found for job '%s'", id);
        }
        path = xstrfmt("%s/%s.out", d, id);
        json_decref(doc);
    } else {
        path = xstrfmt("%s/%s.out", remote_dir, id);
    }
    rc = sched_fetch_tail(s, path, s->log_max_bytes, out, err);
    free(path);
    return rc;
}

static const struct sched_ops mock_ops = {
    "mock",    mock_submit, mock_status_batch, mock_cancel,
    mock_logs, NULL,        sched_mock_queue,
};

void sched_mock_init(struct sched *s)
{
    s->ops = &mock_ops;
}
