/*
 * parse_flux.c - exa's own reading of Flux command output.
 *
 * Flux prints human tables from Python format strings
 * ("{id.f58:>12} {username:<8.8} ..."), so a row's cells sit under their
 * header words, right- or left-aligned, but a cell may be empty, may hold
 * a space ("Mar29 17:28") and may overflow its width (an untruncated
 * RANKS idset, flux-core#4269). Counting whitespace tokens gets all three
 * wrong, so tables are cut by display position (code points, because the
 * UTF-8 'ƒ' of F58 ids is two bytes but one column) and each token goes
 * to the header word it overlaps, or the nearest one to its right.
 *
 * Flux facts used here: F58 ids (RFC 19), idsets (RFC 22), Flux Standard
 * Duration (RFC 23), eventlog (RFC 18) and the job-manager state machine
 * (RFC 21), R (RFC 20), POSIX wait statuses (waitpid(2)). The normalized
 * shapes are those of shared/cases/FORMAT.md.
 *
 * Hostlists and FSD are read by the shared src/libhostlist and
 * src/libutil/duration.c, so Slurm and Flux agree on both.
 */
#include "libsched/parse_flux.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libhostlist/hostlist.h"
#include "libutil/duration.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* ---- job ids ---------------------------------------------------------- */

static const char f58_alphabet[] =
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/* id.hex "0x1c0f2c000000" (after the 0x) or id.dothex
 * "0000.1c0f.2c00.0000" (dots skipped). */
static int parse_hex_id(const char *s, uint64_t *id, int dotted)
{
    uint64_t v = 0;
    int digits = 0;
    for (; *s; s++) {
        int d;
        if (dotted && *s == '.')
            continue;
        if (!isxdigit((unsigned char)*s) || ++digits > 16)
            return -1;
        d = isdigit((unsigned char)*s) ? *s - '0'
                                       : tolower((unsigned char)*s) - 'a' + 10;
        v = (v << 4) | (uint64_t)d;
    }
    if (!digits)
        return -1;
    *id = v;
    return 0;
}

/* F58 digits with no prefix (`{id.f58plain}`). */
static int parse_f58_plain(const char *s, uint64_t *id)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        const char *q = strchr(f58_alphabet, *s);
        uint64_t d;
        if (!q)
            return -1;
        d = (uint64_t)(q - f58_alphabet);
        if (v > (UINT64_MAX - d) / 58)
            return -1;
        v = v * 58 + d;
    }
    *id = v;
    return 0;
}

int flux_jobid_parse(const char *s, uint64_t *id)
{
    const unsigned char *p = (const unsigned char *)s;
    uint64_t v = 0;

    if (!s || !*s)
        return -1;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        return parse_hex_id(s + 2, id, 0);
    if (strlen(s) == 19 && s[4] == '.' && s[9] == '.' && s[14] == '.')
        return parse_hex_id(s, id, 1);
    if (isdigit(*p)) {
        for (; *p; p++) {
            if (!isdigit(*p))
                return -1;
            if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
                return -1;
            v = v * 10 + (uint64_t)(*p - '0');
        }
        *id = v;
        return 0;
    }
    if (p[0] == 0xC6 && p[1] == 0x92)
        p += 2;
    else if (!strncmp((const char *)p, "\\306\\222", 8))
        p += 8;
    else if (!strncmp((const char *)p, "\xC3\x86\xE2\x80\x99", 5))
        p += 5;
    else if (p[0] == 'f' || p[0] == '_')
        p += 1;
    else
        return -1;
    if (!*p)
        return -1;
    for (; *p; p++) {
        const char *q = *p ? strchr(f58_alphabet, *p) : NULL;
        uint64_t d;
        if (!q)
            return -1;
        d = (uint64_t)(q - f58_alphabet);
        if (v > (UINT64_MAX - d) / 58)
            return -1;
        v = v * 58 + d;
    }
    *id = v;
    return 0;
}

