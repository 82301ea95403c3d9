/*
 * parse_slurm_table.c - the table walk shared by squeue and sacct: give
 * every column a role, then build one job record per row.
 *
 * Both tools print the same kind of table with different column names.
 * A column's role comes from its header name; without a header, from the
 * first well-known field list that validates against every row, and
 * failing that from the values' shapes. Blank-separated rows that lost
 * empty cells are placed by where their tokens stand, else by the best
 * typed fit. Nothing here trusts a column position that the header or the
 * values did not confirm: a record whose field count differs from the
 * header is reported in jobs->errors, not guessed at.
 */
#include "libsched/parse_slurm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_slurm_int.h"
#include "libsched/slurm_table.h"
#include "libutil/duration.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static _Thread_local const struct slurm_name_role *cur_names;

/*
 * Role of header name u (upper case). Fixed-width formats cut long names
 * to the column width ("TIME_LIMI", "NODELIST(R"), so an unknown name of
 * 4+ characters that is a prefix of exactly one known name takes its role.
 */
int slurm_lookup_role(const struct slurm_name_role *t, const char *u,
                      enum slurm_role *r)
{
    size_t n = strlen(u), hits = 0;
    enum slurm_role pr = R_IGNORE;
    for (size_t i = 0; t[i].name; i++)
        if (!strcmp(t[i].name, u)) {
            *r = t[i].role;
            return 1;
        }
    if (n < 4)
        return 0;
    for (size_t i = 0; t[i].name; i++)
        if (!strncmp(t[i].name, u, n)) {
            hits++;
            pr = t[i].role;
        }
    if (hits != 1)
        return 0;
    *r = pr;
    return 1;
}

static int known_cur(const char *u)
{
    enum slurm_role r;
    return slurm_lookup_role(cur_names, u, &r);
}

void slurm_upper(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (; *s && *s != '%' && k + 1 < n; s++)
        buf[k++] = (char)toupper((unsigned char)*s);
    buf[k] = '\0';
}

/* Set by headerless_roles: a well-known field list fitted every row. */
static _Thread_local int layout_matched;

/* Split a layout into roles (names resolved through tbl); count. */
static size_t layout_roles(const char *fields,
                           const struct slurm_name_role *tbl,
                           enum slurm_role *roles, size_t max)
{
    size_t n = 0;
    const char *p = fields;
    while (*p && n < max) {
        const char *e = strchr(p, ' ');
        char name[64];
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l >= sizeof(name))
            l = sizeof(name) - 1;
        memcpy(name, p, l);
        name[l] = '\0';
        if (!slurm_lookup_role(tbl, name, &roles[n]))
            roles[n] = R_IGNORE;
        n++;
        p += l;
        while (*p == ' ')
            p++;
    }
    return n;
}

/* Is the last role a free-text column that may hold blanks? */
static int free_text(enum slurm_role r)
{
    return r == R_NODELIST_REASON || r == R_REASON;
}

/* Columns whose values have a checkable shape (slurm_valid_for is not
 * "any"). */
static int role_typed(enum slurm_role r)
{
    switch (r) {
    case R_ID:
    case R_ID_RAW:
    case R_STATE:
    case R_STATE_COMPACT:
    case R_EXIT:
    case R_START:
    case R_END:
    case R_SUBMIT:
    case R_ELAPSED:
    case R_TIMELIMIT:
    case R_TIMELEFT:
    case R_TOTALCPU:
    case R_ELAPSED_RAW:
    case R_TIMELIMIT_RAW:
    case R_NCPUS:
    case R_NODES:
    case R_TRES_ALLOC:
    case R_MAXRSS:
    case R_PRIORITY:
        return 1;
    default:
        return 0;
    }
}

/*
 * Blank-separated rows lose their empty cells: "2.batch  batch    (blank
 * partition)  research  1  COMPLETED  0:0" has one token fewer than the
 * columns. Place the nt tokens on the n columns in order, leaving n - nt
 * columns empty, so that every token fits its column and as many typed
 * columns as possible get a value; among equal placements the earlier
 * columns are left empty (blank Partition/Account on step lines).
 * Fills map[column] = token index or -1. Returns 0, or -1 when no
 * placement fits (or more than 3 cells would be empty).
 */
