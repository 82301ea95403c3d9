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
 * shapes are those of doc/formats.md.
 *
 * Hostlists and FSD are read by the shared src/libhostlist and
 * src/libutil/duration.c, so Slurm and Flux agree on both.
 *
 * This file holds the small pieces the other readers build on: job ids,
 * states, wait statuses, FSD, idsets, hostlists, table cutting and the
 * helpers of parse_flux_int.h. `flux jobs` tables live in
 * parse_flux_jobs.c, its JSON in parse_flux_jobs_json.c, the eventlog and
 * its state summary in parse_flux_eventlog.c, accounting in
 * parse_flux_acct.c.
 */
#include "libsched/parse_flux.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libsched/parse_flux_int.h"
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
int flux_parse_f58_plain(const char *s, uint64_t *id)
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
                while (i < len && ((unsigned char)buf[i] < 0x40 ||
                                   (unsigned char)buf[i] > 0x7e))
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
    static const struct {
        const char *tok, *norm;
    } map[] = {
        {"NEW", "PENDING"},         {"D", "PENDING"},
        {"DEPEND", "PENDING"},      {"P", "PENDING"},
        {"PRIORITY", "PENDING"},    {"S", "PENDING"},
        {"SCHED", "PENDING"},       {"R", "RUNNING"},
        {"RUN", "RUNNING"},         {"C", "RUNNING"},
        {"CLEANUP", "RUNNING"},     {"CD", "COMPLETED"},
        {"COMPLETED", "COMPLETED"}, {"F", "FAILED"},
        {"FAILED", "FAILED"},       {"CA", "CANCELLED"},
        {"CANCELED", "CANCELLED"},  {"CANCELLED", "CANCELLED"},
        {"TO", "TIMEOUT"},          {"TIMEOUT", "TIMEOUT"},
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
    *secs =
        (double)days * 86400.0 + (double)h * 3600.0 + (double)m * 60.0 + sec;
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
        if (parse_range(s + i, j - i, &lo, &hi, &w) < 0 ||
            hi - lo > IDSET_MAX || *n + (size_t)(hi - lo) > IDSET_MAX) {
            *ids = v; /* caller frees what was grown */
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

/* Whitespace tokens of line with their byte and code point spans. */
size_t flux_tokenize(const char *s, size_t len, struct flux_tok **out)
{
    struct flux_tok *v = NULL;
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
    struct flux_tok *t;
    size_t n = flux_tokenize(hdr, len, &t);

    h->ncols = n;
    h->names = xcalloc(n ? n : 1, sizeof(char *));
    h->start = xcalloc(n ? n : 1, sizeof(size_t));
    h->end = xcalloc(n ? n : 1, sizeof(size_t));
    h->by_token = 0;
    h->aligned = (len && (hdr[0] == ' ' || hdr[0] == '\t')) ||
                 memmem(hdr, len, "  ", 2) != NULL;
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

void flux_table_row(const struct flux_table_hdr *h, const char *row, size_t len,
                    char **cells)
{
    struct flux_tok *t;
    size_t n = flux_tokenize(row, len, &t), col = 0;
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

/* ---- helpers shared by parse_flux*.c (parse_flux_int.h) --------------- */

/* Split buf into lines (without "\n" / "\r\n"). */
size_t flux_split_lines(const char *buf, size_t len, struct flux_line **out)
{
    struct flux_line *v = NULL;
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

int flux_is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return 0;
    return 1;
}

/* Parse a whole-string integer; "-" and the like give -1. */
int flux_parse_ll(const char *s, long long *v)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return (errno || *end || end == s) ? -1 : 0;
}

int flux_parse_dbl(const char *s, double *v)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    *v = strtod(s, &end);
    return (errno || *end || end == s || !isfinite(*v)) ? -1 : 0;
}

json_t *flux_nodelist_json(const char *s)
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

json_t *flux_exception_json(const char *type, long long sev, const char *note)
{
    json_t *e = json_object();
    jx_set(e, "type", jx_str(type));
    jx_set(e, "severity", sev >= 0 ? json_integer(sev) : json_null());
    jx_set(e, "note", jx_str(note));
    return e;
}

/* Build one job record from a table row. */
