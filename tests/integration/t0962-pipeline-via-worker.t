#!/bin/bash
# `exa pipeline run --cluster testa --via worker` on the real testbed: the
# training payload is a task of the engine of `exa serve --worker-listen`,
# pinned to cluster testa's workers; the provisioner (provisioners.json)
# starts the worker as a Slurm job of testa; the artifacts come back as
# task artifacts and the version is registered with the task's lineage.
#   V1  the run: version 1 with lineage cluster, run id, task id, attempt,
#       worker id and the worker's Slurm job (a real sbatch job, sacct
#       COMPLETED once the worker leaves on max_idle); the four artifacts'
#       sha256 as the engine recorded them match the version directory's
#       files and SHA256SUMS; the task's argv is the batch payload's;
#   V2  the same command again: already registered, exit 0, no new task;
#       a queued task of the run is adopted, not queued twice;
#   V3  pinning: a task of the run is never leased by a worker of no
#       cluster (an unpinned worker started by hand stays idle); `exa task
#       submit --cluster nowhere` stays queued, no_profile_fits;
#   V4  a PENDING cluster: exit 6 and no task row; bad --via: exit 2;
#       --via worker without --cluster: exit 2; --dry-run queues nothing;
#   V5  a failing payload (a dataset path that does not exist): exit 1,
#       no version, the tail of the task's stderr (naming the path);
#   V6  no engine running: exit 1 after EXAMLOPS_ENGINE_ABSENT_S, the
#       task left queued; `exa task submit` warns;
#   V7  two reruns of one run at once queue one task, not two; a cluster
#       rejected while its task runs: the task ends done, yet nothing is
#       registered, exit 6 naming the cluster.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed.sh"
require_testbed
exa_test_env

H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
export EXAMLOPS_WORKER_HEARTBEAT_S=1 EXAMLOPS_WORKER_LEASE_TTL_S=3 \
    EXAMLOPS_WORKER_LONGPOLL_S=2 EXAMLOPS_PROVISION_TICK_S=0.5
export EXAMLOPS_PROVISIONERS=$T/provisioners.json
export EXAMLOPS_HPC_REMOTE_EXA=$EXA EXAMLOPS_SLURM_MAX_WAIT_S=90 \
    EXAMLOPS_HPC_POLL_INTERVAL=1
