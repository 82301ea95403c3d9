/*
 * parse_flux_eventlog.c - job eventlogs (`flux job eventlog` default
 * text, `-T iso`, `-H`, and the RFC 18 JSON lines of `flux job info ID
 * eventlog`) read into events, and the job-manager state machine
 * (RFC 21) run over those events to summarise a job's state, result and
 * times (doc/formats.md "flux-eventlog").
 *
 * Text contexts ("key=value" with JSON or bare values) are cut by hand
 * because a value may hold spaces inside a JSON string or brackets.
 */
#include "libsched/parse_flux.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsched/parse_flux_int.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* ---- eventlog --------------------------------------------------------- */

/* Length of the JSON string starting at s[0] == '"' (incl. quotes). */
static size_t json_string_span(const char *s, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return 0;
}

/* Length of the JSON object/array starting at s[0], or 0. */
static size_t json_bracket_span(const char *s, size_t n)
{
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') {
            size_t k = json_string_span(s + i, n - i);
            if (!k)
                return 0;
            i += k - 1;
        } else if (s[i] == '{' || s[i] == '[') {
            depth++;
        } else if (s[i] == '}' || s[i] == ']') {
            if (--depth == 0)
                return i + 1;
        }
    }
    return 0;
}

/* A bare (unquoted) context value: int, float, bool, null or text. */
static json_t *bare_value(const char *s, size_t n)
{
    char *v = xstrndup(s, n);
    json_t *r;
    long long i;
    double d;

    if (flux_parse_ll(v, &i) == 0)
        r = json_integer(i);
    else if ((isdigit((unsigned char)v[0]) || v[0] == '-' || v[0] == '.') &&
             flux_parse_dbl(v, &d) == 0)
        r = jx_real(d);
    else if (!strcmp(v, "true"))
        r = json_true();
    else if (!strcmp(v, "false"))
        r = json_false();
    else if (!strcmp(v, "null"))
        r = json_null();
    else
        r = jx_str(v);
    free(v);
    return r;
}

/* Parse "k=v k=v ..." or an older "{json}" context into ctx. */
static void parse_context(const char *s, size_t n, json_t *ctx)
{
    size_t i = 0;

    while (i < n && isspace((unsigned char)s[i]))
        i++;
    if (i < n && s[i] == '{') {
        json_t *o = json_loadb(s + i, n - i, 0, NULL);
        if (json_is_object(o)) {
            json_object_update(ctx, o);
            json_decref(o);
            return;
        }
        json_decref(o);
    }
    while (i < n) {
        size_t k0, k1, v0, vl = 0;
        char *key;
        json_t *val = NULL;

        while (i < n && isspace((unsigned char)s[i]))
            i++;
        if (i >= n)
            break;
        k0 = i;
        while (i < n && s[i] != '=' && !isspace((unsigned char)s[i]))
            i++;
        k1 = i;
        if (i >= n || s[i] != '=' || k1 == k0) {
            while (i < n && !isspace((unsigned char)s[i]))
                i++;
            continue;
        }
        v0 = ++i;
        if (v0 < n && s[v0] == '"')
            vl = json_string_span(s + v0, n - v0);
        else if (v0 < n && (s[v0] == '{' || s[v0] == '['))
            vl = json_bracket_span(s + v0, n - v0);
        if (vl)
            val = json_loadb(s + v0, vl, JSON_DECODE_ANY, NULL);
        if (!val) {
            vl = 0;
            while (v0 + vl < n && !isspace((unsigned char)s[v0 + vl]))
                vl++;
            val = bare_value(s + v0, vl);
        }
        key = xstrndup(s + k0, k1 - k0);
        json_object_set_new(ctx, key, val);
        free(key);
        i = v0 + vl;
    }
}