static int align_tokens(const enum slurm_role *roles, size_t n, char **tok,
                        size_t nt, long *map)
{
    int *best;
    unsigned char *pick;
    size_t w = nt + 1;
    int rc = -1;
    if (nt > n || n - nt > 3 || n > 128)
        return -1;
    best = xcalloc((n + 1) * w, sizeof(*best));
    pick = xcalloc((n + 1) * w, 1);
    /* best[i][j]: max typed columns filled placing tok[j..] on cols[i..] */
    for (size_t i = n + 1; i-- > 0;)
        for (size_t j = nt + 1; j-- > 0;) {
            int *b = &best[i * w + j];
            if (i == n) {
                *b = j == nt ? 0 : -1000;
                continue;
            }
            {
                int skip = n - i > nt - j ? best[(i + 1) * w + j] : -1000;
                int take = -1000;
                if (j < nt && slurm_valid_for(roles[i], tok[j]) &&
                    best[(i + 1) * w + j + 1] > -1000)
                    take = best[(i + 1) * w + j + 1] + role_typed(roles[i]);
                if (skip >= take && skip > -1000) {
                    *b = skip;
                    pick[i * w + j] = 1;
                } else {
                    *b = take;
                    pick[i * w + j] = 2;
                }
            }
        }
    if (best[0] > -1000) {
        size_t j = 0;
        for (size_t i = 0; i < n; i++) {
            if (pick[i * w + j] == 2)
                map[i] = (long)j++;
            else
                map[i] = -1;
        }
        rc = 0;
    }
    free(best);
    free(pick);
    return rc;
}

/*
 * Column territories of a blank-separated fixed-width table, from its
 * full rows (exactly n tokens, up to 2000 of them). A column whose values
 * all end at one offset but start at several is right-aligned (squeue
 * %.8j, sacct's default columns) and owns the blanks to its left; one
 * whose values all start at one offset is left-aligned (-O fields) and
 * owns the blanks to its right; with no evidence (a single full row)
 * right-aligned is assumed, Slurm's default for fixed-width text.
 * ext gets 4 * n offsets: n territories [lo, hi), then the n extents
 * where values were seen. Returns 0, or -1 without a full row.
 */
static int column_extents(const struct slurm_table *t, size_t n, size_t *ext)
{
    size_t seen = 0, s0[128], e0[128];
    size_t lo[128], hi[128];
    int svar[128] = {0}, evar[128] = {0};
    if (n > 128)
        return -1;
    for (size_t r = 0; r < t->nrows && seen < 2000; r++) {
        const struct slurm_row *row = &t->rows[r];
        if (row->nf != n || !row->off || row->sliced)
            continue;
        for (size_t k = 0; k < n; k++) {
            size_t a = row->off[2 * k], b = row->off[2 * k + 1];
            if (!seen) {
                s0[k] = lo[k] = a;
                e0[k] = hi[k] = b;
                continue;
            }
            if (a != s0[k])
                svar[k] = 1;
            if (b != e0[k])
                evar[k] = 1;
            if (a < lo[k])
                lo[k] = a;
            if (b > hi[k])
                hi[k] = b;
        }
        seen++;
    }
    if (!seen)
        return -1;
    for (size_t k = 0; k < n; k++) {
        int left = !svar[k] && evar[k];
        ext[2 * n + 2 * k] = lo[k];
        ext[2 * n + 2 * k + 1] = hi[k];
        /* right-aligned (or unknown): from the previous column's end */
        ext[2 * k] = left || k == 0 ? lo[k] : hi[k - 1];
        ext[2 * k + 1] = hi[k];
        if (left && k + 1 < n)
            ext[2 * k + 1] = lo[k + 1];
    }
    return 0;
}

/*
 * Place the tokens of a blank-separated row whose token count differs
 * from the column count by where they stand: each token goes to the
 * column whose seen values it overlaps most, else whose blanks it stands
 * in (column_extents), else the nearest, columns in order; tokens landing
 * in one column are joined with a blank (a job name "x; touch"), columns
 * that get none are empty (a blank Partition on a step line). Fixed-width
 * output puts a value under its column whether it is left- or
 * right-aligned. Returns n malloc'ed cells (free with free_cells) that all
 * fit their roles, or NULL.
 */