void flux_strip_ansi(const char *buf, size_t len, struct strbuf *out)
{
    size_t i = 0;
    while (i < len) {
        const char *esc = memchr(buf + i, 0x1b, len - i);
        size_t e = esc ? (size_t)(esc - buf) : len;
        strbuf_add(out, buf + i, e - i);
        i = e;
        if (i < len) {
            i++;
            if (i < len && buf[i] == '[') {
                i++;
                while (i < len && ((unsigned char)buf[i] < 0x40
                                   || (unsigned char)buf[i] > 0x7e))
                    i++;
                if (i < len)
                    i++;
            }
        }
    }
}

void flux_jobid_f58(uint64_t id, char *buf, size_t len)
{
    char tmp[16];
    size_t n = 0, o = 0;

    do {
        tmp[n++] = f58_alphabet[id % 58];
        id /= 58;
    } while (id && n < sizeof(tmp));
    if (len < n + 3)
        BUG("f58 buffer too small");
    buf[o++] = (char)0xC6;
    buf[o++] = (char)0x92;
    while (n)
        buf[o++] = tmp[--n];
    buf[o] = '\0';
}

/* ---- states, wait status, durations ---------------------------------- */

const char *flux_state_normalize(const char *tok)
{
    static const struct { const char *tok, *norm; } map[] = {
        { "NEW", "PENDING" },      { "D", "PENDING" },
        { "DEPEND", "PENDING" },   { "P", "PENDING" },
        { "PRIORITY", "PENDING" }, { "S", "PENDING" },
        { "SCHED", "PENDING" },    { "R", "RUNNING" },
        { "RUN", "RUNNING" },      { "C", "RUNNING" },
        { "CLEANUP", "RUNNING" },  { "CD", "COMPLETED" },
        { "COMPLETED", "COMPLETED" }, { "F", "FAILED" },
        { "FAILED", "FAILED" },    { "CA", "CANCELLED" },
        { "CANCELED", "CANCELLED" }, { "CANCELLED", "CANCELLED" },
        { "TO", "TIMEOUT" },       { "TIMEOUT", "TIMEOUT" },
    };
    if (!tok)
        return "UNKNOWN";
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcasecmp(tok, map[i].tok))
            return map[i].norm;
    return "UNKNOWN";
}

void flux_waitstatus_decode(long long status, int *exit_code, int *signal)
{
    *exit_code = -1;
    *signal = -1;
    if (status < 0)
        return;
    if ((status & 0x7f) == 0)
        *exit_code = (int)((status >> 8) & 0xff);
    else if ((status & 0x7f) != 0x7f)
        *signal = (int)(status & 0x7f);
}

/*
 * "H:MM:SS", "D day, H:MM:SS" or "D days, H:MM:SS": the text of Python's
 * str(datetime.timedelta), which flux-jobs prints for the !H conversion
 * ({runtime!H}, {t_remaining!H}). Returns 0 and *secs, or -1.
 */
static int hms_parse(const char *s, double *secs)
{
    long long days = 0, h, m;
    double sec;
    char *end;
    const char *p = s;

    while (*p == ' ')
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    h = strtoll(p, &end, 10);
    if (*end == ' ') {
        /* "1 day, " / "2 days, " */
        days = h;
        p = end + 1;
        if (!strncmp(p, "days, ", 6))
            p += 6;
        else if (!strncmp(p, "day, ", 5))
            p += 5;
        else
            return -1;
        if (!isdigit((unsigned char)*p))
            return -1;
        h = strtoll(p, &end, 10);
    }
    if (*end != ':' || !isdigit((unsigned char)end[1]))
        return -1;
    p = end + 1;
    m = strtoll(p, &end, 10);
    if (end - p != 2 || *end != ':' || !isdigit((unsigned char)end[1]) ||
        m > 59)
        return -1;
    p = end + 1;
    sec = strtod(p, &end);
    if (end - p < 2 || sec >= 60 || !isfinite(sec))
        return -1;
    while (*end == ' ')
        end++;
    if (*end)
        return -1;
    *secs = (double)days * 86400.0 + (double)h * 3600.0 + (double)m * 60.0
            + sec;
    return 0;
}

