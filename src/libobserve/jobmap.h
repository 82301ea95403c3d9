/*
 * jobmap.h - GPU-to-job mapping files for dcgm-exporter.
 *
 * dcgm-exporter, started with --hpc-job-mapping-dir DIR (or
 * DCGM_HPC_JOB_MAPPING_DIR), labels each GPU's metrics with hpc_job from
 * the file in DIR named after the GPU (its index, or "GPU.MIG" for a MIG
 * instance) that holds one job id per line (dcgm-exporter README, "HPC
 * job mapping"). The Slurm Prolog writes the job's id into the file of
 * each of its GPUs, the Epilog takes it out again.
 *
 * Two jobs may share a GPU (shards, MPS) and prologs and epilogs of
 * different jobs may run at once on a node, so every change is a
 * read-modify-write of one file under an exclusive flock on the
 * directory, written with atomic_write_file() (libutil/atomic.h); a
 * file left with no job is removed. Adding an id that is present, or removing
 * one that is absent, changes nothing (idempotent: Slurm may re-run a prolog).
 */
#ifndef EXA_JOBMAP_H
#define EXA_JOBMAP_H

#include "libutil/error.h"
#include "libutil/strvec.h"

#define JOBMAP_DEFAULT_DIR "/var/run/dcgm-job-map"

/*
 * Parse a GPU list as Slurm and CUDA print it: comma-separated indices
 * ("0,2,3"), ranges ("0-3"), or MIG "GPU.INSTANCE" names ("2.0"); blanks
 * around items are ignored, an empty list gives no GPU. Appends each
 * index as a string to out (duplicates dropped). Returns 0, or -1 with err
 * (EXA_EUSAGE) for anything else (e.g. a UUID "GPU-5d1e...": the index is
 * what names the file).
 */
int jobmap_parse_gpus(const char *list, struct strvec *out, exa_error_t *err);

/*
 * The job's GPUs from the environment of a Slurm prolog/epilog or job
 * step: SLURM_JOB_GPUS, else SLURM_STEP_GPUS, else CUDA_VISIBLE_DEVICES
 * (the first that is set). *source (may be NULL) gets the variable used,
 * or NULL when none is set (no GPUs). Returns 0 or -1 as
 * jobmap_parse_gpus().
 */
int jobmap_gpus_from_env(struct strvec *out, const char **source,
                         exa_error_t *err);

/* Non-zero when id is a usable job id: 1-64 chars of [A-Za-z0-9_.+-]. */
int jobmap_valid_job_id(const char *id);

/*
 * Prolog: add job_id to the file of each GPU in gpus under dir (created
 * 0755 if missing). Returns the number of files changed, or -1 with err
 * (EXA_EUSAGE for a bad job id, EXA_ECONFIG for file errors).
 */
int jobmap_prolog(const char *dir, const char *job_id,
                  const struct strvec *gpus, exa_error_t *err);

/*
 * Epilog: remove job_id from every mapping file under dir (all of them,
 * so a missing or changed GPU list cannot leave a stale id), deleting
 * files left empty; other jobs' ids stay. A missing dir is not an error.
 * Returns the number of files changed, or -1 with err.
 */
int jobmap_epilog(const char *dir, const char *job_id, exa_error_t *err);

#endif
