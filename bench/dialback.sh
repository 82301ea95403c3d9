#!/bin/bash
# dialback.sh - the dial-back workers (WORKERS.md §15) on loopback, no
# Slurm: `exa serve --worker-listen 127.0.0.1:0` and N local `exa worker`s.
#   1. noop tasks/s with 4 workers: capacity 1 (one lease and one result
#      per request: "unbatched") and capacity 32 (leases of up to 32);
#      ratio to Parsl HTEX's published 1,181 tasks/s (2019, historical);
#   2. /bin/true tasks/s with 4 workers of capacity 1, against the
#      fork+exec floor of the same count of /bin/true from one shell;
#   3. dispatch latency queued -> leased with one parked worker, tasks
#      queued one at a time by `exa task submit` (another process: the
#      engine sees them through PRAGMA data_version, polled every 100 ms);
#   4. RSS of a parked worker (VmRSS, /proc).
# Knobs: N (500 noop tasks), NTRUE (100), NLAT (20).
set -euo pipefail
: "${EXA:?EXA must name the exa binary}"
N=${N:-500}
NTRUE=${NTRUE:-100}
NLAT=${NLAT:-20}
T=$(mktemp -d "${TMPDIR:-/tmp}/exa-bench-dialback.XXXXXX")
PIDS=()
WPIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; pkill -9 -f -- "--url ${URL:-none} " 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
export EXAMLOPS_DB=$T/db/platform.db EXAMLOPS_PROVISIONERS=$T/none.json \
    EXAMLOPS_WORKER_LONGPOLL_S=2 HOME=$T
mkdir -p "$T/db"
now() { date +%s.%N; }
sql() { sqlite3 "$EXAMLOPS_DB" "$@"; }

"$EXA" serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 127.0.0.1:0 \
    >"$T/serve.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q "worker API on port" "$T/serve.log" && break; sleep 0.1; done
PORT=$(sed -n 's/.*worker API on port \([0-9]*\).*/\1/p' "$T/serve.log")
URL=http://127.0.0.1:$PORT
root=()
[ "$(id -u)" = 0 ] && root=(--allow-root)

# workers NAME COUNT CAPACITY MAXIDLE: start COUNT workers in the background
workers() {
    local i
    for i in $(seq "$2"); do
        "$EXA" worker token --worker-id "$1-$i" --ttl 600 >"$T/$1-$i.tok"
        "$EXA" worker --url "$URL" --worker-id "$1-$i" --join-token-stdin \
            --capacity "$3" --max-idle "$4" "${root[@]}" <"$T/$1-$i.tok" \
            2>/dev/null &
        PIDS+=($!)
        WPIDS+=($!)
    done
}
wait_done() { # wait_done COUNT: until that many tasks are done
    while [ "$(sql "select count(*) from tasks where state = 'done'")" -lt "$1" ]; do
        sleep 0.02
    done
}

run_noop() { # run_noop CAP: prints tasks/s
    local base t0 t1
    base=$(sql "select count(*) from tasks where state = 'done'")
    "$EXA" task submit --noop --count "$N" >/dev/null
    t0=$(now)
    workers "noop$1" 4 "$1" 1
    wait_done $((base + N))
    t1=$(now)
    wait "${WPIDS[@]}"
    WPIDS=()
    python3 -c "print(f'{$N / ($t1 - $t0):.0f}')"
}
echo "1. noop tasks, 4 workers, N=$N (includes the workers' start and registration)"
u=$(run_noop 1)
b=$(run_noop 32)
python3 - "$u" "$b" <<'PY'
import sys
u, b = float(sys.argv[1]), float(sys.argv[2])
print(f"   capacity 1 (unbatched):  {u:8.0f} tasks/s  = {u/1181:.2f} x Parsl HTEX (1,181/s)")
print(f"   capacity 32 (batched):   {b:8.0f} tasks/s  = {b/1181:.2f} x Parsl HTEX")
PY

echo "2. /bin/true tasks, 4 workers of capacity 1, N=$NTRUE"
base=$(sql "select count(*) from tasks where state = 'done'")
"$EXA" task submit --count "$NTRUE" -- /bin/true >/dev/null
t0=$(now)
workers true 4 1 1
wait_done $((base + NTRUE))
t1=$(now)
wait "${WPIDS[@]}"
WPIDS=()
t2=$(now)
for _ in $(seq "$NTRUE"); do /bin/true; done
t3=$(now)
python3 - "$NTRUE" "$t0" "$t1" "$t2" "$t3" <<'PY'
import sys
n, t0, t1, t2, t3 = int(sys.argv[1]), *map(float, sys.argv[2:])
w, f = n / (t1 - t0), n / (t3 - t2)
print(f"   exa workers: {w:7.0f} tasks/s; fork+exec floor (one shell): {f:7.0f}/s; ratio {w/f:.2f}")
PY

echo "3. dispatch latency, one parked worker, $NLAT tasks one at a time"
workers lat 1 1 30
sleep 1
first=$(($(sql "select coalesce(max(id), 0) from tasks") + 1))
for _ in $(seq "$NLAT"); do
    id=$("$EXA" task submit --noop)
    while [ "$(sql "select state from tasks where id = $id")" != done ]; do sleep 0.005; done
done
sql "select (a.leased_at - t.created_at) * 1000 from tasks t join task_attempts a on a.task_id = t.id where t.id >= $first order by 1" >"$T/lat.txt"
python3 - "$T/lat.txt" <<'PY'
import sys
v = sorted(float(x) for x in open(sys.argv[1]) if x.strip())
p = lambda q: v[min(len(v) - 1, int(q * len(v)))]
print(f"   queued -> leased: p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms (n={len(v)})")
PY

echo "4. RSS of parked workers"
workers park 4 1 30
sleep 2
rss=0
for p in $(pgrep -f "worker --url $URL --worker-id park-"); do
    r=$(awk '/VmRSS/ {print $2}' /proc/"$p"/status 2>/dev/null || echo 0)
    rss=$((rss + r))
done
echo "   4 parked workers: $((rss / 4)) KiB RSS each (VmRSS; the exa binary and libraries included)"