int flux_fsd_parse(const char *s, double *secs)
{
    double v;
    if (s && hms_parse(s, &v) == 0) {
        *secs = v;
        return 0;
    }
    /* "-" (no value) and "inf" (no limit) are not elapsed times */
    if (!s || fsd_parse(s, &v) < 0 || !isfinite(v) || v < 0)
        return -1;
    *secs = v;
    return 0;
}

/* ---- idsets and hostlists --------------------------------------------- */

#define IDSET_MAX 1000000

static int parse_range(const char *s, size_t n, long long *lo, long long *hi,
                       int *width)
{
    char buf[64];
    char *dash, *end;

    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)buf[i]) && buf[i] != '-')
            return -1;
    dash = strchr(buf, '-');
    if (dash)
        *dash = '\0';
    if (!isdigit((unsigned char)buf[0]))
        return -1;
    *width = (int)strlen(buf);
    errno = 0;
    *lo = strtoll(buf, &end, 10);
    if (errno || *end)
        return -1;
    if (dash) {
        if (!isdigit((unsigned char)dash[1]))
            return -1;
        *hi = strtoll(dash + 1, &end, 10);
        if (errno || *end)
            return -1;
    } else {
        *hi = *lo;
    }
    return *hi < *lo ? -1 : 0;
}

int flux_idset_expand(const char *s, long long **ids, size_t *n)
{
    size_t len = strlen(s), i = 0, alloc = *n;
    long long *v = *ids;

    if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
        s++;
        len -= 2;
    }
    while (i < len) {
        size_t j = i;
        long long lo, hi;
        int w;
        while (j < len && s[j] != ',')
            j++;
        if (parse_range(s + i, j - i, &lo, &hi, &w) < 0
            || hi - lo > IDSET_MAX
            || *n + (size_t)(hi - lo) > IDSET_MAX) {
            *ids = v;   /* caller frees what was grown */
            return -1;
        }
        for (long long x = lo; x <= hi; x++) {
            ALLOC_GROW(v, *n + 1, alloc);
            v[(*n)++] = x;
        }
        i = j + 1;
    }
    *ids = v;
    return 0;
}

int flux_hostlist_expand(const char *s, struct strvec *out)
{
    return hostlist_expand(s, out, 0, NULL) < 0 ? -1 : 0;
}

/* ---- table cutting ---------------------------------------------------- */

struct tok {
    size_t b0, b1;   /* byte span */
    size_t c0, c1;   /* code point span [c0, c1) */
};

/* Whitespace tokens of line with their byte and code point spans. */
static size_t tokenize(const char *s, size_t len, struct tok **out)
{
    struct tok *v = NULL;
    size_t n = 0, alloc = 0, cp = 0, i = 0;

    while (i < len) {
        if (s[i] == ' ' || s[i] == '\t') {
            i++;
            cp++;
            continue;
        }
        ALLOC_GROW(v, n + 1, alloc);
        v[n].b0 = i;
        v[n].c0 = cp;
        while (i < len && s[i] != ' ' && s[i] != '\t') {
            if (((unsigned char)s[i] & 0xC0) != 0x80)
                cp++;
            i++;
        }
        v[n].b1 = i;
        v[n].c1 = cp;
        n++;
    }
    *out = v;
    return n;
}