/* ISO 8601 "2025-02-05T16:49:54.078433Z" (or +HH:MM) to epoch. */
static int parse_iso(const char *s, size_t n, double *t)
{
    char buf[64], *p;
    struct tm tm;
    double frac = 0;
    long off = 0;

    if (n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    memset(&tm, 0, sizeof(tm));
    p = strptime(buf, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return -1;
    if (*p == '.') {
        char *e;
        frac = strtod(p, &e);
        p = e;
    }
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int hh, mm;
        if (strlen(p) != 6 || p[3] != ':' || !isdigit((unsigned char)p[1]))
            return -1;
        hh = (p[1] - '0') * 10 + (p[2] - '0');
        mm = (p[4] - '0') * 10 + (p[5] - '0');
        off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
        p += 6;
    }
    if (*p)
        return -1;
    *t = (double)timegm(&tm) + frac - (double)off;
    return 0;
}

static json_t *event_from_json(const json_t *o)
{
    json_t *ev = json_object(), *ctx = json_object_get(o, "context");
    const json_t *ts = json_object_get(o, "timestamp");

    jx_set(ev, "name", jx_str(jx_get_str(o, "name", NULL)));
    jx_set(ev, "t",
           json_is_number(ts) ? jx_real(json_number_value(ts)) : json_null());
    jx_set(ev, "context",
           json_is_object(ctx) ? json_deep_copy(ctx) : json_object());
    return ev;
}

static json_t *flux_eventlog_parse_clean(const char *buf, size_t len,
                                         exa_error_t *err);

json_t *flux_eventlog_parse(const char *buf, size_t len, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *res;
    if (!memchr(buf, 0x1b, len))
        return flux_eventlog_parse_clean(buf, len, err);
    flux_strip_ansi(buf, len, &sb);
    res = flux_eventlog_parse_clean(sb.buf, sb.len, err);
    strbuf_release(&sb);
    return res;
}

static json_t *flux_eventlog_parse_clean(const char *buf, size_t len,
                                         exa_error_t *err)
{
    struct flux_line *lines;
    size_t n = flux_split_lines(buf, len, &lines);
    json_t *events = json_array(), *res;
    size_t bad = 0, badline = 0;
    int offsets = 0;

    /* `-T offset` prints seconds since the first event ("0.000000
     * submit"): no epoch before 1973 is real, so such stamps are offsets */
    for (size_t li = 0; li < n; li++) {
        const char *s = lines[li].s;
        size_t l = lines[li].len, i = 0, e;
        char *v;
        double t;
        while (i < l && isspace((unsigned char)s[i]))
            i++;
        if (i == l)
            continue;
        if (s[i] == '{' || s[i] == '[')
            break;
        for (e = i; e < l && !isspace((unsigned char)s[e]); e++)
            ;
        v = xstrndup(s + i, e - i);
        offsets = flux_parse_dbl(v, &t) == 0 && t >= 0 && t < 1e8;
        free(v);
        break;
    }

    for (size_t li = 0; li < n; li++) {
        const char *s = lines[li].s;
        size_t l = lines[li].len, i = 0, t0, t1;
        json_t *ev, *ctx;
        int human = 0;
        double t = 0, off = 0;
        char *label = NULL;
        int have_t = 0, have_off = 0;

        while (i < l && isspace((unsigned char)s[i]))
            i++;
        if (i == l)
            continue;
        if (s[i] == '{') {
            json_t *o = json_loadb(s + i, l - i, 0, NULL);
            if (json_is_object(o) && json_object_get(o, "name")) {
                json_array_append_new(events, event_from_json(o));
            } else if (!bad++) {
                badline = li + 1;
            }
            json_decref(o);
            continue;
        }
        if (s[i] == '[') {
            const char *rb = memchr(s + i, ']', l - i);
            size_t a, b;
            if (!rb) {
                if (!bad++)
                    badline = li + 1;
                continue;
            }
            human = 1;
            a = i + 1;
            b = (size_t)(rb - s);
            while (a < b && s[a] == ' ')
                a++;
            while (b > a && s[b - 1] == ' ')
                b--;
            if (a < b && s[a] == '+') {
                char *v = xstrndup(s + a + 1, b - a - 1);
                have_off = flux_parse_dbl(v, &off) == 0;
                free(v);
            } else {
                label = xstrndup(s + a, b - a);
            }
            i = (size_t)(rb - s) + 1;
        } else {
            char *v;
            t0 = i;
            while (i < l && !isspace((unsigned char)s[i]))
                i++;
            v = xstrndup(s + t0, i - t0);
            if (flux_parse_dbl(v, &t) == 0) {
                have_t = 1;
                if (offsets) {
                    human = 1;
                    have_off = 1;
                    off = t;
                }
            } else if (parse_iso(s + t0, i - t0, &t) == 0)
                have_t = 1;
            free(v);
            if (!have_t) {
                if (!bad++)
                    badline = li + 1;
                continue;
            }
        }
        while (i < l && isspace((unsigned char)s[i]))
            i++;
        t0 = i;
        while (i < l && !isspace((unsigned char)s[i]))
            i++;
        t1 = i;
        if (t1 == t0) {
            free(label);
            if (!bad++)
                badline = li + 1;
            continue;
        }
        ev = json_object();
        {
            char *name = xstrndup(s + t0, t1 - t0);
            jx_set(ev, "name", jx_str(name));
            free(name);
        }
        if (human) {
            jx_set(ev, "t", json_null());
            jx_set(ev, "t_offset", have_off ? jx_real(off) : json_null());
            jx_set(ev, "t_label", jx_str(label));
        } else {
            jx_set(ev, "t", jx_real(t));
        }
        free(label);
        ctx = json_object();
        parse_context(s + i, l - i, ctx);
        jx_set(ev, "context", ctx);
        json_array_append_new(events, ev);
    }
    if (json_array_size(events) == 0 && bad) {
        char *l = xstrndup(lines[badline - 1].s, lines[badline - 1].len);
        json_decref(events);
        free(lines);
        if (strstr(l, "unknown job") || strstr(l, "not found") ||
            strstr(l, "No such file or directory") ||
            (strstr(l, "JobID ") && strstr(l, " unknown")))
            exa_err(err, EXA_ENOTFOUND, "flux job eventlog: %s", l);
        else
            exa_err(err, EXA_EPARSE, "eventlog line %zu is not an event",
                    badline);
        free(l);
        return NULL;
    }
    free(lines);
    res = json_object();
    jx_set(res, "summary", flux_eventlog_summary(events));
    json_object_set_new(res, "events", events);
    {
        /* keep "events" first for readers */
        json_t *out = json_object();
        jx_set(out, "events", json_incref(json_object_get(res, "events")));
        jx_set(out, "summary", json_incref(json_object_get(res, "summary")));
        json_decref(res);
        res = out;
    }
    return res;
}

enum fstate {
    F_NEW,
    F_DEPEND,
    F_PRIORITY,
    F_SCHED,
    F_RUN,
    F_CLEANUP,
    F_INACTIVE
};

static const char *fstate_name[] = {"NEW", "DEPEND",  "PRIORITY", "SCHED",
                                    "RUN", "CLEANUP", "INACTIVE"};

static json_t *event_time(const json_t *ev)
{
    const json_t *t = json_object_get(ev, "t");
    return json_is_number(t) ? jx_real(json_number_value(t)) : json_null();
}

json_t *flux_eventlog_summary(const json_t *events)
{
    enum fstate st = F_NEW;
    json_t *sum = json_object(), *ev, *submit = NULL, *start = NULL,
           *end = NULL, *exc = NULL;
    const char *result = NULL;
    int started = 0, have_status = 0, ex = -1, sig = -1;
    long long status = 0;
    size_t i;

    json_array_foreach(events, i, ev)
    {
        const char *name = jx_get_str(ev, "name", "");
        const json_t *ctx = json_object_get(ev, "context");

        if (!strcmp(name, "submit")) {
            st = F_DEPEND;
            json_decref(submit);
            submit = event_time(ev);
        } else if (!strcmp(name, "depend")) {
            if (st == F_DEPEND)
                st = F_PRIORITY;
        } else if (!strcmp(name, "priority")) {
            if (st == F_PRIORITY)
                st = F_SCHED;
        } else if (!strcmp(name, "alloc")) {
            if (st < F_RUN && st != F_NEW)
                st = F_RUN;
        } else if (!strcmp(name, "start")) {
            started = 1;
            json_decref(start);
            start = event_time(ev);
        } else if (!strcmp(name, "exception")) {
            long long sev = jx_get_int(ctx, "severity", -1);
            if (sev == 0) {
                if (!exc)
                    exc =
                        flux_exception_json(jx_get_str(ctx, "type", NULL), sev,
                                            jx_get_str(ctx, "note", NULL));
                if (!started && st >= F_DEPEND && st <= F_RUN)
                    st = F_CLEANUP;
            }
        } else if (!strcmp(name, "finish") || !strcmp(name, "complete")) {
            const json_t *s = json_object_get(ctx, "status");
            if (json_is_integer(s)) {
                have_status = 1;
                status = json_integer_value(s);
            }
            if (!strcmp(name, "finish")) {
                json_decref(end);
                end = event_time(ev);
                if (st != F_NEW && st < F_CLEANUP)
                    st = F_CLEANUP;
            }
        } else if (!strcmp(name, "clean")) {
            st = F_INACTIVE;
        }
    }
    if (have_status)
        flux_waitstatus_decode(status, &ex, &sig);
    if (st >= F_CLEANUP) {
        if (exc) {
            const char *type = jx_get_str(exc, "type", "");
            result = !strcmp(type, "cancel")    ? "CANCELLED"
                     : !strcmp(type, "timeout") ? "TIMEOUT"
                                                : "FAILED";
        } else if (have_status) {
            result = status == 0 ? "COMPLETED" : "FAILED";
        }
    }
    jx_set(sum, "flux_state", jx_str(fstate_name[st]));
    if (st == F_NEW)
        jx_set(sum, "state", json_null());
    else if (st <= F_SCHED)
        jx_set(sum, "state", jx_str("PENDING"));
    else if (st <= F_CLEANUP)
        jx_set(sum, "state", jx_str("RUNNING"));
    else
        jx_set(sum, "state", jx_str(result ? result : "UNKNOWN"));
    jx_set(sum, "result", jx_str(result));
    jx_set(sum, "exit_code", ex >= 0 ? json_integer(ex) : json_null());
    jx_set(sum, "signal", sig >= 0 ? json_integer(sig) : json_null());
    jx_set(sum, "exception", exc ? exc : json_null());
    jx_set(sum, "submit", submit ? submit : json_null());
    jx_set(sum, "start", start ? start : json_null());
    jx_set(sum, "end", end ? end : json_null());
    return sum;
}