unset EXAMLOPS_HPC_PARTITION EXAMLOPS_HPC_ACCOUNT EXAMLOPS_HPC_QOS
DB=$EXAMLOPS_DB
DATA=$(cd "$(dirname "$0")/../.." && pwd)/data/pm100-sample.csv
SERVE_PID=
HAND_PID=
stop() { # stop PID: SIGTERM, then SIGKILL after 5 s
    local n=50
    kill -TERM "$1" 2>/dev/null || return 0
    while [ $n -gt 0 ] && kill -0 "$1" 2>/dev/null; do
        sleep 0.1
        n=$((n - 1))
    done
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
cleanup() {
    [ -n "$HAND_PID" ] && stop "$HAND_PID"
    [ -n "$SERVE_PID" ] && stop "$SERVE_PID"
    sqlite3 "$DB" "SELECT job_id FROM provision_requests WHERE job_id IS NOT NULL" 2>/dev/null |
        while read -r id; do tb_slurm testa scancel "$id" >/dev/null 2>&1; done
    wait 2>/dev/null
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
sql() { sqlite3 "$DB" "$@"; }

# ---- V4 first: usage and the gate, before anything runs
run_exa pipeline run --cluster testa --via nosuch --dummy
is "$RC" 2 "a bad --via is a usage error"
like "$ERR" "batch.*worker" "naming the accepted values"
run_exa pipeline run --via worker --dummy
is "$RC" 2 "--via worker without --cluster is a usage error"
run_exa pipeline run --cluster testa --via worker --partition debug --dummy
is "$RC" 2 "--partition with --via worker is a usage error (the profile decides)"

"$EXA" -y hpc connect "$H" --name testa --user "$U" --key "$KEY" \
    --port "$TESTBED_SSH_PORT_TESTA" --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc connect "$H" --name testp --user "$U" --key "$KEY" \
    --port "$TESTBED_SSH_PORT_TESTA" --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testa >/dev/null 2>&1
is "$("$EXA" --json hpc clusters | jq -r '[.[] | select(.name == "testa" or .name == "testp") | .name + "=" + .state] | sort | join(" ")')" \
    "testa=ACTIVE testp=PENDING" "testa is ACTIVE, testp PENDING"

run_exa pipeline run --cluster testp --via worker --dummy --dataset-path "$DATA" --time 2
is "$RC" 6 "a PENDING cluster: exit 6"
is "$(sql "select count(*) from tasks")" 0 "and no task row"

run_exa --json pipeline run --cluster testa --via worker --dummy --dataset-path "$DATA" --time 2 --dry-run
is "$RC" 0 "--dry-run via worker"
json_ok "the dry run shows the task it would queue" --arg exa "$EXA" --arg d "$DATA" \
    '.via == "worker" and .task.argv == [$exa, "train", "--model", "JPCP", "--dataset", "PM100Dataset", "--dataset-path", $d, "--out=out", "--dummy"] and .task.outputs == ["SHA256SUMS", "model.json", "encoders.json", "metrics.json"] and .task.outputs_dir == "out" and .task.timeout_s == 120'
is "$(sql "select count(*) from tasks")" 0 "and queues nothing"

# ---- V6: no task engine runs on platform.db (no exa serve yet): the run
# shows it while it waits and gives up after EXAMLOPS_ENGINE_ABSENT_S,
# leaving its task queued for the same command to adopt
EXAMLOPS_ENGINE_ABSENT_S=2 run_exa pipeline run --cluster testa --via worker --dummy \
    --dataset-path "$DATA" --time 2 --run-id noengine
is "$RC" 1 "no engine: exit 1 after EXAMLOPS_ENGINE_ABSENT_S"
like "$ERR" "no task engine has run on '$DB' for 2 s \\(start 'exa serve --worker-listen HOST:PORT' on it\\); task [0-9]+ stays queued" \
    "one line naming the database and what to start"
is "$(sql "select state from tasks where run_id = 'noengine'")" queued "the task stays queued"
run_exa task submit -- /bin/true
like "$ERR" "warning: no task engine is running on '$DB'" "exa task submit warns that no engine runs"
NOENG_TASK=$OUT
"$EXA" -q task cancel "$(sql "select id from tasks where run_id = 'noengine'")" "$NOENG_TASK"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ACC='"--account=research", "--partition=debug", "--time=5"'
cat >"$EXAMLOPS_PROVISIONERS" <<JSON
{"provisioners": [
 {"name": "testa", "cluster": "testa", "engine_url": "http://127.0.0.1:$PORT",
  "remote_exa": "$EXA", "allow_root": true, "provision_timeout_s": 60,
  "max_idle_s": 3, "drain_s": 10, "provision_delay_s": 0.3,
  "submit_min_interval_s": 0, "reconcile_s": 1, "output_dir": "$T/prov",
  "profiles": [
   {"name": "cpu1", "cpus": 1, "ram_mb": 500, "sbatch": [$ACC], "walltime_s": 300}]}]}
JSON
"$EXA" serve --listen 127.0.0.1:0 --interval 3600 \
    --worker-listen "127.0.0.1:$PORT" >"$T/serve.log" 2>&1 &
SERVE_PID=$!
# as t0960/t0961's start_serve: up to 30 s, else fail at once with the log
wait_for 30 grep -q "worker API on port" "$T/serve.log"
if ! grep -q "worker API on port $PORT" "$T/serve.log"; then
    ok "exa serve runs the worker listener (its log follows)" false
    diag "$(cat "$T/serve.log")"
    done_testing
fi
ok "exa serve runs the worker listener" true

# ---- V3 setup: a hand-started worker of no cluster, idle beside the run
"$EXA" worker token --worker-id hand1 --ttl 600 >"$T/hand.tok" 2>/dev/null
"$EXA" worker --url "http://127.0.0.1:$PORT" --worker-id hand1 --join-token-stdin \
    --cpus 4 --max-idle 600 --allow-root <"$T/hand.tok" >"$T/hand.log" 2>&1 &
HAND_PID=$!
wait_for 10 sh -c "sqlite3 '$DB' \"select state from workers where id = 'hand1'\" | grep -q attached"
is "$?" 0 "an unpinned worker (no cluster in its token) is attached"

# ---- V1: the run
RUN=via-t0962
run_exa --json pipeline run --cluster testa --via worker --dummy \
    --dataset-path "$DATA" --time 2 --run-id "$RUN"
is "$RC" 0 "pipeline run --via worker exits 0"
[ "$RC" = 0 ] || diag "$ERR"
TASK=$(jq -r '.task.id' <<<"$OUT")
WID=$(jq -r '.task.worker_id' <<<"$OUT")
WJOB=$(jq -r '.task.worker_job_id' <<<"$OUT")
json_ok "version 1 via worker, task done" '.via == "worker" and .version == 1 and .task.state == "done" and .task.attempt == 1'
is "$(sql "select cluster || ' ' || run_id from tasks where id = $TASK")" "testa $RUN" "the task is pinned to testa and owned by the run"
run_exa --json task show "$TASK"
json_ok "exa task show names the pin, the run and the payload" --arg r "$RUN" --arg exa "$EXA" \
    '.cluster == "testa" and .run_id == $r and .argv[0:2] == [$exa, "train"] and .spec.outputs_dir == "out"'
is "$(sql "select worker_id from task_attempts where task_id = $TASK and outcome = 'ok'")" "$WID" "the winning attempt's worker is reported"
isnt "$WID" hand1 "the unpinned worker did not lease it"
is "$(sql "select cluster from workers where id = '$WID'")" testa "the worker that ran it is testa's"
is "$(sql "select slurm_job_id from workers where id = '$WID'")" "$WJOB" "its Slurm job id is the worker row's"
is "$(sql "select job_id from provision_requests where worker_id = '$WID'")" "$WJOB" "a job the provisioner submitted with sbatch"
run_exa --json models show JPCP --version 1
OUT=$(jq '.versions[0]' <<<"$OUT")
json_ok "the lineage names cluster, run, task, attempt, worker and Slurm job" \
    --arg r "$RUN" --argjson t "$TASK" --arg w "$WID" --arg j "$WJOB" \
    '.lineage.cluster == "testa" and .lineage.run_uuid == $r and .lineage.task_id == $t and .lineage.task_attempt == 1 and .lineage.worker_id == $w and .lineage.job_id == $j and .lineage.job_ref == null'
json_ok "and dataset and rows" '.dataset == "PM100Dataset" and .train_rows > 0 and .val_rows > 0'
VDIR=$(jq -r '.artifact_path' <<<"$OUT")
bad=0
for f in SHA256SUMS model.json encoders.json metrics.json; do
    want=$(sql "select sha256 from task_artifacts where task_id = $TASK and attempt = 1 and name = '$f'")
    got=$(sha256sum "$VDIR/$f" | cut -d' ' -f1)
    [ -n "$want" ] && [ "$want" = "$got" ] || { bad=1; diag "$f: engine $want, version $got"; }
done
is "$bad" 0 "the four artifacts' sha256 (engine) match the version's files"
ok "and the files match SHA256SUMS" sh -c "cd '$VDIR' && sha256sum -c --quiet SHA256SUMS"
is "$(sha256sum "$VDIR/SHA256SUMS" | cut -d' ' -f1)" "$(jq -r '.artifact_sha256' <<<"$OUT")" \
    "artifact_sha256 is the sha256 of SHA256SUMS"
wait_for 60 sh -c "[ \"\$(SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sacct -X -P -n -j $WJOB -o State | head -n 1)\" = COMPLETED ]"
is "$?" 0 "the worker's Slurm job ends COMPLETED (sacct) after max_idle" ||
    diag "sacct: $(tb_slurm testa sacct -X -P -n -j "$WJOB" -o State,ExitCode,Elapsed) squeue: $(tb_slurm testa squeue -h -j "$WJOB" -o %T 2>&1) worker: $(sql "select state || ' ' || ifnull(exit_reason, '') from workers where id = '$WID'")"

# ---- V2: the same command again
run_exa --json pipeline run --cluster testa --via worker --dummy \
    --dataset-path "$DATA" --time 2 --run-id "$RUN"
is "$RC" 0 "the same run again exits 0"
json_ok "reporting the registered version" --argjson t "$TASK" '.already_registered == true and .version == 1 and .task.id == $t'
is "$(sql "select count(*) from tasks where run_id = '$RUN'")" 1 "and queues no second task"

# a queued task of a run is adopted: queue one, interrupt the wait with
# a short deadline, run again
export EXAMLOPS_SLURM_MAX_WAIT_S=1
run_exa pipeline run --cluster testa --via worker --dummy --dataset-path "$DATA" --time 2 --run-id adopt1
is "$RC" 1 "a wait past its deadline fails (1) and leaves the task"
like "$ERR" "same command adopts it" "saying the same command adopts it"
export EXAMLOPS_SLURM_MAX_WAIT_S=90
run_exa --json pipeline run --cluster testa --via worker --dummy --dataset-path "$DATA" --time 2 --run-id adopt1
is "$RC" 0 "the rerun finishes the run"
json_ok "by adopting the task" '.adopted == true and .version == 2'
is "$(sql "select count(*) from tasks where run_id = 'adopt1'")" 1 "one task for the run"

# ---- V5: a failing payload
run_exa pipeline run --cluster testa --via worker --dummy --dataset-path /nonexistent/pm100.csv --time 2 --run-id fail1
is "$RC" 1 "a failed task: exit 1"
like "$ERR" "ended failed" "the task ended failed"
like "$ERR" "stderr" "with the tail of its stderr"
like "$ERR" "/nonexistent/pm100.csv" "whose text names the missing dataset"
is "$(sql "select count(*) from model_versions")" 2 "and no version registered"
# exa task submit --cluster: pinned to a cluster no worker and no profile
# serves, it stays queued beside the idle unpinned worker
run_exa task submit --cluster nowhere --timeout 30 -- true
PIN=$OUT
run_exa task submit --cluster 'no/where' -- true
is "$RC" 2 "task submit --cluster with a bad name is a usage error"
wait_for 10 sh -c "sqlite3 '$DB' \"select reason from tasks where id = $PIN\" | grep -q no_profile_fits"
is "$?" 0 "a task pinned to a cluster without profiles: no_profile_fits"
is "$(sql "select state || ' ' || cluster from tasks where id = $PIN")" "queued nowhere" "and it stays queued"
run_exa task cancel "$PIN"
is "$(sql "select count(*) from task_attempts a join tasks t on t.id = a.task_id where a.worker_id = 'hand1' and t.cluster is not null")" 0 \
    "the unpinned worker never leased a pinned task"

# ---- V7: two concurrent runs of one run id queue one task (the second
# looks again under the write lock and adopts the first's)
export EXAMLOPS_SLURM_MAX_WAIT_S=1
RACE=()
for i in 1 2; do
    "$EXA" pipeline run --cluster testa --via worker --dummy --dataset-path "$DATA" \
        --time 2 --run-id race1 >"$T/race$i.out" 2>"$T/race$i.err" &
    RACE+=($!)
done
for p in "${RACE[@]}"; do wait_pid "$p" 60; done
is "$(sql "select count(*) from tasks where run_id = 'race1'")" 1 "two reruns at once queue one task"
for id in $(sql "select id from tasks where run_id = 'race1'"); do "$EXA" task cancel "$id" >/dev/null 2>&1; done
export EXAMLOPS_SLURM_MAX_WAIT_S=90

# a cluster rejected while its task runs: the payload (through a wrapper
# that waits for $T/go) is leased and running when testa is rejected; the
# task then ends done, and the run registers nothing and exits 6
cat >"$T/slow-exa" <<SH
#!/bin/sh
while [ ! -e "$T/go" ]; do sleep 0.2; done
exec "$EXA" "\$@"
SH
chmod +x "$T/slow-exa"
nver=$(sql "select count(*) from model_versions")
EXAMLOPS_HPC_REMOTE_EXA=$T/slow-exa "$EXA" pipeline run --cluster testa --via worker \
    --dummy --dataset-path "$DATA" --time 2 --run-id reject1 >"$T/rej.out" 2>"$T/rej.err" &
RPID=$!
wait_for 90 sh -c "sqlite3 '$DB' \"select state from tasks where run_id = 'reject1'\" | grep -q leased"
is "$?" 0 "the run's task is leased by a worker of testa"
"$EXA" -y hpc reject testa --reason "t0962 V7" >/dev/null 2>&1
is "$(sql "select state from clusters where name = 'testa'")" REJECTED "testa is rejected while it runs"
touch "$T/go"
wait_pid "$RPID" 120
is "$?" 6 "the run exits 6"
is "$(sql "select state from tasks where run_id = 'reject1'")" done "though its task ended done"
is "$(grep -c "error" "$T/rej.err")" 1 "with a one-line error" || diag "$(cat "$T/rej.err")"
like "$(cat "$T/rej.err")" "cluster 'testa' is REJECTED" "naming the cluster"
is "$(sql "select count(*) from model_versions")" "$nver" "and no version registered"

done_testing