size_t flux_table_hdr_init(struct flux_table_hdr *h, const char *hdr,
                           size_t len)
{
    struct tok *t;
    size_t n = tokenize(hdr, len, &t);

    h->ncols = n;
    h->names = xcalloc(n ? n : 1, sizeof(char *));
    h->start = xcalloc(n ? n : 1, sizeof(size_t));
    h->end = xcalloc(n ? n : 1, sizeof(size_t));
    h->by_token = 0;
    h->aligned = (len && (hdr[0] == ' ' || hdr[0] == '\t'))
                 || memmem(hdr, len, "  ", 2) != NULL;
    for (size_t i = 0; i < n; i++) {
        h->names[i] = xstrndup(hdr + t[i].b0, t[i].b1 - t[i].b0);
        h->start[i] = t[i].c0;
        h->end[i] = t[i].c1;
    }
    free(t);
    return n;
}

void flux_table_hdr_release(struct flux_table_hdr *h)
{
    for (size_t i = 0; i < h->ncols; i++)
        free(h->names[i]);
    free(h->names);
    free(h->start);
    free(h->end);
    memset(h, 0, sizeof(*h));
}

void flux_table_row(const struct flux_table_hdr *h, const char *row,
                    size_t len, char **cells)
{
    struct tok *t;
    size_t n = tokenize(row, len, &t), col = 0;
    size_t *b0, *b1;

    b0 = xcalloc(h->ncols ? h->ncols : 1, sizeof(size_t));
    b1 = xcalloc(h->ncols ? h->ncols : 1, sizeof(size_t));
    for (size_t c = 0; c < h->ncols; c++) {
        cells[c] = NULL;
        b0[c] = SIZE_MAX;
    }
    if (h->ncols && (h->by_token || (!h->aligned && n == h->ncols))) {
        /* token order; a synthesized header's last column takes the rest */
        size_t k = n < h->ncols ? n : h->ncols;
        for (size_t c = 0; c < k; c++) {
            size_t e = (c + 1 == h->ncols) ? t[n - 1].b1 : t[c].b1;
            cells[c] = xstrndup(row + t[c].b0, e - t[c].b0);
        }
        n = 0;
    }
    for (size_t i = 0; i < n && h->ncols; i++) {
        size_t best = SIZE_MAX, bestd = SIZE_MAX;
        for (size_t c = col; c < h->ncols; c++)
            if (t[i].c0 < h->end[c] && h->start[c] < t[i].c1) {
                best = c;
                break;
            }
        if (best == SIZE_MAX) {
            for (size_t c = col; c < h->ncols; c++) {
                size_t d = t[i].c0 >= h->end[c] ? t[i].c0 - h->end[c]
                                                 : h->start[c] - t[i].c1;
                if (d < bestd) {
                    bestd = d;
                    best = c;
                }
            }
        }
        col = best;
        if (b0[col] == SIZE_MAX)
            b0[col] = t[i].b0;
        b1[col] = t[i].b1;
    }
    for (size_t c = 0; c < h->ncols && n; c++)
        if (b0[c] != SIZE_MAX)
            cells[c] = xstrndup(row + b0[c], b1[c] - b0[c]);
    free(b0);
    free(b1);
    free(t);
}

/* ---- small helpers ---------------------------------------------------- */

struct line {
    const char *s;
    size_t len;
};

/* Split buf into lines (without "\n" / "\r\n"). */
static size_t split_lines(const char *buf, size_t len, struct line **out)
{
    struct line *v = NULL;
    size_t n = 0, alloc = 0, i = 0;

    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - buf) : len, l = e - i;
        if (l && buf[i + l - 1] == '\r')
            l--;
        ALLOC_GROW(v, n + 1, alloc);
        v[n].s = buf + i;
        v[n].len = l;
        n++;
        i = e + 1;
    }
    *out = v;
    return n;
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return 0;
    return 1;
}

/* Parse a whole-string integer; "-" and the like give -1. */
static int parse_ll(const char *s, long long *v)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return (errno || *end || end == s) ? -1 : 0;
}

static int parse_dbl(const char *s, double *v)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    *v = strtod(s, &end);
    return (errno || *end || end == s || !isfinite(*v)) ? -1 : 0;
}

static json_t *int_or_null(const char *s)
{
    long long v;
    return parse_ll(s, &v) == 0 ? json_integer(v) : json_null();
}

