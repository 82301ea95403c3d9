/*
 * tracker.c - the wait loop (see tracker.h for the bounds and why).
 *
 * Only jobs still live are asked about in each round, so a large array that
 * is mostly done costs less per poll as it drains.
 */
#include "libsched/tracker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libutil/subprocess.h"
#include "libutil/xalloc.h"

static void real_sleep(void *arg, double s)
{
    struct timespec ts;

    if (s <= 0)
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int tracker_opts_from_env(struct tracker_opts *o, exa_error_t *err)
{
    double v;
    const char *u = getenv("EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS");

    memset(o, 0, sizeof(*o));
    if (transport_env_seconds("EXAMLOPS_HPC_POLL_INTERVAL", 10, &v, err) < 0)
        return -1;
    o->poll_interval_s = v;
    if (transport_env_seconds("EXAMLOPS_SLURM_MAX_WAIT_S", 86400, &v, err) < 0)
        return -1;
    o->max_wait_s = v;
    o->max_unknown = 5;
    if (u && *u) {
        char *end;
        long n = strtol(u, &end, 10);
        if (*end || n < 1 || n > 1000000)
            return exa_err(err, EXA_ECONFIG,
                           "EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS must be a positive "
                           "integer, not '%s'", u);
        o->max_unknown = (int)n;
    }
    return 0;
}

int tracker_wait(struct sched *s, const char *const *ids, size_t n,
                 const struct tracker_opts *o, struct sched_job *out,
                 int *polls, exa_error_t *err)
{
    int *streak = xcalloc(n ? n : 1, sizeof(int));
    const char **live = xcalloc(n ? n : 1, sizeof(*live));
    size_t *map = xcalloc(n ? n : 1, sizeof(*map));
    struct sched_job *tmp = xcalloc(n ? n : 1, sizeof(*tmp));
    void (*sleep_fn)(void *, double) = o->sleep_fn ? o->sleep_fn : real_sleep;
    double start = subprocess_now(), slept = 0;
    int poll = 0, rc = -1;

    for (size_t i = 0; i < n; i++)
        sched_job_init(&out[i], ids[i]);
    for (;;) {
        size_t nl = 0;
        exa_error_t berr = EXA_ERROR_INIT;
        int batch_rc;
        double elapsed = subprocess_now() - start + slept;

        for (size_t i = 0; i < n; i++) {
            if (!sched_state_terminal(out[i].state)) {
                map[nl] = i;
                live[nl++] = ids[i];
            }
        }
        if (!nl) {
            rc = 0;
            break;
        }
        if (poll > 0 && elapsed >= o->max_wait_s) {
            struct strbuf sb = STRBUF_INIT;
            for (size_t k = 0; k < nl && k < 5; k++)
                strbuf_addf(&sb, "%s%s", k ? ", " : "", live[k]);
            exa_err(err, EXA_ETIMEOUT,
                    "%zu job(s) not terminal after %g s: %s%s", nl,
                    o->max_wait_s, sb.buf, nl > 5 ? ", ..." : "");
            strbuf_release(&sb);
            break;
        }
        poll++;
        batch_rc = sched_status_batch(s, live, nl, tmp, &berr);
        for (size_t k = 0; k < nl; k++) {
            size_t i = map[k];
            if (batch_rc < 0) {
                /* keep the last view; this poll saw nothing */
                streak[i]++;
                continue;
            }
            if (tmp[k].state == SCHED_UNKNOWN) {
                streak[i]++;
                /* keep what we knew, but the job is UNKNOWN now */
                out[i].state = SCHED_UNKNOWN;
            } else {
                streak[i] = 0;
                out[i] = tmp[k];
            }
        }
        if (o->progress)
            o->progress(o->arg, out, n, subprocess_now() - start + slept, poll);
        {
            size_t worst = n;
            for (size_t k = 0; k < nl; k++)
                if (streak[map[k]] >= o->max_unknown) {
                    worst = map[k];
                    break;
                }
            if (worst < n) {
                out[worst].state = SCHED_UNKNOWN;
                if (batch_rc < 0)
                    exa_err(err, EXA_ENOTFOUND,
                            "job '%s' not observable after %d consecutive "
                            "polls: %s", ids[worst], o->max_unknown, berr.text);
                else
                    exa_err(err, EXA_ENOTFOUND,
                            "job '%s' not observable after %d consecutive polls",
                            ids[worst], o->max_unknown);
                break;
            }
        }
        {
            int any_live = 0;
            for (size_t i = 0; i < n; i++)
                if (!sched_state_terminal(out[i].state))
                    any_live = 1;
            if (!any_live) {
                rc = 0;
                break;
            }
        }
        sleep_fn(o->arg, o->poll_interval_s);
        if (o->sleep_fn)
            slept += o->poll_interval_s; /* a fake sleep still spends budget */
    }
    if (polls)
        *polls = poll;
    free(streak);
    free(live);
    free(map);
    free(tmp);
    return rc;
}
