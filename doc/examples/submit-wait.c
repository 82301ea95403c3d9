/*
 * submit-wait.c - the exa core used directly from C (doc/libexa.md):
 * open a registered cluster by name for scheduling, submit a script, wait
 * for it and print what the job used, as the scheduler accounted it.
 *
 *     cc submit-wait.c $(pkg-config --cflags --libs exa) -o submit-wait
 *     ./submit-wait CLUSTER SCRIPT [ARG...]
 *
 * The cluster must be registered and approved (`exa hpc connect`, `exa hpc
 * approve`); platform.db and clusters.yaml are found as exa finds them
 * (EXAMLOPS_DB, EXAMLOPS_HPC_REGISTRY). The gate (libfleet/gate.h) refuses
 * a cluster that is not ACTIVE (exit 6) or whose host key does not match
 * its approval (exit 4), and records the job in platform.db, where `exa hpc
 * jobs` shows it. The resource ask comes from the EXAMLOPS_HPC_* variables
 * (EXAMLOPS_HPC_GPUS, _PARTITION, _ACCOUNT, ...), the poll interval and
 * deadline from EXAMLOPS_HPC_POLL_INTERVAL and EXAMLOPS_SLURM_MAX_WAIT_S.
 * Output, one "key: value" per line:
 *     cluster, scheduler, job_id, run_id, state, raw_state, exit_code,
 *     elapsed_s (the scheduler's run time, seconds), gpus, gpu_hours,
 *     cpus, cpu_hours
 * Exit status: 0 when the job COMPLETED, 1 when it ended otherwise, else
 * the status doc/exit-codes.md gives the error.
 */
#include <stdio.h>
#include <stdlib.h>

#include <exa/exa.h>

static int fail(struct gate *g, exa_error_t *err)
{
    if (g)
        gate_check_error(g, err); /* a host key refusal says so */
    fprintf(stderr, "submit-wait: %s\n", err->text);
    return exa_errc_exit(err->code);
}

int main(int argc, char **argv)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct sched_resources res = SCHED_RESOURCES_INIT;
    struct gate_req greq = {0};
    struct gate_submit_req sreq = {0};
    struct gate_submit_out sub;
    struct tracker_opts topts;
    struct sched_job last;
    struct sched_acct acct;
    struct gate *g = NULL;
    const char *ids[1];
    int rc = 1, submitted = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: submit-wait CLUSTER SCRIPT [ARG...]\n");
        return 2;
    }
    sched_job_init(&last, "");
    sched_acct_init(&acct);
    if (sched_resources_from_env(&res, &err) < 0 ||
        tracker_opts_from_env(&topts, &err) < 0) {
        rc = fail(NULL, &err);
        goto out;
    }

    /* open the cluster for scheduling: registered, ACTIVE, pinned key */
    greq.cluster = argv[1];
    greq.purpose = GATE_SCHEDULE;
    if (!(g = gate_open(&greq, &err))) {
        rc = fail(NULL, &err);
        goto out;
    }

    /* submit: a run id, its job directory, run.sh, the job row */
    sreq.script = argv[2];
    sreq.args = (const char *const *)argv + 3;
    sreq.res = &res;
    sreq.kind = "batch";
    submitted = 1;
    if (gate_submit(g, &sreq, &sub, &err) < 0) {
        rc = fail(g, &err);
        goto out;
    }

    /* wait (batched polls, a deadline), then record the end and the
     * scheduler's accounting (sacct; flux eventlog + R) on the job row */
    ids[0] = sub.sr.job_id;
    if (tracker_wait(gate_sched(g), ids, 1, &topts, &last, NULL, &err) < 0) {
        rc = fail(g, &err);
        goto out;
    }
    if (gate_job_record(g, &last, 10, &acct, &err) != 1) {
        if (!err.text[0])
            exa_err(&err, EXA_ESCHED, "no accounting for job %s on '%s'",
                    sub.sr.job_id, gate_name(g));
        rc = fail(g, &err);
        goto out;
    }
    printf("cluster: %s\nscheduler: %s\njob_id: %s\nrun_id: %s\n", gate_name(g),
           gate_scheduler(g), sub.sr.job_id, sub.run_id);
    printf("state: %s\nraw_state: %s\nexit_code: %d\n",
           sched_state_name(last.state), last.raw_state, last.exit_code);
    printf("elapsed_s: %.0f\ngpus: %lld\ngpu_hours: %.6f\n", acct.run_seconds,
           acct.gpus, acct.gpu_hours);
    printf("cpus: %lld\ncpu_hours: %.6f\n", acct.cpus, acct.cpu_hours);
    rc = last.state == SCHED_COMPLETED ? 0 : 1;
out:
    if (submitted)
        gate_submit_out_release(&sub);
    gate_close(g);
    sched_resources_release(&res);
    return rc;
}
