#!/bin/bash
# exa pipeline run --cluster on the real Slurm testbed, over SSH, with exa
# "installed on the cluster side" (the compute node is this machine, so
# EXAMLOPS_HPC_REMOTE_EXA=$EXA is the remote exa): auto placement and a
# named cluster each register a version with lineage to the Slurm job,
# whose run_seconds and GPU count agree with sacct; a PENDING cluster is
# refused (exit 6); a failed preflight stops before submitting; a payload
# that fails and a job cancelled from outside register nothing and record
# FAILED / CANCELLED; SIGINT with --yes cancels, with --json leaves the
# job running; an exa killed during the wait is resumed by `exa hpc wait`;
# `exa hpc capacity` GPU-hours are the sum of the recorded jobs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed.sh"
require_testbed
exa_test_env

H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
ACC=(--account "$TESTBED_ACCOUNT" --partition "$TESTBED_PARTITION")
export EXAMLOPS_HPC_REMOTE_EXA=$EXA EXAMLOPS_HPC_POLL_INTERVAL=1
export EXAMLOPS_ACTOR=it-tester
# the "remote" work directory: per test, so runs never mix
export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote-jobs
# a remote exa whose training takes $EXA_TEST_SLEEP seconds longer
SLOW=$T/slow-exa
cat >"$SLOW" <<EOF
#!/bin/sh
if [ "\$1" = train ]; then sleep \${EXA_TEST_SLEEP:-15}; fi
exec "$EXA" "\$@"
EOF
chmod +x "$SLOW"
cleanup() {
    local c id
    sqlite3 "$EXAMLOPS_DB" "SELECT cluster, job_id FROM jobs WHERE state IN ('PENDING','RUNNING')" 2>/dev/null |
        while IFS='|' read -r c id; do tb_slurm "$c" scancel "$id" >/dev/null 2>&1; done
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

jf() { python3 -c 'import json,sys; d=json.load(sys.stdin); exec("print(" + sys.argv[1] + ")")' "$1"; }
sql() { sqlite3 "$EXAMLOPS_DB" "$1"; }
versions() { sql "SELECT COUNT(*) FROM model_versions WHERE model='JPCP'"; }
# sacct_of CLUSTER ID FIELD: one field of the allocation line
sacct_of() { tb_slurm "$1" sacct -X -P -n -j "$2" -o "$3" | head -n 1; }
# job_in_queue CLUSTER: the id of this test's exa job that is live on
# CLUSTER, from its own platform.db (the shared testbed's queue also holds
# other tests' jobs)
job_in_queue() {
    local i id
    for i in $(seq 1 120); do
        id=$(sql "SELECT job_id FROM jobs WHERE cluster='$1' AND state IN ('PENDING','RUNNING') ORDER BY id DESC LIMIT 1" 2>/dev/null)
        [ -n "$id" ] && { echo "$id"; return 0; }
        sleep 0.25
    done
    return 1
}
wait_running() { tb_wait_state "$1" "$2" RUNNING 60; }

for c in testa testb; do
    var=TESTBED_SSH_PORT_$(tr a-z A-Z <<<"$c")
    "$EXA" -y hpc connect "$H" --name "$c" --user "$U" --key "$KEY" --port "${!var}" \
        --scheduler slurm >/dev/null 2>&1
    "$EXA" -y hpc approve "$c" >/dev/null 2>&1
    "$EXA" hpc nodes --save --cluster "$c" >/dev/null 2>&1
done
is "$("$EXA" --json hpc clusters | jf '" ".join(c["name"]+"="+c["state"] for c in d)')" \
    "testa=ACTIVE testb=ACTIVE" "both testbed clusters connected and approved"

# --- auto placement ---------------------------------------------------
# Other tests share the testbed and may drain or fill a node after the
# snapshot: then placement's choice fails its preflight (correctly). Take a
# fresh snapshot and try again, a few times.
for try in 1 2 3 4 5; do
    for c in testa testb; do "$EXA" hpc nodes --save --cluster "$c" >/dev/null 2>&1; done
    run_exa --json pipeline run --model JPCP --dataset PM100Dataset --dummy --cluster auto --gpus 1 "${ACC[@]}"
    [ "$RC" = 0 ] && break
    diag "auto try $try: $(head -c 600 <<<"$OUT$ERR")"
    sleep 5
done
is "$RC" 0 "auto: exit 0"
C=$(jf 'd["cluster"]' <<<"$OUT" 2>/dev/null)
ID=$(jf 'd["job"]["job_id"]' <<<"$OUT" 2>/dev/null)
like "$C" '^test[ab]$' "auto placed on a testbed cluster ($C)"
like "$(jf 'd["placement_reason"]' <<<"$OUT")" "^chose slurm@$C — [1-9][0-9]*/[0-9]+ idle GPUs" "the placement reason names it and its free GPUs"
is "$(jf 'd["version"], d["lineage"]["cluster"], d["lineage"]["scheduler"], d["lineage"]["job_id"]' <<<"$OUT")" \
    "1 $C slurm $ID" "version 1 registered with lineage to Slurm job $ID"
is "$(jf 'd["job"]["state"], d["job"]["model_version"], d["train_rows"], d["val_rows"]' <<<"$OUT")" \
    "COMPLETED 1 50 50" "the job row is COMPLETED and linked; rows from metrics.json"
ok "artifacts stored under the models directory" test -s "$XDG_DATA_HOME/examlops/models/JPCP/1/model.json"
( cd "$XDG_DATA_HOME/examlops/models/JPCP/1" && sha256sum -c --quiet SHA256SUMS )
ok "the fetched artifacts verify with sha256sum -c" test $? -eq 0
el=$(sacct_of "$C" "$ID" ElapsedRaw)
rs=$(jf 'int(d["job"]["run_seconds"])' <<<"$OUT")
ok "run_seconds ($rs) agrees with sacct ElapsedRaw ($el) within 1 s" test "$(( rs - el ))" -ge -1 -a "$(( rs - el ))" -le 1
tres=$(sacct_of "$C" "$ID" AllocTRES)
g=$(sed -n 's/.*gres\/gpu=\([0-9]*\).*/\1/p' <<<"$tres")
is "$(jf 'd["job"]["gpus"]' <<<"$OUT")" "$g" "GPU count agrees with sacct AllocTRES ($tres)"
is "$(jf 'round(d["job"]["gpu_hours"] * 3600, 6) == d["job"]["gpus"] * d["job"]["run_seconds"]' <<<"$OUT")" "True" \
    "gpu_hours = gpus x run_seconds / 3600"
is "$(jf 'd["job"]["cpus"]' <<<"$OUT")" "$(sacct_of "$C" "$ID" AllocCPUS)" "cpus recorded from sacct AllocCPUS"

# --- a named cluster ------------------------------------------------------
run_exa --json pipeline run --dummy --cluster testb --gpus 1 "${ACC[@]}"
is "$RC" 0 "--cluster testb: exit 0"
[ "$RC" = 0 ] || diag "$(head -c 600 <<<"$OUT$ERR")"
ID=$(jf 'd["job"]["job_id"]' <<<"$OUT" 2>/dev/null)
is "$(jf 'd["version"], d["cluster"], d["placement_reason"]' <<<"$OUT")" "2 testb None" "version 2 on testb, no placement"
el=$(sacct_of testb "$ID" ElapsedRaw)
rs=$(jf 'int(d["job"]["run_seconds"])' <<<"$OUT")
ok "testb: run_seconds ($rs) agrees with sacct ($el)" test "$(( rs - el ))" -ge -1 -a "$(( rs - el ))" -le 1
is "$(sql "SELECT cluster||' '||job_id||' '||run_uuid FROM model_versions WHERE version=2")" \
    "testb $ID $(jf 'd["job"]["run_uuid"]' <<<"$OUT")" "lineage stored in platform.db"

# --- refused before submitting -------------------------------------------
"$EXA" -y hpc connect "$H" --name testp --user "$U" --key "$KEY" --port "$TESTBED_SSH_PORT_TESTB" \
    --scheduler slurm >/dev/null 2>&1
run_exa --json pipeline run --dummy --cluster testp --gpus 1 "${ACC[@]}"
is "$RC" 6 "a PENDING cluster is refused with exit 6"
like "$(jf 'd["hint"]' <<<"$OUT")" "exa hpc approve testp" "the hint says how to approve it"
njobs=$(sql "SELECT COUNT(*) FROM jobs")
run_exa pipeline run --dummy --cluster testb --gpus 1 --account "$TESTBED_ACCOUNT" --partition nope
is "$RC" 1 "a failed preflight stops the run (exit 1)"
like "$ERR" "✗ partition: 'nope'" "and lists the failing check"
is "$(sql "SELECT COUNT(*) FROM jobs")" "$njobs" "nothing was submitted or recorded"

# --- a payload that fails -------------------------------------------------
run_exa --json pipeline run --dummy --cluster testb --gpus 1 "${ACC[@]}" --dataset-path /nonexistent/pm100.csv
is "$RC" 1 "a failing payload exits 1"
ID=$(sql "SELECT job_id FROM jobs WHERE cluster='testb' ORDER BY id DESC LIMIT 1")
is "$(sql "SELECT state||' '||raw_state||' '||exit_code||' '||signal||' '||IFNULL(model_version,'none') FROM jobs WHERE cluster='testb' AND job_id='$ID'")" \
    "FAILED FAILED 3 0 none" "recorded FAILED with exit code, signal and raw_state; no version"
like "$ERR" "cannot open dataset file '/nonexistent/pm100.csv'" "the tail of the job's stderr is printed"
is "$(versions)" 2 "no version registered"

# --- cancelled from outside ---------------------------------------------
# (the same ask as the run above: without --new it would report that run's
# version 2 instead of running, doc/pipeline-run.md "Idempotent runs")
EXAMLOPS_HPC_REMOTE_EXA=$SLOW "$EXA" --json pipeline run --new --dummy --cluster testb --gpus 1 "${ACC[@]}" \
    >"$T/cancel.out" 2>"$T/cancel.err" &
pid=$!
ID=$(job_in_queue testb)
wait_running testb "$ID"
tb_slurm testb scancel "$ID"
wait "$pid"
is "$?" 1 "a job cancelled with scancel during the wait exits 1"
is "$(sql "SELECT state||' '||IFNULL(model_version,'none') FROM jobs WHERE cluster='testb' AND job_id='$ID'")" \
    "CANCELLED none" "recorded CANCELLED, no version"
like "$(sql "SELECT raw_state FROM jobs WHERE cluster='testb' AND job_id='$ID'")" "^CANCELLED" "raw_state kept"
is "$(versions)" 2 "still two versions"

# --- SIGINT: --yes cancels; --json leaves it running ----------------------
EXAMLOPS_HPC_REMOTE_EXA=$SLOW "$EXA" -y pipeline run --new --dummy --cluster testb --gpus 1 "${ACC[@]}" \
    >"$T/int.out" 2>"$T/int.err" &
pid=$!
ID=$(job_in_queue testb)
wait_running testb "$ID"
kill -INT "$pid"
wait "$pid"
is "$?" 1 "SIGINT with --yes: exit 1"
is "$(sql "SELECT state FROM jobs WHERE cluster='testb' AND job_id='$ID'")" CANCELLED "SIGINT with --yes cancels the job"

EXAMLOPS_HPC_REMOTE_EXA=$SLOW EXA_TEST_SLEEP=8 "$EXA" --json pipeline run --new --dummy --cluster testb --gpus 1 "${ACC[@]}" \
    >"$T/det.out" 2>"$T/det.err" &
pid=$!
ID=$(job_in_queue testb)
wait_running testb "$ID"
kill -INT "$pid"
wait "$pid"
is "$?" 1 "SIGINT in JSON mode: exit 1"
like "$(jf 'd["hint"]' <"$T/det.out")" "exa hpc wait $ID --cluster testb" "it prints how to resume"
is "$(tb_slurm testb squeue -h -j "$ID" -o %T)" RUNNING "and leaves the job running"

# --- exa killed; exa hpc wait resumes ------------------------------------
if "$EXA" hpc wait --help >/dev/null 2>&1; then
    run_exa --json hpc wait "$ID" --cluster testb
    is "$RC" 0 "exa hpc wait resumes the interrupted run"
    is "$(jf 'd["version"], d["lineage"]["job_id"]' <<<"$OUT")" "3 $ID" "and registers version 3 from it"

    EXAMLOPS_HPC_REMOTE_EXA=$SLOW EXA_TEST_SLEEP=8 "$EXA" pipeline run --new --dummy --cluster testb --gpus 1 "${ACC[@]}" \
        >/dev/null 2>&1 &
    pid=$!
    ID=$(job_in_queue testb)
    wait_running testb "$ID"
    # the row follows the job while exa waits
    for i in $(seq 1 40); do
        [ "$(sql "SELECT state FROM jobs WHERE cluster='testb' AND job_id='$ID'")" = RUNNING ] && break
        sleep 0.25
    done
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    is "$(sql "SELECT state||' '||IFNULL(model_version,'none') FROM jobs WHERE cluster='testb' AND job_id='$ID'")" \
        "RUNNING none" "exa killed during the wait leaves a RUNNING row without a version"
    run_exa --json hpc wait "$ID" --cluster testb
    is "$RC" 0 "exa hpc wait JOBID resumes it"
    is "$(sql "SELECT state||' '||model_version FROM jobs WHERE cluster='testb' AND job_id='$ID'")" \
        "COMPLETED 4" "to a registered version 4 linked to the job"
    is "$(sql "SELECT job_id FROM model_versions WHERE version=4")" "$ID" "with lineage to the Slurm job"
else
    tb_slurm testb scancel "$ID"
    skip "exa hpc wait resumes a run" "exa hpc wait is not in this build"
fi

# --- --stage-dataset ---------------------------------------------------------
cp "$SAMPLE" "$T/local-pm100.csv"
run_exa --json pipeline run --dummy --cluster testb --gpus 1 "${ACC[@]}" --stage-dataset --dataset-path "$T/local-pm100.csv"
is "$RC" 0 "--stage-dataset: exit 0"
RD=$(jf 'd["job"]["remote_dir"]' <<<"$OUT" 2>/dev/null)
is "$(jf 'd["dataset_path"]' <<<"$OUT" 2>/dev/null)" "$RD/local-pm100.csv" "the payload read the copy staged into the run's remote directory"
cmp -s "$SAMPLE" "$RD/local-pm100.csv"
ok "the staged copy is byte-identical" test $? -eq 0

# --- capacity ---------------------------------------------------------------
want=$(sql "SELECT printf('%.2f', SUM(COALESCE(gpu_hours, 0))) FROM jobs WHERE cluster='testb'")
got=$("$EXA" --json hpc capacity | jf '"%.2f" % [c["gpu_hours_used"] for c in d if c["name"]=="testb"][0]')
is "$got" "$want" "hpc capacity GPU-hours of testb are the sum of its recorded jobs"
done_testing
