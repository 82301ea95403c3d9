#!/bin/bash
# t0060-finops.t - cost and carbon through the real exa binary.
#
# Seeds a temporary platform.db with model versions and the jobs that
# trained them (hours as the scheduler's accounting would record them),
# then checks: `models cost --record` twice gives the same rows, cost is
# hours x rates (env-overridable), versions without hours are named and
# skipped, `finops carbon estimate --gpu-hours 12` is 7.2 kWh / 2160 g,
# and `carbon record` (from the version's hours) shows in `carbon report`.
set -u
: "${EXA:?EXA must name the exa binary}"

tmp=$(mktemp -d /tmp/exa-t0060-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/xdg" EXAMLOPS_DB="$tmp/platform.db"
mkdir -p "$HOME" "$XDG_DATA_HOME"
unset GPU_COST_PER_HOUR CPU_COST_PER_HOUR EXAMLOPS_COST_PROVIDER \
    EXAMLOPS_CARBON_PROVIDER EXAMLOPS_ACTOR

n=0
fails=0
ok() { # ok DESCRIPTION CONDITION-EXIT-STATUS
    n=$((n + 1))
    if [ "$2" -eq 0 ]; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1"
        fails=$((fails + 1))
    fi
}
is() { # is DESCRIPTION GOT EXPECTED
    n=$((n + 1))
    if [ "$2" == "$3" ]; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1"
        echo "#   got:      '$2'"
        echo "#   expected: '$3'"
        fails=$((fails + 1))
    fi
}

echo "1..39"

# Any command that opens platform.db creates and migrates it.
"$EXA" -q finops carbon report >/dev/null

# --- carbon estimate: the reference's worked example ---
out=$("$EXA" --json finops carbon estimate --gpu-hours 12)
is "estimate exits 0" "$?" 0
is "12 GPU-h is 7.2 kWh" "$(jq -r .kwh <<<"$out")" 7.2
is "12 GPU-h is 2160 g" "$(jq -r .co2e_g <<<"$out")" 2160
is "default provider and signal" \
    "$(jq -r '[.provider, .uncertainty, .signal.signal_type, .signal.method] | join(" ")' <<<"$out")" \
    "green-ai-default 0.3 accounting static_default"
out=$("$EXA" --json finops carbon estimate --gpu-hours 12 \
    --provider codecarbon-like --grid-intensity 250)
is "codecarbon-like: 12 x 531.92 W x 1.5, at 250 g" \
    "$(jq -r '[.kwh, .co2e_g, .signal.method] | join(" ")' <<<"$out")" \
    "9.57456 2393.64 operator_supplied"
out=$("$EXA" --json finops carbon estimate --cpu-hours 3)
is "no hours: exit 1" "$("$EXA" finops carbon estimate >/dev/null 2>&1; echo $?)" 1
out=$("$EXA" --json finops carbon estimate --gpu-hours 1 --cpu-hours 2 -p ccf-like)
is "CPU-hours with a GPU-only provider: exit 1" "$?" 1
is "... as one JSON error document" "$(jq -r .exit_code <<<"$out")" 1
out=$(EXAMLOPS_CARBON_PROVIDER=nope "$EXA" --json finops carbon estimate --gpu-hours 1)
is "unknown provider in env: exit 3" "$?" 3
is "negative hours: exit 2" \
    "$("$EXA" finops carbon estimate --gpu-hours -1 >/dev/null 2>&1; echo $?)" 2
ok "nothing was written by estimate" \
    "$([ "$(sqlite3 "$EXAMLOPS_DB" 'SELECT count(*) FROM carbon_records')" = 0 ]; echo $?)"

# --- seed versions and their jobs ---
# v1: slurm job with 3.5 GPU-h / 10 CPU-h; v2: accounting never recorded;
# v3: mock job, 1800 CPU-seconds, no GPU; v4: 12 GPU-h / 24 CPU-h.
sqlite3 "$EXAMLOPS_DB" <<'EOF'
INSERT INTO jobs (id, cluster, scheduler, job_id, model, state, gpus,
  run_seconds, gpu_hours, cpu_hours, cpu_seconds, created_at, updated_at)
VALUES
 (1, 'testb', 'slurm', '41', 'JPCP', 'COMPLETED', 1, 12600, 3.5, 10, NULL, 'x', 'x'),
 (2, 'testb', 'slurm', '42', 'JPCP', 'COMPLETED', 1, NULL, NULL, NULL, NULL, 'x', 'x'),
 (3, 'local', 'mock', 'mock-1', 'JPCP', 'COMPLETED', 0, 1800, NULL, NULL, 1800, 'x', 'x'),
 (4, 'testb', 'slurm', '44', 'JPCP', 'COMPLETED', 4, 10800, 12, 24, NULL, 'x', 'x');
INSERT INTO model_versions (model, version, job_ref, cluster, scheduler,
  job_id, run_uuid, created_at)
VALUES
 ('JPCP', 1, 1, 'testb', 'slurm', '41', 'aaaaaaaa-1111', 'x'),
 ('JPCP', 2, 2, 'testb', 'slurm', '42', 'bbbbbbbb-2222', 'x'),
 ('JPCP', 3, 3, 'local', 'mock', 'mock-1', 'cccccccc-3333', 'x'),
 ('JPCP', 4, 4, 'testb', 'slurm', '44', 'dddddddd-4444', 'x');
EOF

# --- models cost --record, twice ---
first=$("$EXA" --json models cost JPCP --record 2>"$tmp/err1")
is "models cost --record exits 0" "$?" 0
rows1=$(sqlite3 "$EXAMLOPS_DB" 'SELECT * FROM model_costs ORDER BY id')
second=$("$EXA" --json models cost JPCP --record 2>/dev/null)
rows2=$(sqlite3 "$EXAMLOPS_DB" 'SELECT * FROM model_costs ORDER BY id')
is "--record twice prints the same rows" "$second" "$first"
is "--record twice leaves the same table" "$rows2" "$rows1"
is "one row per costed version" "$(jq length <<<"$first")" 3
is "versions costed" "$(jq -r '[.[].Version] | join(",")' <<<"$first")" "1,3,4"
ok "the version without hours is named, not invented" \
    "$(grep -q "version 2 of 'JPCP' (job '42' on 'testb') were not recorded" "$tmp/err1"; echo $?)"
is "v1 cost = 3.5 x 2.50 + 10 x 0.05 (db, 4 dp)" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT printf('%.4f', cost_usd) FROM model_costs WHERE version = 1")" \
    "9.2500"
is "v4 cost = 12 x 2.50 + 24 x 0.05" \
    "$(jq -r '.[] | select(.Version == "4") | .["Cost (USD)"]' <<<"$first")" '$31.20'
is "mock v3: 0 GPU-h, 0.5 CPU-h, 0.025 USD" \
    "$(jq -r '.[] | select(.Version == "3") | [.["GPU Hours"], .["CPU Hours"], .["Cost (USD)"]] | join(" ")' <<<"$first")" \
    '0.00 0.50 $0.0250'
is "hours stored as recorded" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT gpu_hours, cpu_hours, job_id, cluster FROM model_costs WHERE version = 4")" \
    "12.0|24.0|44|testb"
is "one audit event for the first recording only" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action = 'cost_recorded'")" 1

# --- rates from the environment, provider flag ---
GPU_COST_PER_HOUR=3 CPU_COST_PER_HOUR=0.1 "$EXA" -q models cost JPCP --record >/dev/null 2>&1
is "env rates update the rows in place: 3.5 x 3 + 10 x 0.1" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*), printf('%.4f', sum(cost_usd) FILTER (WHERE version = 1)) FROM model_costs")" \
    "3|11.5000"
