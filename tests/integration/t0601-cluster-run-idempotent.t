#!/bin/bash
# Idempotent `exa pipeline run --cluster` on the real Slurm testbed
# (doc/pipeline-run.md "Idempotent runs"): exa killed with -9 after sbatch,
# then the same command again, adopts the queued/running job instead of
# submitting a second one (exactly one job under the run's name in squeue
# and sacct, one version); the same command after completion submits
# nothing and reports the version; --new submits a fresh run; a run whose
# job row was lost (exa killed between sbatch and the insert) is found by
# name in the queue; --run-id sets the id that the job name carries; the
# run goes through the gate (a pinned host key that is not the approved
# one: exit 4, nothing submitted).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed.sh"
require_testbed
exa_test_env

H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
ACC=(--account "$TESTBED_ACCOUNT" --partition "$TESTBED_PARTITION")
export EXAMLOPS_HPC_POLL_INTERVAL=1 EXAMLOPS_ACTOR=it-idem
export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote-jobs
# the remote exa: training takes $EXA_TEST_SLEEP seconds longer, so the
# job is still queued or running when exa is killed
SLOW=$T/slow-exa
cat >"$SLOW" <<EOF
#!/bin/sh
if [ "\$1" = train ]; then sleep \${EXA_TEST_SLEEP:-12}; fi
exec "$EXA" "\$@"
EOF
chmod +x "$SLOW"
export EXAMLOPS_HPC_REMOTE_EXA=$SLOW
cleanup() {
    local id
    for id in $(sqlite3 "$EXAMLOPS_DB" "SELECT job_id FROM jobs WHERE state IN ('PENDING','RUNNING')" 2>/dev/null); do
        tb_slurm testa scancel "$id" >/dev/null 2>&1
    done
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

jf() { python3 -c 'import json,sys; d=json.load(sys.stdin); exec("print(" + sys.argv[1] + ")")' "$1"; }
sql() { sqlite3 "$EXAMLOPS_DB" "$1"; }
versions() { sql "SELECT COUNT(*) FROM model_versions WHERE model='JPCP'"; }
# jobs_named NAME: how many jobs squeue and sacct know under NAME (distinct ids)
jobs_named() {
    { tb_slurm testa squeue -h --name="$1" -o %i
      tb_slurm testa sacct -X -n -P --name="$1" -S now-1hours -o JobID; } | sort -u | grep -c .
}
# queued ID: wait until squeue lists job ID on testa
queued() {
    local i
    for i in $(seq 1 120); do
        [ -n "$(tb_slurm testa squeue -h -j "$1" -o %i 2>/dev/null)" ] && return 0
        sleep 0.25
    done
    return 1
}
# newest_job: this test's newest job row on testa (waits for it)
newest_job() {
    local i id
    for i in $(seq 1 120); do
        id=$(sql "SELECT job_id FROM jobs WHERE cluster='testa' ORDER BY id DESC LIMIT 1" 2>/dev/null)
        [ -n "$id" ] && [ "$id" != "${1:-}" ] && { echo "$id"; return 0; }
        sleep 0.25
    done
    return 1
}

"$EXA" -y hpc connect "$H" --name testa --user "$U" --key "$KEY" --port "$TESTBED_SSH_PORT_TESTA" \
    --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testa >/dev/null 2>&1
is "$(sql "SELECT state FROM clusters WHERE name='testa'")" ACTIVE "testa connected and approved"

RUN=(pipeline run --dummy --cluster testa --gpus 1 "${ACC[@]}")

# --- kill -9 after sbatch, then the same command ---------------------------
"$EXA" "${RUN[@]}" >"$T/first.out" 2>&1 &
pid=$!
ID=$(newest_job)
ok "the first run submitted job $ID" queued "$ID"
{ kill -9 "$pid"; wait "$pid"; } 2>/dev/null
RID=$(sql "SELECT run_uuid FROM jobs WHERE cluster='testa' AND job_id='$ID'")
NAME=$(sql "SELECT job_name FROM jobs WHERE cluster='testa' AND job_id='$ID'")
like "$RID" '^[0-9a-f]{12}$' "the run id is 12 hex digits ($RID)"
is "$NAME" "exa_jpcp_pm100dataset.exa-$RID" "the job name carries the run id"
is "$(tb_slurm testa squeue -h -j "$ID" -o %j)" "$NAME" "squeue shows the job under that name"

run_exa "${RUN[@]}"
is "$RC" 0 "the same command again: exit 0"
[ "$RC" = 0 ] || diag "$(head -c 800 <<<"$OUT$ERR")"
like "$OUT" "adopting job $ID on testa \\(run $RID\\), submitted " "it says it adopted job $ID"
like "$OUT" "Trained JPCP version 1 " "and registered version 1 from it"
is "$(jobs_named "$NAME")" 1 "exactly one job under the run's name in squeue/sacct"
is "$(versions)" 1 "one model version registered"
is "$(sql "SELECT COUNT(*) FROM jobs WHERE run_uuid='$RID'")" 1 "one job row for the run"
is "$(sql "SELECT state||' '||model_version||' '||job_id FROM jobs WHERE run_uuid='$RID'")" \
    "COMPLETED 1 $ID" "the row is COMPLETED and linked to version 1"
is "$(sql "SELECT job_id||' '||run_uuid FROM model_versions WHERE version=1")" "$ID $RID" \
    "the version's lineage is the adopted job"

# --- the same command after completion -------------------------------------
run_exa --json "${RUN[@]}"
is "$RC" 0 "after completion the same command exits 0"
is "$(jf 'd["already_registered"], d["adopted"], d["version"], d["run_id"], d["job"]["job_id"]' <<<"$OUT")" \
    "True False 1 $RID $ID" "and reports version 1 from job $ID"
run_exa "${RUN[@]}"
like "$OUT" "Already done: run $RID registered JPCP version 1 " "the text output says so"
is "$(jobs_named "$NAME")" 1 "nothing was submitted again"
is "$(versions)" 1 "still one version"

# --- --new ---------------------------------------------------------------
EXA_TEST_SLEEP=0 run_exa --json pipeline run --new --dummy --cluster testa --gpus 1 "${ACC[@]}"
is "$RC" 0 "--new: exit 0"
RID2=$(jf 'd["run_id"]' <<<"$OUT")
ID2=$(jf 'd["job"]["job_id"]' <<<"$OUT")
isnt "$RID2" "$RID" "--new ran under a fresh run id ($RID2)"
isnt "$ID2" "$ID" "as a new job ($ID2)"
is "$(jf 'd["version"], d["adopted"]' <<<"$OUT")" "2 False" "and registered version 2"
is "$(jobs_named "exa_jpcp_pm100dataset.exa-$RID2")" 1 "one job under the new name"
is "$(jobs_named "$NAME")" 1 "the first run still has one job"

# --- the row lost: found by name in the queue ------------------------------
"$EXA" "${RUN[@]}" --run-id idem-lost-$$ >/dev/null 2>&1 &
pid=$!
ID3=$(newest_job "$ID2")
ok "the --run-id run submitted job $ID3" queued "$ID3"
{ kill -9 "$pid"; wait "$pid"; } 2>/dev/null
is "$(tb_slurm testa squeue -h -j "$ID3" -o %j)" "exa_jpcp_pm100dataset.exa-idem-lost-$$" \
    "--run-id is the id in the job name"
# as if exa had died between sbatch and recording the job
sql "DELETE FROM jobs WHERE job_id='$ID3' AND cluster='testa'"
run_exa "${RUN[@]}" --run-id idem-lost-$$
is "$RC" 0 "the same --run-id again: exit 0"
[ "$RC" = 0 ] || diag "$(head -c 800 <<<"$OUT$ERR")"
like "$OUT" "adopting job $ID3 on testa \\(run idem-lost-$$\\)" "it found job $ID3 by name and adopted it"
is "$(jobs_named "exa_jpcp_pm100dataset.exa-idem-lost-$$")" 1 "still exactly one job under that name"
is "$(sql "SELECT state||' '||model_version FROM jobs WHERE job_id='$ID3' AND cluster='testa'")" \
    "COMPLETED 3" "recorded again and registered as version 3"
is "$(versions)" 3 "three versions for three runs"

# --- through the gate: a host key that is not the approved one -------------
PA=$TESTBED_SSH_PORT_TESTA PB=$TESTBED_SSH_PORT_TESTB
fpr_of() { grep "^\[$H\]:$1[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | ssh-keygen -lf - | awk '/ED25519/ {print $2}'; }
pin=$XDG_CONFIG_HOME/examlops/known_hosts.d/testa
cp "$pin" "$T/pin.good"
grep "^\[$H\]:$PB[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | sed "s/\[$H\]:$PB/[$H]:$PA/g; s/\[localhost\]:$PB/[localhost]:$PA/g" >"$pin"
njobs=$(sql "SELECT COUNT(*) FROM jobs")
run_exa "${RUN[@]}" --new
is "$RC" 4 "pipeline run with testb's key pinned for testa: exit 4"
# a literal match: a fingerprint's base64 holds '+' and '/'
want="cluster 'testa' was approved with $(fpr_of "$PA") but the pinned known_hosts holds $(fpr_of "$PB")"
case $ERR in *"$want"*) r=0 ;; *) r=1; diag "'$ERR'"; diag "does not contain '$want'" ;; esac
is "$r" 0 "naming both fingerprints"
is "$(sql "SELECT COUNT(*) FROM jobs")" "$njobs" "nothing submitted or recorded"
cp "$T/pin.good" "$pin"

# --- usage -------------------------------------------------------------------
run_exa "${RUN[@]}" --run-id 'bad id'
is "$RC" 2 "a run id outside [A-Za-z0-9_-] exits 2"
run_exa "${RUN[@]}" --run-id x --new
is "$RC" 2 "--run-id with --new exits 2"
done_testing
