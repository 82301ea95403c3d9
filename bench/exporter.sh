#!/bin/bash
# bench/exporter.sh - exa serve's exporter against the approach of the
# established Slurm exporters (one queue snapshot per scrape).
#
#  1. Render: /metrics for 100,000 jobs and 10,000 nodes from captured
#     output (bench/exporter_gen.py, in the exact format of exa's sinfo and
#     squeue commands, served by stand-in sinfo/squeue scripts on PATH over
#     the local transport): wall time and peak RSS (/usr/bin/time -v).
#  2. Churn: 5,000 job-state changes per second (the queue file rewritten
#     every 0.2 s) for CHURN_S seconds while a client scrapes /metrics
#     back to back; exa collects every second.
#  3. The same scrapes done the per-scrape way: each scrape runs squeue and
#     renders (`exa serve --once`, which is exactly one collection).
# Prints the figures and the ratios. Knobs: NODES, JOBS, CHURN_JOBS,
# CHURN_NODES, CHURN_RATE, CHURN_S.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail
: "${EXA:?EXA must name the exa binary}"
cd "$(dirname "$0")/.."
NODES=${NODES:-10000} JOBS=${JOBS:-100000}
CHURN_NODES=${CHURN_NODES:-2000} CHURN_JOBS=${CHURN_JOBS:-20000}
CHURN_RATE=${CHURN_RATE:-5000} CHURN_S=${CHURN_S:-20}
W=$(mktemp -d "${TMPDIR:-/tmp}/exa-bench-exporter.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
            wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

mkdir -p "$W/bin" "$W/home"
for c in sinfo squeue; do
    printf '#!/bin/sh\necho %s >> "%s/calls"\nexec cat "%s/%s.txt"\n' "$c" "$W" "$W" "$c" >"$W/bin/$c"
done
chmod +x "$W/bin/"*
export EXAMLOPS_DB="$W/platform.db" HOME="$W/home" XDG_DATA_HOME="$W/home"
export EXAMLOPS_HPC_REGISTRY="$W/clusters.yaml" PATH="$W/bin:$PATH"
"$EXA" hpc prometheus-sd >/dev/null
sqlite3 "$EXAMLOPS_DB" "INSERT INTO clusters(name,scheduler,transport,state,created_at,updated_at)
    VALUES('bench','slurm','local','PENDING','x','x')"
"$EXA" -y hpc approve bench >/dev/null # bound to the audit chain
count() { grep -c "^$1\$" "$W/calls" 2>/dev/null || true; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", (b ? a / b : 0) }'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- 1. render ----
python3 bench/exporter_gen.py "$W" "$NODES" "$JOBS"
/usr/bin/time -v "$EXA" serve --once >"$W/metrics.txt" 2>"$W/time.txt"
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$W/time.txt")
rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$W/time.txt")
series=$(grep -vc '^#' "$W/metrics.txt")
bytes=$(wc -c <"$W/metrics.txt")
sq=$(awk '/^exa_exporter_command_duration_seconds.*squeue/ {print $2}' "$W/metrics.txt")
printf 'render: %d jobs, %d nodes -> %d series, %d bytes: wall %s, peak RSS %d KiB (squeue read+parse %.3f s)\n' \
    "$JOBS" "$NODES" "$series" "$bytes" "$wall" "$rss" "$sq"

# ---- 2. churn while scraped, exa's way ----
python3 bench/exporter_gen.py "$W" "$CHURN_NODES" "$CHURN_JOBS"
: >"$W/calls"
port=$(free_port)
"$EXA" serve --listen "127.0.0.1:$port" --interval 1 >/dev/null 2>"$W/serve.err" &
pids+=($!)
for _ in $(seq 100); do curl -sf -m 1 "http://127.0.0.1:$port/healthz" | grep -qv '^ok 0$' && break; sleep 0.1; done
python3 bench/exporter_gen.py "$W" "$CHURN_NODES" "$CHURN_JOBS" --churn "$CHURN_RATE" "$CHURN_S" >"$W/changes" &
gen=$!
pids+=($gen)
: >"$W/lat"
end=$((SECONDS + CHURN_S))
while [ $SECONDS -lt $end ]; do
    curl -s -m 10 -o "$W/scrape.txt" -w '%{time_total}\n' "http://127.0.0.1:$port/metrics" >>"$W/lat"
done
wait "$gen"
changes=$(cat "$W/changes")
scrapes=$(wc -l <"$W/lat")
exa_squeue=$(count squeue)
age=$(awk '/^exa_exporter_cluster_data_age_seconds/ {print $2}' "$W/scrape.txt")
read -r p50 p99 < <(sort -n "$W/lat" | awk '{a[NR]=$1} END {print a[int(NR*0.5)+1], a[int(NR*0.99)+1]}')
printf 'churn: %d jobs, %d changes in %d s (%.0f/s): %d scrapes (%.1f/s), scrape p50 %.4f s p99 %.4f s; squeue calls %d; data age at the end %.2f s\n' \
    "$CHURN_JOBS" "$changes" "$CHURN_S" "$(div "$changes" "$CHURN_S")" "$scrapes" \
    "$(div "$scrapes" "$CHURN_S")" "$p50" "$p99" "$exa_squeue" "$age"

# ---- 3. the per-scrape way: every scrape is one squeue + render ----
: >"$W/once"
n=${PER_SCRAPE_N:-10}
for _ in $(seq "$n"); do
    /usr/bin/time -f '%e' -a -o "$W/once" "$EXA" serve --once >/dev/null
done
read -r once50 < <(sort -n "$W/once" | awk '{a[NR]=$1} END {print a[int(NR*0.5)+1]}')
printf 'per-scrape: one squeue + render per scrape: p50 %.3f s (%d runs)\n' "$once50" "$n"
printf 'ratios (per-scrape / exa): scrape latency %.0fx; squeue calls for the same %d scrapes %.1fx (%d vs %d)\n' \
    "$(div "$once50" "$p50")" "$scrapes" "$(div "$scrapes" "$exa_squeue")" \
    "$scrapes" "$exa_squeue"
