/*
 * proto.c - decoding the worker protocol (proto.h). jansson parses; this
 * file checks every member's type and range before any of it is used,
 * and builds the C structs the engine works on, so a body either decodes
 * whole or is refused with one line naming the member.
 */
#include "libtask/proto.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/json.h"
#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

int tp_name_ok(const char *s)
{
    size_t n = 0;
    if (!s || !*s || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    for (; s[n]; n++) {
        char c = s[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
            return 0;
        if (n >= TP_NAME_MAX)
            return 0;
    }
    return 1;
}

int tp_sha256_ok(const char *s)
{
    size_t n = 0;
    if (!s)
        return 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return 0;
    return n == 64;
}

static void strv_free(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Parse a body: an object, at most TP_MAX_BODY, no duplicate keys. An
 * empty body is {} when empty_ok. */
static json_t *load_obj(const char *what, const char *body, size_t len,
                        int empty_ok, exa_error_t *err)
{
    json_error_t je;
    json_t *j;
    if (len > TP_MAX_BODY) {
        exa_err(err, EXA_EPARSE, "%s: body of %zu bytes is over the limit",
                what, len);
        return NULL;
    }
    if (len == 0 && empty_ok)
        return json_object();
    j = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        exa_err(err, EXA_EPARSE, "%s: invalid JSON at line %d: %s", what,
                je.line, je.text);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        exa_err(err, EXA_EPARSE, "%s: body must be a JSON object", what);
        return NULL;
    }
    return j;
}

/* Integer member: absent gives def (unless required), else must be an
 * integer in [lo, hi]. */
static int get_int(const char *what, const json_t *o, const char *key,
                   long long lo, long long hi, long long def, int required,
                   long long *out, exa_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    long long x;
    if (!v || json_is_null(v)) {
        if (required)
            return exa_err(err, EXA_EPARSE, "%s: '%s' is required", what, key);
        *out = def;
        return 0;
    }
    if (!json_is_integer(v))
        goto bad;
    x = json_integer_value(v);
    if (x < lo || x > hi)
        goto bad;
    *out = x;
    return 0;
bad:
    return exa_err(err, EXA_EPARSE,
                   "%s: '%s' must be an integer between %lld and %lld", what,
                   key, lo, hi);
}

static int get_num(const char *what, const json_t *o, const char *key,
                   double lo, double hi, double def, double *out,
                   exa_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    double x;
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v))
        goto bad;
    x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi)
        goto bad;
    *out = x;
    return 0;
bad:
    return exa_err(err, EXA_EPARSE,
                   "%s: '%s' must be a number between %g and %g", what, key, lo,
                   hi);
}

/* String member of at most max bytes, no NUL; *out malloc'ed or NULL
 * when absent and not required. */
static int get_str(const char *what, const json_t *o, const char *key,
                   size_t max, int required, char **out, exa_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    size_t n;
    if (!v || json_is_null(v)) {
        if (required)
            return exa_err(err, EXA_EPARSE, "%s: '%s' is required", what, key);
        *out = NULL;
        return 0;
    }
    if (!json_is_string(v))
        return exa_err(err, EXA_EPARSE, "%s: '%s' must be a string", what, key);
    n = json_string_length(v);
    if (n > max || memchr(json_string_value(v), '\0', n))
        return exa_err(err, EXA_EPARSE,
                       "%s: '%s' must be a string of at most %zu bytes "
                       "without NUL",
                       what, key, max);
    *out = xstrndup(json_string_value(v), n);
    return 0;
}

static int get_name(const char *what, const json_t *o, const char *key,
                    int required, char **out, exa_error_t *err)
{
    char *s = NULL;
    if (get_str(what, o, key, TP_NAME_MAX, required, &s, err) < 0)
        return -1;
    if (s && !tp_name_ok(s)) {
        free(s);
        return exa_err(err, EXA_EPARSE,
                       "%s: '%s' must be a name of [A-Za-z0-9._-], 1 to %d "
                       "characters",
                       what, key, TP_NAME_MAX);
    }
    *out = s;
    return 0;
}

