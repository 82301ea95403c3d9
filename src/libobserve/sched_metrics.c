/*
 * sched_metrics.c - one cluster's nodes and jobs as Prometheus families.
 *
 * Aggregates (per partition, per account, per user, per state) are built
 * by adding 1 (or a job's CPUs/GPUs) to the series of its labels and
 * letting the writer sum equal series, so every count is derived from the
 * same two snapshots in one pass and cannot disagree with another. Totals
 * that dashboards alert on (slurm_jobs_*, slurm_nodes_total, cluster CPU
 * and GPU counts) are always present, at 0 when nothing matches; per-label
 * series exist only for labels seen.
 *
 * CPU and GPU states follow sinfo's A/I/O/T split: allocated (running
 * jobs' CPUs; GPUs from the nodes' GresUsed when known, else the jobs'),
 * other (on nodes that are down, drained or unknown), idle (the rest).
 *
 * This file holds the snapshot and the job families; the node families
 * are in sched_nodes.c, and what both use in sched_metrics_int.h.
 */
#include "libobserve/sched_metrics.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libobserve/sched_metrics_int.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

struct obs_node *obs_snapshot_add_node(struct obs_snapshot *s)
{
    struct obs_node *n;
    ALLOC_GROW(s->nodes, s->nnodes + 1, s->nodes_alloc);
    n = &s->nodes[s->nnodes++];
    memset(n, 0, sizeof(*n));
    strvec_init(&n->partitions);
    n->cpus = n->mem_mb = n->gpus = n->gpus_used = n->cpus_used = -1;
    return n;
}

struct obs_job *obs_snapshot_add_job(struct obs_snapshot *s)
{
    struct obs_job *j;
    ALLOC_GROW(s->jobs, s->njobs + 1, s->jobs_alloc);
    j = &s->jobs[s->njobs++];
    memset(j, 0, sizeof(*j));
    strvec_init(&j->nodes);
    j->cpus = j->gpus = -1;
    return j;
}

void obs_snapshot_free(struct obs_snapshot *s)
{
    for (size_t i = 0; i < s->nnodes; i++) {
        struct obs_node *n = &s->nodes[i];
        free(n->name);
        free(n->state);
        free(n->raw_state);
        free(n->gpu_model);
        strvec_clear(&n->partitions);
    }
    for (size_t i = 0; i < s->njobs; i++) {
        struct obs_job *j = &s->jobs[i];
        if (!j->pooled) {
            free(j->id);
            free(j->name);
            free(j->user);
            free(j->account);
            free(j->partition);
            free(j->state);
            free(j->reason);
            strvec_clear(&j->nodes);
        } /* pooled: the node names and their array are in s->strings */
    }
    arena_release(&s->strings);
    free(s->nodes);
    free(s->jobs);
    memset(s, 0, sizeof(*s));
}

/*
 * A family named prefix_suffix. Established names ending in _total
 * (slurm_cpus_total, slurm_node_cpu_total) are gauges, which promtool's
 * lint forbids under that suffix; they are declared untyped, which keeps
 * the names dashboards use and the exposition lint-clean.
 */
struct prom_family *sm_fam(struct prom_set *set, const char *prefix,
                           const char *suffix, const char *help)
{
    char name[128];
    struct prom_family *f;
    xsnprintf(name, sizeof(name), "%s_%s", prefix, suffix);
    f = prom_family(set, name,
                    ends_with(name, "_total") ? PROM_UNTYPED : PROM_GAUGE, help,
                    NULL);
    if (!f)
        BUG("bad metric name '%s'", name);
    return f;
}

void sm_add(struct prom_family *f, const char *const *labels, double v)
{
    if (prom_add(f, labels, v, NULL) < 0)
        BUG("bad label on a scheduler metric");
}

/* labels rendered once for several families (promtext.h) */
struct prom_labels sm_labels(struct prom_set *set, const char *const *list)
{
    struct prom_labels l;
    if (prom_labels_make(set, list, &l, NULL) < 0)
        BUG("bad label on a scheduler metric");
    return l;
}

