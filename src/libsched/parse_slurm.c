/*
 * parse_slurm.c - one Slurm job record: the value validators that decide
 * whether a cell fits a column role, the record builder that turns a row
 * of cells with roles into a struct slurm_job (ids, array ranges, times,
 * GPUs from TRES, expanded node lists), freeing, and the doc/formats.md JSON.
 *
 * squeue, sacct and scontrol all come down to this builder: each tool's
 * parser only decides which role every column has (parse_slurm_table.c,
 * parse_scontrol.c) and applies its own rules through struct
 * slurm_row_ctx, so a field means the same thing whichever tool printed it.
 */
#include "libsched/parse_slurm.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "libres/gres.h"
#include "libhostlist/hostlist.h"
#include "libsched/parse_slurm_int.h"
#include "libutil/arena.h"
#include "libutil/duration.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/parse.h"
#include "libutil/xalloc.h"

/* ------------------------------------------------------------ validators */

/* The count s (digits only, at most INT64_MAX: parse_count_str's
 * grammar, read in place without its strlen and calls; a large parse
 * reads several a row), or -1 when it is none. */
static inline long long count_of(const char *s)
{
    uint64_t v = 0;
    if (!(*s >= '0' && *s <= '9'))
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        /* v * 10 + d > INT64_MAX, without a division per digit */
        if (v >= (uint64_t)INT64_MAX / 10 &&
            (v > (uint64_t)INT64_MAX / 10 || d > (unsigned)(INT64_MAX % 10)))
            return -1;
        v = v * 10 + d;
    }
    return *s ? -1 : (long long)v;
}

/* A count: digits only, at most INT64_MAX (libutil/parse.h). */
static int is_int(const char *s)
{
    return count_of(s) >= 0;
}

int slurm_none_token(const char *v)
{
    switch (*v) {
    case '\0':
        return 1;
    case 'U':
    case 'u':
        return !strcasecmp(v, "Unknown");
    case 'N':
    case 'n':
        return !strcasecmp(v, "None") || !strcasecmp(v, "N/A");
    case '(':
        return !strcmp(v, "(null)");
    default: /* most values: no compare */
        return 0;
    }
}

int slurm_is_iso(const char *v)
{
    static const char pat[] = "dddd-dd-ddTdd:dd:dd";
    size_t i;
    for (i = 0; pat[i]; i++) {
        if (!v[i])
            return 0;
        if (pat[i] == 'd' ? !isdigit((unsigned char)v[i]) : v[i] != pat[i])
            return 0;
    }
    return 1;
}

int slurm_is_job_id(const char *v)
{
    const char *p = v;
    if (!isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '_') {
        p++;
        if (*p == '[') {
            while (*p && *p != ']') {
                if (!isdigit((unsigned char)*p) && !strchr("[,-%:", *p))
                    return 0;
                p++;
            }
            if (*p != ']')
                return 0;
            p++;
        } else {
            if (!isdigit((unsigned char)*p))
                return 0;
            while (isdigit((unsigned char)*p))
                p++;
        }
    }
    if (*p == '+') {
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == '.') {
        p++;
        if (!*p)
            return 0;
        while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '+'))
            p++;
    }
    return *p == '\0';
}

int slurm_valid_for(enum slurm_role r, const char *v)
{
    double d;
    switch (r) {
    case R_ID:
        return slurm_is_job_id(v);
    case R_ID_RAW:
        return is_int(v);
    case R_STATE:
    case R_STATE_COMPACT:
        return slurm_state_shaped(v);
    case R_EXIT: {
        const char *c = strchr(v, ':');
        if (!*v)
            return 1;
        if (!c)
            return is_int(v[0] == '-' ? v + 1 : v);
        {
            /* the exit part may be negative ("-2:0", sacct(1) prints
             * the return code as a signed int) */
            const char *a = v[0] == '-' ? v + 1 : v;
            int64_t x;
            return parse_count_span(a, (size_t)(c - a), &x) == 0 &&
                   is_int(c + 1);
        }
    }
    case R_START:
    case R_END:
    case R_SUBMIT:
        return slurm_none_token(v) || slurm_is_iso(v) || is_int(v);
    case R_ELAPSED:
    case R_TIMELIMIT:
    case R_TIMELEFT:
    case R_TOTALCPU:
        return slurm_duration_parse(v, &d) >= 0;
    case R_ELAPSED_RAW:
    case R_TIMELIMIT_RAW:
    case R_NCPUS:
    case R_NODES:
        return !*v || is_int(v) || slurm_duration_parse(v, &d) == 0;
    case R_TRES_ALLOC:
        return !*v || strchr(v, '=') || slurm_none_token(v);
    case R_MAXRSS: {
        size_t n = strlen(v);
        if (!n)
            return 1;
        for (size_t i = 0; i + 1 < n; i++)
            if (!isdigit((unsigned char)v[i]) && v[i] != '.')
                return 0;
        return 1;
    }
    case R_PRIORITY:
        return !*v || parse_real_str(v, &d) == 0;
    default:
        return 1;
    }
}

/* ------------------------------------------------------------- records */

/* A copy of v in a. */
static char *adup(struct arena *a, const char *v)
{
    return arena_strndup(a, v, strlen(v));
}

/* The cell v as the record holds it: itself when the row's cells are
 * the result's strings already (ctx->cells_kept), else a copy in them. */