/* Array of names (absent: empty), at most max entries; NULL-terminated. */
static int get_names(const char *what, const json_t *o, const char *key,
                     size_t max, char ***out, size_t *n, exa_error_t *err)
{
    const json_t *a = json_object_get(o, key);
    char **v;
    size_t i, cnt;
    if (!a || json_is_null(a)) {
        *out = xcalloc(1, sizeof(char *));
        *n = 0;
        return 0;
    }
    if (!json_is_array(a) || json_array_size(a) > max)
        return exa_err(err, EXA_EPARSE,
                       "%s: '%s' must be an array of at most %zu names", what,
                       key, max);
    cnt = json_array_size(a);
    v = xcalloc(cnt + 1, sizeof(char *));
    for (i = 0; i < cnt; i++) {
        const json_t *e = json_array_get(a, i);
        if (!json_is_string(e) || !tp_name_ok(json_string_value(e)) ||
            strlen(json_string_value(e)) != json_string_length(e)) {
            strv_free(v, i);
            return exa_err(err, EXA_EPARSE,
                           "%s: '%s' entry %zu must be a name of "
                           "[A-Za-z0-9._-]",
                           what, key, i);
        }
        v[i] = xstrdup(json_string_value(e));
    }
    *out = v;
    *n = cnt;
    return 0;
}

/* ---- spec ---- */

void tp_spec_release(struct tp_spec *s)
{
    strv_free(s->argv, s->argc);
    strv_free(s->env, s->nenv);
    strv_free(s->labels, s->nlabels);
    strv_free(s->outputs, s->noutputs);
    free(s->cwd);
    free(s->outputs_dir);
    memset(s, 0, sizeof(*s));
}

