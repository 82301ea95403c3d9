#!/bin/bash
# t0203-debug-parse-slurm.t - `exa debug parse` on the Slurm 22.05 testbed
# captures in tests/fixtures/slurm/ (see its README.md): exact values
# through the CLI, the doc/formats.md error envelope with its exit status, and
# the usage errors of the command itself.
. "$(dirname "$0")/lib.sh"
exa_test_env
F="$SRCDIR/tests/fixtures/slurm"

parse() { # parse KIND FILE
    local kind=$1 file=$2
    run_exa debug parse "$kind" <"$file"
}

parse sinfo "$F/sinfo-multicluster.out"
is "$RC" 0 "sinfo -M output exits 0"
json_ok "two nodes, one per cluster, GPUs typed" \
    '.nodes | length == 2 and .[0].gpus == 4 and .[0].gpu_type == "a100"
     and .[1].name == "testb-n1" and .[1].mem_mb == 16000
     and .[1].partitions == ["debug"]'

parse sinfo "$F/sinfo-O-padded.out"
json_ok "-O padded: cpus from A/I/O/T, gpus_used from GresUsed" \
    '.nodes[0] | .cpus == 4 and .gpus_used == 0 and .state == "idle"'

parse squeue "$F/squeue-pipe-noheader.out"
json_ok "exa's squeue format without header" \
    '.jobs | length == 2 and .[0].time_limit_s == 60 and .[0].elapsed_s == 3
     and .[1].time_limit_s == null and .[1].gpus == null
     and .[1].exit_code == null'

parse squeue "$F/scontrol-job-completed.out"
json_ok "scontrol show job -o through the squeue kind" \
    '.jobs[0] | .id == "2" and .state == "COMPLETED" and .gpus == 1
     and .end == "2026-11-30T00:59:48" and .elapsed_s == 2'

parse sacct "$F/sacct-cancelled.out"
json_ok "sacct: CANCELLED by 0 and its batch step" \
    '.jobs[0].raw_state == "CANCELLED by 0" and .jobs[0].state == "CANCELLED"
     and .steps[0].job_id == "3" and .steps[0].signal == 15'

parse sacct "$F/sacct-default.out"
json_ok "sacct default fixed-width: blank Partition on the step" \
    '.steps[0] | .step == "batch" and .account == "research"
     and .partition == null'

parse sbatch "$F/sbatch-parsable-cluster.out"
json_ok "sbatch --parsable N;C" '.job_id == "2" and .cluster == "testb"'

parse sbatch "$F/sbatch-unknown-partition.err"
isnt "$RC" 0 "a refused submission exits non-zero"
json_ok "refused submission is submit_failed with the first error line" \
    '.error.kind == "submit_failed" and
     .error.message == "sbatch: error: invalid partition specified: nosuchpart"'

parse sinfo "$F/sinfo-no-controller.err"
isnt "$RC" 0 "sinfo without a controller exits non-zero"
json_ok "no node is made of the error text" '.error.kind == "slurm_error"'

run_exa debug parse hostlist <<<'gpu[01-02],cpu[9-10]'
json_ok "hostlist" '.hosts == ["gpu01","gpu02","cpu9","cpu10"]'
run_exa debug parse hostlist <<<'gpu[2-1]'
isnt "$RC" 0 "a reversed range exits non-zero"
json_ok "reversed range is invalid_hostlist" \
    '.error.kind == "invalid_hostlist"'

run_exa debug parse nosuchkind </dev/null
is "$RC" 2 "an unknown kind is a usage error"

# the command line is part of the input: headerless columns from -o
run_exa debug parse squeue --command "squeue -h -t R -o '%u|%i|%b|%D'" \
    <<<'alice|41|gres/gpu:2|3'
json_ok "--command names headerless columns; -t R sets the state" \
    '.jobs[0] | .id == "41" and .user == "alice" and .gpus == 6
     and .state == "RUNNING"'
EXA_PARSE_COMMAND="sacct -P -n -o State,JobID" \
    run_exa debug parse sacct --command "sacct -P -n -o JobID,State" \
    <<<'42|FAILED'
json_ok "--command wins over EXA_PARSE_COMMAND" \
    '.jobs[0].id == "42" and .jobs[0].state == "FAILED"'
EXA_PARSE_COMMAND="sacct -P -n -o State,JobID" \
    run_exa debug parse sacct <<<'FAILED|43'
json_ok "EXA_PARSE_COMMAND is read without --command" \
    '.jobs[0].id == "43" and .jobs[0].state == "FAILED"'
run_exa debug parse squeue --command "squeue -o 'x" </dev/null
is "$RC" 2 "an unterminated quote in --command is a usage error"
run_exa debug parse squeue --command </dev/null
is "$RC" 2 "--command without a value is a usage error"

done_testing