static inline char *cell(struct slurm_row_ctx *ctx, const char *v)
{
    return ctx->cells_kept ? (char *)v : adup(ctx->strings, v);
}

/* time_value past its printed ISO form (out of line: the ISO form is
 * nearly every cell, and pays no frame for this). */
static __attribute__((noinline)) char *
time_value_other(struct slurm_row_ctx *ctx, const char *v)
{
    struct arena *a = ctx->strings;
    if (slurm_none_token(v))
        return NULL;
    long long secs = count_of(v); /* one parse: -1 when not a count */
    if (secs >= 0) {
        time_t t = (time_t)secs;
        struct tm tm;
        char buf[32];
        if (!gmtime_r(&t, &tm))
            return NULL;
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
        return adup(a, buf);
    }
    return cell(ctx, v);
}

/* The time cell v as the record holds it (in ctx->strings), or NULL. */
static inline char *time_value(struct slurm_row_ctx *ctx, const char *v)
{
    /* "2026-12-01T10:00:00", as printed: no blank word starts with a
     * digit, and the '-' ends any count (each byte read only after the
     * one before it was a digit) */
    if (v[0] >= '0' && v[0] <= '9' && v[1] >= '0' && v[1] <= '9' &&
        v[2] >= '0' && v[2] <= '9' && v[3] >= '0' && v[3] <= '9' && v[4] == '-')
        return cell(ctx, v);
    return time_value_other(ctx, v);
}

#define MAX_ARRAY_IDS 10000

/*
 * Array task ranges "5-1024", "1,3,5-7", "1-10:2" (Slurm's --array
 * syntax, sbatch(1)): count the tasks without expanding them, then list
 * them when there are at most MAX_ARRAY_IDS (a pending array of a million
 * tasks is one squeue line; listing it would be untrusted input turned
 * into unbounded memory).
 */
static void array_ranges(const char *s, struct slurm_job *j, struct arena *a)
{
    int64_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *p = s, *end = s + strlen(s);
        size_t k = 0;
        if (pass == 1) {
            if (!count || count > MAX_ARRAY_IDS)
                return;
            j->array_task_ids =
                arena_alloc(a, (size_t)count * sizeof(long long));
        }
        while (p < end) {
            int64_t lo, hi, step = 1, terms;
            if (parse_count(&p, end, &lo) < 0)
                return;
            hi = lo;
            if (parse_char(&p, end, '-') == 0) {
                if (parse_count(&p, end, &hi) < 0 || hi < lo)
                    return;
                if (parse_char(&p, end, ':') == 0 &&
                    (parse_count(&p, end, &step) < 0 || step < 1))
                    return;
            }
            if (p < end && *p != ',')
                return;
            terms = (hi - lo) / step + 1; /* hi - lo >= 0: no overflow */
            if (pass == 0) {
                if (count_add(&count, terms) < 0 || count > (1LL << 40))
                    return;
            } else {
                /* lo + i * step <= hi: never past INT64_MAX */
                for (int64_t i = 0; i < terms; i++)
                    j->array_task_ids[k++] = lo + i * step;
            }
            if (p < end)
                p++; /* the ',' */
        }
        if (pass == 0)
            j->array_task_count = count;
        else
            j->n_array_task_ids = k;
    }
}

/* Fill array / het parts from the id. */
void slurm_id_parts(struct slurm_job *j, struct arena *a)
{
    const char *id = j->job_id ? j->job_id : j->id;
    const char *us, *plus, *p;
    if (!id)
        return;
    /* most ids are digits only: one scan for either mark, the digits
     * (none of them) a compare each */
    for (p = id; (unsigned)(unsigned char)*p - '0' < 10; p++)
        ;
    for (; *p && *p != '_' && *p != '+'; p++)
        ;
    if (!*p)
        return;
    us = *p == '_' ? p : strchr(p, '_');
    plus = *p == '+' ? p : NULL; /* looked at only when there is no '_' */
    if (us) {
        const char *task = us + 1;
        j->array_job_id = arena_strndup(a, id, (size_t)(us - id));
        j->array_task = adup(a, task);
        if (*task == '[') {
            /* "[2-4%25]" or "[5-1024]" or "[1,3,5-7]" */
            char *inner = xstrdup(task + 1), *pct, *rb;
            rb = strchr(inner, ']');
            if (rb)
                *rb = '\0';
            pct = strchr(inner, '%');
            if (pct) {
                *pct = '\0';
                const char *q = pct + 1;
                int64_t m;
                if (parse_count(&q, q + strlen(q), &m) == 0)
                    j->array_max_running = m;
            }
            array_ranges(inner, j, a);
            free(inner);
        }
    } else if (plus && isdigit((unsigned char)plus[1])) {
        j->het_job_id = arena_strndup(a, id, (size_t)(plus - id));
        const char *q = plus + 1;
        int64_t off;
        if (parse_count(&q, q + strlen(q), &off) == 0)
            j->het_offset = off;
    }
}

/*
 * Was this TRES string cut (a -O column's width, a fixed-width sacct
 * column)? It then ends with ',' '+' '=' ':' or '/', or (kv: a
 * key=value list such as AllocTRES) its last entry has no '=' or no
 * value ("cpu=2,mem=512M,node=", "cpu=2,gres/g").
 */
