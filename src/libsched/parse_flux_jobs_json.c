/*
 * parse_flux_jobs_json.c - `flux jobs --json` output (one document, a
 * {"jobs": [...]} object or array, or one JSON job per line) mapped to
 * the same job records as the text tables (doc/formats.md).
 *
 * Kept apart from the table reader because it shares nothing with table
 * cutting: fields come by name and a state may be the old integer bit
 * encoding (one bit per RFC 21 state).
 */
#include "libsched/parse_flux.h"

#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "libsched/parse_flux_int.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"

/* Old JSON state encoding (a bit per state, RFC 21 order). */
static const char *json_state_name(const json_t *st)
{
    static const char *names[] = {"NEW", "DEPEND",  "PRIORITY", "SCHED",
                                  "RUN", "CLEANUP", "INACTIVE"};
    if (json_is_string(st))
        return json_string_value(st);
    if (json_is_integer(st)) {
        json_int_t v = json_integer_value(st);
        for (int i = 0; i < 7; i++)
            if (v == (1 << i))
                return names[i];
    }
    return NULL;
}

/*
 * Why a pending job waits, as the default table's INFO column (the
 * contextual_info field) words it: flux-core 0.88
 * src/bindings/python/flux/job/info.py contextual_info, from the JSON
 * fields it reads. PRIORITY "priority-wait"; DEPEND "depends:" and the
 * job's dependencies joined by ',' ("depends:after-success=ƒJvGKYj" on
 * flux-core 0.88, tests/fixtures/flux-real 92; the JSON holds flux's
 * post-processed list, JobInfo's DependencyList, so a begin-time shows
 * as "begin@HH:MM" there as in the table); SCHED
 * "held" at urgency 0, else "priority-hold" at priority 0, else nothing
 * (flux's "eta:" estimate is a time to come, not a reason). Other
 * states: nothing.
 */
static void pending_reason(json_t *job, const json_t *o, const char *state)
{
    const json_t *v;
    if (!strcasecmp(state, "PRIORITY")) {
        jx_set(job, "reason", jx_str("priority-wait"));
    } else if (!strcasecmp(state, "DEPEND")) {
        struct strbuf sb = STRBUF_INIT;
        size_t i;
        json_t *d;
        strbuf_addstr(&sb, "depends:");
        v = json_object_get(o, "dependencies");
        json_array_foreach(v, i, d) if (json_is_string(d))
        {
            if (sb.len > 8)
                strbuf_addch(&sb, ',');
            strbuf_addstr(&sb, json_string_value(d));
        }
        jx_set(job, "reason", jx_str(sb.buf));
        strbuf_release(&sb);
    } else if (!strcasecmp(state, "SCHED")) {
        v = json_object_get(o, "urgency");
        if (json_is_integer(v) && json_integer_value(v) == 0) {
            jx_set(job, "reason", jx_str("held"));
        } else {
            v = json_object_get(o, "priority");
            if (json_is_integer(v) && json_integer_value(v) == 0)
                jx_set(job, "reason", jx_str("priority-hold"));
        }
    }
}

