#!/bin/bash
# t0061-finops-pipeline - cost and carbon from the hours a real (mock) run
# recorded: two `exa pipeline run --dummy` runs register versions 1 and 2;
# `models cost --record` twice costs both from their job rows (0 GPU-h,
# CPU-h from the measured CPU time) with the same rows each time; `carbon
# record` without hours takes the latest version's job hours.
. "$(dirname "$0")/lib.sh"
exa_test_env
unset GPU_COST_PER_HOUR CPU_COST_PER_HOUR EXAMLOPS_COST_PROVIDER \
    EXAMLOPS_CARBON_PROVIDER

for v in 1 2; do
    run_exa --json pipeline run --model JPCP --dataset PM100Dataset --dummy \
        --dataset-path "$SAMPLE"
    is "$RC" 0 "pipeline run $v exits 0"
done

# A CPU rate of 3600 USD/h makes the cost equal the CPU seconds, so the
# (tiny) measured CPU time of a dummy run gives a non-zero cost.
export CPU_COST_PER_HOUR=3600
run_exa --json models cost JPCP --record
is "$RC" 0 "models cost --record exits 0"
first=$OUT
table1=$(sqlite3 "$EXAMLOPS_DB" 'SELECT * FROM model_costs ORDER BY id')
run_exa --json models cost JPCP --record
is "$OUT" "$first" "--record twice prints the same rows"
is "$(sqlite3 "$EXAMLOPS_DB" 'SELECT * FROM model_costs ORDER BY id')" \
    "$table1" "--record twice leaves the same table"
json_ok "both versions costed" '[.[].Version] == ["1","2"]'
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM model_costs c
    JOIN model_versions mv ON mv.model = c.model AND mv.version = c.version
    JOIN jobs j ON j.id = mv.job_ref
    WHERE c.gpu_hours = 0 AND j.gpu_hours = 0 AND c.cpu_hours = j.cpu_hours
      AND j.cpu_hours > 0 AND c.job_id = j.job_id AND c.cluster = 'local'")" \
    2 "cost rows carry the job's hours: 0 GPU-h, the measured CPU-h"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM model_costs
    WHERE abs(cost_usd - cpu_hours * 3600) <= 0.00005 AND cost_usd > 0")" \
    2 "cost = cpu_hours x CPU_COST_PER_HOUR (to 4 places)"
unset CPU_COST_PER_HOUR

cpu2=$(sqlite3 "$EXAMLOPS_DB" "SELECT j.cpu_hours FROM jobs j
    JOIN model_versions mv ON mv.job_ref = j.id WHERE mv.version = 2")
run_exa --json finops carbon record JPCP
is "$RC" 0 "carbon record from the recorded hours exits 0"
json_ok "latest version, hours from its job, kWh = cpu_h x 120 W / 1000 x 1.5" \
    --argjson cpu "$cpu2" \
    '.version == 2 and .hours_from == "job" and .gpu_hours == 0
     and .cpu_hours == $cpu and ((.kwh - $cpu * 0.18) | fabs) < 1e-12 and .kwh > 0'
run_exa --json finops carbon report -m JPCP
json_ok "the report counts it" '.n == 1'
done_testing
