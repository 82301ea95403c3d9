/*
 * parse_squeue.c - squeue output: squeue's column names and the field
 * lists of well-known headerless formats, handed to the shared table walk
 * (parse_slurm_table.c). `scontrol show job` text, which some tools feed
 * where squeue output is expected, goes to parse_scontrol.c instead.
 * Source: squeue(1) -o/-O field names.
 */
#include "libsched/parse_slurm.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_slurm_int.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

const struct slurm_name_role slurm_squeue_names[] = {
    {"JOBID", R_ID},
    {"STATE", R_STATE},
    {"ST", R_STATE_COMPACT},
    {"START_TIME", R_START},
    {"END_TIME", R_END},
    {"SUBMIT_TIME", R_SUBMIT},
    {"TIME", R_ELAPSED},
    {"TIME_LIMIT", R_TIMELIMIT},
    {"TIME_LEFT", R_TIMELEFT},
    {"TRES_ALLOC", R_TRES_ALLOC},
    {"TRES_PER_JOB", R_TRES_PER_JOB},
    {"TRES_PER_NODE", R_TRES_PER_NODE},
    {"NODES", R_NODES},
    {"NODELIST", R_NODELIST},
    {"NODELIST(REASON)", R_NODELIST_REASON},
    {"REASON", R_REASON},
    {"PARTITION", R_PARTITION},
    {"ACCOUNT", R_ACCOUNT},
    {"USER", R_USER},
    {"NAME", R_NAME},
    {"CPUS", R_NCPUS},
    {"EXEC_HOST", R_BATCHHOST},
    {"BATCHHOST", R_BATCHHOST},
    {"CLUSTER", R_CLUSTER},
    {"PRIORITY", R_PRIORITY},
    {"ARRAY_JOB_ID", R_IGNORE},
    {"ARRAY_TASK_ID", R_IGNORE},
    {"MIN_CPUS", R_IGNORE},
    {"MIN_TMP_DISK", R_IGNORE},
    {"DEPENDENCY", R_IGNORE},
    {"FEATURES", R_IGNORE},
    {"GROUP", R_IGNORE},
    {"OVER_SUBSCRIBE", R_IGNORE},
    {"SOCKETS_PER_NODE", R_IGNORE},
    {"CORES_PER_SOCKET", R_IGNORE},
    {"THREADS_PER_CORE", R_IGNORE},
    {"COMMENT", R_IGNORE},
    {"MIN_MEMORY", R_IGNORE},
    {"REQ_NODES", R_IGNORE},
    {"COMMAND", R_IGNORE},
    {"CONTIGUOUS", R_IGNORE},
    {"QOS", R_IGNORE},
    {"UID", R_IGNORE},
    {"RESERVATION", R_IGNORE},
    {"WCKEY", R_IGNORE},
    {"LICENSES", R_IGNORE},
    {"EXC_NODES", R_IGNORE},
    {"CORE_SPEC", R_IGNORE},
    {"NICE", R_IGNORE},
    {"SCHEDNODES", R_IGNORE},
    {"S:C:T", R_IGNORE},
    {"WORK_DIR", R_IGNORE},
    {"CPUS_PER_TASK", R_IGNORE},
    {"TRES_PER_TASK", R_IGNORE},
    {"TRES_PER_SOCKET", R_IGNORE},
    {"JOBID_RAW", R_ID_RAW},
    {"USERNAME", R_USER},
    {"ACCRUE_TIME", R_IGNORE},
    {"ELIGIBLE_TIME", R_IGNORE},
    {"PENDING_TIME", R_IGNORE},
    {"NUM_TASKS", R_IGNORE},
    {"GRES", R_TRES_PER_NODE},
    {"HET_JOB_ID", R_IGNORE},
    {"HET_JOB_OFFSET", R_IGNORE},
    {"HET_JOB_ID_SET", R_IGNORE},
    {"EXIT_CODE", R_IGNORE},
    {"LAST_SCHED_EVAL", R_IGNORE},
    {"STEPID", R_ID},
    {"MCS_LABEL", R_IGNORE},
    {"PREEMPT_TIME", R_IGNORE},
    {"SUSPEND_TIME", R_IGNORE},
    {"DEADLINE", R_IGNORE},
    {"STDOUT", R_IGNORE},
    {"STDERR", R_IGNORE},
    {"TRES_PER_SOCKET", R_IGNORE},
    {"MIN_MEMORY_PER_CPU", R_IGNORE},
    {NULL, R_IGNORE},
};

