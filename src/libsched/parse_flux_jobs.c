/*
 * parse_flux_jobs.c - `flux jobs` text output: default and custom -o
 * tables, tables without a header, --recursive sections, the --stats
 * line and the error lines flux prints for unknown ids.
 *
 * Rows are cut by header position (flux_table_row in parse_flux.c) and
 * turned into the job records of doc/formats.md; output that
 * starts with '{' or '[' is handed to the JSON reader of
 * parse_flux_jobs_json.c. Format: flux-jobs(1).
 */
#include "libsched/parse_flux.h"

#include <ctype.h>
#include <errno.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_flux_int.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

static json_t *int_or_null(const char *s)
{
    long long v;
    return flux_parse_ll(s, &v) == 0 ? json_integer(v) : json_null();
}

/* ---- flux jobs -------------------------------------------------------- */

static int is_pending_norm(const char *norm)
{
    return !strcmp(norm, "PENDING");
}

/* "2 running, 0 completed, 0 failed, 0 pending" (flux jobs --stats). */
static json_t *parse_stats_line(const char *s, size_t len, const char *instance)
{
    char *copy = xstrndup(s, len), *p = copy;
    json_t *o = json_object();
    int pairs = 0;

    jx_set(o, "instance", jx_str(instance));
    for (;;) {
        char *end, word[32];
        long long v;
        size_t w = 0;
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        errno = 0;
        v = strtoll(p, &end, 10);
        if (end == p || errno || *end != ' ')
            goto fail;
        p = end + 1;
        while (isalpha((unsigned char)p[w]) && w < sizeof(word) - 1) {
            word[w] = p[w];
            w++;
        }
        word[w] = '\0';
        if (!w || (p[w] && p[w] != ',' && p[w] != ' '))
            goto fail;
        p += w;
        jx_set(o, word, json_integer(v));
        pairs++;
    }
    free(copy);
    if (pairs < 2) {
        json_decref(o);
        return NULL;
    }
    return o;
fail:
    free(copy);
    json_decref(o);
    return NULL;
}

/* A header: every token upper-case letters, digits, _ . - and not an id. */
static int is_header_line(const char *s, size_t len)
{
    int letters = 0, ntok = 0;
    size_t i = 0;

    while (i < len) {
        if (s[i] == ' ' || s[i] == '\t') {
            i++;
            continue;
        }
        ntok++;
        while (i < len && s[i] != ' ' && s[i] != '\t') {
            unsigned char c = (unsigned char)s[i];
            if (isupper(c))
                letters++;
            else if (!isdigit(c) && c != '_' && c != '.' && c != '-' &&
                     c != ':' && c != '%')
                return 0;
            i++;
        }
    }
    return ntok > 0 && letters > 0;
}

/* "ƒByFye1Xm:" starts a --recursive section; returns the id text. */
static char *section_line(const char *s, size_t len)
{
    struct flux_tok *t;
    size_t n = flux_tokenize(s, len, &t);
    char *id = NULL;
    uint64_t v;

    if (n == 1 && t[0].b1 - t[0].b0 > 1 && s[t[0].b1 - 1] == ':') {
        /* deeper levels print the path of ids: "ƒA/ƒB:" */
        struct strvec parts = STRVEC_INIT;
        id = xstrndup(s + t[0].b0, t[0].b1 - t[0].b0 - 1);
        strvec_split(&parts, id, '/');
        for (size_t i = 0; i < parts.nr; i++)
            if (flux_jobid_parse(parts.v[i], &v) < 0) {
                free(id);
                id = NULL;
                break;
            }
        strvec_clear(&parts);
    }
    free(t);
    return id;
}

/* A diagnostic rather than output ("flux-jobs: ERROR: Unable to ..."). */
static int looks_like_error(const char *s, size_t len)
{
    static const char *const marks[] = {
        "ERROR",   "error:",    "Unable to",
        "No such", "not found", "Permission denied",
        "usage:",  NULL};
    char *l = xstrndup(s, len);
    int hit = 0;
    for (size_t i = 0; marks[i] && !hit; i++)
        hit = strstr(l, marks[i]) != NULL;
    free(l);
    return hit;
}