static int env_name_ok(const char *k)
{
    if (!k ||
        !((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_'))
        return 0;
    for (const char *p = k; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return strlen(k) <= 256;
}

int tp_spec_decode(const json_t *o, struct tp_spec *out, exa_error_t *err)
{
    static const char what[] = "task spec";
    struct tp_spec s;
    const json_t *argv, *env, *kind;
    memset(&s, 0, sizeof(s));
    if (!json_is_object(o))
        return exa_err(err, EXA_EPARSE, "%s must be a JSON object", what);
    argv = json_object_get(o, "argv");
    kind = json_object_get(o, "kind");
    if (kind && !json_is_null(kind)) {
        if (!json_is_string(kind) || (strcmp(json_string_value(kind), "noop") &&
                                      strcmp(json_string_value(kind), "exec")))
            return exa_err(err, EXA_EPARSE,
                           "%s: 'kind' must be \"exec\" or \"noop\"", what);
        s.noop = !strcmp(json_string_value(kind), "noop");
    }
    if (!json_is_array(argv) || json_array_size(argv) > TP_MAX_ARGV ||
        (!s.noop && json_array_size(argv) == 0))
        return exa_err(err, EXA_EPARSE,
                       "%s: 'argv' must be a non-empty array of at most %d "
                       "strings",
                       what, TP_MAX_ARGV);
    s.argc = json_array_size(argv);
    s.argv = xcalloc(s.argc + 1, sizeof(char *));
    for (size_t i = 0; i < s.argc; i++) {
        const json_t *e = json_array_get(argv, i);
        if (!json_is_string(e) ||
            strlen(json_string_value(e)) != json_string_length(e) ||
            json_string_length(e) > 65536) {
            s.argc = i;
            tp_spec_release(&s);
            return exa_err(err, EXA_EPARSE,
                           "%s: 'argv' entry %zu must be a string without NUL",
                           what, i);
        }
        s.argv[i] = xstrdup(json_string_value(e));
    }
    env = json_object_get(o, "env");
    if (env && !json_is_null(env)) {
        const char *k;
        const json_t *v;
        size_t i = 0;
        if (!json_is_object(env) || json_object_size(env) > 1024) {
            tp_spec_release(&s);
            return exa_err(err, EXA_EPARSE,
                           "%s: 'env' must be an object of strings", what);
        }
        s.env = xcalloc(json_object_size(env) + 1, sizeof(char *));
        json_object_foreach((json_t *)env, k, v)
        {
            if (!env_name_ok(k) || !json_is_string(v) ||
                strlen(json_string_value(v)) != json_string_length(v)) {
                tp_spec_release(&s);
                return exa_err(err, EXA_EPARSE,
                               "%s: 'env' needs names of [A-Za-z0-9_] and "
                               "string values without NUL",
                               what);
            }
            s.env[i++] = xstrfmt("%s=%s", k, json_string_value(v));
            s.nenv = i;
        }
    } else {
        s.env = xcalloc(1, sizeof(char *));
    }
    if (get_str(what, o, "cwd", 4096, 0, &s.cwd, err) < 0)
        goto fail;
    if (s.cwd && s.cwd[0] != '/') {
        exa_err(err, EXA_EPARSE, "%s: 'cwd' must be an absolute path", what);
        goto fail;
    }
    if (get_num(what, o, "timeout_s", 1, 2592000, 3600, &s.timeout_s, err) <
            0 ||
        get_int(what, o, "cpus", 1, 4096, 1, 0, &s.cpus, err) < 0 ||
        get_int(what, o, "gpus", 0, 1024, 0, 0, &s.gpus, err) < 0 ||
        get_int(what, o, "ram_mb", 0, 1LL << 40, 0, 0, &s.ram_mb, err) < 0 ||
        get_names(what, o, "labels", 64, &s.labels, &s.nlabels, err) < 0 ||
        get_names(what, o, "outputs", 256, &s.outputs, &s.noutputs, err) < 0 ||
        get_name(what, o, "outputs_dir", 0, &s.outputs_dir, err) < 0)
        goto fail;
    *out = s;
    return 0;
fail:
    tp_spec_release(&s);
    return -1;
}

json_t *tp_spec_encode(const struct tp_spec *s)
{
    json_t *o = json_object(), *a = json_array(), *e = json_object();
    json_t *l = json_array(), *outs = json_array();
    for (size_t i = 0; i < s->argc; i++)
        json_array_append_new(a, jx_str(s->argv[i]));
    for (size_t i = 0; i < s->nenv; i++) {
        const char *eq = strchr(s->env[i], '=');
        char *k;
        if (!eq)
            continue;
        k = xstrndup(s->env[i], (size_t)(eq - s->env[i]));
        json_object_set_new(e, k, jx_str(eq + 1));
        free(k);
    }
    for (size_t i = 0; i < s->nlabels; i++)
        json_array_append_new(l, json_string(s->labels[i]));
    for (size_t i = 0; i < s->noutputs; i++)
        json_array_append_new(outs, json_string(s->outputs[i]));
    json_object_set_new(o, "kind", json_string(s->noop ? "noop" : "exec"));
    json_object_set_new(o, "argv", a);
    json_object_set_new(o, "env", e);
    if (s->cwd)
        json_object_set_new(o, "cwd", jx_str(s->cwd));
    json_object_set_new(o, "timeout_s", jx_real(s->timeout_s));
    json_object_set_new(o, "cpus", json_integer(s->cpus));
    json_object_set_new(o, "gpus", json_integer(s->gpus));
    json_object_set_new(o, "ram_mb", json_integer(s->ram_mb));
    json_object_set_new(o, "labels", l);
    json_object_set_new(o, "outputs", outs);
    if (s->outputs_dir)
        json_object_set_new(o, "outputs_dir", jx_str(s->outputs_dir));
    return o;
}

char *tp_spec_labels(const struct tp_spec *s)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < s->nlabels; i++) {
        if (i)
            strbuf_addch(&sb, ',');
        strbuf_addstr(&sb, s->labels[i]);
    }
    return strbuf_detach(&sb, NULL);
}

/* ---- paths ---- */

/* Copy the next segment of *p (up to '/' or end) into buf; advance. */
static int segment(const char **p, char *buf, size_t n)
{
    const char *s = *p, *e = strchr(s, '/');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 0 || len >= n)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    *p = e ? e + 1 : s + len;
    return e ? 1 : 0; /* 1: more follows */
}

static int parse_id(const char *s, long long *out)
{
    uint64_t v;
    if (parse_u64_str(s, &v) < 0 || v == 0 || v > (1ULL << 62))
        return -1;
    *out = (long long)v;
    return 0;
}

static double query_wait(const char *q)
{
    const char *p = q;
    while (p && *p) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > 5 && len < 16 && !strncmp(p, "wait=", 5)) {
            char buf[16];
            uint64_t v;
            memcpy(buf, p + 5, len - 5);
            buf[len - 5] = '\0';
            if (parse_u64_str(buf, &v) == 0 && v <= 60)
                return (double)v;
            return -2;
        }
        p = amp ? amp + 1 : NULL;
    }
    return -1;
}

