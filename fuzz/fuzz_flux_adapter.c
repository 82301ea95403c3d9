/*
 * fuzz_flux_adapter.c - libFuzzer target for the adapters' own line
 * parsers (sched_lines.h): the squeue/sacct/scontrol rows of slurm.c.
 * (flux.c reads through parse_flux.h, fuzzed by fuzz_flux_jobs.c and
 * fuzz_flux_eventlog.c.) The first byte picks the parser; the rest is
 * fed line by line. Any input must parse or
 * be refused without aborting, and a parsed job's strings must stay
 * NUL-terminated inside their fields.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libsched/sched_lines.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct sched_job *j)
{
    if (!memchr(j->id, 0, sizeof(j->id)) || !memchr(j->submit, 0, sizeof(j->submit)) ||
        !memchr(j->start, 0, sizeof(j->start)) || !memchr(j->end, 0, sizeof(j->end)) ||
        !memchr(j->raw_state, 0, sizeof(j->raw_state)) ||
        !memchr(j->reason, 0, sizeof(j->reason)))
        __builtin_trap();
    if ((unsigned)j->state > SCHED_UNKNOWN)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sched_job j;
    unsigned which;
    char *buf, *p;

    if (size < 1)
        return 0;
    which = data[0] % 3;
    buf = xmalloc(size);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    p = buf;
    while (p) {
        char *nl = strchr(p, '\n');
        int rc;
        if (nl)
            *nl = '\0';
        switch (which) {
        case 0: rc = sched_slurm_parse_squeue_line(p, &j); break;
        case 1: rc = sched_slurm_parse_sacct_line(p, &j); break;
        default: rc = sched_slurm_parse_scontrol_line(p, &j); break;
        }
        if (rc == 0)
            check(&j);
        p = nl ? nl + 1 : NULL;
    }
    free(buf);
    return 0;
}
