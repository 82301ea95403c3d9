#!/bin/bash
# The Slurm provisioner on the real testbed (shared/WORKERS.md §13): `exa
# serve --worker-listen` with provisioners.json naming cluster testa (an
# approved fleet entry, reached through the gate over ssh); workers are
# batch jobs whose payload is `exa worker` dialling 127.0.0.1.
#   T1  happy path: one sbatch, the job named exa-<eid>-cpu1-..., attach,
#       the task's result and artifact, idle exit, sacct COMPLETED 0:0,
#       events provisioned -> attached -> exited(idle);
#   T2  smallest fit: gpus=1 picks gpu1, cpus=2 picks cpu4, gpus=8 asks
#       for nothing (no_profile_fits);
#   T3  20 queued tasks make exactly one request for their profile;
#   T4  a job that stays PENDING past provision_timeout_s is scancel'ed
#       (sacct CANCELLED, reason timeout);
#   T5  a job that fails fast is reported within a reconcile tick with its
#       output ("boom") and FAILED 3:0; three in a row open the breaker,
#       and `exa provision resume` closes it (black-hole node exclusion
#       is off here, "exclude_node_s": 0: testa has one node, and its
#       exclusion after two failures is t0965's);
#   T13a a job carrying our prefix and no row is cancelled; another name
#       is not;
#   T12 SIGTERM of exa serve cancels the outstanding request;
#   T14 a failing squeue changes nothing, the next good tick recovers;
#   T12b SIGTERM of exa serve leaves an attached worker running, and
#        `provision shutdown --drain` ends it COMPLETED;
#   T13b exa serve killed between sbatch and the row (crash_after_sbatch):
#        the restart adopts the job by name, exactly one job.
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
OTHER=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    sqlite3 "$DB" "SELECT job_id FROM provision_requests WHERE job_id IS NOT NULL" 2>/dev/null |
        while read -r id; do tb_slurm testa scancel "$id" >/dev/null 2>&1; done
    [ -n "$OTHER" ] && tb_slurm testa scancel "$OTHER" >/dev/null 2>&1
    wait 2>/dev/null
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
sql() { sqlite3 "$DB" "$@"; }
sacct_of() { tb_slurm testa sacct -X -P -n -j "$1" -o "$2" | head -n 1; }

"$EXA" -y hpc connect "$H" --name testa --user "$U" --key "$KEY" \
    --port "$TESTBED_SSH_PORT_TESTA" --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testa >/dev/null 2>&1
is "$("$EXA" --json hpc clusters | jq -r '.[] | select(.name == "testa") | .state')" \
    ACTIVE "testa is connected and approved"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ACC='"--account=research", "--partition=debug", "--time=5"'
cat >"$EXAMLOPS_PROVISIONERS" <<EOF
{"provisioners": [
 {"name": "testa", "cluster": "testa", "engine_url": "http://127.0.0.1:$PORT",
  "remote_exa": "$EXA", "allow_root": true, "provision_timeout_s": 60,
  "max_idle_s": 3, "drain_s": 10, "provision_delay_s": 0.3,
  "submit_min_interval_s": 0, "reconcile_s": 1, "output_dir": "$T/prov",
  "exclude_node_s": 0,
  "profiles": [
   {"name": "cpu1", "cpus": 1, "ram_mb": 500, "sbatch": [$ACC], "walltime_s": 300},
   {"name": "cpu4", "cpus": 4, "ram_mb": 500, "sbatch": [$ACC], "walltime_s": 300},
   {"name": "gpu1", "cpus": 1, "gpus": 1, "ram_mb": 500,
    "sbatch": [$ACC, "--gres=gpu:a100:1"], "walltime_s": 300},
   {"name": "bad", "cpus": 1, "ram_mb": 600, "labels": ["bad"], "sbatch": [$ACC],
    "prerun": ["echo boom >&2", "exit 3"], "walltime_s": 300}]},
 {"name": "slow", "cluster": "testa", "engine_url": "http://127.0.0.1:$PORT",
  "remote_exa": "$EXA", "allow_root": true, "provision_timeout_s": 4,
  "provision_delay_s": 0.3, "submit_min_interval_s": 0, "reconcile_s": 1,
  "output_dir": "$T/prov",
  "profiles": [
   {"name": "held", "cpus": 1, "ram_mb": 700, "labels": ["held"],
    "sbatch": [$ACC, "--begin=now+1hour"], "walltime_s": 300}]}]}
EOF