int tp_parse_path(const char *method, const char *path, const char *query,
                  struct tp_path *out, exa_error_t *err)
{
    struct tp_path r;
    const char *p;
    char seg[TP_NAME_MAX + 2];
    const char *want = "POST";
    int more;
    memset(&r, 0, sizeof(r));
    r.wait_s = -1;
    if (!path || !skip_prefix(path, "/v1/", &p))
        return exa_err(err, EXA_ENOTFOUND, "no route '%s'", path ? path : "");
    if (!strcmp(p, "ping")) {
        r.route = TP_PING;
        want = "GET";
    } else if (!strcmp(p, "workers/register")) {
        r.route = TP_REGISTER;
    } else if (skip_prefix(p, "workers/", &p)) {
        if (segment(&p, r.worker_id, sizeof(r.worker_id)) != 1 ||
            !tp_name_ok(r.worker_id))
            return exa_err(err, EXA_ENOTFOUND, "no route '%s'", path);
        if (!strcmp(p, "heartbeat"))
            r.route = TP_HEARTBEAT;
        else if (!strcmp(p, "lease"))
            r.route = TP_LEASE;
        else if (!strcmp(p, "results"))
            r.route = TP_RESULTS;
        else if (!strcmp(p, "drain"))
            r.route = TP_DRAIN;
        else if (!strcmp(p, "bye"))
            r.route = TP_BYE;
        else
            return exa_err(err, EXA_ENOTFOUND, "no route '%s'", path);
        if (r.route == TP_LEASE) {
            r.wait_s = query_wait(query);
            if (r.wait_s < -1)
                return exa_err(err, EXA_ENOTFOUND,
                               "lease: 'wait' must be 0 to 60 seconds");
        }
    } else if (skip_prefix(p, "tasks/", &p)) {
        want = "PUT";
        if (segment(&p, seg, sizeof(seg)) != 1 || parse_id(seg, &r.task) < 0 ||
            !skip_prefix(p, "attempts/", &p) ||
            segment(&p, seg, sizeof(seg)) != 1 ||
            parse_id(seg, &r.attempt) < 0 || !skip_prefix(p, "artifacts/", &p))
            return exa_err(err, EXA_ENOTFOUND, "no route '%s'", path);
        more = segment(&p, r.name, sizeof(r.name));
        if (more != 0 || !tp_name_ok(r.name))
            return exa_err(err, EXA_ENOTFOUND,
                           "artifact name in '%s' must be [A-Za-z0-9._-]",
                           path);
        r.route = TP_ARTIFACT;
    } else {
        return exa_err(err, EXA_ENOTFOUND, "no route '%s'", path);
    }
    *out = r;
    if (!method || strcmp(method, want))
        return 1;
    return 0;
}

