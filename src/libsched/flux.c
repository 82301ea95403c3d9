/*
 * flux.c - the Flux adapter: flux batch / flux submit --cc, one `flux jobs`
 * for every tracked id, the eventlog for ids it no longer lists.
 *
 * `flux jobs` is asked for a 0x1F-separated format so empty fields (a job
 * cancelled before it ran has no t_run) cannot shift columns, the bug of
 * shared/REFERENCE.md §6 item 8. The wait status is decoded POSIX-style
 * (exit = status >> 8, signal = status & 0x7f), so exit codes survive
 * (§4.4 loses them). Ids whose record flux jobs no longer shows are read
 * from `flux job info ID eventlog` (JSON lines, RFC 18): finish carries the
 * wait status, exception the cancel/timeout cause.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/runscript.h"
#include "libsched/sched.h"
#include "libsched/sched_lines.h"
#include "libutil/xalloc.h"

#define US "\x1f"

static const char flux_fmt[] = "{id.f58}" US "{state}" US "{result}" US
                               "{t_submit}" US "{t_run}" US "{t_inactive}" US
                               "{waitstatus}" US "{runtime}";

/* Strip the F58 prefix (UTF-8 ƒ, ASCII f) for comparisons. */
static const char *f58_body(const char *id)
{
    if ((unsigned char)id[0] == 0xc6 && (unsigned char)id[1] == 0x92)
        return id + 2;
    if (id[0] == 'f' || id[0] == '_')
        return id + 1;
    return id;
}


static void decode_wait(long long st, int *exit_code, int *sig)
{
    if ((st & 0x7f) == 0) {
        *exit_code = (int)((st >> 8) & 0xff);
        *sig = 0;
    } else {
        *exit_code = -1;
        *sig = (int)(st & 0x7f);
    }
}

/* A plausible epoch time: finite, > 0 and at most SCHED_MAX_EPOCH, so
 * "%.6f" of it fits struct sched_job's 40-byte time fields. */
static int epoch_ok(double d)
{
    return isfinite(d) && d > 0 && d <= SCHED_MAX_EPOCH;
}

static void put_epoch(char *dst, size_t n, double d)
{
    if (epoch_ok(d))
        xsnprintf(dst, n, "%.6f", d);
}

/* Number field: empty, "0", "0.0" and "-" mean unset; so do values that
 * are not a plausible epoch time (inf, nan, 1e300, negative). */
static int time_field(const char *s, char *dst, size_t n)
{
    char *end;
    double d;

    if (!*s || !strcmp(s, "-"))
        return 0;
    d = strtod(s, &end);
    if (end == s || !epoch_ok(d))
        return 0;
    xsnprintf(dst, n, "%.6f", d);
    return 1;
}

int sched_flux_parse_jobs_line(char *line, struct sched_job *j)
{
    char *f[8];
    size_t nf = 0;
    char *p = line;

    while (nf < 8) {
        char *sep = strchr(p, 0x1f);
        f[nf++] = p;
        if (!sep)
            break;
        *sep = '\0';
        p = sep + 1;
    }
    if (nf < 8 || !*f[0])
        return -1;
    sched_job_init(j, f[0]);
    j->state = sched_flux_state(f[1], f[2]);
    xsnprintf(j->raw_state, sizeof(j->raw_state), "%.30s%s%.30s", f[1],
              *f[2] ? " " : "", f[2]);
    time_field(f[3], j->submit, sizeof(j->submit));
    time_field(f[4], j->start, sizeof(j->start));
    if (sched_state_terminal(j->state)) {
        char *end;
        long long st;
        time_field(f[5], j->end, sizeof(j->end));
        st = strtoll(f[6], &end, 10);
        if (end != f[6] && !*end)
            decode_wait(st, &j->exit_code, &j->signal);
    }
    {
        char *end;
        double rt = strtod(f[7], &end);
        if (end != f[7] && epoch_ok(rt))
            j->elapsed_s = (long long)(rt + 0.5);
    }
    return 0;
}