static int tres_cut(const char *v, int kv)
{
    size_t n = strlen(v);
    const char *last;
    while (n && isspace((unsigned char)v[n - 1]))
        n--;
    if (!n || slurm_none_token(v))
        return 0;
    if (v[n - 1] == ',' || v[n - 1] == '+' || v[n - 1] == '=' ||
        v[n - 1] == ':' || v[n - 1] == '/')
        return 1;
    if (!kv)
        return 0; /* tres-per-node/job: "gpu:2", "gres/gpu:a100:1" */
    last = v + n;
    while (last > v && last[-1] != ',')
        last--;
    return !memchr(last, '=', (size_t)(v + n - last));
}

/* GPU count from a tres-per-job / tres-per-node value; 0 when none. */
static int tres_per_gpus(const char *v, long long *gpus)
{
    struct gres_info gi;
    int rc = 0;
    if (slurm_none_token(v))
        return 0;
    gres_parse(v, &gi);
    if (gi.entries && gi.gpus >= 0) { /* -1: a sum that overflowed */
        *gpus = gi.gpus;
        rc = 1;
    }
    gres_info_release(&gi);
    return rc;
}

/* A memo key for the cell v: the cell itself when it is one of the
 * result's strings already, else a copy there. */
static const char *memo_key(struct slurm_row_ctx *ctx, const char *v)
{
    return ctx->cells_kept ? v : adup(ctx->strings, v);
}

/* SLURM_ST_* of a normalized state (NULL: none). */
static unsigned state_flags(const char *st)
{
    return (st && !strcmp(st, "PENDING") ? SLURM_ST_PENDING : 0) |
           (slurm_job_state_terminal(st) ? SLURM_ST_TERMINAL : 0);
}

/* slurm_job_state_normalize(t) and its state_flags, through the memo. */
static const char *job_state(struct slurm_row_ctx *ctx, const char *t,
                             unsigned *flags)
{
    struct slurm_memo *m = ctx->memo;
    const char *st;
    for (size_t i = 0; m && i < m->nst; i++)
        if (m->st[i].key[0] == t[0] && !strcmp(m->st[i].key, t)) {
            *flags = m->st[i].flags;
            return m->st[i].state;
        }
    st = slurm_job_state_normalize(t, NULL);
    *flags = state_flags(st);
    if (m && m->nst < SLURM_MEMO_N) {
        m->st[m->nst].key = memo_key(ctx, t);
        m->st[m->nst].state = st;
        m->st[m->nst++].flags = *flags;
    }
    return st;
}

/*
 * A TRES cell read once, through the memo: *cut as tres_cut(v, kv), and
 * (the GPU count, 1) or 0 as tres_gpus (kv: AllocTRES) or tres_per_gpus
 * (kv 0: tres-per-job/node) give them.
 */
static int tres_read(struct slurm_row_ctx *ctx, const char *v, int kv, int *cut,
                     long long *gpus)
{
    struct slurm_memo *m = ctx->memo;
    long long g = 0;
    int has;
    for (size_t i = 0; m && i < m->ntr[kv]; i++) {
        const struct slurm_memo_tres *e = &m->tr[kv][i];
        if (e->key[0] == v[0] && !strcmp(e->key, v)) {
            *cut = e->cut;
            *gpus = e->gpus;
            return e->has;
        }
    }
    *cut = tres_cut(v, kv);
    has = kv ? tres_gpus(v, &g) : tres_per_gpus(v, &g);
    if (m && m->ntr[kv] < SLURM_MEMO_N) {
        size_t k = m->ntr[kv]++;
        m->tr[kv][k].key = memo_key(ctx, v);
        m->tr[kv][k].cut = *cut;
        m->tr[kv][k].has = has;
        m->tr[kv][k].gpus = g;
    }
    *gpus = g;
    return has;
}

static int has_state_col(const enum slurm_role *roles, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (roles[k] == R_STATE || roles[k] == R_STATE_COMPACT)
            return 1;
    return 0;
}

void slurm_build_job(struct slurm_job *j, char **f, size_t nf,
                     const enum slurm_role *roles, size_t nroles,
                     struct slurm_row_ctx *ctx)
{
    const char *state = NULL, *state_c = NULL, *start = NULL, *end = NULL;
    const char *tres_alloc = NULL, *tres_job = NULL, *tres_node = NULL;
    /* each TRES cell's GPU count, read where it is met (tres_read) */
    int alloc_has = 0, job_has = 0, node_has = 0;
    long long alloc_g = 0, job_g = 0, node_g = 0;
    unsigned stf = 0; /* SLURM_ST_* of j->state */
    const char *id = NULL, *id2 = NULL, *id_end = NULL;
    struct arena *a = ctx->strings;
    long long nodes = -1;
    int have_alloc = 0, cut_tres = 0;

