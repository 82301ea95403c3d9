#!/bin/bash
# Join-token hygiene of a provisioned worker on the real testbed
# (shared/WORKERS.md §5.3, §13 T11 and T10b): while the worker's Slurm job
# runs, the token is in slurmd's spooled batch script only (owner-only
# mode) - in no process's argv (/proc/*/cmdline), not in the worker's
# environment (/proc/PID/environ), not in exa serve's log, the job's
# output file, /metrics or the events table; read back from the spool and
# presented again, it is refused as replayed (401, a token_refused event).
# T11's variant: testb keeps batch scripts in accounting
# (AccountingStoreFlags=job_script, tests/testbed/up.sh), so anyone who may
# run `sacct -B` on the worker's job reads the token there; read back that
# way it is refused as replayed too (single use, burned at register).
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
        while read -r id; do
            tb_slurm testa scancel "$id" >/dev/null 2>&1
            tb_slurm testb scancel "$id" >/dev/null 2>&1
        done
    [ -n "$SERVE_PID" ] && wait_pid "$SERVE_PID" 5 2>/dev/null
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
sql() { sqlite3 "$DB" "$@"; }

"$EXA" -y hpc connect "$H" --name testa --user "$U" --key "$KEY" \
    --port "$TESTBED_SSH_PORT_TESTA" --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testa >/dev/null 2>&1
"$EXA" -y hpc connect "$H" --name testb --user "$U" --key "$KEY" \
    --port "$TESTBED_SSH_PORT_TESTB" --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testb >/dev/null 2>&1
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$EXAMLOPS_PROVISIONERS" <<JSON
{"provisioners": [
 {"name": "testa", "cluster": "testa", "engine_url": "http://127.0.0.1:$PORT",
  "remote_exa": "$EXA", "allow_root": true, "provision_timeout_s": 60,
  "max_idle_s": 3, "drain_s": 10, "provision_delay_s": 0.3,
  "submit_min_interval_s": 0, "reconcile_s": 1, "output_dir": "$T/prov",
  "profiles": [
   {"name": "cpu1", "cpus": 1, "ram_mb": 500,
    "sbatch": ["--account=research", "--partition=debug", "--time=5"],
    "walltime_s": 300}]},
 {"name": "testb", "cluster": "testb", "engine_url": "http://127.0.0.1:$PORT",
  "remote_exa": "$EXA", "allow_root": true, "provision_timeout_s": 60,
  "max_idle_s": 3, "drain_s": 10, "provision_delay_s": 0.3,
  "submit_min_interval_s": 0, "reconcile_s": 1, "output_dir": "$T/provb",
  "profiles": [
   {"name": "sb1", "cpus": 1, "ram_mb": 600,
    "sbatch": ["--account=research", "--partition=debug", "--time=5"],
    "walltime_s": 300}]}]}
JSON
MTOKEN=t0964-metrics-token-0123456789
"$EXA" serve --listen 127.0.0.1:0 --interval 3600 --worker-listen "127.0.0.1:$PORT" \
    >"$T/serve.log" 2>&1 &
SERVE_PID=$!
if ! wait_for 30 grep -q "worker API on port" "$T/serve.log"; then
    ok "exa serve starts (its log follows)" false
    diag "$(cat "$T/serve.log")"
    done_testing
fi
MPORT=$(sed -n 's/.*console on port \([0-9]*\).*/\1/p' "$T/serve.log")

# a task that keeps the worker's job running while we look
run_exa task submit --timeout 120 -- sleep 20
TASK=$OUT
wait_for 60 sh -c "sqlite3 '$DB' \"select state from tasks where id = $TASK\" | grep -q leased"
is "$?" 0 "the task is leased by a provisioned worker"
JOB=$(sql "select job_id from provision_requests where job_id is not null limit 1")
WID=$(sql "select worker_id from provision_requests where job_id = '$JOB'")
WPID=$(sql "select pid from workers where id = '$WID'")
ok "the worker's process is alive on this host (pid $WPID)" kill -0 "$WPID"

