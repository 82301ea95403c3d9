/*
 * pipeline_task.h - `exa pipeline run --cluster C --via worker`: the
 * training payload of a cluster run (libpipeline/cluster_run.h) run as a
 * task of the engine (engine.h) on a dial-back worker of cluster C
 * instead of as a batch job of its own.
 *
 * Order:
 *   1. the cluster through the gate for GATE_SCHEDULE (libfleet/gate.h):
 *      registered, host key as approved, ACTIVE (EXA_ENOTAPPROVED, exit
 *      6, otherwise; nothing is queued);
 *   2. the run id as cluster_run_id() with "via=worker" in its text, or
 *      --run-id; unless the run is new (--new): a version this run
 *      registered from a task on C is reported (res->already, nothing
 *      queued); a queued or leased task of the run on C is adopted; a
 *      done one is adopted to finish its registration; after only failed
 *      or cancelled tasks a new one is queued;
 *   3. queue the task (ACTIVE checked again in its transaction,
 *      gate_recheck_active) pinned to C (task_submit_pinned: only workers whose
 *      join token names C lease it; the provisioner asks only C's
 *      profiles) with the argv of cluster_run_payload_argv(), --out=out
 *      in the attempt's directory, outputs SHA256SUMS model.json
 *      encoders.json metrics.json read from out/ (outputs_dir), cpus =
 *      cpus_per_task x ntasks, gpus, timeout_s from --time (default
 *      3600 s); a dry run renders the spec and queues nothing;
 *   4. wait on platform.db (the task row every min(poll interval, 1 s),
 *      interrupts seen within 0.2 s, the deadline EXAMLOPS_SLURM_MAX_WAIT_S
 *      of the batch wait): an interrupt asks h->on_interrupt whether to
 *      cancel the task (task_cancel) or leave it queued (res->detached);
 *   5. done: copy the four artifacts the engine stored, checking each
 *      against the SHA-256 the engine recorded, verify them against
 *      SHA256SUMS (cluster_run_verify_artifacts) and register the next
 *      version (cluster_run_register_staged) with lineage: cluster,
 *      scheduler, job_id = the worker's Slurm job id (workers table),
 *      run id, task id, attempt, worker id, dataset, rows. failed or
 *      cancelled: nothing registered, the tail of the task's stderr in
 *      res->stderr_tail, EXA_EFAIL.
 */
#ifndef EXA_TASK_PIPELINE_TASK_H
#define EXA_TASK_PIPELINE_TASK_H

#include "libpipeline/cluster_run.h"
#include "libtask/proto.h"
#include "libutil/strbuf.h"

/* The directory (under the attempt's) `exa train --out` writes. */
#define PIPELINE_TASK_OUT_DIR "out"

/*
 * The task spec of req (pure: no I/O): argv as described above with rexa
 * the exa binary on the workers, outputs and outputs_dir, cpus, gpus and
 * timeout_s from req->res (NULL: 1 CPU, no GPU, 3600 s). Fills *out
 * (tp_spec_release) and returns 0, or -1 with err (EXA_EUSAGE: unknown
 * model or dataset, no dataset path, a --time that is not sbatch's syntax
 * or not 1 s .. 30 days).
 */
int pipeline_task_spec(const struct cluster_run_request *req, const char *rexa,
                       struct tp_spec *out, exa_error_t *err);

/*
 * The lineage line of a registered worker run (pure), appended to out:
 * "task 7 attempt 1 on worker w-ab12 (Slurm job 42) of cluster testa,
 * run 3f2a..."; unknown parts are said in words ("no Slurm job").
 */
void pipeline_task_lineage_line(const struct cluster_run_result *res,
                                struct strbuf *out);

/*
 * Run req (req->via_worker; req->cluster a registered name, not auto) as
 * described above into *res (initialised here; release it with
 * cluster_run_result_release in every case; res->via_worker is 1).
 * Returns 0 when a version was registered (now or before: res->already)
 * or a dry run was rendered, else -1 with err: EXA_EUSAGE (auto or no
 * cluster, --stage-dataset, bad run id or spec), EXA_ENOTFOUND (unknown
 * cluster), EXA_ENOTAPPROVED (not ACTIVE), EXA_EFAIL (task failed or
 * cancelled, artifacts rejected, interrupted: res->detached),
 * EXA_ETIMEOUT (the deadline; the task stays queued or leased),
 * EXA_ECONFIG (database, data directory).
 */
int pipeline_task_run(const struct cluster_run_request *req,
                      struct cluster_run_result *res, exa_error_t *err);

#endif