int sched_flux_parse_eventlog(const char *text, struct sched_job *j)
{
    const char *p = text;
    int any = 0, alloc = 0, finished = 0, clean = 0;
    long long status = -1;
    const char *exc_type = NULL;
    json_t *keep = json_array();
    double t_submit = 0, t_start = 0, t_end = 0;

    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        json_t *ev = json_loadb(p, len, 0, NULL);
        p += len + (nl ? 1 : 0);
        if (!json_is_object(ev)) {
            json_decref(ev);
            continue;
        }
        json_array_append_new(keep, ev);
        any = 1;
        {
            const char *name = json_string_value(json_object_get(ev, "name"));
            double ts = json_number_value(json_object_get(ev, "timestamp"));
            if (!epoch_ok(ts))
                ts = 0; /* absurd or absent: unknown */
            json_t *ctx = json_object_get(ev, "context");
            if (!name)
                continue;
            if (!strcmp(name, "submit"))
                t_submit = ts;
            else if (!strcmp(name, "alloc"))
                alloc = 1;
            else if (!strcmp(name, "start"))
                t_start = ts;
            else if (!strcmp(name, "finish")) {
                finished = 1;
                t_end = ts;
                if (json_is_integer(json_object_get(ctx, "status")))
                    status = json_integer_value(json_object_get(ctx, "status"));
            } else if (!strcmp(name, "exception")) {
                json_t *sev = json_object_get(ctx, "severity");
                if (!sev || json_integer_value(sev) == 0) {
                    exc_type = json_string_value(json_object_get(ctx, "type"));
                    if (exc_type)
                        xsnprintf(j->reason, sizeof(j->reason), "%.120s",
                                  exc_type);
                }
            } else if (!strcmp(name, "clean")) {
                clean = 1;
                if (!t_end)
                    t_end = ts;
            }
        }
    }
    if (!any) {
        json_decref(keep);
        return -1;
    }
    put_epoch(j->submit, sizeof(j->submit), t_submit);
    put_epoch(j->start, sizeof(j->start), t_start);
    if (clean || finished || exc_type) {
        put_epoch(j->end, sizeof(j->end), t_end);
        if (status >= 0)
            decode_wait(status, &j->exit_code, &j->signal);
    }
    if (!clean && !finished && !exc_type)
        j->state = alloc ? SCHED_RUNNING : SCHED_PENDING;
    else if (!clean)
        j->state = SCHED_RUNNING; /* CLEANUP */
    else if (exc_type && !strcmp(exc_type, "cancel"))
        j->state = SCHED_CANCELLED;
    else if (exc_type && !strcmp(exc_type, "timeout"))
        j->state = SCHED_TIMEOUT;
    else if (exc_type)
        j->state = SCHED_FAILED;
    else
        j->state = status == 0 ? SCHED_COMPLETED : SCHED_FAILED;
    xsnprintf(j->raw_state, sizeof(j->raw_state), "%s",
              clean ? "INACTIVE" : (finished || exc_type) ? "CLEANUP"
                                   : alloc ? "RUN" : "SCHED");
    if (t_start > 0 && t_end > t_start)
        j->elapsed_s = (long long)(t_end - t_start + 0.5);
    json_decref(keep);
    return 0;
}

static int flux_status_batch(struct sched *s, const char *const *ids, size_t n,
                             struct sched_job *out, exa_error_t *err)
{
    struct transport_result res = TRANSPORT_RESULT_INIT;
    struct strvec argv = STRVEC_INIT;
    exa_error_t e1 = EXA_ERROR_INIT;
    struct sched_idmap map;
    int asked = 0;

