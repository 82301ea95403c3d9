/*
 * pm100.c - the PM100 CSV loader and split (see pm100.h).
 *
 * Bad data is sorted into two kinds. A row that is well formed but has no
 * usable target (the job drew no recorded power, or ran on zero nodes) is
 * normal in a job table: it is skipped and counted, as the reference's
 * filtering did. A row that is not well formed (wrong field count, text
 * where a number belongs) means the file is not what the user thinks it
 * is: that stops the load with the line number, rather than training on
 * a silently shrunken table.
 */
#include "libpipeline/pm100.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libpipeline/csv.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/timeutil.h"
#include "libutil/xalloc.h"

enum {
    C_JOB_ID,
    C_USER_ID,
    C_NODES_REQ,
    C_NODES_ALLOC,
    C_SUBMIT,
    C_POWER,
    NCOL
};
static const char *const col_names[NCOL] = {
    "job_id",          "user_id",     "num_nodes_req",
    "num_nodes_alloc", "submit_time", "node_power_consumption",
};

static char *trimmed(const char *s)
{
    const char *e = s + strlen(s);
    while (isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    return xstrndup(s, (size_t)(e - s));
}

/*
 * Mean of the power samples in s. Returns 1 with *mean set, 0 when the
 * field holds no samples, 2 when one is not finite ("nan", 1e309), -1 for
 * text that is not a number.
 */
static int power_mean(const char *s, double *mean, const char **bad)
{
    double sum = 0;
    size_t n = 0;
    int nonfinite = 0;
    const char *p = s;

    while (isspace((unsigned char)*p))
        p++;
    if (*p == '[')
        p++;
    for (;;) {
        char *end;
        double v;
        while (isspace((unsigned char)*p) || *p == ';' || *p == ',')
            p++;
        if (!*p || *p == ']')
            break;
        errno = 0;
        v = strtod(p, &end);
        if (end == p) {
            *bad = p;
            return -1;
        }
        if (*end && !isspace((unsigned char)*end) && *end != ';' &&
            *end != ',' && *end != ']') {
            *bad = p;
            return -1;
        }
        if (!isfinite(v))
            nonfinite = 1;
        else {
            sum += v;
            n++;
        }
        p = end;
    }
    if (*p == ']') {
        p++;
        while (isspace((unsigned char)*p))
            p++;
        if (*p) {
            *bad = p;
            return -1;
        }
    }
    if (nonfinite)
        return 2;
    if (!n)
        return 0;
    *mean = sum / (double)n;
    return 1;
}

/* "2", "2.0", " 2 " -> 2 (integral numbers only). 0 empty, -1 bad. */
static int parse_count(const char *s, long long *out)
{
    char *end;
    double v;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return 0;
    errno = 0;
    v = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (end == s || *end || !isfinite(v) || v != floor(v) || fabs(v) > 1e15)
        return -1;
    *out = (long long)v;
    return 1;
}

static int header_map(const struct strvec *h, int idx[NCOL], size_t line,
                      exa_error_t *err)
{
    for (int c = 0; c < NCOL; c++) {
        idx[c] = -1;
        for (size_t i = 0; i < h->nr; i++) {
            char *name = trimmed(h->v[i]);
            /* A UTF-8 byte order mark may precede the first name. */
            const char *n = name;
            if (i == 0 && starts_with(n, "\xEF\xBB\xBF"))
                n += 3;
            if (!strcmp(n, col_names[c]))
                idx[c] = (int)i;
            free(name);
        }
        if (idx[c] < 0)
            return exa_err(err, EXA_EPARSE,
                           "line %zu: header has no '%s' column (need "
                           "job_id, user_id, num_nodes_req, num_nodes_alloc, "
                           "submit_time, node_power_consumption)",
                           line, col_names[c]);
    }
    return 0;
}

const char *pm100_skip_reason(enum pm100_skip why)
{
    switch (why) {
    case PM100_SKIP_NO_POWER:
        return "no power samples";
    case PM100_SKIP_NONFINITE_POWER:
        return "non-finite power sample";
    case PM100_SKIP_NONPOSITIVE_POWER:
        return "zero or negative power";
    case PM100_SKIP_NO_NODES:
        return "no allocated nodes";
    case PM100_SKIP_NO_SUBMIT_TIME:
        return "no submit_time";
    case PM100_NSKIP:
        break;
    }
    return "unknown";
}

/* Parse one record; 1 usable (row filled), 0 skipped (*why set), -1
 * error. */
static int parse_row(const struct strvec *f, const int idx[NCOL], size_t line,
                     struct pm100_row *row, enum pm100_skip *why,
                     exa_error_t *err)
{
    const char *bad = NULL;
    char *sub = trimmed(f->v[idx[C_SUBMIT]]);
    long long alloc = 0, req = 0;
    double mean = 0;
    int r;
    time_t t;

    r = parse_count(f->v[idx[C_NODES_ALLOC]], &alloc);
    if (r < 0) {
        free(sub);
        return exa_err(err, EXA_EPARSE,
                       "line %zu: num_nodes_alloc '%.32s' is not a whole "
                       "number",
                       line, f->v[idx[C_NODES_ALLOC]]);
    }
    if (r == 0)
        alloc = 0;
    r = parse_count(f->v[idx[C_NODES_REQ]], &req);
    if (r < 0) {
        free(sub);
        return exa_err(err, EXA_EPARSE,
                       "line %zu: num_nodes_req '%.32s' is not a whole number",
                       line, f->v[idx[C_NODES_REQ]]);
    }
    int have_req = r;
    r = power_mean(f->v[idx[C_POWER]], &mean, &bad);
    if (r < 0) {
        free(sub);
        return exa_err(err, EXA_EPARSE,
                       "line %zu: node_power_consumption has '%.24s' where a "
                       "number belongs",
                       line, bad);
    }
    if (*sub && time_parse_iso8601(sub, &t, err) < 0) {
        free(sub);
        return exa_err_prefix(err, "line %zu: submit_time", line);
    }
    if (r == 0 || r == 2 || alloc < 1 || !(mean / (double)alloc > 0) ||
        !isfinite(mean / (double)alloc) || !*sub) {
        if (r == 0)
            *why = PM100_SKIP_NO_POWER;
        else if (r == 2)
            *why = PM100_SKIP_NONFINITE_POWER;
        else if (alloc < 1)
            *why = PM100_SKIP_NO_NODES;
        else if (!(mean / (double)alloc > 0))
            *why = PM100_SKIP_NONPOSITIVE_POWER;
        else if (!isfinite(mean / (double)alloc))
            *why = PM100_SKIP_NONFINITE_POWER;
        else
            *why = PM100_SKIP_NO_SUBMIT_TIME;
        free(sub);
        return 0;
    }
    free(sub);
    row->job_id = trimmed(f->v[idx[C_JOB_ID]]);
    row->user_id = trimmed(f->v[idx[C_USER_ID]]);
    row->num_nodes_req = have_req ? xstrfmt("%lld", req) : xstrdup("");
    row->num_nodes_alloc = alloc;
    row->submit_time = t;
    row->target = mean / (double)alloc;
    row->line = line;
    return 1;
}

int pm100_parse(const char *buf, size_t len, struct pm100_table *t,
                exa_error_t *err)
{
    struct csv_cursor c;
    struct strvec f = STRVEC_INIT;
    size_t line = 0, nhead;
    int idx[NCOL], r, rc = -1;

    csv_init(&c, buf, len);
    r = csv_next(&c, &f, &line, err);
    if (r <= 0) {
        if (r == 0)
            exa_err(err, EXA_EPARSE, "the file is empty: no header line");
        goto out;
    }
    if (header_map(&f, idx, line, err) < 0)
        goto out;
    nhead = f.nr;
    while ((r = csv_next(&c, &f, &line, err)) == 1) {
        struct pm100_row row;
        t->records++;
        if (f.nr != nhead) {
            exa_err(err, EXA_EPARSE,
                    "line %zu: expected %zu fields like the header, found %zu",
                    line, nhead, f.nr);
            goto out;
        }
        enum pm100_skip why = PM100_SKIP_NO_POWER;
        memset(&row, 0, sizeof(row));
        r = parse_row(&f, idx, line, &row, &why, err);
        if (r < 0)
            goto out;
        if (r == 0) {
            t->skipped++;
            t->skipped_by[why]++;
            continue;
        }
        ALLOC_GROW(t->rows, t->nr + 1, t->alloc);
        t->rows[t->nr++] = row;
    }
    if (r < 0)
        goto out;
    rc = 0;
out:
    strvec_clear(&f);
    return rc;
}

int pm100_load_file(const char *path, size_t max_bytes, struct pm100_table *t,
                    exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    struct stat st;
    char chunk[65536];
    int fd, rc = -1;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return exa_err(err, EXA_ECONFIG, "cannot open dataset file '%s': %s",
                       path, strerror(errno));
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return exa_err(err, EXA_ECONFIG, "dataset file '%s' is a directory",
                       path);
    }
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            exa_err(err, EXA_ECONFIG, "reading dataset file '%s': %s", path,
                    strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        if (sb.len + (size_t)n > max_bytes) {
            exa_err(err, EXA_ECONFIG,
                    "dataset file '%s' is larger than %zu bytes", path,
                    max_bytes);
            goto out;
        }
        strbuf_add(&sb, chunk, (size_t)n);
    }
    if (pm100_parse(sb.buf, sb.len, t, err) < 0) {
        exa_err_prefix(err, "dataset file '%s'", path);
        goto out;
    }
    rc = 0;
out:
    close(fd);
    strbuf_release(&sb);
    return rc;
}

