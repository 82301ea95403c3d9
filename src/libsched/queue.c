/*
 * queue.c - the `queue` op of each adapter (see sched.h sched_queue()):
 * what `exa hpc queue` shows, asked of the scheduler through the
 * adapter's transport and read by the pure parsers (parse_squeue.c,
 * parse_flux_jobs.c), so no front end runs squeue or flux itself.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/parse_flux.h"
#include "libsched/parse_slurm.h"
#include "libsched/sched.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"

static char *dupnz(const char *s)
{
    return s && *s ? xstrdup(s) : NULL;
}

static struct sched_queue_job *push(struct sched_queue *q, size_t *alloc)
{
    struct sched_queue_job *j;
    ALLOC_GROW(q->v, q->n + 1, *alloc);
    j = &q->v[q->n++];
    memset(j, 0, sizeof(*j));
    j->nodes = -1;
    return j;
}

static void queue_job_free(struct sched_queue_job *j)
{
    free(j->id);
    free(j->name);
    free(j->user);
    free(j->state);
    free(j->raw_state);
    free(j->partition);
    free(j->reason);
}

void sched_queue_release(struct sched_queue *q)
{
    for (size_t i = 0; q && i < q->n; i++)
        queue_job_free(&q->v[i]);
    if (q) {
        free(q->v);
        memset(q, 0, sizeof(*q));
    }
}

static int queue_of(struct sched *s, int own, struct sched_queue *out,
                    exa_error_t *err)
{
    memset(out, 0, sizeof(*out));
    if (!s->ops->queue)
        return exa_err(err, EXA_EUSAGE, "the %s adapter cannot list its queue",
                       s->ops->name);
    return s->ops->queue(s, own, out, err);
}

int sched_queue(struct sched *s, struct sched_queue *out, exa_error_t *err)
{
    return queue_of(s, 0, out, err);
}

int sched_queue_own(struct sched *s, struct sched_queue *out, exa_error_t *err)
{
    return queue_of(s, 1, out, err);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct squeue_name *)a)->id,
                  ((const struct squeue_name *)b)->id);
}

/* The name squeue_names_parse() vouched for under id, or NULL; v sorted
 * by id (cmp_name). */
static const char *name_of(const struct squeue_name *v, size_t n,
                           const char *id)
{
    struct squeue_name key = {(char *)id, NULL};
    const struct squeue_name *hit;
    if (!id || !n)
        return NULL;
    hit = bsearch(&key, v, n, sizeof(*v), cmp_name);
    return hit ? hit->name : NULL;
}