    memset(j, 0, sizeof(*j));
    strvec_init(&j->nodelist);
    j->state = NULL; /* no state column: null, never a guess */
    j->text = ctx->text;
    j->text_len = ctx->text_len;
    for (size_t k = 0; k < nf && k < nroles; k++) {
        const char *v = f[k];
        double d;
        long long x;
        switch (roles[k]) {
        case R_ID:
            if (!id)
                id = v;
            else if (!id2)
                id2 = v;
            break;
        case R_ID_RAW:
            j->job_id_raw = cell(ctx, v);
            j->have |= SJ_JOB_ID_RAW;
            break;
        case R_ID_END:
            id_end = v;
            break;
        case R_STATE:
            state = v;
            break;
        case R_STATE_COMPACT:
            state_c = v;
            break;
        case R_EXIT: {
            const char *c;
            int ex = 0, sig = 0, ne = 0, ns = 0;
            /* the usual "0:0": both parts of at most 9 digits, read here */
            for (c = v; *c >= '0' && *c <= '9' && ++ne <= 9; c++)
                ex = ex * 10 + (*c - '0');
            if (ne && ne <= 9 && *c == ':')
                for (c++; *c >= '0' && *c <= '9' && ++ns <= 9; c++)
                    sig = sig * 10 + (*c - '0');
            if (ns && ns <= 9 && !*c) {
                j->has_exit = j->has_signal = 1;
                j->exit_code = ex;
                j->signal = sig;
                break;
            }
            c = strchr(v, ':');
            if (!*v || !slurm_valid_for(R_EXIT, v))
                break;
            {
                int64_t e, g = 0;
                const char *q = v, *vend = v + strlen(v);
                if (parse_i64(&q, vend, &e) < 0 || e < INT_MIN || e > INT_MAX)
                    break; /* not an exit code that fits */
                if (c && (parse_i64_str(c + 1, &g) < 0 || g < INT_MIN ||
                          g > INT_MAX))
                    break;
                j->has_exit = 1;
                j->exit_code = (int)e;
                if (c) {
                    j->has_signal = 1;
                    j->signal = (int)g;
                }
            }
            break;
        }
        case R_START:
            start = v;
            break;
        case R_END:
            end = v;
            break;
        case R_SUBMIT:
            j->submit = time_value(ctx, v);
            j->have |= SJ_SUBMIT;
            break;
        case R_ELAPSED:
            if (slurm_duration_parse(v, &d) == 1) {
                j->has_elapsed = 1;
                j->elapsed_s = d;
            }
            break;
        case R_ELAPSED_RAW:
            if ((x = count_of(v)) >= 0) {
                j->has_elapsed = 1;
                j->elapsed_s = (double)x;
            }
            break;
        /* a cut TRES field gives null (doc/formats.md "A truncated TRES field
         * gives null"): by its shape, or because it filled the width the
         * command gave it */
        case R_TRES_ALLOC: {
            int cut;
            long long g;
            int has = tres_read(ctx, v, 1, &cut, &g);
            have_alloc = 1;
            if (cut || (ctx->cut && ctx->cut[k])) {
                cut_tres = 1;
            } else {
                tres_alloc = v;
                alloc_has = has;
                alloc_g = g;
            }
            break;
        }
        case R_TRES_PER_JOB:
        case R_TRES_PER_NODE: {
            int cut;
            long long g;
            int has = tres_read(ctx, v, 0, &cut, &g);
            if (cut || (ctx->cut && ctx->cut[k])) {
                cut_tres = 1;
            } else if (roles[k] == R_TRES_PER_JOB) {
                tres_job = v;
                job_has = has;
                job_g = g;
            } else {
                tres_node = v;
                node_has = has;
                node_g = g;
            }
            break;
        }
        case R_NODES:
        case R_NNODES:
            if ((x = count_of(v)) >= 0) {
                nodes = x;
                j->has_nnodes = 1;
                j->nnodes = nodes;
            }
            break;
        case R_STDOUT:
            j->std_out = slurm_none_token(v) ? NULL : cell(ctx, v);
            break;
        case R_NODELIST_REASON:
            if (*v == '(' && v[strlen(v) - 1] == ')') {
                j->reason = arena_strndup(a, v + 1, strlen(v) - 2);
                j->have |= SJ_REASON;
                break;
            }
            /* fall through */
        case R_NODELIST:
            j->have |= SJ_NODELIST;
            strvec_init(&j->nodelist);
            if (!slurm_none_token(v) &&
                !(*v == 'N' && !strcmp(v, "None assigned"))) {
                size_t cap = ctx->host_budget < HOSTLIST_MAX_HOSTS
                                 ? ctx->host_budget
                                 : HOSTLIST_MAX_HOSTS;
                const char **names = NULL;
                /* why a list is not one does not matter here: no err */
                long n =
                    cap ? hostlist_expand_arena(v, a, &names, cap, NULL) : -1;
                if (n < 0) {
                    /* not a hostlist (or over the budget): as printed */
                    names = arena_alloc(a, 2 * sizeof(*names));
                    names[0] = cell(ctx, v);
                    n = 1;
                } else {
                    ctx->host_budget -= (size_t)n;
                }
                if (n) {
                    j->nodelist.v = names;
                    j->nodelist.nr = (size_t)n;
                }
            }
            break;
        case R_REASON:
            j->reason = cell(ctx, v);
            j->have |= SJ_REASON;
            break;
        case R_PARTITION:
            j->partition = *v || ctx->delimited ? cell(ctx, v) : NULL;
            j->have |= SJ_PARTITION;
            break;
        case R_ACCOUNT:
            j->account = *v || ctx->delimited ? cell(ctx, v) : NULL;
            j->have |= SJ_ACCOUNT;
            break;
        case R_USER:
            j->user = *v || ctx->delimited ? cell(ctx, v) : NULL;
            j->have |= SJ_USER;
            break;
        case R_NAME:
            j->name = *v || ctx->delimited ? cell(ctx, v) : NULL;
            j->have |= SJ_NAME;
            break;
        case R_NCPUS:
            if ((x = count_of(v)) >= 0) {
                j->ncpus = x;
                j->have |= SJ_NCPUS;
            }
            break;
        case R_TIMELIMIT:
            if (!j->has_time_limit) {
                int rc = slurm_duration_parse(v, &d);
                j->have |= SJ_TIME_LIMIT;
                if (rc == 1) {
                    j->has_time_limit = 1;
                    j->time_limit_s = (long long)d;
                }
            }
            break;
        case R_TIMELIMIT_RAW:
            j->have |= SJ_TIME_LIMIT;
            if (!j->has_time_limit && (x = count_of(v)) >= 0) {
                int64_t lim = x;
                if (count_mul(&lim, 60) == 0) { /* minutes */
                    j->has_time_limit = 1;
                    j->time_limit_s = lim;
                }
            }
            break;
        case R_TIMELEFT:
            j->have |= SJ_TIME_LEFT;
            if (slurm_duration_parse(v, &d) == 1) {
                j->has_time_left = 1;
                j->time_left_s = (long long)d;
            }
            break;
        case R_TOTALCPU:
            j->have |= SJ_TOTAL_CPU;
            if (slurm_duration_parse(v, &d) == 1) {
                j->has_total_cpu = 1;
                j->total_cpu_s = d;
            }
            break;
        case R_MAXRSS:
            j->max_rss = *v ? cell(ctx, v) : NULL;
            j->have |= SJ_MAX_RSS;
            break;
        case R_BATCHHOST:
            j->batch_host = slurm_none_token(v) ? NULL : cell(ctx, v);
            j->have |= SJ_BATCH_HOST;
            break;
        case R_CLUSTER:
            j->cluster = cell(ctx, v);
            j->have |= SJ_CLUSTER;
            break;
        default:
            break;
        }
    }
    /* a record a job name made up ends with another job's id */
    if (id_end && (!id || strcmp(id, id_end)))
        j->id_mismatch = 1;
    /* two JOBID columns (%A and %i): the array/het form is the id */
    if (id && id2 && strcmp(id, id2)) {
        if (strpbrk(id2, "_+") && !strpbrk(id, "_+")) {
            const char *tmp = id;
            id = id2;
            id2 = tmp;
        }
        j->job_id_raw = cell(ctx, id2);
        j->have |= SJ_JOB_ID_RAW;
    }
    if (id && *id)
        j->id = cell(ctx, id);
    else if (j->job_id_raw && *j->job_id_raw)
        j->id = j->job_id_raw; /* JobIDRaw alone names the job */
    if (state && !*state)
        state = NULL;
    if (state_c && !*state_c)
        state_c = NULL;
    if (state || state_c) {
        const char *t = state ? state : state_c;
        size_t n;
        j->state = job_state(ctx, t, &stf);
        /* raw_state: the token without surrounding blanks */
        if (ctx->cells_kept) {
            /* a kept cell is trimmed already (split_sep drops the blanks
             * slurm_trim_span does): the token is the cell itself */
            j->raw_state = (char *)t;
        } else {
            t = slurm_trim_span(t, &n);
            j->raw_state = arena_strndup(a, t, n);
        }
    } else if (ctx->state_filter && !has_state_col(roles, nroles))
    /* no state column, but the command asked for one state only
     * (squeue -t R): every row is in it */
    {
        j->state = slurm_job_state_normalize(ctx->state_filter, NULL);
        stf = state_flags(j->state);
    }
    if (start && !(ctx->squeue && (stf & SLURM_ST_PENDING)))
        j->start = time_value(ctx, start);
    if (end && !(ctx->squeue && !(stf & SLURM_ST_TERMINAL)))
        j->end = time_value(ctx, end);
    if (have_alloc && tres_alloc && alloc_has) {
        j->has_gpus = 1;
        j->gpus = alloc_g;
    }
    if (cut_tres && !j->has_gpus)
        tres_job = tres_node = NULL; /* null, never a guess from a part */
    if (!j->has_gpus && tres_job && job_has) {
        j->has_gpus = 1;
        j->gpus = job_g;
    }
    if (!j->has_gpus && tres_node && node_has) {
        int64_t total = node_g;
        /* per node x nodes that overflows is unknown */
        if (nodes <= 0 || count_mul(&total, nodes) == 0) {
            j->has_gpus = 1;
            j->gpus = total;
        }
    }
}