static json_t *nodelist_json(const char *s)
{
    struct strvec sv = STRVEC_INIT;
    json_t *a = json_array();

    if (s && *s && strcmp(s, "-")) {
        if (flux_hostlist_expand(s, &sv) < 0)
            json_array_append_new(a, jx_str(s));
        for (size_t i = 0; i < sv.nr; i++)
            json_array_append_new(a, jx_str(sv.v[i]));
    }
    strvec_clear(&sv);
    return a;
}

/* ---- flux jobs -------------------------------------------------------- */

static int is_pending_norm(const char *norm)
{
    return !strcmp(norm, "PENDING");
}

/* "2 running, 0 completed, 0 failed, 0 pending" (flux jobs --stats). */
static json_t *parse_stats_line(const char *s, size_t len,
                                const char *instance)
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
            else if (!isdigit(c) && c != '_' && c != '.' && c != '-'
                     && c != ':' && c != '%')
                return 0;
            i++;
        }
    }
    return ntok > 0 && letters > 0;
}

/* "ƒByFye1Xm:" starts a --recursive section; returns the id text. */
static char *section_line(const char *s, size_t len)
{
    struct tok *t;
    size_t n = tokenize(s, len, &t);
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
    static const char *const marks[] = { "ERROR", "error:", "Unable to",
                                         "No such", "not found",
                                         "Permission denied", "usage:",
                                         NULL };
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
    if (!cell || !strcmp(cell, "-"))
        return;
    if (parse_dbl(cell, &v) == 0 && v > 0)
        jx_set(job, key, jx_real(v));
    else
        jx_set(job, textkey, jx_str(cell));
}

static const char *col_value(const struct flux_table_hdr *h, char **cells,
                             const char *name)
{
    for (size_t i = 0; i < h->ncols; i++)
        if (!strcmp(h->names[i], name))
            return cells[i] ? cells[i] : "";
    return NULL;
}

static json_t *exception_json(const char *type, long long sev,
                              const char *note)
{
    json_t *e = json_object();
    jx_set(e, "type", jx_str(type));
    jx_set(e, "severity", sev >= 0 ? json_integer(sev) : json_null());
    jx_set(e, "note", jx_str(note));
    return e;
}