static char **place_by_offsets(const size_t *ext, const struct slurm_row *row,
                               const enum slurm_role *roles, size_t n)
{
    struct strbuf *cell;
    char **out;
    size_t prev = 0;
    if (!ext || !row->off || !row->nf || n > 128)
        return NULL;
    cell = xcalloc(n, sizeof(*cell));
    for (size_t k = 0; k < n; k++)
        strbuf_init(&cell[k], 0);
    for (size_t j = 0; j < row->nf; j++) {
        size_t a = row->off[2 * j], b = row->off[2 * j + 1];
        size_t best = n, best_ov = 0, near = n, near_d = (size_t)-1;
        /* where values were seen first, then the blanks each column owns */
        for (int level = 1; level >= 0 && best == n; level--)
            for (size_t k = prev; k < n; k++) {
                size_t ra = ext[level * 2 * n + 2 * k];
                size_t rb = ext[level * 2 * n + 2 * k + 1];
                size_t lo = a > ra ? a : ra, hi = b < rb ? b : rb;
                size_t d = b <= ra ? ra - b : a >= rb ? a - rb : 0;
                if (hi > lo && hi - lo > best_ov) {
                    best_ov = hi - lo;
                    best = k;
                }
                if (level == 0 && d < near_d) {
                    near_d = d;
                    near = k;
                }
            }
        if (best == n)
            best = near;
        if (best == n)
            goto fail;
        if (cell[best].len)
            strbuf_addch(&cell[best], ' ');
        strbuf_addstr(&cell[best], row->f[j]);
        prev = best;
    }
    for (size_t k = 0; k < n; k++)
        if (cell[k].len && !slurm_valid_for(roles[k], cell[k].buf))
            goto fail;
    out = xcalloc(n, sizeof(*out));
    for (size_t k = 0; k < n; k++)
        out[k] = strbuf_detach(&cell[k], NULL);
    free(cell);
    return out;
fail:
    for (size_t k = 0; k < n; k++)
        strbuf_release(&cell[k]);
    free(cell);
    return NULL;
}

static void free_cells(char **c, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(c[k]);
    free(c);
}

/*
 * Shape of a cell that only a typed column prints: an ISO time, a
 * duration with a colon ("1:00", "2-00:00:00"), or a GRES/TRES request.
 * 1 = typed shape, 0 = neutral ("N/A", "None", empty), -1 = other text.
 */
static int typed_shape(const char *v)
{
    double d;
    if (slurm_none_token(v))
        return 0;
    if (slurm_is_iso(v))
        return 1;
    if (strchr(v, ':') && isdigit((unsigned char)v[0]) &&
        slurm_duration_parse(v, &d) == 1)
        return 1;
    if (!strncmp(v, "gres/", 5) || !strncmp(v, "gres:", 5) ||
        !strncmp(v, "cpu=", 4) || !strncmp(v, "billing=", 8))
        return 1;
    return -1;
}

/* Free-text roles that a well-known layout may put on any value. */
static int free_role(enum slurm_role r)
{
    switch (r) {
    case R_REASON:
    case R_NODELIST_REASON:
    case R_NODELIST:
    case R_PARTITION:
    case R_USER:
    case R_ACCOUNT:
    case R_NAME:
        return 1;
    default:
        return 0;
    }
}

/*
 * A layout whose free-text column holds, on every full row, a time, a
 * duration or a GRES request (and nothing else but "N/A"-like blanks)
 * has put a typed column under a text role ("123 RUNNING 1:00" read as
 * JOBID STATE NAME): it is not the layout the output was printed with.
 */
