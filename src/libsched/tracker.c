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
            return exa_err(
                err, EXA_ECONFIG,
                "EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS must be a positive "
                "integer, not '%s'",
                u);
        o->max_unknown = (int)n;
    }
    return 0;
}

double tracker_backoff(double poll_s, int failures)
{
    double cap = poll_s * 6 < 60 ? poll_s * 6 : 60, d = poll_s;
    if (cap < poll_s)
        cap = poll_s;
    for (int k = 1; k < failures && d < cap; k++)
        d *= 2;
    return d < cap ? d : cap;
}

/* "HH:MM:SS" UTC of epoch seconds t. */
static void hms(long long t, char *buf, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, n, "%H:%M:%S", &tm);
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
    double start = subprocess_now(), slept = 0, outage_t0 = 0;
    long long outage_since = 0;
    int poll = 0, rc = -1, failures = 0;
    exa_error_t ferr = EXA_ERROR_INIT; /* the outage's last failure */

    for (size_t i = 0; i < n; i++)
        sched_job_init(&out[i], ids[i]);
    for (;;) {
        size_t nl = 0;
        exa_error_t berr = EXA_ERROR_INIT;
        int batch_rc, failed;
        double elapsed = subprocess_now() - start + slept, delay;

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
            char t0[16];
            for (size_t k = 0; k < nl && k < 5; k++)
                strbuf_addf(&sb, "%s%s", k ? ", " : "", live[k]);
            if (failures) {
                hms(outage_since, t0, sizeof(t0));
                exa_err(err, EXA_ETIMEOUT,
                        "%zu job(s) not terminal after %g s: %s%s; the "
                        "scheduler has been unreachable since %s UTC: %s",
                        nl, o->max_wait_s, sb.buf, nl > 5 ? ", ..." : "", t0,
                        ferr.text);
            } else {
                exa_err(err, EXA_ETIMEOUT,
                        "%zu job(s) not terminal after %g s: %s%s", nl,
                        o->max_wait_s, sb.buf, nl > 5 ? ", ..." : "");
            }
            strbuf_release(&sb);
            break;
        }
        poll++;
        batch_rc = sched_status_batch(s, live, nl, tmp, &berr);
        failed = sched_status_failed(s, &berr) || batch_rc < 0;
        for (size_t k = 0; k < nl; k++) {
            size_t i = map[k];
            if (tmp[k].state != SCHED_UNKNOWN) {
                /* observed, even by a poll whose other queries failed */
                streak[i] = 0;
                out[i] = tmp[k];
            } else if (!failed) {
                /* the scheduler answered and does not know it */
                streak[i]++;
                out[i].state = SCHED_UNKNOWN;
            }
            /* else: not observed this poll; an outage is no evidence */
        }
        if (failed) {
            if (!failures++) {
                outage_since = (long long)time(NULL);
                outage_t0 = subprocess_now() + slept;
            }
            ferr = berr;
        } else if (failures) {
            if (o->outage) {
                struct tracker_outage ev = {
                    0,
                    outage_since,
                    failures,
                    0,
                    subprocess_now() + slept - outage_t0,
                    NULL};
                o->outage(o->arg, &ev);
            }
            failures = 0;
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
                exa_err(err, EXA_ENOTFOUND,
                        "job '%s' not known to the scheduler after %d "
                        "consecutive polls",
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
        delay = failures ? tracker_backoff(o->poll_interval_s, failures)
                         : o->poll_interval_s;
        /* never sleep past the deadline: it is checked before each poll */
        elapsed = subprocess_now() - start + slept;
        if (delay > o->max_wait_s - elapsed)
            delay = o->max_wait_s - elapsed > 0 ? o->max_wait_s - elapsed : 0;
        if (failures && o->outage) {
            struct tracker_outage ev = {1, outage_since, failures, delay,
                                        0, &ferr};
            o->outage(o->arg, &ev);
        }
        sleep_fn(o->arg, delay);
        if (o->sleep_fn)
            slept += delay; /* a fake sleep still spends budget */
    }
    if (polls)
        *polls = poll;
    free(streak);
    free(live);
    free(map);
    free(tmp);
    return rc;
}
