#!/bin/bash
# T6 of shared/WORKERS.md §13 on the real testbed: a provisioned worker (a
# batch job on testa whose payload is `exa worker`) is killed -9 while its
# task runs. The shim's death signal takes the task down within 2 s, the
# job ends, the lease expires after the TTL and the provisioner asks for a
# new worker (a second sbatch, while the task is queued and no attached
# worker can take it); attempt 2 runs there and completes. The database
# has two attempts, attempt 1 lost (cause dead), one result; the task's
# marker shows two runs (at-least-once, visible on purpose). t0960 covers
# the same with workers started by hand.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed.sh"
require_testbed
exa_test_env

H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
export EXAMLOPS_WORKER_HEARTBEAT_S=1 EXAMLOPS_WORKER_LEASE_TTL_S=3 \
    EXAMLOPS_WORKER_LONGPOLL_S=2 EXAMLOPS_PROVISION_TICK_S=0.5
export EXAMLOPS_PROVISIONERS=$T/provisioners.json
DB=$EXAMLOPS_DB
SERVE_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    sqlite3 "$DB" "SELECT job_id FROM provision_requests WHERE job_id IS NOT NULL" 2>/dev/null |
        while read -r id; do tb_slurm testa scancel "$id" >/dev/null 2>&1; done
    wait 2>/dev/null
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
sql() { sqlite3 "$DB" "$@"; }
sacct_state() { tb_slurm testa sacct -X -P -n -j "$1" -o State | head -n 1; }

"$EXA" -y hpc connect "$H" --name testa --user "$U" --key "$KEY" \
    --port "$TESTBED_SSH_PORT_TESTA" --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testa >/dev/null 2>&1
is "$("$EXA" --json hpc clusters | jq -r '.[] | select(.name == "testa") | .state')" \
    ACTIVE "testa is connected and approved"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/prov"
chmod 0777 "$T" "$T/prov"
cat >"$EXAMLOPS_PROVISIONERS" <<EOF
{"provisioners": [
 {"name": "testa", "cluster": "testa", "engine_url": "http://127.0.0.1:$PORT",
  "remote_exa": "$EXA", "allow_root": true, "provision_timeout_s": 60,
  "max_idle_s": 3, "drain_s": 10, "provision_delay_s": 0.3,
  "submit_min_interval_s": 0, "reconcile_s": 1, "output_dir": "$T/prov",
  "exclude_node_s": 0,
  "profiles": [
   {"name": "cpu1", "cpus": 1, "ram_mb": 500,
    "sbatch": ["--account=research", "--partition=debug", "--time=5"],
    "walltime_s": 300}]}]}
EOF

"$EXA" serve --listen 127.0.0.1:0 --interval 3600 \
    --worker-listen "127.0.0.1:$PORT" >"$T/serve.log" 2>&1 &
SERVE_PID=$!
if ! wait_for 30 grep -q "worker API on port" "$T/serve.log"; then
    ok "exa serve starts (its log follows)" false
    diag "$(cat "$T/serve.log")"
    done_testing
fi

# attempt 1 sleeps long enough to be killed; attempt 2 finishes at once
run_exa task submit --timeout 120 -- sh -c \
    'echo "$$ $EXA_TASK_ATTEMPT" >> '"$T"'/marker; [ "$EXA_TASK_ATTEMPT" = 1 ] && sleep 20; exit 0'
TK=$OUT
wait_for 60 test -s "$T/marker"
is "$?" 0 "a provisioned worker runs attempt 1"
is "$(sql "select count(*) from provision_requests")" 1 "one sbatch so far"
WID=$(sql "select worker_id from task_attempts where task_id = $TK and attempt = 1")
WJOB=$(sql "select slurm_job_id from workers where id = '$WID'")
like "$WJOB" '^[0-9]+$' "the worker row names its Slurm job"
is "$(tb_slurm testa squeue -h -j "$WJOB" -o %T 2>/dev/null)" RUNNING "the worker's job is RUNNING"
tpid=$(cut -d' ' -f1 "$T/marker")
# the job's batch process is the worker itself (the script ends in exec)
wpid=$(pgrep -f -- "worker --url .* --worker-id $WID" | head -n 1)
like "$wpid" '^[0-9]+$' "the worker process of job $WJOB is found"
kill -9 "$wpid"
wait_for 2 sh -c "! kill -0 $tpid 2>/dev/null"
is "$?" 0 "within 2 s of kill -9 of the worker its task is gone (the shim's death signal)"
wait_for 20 sh -c "s=\$(SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sacct -X -P -n -j $WJOB -o State | head -n 1); [ -n \"\$s\" ] && [ \"\$s\" != RUNNING ] && [ \"\$s\" != PENDING ]"
is "$?" 0 "the killed worker's job ends ($(sacct_state "$WJOB"))"

wait_for 90 sh -c "sqlite3 '$DB' \"select state from tasks where id = $TK\" | grep -q done"
is "$?" 0 "after the TTL attempt 2 runs on a newly provisioned worker and completes"
is "$(sql "select count(*) from provision_requests")" 2 "exactly one more sbatch"
run_exa --json task attempts "$TK"
json_ok "attempt 1 lost (dead), attempt 2 ok on another worker" --arg w "$WID" \
    '(.attempts | length) == 2 and .attempts[0].outcome == "lost" and .attempts[0].cause == "dead" and .attempts[1].outcome == "ok" and .attempts[1].worker != $w'
W2=$(sql "select worker_id from task_attempts where task_id = $TK and attempt = 2")
J2=$(sql "select slurm_job_id from workers where id = '$W2'")
ok "attempt 2's worker is another Slurm job ($J2, not $WJOB)" test -n "$J2" -a "$J2" != "$WJOB"
is "$(sql "select count(*) from task_results where task_id = $TK")" 1 "one result"
is "$(sql "select done_attempt from tasks where id = $TK")" 2 "the recorded result is attempt 2's"
is "$(wc -l <"$T/marker")" 2 "the marker shows two runs (at-least-once, on purpose)"
is "$(sql "select count(*) from worker_events where worker_id = '$WID' and kind = 'worker_lost'")" 1 \
    "the killed worker is recorded worker_lost"
wait_for 30 sh -c "[ \"\$(SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sacct -X -P -n -j $J2 -o State | head -n 1)\" = COMPLETED ]"
is "$?" 0 "the second worker exits idle and its job is COMPLETED"
kill -TERM "$SERVE_PID"
wait_pid "$SERVE_PID"
is "$?" 0 "exa serve stops on SIGTERM"
SERVE_PID=

done_testing