/* ---- register ---- */

void tp_register_release(struct tp_register *r)
{
    free(r->worker_id);
    free(r->join_token);
    free(r->register_nonce);
    free(r->exa_version);
    free(r->host);
    free(r->node);
    free(r->slurm_job_id);
    strv_free(r->labels, r->nlabels);
    memset(r, 0, sizeof(*r));
}

static int nonce_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 16 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '_'))
            return 0;
    }
    return 1;
}

int tp_decode_register(const char *body, size_t len, struct tp_register *out,
                       exa_error_t *err)
{
    static const char what[] = "register";
    json_t *o = load_obj(what, body, len, 0, err);
    const json_t *slurm, *res;
    struct tp_register r;
    if (!o)
        return -1;
    memset(&r, 0, sizeof(r));
    if (get_int(what, o, "protocol", 0, 1LL << 31, 0, 1, &r.protocol, err) < 0)
        goto fail;
    if (r.protocol != TP_PROTOCOL) {
        out->protocol = r.protocol;
        json_decref(o);
        return exa_err(err, EXA_EUSAGE, "protocol %lld is not supported",
                       r.protocol);
    }
    if (get_name(what, o, "worker_id", 1, &r.worker_id, err) < 0 ||
        get_str(what, o, "join_token", 2048, 0, &r.join_token, err) < 0 ||
        get_str(what, o, "register_nonce", 64, 1, &r.register_nonce, err) < 0)
        goto fail;
    if (!nonce_ok(r.register_nonce)) {
        exa_err(err, EXA_EPARSE,
                "%s: 'register_nonce' must be 16 to 64 characters of "
                "[A-Za-z0-9_-]",
                what);
        goto fail;
    }
    if (get_str(what, o, "exa_version", 64, 0, &r.exa_version, err) < 0 ||
        get_str(what, o, "host", 255, 0, &r.host, err) < 0 ||
        get_int(what, o, "pid", 0, 1LL << 31, 0, 0, &r.pid, err) < 0 ||
        get_int(what, o, "capacity", 1, 1024, 1, 0, &r.capacity, err) < 0 ||
        get_names(what, o, "labels", 64, &r.labels, &r.nlabels, err) < 0)
        goto fail;
    slurm = json_object_get(o, "slurm");
    if (slurm && !json_is_null(slurm)) {
        if (!json_is_object(slurm)) {
            exa_err(err, EXA_EPARSE, "%s: 'slurm' must be an object", what);
            goto fail;
        }
        if (get_name("register slurm", slurm, "job_id", 0, &r.slurm_job_id,
                     err) < 0 ||
            get_int("register slurm", slurm, "restart_count", 0, 1 << 20, 0, 0,
                    &r.restart_count, err) < 0 ||
            get_str("register slurm", slurm, "node", 255, 0, &r.node, err) <
                0 ||
            get_num("register slurm", slurm, "end_time", 0, 1e11, 0,
                    &r.end_time, err) < 0)
            goto fail;
    }
    res = json_object_get(o, "resources");
    r.cpus = 1;
    if (res && !json_is_null(res)) {
        if (!json_is_object(res)) {
            exa_err(err, EXA_EPARSE, "%s: 'resources' must be an object", what);
            goto fail;
        }
        if (get_int("register resources", res, "cpus", 1, 1 << 20, 1, 0,
                    &r.cpus, err) < 0 ||
            get_int("register resources", res, "gpus", 0, 1 << 16, 0, 0,
                    &r.gpus, err) < 0 ||
            get_int("register resources", res, "ram_mb", 0, 1LL << 40, 0, 0,
                    &r.ram_mb, err) < 0)
            goto fail;
    }
    json_decref(o);
    *out = r;
    return 0;
fail:
    json_decref(o);
    tp_register_release(&r);
    return -1;
}