static int layout_plausible(const struct slurm_table *t,
                            const enum slurm_role *roles, size_t n,
                            size_t check)
{
    for (size_t k = 0; k < n; k++) {
        int typed = 0, other = 0;
        if (!free_role(roles[k]))
            continue;
        for (size_t r = 0; r < check; r++) {
            const struct slurm_row *row = &t->rows[r];
            int sh;
            /* a longer row may be a free-text tail joined into the last
             * column: the columns before it still stand where they are */
            if (row->nf < n || (row->nf > n && k == n - 1))
                continue;
            sh = typed_shape(row->f[k]);
            if (sh > 0)
                typed++;
            else if (sh < 0)
                other++;
        }
        if (typed && !other)
            return 0;
    }
    return 1;
}

/*
 * Column shape over the full rows of a headerless table: 'i' (ISO times
 * and blanks), 'd' (durations with a colon and blanks such as
 * UNLIMITED/N/A), 'f' (durations of which some have a fractional part:
 * sacct prints CPU times as MM:SS.mmm, never an elapsed time), or 0.
 */
static char column_shape(const struct slurm_table *t, size_t k, size_t n)
{
    int iso = 0, dur = 0, frac = 0, other = 0;
    size_t check = t->nrows < 200 ? t->nrows : 200;
    for (size_t r = 0; r < check; r++) {
        const struct slurm_row *row = &t->rows[r];
        const char *v;
        double d;
        if (row->nf != n)
            continue;
        v = row->f[k];
        if (slurm_is_iso(v))
            iso++;
        else if (strchr(v, ':') && isdigit((unsigned char)v[0]) &&
                 slurm_duration_parse(v, &d) == 1) {
            dur++;
            if (strchr(v, '.'))
                frac++;
        } else if (!(slurm_none_token(v) || slurm_duration_parse(v, &d) == 0))
            other++;
    }
    if (other)
        return 0;
    if (iso && !dur)
        return 'i';
    if (dur && !iso)
        return frac ? 'f' : 'd';
    return 0;
}

/*
 * Choose roles for a headerless table: the first well-known field list
 * whose every typed column validates on every row (up to 200 rows), else
 * roles guessed from the values. Returns the number of roles.
 */