/* Error text flux jobs prints for an id it does not know. */
static int unknown_job_line(const char *s, size_t len, uint64_t *id)
{
    char *l = xstrndup(s, len), *p;
    int hit = 0;

    *id = 0;
    if ((p = strstr(l, "JobID ")) && strstr(p, " unknown")) {
        char *q = p + 6, *e = strchr(q, ' ');
        hit = 1;
        if (e) {
            *e = '\0';
            if (flux_jobid_parse(q, id) < 0)
                *id = 0;
        }
    } else if (strstr(l, "unknown job id") || strstr(l, "unknown jobid")) {
        hit = 1;
    }
    free(l);
    return hit;
}

static void set_time(json_t *job, const char *key, const char *textkey,
                     const char *cell)
{
    double v;
    if (!cell || !*cell || !strcmp(cell, "-"))
        return;
    if (flux_parse_dbl(cell, &v) == 0) {
        /* flux prints 0.0 for a time that has not happened yet */
        if (v > 0)
            jx_set(job, key, jx_real(v));
    } else {
        jx_set(job, textkey, jx_str(cell));
    }
}

static const char *col_value(const struct flux_table_hdr *h, char **cells,
                             const char *name)
{
    for (size_t i = 0; i < h->ncols; i++)
        if (!strcmp(h->names[i], name))
            return cells[i] ? cells[i] : "";
    return NULL;
}