void slurm_jobs_free(struct slurm_jobs *jobs)
{
    /* the records' strings and node lists are all in jobs->strings */
    for (size_t i = 0; i < jobs->nerrors; i++)
        free(jobs->errors[i].id);
    free(jobs->jobs);
    free(jobs->steps);
    free(jobs->errors);
    arena_release(&jobs->strings);
    memset(jobs, 0, sizeof(*jobs));
}

/* -------------------------------------------------------------- JSON */

json_t *slurm_job_to_json(const struct slurm_job *j, int is_step)
{
    json_t *o = json_object();
    jx_set(o, "id", jx_str(j->id));
    jx_set(o, "state", jx_str(j->state));
    jx_set(o, "raw_state", jx_str(j->raw_state));
    jx_set(o, "exit_code", jx_int_or_null(j->has_exit, j->exit_code));
    jx_set(o, "signal", jx_int_or_null(j->has_signal, j->signal));
    jx_set(o, "start", jx_str(j->start));
    jx_set(o, "end", jx_str(j->end));
    if (j->has_elapsed && j->elapsed_s == (double)(long long)j->elapsed_s)
        jx_set(o, "elapsed_s", json_integer((long long)j->elapsed_s));
    else
        jx_set(o, "elapsed_s",
               j->has_elapsed ? jx_real(j->elapsed_s) : json_null());
    jx_set(o, "gpus", jx_int_or_null(j->has_gpus, j->gpus));
    if (is_step) {
        jx_set(o, "job_id", jx_str(j->job_id));
        jx_set(o, "step", jx_str(j->step));
    }
    if (j->array_job_id) {
        jx_set(o, "array_job_id", jx_str(j->array_job_id));
        jx_set(o, "array_task", jx_str(j->array_task));
        if (j->array_task_count)
            jx_set(o, "array_task_count", json_integer(j->array_task_count));
        if (j->array_task_ids) {
            json_t *a = json_array();
            for (size_t i = 0; i < j->n_array_task_ids; i++)
                json_array_append_new(a, json_integer(j->array_task_ids[i]));
            jx_set(o, "array_task_ids", a);
        }
        if (j->array_max_running)
            jx_set(o, "array_max_running", json_integer(j->array_max_running));
    }
    if (j->het_job_id) {
        jx_set(o, "het_job_id", jx_str(j->het_job_id));
        jx_set(o, "het_offset", json_integer(j->het_offset));
    }
    if (j->have & SJ_PARTITION)
        jx_set(o, "partition", jx_str(j->partition));
    if (j->have & SJ_ACCOUNT)
        jx_set(o, "account", jx_str(j->account));
    if (j->have & SJ_USER)
        jx_set(o, "user", jx_str(j->user));
    if (j->have & SJ_NAME)
        jx_set(o, "name", jx_str(j->name));
    if (j->have & SJ_REASON)
        jx_set(o, "reason", jx_str(j->reason));
    if (j->have & SJ_NODELIST) {
        json_t *a = json_array();
        for (size_t i = 0; i < j->nodelist.nr; i++)
            json_array_append_new(a, jx_str(j->nodelist.v[i]));
        jx_set(o, "nodelist", a);
    }
    if (j->have & SJ_NCPUS)
        jx_set(o, "ncpus", json_integer(j->ncpus));
    if (j->have & SJ_TIME_LIMIT)
        jx_set(o, "time_limit_s",
               jx_int_or_null(j->has_time_limit, j->time_limit_s));
    if (j->have & SJ_TIME_LEFT)
        jx_set(o, "time_left_s",
               jx_int_or_null(j->has_time_left, j->time_left_s));
    if (j->have & SJ_SUBMIT)
        jx_set(o, "submit", jx_str(j->submit));
    if (j->have & SJ_TOTAL_CPU)
        jx_set(o, "total_cpu_s",
               j->has_total_cpu ? jx_real(j->total_cpu_s) : json_null());
    if (j->have & SJ_MAX_RSS)
        jx_set(o, "max_rss", jx_str(j->max_rss));
    if (j->have & SJ_BATCH_HOST)
        jx_set(o, "batch_host", jx_str(j->batch_host));
    if (j->have & SJ_JOB_ID_RAW)
        jx_set(o, "job_id_raw", jx_str(j->job_id_raw));
    if (j->have & SJ_CLUSTER)
        jx_set(o, "cluster", jx_str(j->cluster));
    return o;
}