static size_t headerless_roles(const struct slurm_table *t,
                               const struct slurm_layout *layouts,
                               const struct slurm_name_role *tbl,
                               enum slurm_role *roles, size_t max,
                               int *merge_tail)
{
    size_t check = t->nrows < 200 ? t->nrows : 200;
    *merge_tail = 0;
    layout_matched = 0;
    if (!t->nrows)
        return 0;
    if (layouts[0].fields && layouts[0].sep == SLURM_LAYOUT_OWN) {
        layout_matched = 1; /* printed in it: no other, no guess */
        return layout_roles(layouts[0].fields, tbl, roles, max);
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t li = 0; layouts[li].fields; li++) {
            size_t n, bad = 0;
            int ok = 1, tail, full = 0;
            size_t ext[512];
            int have_ext;
            if (layouts[li].sep && layouts[li].sep != t->sep)
                continue;
            n = layout_roles(layouts[li].fields, tbl, roles, max);
            tail = t->sep == ' ' && free_text(roles[n - 1]);
            have_ext =
                t->sep == ' ' && n <= 128 && column_extents(t, n, ext) == 0;
            for (size_t r = 0; r < check && ok; r++) {
                const struct slurm_row *row = &t->rows[r];
                int row_ok = 1;
                if (pass == 1 && row->nf != n && t->sep == ' ') {
                    long map[128];
                    char **c =
                        place_by_offsets(have_ext ? ext : NULL, row, roles, n);
                    if (c)
                        free_cells(c, n);
                    else if (row->nf > n ||
                             align_tokens(roles, n, row->f, row->nf, map) < 0)
                        row_ok = 0;
                } else if (row->nf != n && !(tail && row->nf > n)) {
                    row_ok = 0;
                } else {
                    full = 1;
                    for (size_t k = 0; k < n && row_ok; k++) {
                        if (k == n - 1 && tail && row->nf > n)
                            continue;
                        if (!slurm_valid_for(roles[k], row->f[k]))
                            row_ok = 0;
                    }
                }
                /* a stray row (a job name with a blank) must not sink a
                 * layout every other row fits; it is reported, not guessed */
                if (!row_ok && (pass == 0 || ++bad * 10 > check))
                    ok = 0;
            }
            if (ok && full && !layout_plausible(t, roles, n, check))
                ok = 0;
            if (ok && full) {
                *merge_tail = tail;
                layout_matched = 1;
                return n;
            }
        }
    /* guess from the values: id and state from the first row, times and
     * durations from the shape of each column over every full row */
    {
        const struct slurm_row *row = &t->rows[0];
        size_t n = row->nf < max ? row->nf : max;
        int have_id = 0, have_state = 0, have_exit = 0, nts = 0, nd = 0;
        int is_squeue = tbl == slurm_squeue_names;
        size_t ts[4];
        static const enum slurm_role squeue_durs[] = {R_ELAPSED, R_TIMELIMIT,
                                                      R_TIMELEFT};
        for (size_t k = 0; k < n; k++) {
            const char *v = row->f[k];
            char shape = column_shape(t, k, row->nf);
            roles[k] = R_IGNORE;
            if (!have_id && slurm_is_job_id(v)) {
                roles[k] = R_ID;
                have_id = 1;
            } else if (!have_state &&
                       strcmp(slurm_job_state_normalize(v, NULL), "UNKNOWN") &&
                       strlen(v) > 2) {
                roles[k] = R_STATE;
                have_state = 1;
            } else if (!have_state && is_squeue && slurm_compact_state(v)) {
                roles[k] = R_STATE_COMPACT;
                have_state = 1;
            } else if (!is_squeue && !have_exit && strchr(v, ':') &&
                       slurm_valid_for(R_EXIT, v) && *v) {
                roles[k] = R_EXIT;
                have_exit = 1;
            } else if (shape == 'i' && nts < 4) {
                ts[nts++] = k;
            } else if (shape == 'f') {
                roles[k] = is_squeue ? R_IGNORE : R_TOTALCPU;
            } else if (shape == 'd') {
                if (is_squeue) {
                    if (nd < 3)
                        roles[k] = squeue_durs[nd];
                } else if (!nd) {
                    roles[k] = R_ELAPSED;
                }
                nd++;
            } else if (strstr(v, "cpu=")) {
                roles[k] = R_TRES_ALLOC;
            } else if (is_squeue &&
                       (!strncmp(v, "gres/", 5) || !strncmp(v, "gres:", 5))) {
                roles[k] = R_TRES_PER_NODE;
            }
        }
        if (nts == 1) {
            roles[ts[0]] = R_START;
        } else if (nts == 2) {
            roles[ts[0]] = R_START;
            roles[ts[1]] = R_END;
        } else if (nts >= 3) {
            roles[ts[0]] = R_SUBMIT;
            roles[ts[nts - 2]] = R_START;
            roles[ts[nts - 1]] = R_END;
        }
        return n;
    }
}

static void add_error_kind(struct slurm_jobs *jobs, const char *kind,
                           long record, long expected, long got, const char *id)
{
    struct slurm_rec_error *e;
    ALLOC_GROW(jobs->errors, jobs->nerrors + 1, jobs->errors_alloc);
    e = &jobs->errors[jobs->nerrors++];
    e->record = record;
    e->kind = kind;
    e->expected_fields = expected;
    e->got_fields = got;
    e->id = id ? xstrdup(id) : NULL;
}

static void add_error(struct slurm_jobs *jobs, long record, long expected,
                      long got, const char *id)
{
    add_error_kind(jobs, "field_count_mismatch", record, expected, got, id);
}

/*
 * File the record j just built: a sacct step ("123.batch") with its
 * job_id and step among jobs->steps, anything else among jobs->jobs;
 * array and het parts from the id. j is copied, or (in_slot) is already
 * the next free job slot, &jobs->jobs[jobs->njobs], which the caller
 * grew.
 */
static void file_record(struct slurm_jobs *jobs, struct slurm_job *j,
                        int is_sacct, int in_slot)
{
    char *dot = is_sacct && j->id ? strchr(j->id, '.') : NULL;
    if (dot) {
        j->job_id = arena_strndup(&jobs->strings, j->id, (size_t)(dot - j->id));
        j->step = dot + 1; /* j->id is one of jobs->strings: its tail */
        slurm_id_parts(j, &jobs->strings);
        ALLOC_GROW(jobs->steps, jobs->nsteps + 1, jobs->steps_alloc);
        jobs->steps[jobs->nsteps++] = *j;
        return;
    }
    slurm_id_parts(j, &jobs->strings);
    if (!in_slot) {
        ALLOC_GROW(jobs->jobs, jobs->njobs + 1, jobs->jobs_alloc);
        jobs->jobs[jobs->njobs] = *j;
    }
    jobs->njobs++;
}