int sched_slurm_queue(struct sched *s, int own, struct sched_queue *out,
                      exa_error_t *err)
{
    /*
     * Two listings, as squeue(1) -o prints them without a header: the
     * fields shown but the name (SLURM_SQUEUE_SAFE_FORMAT), then the ids
     * and names (SLURM_SQUEUE_NAMES_FORMAT). Slurm takes any byte but NUL in
     * a job name, 0x1E, 0x1F, '|' and newlines included, so a name can
     * cut the record it is in and make up others, whatever the framing;
     * the rows come from the first listing, where no field is a user's
     * text, and a name only from a record of the second that nothing
     * else claims (squeue_names_parse), else none.
     */
    static const char *const all[] = {"squeue", "-h", "-o",
                                      SLURM_SQUEUE_SAFE_FORMAT, NULL};
    static const char *const mine[] = {
        "squeue", "-h", "--me", "-o", SLURM_SQUEUE_SAFE_FORMAT, NULL};
    static const char *const all_n[] = {"squeue", "-h", "-o",
                                        SLURM_SQUEUE_NAMES_FORMAT, NULL};
    static const char *const mine_n[] = {
        "squeue", "-h", "--me", "-o", SLURM_SQUEUE_NAMES_FORMAT, NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    struct transport_result rn = TRANSPORT_RESULT_INIT;
    struct squeue_name *names = NULL;
    size_t nnames = 0, bad_names = 0;
    struct slurm_jobs sj;
    const char *kind = NULL;
    size_t alloc = 0;
    int rc = -1;
    memset(&sj, 0, sizeof(sj));
    memset(out, 0, sizeof(*out));
    if (transport_run_ok(s->t, own ? mine : all, NULL, 0, &r, err) < 0)
        goto out;
    if (r.out.len &&
        squeue_parse_safe(r.out.buf, r.out.len, &sj, &kind, err) < 0)
        goto out;
    /* none of the first listing's fields is a user's text: a record of
     * it that is not whole is nothing exa can list from */
    if (sj.nerrors) {
        exa_err(err, EXA_ESCHED,
                "squeue's listing of the queue holds %zu record(s) that are "
                "not whole (%s of record %ld): nothing is listed from it",
                sj.nerrors, sj.errors[0].kind, sj.errors[0].record);
        goto out;
    }
    if (sj.njobs) {
        if (transport_run_ok(s->t, own ? mine_n : all_n, NULL, 0, &rn, err) < 0)
            goto out;
        squeue_names_parse(rn.out.buf, rn.out.len, &names, &nnames, &bad_names);
        if (nnames)
            qsort(names, nnames, sizeof(*names), cmp_name);
    }
    /* names made up or cut short */
    out->refused = bad_names;
    for (size_t i = 0; i < sj.njobs; i++) {
        const struct slurm_job *sjob = &sj.jobs[i];
        struct sched_queue_job *j = push(out, &alloc);
        j->id = dupnz(sjob->id);
        j->name = dupnz(name_of(names, nnames, sjob->id));
        j->user = dupnz(sjob->user);
        j->state = dupnz(sjob->state);
        j->raw_state = dupnz(sjob->raw_state);
        j->partition = dupnz(sjob->partition);
        if (sjob->reason && strcmp(sjob->reason, "None"))
            j->reason = dupnz(sjob->reason);
        if (sjob->nodelist.nr)
            j->nodes = (long long)sjob->nodelist.nr;
    }
    rc = 0;
out:
    squeue_names_free(names, nnames);
    slurm_jobs_free(&sj);
    transport_result_release(&r);
    transport_result_release(&rn);
    if (rc < 0)
        sched_queue_release(out);
    return rc;
}

int sched_flux_queue(struct sched *s, int own, struct sched_queue *out,
                     exa_error_t *err)
{
    /* --json: names whole (the default table cuts a name to ten columns,
     * "exa-01234+": the provisioner would never find its workers);
     * --count=0: every job (flux-jobs(1) lists 1,000 by default, and says
     * so on stderr for a table, not at all for JSON) */
    static const char *const all[] = {"flux",   "jobs",      "-A",
                                      "--json", "--count=0", NULL};
    static const char *const mine[] = {"flux", "jobs", "--json", "--count=0",
                                       NULL};
    const char *const *argv = own ? mine : all;
    struct transport_result r = TRANSPORT_RESULT_INIT;
    const char *kind = NULL;
    json_t *doc = NULL, *jobs;
    size_t alloc = 0, i;
    json_t *o;
    int rc = -1;
    memset(out, 0, sizeof(*out));
    if (transport_run_ok(s->t, argv, NULL, 0, &r, err) < 0)
        goto out;
    i = 0;
    while (i < r.out.len && (r.out.buf[i] == ' ' || r.out.buf[i] == '\n'))
        i++;
    if (i == r.out.len || r.out.buf[i] != '{') {
        exa_err(err, EXA_ESCHED,
                "flux jobs --json printed no JSON object (%zu bytes); "
                "expected {\"jobs\": [...]}",
                r.out.len);
        goto out;
    }
    if (!(doc = flux_jobs_parse(r.out.buf, r.out.len, &kind, err))) {
        exa_err_prefix(err, "flux jobs --json");
        goto out;
    }
    jobs = json_object_get(doc, "jobs");
    json_array_foreach(jobs, i, o)
    {
        struct sched_queue_job *j = push(out, &alloc);
        json_t *nodes = json_object_get(o, "nnodes");
        j->id = dupnz(jx_get_str(o, "id", NULL));
        j->name = dupnz(jx_get_str(o, "name", NULL));
        j->user = dupnz(jx_get_str(o, "user", NULL));
        j->state = dupnz(jx_get_str(o, "state", NULL));
        j->raw_state = dupnz(jx_get_str(o, "raw_state", NULL));
        j->partition = dupnz(jx_get_str(o, "queue", NULL));
        j->reason = dupnz(jx_get_str(o, "reason", NULL));
        if (json_is_integer(nodes))
            j->nodes = (long long)json_integer_value(nodes);
    }
    rc = 0;
out:
    json_decref(doc);
    transport_result_release(&r);
    if (rc < 0)
        sched_queue_release(out);
    return rc;
}

static int cmp_job(const void *a, const void *b)
{
    const struct sched_queue_job *x = a, *y = b;
    return strcmp(x->id ? x->id : "", y->id ? y->id : "");
}

int sched_mock_queue(struct sched *s, int own, struct sched_queue *out,
                     exa_error_t *err)
{
    const char *dir = sched_mock_dir(s);
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t alloc = 0;
    (void)own; /* every record of the mock is exa's own */
    memset(out, 0, sizeof(*out));
    if (!d)
        return 0; /* nothing was ever submitted */
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char *path;
        json_t *doc;
        const char *state;
        struct sched_queue_job *j;
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") ||
            e->d_name[0] == '.')
            continue;
        path = xstrfmt("%s/%s", dir, e->d_name);
        doc = json_load_file(path, 0, NULL);
        free(path);
        if (!doc)
            continue; /* being replaced (atomic write) or foreign */
        state = jx_get_str(doc, "state", "UNKNOWN");
        if (sched_state_terminal(sched_state_parse(state))) {
            json_decref(doc);
            continue;
        }
        j = push(out, &alloc);
        j->id = dupnz(jx_get_str(doc, "id", NULL));
        j->state = xstrdup(state);
        j->raw_state = xstrdup(state);
        j->user = dupnz(getenv("USER"));
        j->nodes = 1;
        json_decref(doc);
    }
    closedir(d);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(*out->v), cmp_job);
    (void)err;
    return 0;
}