json_t *slurm_jobs_to_json(const struct slurm_jobs *jobs, int with_steps)
{
    json_t *doc = json_object(), *a = json_array();
    for (size_t i = 0; i < jobs->njobs; i++)
        json_array_append_new(a, slurm_job_to_json(&jobs->jobs[i], 0));
    jx_set(doc, "jobs", a);
    if (with_steps) {
        a = json_array();
        for (size_t i = 0; i < jobs->nsteps; i++)
            json_array_append_new(a, slurm_job_to_json(&jobs->steps[i], 1));
        jx_set(doc, "steps", a);
    }
    if (jobs->nerrors) {
        a = json_array();
        for (size_t i = 0; i < jobs->nerrors; i++) {
            const struct slurm_rec_error *e = &jobs->errors[i];
            json_t *o = json_object();
            jx_set(o, "record", json_integer(e->record));
            jx_set(o, "kind", jx_str(e->kind));
            jx_set(o, "expected_fields", json_integer(e->expected_fields));
            jx_set(o, "got_fields", json_integer(e->got_fields));
            jx_set(o, "id", jx_str(e->id));
            json_array_append_new(a, o);
        }
        jx_set(doc, "errors", a);
    }
    return doc;
}

/* The array members of job_write's object (rare: a slurm array job's
 * record): job_write_members', and job_write's through
 * jsonw_run_sync. */
static void job_write_array(const struct slurm_job *j, struct jsonw *w)
{
    jsonw_member_str_lit(w, "array_job_id", j->array_job_id);
    jsonw_member_str_lit(w, "array_task", j->array_task);
    if (j->array_task_count)
        jsonw_member_int_lit(w, "array_task_count", j->array_task_count);
    if (j->array_task_ids) {
        jsonw_key_lit(w, "array_task_ids");
        jsonw_arr_begin(w);
        for (size_t i = 0; i < j->n_array_task_ids; i++)
            jsonw_int(w, j->array_task_ids[i]);
        jsonw_arr_end(w);
    }
    if (j->array_max_running)
        jsonw_member_int_lit(w, "array_max_running", j->array_max_running);
}

/* slurm_job_to_json's object, written to w (same keys, same order; a
 * member's key and value in one jsonw_member_* write). */