/* Build one job record from a table row. */
static json_t *job_from_row(const struct flux_table_hdr *h, char **cells,
                            const char *instance, int has_sections,
                            int allow_plain)
{
    json_t *job = json_object();
    const char *v, *raw = NULL, *norm = NULL;
    uint64_t id;
    long long n;
    double d;
    int ex = -1, sig = -1, has_rc = 0;
    long long rc = 0;

    v = col_value(h, cells, "JOBID");
    if (v && *v) {
        jx_set(job, "id", jx_str(v));
        jx_set(job, "id_decimal",
               flux_jobid_parse(v, &id) == 0
                       || (allow_plain && parse_f58_plain(v, &id) == 0)
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
        if (res && *res && strcmp(res, "-")
            && (!st || !strcasecmp(st, "INACTIVE") || !strcmp(st, "I")))
            raw = res;
        else
            raw = st;
    }
    if (raw) {
        norm = flux_state_normalize(raw);
        if (!strcasecmp(raw, "INACTIVE") || !strcmp(raw, "I"))
            norm = "UNKNOWN";
    }
    if ((v = col_value(h, cells, "RC")) && parse_ll(v, &rc) == 0) {
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
    if ((v = col_value(h, cells, "WSTATUS")) && parse_ll(v, &n) == 0)
        flux_waitstatus_decode(n, &ex, &sig);

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
    if ((v = col_value(h, cells, "NGPUS")) && parse_ll(v, &n) == 0)
        jx_set(job, "gpus", json_integer(n));
    set_time(job, "start", "start_text", col_value(h, cells, "T_RUN"));
    set_time(job, "end", "end_text", col_value(h, cells, "T_INACTIVE"));
    set_time(job, "submit", "submit_text", col_value(h, cells, "T_SUBMIT"));

    if ((v = col_value(h, cells, "USER")))
        jx_set(job, "user", jx_str(*v ? v : NULL));
    if ((v = col_value(h, cells, "UID")))
        jx_set(job, "userid", int_or_null(v));
    if ((v = col_value(h, cells, "NAME")))
        jx_set(job, "name", jx_str(*v ? v : NULL));
    if ((v = col_value(h, cells, "QUEUE")))
        jx_set(job, "queue", jx_str(*v && strcmp(v, "-") ? v : NULL));
    if ((v = col_value(h, cells, "NTASKS")))
        jx_set(job, "ntasks", int_or_null(v));
    if ((v = col_value(h, cells, "NNODES")))
        jx_set(job, "nnodes", int_or_null(v));
    if ((v = col_value(h, cells, "NCORES")))
        jx_set(job, "ncores", int_or_null(v));
    if ((v = col_value(h, cells, "URG")) && parse_ll(v, &n) == 0) {
        jx_set(job, "urgency", json_integer(n));
        jx_set(job, "held", json_boolean(n == 0));
    }
    if ((v = col_value(h, cells, "PRI")))
        jx_set(job, "priority", int_or_null(v));
    if ((v = col_value(h, cells, "NODELIST")))
        jx_set(job, "nodelist", nodelist_json(v));
    if ((v = col_value(h, cells, "RANKS")))
        jx_set(job, "ranks", jx_str(*v ? v : NULL));
    if ((v = col_value(h, cells, "INFO")) && *v && norm
        && !is_pending_norm(norm) && !json_object_get(job, "nodelist"))
        jx_set(job, "nodelist", nodelist_json(v));
    if ((v = col_value(h, cells, "EXCEPTION-TYPE")) && *v && strcmp(v, "-"))
        jx_set(job, "exception",
               exception_json(v, -1, col_value(h, cells, "EXCEPTION-NOTE")));
    if (has_rc)
        jx_set(job, "returncode", json_integer(rc));
    if (has_sections)
        jx_set(job, "instance", jx_str(instance));
    return job;
}

/* Old JSON state encoding (a bit per state, RFC 21 order). */
static const char *json_state_name(const json_t *st)
{
    static const char *names[] = { "NEW",  "DEPEND",  "PRIORITY", "SCHED",
                                   "RUN",  "CLEANUP", "INACTIVE" };
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
    } else if (json_is_string(v) && flux_jobid_parse(json_string_value(v),
                                                      &id) == 0) {
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
    jx_set(job, "start", json_is_number(v) && json_number_value(v) > 0
                             ? jx_real(json_number_value(v))
                             : json_null());
    v = json_object_get(o, "t_inactive");
    jx_set(job, "end", json_is_number(v) && json_number_value(v) > 0
                           ? jx_real(json_number_value(v))
                           : json_null());
    v = json_object_get(o, "runtime");
    jx_set(job, "elapsed_s",
           json_is_number(v) && json_object_get(o, "t_run")
               ? jx_real(json_number_value(v))
               : json_null());
    v = json_object_get(o, "ngpus");
    jx_set(job, "gpus", json_is_integer(v) ? json_integer(
                                                 json_integer_value(v))
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
    jx_set(job, "nodelist", nodelist_json(jx_get_str(o, "nodelist", NULL)));
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
    v = json_object_get(o, "exception");
    if (json_is_object(v) && json_is_true(json_object_get(v, "occurred")))
        jx_set(job, "exception",
               exception_json(jx_get_str(v, "type", NULL),
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
    const json_t *arr = json_is_object(doc) ? json_object_get(doc, "jobs")
                                            : doc;
    if (json_is_array(arr)) {
        json_array_foreach(arr, i, e)
            if (json_is_object(e))
                json_array_append_new(jobs, job_from_json(e));
    } else if (json_is_object(doc)) {
        json_array_append_new(jobs, job_from_json(doc));
    }
}

/* Whether any row under hdr (lines from index i to the next header) has
 * an id with a prefix or in decimal: then prefix-less text in the JOBID
 * column is junk (a stray message), not an `{id.f58plain}` id. */
static int table_has_prefixed_ids(const struct flux_table_hdr *hdr,
                                  const struct line *lines, size_t n,
                                  size_t i)
{
    int found = 0;
    for (; i < n && !found; i++) {
        char **cells;
        const char *idv;
        uint64_t id;
        if (is_blank(lines[i].s, lines[i].len))
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
    static const char *const ab[] = { "D", "P", "S", "R", "C", "CD", "F",
                                      "CA", "TO", "I", NULL };
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
                                  const struct tok *t, size_t nt,
                                  const char *instance, int has_sections)
{
    static const char *const cols4[] = { "JOBID", "USER", "NAME", "ST",
                                         "NTASKS", "NNODES", "TIME",
                                         "INFO" };
    static const char *const cols5[] = { "JOBID", "QUEUE", "USER", "NAME",
                                         "ST", "NTASKS", "NNODES", "TIME",
                                         "INFO" };
    struct flux_table_hdr h = { 0 };
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
        cells[nc - 1] = xstrndup(s + t[nc - 1].b0, t[nt - 1].b1
                                                       - t[nc - 1].b0);
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
static json_t *guess_format_row(const char *s, const struct tok *t, size_t nt,
                                const char *instance, int has_sections)
{
    struct flux_table_hdr h = { 0 };
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

static json_t *flux_jobs_json(const char *buf, size_t len, exa_error_t *err)
{
    json_error_t jerr;
    json_t *doc = json_loadb(buf, len, JSON_DECODE_ANY, &jerr);
    json_t *jobs = json_array(), *res;

    if (doc) {
        add_json_jobs(jobs, doc);
        json_decref(doc);
    } else {
        struct line *lines;
        size_t n = split_lines(buf, len, &lines);
        for (size_t i = 0; i < n; i++) {
            if (is_blank(lines[i].s, lines[i].len))
                continue;
            doc = json_loadb(lines[i].s, lines[i].len, JSON_DECODE_ANY,
                             &jerr);
            if (!doc) {
                free(lines);
                json_decref(jobs);
                exa_err(err, EXA_EPARSE,
                        "flux jobs JSON line %zu: %s", i + 1, jerr.text);
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

static json_t *flux_jobs_parse_clean(const char *buf, size_t len,
                                     const char **errkind, exa_error_t *err);

json_t *flux_jobs_parse(const char *buf, size_t len, const char **errkind,
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
    struct line *lines;
    size_t n, i = 0;
    struct flux_table_hdr hdr = { 0 };
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

    n = split_lines(buf, len, &lines);
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

        if (is_blank(s, l))
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
            if (!idv || flux_jobid_parse(idv, &id) == 0
                || (allow_plain && parse_f58_plain(idv, &id) == 0))
                json_array_append_new(
                    jobs, job_from_row(&hdr, cells, instance, has_sections,
                                       allow_plain));
            else if (unknown_job_line(s, l, &unknown_id))
                unknown = 1;
            for (size_t c = 0; c < hdr.ncols; c++)
                free(cells[c]);
            free(cells);
            continue;
        }
        /* no header: `flux batch` / `flux submit` print the bare id */
        {
            struct tok *t;
            size_t nt = tokenize(s, l, &t);
            char *tokv = nt == 1 ? xstrndup(s + t[0].b0, t[0].b1 - t[0].b0)
                                 : NULL;
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

    if (parse_ll(v, &i) == 0)
        r = json_integer(i);
    else if ((isdigit((unsigned char)v[0]) || v[0] == '-' || v[0] == '.')
             && parse_dbl(v, &d) == 0)
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
    jx_set(ev, "t", json_is_number(ts) ? jx_real(json_number_value(ts))
                                       : json_null());
    jx_set(ev, "context", json_is_object(ctx) ? json_deep_copy(ctx)
                                              : json_object());
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
    struct line *lines;
    size_t n = split_lines(buf, len, &lines);
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
        offsets = parse_dbl(v, &t) == 0 && t >= 0 && t < 1e8;
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
                have_off = parse_dbl(v, &off) == 0;
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
            if (parse_dbl(v, &t) == 0) {
                have_t = 1;
                if (offsets) {
                    human = 1;
                    have_off = 1;
                    off = t;
                }
            }
            else if (parse_iso(s + t0, i - t0, &t) == 0)
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
        if (strstr(l, "unknown job") || strstr(l, "not found")
            || strstr(l, "No such file or directory")
            || (strstr(l, "JobID ") && strstr(l, " unknown")))
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

enum fstate { F_NEW, F_DEPEND, F_PRIORITY, F_SCHED, F_RUN, F_CLEANUP,
              F_INACTIVE };

static const char *fstate_name[] = { "NEW", "DEPEND", "PRIORITY", "SCHED",
                                     "RUN", "CLEANUP", "INACTIVE" };

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

    json_array_foreach(events, i, ev) {
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
                    exc = exception_json(jx_get_str(ctx, "type", NULL), sev,
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

/* ---- accounting ------------------------------------------------------- */

static double event_t(const json_t *events, const char *name)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        const json_t *t = json_object_get(ev, "t");
        if (!strcmp(jx_get_str(ev, "name", ""), name) && json_is_number(t))
            return json_number_value(t);
    }
    return -1;
}

static long long idset_count(const char *s)
{
    long long *ids = NULL;
    size_t n = 0;
    if (!s || !*s)
        return 0;
    if (flux_idset_expand(s, &ids, &n) < 0) {
        free(ids);
        return -1;
    }
    free(ids);
    return (long long)n;
}

int flux_job_accounting(const json_t *eventlog, const json_t *R,
                        struct flux_job_acct *acct, exa_error_t *err)
{
    const json_t *events = json_object_get(eventlog, "events");
    double submit, alloc, start, finish;

    acct->nodes = acct->cores = acct->gpus = -1;
    acct->queue_seconds = acct->run_seconds = -1;
    acct->cpu_hours = acct->gpu_hours = -1;
    if (!json_is_array(events))
        events = eventlog;
    submit = event_t(events, "submit");
    alloc = event_t(events, "alloc");
    start = event_t(events, "start");
    finish = event_t(events, "finish");
    if (alloc < 0)
        alloc = start;
    if (submit >= 0 && alloc >= submit)
        acct->queue_seconds = alloc - submit;
    if (start >= 0 && finish >= start)
        acct->run_seconds = finish - start;

    if (R) {
        const json_t *exec = json_object_get(R, "execution");
        const json_t *lite = json_object_get(exec, "R_lite"), *e;
        size_t i;
        if (!json_is_array(lite))
            return exa_err(err, EXA_EPARSE,
                           "R has no execution.R_lite array");
        acct->nodes = acct->cores = acct->gpus = 0;
        json_array_foreach(lite, i, e) {
            const json_t *ch = json_object_get(e, "children");
            long long nr = idset_count(jx_get_str(e, "rank", NULL));
            long long nc = idset_count(jx_get_str(ch, "core", NULL));
            long long ng = idset_count(jx_get_str(ch, "gpu", NULL));
            if (nr < 0 || nc < 0 || ng < 0)
                return exa_err(err, EXA_EPARSE,
                               "R_lite entry %zu has a bad idset", i);
            acct->nodes += nr;
            acct->cores += nr * nc;
            acct->gpus += nr * ng;
        }
        if (acct->run_seconds >= 0) {
            acct->cpu_hours = (double)acct->cores * acct->run_seconds / 3600;
            acct->gpu_hours = (double)acct->gpus * acct->run_seconds / 3600;
        }
    }
    return 0;
}
