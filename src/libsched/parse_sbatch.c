/*
 * parse_sbatch.c - sbatch's answer: the job id (and cluster) from
 * "Submitted batch job N[ on cluster C]" or a --parsable "N[;C]" line,
 * never from the first integer anywhere, and every other line kept as a
 * warning. Source: sbatch(1) --parsable; doc/formats.md "sbatch".
 */
#include "libsched/parse_slurm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_slurm_int.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static int all_digits_n(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/*
 * Is line an id line? mode 1: "Submitted batch job N[ on cluster C]";
 * mode 2: exactly "N" or "N;C" (--parsable). Fills id/cluster.
 */
static int sbatch_id_line(const char *line, int mode, char **id, char **cluster)
{
    char *t = slurm_trim_dup(line);
    const char *rest;
    int ok = 0;
    if (mode == 1 && skip_prefix(t, "Submitted batch job ", &rest)) {
        size_t n = 0;
        while (isdigit((unsigned char)rest[n]))
            n++;
        if (n && (!rest[n] || !strncmp(rest + n, " on cluster ", 12))) {
            *id = xstrndup(rest, n);
            *cluster = rest[n] ? slurm_trim_dup(rest + n + 12) : NULL;
            if (*cluster && !**cluster) {
                free(*cluster);
                *cluster = NULL;
            }
            ok = 1;
        }
    } else if (mode == 2) {
        const char *semi = strchr(t, ';');
        size_t n = semi ? (size_t)(semi - t) : strlen(t);
        if (all_digits_n(t, n) && (!semi || semi[1])) {
            *id = xstrndup(t, n);
            *cluster = semi ? xstrdup(semi + 1) : NULL;
            ok = 1;
        }
    }
    free(t);
    return ok;
}

/* Append the non-blank lines of buf[0..len) to lines (CR of CRLF dropped). */
static void split_lines(const char *buf, size_t len, struct strvec *lines)
{
    const char *p = buf, *end;

    if (!buf)
        return; /* no stream (NULL + 0 is undefined) */
    end = buf + len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        size_t l;
        int blank = 1;
        if (!e)
            e = end;
        l = (size_t)(e - p);
        if (l && p[l - 1] == '\r')
            l--;
        for (size_t i = 0; i < l; i++)
            if (!isspace((unsigned char)p[i]))
                blank = 0;
        if (!blank) {
            char *line = xstrndup(p, l);
            strvec_push(lines, line);
            free(line);
        }
        p = e + 1;
    }
}

int sbatch_parse_streams(const char *out, size_t out_len, const char *errbuf,
                         size_t err_len, struct sbatch_result *res,
                         exa_error_t *err)
{
    struct strvec lines = STRVEC_INIT;
    size_t nout;
    long id_line = -1;
    const char *msg = NULL;

    memset(res, 0, sizeof(*res));
    strvec_init(&res->warnings);
    split_lines(out, out_len, &lines);
    nout = lines.nr; /* the id is looked for on stdout only */
    split_lines(errbuf, err_len, &lines);
    /* the sentence wins; else the last bare id line (--parsable) */
    for (size_t i = 0; i < nout && id_line < 0; i++)
        if (sbatch_id_line(lines.v[i], 1, &res->job_id, &res->cluster))
            id_line = (long)i;
    for (size_t i = nout; i-- > 0 && id_line < 0;)
        if (sbatch_id_line(lines.v[i], 2, &res->job_id, &res->cluster))
            id_line = (long)i;
    for (size_t i = 0; i < lines.nr; i++) {
        if ((long)i == id_line)
            continue;
        strvec_push(&res->warnings, lines.v[i]);
        if (!msg && strstr(lines.v[i], "error:"))
            msg = lines.v[i];
    }
    if (id_line < 0) {
        if (!msg)
            msg = lines.nr ? lines.v[0] : "sbatch printed no job id";
        while (*msg == ' ')
            msg++;
        exa_err(err, EXA_ESCHED, "%s", msg);
        strvec_clear(&lines);
        return -1;
    }
    strvec_clear(&lines);
    return 0;
}

int sbatch_parse(const char *buf, size_t len, struct sbatch_result *res,
                 exa_error_t *err)
{
    return sbatch_parse_streams(buf, len, NULL, 0, res, err);
}

void sbatch_result_free(struct sbatch_result *res)
{
    free(res->job_id);
    free(res->cluster);
    strvec_clear(&res->warnings);
    memset(res, 0, sizeof(*res));
}

json_t *sbatch_result_to_json(const struct sbatch_result *res)
{
    json_t *o = json_object(), *a = json_array();
    jx_set(o, "job_id", jx_str(res->job_id));
    jx_set(o, "cluster", jx_str(res->cluster));
    for (size_t i = 0; i < res->warnings.nr; i++)
        json_array_append_new(a, jx_str(res->warnings.v[i]));
    jx_set(o, "warnings", a);
    return o;
}