    sched_idmap_build(&map, ids, n, f58_body);
    strvec_pushl(&argv, "flux", "jobs", "--no-header", "-o", flux_fmt, NULL);
    for (size_t i = 0; i < n; i++)
        strvec_push(&argv, ids[i]);
    if (transport_run(s->t, argv.v, NULL, 0, 0, &res, &e1) == 0) {
        char *p = res.out.buf;
        asked = 1;
        /* unknown ids make flux jobs exit 1 but the others are printed */
        while (p && *p) {
            char *nl = strchr(p, '\n');
            struct sched_job row;
            if (nl)
                *nl = '\0';
            if (sched_flux_parse_jobs_line(p, &row) == 0) {
                const char *b = f58_body(row.id);
                for (long i = sched_idmap_find(&map, b, strlen(b)); i >= 0;
                     i = map.next[i]) {
                    out[i] = row;
                    xsnprintf(out[i].id, sizeof(out[i].id), "%s", ids[i]);
                }
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    strvec_clear(&argv);
    sched_idmap_free(&map);
    for (size_t i = 0; i < n; i++) {
        const char *ev[] = { "flux", "job", "info", ids[i], "eventlog", NULL };
        if (out[i].state != SCHED_UNKNOWN)
            continue;
        if (transport_run(s->t, ev, NULL, 0, 0, &res, &e1) < 0)
            continue;
        asked = 1;
        if (res.rc == 0)
            sched_flux_parse_eventlog(res.out.buf, &out[i]);
    }
    transport_result_release(&res);
    if (!asked) {
        if (err)
            *err = e1;
        return -1;
    }
    return 0;
}

static int probe_accounting(struct sched *s)
{
    if (s->flux_accounting < 0) {
        const char *argv[] = { "flux", "account", "--help", NULL };
        struct transport_result res = TRANSPORT_RESULT_INIT;
        s->flux_accounting =
            transport_run(s->t, argv, NULL, 0, 0, &res, NULL) == 0 && res.rc == 0;
        transport_result_release(&res);
    }
    return s->flux_accounting;
}

static int lookup_by_name(struct sched *s, const char *name, struct strvec *ids,
                          exa_error_t *err)
{
    char namearg[300];
    const char *argv[] = { "flux", "jobs", "-a", "--no-header", namearg, "-o",
                           "{id.f58}", NULL };
    struct transport_result res = TRANSPORT_RESULT_INIT;
    int rc = -1;

    xsnprintf(namearg, sizeof(namearg), "--name=%.280s", name);
    if (transport_run(s->t, argv, NULL, 0, 0, &res, err) == 0 && res.rc == 0) {
        char *p = res.out.buf;
        rc = 0;
        while (p && *p) {
            char *nl = strchr(p, '\n');
            if (nl)
                *nl = '\0';
            if (*p) {
                strvec_push(ids, p);
                rc = 1;
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    transport_result_release(&res);
    return rc;
}

static int flux_submit(struct sched *s, const struct sched_submit_req *req,
                       struct sched_submit_result *out, exa_error_t *err)
{
    struct strvec argv = STRVEC_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    char *script = xstrfmt("%s/run.sh", req->remote_dir);
    char *name = sched_job_name(req->res ? req->res->job_name : NULL, req->run_id);
    char *o = runscript_log_pattern("flux", req->remote_dir, "out");
    char *e = runscript_log_pattern("flux", req->remote_dir, "err");
    const struct sched_resources *r = req->res;
    int rc = -1;

    if (transport_put(s->t, req->script_path, script, err) < 0)
        goto out;
    if (r && r->array) {
        /* flux submit --cc=IDSET: one job per index; no throttle. */
        char idset[128];
        const char *pct = strchr(r->array, '%');
        size_t len = pct ? (size_t)(pct - r->array) : strlen(r->array);
        xsnprintf(idset, sizeof(idset), "%.*s", (int)(len < 127 ? len : 127),
                  r->array);
        if (pct)
            strvec_pushf(&out->warnings,
                         "array throttle '%s' dropped: flux submit --cc has none",
                         pct);
        strvec_pushl(&argv, "flux", "submit", NULL);
        strvec_pushf(&argv, "--cc=%s", idset);
    } else {
        strvec_pushl(&argv, "flux", "batch", NULL);
    }
    strvec_pushf(&argv, "--job-name=%s", name);
    strvec_pushf(&argv, "--output=%s", o);
    strvec_pushf(&argv, "--error=%s", e);
    if (r && sched_resources_flux_argv(r, r->account ? probe_accounting(s) : 0,
                                       &argv, &out->warnings, err) < 0)
        goto out;
    if (r && r->array)
        strvec_push(&argv, "bash");
    strvec_push(&argv, script);

    for (int attempt = 1; attempt <= s->submit_attempts; attempt++) {
        exa_error_t terr = EXA_ERROR_INIT;
        out->attempts++;
        if (transport_run(s->t, argv.v, NULL, 0, 0, &res, &terr) < 0) {
            int f = lookup_by_name(s, name, &out->ids, NULL);
            if (f == 1) {
                xsnprintf(out->job_id, sizeof(out->job_id), "%s", out->ids.v[0]);
                out->reused = 1;
                rc = 0;
                goto out;
            }
            if (err)
                *err = terr;
            if (f < 0)
                goto out;
            continue;
        }
        if (res.rc != 0) {
            strbuf_trim(&res.err);
            exa_err(err, EXA_ESCHED, "flux on '%s' exited %d: %s", s->t->host,
                    res.rc, res.err.buf);
            goto out;
        }
        {
            char *p = res.out.buf;
            while (p && *p) {
                char *nl = strchr(p, '\n');
                if (nl)
                    *nl = '\0';
                while (*p == ' ')
                    p++;
                if (*p)
                    strvec_push(&out->ids, p);
                p = nl ? nl + 1 : NULL;
            }
        }
        if (!out->ids.nr) {
            exa_err(err, EXA_ESCHED, "flux on '%s' printed no job id", s->t->host);
            goto out;
        }
        xsnprintf(out->job_id, sizeof(out->job_id), "%s", out->ids.v[0]);
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

static int flux_cancel(struct sched *s, const char *id, exa_error_t *err)
{
    const char *argv[] = { "flux", "cancel", "--", id, NULL };
    struct transport_result res = TRANSPORT_RESULT_INIT;
    int rc = transport_run_ok(s->t, argv, NULL, 0, &res, err);

    transport_result_release(&res);
    return rc;
}

static int flux_logs(struct sched *s, const char *id, const char *remote_dir,
                     struct strbuf *out, exa_error_t *err)
{
    if (remote_dir && *remote_dir) {
        char *path = xstrfmt("%s/%s.out", remote_dir, id);
        exa_error_t e1 = EXA_ERROR_INIT;
        int rc = sched_fetch_tail(s, path, s->log_max_bytes, out, &e1);
        free(path);
        if (rc == 0)
            return 0;
    }
    {
        const char *argv[] = { "flux", "job", "attach", id, NULL };
        struct transport_result res = TRANSPORT_RESULT_INIT;
        int rc = transport_run_ok(s->t, argv, NULL, 0, &res, err);
        size_t max = s->log_max_bytes ? s->log_max_bytes : SCHED_LOG_MAX_DEFAULT;
        /* a stream has no tail(1): the transport's output cap bounds it,
         * and only its last max bytes are kept */
        if (rc == 0 && res.out.len > max) {
            s->log_truncated = 1;
            strbuf_add(out, res.out.buf + (res.out.len - max), max);
        } else if (rc == 0) {
            strbuf_addbuf(out, &res.out);
        }
        transport_result_release(&res);
        return rc;
    }
}

static const struct sched_ops flux_ops = {
    "flux", flux_submit, flux_status_batch, flux_cancel, flux_logs, NULL,
    sched_flux_queue,
};

void sched_flux_init(struct sched *s)
{
    s->ops = &flux_ops;
}