# ---- the only copy: slurmd's spooled batch script, owner-only
SCRIPT=$TESTBED_ROOT/testa/spool/job$(printf %05d "$JOB")/slurm_script
ok "slurmd spooled the batch script ($SCRIPT)" test -f "$SCRIPT"
# the token goes into a 0600 pattern file, never on a command line
(umask 077 && grep -o 'exa1\.[A-Za-z0-9._-]*' "$SCRIPT" | head -n 1 >"$T/tok.pat")
ok "the spooled script holds the join token" test -s "$T/tok.pat"
mode=$(stat -c %a "$SCRIPT")
ok "the script is owner-only (mode $mode)" test $((8#$mode & 8#077)) -eq 0
dmode=$(stat -c %a "$(dirname "$SCRIPT")")
ok "its spool directory is closed to others (mode $dmode)" test $((8#$dmode & 8#007)) -eq 0

# ---- nowhere else
found=$(grep -F -l -f "$T/tok.pat" /proc/[0-9]*/cmdline 2>/dev/null | tr '\n' ' ')
is "$found" "" "no process's argv holds the token (/proc/*/cmdline)"
ok "the worker's environment does not (/proc/$WPID/environ)" \
    bash -c "! grep -F -q -f '$T/tok.pat' /proc/$WPID/environ"
ok "exa serve's log does not" bash -c "! grep -F -q -f '$T/tok.pat' '$T/serve.log'"
ok "the job's output files do not ($(ls "$T/prov" 2>/dev/null | wc -l) files)" \
    bash -c "! grep -r -F -q -f '$T/tok.pat' '$T/prov'"
curl -s "http://127.0.0.1:$MPORT/metrics" >"$T/metrics.txt"
ok "/metrics answers" grep -q '^exa_worker_registrations_total' "$T/metrics.txt"
ok "/metrics does not" bash -c "! grep -F -q -f '$T/tok.pat' '$T/metrics.txt'"
sql "select kind, ifnull(detail, '') from worker_events" >"$T/events.txt"
ok "the events table does not ($(wc -l <"$T/events.txt") events)" \
    bash -c "! grep -F -q -f '$T/tok.pat' '$T/events.txt'"
sql .dump >"$T/dump.sql"
ok "nor does anything else in platform.db" bash -c "! grep -F -q -f '$T/tok.pat' '$T/dump.sql'"

# present_token PATFILE WORKER NONCE BASE: register as WORKER with the token
# in PATFILE (the request in BASE.json, mode 0600, never on a command line);
# prints the HTTP status, the reply in BASE.out
present_token() {
    (umask 077 && jq -n --rawfile t "$1" --arg w "$2" --arg n "$3" \
        '{protocol: 1, worker_id: $w, join_token: ($t | rtrimstr("\n")), register_nonce: $n, capacity: 1, resources: {cpus: 1, gpus: 0, ram_mb: 100}}' \
        >"$4.json")
    curl -s -o "$4.out" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary @"$4.json" "http://127.0.0.1:$PORT/v1/workers/register"
}

# ---- read back and presented again: replayed
refused0=$(sql "select count(*) from worker_events where kind = 'token_refused'")
code=$(present_token "$T/tok.pat" "$WID" t0964-replay-0123456789abcdef "$T/replay")
is "$code" 401 "the spooled token presented again: 401"
is "$(jq -r .error.reason "$T/replay.out")" replayed "refused as replayed"
is "$(sql "select count(*) from worker_events where kind = 'token_refused'")" $((refused0 + 1)) \
    "one token_refused event"
is "$(sql "select json_extract(detail, '$.reason') from worker_events where kind = 'token_refused' order by id desc limit 1")" \
    replayed "whose reason is replayed"
ok "the refusal's event holds no token either" \
    bash -c "! sqlite3 '$DB' 'select detail from worker_events' | grep -F -q -f '$T/tok.pat'"

# ---- T11's variant: the token stored in accounting (testb), sacct -B
# sb1 is larger than cpu1, so only a task asking for it by name goes there
run_exa task submit --timeout 120 --label sb1 -- sleep 20
TASKB=$OUT
wait_for 60 sh -c "sqlite3 '$DB' \"select state from tasks where id = $TASKB\" | grep -q leased"
is "$?" 0 "a task labelled with testb's profile name is leased"
JOBB=$(sql "select job_id from provision_requests where provisioner = 'testb' and job_id is not null limit 1")
WIDB=$(sql "select worker_id from provision_requests where job_id = '$JOBB'")
is "$(sql "select w.cluster || '/' || w.profile from task_attempts a join workers w on w.id = a.worker_id where a.task_id = $TASKB")" \
    testb/sb1 "by the worker provisioned on testb for profile sb1"
# slurmdbd gets the script with the job's start record
wait_for 30 sh -c "SLURM_CONF='$TESTBED_SLURM_CONF_TESTB' sacct -B -j '$JOBB' 2>/dev/null | grep -q 'exa1\\.'"
SLURM_CONF=$TESTBED_SLURM_CONF_TESTB sacct -B -j "$JOBB" 2>/dev/null |
    (umask 077 && grep -o 'exa1\.[A-Za-z0-9._-]*' | head -n 1 >"$T/tokb.pat")
ok "sacct -B on testb shows the job's join token" test -s "$T/tokb.pat"
code=$(present_token "$T/tokb.pat" "$WIDB" t0964-sacct-B-0123456789abcdef "$T/replayb")
is "$code" 401 "the token read back with sacct -B: 401"
is "$(jq -r .error.reason "$T/replayb.out")" replayed "refused as replayed"
ok "nor is it in platform.db" bash -c "! sqlite3 '$DB' .dump | grep -F -q -f '$T/tokb.pat'"

run_exa task cancel "$TASK"
run_exa task cancel "$TASKB"
done_testing