static void job_write_members(const struct slurm_job *j, int is_step,
                              struct jsonw *w)
{
    jsonw_obj_begin(w);
    jsonw_member_str_lit(w, "id", j->id);
    jsonw_member_str_lit(w, "state", j->state);
    jsonw_member_str_lit(w, "raw_state", j->raw_state);
    jsonw_member_int_or_null_lit(w, "exit_code", j->has_exit, j->exit_code);
    jsonw_member_int_or_null_lit(w, "signal", j->has_signal, j->signal);
    jsonw_member_str_lit(w, "start", j->start);
    jsonw_member_str_lit(w, "end", j->end);
    if (j->has_elapsed && j->elapsed_s == (double)(long long)j->elapsed_s) {
        jsonw_member_int_lit(w, "elapsed_s", (long long)j->elapsed_s);
    } else if (j->has_elapsed) {
        jsonw_key_lit(w, "elapsed_s");
        jsonw_real(w, j->elapsed_s);
    } else {
        jsonw_member_null_lit(w, "elapsed_s");
    }
    jsonw_member_int_or_null_lit(w, "gpus", j->has_gpus, j->gpus);
    if (is_step) {
        jsonw_member_str_lit(w, "job_id", j->job_id);
        jsonw_member_str_lit(w, "step", j->step);
    }
    if (j->array_job_id)
        job_write_array(j, w);
    if (j->het_job_id) {
        jsonw_member_str_lit(w, "het_job_id", j->het_job_id);
        jsonw_member_int_lit(w, "het_offset", j->het_offset);
    }
#define STR_IF(bit, key, field)                                                \
    do {                                                                       \
        if (j->have & (bit))                                                   \
            jsonw_member_str_lit(w, key, j->field);                            \
    } while (0)
    STR_IF(SJ_PARTITION, "partition", partition);
    STR_IF(SJ_ACCOUNT, "account", account);
    STR_IF(SJ_USER, "user", user);
    STR_IF(SJ_NAME, "name", name);
    STR_IF(SJ_REASON, "reason", reason);
    if (j->have & SJ_NODELIST) {
        jsonw_key_lit(w, "nodelist");
        jsonw_arr_begin(w);
        for (size_t i = 0; i < j->nodelist.nr; i++)
            jsonw_elem_str(w, j->nodelist.v[i]);
        jsonw_arr_end(w);
    }
    if (j->have & SJ_NCPUS)
        jsonw_member_int_lit(w, "ncpus", j->ncpus);
    if (j->have & SJ_TIME_LIMIT)
        jsonw_member_int_or_null_lit(w, "time_limit_s", j->has_time_limit,
                                     j->time_limit_s);
    if (j->have & SJ_TIME_LEFT)
        jsonw_member_int_or_null_lit(w, "time_left_s", j->has_time_left,
                                     j->time_left_s);
    STR_IF(SJ_SUBMIT, "submit", submit);
    if (j->have & SJ_TOTAL_CPU) {
        jsonw_key_lit(w, "total_cpu_s");
        if (j->has_total_cpu)
            jsonw_real(w, j->total_cpu_s);
        else
            jsonw_null(w);
    }
    STR_IF(SJ_MAX_RSS, "max_rss", max_rss);
    STR_IF(SJ_BATCH_HOST, "batch_host", batch_host);
    STR_IF(SJ_JOB_ID_RAW, "job_id_raw", job_id_raw);
    STR_IF(SJ_CLUSTER, "cluster", cluster);
#undef STR_IF
    jsonw_obj_end(w);
}

/* job_write's members of the run r opened on w, with r's line length
 * item and compact flag as given (the same values r holds: constants
 * where the caller knows them, so that each member's line and key are
 * stores of known size at known offsets). */
