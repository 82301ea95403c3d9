/*
 * fuzz_slurm_adapter.c - libFuzzer target for the Slurm adapter end to
 * end (libsched/slurm.c, accounting.c) over the fake transport: the input,
 * cut at NUL bytes, is what squeue, sacct, scontrol show job and sbatch
 * (stdout, then stderr) print. It drives the batched status (squeue +
 * sacct, then the scontrol fallback), a submit, the StdOut lookup of
 * `hpc logs` and job accounting, i.e. every place the product reads Slurm
 * output, through the parsers and the copy into struct sched_job. Every
 * result must keep its strings NUL-terminated inside their fields, a
 * known state, and counts of -1 (unknown) or more.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libsched/accounting.h"
#include "libsched/sched.h"
#include "libtransport/transport.h"
#include "libutil/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seg {
    const uint8_t *p;
    size_t n;
};

static int answer(void *arg, const char *const *argv, const char *in,
                  size_t len, struct transport_result *res, exa_error_t *err)
{
    const struct seg *s = arg;
    strbuf_add(&res->out, s->p, s->n);
    res->rc = 0;
    return 0;
}

static int answer_sbatch(void *arg, const char *const *argv, const char *in,
                         size_t len, struct transport_result *res,
                         exa_error_t *err)
{
    const struct seg *s = arg; /* [0] stdout, [1] stderr */
    strbuf_add(&res->out, s[0].p, s[0].n);
    strbuf_add(&res->err, s[1].p, s[1].n);
    res->rc = s[1].n && s[1].p[0] == 'E' ? 1 : 0;
    return 0;
}

static void check(const struct sched_job *j)
{
    if (!memchr(j->id, 0, sizeof(j->id)) ||
        !memchr(j->submit, 0, sizeof(j->submit)) ||
        !memchr(j->start, 0, sizeof(j->start)) ||
        !memchr(j->end, 0, sizeof(j->end)) ||
        !memchr(j->raw_state, 0, sizeof(j->raw_state)) ||
        !memchr(j->reason, 0, sizeof(j->reason)))
        __builtin_trap();
    if ((unsigned)j->state > SCHED_UNKNOWN || j->gpus < -1 || j->cpus < -1 ||
        j->nodes < -1 || j->elapsed_s < -1)
        __builtin_trap();
}

static const char *script_path(void)
{
    static char path[] = "/tmp/exa-fuzz-run-XXXXXX";
    static int made;
    if (!made) {
        int fd = mkstemp(path);
        if (fd < 0)
            abort();
        if (write(fd, "#!/bin/sh\n", 10) != 10)
            abort();
        close(fd);
        made = 1;
    }
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const ids[] = {"1", "2", "10", "6", "8_1", "2"};
    struct seg seg[5] = {{0}};
    size_t k = 0, start = 0;
    struct transport *t;
    struct sched *s;
    struct sched_job out[6];
    struct sched_submit_result r;
    struct sched_submit_req req = {NULL, "/r", "run1", NULL};
    struct sched_acct a;
    struct strbuf log = STRBUF_INIT;
    exa_error_t err = EXA_ERROR_INIT;

    for (size_t i = 0; i <= size && k < 5; i++)
        if (i == size || data[i] == 0) {
            seg[k].p = data + start;
            seg[k++].n = i - start;
            start = i + 1;
        }
    t = transport_fake_new();
    transport_fake_add_handler(t, "squeue *", answer, &seg[0], 0);
    transport_fake_add_handler(t, "sacct *", answer, &seg[1], 0);
    transport_fake_add_handler(t, "scontrol *", answer, &seg[2], 0);
    transport_fake_add_handler(t, "sbatch *", answer_sbatch, &seg[3], 0);
    s = sched_new("slurm", t, &err);
    if (!s)
        abort();
    if (sched_status_batch(s, ids, 6, out, &err) == 0)
        for (int i = 0; i < 6; i++)
            check(&out[i]);
    s->slurm_accounting = 0; /* the scontrol fallback */
    if (sched_status_batch(s, ids, 6, out, &err) == 0)
        for (int i = 0; i < 6; i++)
            check(&out[i]);
    req.script_path = script_path();
    if (sched_submit(s, &req, &r, &err) == 0 &&
        (!r.job_id[0] || !memchr(r.cluster, 0, sizeof(r.cluster))))
        __builtin_trap();
    sched_submit_result_release(&r);
    (void)sched_logs(s, "2", NULL, &log, &err);
    strbuf_release(&log);
    if (sched_accounting(s, "2", 1, &a, &err) == 0 &&
        (a.gpus < -1 || a.cpus < -1 || a.nodes < -1))
        __builtin_trap();
    sched_free(s);
    transport_close(t);
    return 0;
}
