/*
 * resources.c - resource keys, environment defaults and the per-backend
 * flag translation (see resources.h for the semantics chosen and why).
 *
 * Values travel as single argv words (`--partition=VALUE`), so a value
 * can never become shell syntax on the way; values with control
 * characters are refused outright because nothing legitimate has them and
 * a newline in a job name breaks every line-oriented scheduler output.
 */
#include "libsched/resources.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

void sched_resources_release(struct sched_resources *r)
{
    free(r->partition);
    free(r->qos);
    free(r->account);
    free(r->constraint);
    free(r->time);
    free(r->mem);
    free(r->job_name);
    free(r->array);
    memset(r, 0, sizeof(*r));
}

static int set_str(char **dst, const char *key, const char *v, exa_error_t *err)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return exa_err(err, EXA_EUSAGE,
                           "%s must not contain control characters", key);
    if (!*v)
        return exa_err(err, EXA_EUSAGE, "%s must not be empty", key);
    free(*dst);
    *dst = xstrdup(v);
    return 0;
}

static int set_long(long *dst, const char *key, const char *v, exa_error_t *err)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || *end || n <= 0 || n > 1000000)
        return exa_err(err, EXA_EUSAGE,
                       "%s must be a positive integer, not '%s'", key, v);
    *dst = n;
    return 0;
}

int sched_resources_set(struct sched_resources *r, const char *key,
                        const char *value, exa_error_t *err)
{
    if (!strcmp(key, "partition"))
        return set_str(&r->partition, key, value, err);
    if (!strcmp(key, "qos"))
        return set_str(&r->qos, key, value, err);
    if (!strcmp(key, "account"))
        return set_str(&r->account, key, value, err);
    if (!strcmp(key, "constraint"))
        return set_str(&r->constraint, key, value, err);
    if (!strcmp(key, "time")) {
        long long s;
        int unl;
        if (sched_time_seconds(value, &s, &unl, err) < 0)
            return -1;
        return set_str(&r->time, key, value, err);
    }
    if (!strcmp(key, "mem"))
        return set_str(&r->mem, key, value, err);
    if (!strcmp(key, "job_name"))
        return set_str(&r->job_name, key, value, err);
    if (!strcmp(key, "array"))
        return set_str(&r->array, key, value, err);
    if (!strcmp(key, "nodes"))
        return set_long(&r->nodes, key, value, err);
    if (!strcmp(key, "ntasks"))
        return set_long(&r->ntasks, key, value, err);
    if (!strcmp(key, "cpus_per_task"))
        return set_long(&r->cpus_per_task, key, value, err);
    if (!strcmp(key, "gpus"))
        return set_long(&r->gpus, key, value, err);
    return exa_err(err, EXA_EUSAGE, "unknown resource key '%s'", key);
}

int sched_resources_from_env(struct sched_resources *r, exa_error_t *err)
{
    static const struct {
        const char *key, *suffix;
    } map[] = {
        {"partition", "PARTITION"},
        {"qos", "QOS"},
        {"account", "ACCOUNT"},
        {"constraint", "CONSTRAINT"},
        {"time", "TIME"},
        {"nodes", "NODES"},
        {"ntasks", "NTASKS"},
        {"cpus_per_task", "CPUS"},
        {"mem", "MEM"},
        {"gpus", "GPUS"},
    };
    char name[64];

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        const char *k = map[i].key, *v;
        int unset;

        if (!strcmp(k, "partition"))
            unset = !r->partition;
        else if (!strcmp(k, "qos"))
            unset = !r->qos;
        else if (!strcmp(k, "account"))
            unset = !r->account;
        else if (!strcmp(k, "constraint"))
            unset = !r->constraint;
        else if (!strcmp(k, "time"))
            unset = !r->time;
        else if (!strcmp(k, "mem"))
            unset = !r->mem;
        else if (!strcmp(k, "nodes"))
            unset = !r->nodes;
        else if (!strcmp(k, "ntasks"))
            unset = !r->ntasks;
        else if (!strcmp(k, "cpus_per_task"))
            unset = !r->cpus_per_task;
        else
            unset = !r->gpus;
        if (!unset)
            continue;
        xsnprintf(name, sizeof(name), "EXAMLOPS_HPC_%s", map[i].suffix);
        v = getenv(name);
        if (!v || !*v) {
            xsnprintf(name, sizeof(name), "EXAMLOPS_SLURM_%s", map[i].suffix);
            v = getenv(name);
        }
        if (!v || !*v)
            continue;
        if (sched_resources_set(r, k, v, err) < 0)
            return exa_err_prefix(err, "%s", name);
    }
    return 0;
}

const char *sched_partition_from_env(const char **name)
{
    static const char *const names[] = {"EXAMLOPS_HPC_PARTITION",
                                        "EXAMLOPS_SLURM_PARTITION"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            if (name)
                *name = names[i];
            return v;
        }
    }
    return NULL;
}