static inline __attribute__((always_inline)) void
job_write_run(const struct slurm_job *j, int is_step, struct jsonw *w,
              struct jsonw_run *rp, size_t item, size_t compact)
{
    struct jsonw_run r = *rp;
    r.item = item;
    r.compact = compact;
/* s lies in the record's padded row copy (slurm_job.text) */
#define PADDED(s) ((uintptr_t)(s) - (uintptr_t)j->text <= j->text_len)
    jsonw_run_str_lit(w, &r, "id", j->id, PADDED(j->id));
    jsonw_run_str_lit(w, &r, "state", j->state, 0); /* static */
    jsonw_run_str_lit(w, &r, "raw_state", j->raw_state, PADDED(j->raw_state));
    jsonw_run_int_or_null_lit(w, &r, "exit_code", j->has_exit, j->exit_code);
    jsonw_run_int_or_null_lit(w, &r, "signal", j->has_signal, j->signal);
    jsonw_run_str_lit(w, &r, "start", j->start, PADDED(j->start));
    jsonw_run_str_lit(w, &r, "end", j->end, PADDED(j->end));
    if (j->has_elapsed && j->elapsed_s == (double)(long long)j->elapsed_s) {
        jsonw_run_int_lit(w, &r, "elapsed_s", (long long)j->elapsed_s);
    } else if (j->has_elapsed) {
        jsonw_run_sync(w, &r);
        jsonw_key_lit(w, "elapsed_s");
        jsonw_real(w, j->elapsed_s);
        jsonw_run_resume(w, &r);
    } else {
        jsonw_run_null_lit(w, &r, "elapsed_s");
    }
    jsonw_run_int_or_null_lit(w, &r, "gpus", j->has_gpus, j->gpus);
    if (is_step) {
        jsonw_run_str_lit(w, &r, "job_id", j->job_id, PADDED(j->job_id));
        jsonw_run_str_lit(w, &r, "step", j->step, PADDED(j->step));
    }
    if (j->array_job_id) {
        jsonw_run_sync(w, &r);
        job_write_array(j, w);
        jsonw_run_resume(w, &r);
    }
    if (j->het_job_id) {
        jsonw_run_str_lit(w, &r, "het_job_id", j->het_job_id,
                          PADDED(j->het_job_id));
        jsonw_run_int_lit(w, &r, "het_offset", j->het_offset);
    }
#define STR_IF(bit, key, field)                                                \
    do {                                                                       \
        if (j->have & (bit))                                                   \
            jsonw_run_str_lit(w, &r, key, j->field, PADDED(j->field));         \
    } while (0)
    STR_IF(SJ_PARTITION, "partition", partition);
    STR_IF(SJ_ACCOUNT, "account", account);
    STR_IF(SJ_USER, "user", user);
    STR_IF(SJ_NAME, "name", name);
    STR_IF(SJ_REASON, "reason", reason);
    if (j->have & SJ_NODELIST)
        jsonw_run_strs_lit(w, &r, "nodelist", j->nodelist.v, j->nodelist.nr);
    if (j->have & SJ_NCPUS)
        jsonw_run_int_lit(w, &r, "ncpus", j->ncpus);
    if (j->have & SJ_TIME_LIMIT)
        jsonw_run_int_or_null_lit(w, &r, "time_limit_s", j->has_time_limit,
                                  j->time_limit_s);
    if (j->have & SJ_TIME_LEFT)
        jsonw_run_int_or_null_lit(w, &r, "time_left_s", j->has_time_left,
                                  j->time_left_s);
    STR_IF(SJ_SUBMIT, "submit", submit);
    if (j->have & SJ_TOTAL_CPU) {
        jsonw_run_sync(w, &r);
        jsonw_key_lit(w, "total_cpu_s");
        if (j->has_total_cpu)
            jsonw_real(w, j->total_cpu_s);
        else
            jsonw_null(w);
        jsonw_run_resume(w, &r);
    }
    STR_IF(SJ_MAX_RSS, "max_rss", max_rss);
    STR_IF(SJ_BATCH_HOST, "batch_host", batch_host);
    STR_IF(SJ_JOB_ID_RAW, "job_id_raw", job_id_raw);
    STR_IF(SJ_CLUSTER, "cluster", cluster);
#undef STR_IF
#undef PADDED
    jsonw_run_obj_end(w, &r);
}

/* job_write_members' bytes, written as one jsonw run (jsonw.h) where w
 * allows one: the members from locals, the rare ones through
 * jsonw_run_sync. The layout `exa debug parse` writes (pretty, each job
 * an element of the document's "jobs" array: member lines of 8 bytes)
 * gets its own copy of the members with that length known (callgrind:
 * about 110 instructions less per squeue row). */
static void job_write(const struct slurm_job *j, int is_step, struct jsonw *w)
{
    struct jsonw_run r;
    if (!jsonw_run_obj_begin(w, &r)) {
        job_write_members(j, is_step, w);
        return;
    }
    if (r.item == 8 && !r.compact)
        job_write_run(j, is_step, w, &r, 8, 0);
    else
        job_write_run(j, is_step, w, &r, r.item, r.compact);
}

void slurm_jobs_write_items(const struct slurm_jobs *jobs, int steps,
                            struct jsonw *w)
{
    if (steps)
        for (size_t i = 0; i < jobs->nsteps; i++)
            job_write(&jobs->steps[i], 1, w);
    else
        for (size_t i = 0; i < jobs->njobs; i++)
            job_write(&jobs->jobs[i], 0, w);
}

void slurm_jobs_write_json(const struct slurm_jobs *jobs, int with_steps,
                           struct jsonw *w)
{
    jsonw_obj_begin(w);
    jsonw_key_lit(w, "jobs");
    jsonw_arr_begin(w);
    for (size_t i = 0; i < jobs->njobs; i++)
        job_write(&jobs->jobs[i], 0, w);
    jsonw_arr_end(w);
    if (with_steps) {
        jsonw_key_lit(w, "steps");
        jsonw_arr_begin(w);
        for (size_t i = 0; i < jobs->nsteps; i++)
            job_write(&jobs->steps[i], 1, w);
        jsonw_arr_end(w);
    }
    slurm_jobs_write_errors(jobs, w);
    jsonw_obj_end(w);
}

void slurm_jobs_write_errors(const struct slurm_jobs *jobs, struct jsonw *w)
{
    if (!jobs->nerrors)
        return;
    jsonw_key_lit(w, "errors");
    jsonw_arr_begin(w);
    for (size_t i = 0; i < jobs->nerrors; i++) {
        const struct slurm_rec_error *e = &jobs->errors[i];
        jsonw_obj_begin(w);
        jsonw_key_lit(w, "record");
        jsonw_int(w, (long long)e->record);
        jsonw_key_lit(w, "kind");
        jsonw_str(w, e->kind);
        jsonw_key_lit(w, "expected_fields");
        jsonw_int(w, (long long)e->expected_fields);
        jsonw_key_lit(w, "got_fields");
        jsonw_int(w, (long long)e->got_fields);
        jsonw_key_lit(w, "id");
        jsonw_str(w, e->id);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
}