/* djb2 over a string (the tables of partitions, job ids) */
size_t sm_strhash(const char *s)
{
    size_t h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

static const char *or_unknown(const char *s)
{
    return s && *s ? s : "unknown";
}

static const char *const job_states[] = {"PENDING",   "RUNNING", "SUSPENDED",
                                         "COMPLETED", "FAILED",  "CANCELLED",
                                         "TIMEOUT",   "UNKNOWN", NULL};

enum { SI_PENDING, SI_RUNNING, SI_SUSPENDED, SI_UNKNOWN = 7 };

/* The index of state in job_states (UNKNOWN for anything else): the
 * first byte picks the one or two candidates, one strcmp decides. */
static size_t state_index(const char *state)
{
    size_t si;
    switch (state[0]) {
    case 'P':
        si = 0;
        break;
    case 'R':
        si = 1;
        break;
    case 'S':
        si = 2;
        break;
    case 'C':
        si = state[1] == 'O' ? 3 : 5;
        break;
    case 'F':
        si = 4;
        break;
    case 'T':
        si = 6;
        break;
    default:
        return SI_UNKNOWN;
    }
    return strcmp(state, job_states[si]) ? SI_UNKNOWN : si;
}

static void lower(char *dst, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        dst[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
    dst[i] = '\0';
}

/* A set of strings (borrowed), for job ids seen. */
/*
 * Jobs that share every label of the aggregate families: state, user,
 * account, partition as printed and (pending) reason. The aggregates are
 * added once per group, not once per job: a queue of 100,000 jobs of a
 * few hundred users is a few thousand groups.
 */
struct jgroup {
    const char *user, *acct, *part, *reason; /* borrowed from the jobs */
    size_t si;                               /* index in job_states */
    double n, cpus, gpus;
    int cpus_known, gpus_known;
};

struct jgroups {
    struct jgroup *v;
    size_t nr, alloc;
    size_t *slot, nslot; /* index + 1, 0 empty */
};

static size_t strhash(size_t h, const char *s)
{
    if (!s)
        return h * 31 + 7;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h * 33 + 0xff;
}

static int same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static size_t group_hash(size_t si, const char *user, const char *acct,
                         const char *part, const char *reason)
{
    size_t h = 5381 + si;
    h = strhash(h, user);
    h = strhash(h, acct);
    h = strhash(h, part);
    h = strhash(h, reason);
    return h ^ (h >> 17);
}

static void groups_index(struct jgroups *g, size_t want)
{
    free(g->slot);
    g->nslot = 64;
    while (g->nslot < want * 2)
        g->nslot *= 2;
    g->slot = xcalloc(g->nslot, sizeof(*g->slot));
    for (size_t i = 0; i < g->nr; i++) {
        const struct jgroup *x = &g->v[i];
        size_t k = group_hash(x->si, x->user, x->acct, x->part, x->reason) &
                   (g->nslot - 1);
        while (g->slot[k])
            k = (k + 1) & (g->nslot - 1);
        g->slot[k] = i + 1;
    }
}

/* The group of these labels, created empty when new. */
static struct jgroup *group_for(struct jgroups *g, size_t si, const char *user,
                                const char *acct, const char *part,
                                const char *reason)
{
    size_t k;
    struct jgroup *x;
    if (g->nslot < (g->nr + 1) * 2)
        groups_index(g, g->nr + 1);
    k = group_hash(si, user, acct, part, reason) & (g->nslot - 1);
    while (g->slot[k]) {
        x = &g->v[g->slot[k] - 1];
        if (x->si == si && same(x->user, user) && same(x->acct, acct) &&
            same(x->part, part) && same(x->reason, reason))
            return x;
        k = (k + 1) & (g->nslot - 1);
    }
    ALLOC_GROW(g->v, g->nr + 1, g->alloc);
    x = &g->v[g->nr];
    memset(x, 0, sizeof(*x));
    x->si = si;
    x->user = user;
    x->acct = acct;
    x->part = part;
    x->reason = reason;
    g->slot[k] = ++g->nr;
    return x;
}

/* A job and the first 8 bytes of its id as a big-endian number (NUL
 * padded), which compare as the ids' first 8 bytes do: the sort reads
 * the ids themselves only where those are equal. */
struct job_key {
    uint64_t key;
    const struct obs_job *j;
};

static uint64_t id_prefix(const char *s)
{
    uint64_t k = 0;
    size_t i = 0;
    for (; i < 8 && s[i]; i++)
        k = (k << 8) | (unsigned char)s[i];
    return i == 0 ? 0 : i < 8 ? k << (8 * (8 - i)) : k;
}

/* Job id order (as the ids' bytes compare, strcmp; NULL as ""), the
 * snapshot's order among equal ids, so that the first row of a repeated
 * id is still the one its per-job series come from. */
static int cmp_job_key(const void *a, const void *b)
{
    const struct job_key *x = a, *y = b;
    int c;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    c = strcmp(x->j->id ? x->j->id : "", y->j->id ? y->j->id : "");
    return c ? c : (x->j > y->j) - (x->j < y->j);
}

/*
 * The per-job families of the jobs holding resources. With many of them
 * they are built on two threads: a second thread (the front) lists and
 * sorts the jobs, then takes them from the first in chunks, while this
 * one builds the aggregates and the node families; then this one (the
 * back) takes the second half of what is left. Each side writes a set of
 * its own, a contiguous run of the sorted jobs, so the front's set then
 * the back's, adopted in that order, give the samples in label order.
 */
struct per_job {
    const struct obs_snapshot *s;
    const char *px, *cl;
    struct job_key *order; /* the jobs holding resources, sorted */
    size_t norder;
    struct prom_set *front, *back;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;   /* order is listed and sorted */
    size_t next; /* the front's next unclaimed job */
    size_t stop; /* the front ends here: norder until the back claims */
};

/* At least this many jobs in the queue: the per-job families are built on
 * a second thread as above. */
#define PER_JOB_THREAD_MIN 4096
/* Jobs the front claims at a time. */
#define PER_JOB_CHUNK 512

struct job_fams {
    struct prom_family *info, *nodejob, *jgpus, *jcpus;
};

static void job_fams_make(struct prom_set *set, const char *px,
                          struct job_fams *f)
{
    f->info = sm_fam(set, px, "job_info",
                     "1 per job holding resources (running or suspended); "
                     "joins job_id to user and account");
    f->nodejob = sm_fam(set, px, "node_job", "1 per (running job, node) pair");
    f->jgpus = sm_fam(set, px, "job_gpus",
                      "GPUs allocated to the job (running or suspended)");
    f->jcpus = sm_fam(set, px, "job_cpus",
                      "CPUs allocated to the job (running or suspended)");
    /* one series per job (or job and node): nothing to look up */
    prom_family_unique(f->info);
    prom_family_unique(f->nodejob);
    prom_family_unique(f->jgpus);
    prom_family_unique(f->jcpus);
}

/* List the jobs holding resources (RUNNING, which COMPLETING is normalized
 * to, or SUSPENDED) in job-id order: their samples then arrive in label
 * order and settle without a sort (promtext.c family_settle), and the rows
 * of a repeated id are next to each other, the first row first. A listing
 * already in id order (squeue prints the order it was asked for) is not
 * sorted again. */
static void per_job_order(struct per_job *pj)
{
    const struct obs_snapshot *s = pj->s;
    size_t n = 0, k = 1;
    pj->order = xmalloc((s->njobs ? s->njobs : 1) * sizeof(*pj->order));
    for (size_t i = 0; i < s->njobs; i++) {
        const struct obs_job *j = &s->jobs[i];
        size_t si = state_index(j->state ? j->state : "UNKNOWN");
        if (si == SI_RUNNING || si == SI_SUSPENDED) {
            pj->order[n].key = id_prefix(j->id ? j->id : "");
            pj->order[n++].j = j;
        }
    }
    while (k < n && cmp_job_key(&pj->order[k - 1], &pj->order[k]) <= 0)
        k++;
    if (k < n)
        qsort(pj->order, n, sizeof(*pj->order), cmp_job_key);
    pj->norder = n;
}

/* The series of the sorted jobs order[from..to) into f. A job whose id
 * the row before it has (order[from - 1] included) holds no series of its
 * own beyond node_job: an id listed twice (as array tasks Slurm has not
 * split yet may be) holds one per-job series at value 1. */
static void per_job_range(struct prom_set *set, const struct job_fams *f,
                          const char *cl, const struct job_key *order,
                          size_t from, size_t to)
{
    const char *prev = from ? order[from - 1].j->id : NULL;
    for (size_t i = from; i < to; i++) {
        const struct obs_job *j = order[i].j;
        /* a shuffled queue visits its jobs at random: fetch the rows a few
         * steps ahead, and their strings once the rows are in */
        if (i + 8 < to)
            __builtin_prefetch(order[i + 8].j);
        if (i + 4 < to) {
            const struct obs_job *p = order[i + 4].j;
            __builtin_prefetch(p->id);
            __builtin_prefetch(p->user);
            __builtin_prefetch(p->nodes.v);
        }
        const char *state = j->state ? j->state : "UNKNOWN";
        const char *user = or_unknown(j->user), *acct = or_unknown(j->account);
        double cpus = j->cpus > 0 ? (double)j->cpus : 0;
        double gpus = j->gpus > 0 ? (double)j->gpus : 0;

        if (j->id && *j->id && !(prev && !strcmp(prev, j->id))) {
            sm_add(f->info,
                   (const char *[]){"cluster", cl, "job_id", j->id, "name",
                                    j->name, "user", user, "account", acct,
                                    "partition", or_unknown(j->partition),
                                    "state", state, NULL},
                   1);
            if (j->gpus >= 0 || j->cpus >= 0) {
                /* one label string for the job's two count series */
                struct prom_labels il =
                    sm_labels(set, (const char *[]){"cluster", cl, "job_id",
                                                    j->id, NULL});
                if (j->gpus >= 0)
                    prom_add_labels(f->jgpus, &il, gpus);
                if (j->cpus >= 0)
                    prom_add_labels(f->jcpus, &il, cpus);
            }
        }
        prev = j->id;
        if (state_index(state) == SI_RUNNING)
            for (size_t k = 0; k < j->nodes.nr; k++)
                sm_add(f->nodejob,
                       (const char *[]){"cluster", cl, "job_id", j->id, "node",
                                        j->nodes.v[k], NULL},
                       1);
    }
}

static void *per_job_front(void *arg)
{
    struct per_job *pj = arg;
    struct job_fams f;
    per_job_order(pj);
    job_fams_make(pj->front, pj->px, &f);
    pthread_mutex_lock(&pj->mu);
    pj->ready = 1;
    pj->stop = pj->norder;
    pthread_cond_signal(&pj->cv);
    for (;;) {
        size_t from = pj->next, to;
        if (from >= pj->stop)
            break;
        to = from + PER_JOB_CHUNK < pj->stop ? from + PER_JOB_CHUNK : pj->stop;
        pj->next = to;
        pthread_mutex_unlock(&pj->mu);
        per_job_range(pj->front, &f, pj->cl, pj->order, from, to);
        pthread_mutex_lock(&pj->mu);
    }
    pthread_mutex_unlock(&pj->mu);
    return NULL;
}

/* The back: half of what the front has not claimed yet, into pj->back. */
static void per_job_back(struct per_job *pj)
{
    struct job_fams f;
    size_t from;
    job_fams_make(pj->back, pj->px, &f);
    pthread_mutex_lock(&pj->mu);
    while (!pj->ready)
        pthread_cond_wait(&pj->cv, &pj->mu);
    from = pj->next + (pj->stop - pj->next) / 2;
    pj->stop = from;
    pthread_mutex_unlock(&pj->mu);
    per_job_range(pj->back, &f, pj->cl, pj->order, from, pj->norder);
}

/*
 * Render job families; *cpus / *gpus get the running jobs' totals (-1
 * when no job reported a count). Job ids are Slurm's raw ids (squeue -O
 * JobID: SLURM_JOB_ID, the id the Prolog writes for dcgm-exporter).
 *
 * Series budget (doc/observability-0242.md, "Series budget"): the per-job
 * families (job_info, job_gpus, job_cpus, node_job) exist only for jobs
 * that hold resources, RUNNING (COMPLETING is normalized to it) or
 * SUSPENDED: a queue of a million pending jobs costs Prometheus no series
 * per job. Pending jobs are counted in pending_jobs, pending_cpus and
 * pending_gpus by (partition as printed, account, user), label sets that
 * grow with a site's users, never with its queue. A started array task has
 * its own id; an id listed twice (as array tasks Slurm has not split yet
 * may be) holds one per-job series at value 1.
 */
static void render_jobs(struct prom_set *set, const char *px, const char *cl,
                        const struct obs_snapshot *s, double *cpus_out,
                        double *gpus_out)
{
    struct prom_family *totals[8], *queue[8], *cores[8];
    struct prom_family *acc_pend, *acc_run, *acc_susp, *acc_cpu, *acc_gpu;
    struct prom_family *usr_pend, *usr_run, *usr_susp, *usr_cpu, *usr_gpu;
    struct prom_family *part_pend, *part_run, *part_cpu, *part_gpu;
    struct prom_family *pend_jobs, *pend_cpus, *pend_gpus;
    struct strvec parts = STRVEC_INIT;
    double run_cpus = 0, run_gpus = 0;
    int cpus_known = 0, gpus_known = 0;
    struct jgroups groups = {0};

    for (size_t i = 0; job_states[i]; i++) {
        char st[16], suffix[48], help[96];
        lower(st, sizeof(st), job_states[i]);
        xsnprintf(suffix, sizeof(suffix), "jobs_%s", st);
        xsnprintf(help, sizeof(help), "Jobs in state %s", job_states[i]);
        totals[i] = sm_fam(set, px, suffix, help);
        sm_add(totals[i], (const char *[]){"cluster", cl, NULL}, 0);
        xsnprintf(suffix, sizeof(suffix), "queue_%s", st);
        xsnprintf(help, sizeof(help), "Jobs in state %s per user and partition",
                  job_states[i]);
        queue[i] = sm_fam(set, px, suffix, help);
        xsnprintf(suffix, sizeof(suffix), "cores_%s", st);
        xsnprintf(help, sizeof(help),
                  "CPUs of jobs in state %s per user and partition",
                  job_states[i]);
        cores[i] = sm_fam(set, px, suffix, help);
    }
    acc_pend =
        sm_fam(set, px, "account_jobs_pending", "Pending jobs per account");
    acc_run =
        sm_fam(set, px, "account_jobs_running", "Running jobs per account");
    acc_susp =
        sm_fam(set, px, "account_jobs_suspended", "Suspended jobs per account");
    acc_cpu = sm_fam(set, px, "account_cpus_running",
                     "CPUs of running jobs per account");
    acc_gpu = sm_fam(set, px, "account_gpus_running",
                     "GPUs of running jobs per account");
    usr_pend = sm_fam(set, px, "user_jobs_pending", "Pending jobs per user");
    usr_run = sm_fam(set, px, "user_jobs_running", "Running jobs per user");
    usr_susp =
        sm_fam(set, px, "user_jobs_suspended", "Suspended jobs per user");
    usr_cpu =
        sm_fam(set, px, "user_cpus_running", "CPUs of running jobs per user");
    usr_gpu =
        sm_fam(set, px, "user_gpus_running", "GPUs of running jobs per user");
    part_pend = sm_fam(set, px, "partition_jobs_pending",
                       "Pending jobs per partition (a job queued in several "
                       "partitions counts in each)");
    part_run =
        sm_fam(set, px, "partition_jobs_running", "Running jobs per partition");
    part_cpu = sm_fam(set, px, "partition_cpus_allocated",
                      "CPUs of running jobs per partition");
    part_gpu = sm_fam(set, px, "partition_gpus_running",
                      "GPUs of running jobs per partition");
    pend_jobs = sm_fam(set, px, "pending_jobs",
                       "Pending jobs per partition (as requested), account and "
                       "user");
    pend_cpus = sm_fam(set, px, "pending_cpus",
                       "CPUs requested by pending jobs per partition, account "
                       "and user");
    pend_gpus = sm_fam(set, px, "pending_gpus",
                       "GPUs requested by pending jobs per partition, account "
                       "and user");

    /* the aggregates: every job once, in the snapshot's order (sums of
     * whole counts, so the order is no matter) */
    for (size_t i = 0; i < s->njobs; i++) {
        const struct obs_job *j = &s->jobs[i];
        size_t si = state_index(j->state ? j->state : "UNKNOWN");
        struct jgroup *g =
            group_for(&groups, si, or_unknown(j->user), or_unknown(j->account),
                      or_unknown(j->partition),
                      si == SI_PENDING ? or_unknown(j->reason) : NULL);
        g->n += 1;
        g->cpus += j->cpus > 0 ? (double)j->cpus : 0;
        g->gpus += j->gpus > 0 ? (double)j->gpus : 0;
        g->cpus_known |= j->cpus >= 0;
        g->gpus_known |= j->gpus >= 0;
    }

    for (size_t i = 0; i < groups.nr; i++) {
        const struct jgroup *g = &groups.v[i];
        const char *user = g->user, *acct = g->acct;
        int running = g->si == SI_RUNNING;
        int pending = g->si == SI_PENDING;
        int suspended = g->si == SI_SUSPENDED;
        double n = g->n, cpus = g->cpus, gpus = g->gpus;

        sm_add(totals[g->si], (const char *[]){"cluster", cl, NULL}, n);
        strvec_clear(&parts);
        strvec_split(&parts, g->part, ',');
        for (size_t p = 0; p < parts.nr; p++) {
            const char *pl[] = {"cluster", cl,          "user",
                                user,      "partition", parts.v[p],
                                "reason",  g->reason,   NULL};
            const char *ppl[] = {"cluster", cl, "partition", parts.v[p], NULL};
            sm_add(queue[g->si], pl, n);
            sm_add(cores[g->si], pl, cpus);
            if (pending)
                sm_add(part_pend, ppl, n);
            if (running) {
                sm_add(part_run, ppl, n);
                sm_add(part_cpu, ppl, cpus);
                sm_add(part_gpu, ppl, gpus);
            }
        }
        if (pending) {
            const char *pl[] = {"cluster", cl,        "partition",
                                g->part,   "account", acct,
                                "user",    user,      NULL};
            sm_add(pend_jobs, pl, n);
            sm_add(pend_cpus, pl, cpus);
            sm_add(pend_gpus, pl, gpus);
        }
        {
            const char *al[] = {"cluster", cl, "account", acct, NULL};
            const char *ul[] = {"cluster", cl, "user", user, NULL};
            if (pending) {
                sm_add(acc_pend, al, n);
                sm_add(usr_pend, ul, n);
            } else if (suspended) {
                sm_add(acc_susp, al, n);
                sm_add(usr_susp, ul, n);
            } else if (running) {
                sm_add(acc_run, al, n);
                sm_add(usr_run, ul, n);
                sm_add(acc_cpu, al, cpus);
                sm_add(usr_cpu, ul, cpus);
                sm_add(acc_gpu, al, gpus);
                sm_add(usr_gpu, ul, gpus);
            }
        }
        if (running) {
            run_cpus += cpus;
            run_gpus += gpus;
            cpus_known |= g->cpus_known;
            gpus_known |= g->gpus_known;
        }
    }
    free(groups.v);
    free(groups.slot);
    strvec_clear(&parts);
    *cpus_out = cpus_known ? run_cpus : -1;
    *gpus_out = gpus_known ? run_gpus : -1;
}

void obs_render_sched(struct prom_set *set, const char *prefix,
                      const char *cluster, const struct obs_snapshot *s)
{
    double jobs_cpus = -1, jobs_gpus = -1;
    struct per_job pj = {0};
    pthread_t th;
    int threaded = 0;

    pj.s = s;
    pj.px = prefix;
    pj.cl = cluster;
    if (s->have_jobs && s->njobs >= PER_JOB_THREAD_MIN) {
        pthread_mutex_init(&pj.mu, NULL);
        pthread_cond_init(&pj.cv, NULL);
        pj.front = prom_set_new();
        pj.back = prom_set_new();
        threaded = pthread_create(&th, NULL, per_job_front, &pj) == 0;
        if (!threaded) {
            prom_set_free(pj.front);
            prom_set_free(pj.back);
            pthread_mutex_destroy(&pj.mu);
            pthread_cond_destroy(&pj.cv);
        }
    }
    if (s->have_jobs)
        render_jobs(set, prefix, cluster, s, &jobs_cpus, &jobs_gpus);
    if (s->have_nodes)
        sm_render_nodes(set, prefix, cluster, s, jobs_cpus, jobs_gpus);
    if (threaded) {
        per_job_back(&pj);
        pthread_join(th, NULL);
        prom_set_adopt(set, pj.front);
        prom_set_adopt(set, pj.back);
        pthread_mutex_destroy(&pj.mu);
        pthread_cond_destroy(&pj.cv);
    } else if (s->have_jobs) {
        struct job_fams f;
        per_job_order(&pj);
        job_fams_make(set, prefix, &f);
        per_job_range(set, &f, cluster, pj.order, 0, pj.norder);
    }
    free(pj.order);
}