int slurm_parse_table(const char *buf, size_t len, struct slurm_jobs *jobs,
                      const struct slurm_name_role *tbl,
                      const struct slurm_layout *layouts, int is_sacct,
                      const struct cmd_spec *spec, exa_error_t *err)
{
    struct slurm_text in = {NULL, 0, buf, len, 0};
    return slurm_parse_table_ex(&in, jobs, tbl, layouts, is_sacct, spec,
                                SLURM_HOST_BUDGET, NULL, err);
}

/* Shared table walk for squeue and sacct. */
int slurm_parse_table_ex(const struct slurm_text *in, struct slurm_jobs *jobs,
                         const struct slurm_name_role *tbl,
                         const struct slurm_layout *layouts, int is_sacct,
                         const struct cmd_spec *spec, size_t host_budget,
                         struct slurm_parse_info *info, exa_error_t *err)
{
    struct slurm_table t;
    enum slurm_role roles[128];
    size_t nroles = 0;
    int merge_tail = 0;
    struct slurm_memo memo = {0};
    struct slurm_row_ctx ctx = {!is_sacct,      host_budget, 0,     NULL, NULL,
                                &jobs->strings, 0,           &memo, NULL, 0};
    size_t ext[512];
    int have_ext = 0;
    long id_col = -1;