void pm100_table_release(struct pm100_table *t)
{
    for (size_t i = 0; i < t->nr; i++) {
        free(t->rows[i].job_id);
        free(t->rows[i].user_id);
        free(t->rows[i].num_nodes_req);
    }
    free(t->rows);
    memset(t, 0, sizeof(*t));
}

void pm100_split(const struct pm100_table *t, int dummy, struct pm100_split *s)
{
    size_t cap = dummy ? PM100_DUMMY_ROWS : (size_t)-1;
    memset(s, 0, sizeof(*s));
    s->train = xcalloc(t->nr ? t->nr : 1, sizeof(*s->train));
    s->val = xcalloc(t->nr ? t->nr : 1, sizeof(*s->val));
    for (size_t i = 0; i < t->nr; i++) {
        long long ts = (long long)t->rows[i].submit_time;
        if (ts >= PM100_TRAIN_FROM && ts < PM100_TRAIN_TO) {
            if (s->ntrain < cap)
                s->train[s->ntrain++] = i;
        } else if (ts >= PM100_VAL_FROM && ts < PM100_VAL_TO) {
            if (s->nval < cap)
                s->val[s->nval++] = i;
        } else {
            s->outside++;
        }
    }
}

void pm100_split_release(struct pm100_split *s)
{
    free(s->train);
    free(s->val);
    memset(s, 0, sizeof(*s));
}
