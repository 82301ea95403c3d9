#!/bin/bash
# t0010-pipeline-mock - the main job on the embedded default: two mock
# runs register versions 1 and 2 with job lineage, both jobs are listed
# with measured run time, artifacts verify, a failed training is recorded
# FAILED and registers nothing, and `exa train` works without a database.
. "$(dirname "$0")/lib.sh"
exa_test_env

run_exa --json pipeline run --model JPCP --dataset PM100Dataset --dummy \
    --dataset-path "$SAMPLE"
is "$RC" 0 "first run exits 0"
json_ok "metrics are finite numbers" '.metrics | [.rmse, .mse, .mape] |
    all(type == "number" and . >= 0 and . < 1e300)'
json_ok "rmse is the square root of mse" \
    '((.metrics.rmse * .metrics.rmse) - .metrics.mse | fabs) < 1e-6'
json_ok "stage follows the rmse gates" '.stage ==
    (if .metrics.rmse <= 50 then "Production" elif .metrics.rmse <= 100
     then "Canary" elif .metrics.rmse <= 200 then "Staging" else "None" end)'
json_ok "version 1 of JPCP" '.model == "JPCP" and .version == 1'
json_ok "dummy takes 50 rows of each split and counts the skipped" \
    '.train_rows == 50 and .val_rows == 50 and .skipped_rows == 7
     and .records == 600 and .dummy == true'
json_ok "job: mock on local, COMPLETED, exit 0" '.job.cluster == "local" and
    .job.scheduler == "mock" and .job.state == "COMPLETED" and
    .job.exit_code == 0 and .job.model_version == 1 and
    (.job.job_id | test("^mock-[0-9a-f]{8}$")) and
    (.job.run_uuid | test("^[0-9a-f]{12}$"))'
json_ok "job times are ISO UTC and run_seconds > 0" '
    (.job.start_time | test("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$"))
    and (.job.end_time | test("Z$")) and .job.run_seconds > 0
    and .job.cpu_seconds > 0'
job1=$(jq -r .job.job_id <<<"$OUT")
sha1=$(jq -r .artifact_sha256 <<<"$OUT")
dir1=$(jq -r .artifact_path <<<"$OUT")
is "$dir1" "$XDG_DATA_HOME/examlops/models/JPCP/1" \
    "artifacts under XDG_DATA_HOME/examlops/models/JPCP/1"
is "$(cd "$dir1" && ls | tr '\n' ' ')" \
    "SHA256SUMS encoders.json metrics.json model.json " "four artifact files"
ok "SHA256SUMS verifies with sha256sum -c" \
    sh -c "cd '$dir1' && sha256sum --quiet -c SHA256SUMS"
is "$(sha256sum "$dir1/SHA256SUMS" | cut -d' ' -f1)" "$sha1" \
    "artifact_sha256 is the SHA-256 of SHA256SUMS"
ok "model.json is an XGBoost JSON model" jq -e \
    '.learner.gradient_booster.model.gbtree_model_param.num_parallel_tree
     == "100"' "$dir1/model.json"

run_exa --json pipeline run --model JPCP --dataset PM100Dataset --dummy \
    --dataset-path "$SAMPLE"
is "$RC" 0 "second run exits 0"
json_ok "second run registers version 2" '.version == 2'
job2=$(jq -r .job.job_id <<<"$OUT")
isnt "$job2" "$job1" "each run gets its own job id"
is "$(jq -r .artifact_sha256 <<<"$OUT")" "$sha1" \
    "training is deterministic: same data, same artifacts"

run_exa --json models show JPCP
is "$RC" 0 "models show exits 0"
json_ok "lists both versions with job lineage" --arg j1 "$job1" \
    --arg j2 "$job2" '.model == "JPCP" and (.versions | length) == 2 and
    .versions[0].version == 1 and .versions[0].lineage.job_id == $j1 and
    .versions[1].version == 2 and .versions[1].lineage.job_id == $j2 and
    all(.versions[].lineage; .cluster == "local" and .scheduler == "mock"
        and (.run_uuid | length) == 12 and (.job_ref | type) == "number")'
json_ok "versions carry metrics, dataset and row counts" \
    'all(.versions[]; (.metrics.rmse | type) == "number" and
     .dataset == "PM100Dataset" and .train_rows == 50 and .val_rows == 50)'

run_exa --json hpc jobs
is "$RC" 0 "hpc jobs exits 0"
json_ok "lists both jobs, newest first, with run_seconds > 0" \
    --arg j1 "$job1" --arg j2 "$job2" 'length == 2 and
    .[0].job_id == $j2 and .[1].job_id == $j1 and
    all(.[]; .run_seconds > 0 and .state == "COMPLETED" and
        .cluster == "local" and .gpu_hours == 0)'
json_ok "each job knows the version it produced" \
    '[.[].model_version] == [2, 1]'

run_exa --json hpc jobs --limit 1
json_ok "--limit 1 keeps the newest" --arg j2 "$job2" \
    'length == 1 and .[0].job_id == $j2'
run_exa --json hpc jobs --model OTHER
is "$OUT" "[]" "--model filters"