/* Parse n decimal digits-only number; -1 if not. */
static long long num(const char *s, size_t len)
{
    long long v = 0;

    if (!len || len > 9)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int sched_time_seconds(const char *s, long long *out, int *unlimited,
                       exa_error_t *err)
{
    const char *dash = strchr(s, '-');
    long long parts[3], days = 0;
    size_t np = 0;
    const char *p;

    *unlimited = 0;
    *out = 0;
    if (!strcasecmp(s, "UNLIMITED") || !strcasecmp(s, "INFINITE")) {
        *unlimited = 1;
        return 0;
    }
    p = s;
    if (dash) {
        days = num(s, (size_t)(dash - s));
        if (days < 0)
            goto bad;
        p = dash + 1;
    }
    for (;;) {
        const char *c = strchr(p, ':');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        long long v = num(p, len);
        if (v < 0 || np == 3)
            goto bad;
        parts[np++] = v;
        if (!c)
            break;
        p = c + 1;
    }
    if (dash) {
        /* D-H, D-H:M, D-H:M:S */
        long long h = parts[0], m = np > 1 ? parts[1] : 0,
                  sec = np > 2 ? parts[2] : 0;
        *out = ((days * 24 + h) * 60 + m) * 60 + sec;
    } else if (np == 1) {
        *out = parts[0] * 60; /* minutes */
    } else if (np == 2) {
        *out = parts[0] * 60 + parts[1]; /* M:S */
    } else {
        *out = (parts[0] * 60 + parts[1]) * 60 + parts[2];
    }
    return 0;
bad:
    return exa_err(err, EXA_EUSAGE,
                   "time must be minutes, M:S, H:M:S or D-H[:M[:S]], not '%s'",
                   s);
}

int sched_resources_slurm_argv(const struct sched_resources *r,
                               struct strvec *argv, exa_error_t *err)
{
    if (r->partition)
        strvec_pushf(argv, "--partition=%s", r->partition);
    if (r->qos)
        strvec_pushf(argv, "--qos=%s", r->qos);
    if (r->time)
        strvec_pushf(argv, "--time=%s", r->time);
    if (r->nodes)
        strvec_pushf(argv, "--nodes=%ld", r->nodes);
    if (r->ntasks)
        strvec_pushf(argv, "--ntasks=%ld", r->ntasks);
    if (r->cpus_per_task)
        strvec_pushf(argv, "--cpus-per-task=%ld", r->cpus_per_task);
    if (r->mem)
        strvec_pushf(argv, "--mem=%s", r->mem);
    if (r->gpus)
        strvec_pushf(argv, "--gpus=%ld", r->gpus);
    if (r->constraint)
        strvec_pushf(argv, "--constraint=%s", r->constraint);
    if (r->account)
        strvec_pushf(argv, "--account=%s", r->account);
    if (r->array)
        strvec_pushf(argv, "--array=%s", r->array);
    if (r->hold)
        strvec_push(argv, "--hold");
    return 0;
}

int sched_flux_slots(long ntasks, long nodes, long gpus, long *slots,
                     long *gpus_per_slot, exa_error_t *err)
{
    long n = ntasks > 0 ? ntasks : nodes > 0 ? nodes : 1;

    *slots = n;
    *gpus_per_slot = 0;
    if (nodes > 0 && n < nodes)
        return exa_err(err, EXA_EUSAGE,
                       "ntasks %ld is fewer than nodes %ld: flux needs a "
                       "slot on every node",
                       n, nodes);
    if (gpus <= 0)
        return 0;
    if (gpus % n)
        return exa_err(err, EXA_EUSAGE,
                       "gpus %ld cannot be split over %ld flux slots: flux -g "
                       "is per slot (ask a multiple of %ld GPUs, or ntasks "
                       "dividing %ld)",
                       gpus, n, n, gpus);
    *gpus_per_slot = gpus / n;
    return 0;
}

int sched_resources_flux_argv(const struct sched_resources *r, int accounting,
                              struct strvec *argv, struct strvec *warnings,
                              exa_error_t *err)
{
    long slots, per;

    /* a Flux queue is the partition's peer: nodes of its own (flux
     * resource list QUEUE, what preflight and the node views read as the
     * partition); Flux has no QOS */
    if (r->partition)
        strvec_pushf(argv, "--queue=%s", r->partition);
    if (r->account) {
        if (accounting == 1)
            strvec_pushf(argv, "--bank=%s", r->account);
        else
            strvec_pushf(warnings,
                         "account '%s' dropped: flux-accounting is not present",
                         r->account);
    }
    if (r->constraint)
        strvec_pushf(argv, "--requires=%s", r->constraint);
    if (sched_flux_slots(r->ntasks, r->nodes, r->gpus, &slots, &per, err) < 0)
        return -1;
    if (r->nodes)
        strvec_pushf(argv, "-N%ld", r->nodes);
    strvec_pushf(argv, "-n%ld", slots);
    if (r->cpus_per_task)
        strvec_pushf(argv, "-c%ld", r->cpus_per_task);
    if (per)
        strvec_pushf(argv, "-g%ld", per);
    if (r->time) {
        long long s;
        int unl;
        if (sched_time_seconds(r->time, &s, &unl, err) < 0)
            return -1;
        if (!unl)
            strvec_pushf(argv, "-t%llds", s);
    }
    if (r->hold)
        strvec_push(argv, "--urgency=0");
    if (r->mem)
        strvec_pushf(warnings, "mem '%s' dropped: Flux has no memory request",
                     r->mem);
    if (r->qos)
        strvec_pushf(warnings,
                     "qos '%s' dropped: Flux has no QOS (a Flux queue is "
                     "--partition)",
                     r->qos);
    return 0;
}