static json_t *job_from_row(const struct flux_table_hdr *h, char **cells,
                            const char *instance, int has_sections,
                            int allow_plain)
{
    json_t *job = json_object();
    const char *v, *raw = NULL, *norm = NULL;
    uint64_t id;
    long long n;
    double d;
    int ex = -1, sig = -1, has_rc = 0, ws_failed = -1;
    long long rc = 0;

    v = col_value(h, cells, "JOBID");
    if (v && *v) {
        jx_set(job, "id", jx_str(v));
        jx_set(job, "id_decimal",
               flux_jobid_parse(v, &id) == 0 ||
                       (allow_plain && flux_parse_f58_plain(v, &id) == 0)
                   ? json_integer((json_int_t)id)
                   : json_null());
    } else {
        jx_set(job, "id", json_null());
    }

    /* state: status (abbrev) first, then result, then the bare state */
    if ((v = col_value(h, cells, "ST")) && *v)
        raw = v;
    else if ((v = col_value(h, cells, "STATUS")) && *v)
        raw = v;
    if (!raw) {
        const char *st = col_value(h, cells, "STATE");
        const char *s1 = col_value(h, cells, "S");
        const char *rs = col_value(h, cells, "RS");
        const char *res = col_value(h, cells, "RESULT");
        if (!st || !*st)
            st = s1 && *s1 ? s1 : NULL;
        if (rs && *rs && strcmp(rs, "-"))
            res = rs;
        if (res && *res && strcmp(res, "-") &&
            (!st || !strcasecmp(st, "INACTIVE") || !strcmp(st, "I")))
            raw = res;
        else
            raw = st;
    }
    if (raw) {
        norm = flux_state_normalize(raw);
        if (!strcasecmp(raw, "INACTIVE") || !strcmp(raw, "I"))
            norm = "UNKNOWN";
    }
    if ((v = col_value(h, cells, "RC")) && flux_parse_ll(v, &rc) == 0) {
        has_rc = 1;
        if (rc >= 0)
            ex = (int)rc;
        else if (rc != -128)
            sig = (int)-rc;
        if (!raw) {
            raw = rc == 0 ? "CD" : rc == -128 ? "CA" : "F";
            norm = flux_state_normalize(raw);
        }
    }
    if ((v = col_value(h, cells, "WSTATUS")) && flux_parse_ll(v, &n) == 0) {
        flux_waitstatus_decode(n, &ex, &sig);
        ws_failed = n ? 1 : 0;
    }
    /* an inactive job's raw_state is its result word, as the status
     * column prints it: from the exception type, else the exit status */
    if (raw && (!strcasecmp(raw, "INACTIVE") || !strcmp(raw, "I"))) {
        const char *et = col_value(h, cells, "EXCEPTION-TYPE");
        if (et && !strcmp(et, "cancel"))
            raw = "CANCELED";
        else if (et && !strcmp(et, "timeout"))
            raw = "TIMEOUT";
        else if (has_rc)
            raw = rc == 0 ? "COMPLETED" : rc == -128 ? "CANCELED" : "FAILED";
        else if (ws_failed >= 0)
            raw = ws_failed ? "FAILED" : "COMPLETED";
        if (strcasecmp(raw, "INACTIVE") && strcmp(raw, "I"))
            norm = flux_state_normalize(raw);
    }

    jx_set(job, "state", jx_str(norm));
    if (raw)
        jx_set(job, "raw_state", jx_str(raw));
    jx_set(job, "exit_code", ex >= 0 ? json_integer(ex) : json_null());
    if (sig >= 0)
        jx_set(job, "signal", json_integer(sig));
    jx_set(job, "start", json_null());
    jx_set(job, "end", json_null());
    jx_set(job, "elapsed_s", json_null());
    jx_set(job, "gpus", json_null());

    if ((v = col_value(h, cells, "RUNTIME")) && flux_fsd_parse(v, &d) == 0)
        jx_set(job, "elapsed_s", jx_real(d));
    if ((v = col_value(h, cells, "TIME")) && flux_fsd_parse(v, &d) == 0) {
        /* contextual_time: runtime once running, the duration before */
        if (norm && is_pending_norm(norm))
            jx_set(job, "time_limit_s", d > 0 ? jx_real(d) : json_null());
        else
            jx_set(job, "elapsed_s", jx_real(d));
    }
    if ((v = col_value(h, cells, "DURATION")) && flux_fsd_parse(v, &d) == 0)
        jx_set(job, "time_limit_s", d > 0 ? jx_real(d) : json_null());
    if ((v = col_value(h, cells, "NGPUS")) && flux_parse_ll(v, &n) == 0)
        jx_set(job, "gpus", json_integer(n));
    set_time(job, "start", "start_text", col_value(h, cells, "T_RUN"));
    set_time(job, "end", "end_text", col_value(h, cells, "T_INACTIVE"));
    set_time(job, "submit", "submit_text", col_value(h, cells, "T_SUBMIT"));

    /* a column that exists with an empty cell is "", not null */
    if ((v = col_value(h, cells, "USER")))
        jx_set(job, "user", jx_str(v));
    if ((v = col_value(h, cells, "UID")))
        jx_set(job, "userid", int_or_null(v));
    if ((v = col_value(h, cells, "NAME")))
        jx_set(job, "name", jx_str(v));
    if ((v = col_value(h, cells, "QUEUE")))
        jx_set(job, "queue", jx_str(strcmp(v, "-") ? v : NULL));
    if ((v = col_value(h, cells, "NTASKS")))
        jx_set(job, "ntasks", int_or_null(v));
    if ((v = col_value(h, cells, "NNODES")))
        jx_set(job, "nnodes", int_or_null(v));
    if ((v = col_value(h, cells, "NCORES")))
        jx_set(job, "ncores", int_or_null(v));
    if ((v = col_value(h, cells, "URG")) && flux_parse_ll(v, &n) == 0) {
        jx_set(job, "urgency", json_integer(n));
        jx_set(job, "held", json_boolean(n == 0));
    }
    if ((v = col_value(h, cells, "PRI")))
        jx_set(job, "priority", int_or_null(v));
    if ((v = col_value(h, cells, "NODELIST")))
        jx_set(job, "nodelist", flux_nodelist_json(v));
    if ((v = col_value(h, cells, "RANKS")))
        jx_set(job, "ranks", jx_str(*v ? v : NULL));
    if ((v = col_value(h, cells, "INFO")) && *v && norm &&
        !is_pending_norm(norm) && !json_object_get(job, "nodelist"))
        jx_set(job, "nodelist", flux_nodelist_json(v));
    /* a pending job's contextual_info is why it waits ("held",
     * "priority-wait", "depend"; flux-jobs(1) contextual_info) */
    if ((v = col_value(h, cells, "INFO")) && *v && strcmp(v, "-") && norm &&
        is_pending_norm(norm))
        jx_set(job, "reason", jx_str(v));
    if ((v = col_value(h, cells, "EXCEPTION-TYPE")) && *v && strcmp(v, "-"))
        jx_set(
            job, "exception",
            flux_exception_json(v, -1, col_value(h, cells, "EXCEPTION-NOTE")));
    if (has_rc)
        jx_set(job, "returncode", json_integer(rc));
    if (has_sections)
        jx_set(job, "instance", jx_str(instance));
    return job;
}

