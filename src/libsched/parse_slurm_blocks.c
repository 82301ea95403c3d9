/*
 * parse_slurm_blocks.c - a large squeue or sacct table parsed a block of
 * records at a time on two threads, with the result of one parse
 * (parse_slurm.h, slurm_parse_blocks()).
 *
 * What makes a block's parse the same as the whole one's:
 *  - every block is the header line and a run of whole records, so each
 *    block's split finds the same header, separator, record separator
 *    (0x1E or newline) and trailing-separator rule as the whole output;
 *  - blocks are made only for a delimited table with a printed header:
 *    blank-aligned columns take their extents from all rows, and
 *    headerless tables their roles from the rows' values;
 *  - error records are numbered by adding the records of the blocks
 *    before (slurm_parse_info.nrecords);
 *  - the node names expanded from hostlists count against one budget for
 *    the whole output (SLURM_HOST_BUDGET): a block parsed with the whole
 *    budget that expanded no more than what is left expanded exactly the
 *    lists one parse would have; otherwise it is parsed again, in turn,
 *    with what is left;
 *  - a count of records over SLURM_TABLE_MAX_ROWS fails the parse at the
 *    block that passes it, as one parse refuses such a table (the blocks
 *    before it were taken already, as when a later block fails).
 *
 * Blocks are cut by bytes, at the first record boundary past about
 * block_rows records' worth (the mean length of the first 64 records):
 * finding every record here too was one more scan of every byte (a
 * memchr per record) before the parse scans them again.
 */
#include "libsched/parse_slurm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_slurm_int.h"
#include "libsched/slurm_table.h"
#include "libutil/xalloc.h"

/* Blocks parsed ahead of take at most (their records wait in memory). */
#define BLOCKS_AHEAD 4

/* The records of one block: [p, q) of the output, about n of them (the
 * first room its split makes for rows). */
struct blk {
    const char *p, *q;
    size_t n;
};

/* A block's parse; state guarded by par.mu. */
struct slot {
    struct slurm_jobs jobs;
    struct slurm_parse_info info;
    void *out; /* work's, for take */
    exa_error_t err;
    int rc;
    int state; /* 0 unclaimed, 1 being parsed, 2 parsed */
};

/* What the two threads share; mu guards next, taken, stop and the slots'
 * state. */
