#!/bin/bash
# An expired join token on the real testbed (shared/WORKERS.md §5.1, §13
# T10a): the token expires at submit + provision_timeout_s + the clock
# allowance (EXAMLOPS_WORKER_JOIN_SKEW_S, 120 s by default, 1 s here), so a
# worker whose job starts too late - prerun `sleep 6` against a 2 s
# provision_timeout, with the reconcile that would scancel it 30 s away -
# presents an expired token: register gets 401 expired, a token_refused
# event {reason: expired} is written, no session or worker row exists,
# the task stays queued, and the job ends FAILED with the worker's exit 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed.sh"
require_testbed
exa_test_env

H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
export EXAMLOPS_WORKER_HEARTBEAT_S=1 EXAMLOPS_WORKER_LEASE_TTL_S=3 \
    EXAMLOPS_WORKER_LONGPOLL_S=2 EXAMLOPS_PROVISION_TICK_S=0.5 \
    EXAMLOPS_WORKER_JOIN_SKEW_S=1
export EXAMLOPS_PROVISIONERS=$T/provisioners.json
DB=$EXAMLOPS_DB
SERVE_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    sqlite3 "$DB" "SELECT job_id FROM provision_requests WHERE job_id IS NOT NULL" 2>/dev/null |
        while read -r id; do tb_slurm testa scancel "$id" >/dev/null 2>&1; done
    [ -n "$SERVE_PID" ] && wait_pid "$SERVE_PID" 5 2>/dev/null
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
sql() { sqlite3 "$DB" "$@"; }

"$EXA" -y hpc connect "$H" --name testa --user "$U" --key "$KEY" \
    --port "$TESTBED_SSH_PORT_TESTA" --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testa >/dev/null 2>&1
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$EXAMLOPS_PROVISIONERS" <<JSON
{"provisioners": [
 {"name": "testa", "cluster": "testa", "engine_url": "http://127.0.0.1:$PORT",
  "remote_exa": "$EXA", "allow_root": true, "provision_timeout_s": 2,
  "max_idle_s": 3, "drain_s": 10, "provision_delay_s": 0.3,
  "submit_min_interval_s": 0, "reconcile_s": 30, "output_dir": "$T/prov",
  "profiles": [
   {"name": "late", "cpus": 1, "ram_mb": 500,
    "sbatch": ["--account=research", "--partition=debug", "--time=5"],
    "prerun": ["sleep 6"], "walltime_s": 300}]}]}
JSON
"$EXA" serve --listen 127.0.0.1:0 --interval 3600 --worker-listen "127.0.0.1:$PORT" \
    >"$T/serve.log" 2>&1 &
SERVE_PID=$!
if ! wait_for 30 grep -q "worker API on port" "$T/serve.log"; then
    ok "exa serve starts (its log follows)" false
    diag "$(cat "$T/serve.log")"
    done_testing
fi

run_exa task submit --timeout 60 -- true
TASK=$OUT
wait_for 30 sh -c "sqlite3 '$DB' \"select count(*) from worker_events where kind = 'token_refused'\" | grep -q '^1$'"
is "$?" 0 "the late worker's registration is refused (a token_refused event)"
is "$(sql "select json_extract(detail, '$.reason') from worker_events where kind = 'token_refused'")" \
    expired "as expired"
REQ=$(sql "select id from provision_requests limit 1")
JOB=$(sql "select job_id from provision_requests where id = '$REQ'")
WID=$(sql "select worker_id from provision_requests where id = '$REQ'")
ok "the request was submitted (job $JOB)" test -n "$JOB"
CREATED=$(sql "select created_at from provision_requests where id = '$REQ'")
is "$(sql "select count(*) from workers where id = '$WID'")" 0 "no session: no worker row for $WID"
is "$(sql "select count(*) from worker_events where kind = 'worker_attached'")" 0 "nothing attached"
is "$(sql "select state from tasks where id = $TASK")" queued "the task is still queued"
is "$(sql "select count(*) from task_attempts where task_id = $TASK")" 0 "with no attempt"
ok "the refusal came after the token's life (2 s + 1 s allowance)" \
    python3 -c "import sys; sys.exit(0 if $(sql "select max(ts) from worker_events where kind = 'token_refused'") - $CREATED > 3 else 1)"

# the worker exits 1 (refused), so does the batch job
wait_for 30 sh -c "! SLURM_CONF='$TESTBED_SLURM_CONF_TESTA' squeue -h -j '$JOB' 2>/dev/null | grep -q ."
wait_for 15 sh -c "SLURM_CONF='$TESTBED_SLURM_CONF_TESTA' sacct -X -n -P -j '$JOB' -o State 2>/dev/null | grep -q FAILED"
is "$(SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sacct -X -n -P -j "$JOB" -o State,ExitCode 2>/dev/null | head -n 1)" \
    "FAILED|1:0" "the job ends FAILED with the worker's exit 1"
ok "its output names the refusal" grep -q 'expired' "$T/prov/$JOB.out"
diag "$(tail -n 3 "$T/prov/$JOB.out" 2>/dev/null)"
ok "the token is in none of serve's log" bash -c "! grep -q 'exa1\\.' '$T/serve.log'"

run_exa task cancel "$TASK"
done_testing