# start_serve: exa serve on the configured worker port; a serve that is
# not up within 30 s (a loaded machine) fails the test at once, with its log
start_serve() {
    "$EXA" serve --listen 127.0.0.1:0 --interval 3600 \
        --worker-listen "127.0.0.1:$PORT" >"$T/serve.log" 2>&1 &
    SERVE_PID=$!
    if ! wait_for 30 grep -q "worker API on port" "$T/serve.log"; then
        ok "exa serve starts (its log follows)" false
        diag "$(cat "$T/serve.log")"
        done_testing
    fi
}
start_serve
ok "exa serve runs the worker listener on the configured port" grep -q "worker API on port $PORT" "$T/serve.log"
EID=$(sed -n 's/.*(engine \([0-9a-f]*\)).*/\1/p' "$T/serve.log")

run_exa --json provision status
json_ok "provision status lists the profiles" '[.provisioners[].profiles[].name] == ["cpu1","cpu4","gpu1","bad","held"]'

# ---- T1: happy path
run_exa task submit --timeout 60 --artifact out.txt -- sh -c 'printf t1 > out.txt; hostname'
T1=$OUT
wait_for 60 sh -c "sqlite3 '$DB' \"select state from tasks where id = $T1\" | grep -q done"
is "$?" 0 "the task is done on a provisioned worker"
is "$(sql "select count(*) from provision_requests")" 1 "exactly one sbatch"
JOB=$(sql "select job_id from provision_requests where profile = 'cpu1'")
NAME=$(sql "select job_name from provision_requests where profile = 'cpu1'")
like "$NAME" "^exa-$EID-cpu1-[0-9a-f]{8}$" "the job is named exa-<engine id>-cpu1-<request>"
is "$(sql "select state from provision_requests where profile = 'cpu1'")" attached "the request is attached"
run_exa --json task show "$T1"
json_ok "the result carries the artifact's sha256" --arg h "$(printf t1 | sha256sum | cut -d' ' -f1)" \
    '.result.artifacts[0].sha256 == $h and (.result.stdout_tail | length) > 1'
WID=$(sql "select worker_id from provision_requests where profile = 'cpu1'")
is "$(sql "select slurm_job_id from workers where id = '$WID'")" "$JOB" "the worker row names its Slurm job"
wait_for 30 sh -c "[ \"\$(SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sacct -X -P -n -j $JOB -o State | head -n 1)\" = COMPLETED ]"
is "$?" 0 "the worker exits after max_idle and sacct says COMPLETED"
is "$(sacct_of "$JOB" ExitCode)" "0:0" "with exit 0:0"
is "$(sql "select group_concat(kind, ' ') from (select kind from worker_events where worker_id = '$WID' and kind like 'worker_%' order by id)")" \
    "worker_provisioned worker_attached worker_exited" "events: provisioned, attached, exited"
is "$(sql "select json_extract(detail, '$.reason') from worker_events where worker_id = '$WID' and kind = 'worker_exited'")" \
    idle "the exit reason is idle"

# ---- T2: smallest fit
run_exa task submit --gpus 8 --timeout 60 -- true
T8G=$OUT
run_exa task submit --gpus 1 --timeout 60 -- true
TG=$OUT
run_exa task submit --cpus 2 --timeout 60 -- true
TC=$OUT
wait_for 60 sh -c "[ \$(sqlite3 '$DB' \"select count(*) from tasks where id in ($TG, $TC) and state = 'done'\") = 2 ]"
is "$?" 0 "the gpus=1 and cpus=2 tasks are done"
is "$(sql "select w.profile from tasks t join task_attempts a on a.task_id = t.id join workers w on w.id = a.worker_id where t.id = $TG")" \
    gpu1 "gpus=1 ran on profile gpu1"
is "$(sql "select w.profile from tasks t join task_attempts a on a.task_id = t.id join workers w on w.id = a.worker_id where t.id = $TC")" \
    cpu4 "cpus=2 ran on profile cpu4"
is "$(sql "select state || ' ' || reason from tasks where id = $T8G")" "queued no_profile_fits" \
    "gpus=8 stays queued with reason no_profile_fits"
is "$(sql "select count(*) from provision_requests")" 3 "and asked for nothing"
run_exa task cancel "$T8G"

# ---- T3: one outstanding request per profile
wait_for 30 sh -c "[ \$(sqlite3 '$DB' \"select count(*) from workers where state in ('attached', 'draining')\") = 0 ]"
before=$(sql "select count(*) from provision_requests where profile = 'cpu1'")
run_exa task submit --count 20 --timeout 60 -- true
wait_for 90 sh -c "[ \$(sqlite3 '$DB' \"select count(*) from tasks where state = 'done'\") -ge 23 ]"
is "$?" 0 "20 queued tasks are done"
is "$(($(sql "select count(*) from provision_requests where profile = 'cpu1'") - before))" 1 \
    "with exactly one more request for cpu1"

# ---- T13a: orphans
ORPH=$(tb_slurm testa sbatch --parsable --hold -A research -p debug -t 1 \
    -J "exa-$EID-x-deadbeef" --wrap 'sleep 60' 2>/dev/null)