static json_t *job_from_json(const json_t *o)
{
    json_t *job = json_object(), *v;
    const char *jobid = jx_get_str(o, "jobid", NULL);
    const char *raw = json_state_name(json_object_get(o, "state"));
    const char *norm = NULL;
    uint64_t id = 0;
    int have_id = 0, ex = -1, sig = -1;
    char buf[64];
    double d;

    if ((v = json_object_get(o, "id")) && json_is_integer(v)) {
        id = (uint64_t)json_integer_value(v);
        have_id = 1;
    } else if (json_is_string(v) &&
               flux_jobid_parse(json_string_value(v), &id) == 0) {
        have_id = 1;
        if (!jobid)
            jobid = json_string_value(v);
    }
    if (jobid) {
        jx_set(job, "id", jx_str(jobid));
        if (!have_id && flux_jobid_parse(jobid, &id) == 0)
            have_id = 1;
    } else if (have_id) {
        xsnprintf(buf, sizeof(buf), "%llu", (unsigned long long)id);
        jx_set(job, "id", jx_str(buf));
    } else {
        jx_set(job, "id", json_null());
    }
    jx_set(job, "id_decimal",
           have_id ? json_integer((json_int_t)id) : json_null());

    if (raw) {
        norm = flux_state_normalize(raw);
        if (!strcasecmp(raw, "INACTIVE")) {
            const char *res = jx_get_str(o, "result", NULL);
            const char *status = jx_get_str(o, "status", NULL);
            norm = flux_state_normalize(res ? res : status);
            /* raw_state carries the result word (CANCELED, FAILED,
             * TIMEOUT) as the status column prints it, not INACTIVE */
            if (res || status)
                raw = res ? res : status;
        }
    }
    if ((v = json_object_get(o, "waitstatus")) && json_is_integer(v))
        flux_waitstatus_decode(json_integer_value(v), &ex, &sig);
    else if ((v = json_object_get(o, "returncode")) && json_is_integer(v)) {
        json_int_t rc = json_integer_value(v);
        if (rc >= 0)
            ex = (int)rc;
        else if (rc != -128)
            sig = (int)-rc;
    }
    jx_set(job, "state", jx_str(norm));
    if (raw)
        jx_set(job, "raw_state", jx_str(raw));
    jx_set(job, "exit_code", ex >= 0 ? json_integer(ex) : json_null());
    if (sig >= 0)
        jx_set(job, "signal", json_integer(sig));
    v = json_object_get(o, "t_run");
    jx_set(job, "start",
           json_is_number(v) && json_number_value(v) > 0
               ? jx_real(json_number_value(v))
               : json_null());
    v = json_object_get(o, "t_inactive");
    jx_set(job, "end",
           json_is_number(v) && json_number_value(v) > 0
               ? jx_real(json_number_value(v))
               : json_null());
    v = json_object_get(o, "runtime");
    jx_set(job, "elapsed_s",
           json_is_number(v) && json_object_get(o, "t_run")
               ? jx_real(json_number_value(v))
               : json_null());
    v = json_object_get(o, "ngpus");
    jx_set(job, "gpus",
           json_is_integer(v) ? json_integer(json_integer_value(v))
                              : json_null());
    v = json_object_get(o, "returncode");
    jx_set(job, "returncode",
           json_is_integer(v) ? json_integer(json_integer_value(v))
                              : json_null());
    if ((v = json_object_get(o, "name")))
        jx_set(job, "name", jx_str(json_string_value(v)));
    if ((v = json_object_get(o, "username")))
        jx_set(job, "user", jx_str(json_string_value(v)));
    if ((v = json_object_get(o, "userid")) && json_is_integer(v))
        jx_set(job, "userid", json_integer(json_integer_value(v)));
    if ((v = json_object_get(o, "queue")) && json_is_string(v))
        jx_set(job, "queue", jx_str(json_string_value(v)));
    /* the submit directory: where flux batch's default output lands */
    if ((v = json_object_get(o, "cwd")) && json_is_string(v))
        jx_set(job, "cwd", jx_str(json_string_value(v)));
    jx_set(job, "nodelist",
           flux_nodelist_json(jx_get_str(o, "nodelist", NULL)));
    if ((v = json_object_get(o, "ranks")) && json_is_string(v))
        jx_set(job, "ranks", jx_str(json_string_value(v)));
    d = jx_get_num(o, "duration", 0);
    jx_set(job, "time_limit_s", d > 0 ? jx_real(d) : json_null());
    if ((v = json_object_get(o, "t_submit")) && json_is_number(v))
        jx_set(job, "submit", jx_real(json_number_value(v)));
    if ((v = json_object_get(o, "ntasks")) && json_is_integer(v))
        jx_set(job, "ntasks", json_integer(json_integer_value(v)));
    if ((v = json_object_get(o, "nnodes")) && json_is_integer(v))
        jx_set(job, "nnodes", json_integer(json_integer_value(v)));
    if ((v = json_object_get(o, "ncores")) && json_is_integer(v))
        jx_set(job, "ncores", json_integer(json_integer_value(v)));
    if ((v = json_object_get(o, "urgency")) && json_is_integer(v)) {
        jx_set(job, "urgency", json_integer(json_integer_value(v)));
        jx_set(job, "held", json_boolean(json_integer_value(v) == 0));
    }
    if (raw)
        pending_reason(job, o, raw);
    v = json_object_get(o, "exception");
    if (json_is_object(v) && json_is_true(json_object_get(v, "occurred")))
        jx_set(job, "exception",
               flux_exception_json(jx_get_str(v, "type", NULL),
                                   jx_get_int(v, "severity", -1),
                                   jx_get_str(v, "note", NULL)));
    else
        jx_set(job, "exception", json_null());
    return job;
}

static void add_json_jobs(json_t *jobs, const json_t *doc)
{
    size_t i;
    json_t *e;
    const json_t *arr =
        json_is_object(doc) ? json_object_get(doc, "jobs") : doc;
    if (json_is_array(arr)) {
        json_array_foreach(arr, i, e) if (json_is_object(e))
            json_array_append_new(jobs, job_from_json(e));
    } else if (json_is_object(doc)) {
        json_array_append_new(jobs, job_from_json(doc));
    }
}

/* Whether any row under hdr (lines from index i to the next header) has
 * an id with a prefix or in decimal: then prefix-less text in the JOBID
 * column is junk (a stray message), not an `{id.f58plain}` id. */
json_t *flux_jobs_json(const char *buf, size_t len, exa_error_t *err)
{
    json_error_t jerr;
    json_t *doc = json_loadb(buf, len, JSON_DECODE_ANY, &jerr);
    json_t *jobs = json_array(), *res;

    if (doc) {
        add_json_jobs(jobs, doc);
        json_decref(doc);
    } else {
        struct flux_line *lines;
        size_t n = flux_split_lines(buf, len, &lines);
        for (size_t i = 0; i < n; i++) {
            if (flux_is_blank(lines[i].s, lines[i].len))
                continue;
            doc = json_loadb(lines[i].s, lines[i].len, JSON_DECODE_ANY, &jerr);
            if (!doc) {
                free(lines);
                json_decref(jobs);
                exa_err(err, EXA_EPARSE, "flux jobs JSON line %zu: %s", i + 1,
                        jerr.text);
                return NULL;
            }
            add_json_jobs(jobs, doc);
            json_decref(doc);
        }
        free(lines);
    }
    res = json_object();
    jx_set(res, "jobs", jobs);
    return res;
}
