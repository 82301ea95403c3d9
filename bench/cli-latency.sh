#!/bin/bash
# cli-latency.sh - how much slower than doing nothing is exa to start?
#
# Runs, N times each and interleaved so machine noise hits all alike:
#   /bin/true                      the floor: fork + exec of a no-op
#   exa --version                  exa's own start-up
#   exa --json hpc jobs            open platform.db (WAL, migrations
#                                  checked), read 20 of 1,000 jobs, print
#                                  JSON
#   exa --json hpc jobs --limit 0  the same over all 1,000 jobs
# and prints the mean wall time of each and its ratio to /bin/true.
# The 1,000 jobs are inserted with sqlite3 into a private temporary DB.
# With EXA_BEFORE set (another build of exa, e.g. main's), its three
# cases run in the same loop, interleaved with the others, so a before
# and after are measured side by side under the same load.
#
#   EXA=build/exa N=200 [EXA_BEFORE=/tmp/exa-main] bench/cli-latency.sh
set -euo pipefail
EXA=${EXA:-build/exa}
N=${N:-200}
command -v sqlite3 >/dev/null || { echo "cli-latency: needs sqlite3" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/exa-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export EXAMLOPS_DB="$T/platform.db" XDG_DATA_HOME="$T/data" HOME="$T"

# creates and migrates the schema: with EXA_BEFORE, the older build does
# (a build refuses a database of a newer schema than its own), and it
# reads its own copy of the jobs (before.db) while EXA migrates the other
"${EXA_BEFORE:-$EXA}" hpc jobs >/dev/null
fmt="INSERT INTO jobs (cluster, scheduler, job_id, run_uuid, model, dataset,\
 state, exit_code, start_time, end_time, run_seconds, cpu_seconds, nodes,\
 gpus, cpus, gpu_hours, created_at, updated_at) VALUES ('c%d', 'slurm',\
 '%d', '%012x', 'JPCP', 'PM100Dataset', 'COMPLETED', 0,\
 '2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z', 3600.0, 7100.5, 2, 8, 64,\
 8.0, '2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z');\n"
{
    echo "BEGIN;"
    for i in $(seq 1 1000); do
        # shellcheck disable=SC2059
        printf "$fmt" $((i % 3)) "$i" "$i"
    done
    echo "COMMIT;"
} | sqlite3 -bail "$EXAMLOPS_DB"
[ "$(sqlite3 "$EXAMLOPS_DB" 'SELECT count(*) FROM jobs')" = 1000 ]
if [ -n "${EXA_BEFORE:-}" ]; then
    sqlite3 "$EXAMLOPS_DB" ".backup '$T/before.db'"
    [ "$(EXAMLOPS_DB=$T/before.db "$EXA_BEFORE" --json hpc jobs --limit 0 |
        jq length)" = 1000 ]
fi
[ "$("$EXA" --json hpc jobs --limit 0 | jq length)" = 1000 ]

names=("/bin/true" "exa --version" "exa --json hpc jobs"
       "exa --json hpc jobs --limit 0")
cases=(0 1 2 3)
if [ -n "${EXA_BEFORE:-}" ]; then
    names+=("before: exa --version" "before: exa --json hpc jobs"
            "before: ... --limit 0")
    cases+=(4 5 6)
fi
run_case() {
    case $1 in
    0) /bin/true ;;
    1) "$EXA" --version ;;
    2) "$EXA" --json hpc jobs ;;
    3) "$EXA" --json hpc jobs --limit 0 ;;
    4) "$EXA_BEFORE" --version ;;
    5) EXAMLOPS_DB=$T/before.db "$EXA_BEFORE" --json hpc jobs ;;
    6) EXAMLOPS_DB=$T/before.db "$EXA_BEFORE" --json hpc jobs --limit 0 ;;
    esac >/dev/null
}
declare -a total=(0 0 0 0 0 0 0)
# $EPOCHREALTIME (bash 5, microseconds) reads the clock without a fork,
# so the timer adds nothing measurable to the /bin/true floor.
for _ in $(seq 1 "$N"); do
    for c in "${cases[@]}"; do
        t0=${EPOCHREALTIME/[.,]/}
        run_case "$c"
        t1=${EPOCHREALTIME/[.,]/}
        total[c]=$((total[c] + (10#$t1 - 10#$t0) * 1000))
    done
done
base=${total[0]}
printf '%-32s %10s %8s\n' "command ($N runs, 1000 jobs)" "mean ms" "ratio"
for c in "${cases[@]}"; do
    awk -v n="${names[c]}" -v t="${total[c]}" -v b="$base" -v r="$N" \
        'BEGIN { printf "%-32s %10.3f %7.2fx\n", n, t / r / 1e6, t / b }'
done