OTHER=$(tb_slurm testa sbatch --parsable --hold -A research -p debug -t 1 \
    -J "other-$EID-x" --wrap 'sleep 60' 2>/dev/null)
wait_for 10 sh -c "SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sacct -X -P -n -j $ORPH -o State | head -n 1 | grep -q '^CANCELLED'"
is "$?" 0 "a job with our prefix and no request row is cancelled"
is "$(sql "select count(*) from worker_events where kind = 'worker_orphan_cancelled' and json_extract(detail, '$.job') = '$ORPH'")" \
    1 "as worker_orphan_cancelled"
is "$(tb_slurm testa squeue -h -j "$OTHER" -o %T 2>/dev/null)" PENDING "a job of another name is left alone"
tb_slurm testa scancel "$OTHER" >/dev/null 2>&1

# ---- T4: provision timeout
run_exa task submit --label held --timeout 60 -- true
TH=$OUT
wait_for 20 sh -c "sqlite3 '$DB' \"select state from provision_requests where profile = 'held'\" | grep -q timeout"
is "$?" 0 "a request PENDING past provision_timeout_s times out"
HJOB=$(sql "select job_id from provision_requests where profile = 'held' and state = 'timeout' limit 1")
wait_for 10 sh -c "SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sacct -X -P -n -j $HJOB -o State | head -n 1 | grep -q '^CANCELLED'"
is "$?" 0 "and is scancel'ed (sacct CANCELLED)"
is "$(sql "select json_extract(detail, '$.reason') from worker_events where kind = 'worker_provision_failed' and json_extract(detail, '$.job') = '$HJOB'")" \
    timeout "the event says reason timeout"

# ---- T12: SIGTERM of exa serve cancels the outstanding request
wait_for 10 sh -c "sqlite3 '$DB' \"select state from provision_requests where profile = 'held' and state = 'submitted'\" | grep -q submitted"
is "$?" 0 "the held task asks again on a later tick"
LIVE=$(sql "select job_id from provision_requests where profile = 'held' and state = 'submitted'")
kill -TERM "$SERVE_PID"
wait_pid "$SERVE_PID"
SERVE_PID=
left=$(tb_slurm testa squeue -h -o %j 2>/dev/null | grep -c "^exa-$EID-")
is "$left" 0 "after SIGTERM no exa-<eid>- job is left in the queue"
is "$(sql "select state from provision_requests where job_id = '$LIVE'")" cancelled "the request is cancelled"
run_exa task cancel "$TH"

# ---- T5: a job that fails fast, three times: the breaker
start_serve
run_exa task submit --label bad --timeout 60 -- true
TB=$OUT
wait_for 40 sh -c "[ \$(sqlite3 '$DB' \"select count(*) from provision_requests where profile = 'bad' and reason = 'ended_before_attach'\") -ge 3 ]"
is "$?" 0 "three fast failures are each reported ended_before_attach"
detail=$(sql "select detail from provision_requests where profile = 'bad' order by created_at limit 1")
like "$detail" "FAILED 3:0" "the detail holds sacct's FAILED 3:0"
like "$detail" "boom" "and the tail of the job's output"
sleep 3
is "$(sql "select count(*) from provision_requests where profile = 'bad'")" 3 "the breaker stops a fourth"
run_exa --json provision status
json_ok "provision status shows the breaker open" '.provisioners[0].profiles[] | select(.name == "bad") | .breaker_open == true'
is "$(sql "select count(*) from worker_events where kind = 'worker_provision_paused' and profile = 'bad'")" 1 "worker_provision_paused once"
run_exa provision resume bad
is "$RC" 0 "provision resume closes it"
wait_for 20 sh -c "[ \$(sqlite3 '$DB' \"select count(*) from provision_requests where profile = 'bad'\") -ge 4 ]"
is "$?" 0 "and the profile asks again"
run_exa task cancel "$TB"
run_exa provision resume nosuch
is "$RC" 1 "resume of an unknown profile fails"