static int table_has_prefixed_ids(const struct flux_table_hdr *hdr,
                                  const struct flux_line *lines, size_t n,
                                  size_t i)
{
    int found = 0;
    for (; i < n && !found; i++) {
        char **cells;
        const char *idv;
        uint64_t id;
        if (flux_is_blank(lines[i].s, lines[i].len))
            continue;
        if (is_header_line(lines[i].s, lines[i].len))
            break;
        cells = xcalloc(hdr->ncols ? hdr->ncols : 1, sizeof(char *));
        flux_table_row(hdr, lines[i].s, lines[i].len, cells);
        idv = col_value(hdr, cells, "JOBID");
        if (!idv || flux_jobid_parse(idv, &id) == 0)
            found = 1;
        for (size_t c = 0; c < hdr->ncols; c++)
            free(cells[c]);
        free(cells);
    }
    return found;
}

static int is_status_abbrev(const char *s)
{
    static const char *const ab[] = {"D", "P",  "S",  "R", "C", "CD",
                                     "F", "CA", "TO", "I", NULL};
    for (size_t i = 0; ab[i]; i++)
        if (!strcmp(s, ab[i]))
            return 1;
    return 0;
}

/*
 * A row of `flux jobs --no-header` in the default format
 * "JOBID [QUEUE] USER NAME ST NTASKS NNODES TIME INFO": found by its ST
 * token (status abbreviation) in position 3 or 4 after a job id.
 */
static json_t *default_format_row(const char *s, size_t l,
                                  const struct flux_tok *t, size_t nt,
                                  const char *instance, int has_sections)
{
    static const char *const cols4[] = {"JOBID",  "USER",   "NAME", "ST",
                                        "NTASKS", "NNODES", "TIME", "INFO"};
    static const char *const cols5[] = {"JOBID",  "QUEUE", "USER",
                                        "NAME",   "ST",    "NTASKS",
                                        "NNODES", "TIME",  "INFO"};
    struct flux_table_hdr h = {0};
    const char *const *cols;
    char **cells, *first, *st;
    size_t k = 0, nc;
    uint64_t id;
    json_t *job = NULL;

    if (nt < 7)
        return NULL;
    first = xstrndup(s + t[0].b0, t[0].b1 - t[0].b0);
    if (flux_jobid_parse(first, &id) < 0) {
        free(first);
        return NULL;
    }
    free(first);
    for (size_t c = 3; c <= 4 && !k; c++) {
        st = xstrndup(s + t[c].b0, t[c].b1 - t[c].b0);
        if (is_status_abbrev(st) && nt >= c + 4)
            k = c;
        free(st);
    }
    if (!k)
        return NULL;
    cols = k == 3 ? cols4 : cols5;
    nc = k == 3 ? 8 : 9;
    h.ncols = nc;
    h.names = (char **)cols;
    cells = xcalloc(nc, sizeof(char *));
    for (size_t c = 0; c < nc - 1; c++)
        cells[c] = xstrndup(s + t[c].b0, t[c].b1 - t[c].b0);
    if (nt > nc - 1)
        cells[nc - 1] = xstrndup(s + t[nc - 1].b0, t[nt - 1].b1 - t[nc - 1].b0);
    (void)l;
    job = job_from_row(&h, cells, instance, has_sections, 0);
    for (size_t c = 0; c < nc; c++)
        free(cells[c]);
    free(cells);
    return job;
}

/*
 * A row of `flux jobs --no-header -o FORMAT` in a format other than the
 * default: a job id first, then cells named by their shape alone, since
 * nothing else says what they are. An upper-case status word gives STATUS
 * (ST when abbreviated, "CD"), the first duration with a unit, a dot or
 * a colon ("0.057s", "1:02:03") gives RUNTIME; other cells are left out.
 * Returns the job or NULL when the row does not start with a job id or
 * has no status.
 */
