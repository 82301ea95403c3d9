/*
 * poll.c - bench: status of 10,000 tracked Slurm jobs through the fake
 * transport, batched (exa's adapter: one squeue + one sacct per poll)
 * against one query per job (the reference's loop: squeue -j ID, then
 * sacct -j ID). Replies are built from rows captured on the testbed
 * (tests/fixtures/slurm-adapter), so the parsing cost is real. Prints calls per
 * poll and microseconds per job for both, and the ratios.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/sched.h"
#include "libtransport/transport.h"
#include "libutil/subprocess.h"
#include "libutil/xalloc.h"

#define N 10000

/* Captured rows (squeue-live.out job 6, sacct-x-ended.out job 2). */
static const char *sq_tail = "\037RUNNING\037None\0372026-11-30T01:00:02\037"
                             "2026-11-30T01:00:03\0372026-11-30T01:10:03\n";
static const char *sa_tail =
    "\037COMPLETED\0370:0\0372026-11-30T00:59:43\037"
    "2026-11-30T00:59:46\0372026-11-30T00:59:48\0372\037"
    "billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1,"
    "mem=500M,node=1\n";

static const char *ids_arg(const char *const *argv)
{
    for (size_t i = 0; argv[i]; i++)
        if (!strcmp(argv[i], "-j"))
            return argv[i + 1];
    return "";
}

/* Even ids are still running (squeue), odd ones ended (sacct). */
static int reply(void *arg, const char *const *argv, const char *in, size_t len,
                 struct transport_result *res, exa_error_t *err)
{
    int want_odd = arg != NULL;
    const char *p = ids_arg(argv);

    while (*p) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        long id = strtol(p, NULL, 10);
        if ((id % 2 == 1) == want_odd) {
            strbuf_add(&res->out, p, l);
            strbuf_addstr(&res->out, want_odd ? sa_tail : sq_tail);
        }
        p += l + (c ? 1 : 0);
    }
    res->rc = 0;
    return 0;
}

static struct transport *fake(void)
{
    struct transport *t = transport_fake_new();
    transport_fake_add_handler(t, "squeue *", reply, NULL, 0);
    transport_fake_add_handler(t, "sacct *", reply, (void *)1, 0);
    return t;
}

int main(void)
{
    static struct sched_job out[N];
    char **ids = xcalloc(N, sizeof(*ids));
    struct transport *t;
    struct sched *s;
    exa_error_t err = EXA_ERROR_INIT;
    double t0, batched_us, single_us, batched_calls, single_calls;
    int rounds = 5, done = 0;

    for (int i = 0; i < N; i++)
        ids[i] = xstrfmt("%d", 700000 + i);

    t = fake();
    s = sched_new("slurm", t, &err);
    t0 = subprocess_now();
    for (int r = 0; r < rounds; r++)
        if (sched_status_batch(s, (const char *const *)ids, N, out, &err) < 0)
            return 1;
    batched_us = (subprocess_now() - t0) * 1e6 / rounds / N;
    batched_calls = (double)transport_fake_ncalls(t) / rounds;
    for (int i = 0; i < N; i++)
        done += out[i].state == SCHED_COMPLETED;
    sched_free(s);
    transport_close(t);

    t = fake();
    s = sched_new("slurm", t, &err);
    t0 = subprocess_now();
    for (int i = 0; i < N; i++)
        if (sched_status_batch(s, (const char *const *)&ids[i], 1, &out[i],
                               &err) < 0)
            return 1;
    single_us = (subprocess_now() - t0) * 1e6 / N;
    single_calls = (double)transport_fake_ncalls(t);
    sched_free(s);
    transport_close(t);

    printf("jobs tracked:             %d (%d ended, %d running)\n", N, done,
           N - done);
    printf("calls per poll, batched:  %.0f\n", batched_calls);
    printf("calls per poll, per job:  %.0f\n", single_calls);
    printf("calls ratio:              %.0fx fewer\n",
           single_calls / batched_calls);
    printf("us per job, batched:      %.2f\n", batched_us);
    printf(
        "us per job, per job:      %.2f (fake transport: no process spawn)\n",
        single_us);
    printf("time ratio:               %.1fx\n", single_us / batched_us);
    for (int i = 0; i < N; i++)
        free(ids[i]);
    free(ids);
    return 0;
}