/* ---- heartbeat, lease, results, reason ---- */

void tp_heartbeat_release(struct tp_heartbeat *h)
{
    free(h->running);
    memset(h, 0, sizeof(*h));
}

int tp_decode_heartbeat(const char *body, size_t len, struct tp_heartbeat *out,
                        exa_error_t *err)
{
    static const char what[] = "heartbeat";
    json_t *o = load_obj(what, body, len, 1, err);
    const json_t *run;
    struct tp_heartbeat h;
    if (!o)
        return -1;
    memset(&h, 0, sizeof(h));
    if (get_int(what, o, "free_slots", 0, 1024, 0, 0, &h.free_slots, err) < 0)
        goto fail;
    run = json_object_get(o, "running");
    if (run && !json_is_null(run)) {
        if (!json_is_array(run) || json_array_size(run) > 4096) {
            exa_err(err, EXA_EPARSE,
                    "%s: 'running' must be an array of at most 4096", what);
            goto fail;
        }
        h.nrunning = json_array_size(run);
        h.running = xcalloc(h.nrunning + 1, sizeof(*h.running));
        for (size_t i = 0; i < h.nrunning; i++) {
            const json_t *e = json_array_get(run, i);
            long long alive;
            if (!json_is_object(e) ||
                get_int(what, e, "task", 1, 1LL << 62, 0, 1, &h.running[i].task,
                        err) < 0 ||
                get_int(what, e, "attempt", 1, 1LL << 31, 0, 1,
                        &h.running[i].attempt, err) < 0) {
                if (!json_is_object(e))
                    exa_err(err, EXA_EPARSE,
                            "%s: 'running' entry %zu must be an object", what,
                            i);
                goto fail;
            }
            alive = 1;
            if (json_is_boolean(json_object_get(e, "pid_alive")))
                alive = json_is_true(json_object_get(e, "pid_alive"));
            h.running[i].pid_alive = (int)alive;
        }
    }
    json_decref(o);
    *out = h;
    return 0;
fail:
    json_decref(o);
    tp_heartbeat_release(&h);
    return -1;
}

int tp_decode_lease(const char *body, size_t len, long long *want,
                    exa_error_t *err)
{
    json_t *o = load_obj("lease", body, len, 1, err);
    int rc;
    if (!o)
        return -1;
    rc = get_int("lease", o, "want", 1, 256, 1, 0, want, err);
    json_decref(o);
    return rc;
}

static void result_release(struct tp_result *r)
{
    free(r->idem);
    free(r->stdout_tail);
    free(r->stderr_tail);
    for (size_t i = 0; i < r->nartifacts; i++)
        free(r->artifacts[i].name);
    free(r->artifacts);
    memset(r, 0, sizeof(*r));
}

void tp_results_release(struct tp_results *r)
{
    for (size_t i = 0; i < r->n; i++)
        result_release(&r->v[i]);
    free(r->v);
    memset(r, 0, sizeof(*r));
}