static json_t *guess_format_row(const char *s, const struct flux_tok *t,
                                size_t nt, const char *instance,
                                int has_sections)
{
    struct flux_table_hdr h = {0};
    char **cells, *first;
    const char **names;
    uint64_t id;
    int have_st = 0, have_rt = 0;
    json_t *job = NULL;

    if (nt < 2 || nt > 64)
        return NULL;
    first = xstrndup(s + t[0].b0, t[0].b1 - t[0].b0);
    if (flux_jobid_parse(first, &id) < 0) {
        free(first);
        return NULL;
    }
    names = xcalloc(nt, sizeof(*names));
    cells = xcalloc(nt, sizeof(char *));
    cells[0] = first;
    names[0] = "JOBID";
    for (size_t c = 1; c < nt; c++) {
        char *v = xstrndup(s + t[c].b0, t[c].b1 - t[c].b0);
        int upper = 1;
        double d;
        cells[c] = v;
        names[c] = "-";
        for (const char *q = v; *q; q++)
            if (!isupper((unsigned char)*q))
                upper = 0;
        if (!have_st && upper && strcmp(flux_state_normalize(v), "UNKNOWN")) {
            names[c] = strlen(v) <= 2 ? "ST" : "STATUS";
            have_st = 1;
        } else if (!have_rt && isdigit((unsigned char)v[0]) &&
                   strpbrk(v, "smhd.:") && flux_fsd_parse(v, &d) == 0) {
            names[c] = "RUNTIME";
            have_rt = 1;
        }
    }
    if (have_st) {
        h.ncols = nt;
        h.names = (char **)names;
        job = job_from_row(&h, cells, instance, has_sections, 0);
    }
    for (size_t c = 0; c < nt; c++)
        free(cells[c]);
    free(cells);
    free(names);
    return job;
}

static json_t *flux_jobs_parse_clean(const char *buf, size_t len,
                                     const char **errkind, exa_error_t *err);

json_t *flux_jobs_parse(const char *buf, size_t len, const char **errkind,
                        exa_error_t *err)
{
    return flux_jobs_parse_format(buf, len, NULL, errkind, err);
}

/* Tables, --json and bare ids: everything but a separated format. */
static json_t *parse_text(const char *buf, size_t len, const char **errkind,
                          exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *res;
    if (!memchr(buf, 0x1b, len))
        return flux_jobs_parse_clean(buf, len, errkind, err);
    flux_strip_ansi(buf, len, &sb);
    res = flux_jobs_parse_clean(sb.buf, sb.len, errkind, err);
    strbuf_release(&sb);
    return res;
}

static json_t *flux_jobs_parse_clean(const char *buf, size_t len,
                                     const char **errkind, exa_error_t *err)
{
    struct flux_line *lines;
    size_t n, i = 0;
    struct flux_table_hdr hdr = {0};
    int have_hdr = 0, has_sections = 0, unknown = 0, allow_plain = 0;
    char *errline = NULL;
    uint64_t unknown_id = 0;
    char *instance = NULL;
    json_t *jobs, *stats, *res;

    *errkind = "parse_error";
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    if (i < len && (buf[i] == '{' || buf[i] == '['))
        return flux_jobs_json(buf + i, len - i, err);

    n = flux_split_lines(buf, len, &lines);
    for (i = 0; i < n; i++) {
        char *sec = section_line(lines[i].s, lines[i].len);
        if (sec) {
            has_sections = 1;
            free(sec);
        }
    }
    jobs = json_array();
    stats = json_array();
    for (i = 0; i < n; i++) {
        const char *s = lines[i].s;
        size_t l = lines[i].len;
        json_t *st;
        char *sec;
        uint64_t id;

        if (flux_is_blank(s, l))
            continue;
        if ((sec = section_line(s, l))) {
            free(instance);
            instance = sec;
            continue;
        }
        if ((st = parse_stats_line(s, l, instance))) {
            json_array_append_new(stats, st);
            continue;
        }
        if (is_header_line(s, l)) {
            if (have_hdr)
                flux_table_hdr_release(&hdr);
            flux_table_hdr_init(&hdr, s, l);
            have_hdr = 1;
            allow_plain = !table_has_prefixed_ids(&hdr, lines, n, i + 1);
            continue;
        }
        if (have_hdr) {
            char **cells = xcalloc(hdr.ncols, sizeof(char *));
            const char *idv;
            flux_table_row(&hdr, s, l, cells);
            idv = col_value(&hdr, cells, "JOBID");
            if (!idv || flux_jobid_parse(idv, &id) == 0 ||
                (allow_plain && flux_parse_f58_plain(idv, &id) == 0))
                json_array_append_new(jobs,
                                      job_from_row(&hdr, cells, instance,
                                                   has_sections, allow_plain));
            else if (unknown_job_line(s, l, &unknown_id))
                unknown = 1;
            for (size_t c = 0; c < hdr.ncols; c++)
                free(cells[c]);
            free(cells);
            continue;
        }
        /* no header: `flux batch` / `flux submit` print the bare id */
        {
            struct flux_tok *t;
            size_t nt = flux_tokenize(s, l, &t);
            char *tokv =
                nt == 1 ? xstrndup(s + t[0].b0, t[0].b1 - t[0].b0) : NULL;
            json_t *job;
            if (tokv && flux_jobid_parse(tokv, &id) == 0) {
                job = json_object();
                jx_set(job, "id", jx_str(tokv));
                jx_set(job, "id_decimal", json_integer((json_int_t)id));
                json_array_append_new(jobs, job);
            } else if ((job = default_format_row(s, l, t, nt, instance,
                                                 has_sections))) {
                json_array_append_new(jobs, job);
            } else if ((job = guess_format_row(s, t, nt, instance,
                                               has_sections))) {
                json_array_append_new(jobs, job);
            } else if (unknown_job_line(s, l, &unknown_id)) {
                unknown = 1;
            } else if (!errline && looks_like_error(s, l)) {
                errline = xstrndup(s, l);
            }
            free(tokv);
            free(t);
        }
    }
    free(instance);
    free(lines);
    if (have_hdr)
        flux_table_hdr_release(&hdr);
    if (errline && !unknown && json_array_size(jobs) == 0) {
        json_decref(jobs);
        json_decref(stats);
        *errkind = "flux_error";
        exa_err(err, EXA_ESCHED, "flux jobs: %s", errline);
        free(errline);
        return NULL;
    }
    free(errline);
    if (unknown && json_array_size(jobs) == 0) {
        json_decref(jobs);
        json_decref(stats);
        *errkind = "unknown_job";
        if (unknown_id)
            return exa_err(err, EXA_ENOTFOUND,
                           "flux jobs: job id '%llu' unknown",
                           (unsigned long long)unknown_id),
                   NULL;
        exa_err(err, EXA_ENOTFOUND, "flux jobs: unknown job id");
        return NULL;
    }
    res = json_object();
    jx_set(res, "jobs", jobs);
    if (json_array_size(stats))
        jx_set(res, "stats", stats);
    else
        json_decref(stats);
    return res;
}