is "bad rate: exit 3" \
    "$(GPU_COST_PER_HOUR=cheap "$EXA" models cost JPCP --record >/dev/null 2>&1; echo $?)" 3
"$EXA" models cost JPCP --record -p tiered >/dev/null 2>&1
is "tiered adds its own rows, stored under its canonical name" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM model_costs WHERE provider = 'tiered-example'")" 3
out=$("$EXA" --json models cost-list)
is "cost-list per model and provider" \
    "$(jq -c '.[] | select(.provider == "tiered-example") | [.model_name, .n_runs, .total_gpu_hours, .total_cost_usd]' <<<"$out")" \
    '["JPCP",3,15.5,40.475]'
is "unknown model: exit 1" \
    "$("$EXA" models cost NoSuch --record >/dev/null 2>&1; echo $?)" 1

# --- carbon record from the version's hours, then report ---
out=$("$EXA" --json finops carbon record JPCP --version 4)
is "carbon record uses the recorded hours: (12x400 + 24x120)/1000 x 1.5" \
    "$(jq -r '[.hours_from, .gpu_hours, .cpu_hours, .kwh, .co2e_g, .version, .run_id] | join(" ")' <<<"$out")" \
    "job 12 24 11.52 3456 4 dddddddd-4444"
out=$("$EXA" --json finops carbon record JPCP --version 2)
is "no recorded hours: exit 1 with a clear error" \
    "$?:$(jq -r .error <<<"$out")" \
    "1:GPU- and CPU-hours of version 2 of 'JPCP' (job '42' on 'testb') were not recorded"