static int decode_result(const json_t *e, struct tp_result *r, exa_error_t *err)
{
    static const char what[] = "results";
    const json_t *arts;
    char want[64];
    memset(r, 0, sizeof(*r));
    if (!json_is_object(e))
        return exa_err(err, EXA_EPARSE, "%s: each result must be an object",
                       what);
    if (get_int(what, e, "task_id", 1, 1LL << 62, 0, 1, &r->task, err) < 0 ||
        get_int(what, e, "attempt", 1, 1LL << 31, 0, 1, &r->attempt, err) < 0 ||
        get_str(what, e, "idem", 63, 1, &r->idem, err) < 0 ||
        get_int(what, e, "exit_code", -1, 255, 0, 1, &r->exit_code, err) < 0 ||
        get_int(what, e, "signal", 0, 128, 0, 0, &r->signal, err) < 0 ||
        get_num(what, e, "started_at", 0, 1e11, 0, &r->started_at, err) < 0 ||
        get_num(what, e, "ended_at", 0, 1e11, 0, &r->ended_at, err) < 0 ||
        get_str(what, e, "stdout_tail", TP_TAIL_MAX, 0, &r->stdout_tail, err) <
            0 ||
        get_str(what, e, "stderr_tail", TP_TAIL_MAX, 0, &r->stderr_tail, err) <
            0)
        goto fail;
    xsnprintf(want, sizeof(want), "%lld:%lld", r->task, r->attempt);
    if (strcmp(want, r->idem)) {
        exa_err(err, EXA_EPARSE, "%s: 'idem' must be \"%s\"", what, want);
        goto fail;
    }
    arts = json_object_get(e, "artifacts");
    if (arts && !json_is_null(arts)) {
        if (!json_is_array(arts) || json_array_size(arts) > 256) {
            exa_err(err, EXA_EPARSE,
                    "%s: 'artifacts' must be an array of at most 256", what);
            goto fail;
        }
        r->artifacts =
            xcalloc(json_array_size(arts) + 1, sizeof(*r->artifacts));
        for (size_t i = 0; i < json_array_size(arts); i++) {
            const json_t *a = json_array_get(arts, i);
            char *sha = NULL;
            struct tp_artifact_ref *ref = &r->artifacts[i];
            if (!json_is_object(a)) {
                exa_err(err, EXA_EPARSE, "%s: each artifact must be an object",
                        what);
                goto fail;
            }
            r->nartifacts = i + 1;
            if (get_name(what, a, "name", 1, &ref->name, err) < 0 ||
                get_str(what, a, "sha256", 64, 1, &sha, err) < 0 ||
                get_int(what, a, "size", 0, 1LL << 50, 0, 1, &ref->size, err) <
                    0) {
                free(sha);
                goto fail;
            }
            if (!tp_sha256_ok(sha)) {
                free(sha);
                exa_err(err, EXA_EPARSE,
                        "%s: artifact 'sha256' must be 64 lower-case hex "
                        "digits",
                        what);
                goto fail;
            }
            memcpy(ref->sha256, sha, 65);
            free(sha);
        }
    }
    return 0;
fail:
    result_release(r);
    return -1;
}

int tp_decode_results(const char *body, size_t len, struct tp_results *out,
                      exa_error_t *err)
{
    json_t *o = load_obj("results", body, len, 0, err);
    const json_t *a;
    struct tp_results rs = {NULL, 0};
    if (!o)
        return -1;
    a = json_object_get(o, "results");
    if (!json_is_array(a) || json_array_size(a) == 0 ||
        json_array_size(a) > 256) {
        json_decref(o);
        return exa_err(err, EXA_EPARSE,
                       "results: 'results' must be an array of 1 to 256");
    }
    rs.v = xcalloc(json_array_size(a), sizeof(*rs.v));
    for (size_t i = 0; i < json_array_size(a); i++) {
        if (decode_result(json_array_get(a, i), &rs.v[i], err) < 0) {
            tp_results_release(&rs);
            json_decref(o);
            return -1;
        }
        rs.n = i + 1;
    }
    json_decref(o);
    *out = rs;
    return 0;
}

int tp_decode_reason(const char *body, size_t len, char **reason,
                     exa_error_t *err)
{
    json_t *o = load_obj("reason", body, len, 1, err);
    char *r = NULL;
    if (!o)
        return -1;
    if (get_str("reason", o, "reason", 64, 0, &r, err) < 0) {
        json_decref(o);
        return -1;
    }
    json_decref(o);
    if (r && !tp_name_ok(r)) {
        free(r);
        return exa_err(err, EXA_EPARSE,
                       "reason: 'reason' must be a word of [A-Za-z0-9._-]");
    }
    *reason = r ? r : xstrdup("unspecified");
    return 0;
}