# ---- T14: a failing squeue changes nothing; the next good tick recovers.
# A fake ssh first on PATH answers the remote squeue with exit 1 while
# $T/squeue.fail exists (fault injection, as in t0302).
kill -TERM "$SERVE_PID"
wait_pid "$SERVE_PID"
SERVE_PID=
mkdir -p "$T/fakessh"
{
    echo '#!/bin/bash'
    echo 'args=("$@")'
    echo "if [ -e '$T/squeue.fail' ]; then case \"\${args[-1]}\" in squeue*) args[-1]=\"echo 'squeue: error: Unable to contact slurm controller (connect failure)' >&2; exit 1\" ;; esac; fi"
    echo "exec $(command -v ssh) \"\${args[@]}\""
} >"$T/fakessh/ssh"
chmod +x "$T/fakessh/ssh"
touch "$T/squeue.fail"
PATH="$T/fakessh:$PATH" start_serve
MPORT=$(sed -n 's/.*console on port \([0-9]*\).*/\1/p' "$T/serve.log")
run_exa task submit --label held --timeout 60 -- true
TH2=$OUT
wait_for 10 sh -c "sqlite3 '$DB' \"select state from provision_requests where profile = 'held' and state = 'submitted'\" | grep -q submitted"
is "$?" 0 "T14: sbatch still works while squeue fails"
HJ2=$(sql "select job_id from provision_requests where profile = 'held' and state = 'submitted'")
sleep 7 # past provision_timeout_s (4 s), several reconcile ticks (1 s)
is "$(sql "select state from provision_requests where job_id = '$HJ2'")" submitted \
    "T14: with squeue failing, the request past its timeout is neither cancelled nor failed"
is "$(tb_slurm testa squeue -h -j "$HJ2" -o %T 2>/dev/null)" PENDING "and its job is still queued"
errs=$(curl -s "http://127.0.0.1:$MPORT/metrics" | sed -n 's/^exa_scheduler_command_errors_total{.*command="squeue".*} //p' | head -n 1)
ok "T14: the squeue error counter rises (got '${errs:-none}')" test "${errs:-0}" -ge 3
rm -f "$T/squeue.fail"
wait_for 10 sh -c "sqlite3 '$DB' \"select state from provision_requests where job_id = '$HJ2'\" | grep -q timeout"
is "$?" 0 "T14: the next good tick recovers and times the request out"
run_exa task cancel "$TH2"

# ---- T12b: SIGTERM of exa serve leaves an attached worker alone, and
# `exa provision shutdown --drain` ends it COMPLETED (exit reason drained)
run_exa task submit --timeout 60 -- sleep 8
TD=$OUT
wait_for 40 sh -c "sqlite3 '$DB' \"select state from tasks where id = $TD\" | grep -q leased"
is "$?" 0 "T12b: a provisioned worker runs the task"
WID=$(sql "select worker_id from task_attempts where task_id = $TD order by attempt desc limit 1")
WJOB=$(sql "select slurm_job_id from workers where id = '$WID'")
kill -TERM "$SERVE_PID"
wait_pid "$SERVE_PID"
SERVE_PID=
is "$(tb_slurm testa squeue -h -j "$WJOB" -o %T 2>/dev/null)" RUNNING \
    "T12b: after SIGTERM of exa serve the attached worker's job still runs"
start_serve
run_exa provision shutdown --drain
is "$RC" 0 "T12b: provision shutdown --drain"
wait_for 30 sh -c "SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sacct -X -P -n -j $WJOB -o State,ExitCode | head -n 1 | grep -q '^COMPLETED|0:0'"
is "$?" 0 "T12b: the worker finishes its task, drains and its job ends COMPLETED 0:0"
is "$(sql "select state from tasks where id = $TD")" done "T12b: the task it was running is done"
is "$(sql "select exit_reason from workers where id = '$WID'")" drained "T12b: exit reason drained"

# ---- T13b: the crash window. exa serve dies right after sbatch, before
# the row says submitted; the restart adopts the job by name: one job
kill -TERM "$SERVE_PID"
wait_pid "$SERVE_PID"
EXAMLOPS_WORKER_FAULT=crash_after_sbatch start_serve
run_exa task submit --label held --timeout 60 -- true
TC13=$OUT
wait_pid "$SERVE_PID" 30
is "$?" 137 "T13b: the fault kills exa serve right after sbatch"
SERVE_PID=
REQ=$(sql "select id from provision_requests where profile = 'held' order by created_at desc limit 1")
JNAME=$(sql "select job_name from provision_requests where id = '$REQ'")
is "$(sql "select state from provision_requests where id = '$REQ'")" intent \
    "T13b: the request is left as an intent row"
is "$(tb_slurm testa squeue -h -n "$JNAME" -o %i 2>/dev/null | wc -l)" 1 "T13b: its job is in the queue"
start_serve
wait_for 10 sh -c "sqlite3 '$DB' \"select state from provision_requests where id = '$REQ'\" | grep -Eq 'submitted|timeout|cancelled'"
is "$?" 0 "T13b: after the restart the intent row adopts the job by name"
jobs13=$(tb_slurm testa squeue -h -t all -n "$JNAME" -o %i 2>/dev/null)
is "$(sql "select job_id from provision_requests where id = '$REQ'")" "$jobs13" \
    "T13b: with the id of the one job Slurm has under that name"
run_exa task cancel "$TC13"

done_testing
