#!/bin/bash
# t0012-pipeline-interrupt - SIGINT or SIGTERM during a mock `exa pipeline
# run` (while XGBoost trains on a generated 100,000-row table) removes the
# run's staging directory (models/JPCP/run-<uuid>.tmp-*), registers no
# version, leaves no training process behind, and finishes the job row
# FAILED with the reason "interrupted by signal N" instead of leaving it
# RUNNING; the next run still registers the next version.
. "$(dirname "$0")/lib.sh"
exa_test_env

run_exa --json pipeline run --dummy --dataset-path "$SAMPLE"
is "$RC" 0 "baseline run registers version 1"

# A table large enough that training takes seconds: 100,000 jobs of 400
# users on 1-8 nodes, May to September 2020 (80% train, 20% validation).
awk -v n=100000 'BEGIN {
    srand(7)
    print "job_id,user_id,num_nodes_req,num_nodes_alloc,submit_time,node_power_consumption"
    for (i = 1; i <= n; i++) {
        u = int(rand() * 400); k = 1 + int(rand() * 8)
        printf "%d,%d,%d,%d,2020-%02d-%02dT%02d:00:00Z,%d\n", i, u, k, k,
            5 + int((i - 1) * 5 / n), 1 + int(rand() * 28),
            int(rand() * 24), k * (200 + u + int(rand() * 100))
    }
}' >"$T/big.csv"

models="$XDG_DATA_HOME/examlops/models/JPCP"

# no_process TEXT: no process has TEXT in its command line (the training
# child is a fork, so it carries exa's arguments).
no_process() {
    ! pgrep -f -- "$1"
}

# interrupt SIG NUM: start a run on big.csv, wait until its job row is
# RUNNING, send SIG, and check what it leaves behind.
interrupt() {
    local sig=$1 num=$2 pid rc=0 id i
    # Job control on, so the background exa does not inherit SIGINT as
    # ignored (a non-interactive shell ignores it for `cmd &`).
    set -m
    "$EXA" --json pipeline run --dataset-path "$T/big.csv" \
        >"$T/int.out" 2>"$T/int.err" &
    pid=$!
    set +m
    id=
    for i in $(seq 1 600); do
        run_exa --json hpc jobs
        id=$(jq -r '[.[] | select(.state == "RUNNING")][0].job_id // empty' \
            <<<"$OUT" 2>/dev/null)
        [ -n "$id" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    isnt "$id" "" "SIG$sig: the run's job is recorded RUNNING while it trains"
    ok "SIG$sig: its staging directory exists while it trains" \
        compgen -G "$models/run-*.tmp-*"
    kill -"$sig" "$pid"
    wait "$pid" || rc=$?
    OUT=$(cat "$T/int.out")
    is "$rc" 1 "SIG$sig: exa exits 1"
    json_ok "SIG$sig: one JSON error document naming the signal" \
        --arg e "interrupted by signal $num" \
        '.error == $e and .exit_code == 1 and (.hint | test("recorded as FAILED"))'
    is "$(cd "$models" && find . -mindepth 1 -maxdepth 1 | LC_ALL=C sort | tr '\n' ' ')" \
        "./1 " "SIG$sig: no staging directory or new version directory left"
    ok "SIG$sig: no training process left behind" no_process "$T/big.csv"
    run_exa --json hpc jobs
    json_ok "SIG$sig: job $id is FAILED with the reason and exit 1" \
        --arg id "$id" --arg e "interrupted by signal $num" \
        '[.[] | select(.job_id == $id)] | length == 1 and
         (.[0] | .state == "FAILED" and .reason == $e and .exit_code == 1
                 and .end_time != null and .run_seconds > 0)'
    json_ok "SIG$sig: no job is left RUNNING" \
        '[.[] | select(.state == "RUNNING")] | length == 0'
    run_exa --json models show JPCP
    json_ok "SIG$sig: still only version 1 registered" \
        '[.versions[].version] == [1]'
}

interrupt INT 2
interrupt TERM 15

run_exa --json pipeline run --dummy --dataset-path "$SAMPLE"
is "$RC" 0 "a run after the interruptions succeeds"
json_ok "and registers version 2" '.version == 2'

done_testing