/* ---- formats with a separator (exa's own queries) --------------------- */

/* flux-jobs(1) field name -> the header flux prints for it. */
static const char *field_header(const char *f)
{
    static const struct {
        const char *field, *hdr;
    } map[] = {
        {"id", "JOBID"},
        {"userid", "UID"},
        {"username", "USER"},
        {"urgency", "URG"},
        {"priority", "PRI"},
        {"state", "STATE"},
        {"state_single", "S"},
        {"name", "NAME"},
        {"queue", "QUEUE"},
        {"ntasks", "NTASKS"},
        {"ncores", "NCORES"},
        {"duration", "DURATION"},
        {"nnodes", "NNODES"},
        {"ranks", "RANKS"},
        {"nodelist", "NODELIST"},
        {"result", "RESULT"},
        {"result_abbrev", "RS"},
        {"waitstatus", "WSTATUS"},
        {"returncode", "RC"},
        {"runtime", "RUNTIME"},
        {"status", "STATUS"},
        {"status_abbrev", "ST"},
        {"t_submit", "T_SUBMIT"},
        {"t_run", "T_RUN"},
        {"t_inactive", "T_INACTIVE"},
        {"contextual_time", "TIME"},
        {"contextual_info", "INFO"},
        {"exception.type", "EXCEPTION-TYPE"},
        {"exception.note", "EXCEPTION-NOTE"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(f, map[i].field))
            return map[i].hdr;
    return NULL;
}

int flux_jobs_format_fields(const char *format, struct strvec *fields,
                            char *sep)
{
    const char *p = format;
    int seen_sep = 0;

    *sep = 0;
    while (p && *p) {
        const char *o = strchr(p, '{'), *c, *e;
        char *name, *hdr;
        if (!o)
            break;
        if (fields->nr) {
            /* the literal text between two fields: one separator byte */
            if (o - p != 1 || (seen_sep && *sep != *p))
                return -1;
            *sep = *p;
            seen_sep = 1;
        }
        if (!(c = strchr(o, '}')))
            return -1;
        for (e = o + 1; e < c && *e != ':' && *e != '!'; e++)
            ;
        name = xstrndup(o + 1, (size_t)(e - o - 1));
        /* id.f58, id.dec ...: the id */
        if (!strncmp(name, "id.", 3))
            name[2] = '\0';
        hdr = field_header(name) ? xstrdup(field_header(name)) : NULL;
        if (!hdr) {
            hdr = name;
            name = NULL;
            for (char *q = hdr; *q; q++)
                *q = (char)toupper((unsigned char)*q);
        }
        strvec_push(fields, hdr);
        free(hdr);
        free(name);
        p = c + 1;
    }
    if (p && *p)
        return -1;
    return fields->nr && (fields->nr == 1 || seen_sep) ? 0 : -1;
}

/* Rows cut at sep (no header line): one job each. */
static json_t *parse_separated(const char *buf, size_t len,
                               const struct strvec *fields, char sep,
                               const char **errkind, exa_error_t *err)
{
    struct flux_line *lines;
    size_t n = flux_split_lines(buf, len, &lines);
    struct flux_table_hdr h = {0};
    json_t *jobs = json_array(), *res;
    int unknown = 0;
    char *errline = NULL;
    uint64_t unknown_id = 0;

    h.ncols = fields->nr;
    h.names = (char **)fields->v;
    for (size_t i = 0; i < n; i++) {
        const char *s = lines[i].s;
        size_t l = lines[i].len, c = 0, b = 0;
        char **cells;
        uint64_t id;

        if (flux_is_blank(s, l))
            continue;
        if (!memchr(s, sep, l) && fields->nr > 1) {
            /* a diagnostic on the same stream ("JobID f1 unknown") */
            if (unknown_job_line(s, l, &unknown_id))
                unknown = 1;
            else if (!errline && looks_like_error(s, l))
                errline = xstrndup(s, l);
            continue;
        }
        cells = xcalloc(fields->nr, sizeof(char *));
        for (size_t k = 0; k <= l && c < fields->nr; k++) {
            if (k == l || s[k] == sep) {
                /* the last field keeps any further separators */
                if (k < l && c + 1 == fields->nr)
                    continue;
                cells[c++] = k > b ? xstrndup(s + b, k - b) : NULL;
                b = k + 1;
            }
        }
        if (cells[0] && flux_jobid_parse(cells[0], &id) == 0)
            json_array_append_new(jobs, job_from_row(&h, cells, NULL, 0, 0));
        for (size_t k = 0; k < fields->nr; k++)
            free(cells[k]);
        free(cells);
    }
    free(lines);
    if (!json_array_size(jobs) && (errline || unknown)) {
        json_decref(jobs);
        *errkind = unknown ? "unknown_job" : "flux_error";
        if (unknown)
            exa_err(err, EXA_ENOTFOUND, "flux jobs: unknown job id");
        else
            exa_err(err, EXA_ESCHED, "flux jobs: %s", errline);
        free(errline);
        return NULL;
    }
    free(errline);
    res = json_object();
    jx_set(res, "jobs", jobs);
    return res;
}

json_t *flux_jobs_parse_format(const char *buf, size_t len, const char *format,
                               const char **errkind, exa_error_t *err)
{
    struct strvec fields = STRVEC_INIT;
    char sep = 0;
    json_t *res;

    if (!format && memchr(buf, 0x1f, len))
        format = FLUX_JOBS_STATUS_FORMAT;
    if (!format || flux_jobs_format_fields(format, &fields, &sep) < 0 ||
        sep == ' ' || sep == '\t' || sep == '\n' ||
        (sep && !memchr(buf, sep, len))) {
        strvec_clear(&fields);
        return parse_text(buf, len, errkind, err);
    }
    *errkind = "parse_error";
    if (!sep)
        sep = 0x1f;
    res = parse_separated(buf, len, &fields, sep, errkind, err);
    strvec_clear(&fields);
    return res;
}

int flux_submit_ids(const char *buf, size_t len, struct strvec *ids)
{
    struct flux_line *lines;
    size_t n = flux_split_lines(buf, len, &lines);

    for (size_t i = 0; i < n; i++) {
        struct flux_tok *t;
        size_t nt = flux_tokenize(lines[i].s, lines[i].len, &t);
        uint64_t id;
        if (nt == 1) {
            char *v = xstrndup(lines[i].s + t[0].b0, t[0].b1 - t[0].b0);
            if (flux_jobid_parse(v, &id) == 0)
                strvec_push(ids, v);
            free(v);
        }
        free(t);
    }
    free(lines);
    return (int)ids->nr;
}