struct par {
    const char *hdr;
    size_t hdr_len;
    int is_sacct;
    const struct cmd_spec *spec;
    const struct slurm_block_ops *ops;
    void *ctx;
    const struct blk *blk;
    size_t nblk;
    struct slot *slot;
    size_t next;  /* the first unclaimed block */
    size_t taken; /* blocks handed to take (or failed) so far */
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* The table parse of in. */
static int table_parse(int is_sacct, const struct slurm_text *in,
                       const struct cmd_spec *spec, struct slurm_jobs *jobs,
                       size_t budget, struct slurm_parse_info *info,
                       exa_error_t *err)
{
    return is_sacct ? sacct_parse_table(in, spec, jobs, budget, info, err)
                    : squeue_parse_table(in, spec, jobs, budget, info, err);
}

/* Parse block k (the header line, then its records: read in place, as
 * if one buffer held both) into its slot, with budget node names to
 * expand, and run work on it. */
static void parse_block(struct par *pp, size_t k, size_t budget)
{
    struct slot *sl = &pp->slot[k];
    struct slurm_text in = {pp->hdr, pp->hdr_len, pp->blk[k].p,
                            (size_t)(pp->blk[k].q - pp->blk[k].p),
                            pp->blk[k].n};
    memset(&sl->jobs, 0, sizeof(sl->jobs));
    sl->rc = table_parse(pp->is_sacct, &in, pp->spec, &sl->jobs, budget,
                         &sl->info, &sl->err) < 0
                 ? -1
                 : 0;
    sl->out =
        sl->rc == 0 && pp->ops->work ? pp->ops->work(pp->ctx, &sl->jobs) : NULL;
}

/* The next block to parse, now claimed; nblk when none may be (all
 * claimed, BLOCKS_AHEAD waiting, or stopped). Under mu. */
static size_t claim(struct par *pp)
{
    if (pp->stop || pp->next >= pp->nblk ||
        pp->next >= pp->taken + BLOCKS_AHEAD)
        return pp->nblk;
    pp->slot[pp->next].state = 1;
    return pp->next++;
}

/* Parse claimed block k outside the lock and mark it parsed. Under mu. */
static void parse_claimed(struct par *pp, size_t k)
{
    pthread_mutex_unlock(&pp->mu);
    parse_block(pp, k, SLURM_HOST_BUDGET);
    pthread_mutex_lock(&pp->mu);
    pp->slot[k].state = 2;
    pthread_cond_broadcast(&pp->cv);
}

/* The second thread: whatever block is next, until none is left. */
static void *parse_blocks_main(void *arg)
{
    struct par *pp = arg;
    pthread_mutex_lock(&pp->mu);
    while (!pp->stop && pp->next < pp->nblk) {
        size_t k = claim(pp);
        if (k < pp->nblk)
            parse_claimed(pp, k);
        else
            pthread_cond_wait(&pp->cv, &pp->mu);
    }
    pthread_mutex_unlock(&pp->mu);
    return NULL;
}

static void drop_slot(struct par *pp, struct slot *sl)
{
    if (sl->out && pp->ops->drop)
        pp->ops->drop(pp->ctx, sl->out);
    sl->out = NULL;
    slurm_jobs_free(&sl->jobs);
}

/*
 * Where the header line of buf is ([*hs, *he)) and the records start, and
 * whether the table uses 0x1E records (*rs). Returns 0, or -1 when buf is
 * not one whose blocks parse as the whole (see the top of this file).
 */
static int find_header(const char *buf, size_t len, const char **hs,
                       const char **he, int *rs)
{
    const char *p = buf, *end = buf + len, *nl;
    while (p < end && (*p == '\n' || *p == '\r'))
        p++;
    if (p == end)
        return -1;
    *hs = p;
    *rs = *p == 0x1e;
    if (*rs) {
        /* the header record runs to the next 0x1E (its newline and any
         * blank lines after it are trimmed, in each block as in one) */
        const char *e = memchr(p + 1, 0x1e, (size_t)(end - p - 1));
        if (!e)
            return -1;
        *he = e;
        return 0;
    }
    nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
        return -1;
    *he = nl + 1;
    /* without 0x1E in the header, none may be anywhere: one 0x1E turns the
     * whole output into 0x1E records */
    return memchr(buf, 0x1e, len) ? -1 : 0;
}

/* Where the record at or after x ends in [x, end): before the next 0x1E
 * past x (rs), else just past the next newline at or after x; end when
 * there is none. */
static const char *record_end(const char *x, const char *end, int rs)
{
    const char *e;
    if (rs) {
        e = x + 1 < end ? memchr(x + 1, 0x1e, (size_t)(end - x - 1)) : NULL;
        return e ? e : end;
    }
    e = memchr(x, '\n', (size_t)(end - x));
    return e ? e + 1 : end;
}

/* The blocks of [p, end): runs of about rows records, each cut at the
 * first record boundary (before a 0x1E with rs, else after a newline) at
 * least rows times the mean record length of the first 64 records past
 * its start. */
static struct blk *cut_blocks(const char *p, const char *end, int rs,
                              size_t rows, size_t *nblk)
{
    struct blk *blk = NULL;
    size_t alloc = 0, n = 0, mean, bytes;
    const char *q = p;
    *nblk = 0;
    while (n < 64 && q < end) {
        q = record_end(q, end, rs);
        n++;
    }
    mean = n ? (size_t)(q - p) / n : 1;
    if (!mean)
        mean = 1;
    bytes = rows > (size_t)-1 / mean ? (size_t)-1 : rows * mean;
    while (p < end) {
        q = (size_t)(end - p) <= bytes ? end
                                       : record_end(p + bytes - 1, end, rs);
        ALLOC_GROW(blk, *nblk + 1, alloc);
        blk[*nblk].p = p;
        blk[*nblk].n = rows;
        blk[(*nblk)++].q = q;
        p = q;
    }
    return blk;
}

/* The whole output as one block, on the caller's thread. */
static int parse_whole(const char *buf, size_t len, int is_sacct,
                       const struct cmd_spec *spec,
                       const struct slurm_block_ops *ops, void *ctx,
                       const char **kind, exa_error_t *err)
{
    struct slurm_jobs jobs;
    const char *k = NULL;
    int rc;
    memset(&jobs, 0, sizeof(jobs));
    rc = is_sacct ? sacct_parse_cmd(buf, len, spec, &jobs, &k, err)
                  : squeue_parse_cmd(buf, len, spec, &jobs, &k, err);
    if (kind)
        *kind = k;
    if (rc == 0)
        ops->take(ctx, &jobs, ops->work ? ops->work(ctx, &jobs) : NULL);
    slurm_jobs_free(&jobs);
    return rc;
}

int slurm_parse_blocks(const char *buf, size_t len, int is_sacct,
                       const struct cmd_spec *spec, size_t block_rows,
                       const struct slurm_block_ops *ops, void *ctx,
                       const char **kind, exa_error_t *err)
{
    const char *hs, *he;
    struct slurm_text hin = {NULL, 0, NULL, 0, 0};
    struct slurm_parse_info hinfo;
    struct slurm_jobs hjobs;
    struct blk *blk;
    struct par pp;
    size_t nblk, k, budget = SLURM_HOST_BUDGET, recs = 0;
    pthread_t th;
    int rs, threaded = 0, rc = 0, hrc;

    if (!block_rows)
        block_rows = 4096;
    if (spec && spec->tool != (is_sacct ? CMD_TOOL_SACCT : CMD_TOOL_SQUEUE))
        spec = NULL;
    if (find_header(buf, len, &hs, &he, &rs) < 0)
        return parse_whole(buf, len, is_sacct, spec, ops, ctx, kind, err);
    /* the header line alone: taken as a printed header, on a separator */
    memset(&hjobs, 0, sizeof(hjobs));
    hin.buf = hs;
    hin.len = (size_t)(he - hs);
    hrc = table_parse(is_sacct, &hin, spec, &hjobs, SLURM_HOST_BUDGET, &hinfo,
                      NULL);
    slurm_jobs_free(&hjobs);
    if (hrc < 0 || !hinfo.hdr_printed || !hinfo.delimited || hinfo.nrecords ||
        hinfo.error_line)
        return parse_whole(buf, len, is_sacct, spec, ops, ctx, kind, err);
    blk = cut_blocks(he, buf + len, rs, block_rows, &nblk);
    if (nblk < 2) {
        free(blk);
        return parse_whole(buf, len, is_sacct, spec, ops, ctx, kind, err);
    }

    memset(&pp, 0, sizeof(pp));
    pp.hdr = hs;
    pp.hdr_len = (size_t)(he - hs);
    pp.is_sacct = is_sacct;
    pp.spec = spec;
    pp.ops = ops;
    pp.ctx = ctx;
    pp.blk = blk;
    pp.nblk = nblk;
    pp.slot = xcalloc(nblk, sizeof(*pp.slot));
    pthread_mutex_init(&pp.mu, NULL);
    pthread_cond_init(&pp.cv, NULL);
    threaded = pthread_create(&th, NULL, parse_blocks_main, &pp) == 0;
    for (k = 0; k < nblk; k++) {
        struct slot *sl = &pp.slot[k];
        /* block k: parsed by whichever thread claimed it; while it is not,
         * this thread parses the next unclaimed one */
        pthread_mutex_lock(&pp.mu);
        while (sl->state != 2) {
            size_t j = claim(&pp);
            if (j < nblk)
                parse_claimed(&pp, j);
            else
                pthread_cond_wait(&pp.cv, &pp.mu);
        }
        pthread_mutex_unlock(&pp.mu);
        if (sl->rc == 0 && sl->info.hosts_expanded > budget) {
            /* one parse would have run out of names here: again, with
             * what is left */
            drop_slot(&pp, sl);
            parse_block(&pp, k, budget);
        }
        if (sl->rc == 0 && sl->info.nrecords > SLURM_TABLE_MAX_ROWS - recs) {
            /* one parse refuses the whole table (slurm_table_split) */
            sl->rc = -1;
            exa_err(&sl->err, EXA_EPARSE, "more than %d rows",
                    SLURM_TABLE_MAX_ROWS);
        }
        if (sl->rc != 0) {
            rc = -1;
            if (err)
                *err = sl->err;
        } else {
            budget -= sl->info.hosts_expanded;
            for (size_t e = 0; e < sl->jobs.nerrors; e++)
                sl->jobs.errors[e].record += (long)recs;
            recs += sl->info.nrecords;
            ops->take(ctx, &sl->jobs, sl->out);
            sl->out = NULL;
        }
        drop_slot(&pp, sl);
        pthread_mutex_lock(&pp.mu);
        pp.taken = k + 1;
        if (rc)
            pp.stop = 1;
        pthread_cond_broadcast(&pp.cv);
        pthread_mutex_unlock(&pp.mu);
        if (rc)
            break;
    }
    if (threaded)
        pthread_join(th, NULL);
    /* blocks parsed past a failure are dropped */
    for (k = k + 1; k < nblk; k++)
        if (pp.slot[k].state == 2)
            drop_slot(&pp, &pp.slot[k]);
    pthread_cond_destroy(&pp.cv);
    pthread_mutex_destroy(&pp.mu);
    free(pp.slot);
    free(blk);
    if (kind)
        *kind = "parse_error";
    return rc;
}

/* squeue_parse_cmd_blocks' take: the caller's cb. */
struct cb_ctx {
    void (*cb)(void *ctx, struct slurm_jobs *jobs);
    void *ctx;
};

static void cb_take(void *ctx, struct slurm_jobs *jobs, void *out)
{
    struct cb_ctx *c = ctx;
    (void)out;
    c->cb(c->ctx, jobs);
}

int squeue_parse_cmd_blocks(const char *buf, size_t len,
                            const struct cmd_spec *spec, size_t block_rows,
                            void (*cb)(void *ctx, struct slurm_jobs *jobs),
                            void *ctx, exa_error_t *err)
{
    static const struct slurm_block_ops ops = {NULL, cb_take, NULL};
    struct cb_ctx c = {cb, ctx};
    return slurm_parse_blocks(buf, len, 0, spec, block_rows, &ops, &c, NULL,
                              err);
}

/* slurm_jobs_stream_json(): the document's writer between the blocks. */
struct json_stream {
    struct jsonw w;      /* the document, to out */
    int with_steps;      /* sacct: a "steps" array after "jobs" */
    struct jsonw *steps; /* each block's steps' items, put after the jobs */
    size_t nsteps, steps_alloc;
    struct slurm_jobs errors; /* only errors: the blocks', renumbered */
};

/* A block's items as text, written on the thread that parsed it: the
 * items of the "jobs" and "steps" arrays of the document's object, at
 * depth 2. */
struct json_frag {
    struct jsonw jobs, steps;
};

static void *json_work(void *ctx, const struct slurm_jobs *jobs)
{
    const struct json_stream *js = ctx; /* with_steps only: read-only */
    struct json_frag *f = xcalloc(1, sizeof(*f));
    jsonw_init_items(&f->jobs, 1, 2);
    slurm_jobs_write_items(jobs, 0, &f->jobs);
    jsonw_init_items(&f->steps, 1, 2);
    if (js->with_steps)
        slurm_jobs_write_items(jobs, 1, &f->steps);
    return f;
}

static void json_drop(void *ctx, void *out)
{
    struct json_frag *f = out;
    (void)ctx;
    jsonw_discard(&f->jobs);
    jsonw_discard(&f->steps);
    free(f);
}

static void json_take(void *ctx, struct slurm_jobs *jobs, void *out)
{
    struct json_stream *js = ctx;
    struct json_frag *f = out;
    struct slurm_jobs *e = &js->errors;
    jsonw_put_items(&js->w, &f->jobs);
    /* kept, not copied, for after the jobs */
    ALLOC_GROW(js->steps, js->nsteps + 1, js->steps_alloc);
    js->steps[js->nsteps++] = f->steps;
    for (size_t i = 0; i < jobs->nerrors; i++) {
        ALLOC_GROW(e->errors, e->nerrors + 1, e->errors_alloc);
        e->errors[e->nerrors++] = jobs->errors[i];
        jobs->errors[i].id = NULL; /* moved */
    }
    free(f);
}

int slurm_jobs_stream_json(const char *buf, size_t len, int is_sacct,
                           const struct cmd_spec *spec, size_t block_rows,
                           FILE *out, const char **kind, exa_error_t *err)
{
    static const struct slurm_block_ops ops = {json_work, json_take, json_drop};
    struct json_stream js;
    int rc;
    memset(&js, 0, sizeof(js));
    js.with_steps = is_sacct;
    jsonw_init(&js.w, out, 1);
    jsonw_obj_begin(&js.w);
    jsonw_key_lit(&js.w, "jobs");
    jsonw_arr_begin(&js.w);
    rc = slurm_parse_blocks(buf, len, is_sacct, spec, block_rows, &ops, &js,
                            kind, err);
    if (rc < 0) {
        jsonw_discard(&js.w);
    } else {
        jsonw_arr_end(&js.w);
        if (is_sacct) {
            jsonw_key_lit(&js.w, "steps");
            jsonw_arr_begin(&js.w);
            for (size_t i = 0; i < js.nsteps; i++)
                jsonw_put_items(&js.w, &js.steps[i]);
            jsonw_arr_end(&js.w);
        }
        slurm_jobs_write_errors(&js.errors, &js.w);
        jsonw_obj_end(&js.w);
        jsonw_finish(&js.w); /* a closed stdout is the reader's choice */
    }
    for (size_t i = 0; i < js.nsteps; i++)
        jsonw_discard(&js.steps[i]); /* put (and so released) or not */
    free(js.steps);
    slurm_jobs_free(&js.errors);
    return rc;
}