    memset(&t, 0, sizeof(t));
    t.text = &jobs->strings; /* the records point at the cells' text */
    t.head = in->head;
    t.head_len = in->head_len;
    t.rows_hint = in->nrec;
    cur_names = tbl;
    if (info)
        memset(info, 0, sizeof(*info));
    if (slurm_table_split_spec(in->buf, in->len, known_cur, spec, &t, err) < 0)
        return -1;
    ctx.delimited = t.sep != ' ';
    if (info) {
        info->nrecords = t.nrows;
        info->hdr_printed = t.hdr_printed;
        info->delimited = t.sep != ' ';
        info->error_line = t.error_line != NULL;
    }
    if (spec && spec->tool == CMD_TOOL_SQUEUE)
        ctx.state_filter = spec->state_filter;
    if (t.error_line && !t.nrows && !t.hdr) {
        exa_err(err, EXA_ESCHED, "%s", t.error_line);
        slurm_table_free(&t);
        return -2;
    }
    /* a record per row at most: one allocation, not a doubling series of
     * copies of records of about 360 bytes */
    if (t.nrows)
        ALLOC_GROW(jobs->jobs, jobs->njobs + t.nrows, jobs->jobs_alloc);
    if (t.hdr) {
        nroles = t.nhdr < 128 ? t.nhdr : 128;
        for (size_t i = 0; i < nroles; i++) {
            char u[64];
            slurm_upper(t.hdr[i], u, sizeof(u));
            if (!slurm_lookup_role(tbl, u, &roles[i]))
                roles[i] = R_IGNORE;
        }
    } else {
        nroles = headerless_roles(&t, layouts, tbl, roles, 128, &merge_tail);
        if (t.sep != ' ' && t.nrows && !t.not_all_trailing && !layout_matched) {
            /* every line ends with the separator: sacct -p, not -P */
            slurm_table_drop_trailing(&t);
            nroles =
                headerless_roles(&t, layouts, tbl, roles, 128, &merge_tail);
        }
    }
    have_ext = t.sep == ' ' && nroles && nroles <= 128 &&
               column_extents(&t, nroles, ext) == 0;
    /* the id column a bad record is reported by: JOBID, else JobIDRaw */
    for (size_t k = 0; k < nroles; k++)
        if (roles[k] == R_ID || (id_col < 0 && roles[k] == R_ID_RAW)) {
            id_col = (long)k;
            if (roles[k] == R_ID)
                break;
        }
    if (is_sacct && id_col >= 0) {
        /* the steps ("123.batch") among the rows, by that column: their
         * records in one allocation too (a guess: file_record decides) */
        size_t ns = 0;
        for (size_t r = 0; r < t.nrows; r++)
            if ((size_t)id_col < t.rows[r].nf &&
                strchr(t.rows[r].f[id_col], '.'))
                ns++;
        if (ns)
            ALLOC_GROW(jobs->steps, jobs->nsteps + ns, jobs->steps_alloc);
    }
    for (size_t r = 0; r < t.nrows; r++) {
        struct slurm_row *row = &t.rows[r];
        struct slurm_job j;
        char **f = row->f;
        size_t nf = row->nf;
        char *joined = NULL;

        ctx.cut = row->cut;
        ctx.cells_kept = 0; /* cells of the paths below are copied */
        ctx.text = NULL;
        ctx.text_len = 0;
        if (t.hdr && t.sep != ' ' && nf != t.nhdr) {
            add_error(jobs, (long)r + 1, (long)t.nhdr, (long)nf,
                      id_col >= 0 && (size_t)id_col < nf ? f[id_col] : NULL);
            continue;
        }
        if (!t.hdr && nf != nroles) {
            if (merge_tail && nf > nroles) {
                struct strbuf sb = STRBUF_INIT;
                for (size_t k = nroles - 1; k < nf; k++) {
                    if (sb.len)
                        strbuf_addch(&sb, ' ');
                    strbuf_addstr(&sb, f[k]);
                }
                joined = strbuf_detach(&sb, NULL);
            } else if (t.sep != ' ') {
                add_error(jobs, (long)r + 1, (long)nroles, (long)nf,
                          id_col >= 0 && (size_t)id_col < nf ? f[id_col]
                                                             : NULL);
                continue;
            }
        }
        if (t.sep == ' ' && nf != nroles && !row->sliced && nroles) {
            char **c =
                place_by_offsets(have_ext ? ext : NULL, row, roles, nroles);
            if (c) {
                slurm_build_job(&j, c, nroles, roles, nroles, &ctx);
                free_cells(c, nroles);
                free(joined);
                goto built;
            }
        }
        if (t.sep == ' ' && nf < nroles && !row->sliced) {
            long map[128];
            char **g;
            if (align_tokens(roles, nroles, f, nf, map) == 0) {
                g = xcalloc(nroles, sizeof(*g));
                for (size_t k = 0; k < nroles; k++)
                    g[k] = map[k] >= 0 ? f[map[k]] : (char *)"";
                slurm_build_job(&j, g, nroles, roles, nroles, &ctx);
                free(g);
                goto built;
            }
        }
        if (joined) {
            char *save = f[nroles - 1];
            f[nroles - 1] = joined;
            slurm_build_job(&j, f, nroles, roles, nroles, &ctx);
            f[nroles - 1] = save;
            free(joined);
        } else {
            /* the usual row: built in the next job's slot, not copied
             * there */
            ALLOC_GROW(jobs->jobs, jobs->njobs + 1, jobs->jobs_alloc);
            ctx.cells_kept = row->kept;
            ctx.text = row->text;
            ctx.text_len = row->text_len;
            slurm_build_job(&jobs->jobs[jobs->njobs], f, nf, roles, nroles,
                            &ctx);
            if (jobs->jobs[jobs->njobs].id_mismatch) { /* the slot stays free */
                add_error_kind(jobs, "id_mismatch", (long)r + 1, (long)nroles,
                               (long)nf, jobs->jobs[jobs->njobs].id);
                continue;
            }
            file_record(jobs, &jobs->jobs[jobs->njobs], is_sacct, 1);
            continue;
        }
    built:
        if (j.id_mismatch) {
            add_error_kind(jobs, "id_mismatch", (long)r + 1, (long)nroles,
                           (long)nf, j.id);
            continue;
        }
        file_record(jobs, &j, is_sacct, 0);
    }
    if (info)
        info->hosts_expanded = host_budget - ctx.host_budget;
    slurm_table_free(&t);
    return 0;
}
