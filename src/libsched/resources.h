/*
 * resources.h - the scheduler-neutral resource ask and its translation to
 * Slurm sbatch flags and Flux submission flags.
 *
 * Keys follow doc/design.md §3: partition qos account constraint time
 * nodes ntasks cpus_per_task mem gpus (the job TOTAL on every backend)
 * job_name array. Fixes over the reference (doc/reference.md §6 items
 * 6 and 7): a bare-number time is minutes on both backends (Slurm's rule,
 * sbatch(1) --time), and Flux gets it as a Flux Standard Duration in
 * seconds; Flux -g is GPUs per slot, computed as ceil(gpus / ntasks).
 */
#ifndef EXA_RESOURCES_H
#define EXA_RESOURCES_H

#include "libutil/error.h"
#include "libutil/strvec.h"

struct sched_resources {
    char *partition, *qos, *account, *constraint;
    char *time;     /* sbatch --time syntax: M, M:S, H:M:S, D-H[:M[:S]] */
    char *mem;      /* sbatch --mem syntax: 16G, 500M */
    char *job_name; /* user part of the name; the run id is appended */
    char *array;    /* sbatch --array syntax: 0-9%2, 1,3,5 */
    long nodes, ntasks, cpus_per_task, gpus; /* 0: not asked */
    int hold; /* submit held (sbatch --hold, flux --urgency=0) */
};
#define SCHED_RESOURCES_INIT                                                   \
    {                                                                          \
        0                                                                      \
    }

/* Free r's strings and reset it to SCHED_RESOURCES_INIT (r not freed). */
void sched_resources_release(struct sched_resources *r);

/*
 * Set a key by its neutral name ("partition", "cpus_per_task", ...) from
 * text. Integers must be positive decimals. Values with control characters
 * (newline, tab...) are refused. Returns 0, or -1 with err (EXA_EUSAGE).
 */
int sched_resources_set(struct sched_resources *r, const char *key,
                        const char *value, exa_error_t *err);

/*
 * Fill keys still unset from the environment: EXAMLOPS_HPC_<KEY> then the
 * legacy EXAMLOPS_SLURM_<KEY> (KEY: PARTITION QOS ACCOUNT CONSTRAINT TIME
 * NODES NTASKS CPUS MEM GPUS). -1 with err on a bad value.
 */
int sched_resources_from_env(struct sched_resources *r, exa_error_t *err);

/*
 * The partition sched_resources_from_env() would take: the value of
 * EXAMLOPS_HPC_PARTITION, else of EXAMLOPS_SLURM_PARTITION (borrowed from
 * the environment), or NULL when neither is set and non-empty. *name
 * (may be NULL) gets the variable's name. Unchecked: callers check it as
 * their use needs (placement.h place_partition_check).
 */
const char *sched_partition_from_env(const char **name);

/*
 * Parse an sbatch --time value into seconds: "90" (minutes), "90:30"
 * (M:S), "1:30:00", "2-0", "2-12:00", "2-12:00:00". UNLIMITED/INFINITE
 * give 0 with *unlimited = 1. -1 with err (EXA_EUSAGE) otherwise.
 */
int sched_time_seconds(const char *s, long long *out, int *unlimited,
                       exa_error_t *err);

/*
 * Append to argv the sbatch(1) flags for r, in the reference's order:
 * --partition --qos --time --nodes --ntasks --cpus-per-task --mem
 * --gpus=N (job total) --constraint --account --array --hold; unset keys
 * add nothing. Values were checked by sched_resources_set(), so this
 * returns 0 (err is kept for symmetry with the Flux variant).
 */
int sched_resources_slurm_argv(const struct sched_resources *r,
                               struct strvec *argv, exa_error_t *err);

/*
 * The slot shape Flux is asked for (flux-batch(1): `-n` is the number of
 * slots, `-g` GPUs *per slot*, and `flux batch` refuses a job naming
 * neither -n nor -N): *slots = ntasks, else nodes, else 1 (one slot
 * when the ask names neither); *gpus_per_slot = gpus / *slots, so the
 * allocation is the job total gpus (0 when gpus <= 0). -n is always sent
 * with -N, which keeps Flux from making -N alone exclusive (2 GPUs per
 * slot on each whole node would allocate every GPU of those nodes).
 * Returns 0, or -1 with err (EXA_EUSAGE) when gpus is not a multiple of
 * the slot count, or ntasks is fewer than nodes. Counts are plain
 * numbers (tasks, nodes, GPUs).
 */
int sched_flux_slots(long ntasks, long nodes, long gpus, long *slots,
                     long *gpus_per_slot, exa_error_t *err);

/*
 * Append the flux-batch(1)/flux-submit(1) flags: --queue (the partition:
 * a Flux queue is a set of nodes, as a Slurm partition, and the node views
 * and preflight read it as one), --bank only when accounting is 1,
 * --requires, then the slot shape of sched_flux_slots(): [-N nodes] -n
 * slots [-c cpus] [-g per slot], -t <seconds>s, --urgency=0 for hold.
 * Dropped keys (mem, qos: Flux has none; account without accounting;
 * the array throttle) add a line to warnings. accounting:
 * 1 when flux-accounting answers. Returns 0, or -1 with err (EXA_EUSAGE)
 * when the time does not parse or the GPUs cannot be split over the
 * slots (sched_flux_slots()).
 */
int sched_resources_flux_argv(const struct sched_resources *r, int accounting,
                              struct strvec *argv, struct strvec *warnings,
                              exa_error_t *err);

#endif