/* squeue: the default format, exa's own, and formats of common tools. */
static const struct slurm_layout squeue_layouts[] = {
    {0, "JOBID STATE TIME TIME_LIMIT TIME_LEFT START_TIME END_TIME "
        "SUBMIT_TIME NODES CPUS PARTITION ACCOUNT USER NAME REASON NODELIST "
        "TRES_PER_NODE"}, /* SLURM_SQUEUE_FORMAT with --noheader */
    {0, "JOBID PARTITION NAME USER STATE TIME TIME_LIMIT NODES "
        "NODELIST(REASON) TRES_PER_NODE"},
    {' ', "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)"},
    {0, "JOBID ACCOUNT USER PARTITION STATE NODES CPUS TRES_ALLOC"},
    {0, "JOBID STATE TIME TIME_LIMIT NODELIST(REASON)"},
    {0, "JOBID STATE REASON PRIORITY NODELIST(REASON)"},
    {0, "JOBID STATE REASON PRIORITY"},
    {0, "JOBID STATE REASON NODELIST(REASON)"},
    {0, "JOBID NAME USER STATE NODES"},
    {0, "JOBID STATE NAME"},
    {0, "CLUSTER JOBID STATE NAME"},
    {0, "STATE START_TIME END_TIME"},
    {0, "PARTITION STATE CPUS REASON USER"},
    /* JobID|Account or UserName|State|NumNodes|NumCPUs|tres-alloc: the
     * second column is left unnamed, it is one or the other */
    {0, "JOBID - STATE NODES CPUS TRES_ALLOC"},
    {0, "JOBID STATE"},
    {0, "STATE"},
    {0, "JOBID"},
    {0, "PARTITION"},
    {0, NULL},
};

/* First non-blank line starts with "JobId=": scontrol show job output. */
static int looks_scontrol(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    return len - i >= 6 && !strncmp(buf + i, "JobId=", 6);
}

int squeue_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                 const char **kind, exa_error_t *err)
{
    return squeue_parse_cmd(buf, len, NULL, jobs, kind, err);
}

int squeue_parse_cmd(const char *buf, size_t len, const struct cmd_spec *spec,
                     struct slurm_jobs *jobs, const char **kind,
                     exa_error_t *err)
{
    int rc;
    *kind = "parse_error";
    if (looks_scontrol(buf, len))
        return scontrol_jobs_parse(buf, len, jobs, kind, err);
    if (spec && spec->tool != CMD_TOOL_SQUEUE)
        spec = NULL;
    rc = slurm_parse_table(buf, len, jobs, slurm_squeue_names, squeue_layouts,
                           0, spec, err);
    if (rc == -2)
        *kind = "slurm_error";
    return rc < 0 ? -1 : 0;
}

/* The rows of one block: [p, q) of the output. */
struct sq_block {
    const char *p, *q;
};

/* A block the second thread parsed, waiting for the caller's turn. */
struct sq_slot {
    struct slurm_jobs jobs;
    exa_error_t err;
    int rc, done;
};

/* What the two threads share; mu guards consumed, stop and the slots'
 * done flags. */