"$EXA" -q finops carbon record JPCP --gpu-hours 12 --pue 1.2 >/dev/null
is "a record stores provider, inputs and signal" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT provider, grid_intensity, pue, gpu_power_w, signal_type, signal_method, kwh FROM carbon_records ORDER BY id DESC LIMIT 1")" \
    "green-ai-default|300.0|1.2|400.0|accounting|static_default|5.76"
out=$("$EXA" --json finops carbon report --model JPCP)
is "report sums the records" \
    "$(jq -r '[.n, .total_kwh, .operational_co2e_g] | join(" ")' <<<"$out")" \
    "2 17.28 5184"
out=$("$EXA" finops carbon report)
ok "text report shows the totals" \
    "$(grep -Eq '^Operational CO2e \(kg\) +5\.184$' <<<"$out"; echo $?)"
is "carbon_recorded audit events" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action = 'carbon_recorded'")" 2

# --- carbon record is idempotent per (model, version, provider) ---
out=$("$EXA" --json finops carbon record JPCP --version 4)
is "recording version 4 again: same row, unchanged" \
    "$?:$(jq -r '[.changed, .co2e_g] | join(" ")' <<<"$out")" "0:false 3456"
"$EXA" -q finops carbon record JPCP --version 4 >/dev/null
is "three records of version 4 leave one row" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*), sum(co2e_g) FROM carbon_records WHERE model = 'JPCP' AND version = 4")" \
    "1|3456.0"
is "and add no audit event" \
    "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action = 'carbon_recorded'")" 2
is "report totals unchanged" \
    "$("$EXA" --json finops carbon report --model JPCP | jq -r '[.n, .operational_co2e_g] | join(" ")')" \
    "2 5184"
out=$("$EXA" --json finops carbon record JPCP --version 4 --gpu-hours 12 --provider ccf-like)
is "another provider is its own record" \
    "$?:$(jq -r .changed <<<"$out"):$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM carbon_records WHERE model = 'JPCP' AND version = 4")" \
    "0:true:2"
out=$("$EXA" --json finops carbon record JPCP --version 4 --pue 1.2)
is "new inputs for the same key replace the row" \
    "$(jq -r '[.changed, .co2e_g] | join(" ")' <<<"$out"):$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*), sum(co2e_g), max(pue) FROM carbon_records WHERE model = 'JPCP' AND version = 4 AND provider = 'green-ai-default'")" \
    "true 2764.8:1|2764.8|1.2"

[ "$fails" -eq 0 ]