run_exa hpc jobs
like "$OUT" "^local +$job2 +mock +JPCP +COMPLETED +0 " "table row of a job"
like "$OUT" "^2 item\\(s\\)$" "table caption counts jobs"
run_exa models list
like "$OUT" '^JPCP +2 +2 ' "models list shows 2 versions, latest 2"
run_exa models show JPCP --version 1
like "$OUT" "lineage +job $job1 on cluster local \\(mock\\)" \
    "models show --version shows lineage"

# Plain (non-terminal) output ends with where everything went.
run_exa pipeline run --dummy --dataset-path "$SAMPLE"
is "$RC" 0 "third run, table mode"
like "$(tail -3 <<<"$OUT" | head -1)" \
    "^model: +$XDG_DATA_HOME/examlops/models/JPCP/3/model.json" \
    "says where the model went"
like "$(tail -2 <<<"$OUT" | head -1)" "^metrics: +.*/JPCP/3/metrics.json" \
    "says where the metrics went"
like "$(tail -1 <<<"$OUT")" "^job: +mock-[0-9a-f]{8} .* recorded in $EXAMLOPS_DB" \
    "says where the job record went"

# Defaults: model JPCP, dataset PM100Dataset, file from EXAMLOPS_PM100_PATH.
cp "$SAMPLE" "$T/pm100.csv"
EXAMLOPS_PM100_PATH="$T/pm100.csv" run_exa --json pipeline run --dummy
json_ok "EXAMLOPS_PM100_PATH names the dataset file" \
    --arg p "$T/pm100.csv" '.dataset_path == $p and .version == 4'

# A training that fails: usable rows, none in the training window.
printf '%s\n' \
    'job_id,user_id,num_nodes_req,num_nodes_alloc,submit_time,node_power_consumption' \
    '1,u1,1,1,2020-10-05T00:00:00Z,400' >"$T/october.csv"
models_before=$(cd "$XDG_DATA_HOME/examlops/models/JPCP" && ls -a | tr '\n' ' ')
run_exa --json pipeline run --dataset-path "$T/october.csv"
is "$RC" 1 "a failed training exits 1"
json_ok "and says why" '.exit_code == 1 and
    (.error | startswith("no usable training rows")) and
    (.hint | test("recorded as FAILED"))'
run_exa --json hpc jobs --limit 1
json_ok "its job is recorded FAILED with the reason" '.[0].state == "FAILED"
    and .[0].exit_code == 1 and .[0].model_version == null and
    (.[0].reason | startswith("no usable training rows")) and
    .[0].run_seconds > 0'
run_exa --json models show JPCP
json_ok "no version was registered" '(.versions | length) == 4'
is "$(cd "$XDG_DATA_HOME/examlops/models/JPCP" && ls -a | tr '\n' ' ')" \
    "$models_before" "no model directory, no leftover staging directory"

# exa train: the cluster payload, no database needed.
db_before=$(state_digest)
export EXAMLOPS_DB_SAVED=$EXAMLOPS_DB
EXAMLOPS_DB="$T/never.db" run_exa train --model JPCP --dataset PM100Dataset \
    --dataset-path "$SAMPLE" --out "$T/art" --dummy
is "$RC" 0 "exa train exits 0"
json_ok "prints a JSON summary" --arg d "$T/art" '.artifact_path == $d and
    .model == "JPCP" and .train_rows == 50 and (.metrics.rmse | type) ==
    "number"'
is "$(sha256sum "$T/art/SHA256SUMS" | cut -d' ' -f1)" \
    "$(jq -r .artifact_sha256 <<<"$OUT")" "its artifact_sha256 matches"
is "$(jq -r .artifact_sha256 <<<"$OUT")" "$sha1" \
    "exa train and pipeline run make the same artifacts"
ok "exa train creates no database" test ! -e "$T/never.db"
is "$(state_digest)" "$db_before" "and leaves platform.db alone"
run_exa train --model JPCP --dataset PM100Dataset \
    --dataset-path "$SAMPLE" --out "$T/art" --dummy
is "$RC" 3 "exa train refuses to replace an existing --out"
like "$ERR" "File exists" "saying it exists"
is "$(sha256sum "$T/art/SHA256SUMS" | cut -d' ' -f1)" "$sha1" \
    "the existing artifacts are untouched"

# A scheduler without a cluster is a usage error; an unknown cluster fails.
EXAMLOPS_HPC_SCHEDULER=slurm run_exa pipeline run --dummy
is "$RC" 2 "EXAMLOPS_HPC_SCHEDULER=slurm exits 2"
like "$ERR" "need --cluster NAME\\|auto" "and says cluster runs need --cluster"
EXAMLOPS_SLURM_MODE=slurm run_exa pipeline run --dummy
is "$RC" 2 "so does the legacy EXAMLOPS_SLURM_MODE=slurm"
run_exa pipeline run --cluster lxp --dummy
is "$RC" 1 "--cluster with an unregistered cluster exits 1"
like "$ERR" "unknown cluster: 'lxp'" "and names it"
EXAMLOPS_HPC_SCHEDULER=pbs run_exa pipeline run --dummy
is "$RC" 3 "an unknown scheduler is a configuration error"

done_testing