struct sq_par {
    const char *buf;
    size_t hdr_len;
    const struct cmd_spec *spec;
    const struct sq_block *blk;
    size_t nblk;
    struct sq_slot *slot; /* nblk entries, the second thread's used */
    size_t consumed;      /* blocks handed to cb (or failed) so far */
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* Parse block k (the header line, then its rows) into *jobs. */
static int parse_block(const struct sq_par *pp, size_t k, struct strbuf *sb,
                       struct slurm_jobs *jobs, exa_error_t *err)
{
    const char *kind = NULL;
    strbuf_reset(sb);
    strbuf_add(sb, pp->buf, pp->hdr_len);
    strbuf_add(sb, pp->blk[k].p, (size_t)(pp->blk[k].q - pp->blk[k].p));
    memset(jobs, 0, sizeof(*jobs));
    return squeue_parse_cmd(sb->buf, sb->len, pp->spec, jobs, &kind, err);
}

/*
 * Which blocks the caller's thread parses: one in SQ_SHARE. The caller
 * also runs cb on every block, so the second thread parses the other
 * SQ_SHARE - 1: with the exporter's cb (about a quarter of a block's
 * parse) the two threads then finish together.
 */
#define SQ_SHARE 3
static int callers_block(size_t k)
{
    return k % SQ_SHARE == 0;
}

/* The second thread: the blocks that are not the caller's, each started
 * once cb has had the block SQ_SHARE before it (so at most SQ_SHARE
 * parsed blocks wait). */
static void *parse_other_blocks(void *arg)
{
    struct sq_par *pp = arg;
    struct strbuf sb = STRBUF_INIT;
    for (size_t k = 1; k < pp->nblk; k++) {
        struct sq_slot *sl = &pp->slot[k];
        int stop;
        if (callers_block(k))
            continue;
        pthread_mutex_lock(&pp->mu);
        while (!pp->stop && pp->consumed + SQ_SHARE < k)
            pthread_cond_wait(&pp->cv, &pp->mu);
        stop = pp->stop;
        pthread_mutex_unlock(&pp->mu);
        if (stop)
            break;
        sl->rc = parse_block(pp, k, &sb, &sl->jobs, &sl->err);
        pthread_mutex_lock(&pp->mu);
        sl->done = 1;
        pthread_cond_broadcast(&pp->cv);
        pthread_mutex_unlock(&pp->mu);
        if (sl->rc != 0)
            break; /* the caller stops at this block */
    }
    strbuf_release(&sb);
    return NULL;
}

int squeue_parse_cmd_blocks(const char *buf, size_t len,
                            const struct cmd_spec *spec, size_t block_rows,
                            void (*cb)(void *ctx, struct slurm_jobs *jobs),
                            void *ctx, exa_error_t *err)
{
    struct strbuf block = STRBUF_INIT;
    const char *p = buf, *end = buf + len, *nl;
    struct sq_block *blk = NULL;
    size_t nblk = 0, alloc = 0, k;
    struct sq_par pp;
    pthread_t worker;
    int threaded = 0, rc = 0;

    if (!block_rows)
        block_rows = 4096;
    while (p < end && (*p == '\n' || *p == '\r'))
        p++;
    nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : end;
    /* the blocks' bounds first; a header alone is one empty block */
    do {
        const char *q = p;
        for (size_t n = 0; n < block_rows && q < end; n++) {
            nl = memchr(q, '\n', (size_t)(end - q));
            q = nl ? nl + 1 : end;
        }
        ALLOC_GROW(blk, nblk + 1, alloc);
        blk[nblk].p = p;
        blk[nblk++].q = q;
        p = q;
    } while (p < end);

    memset(&pp, 0, sizeof(pp));
    pp.buf = buf;
    pp.hdr_len = (size_t)(blk[0].p - buf);
    pp.spec = spec;
    pp.blk = blk;
    pp.nblk = nblk;
    if (nblk >= 2) {
        pp.slot = xcalloc(nblk, sizeof(*pp.slot));
        pthread_mutex_init(&pp.mu, NULL);
        pthread_cond_init(&pp.cv, NULL);
        threaded = pthread_create(&worker, NULL, parse_other_blocks, &pp) == 0;
    }
    for (k = 0; k < nblk; k++) {
        struct slurm_jobs own, *jobs = &own;
        if (threaded && !callers_block(k)) {
            struct sq_slot *sl = &pp.slot[k];
            pthread_mutex_lock(&pp.mu);
            while (!sl->done)
                pthread_cond_wait(&pp.cv, &pp.mu);
            pthread_mutex_unlock(&pp.mu);
            jobs = &sl->jobs;
            rc = sl->rc;
            if (rc != 0 && err)
                *err = sl->err;
        } else {
            rc = parse_block(&pp, k, &block, &own, err);
        }
        if (rc == 0)
            cb(ctx, jobs);
        slurm_jobs_free(jobs);
        if (threaded) {
            pthread_mutex_lock(&pp.mu);
            pp.consumed = k + 1;
            pthread_cond_broadcast(&pp.cv);
            pthread_mutex_unlock(&pp.mu);
        }
        if (rc != 0)
            break;
    }
    if (threaded) {
        pthread_mutex_lock(&pp.mu);
        pp.stop = 1;
        pthread_cond_broadcast(&pp.cv);
        pthread_mutex_unlock(&pp.mu);
        pthread_join(worker, NULL);
        /* blocks parsed past a failure are dropped */
        for (k = k + 1; k < nblk; k++)
            if (pp.slot[k].done)
                slurm_jobs_free(&pp.slot[k].jobs);
    }
    if (pp.slot) {
        pthread_cond_destroy(&pp.cv);
        pthread_mutex_destroy(&pp.mu);
        free(pp.slot);
    }
    free(blk);
    strbuf_release(&block);
    return rc;
}
