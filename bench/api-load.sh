#!/bin/bash
# bench/api-load.sh - exa serve's REST API under load while the CLI writes
# the same platform.db (issue 10, "Load").
#
# wrk(1) keeps CONNS connections (default 200) busy on GET
# /api/v1/clusters with a viewer's Bearer token for DURATION seconds
# (default 30), with --latency. Meanwhile a loop of the CLI writes the
# same platform.db: each round registers a fresh PENDING cluster, approves
# it (`exa -y hpc approve`) and rejects it (`exa -y hpc reject -r`), one
# transaction each, then drops its row (so the list keeps 8 clusters),
# until wrk is done.
#
# Prints the figures as one line starting "api-load:" (requests/s, p50,
# p90, p99, non-2xx, socket errors, CLI rounds and failures) and exits 1
# when anything failed: a non-2xx answer, a socket error (connect, read,
# write, timeout), a CLI command that failed, or "database is locked"
# anywhere in the CLI's or the server's output. Knobs: CONNS, DURATION,
# THREADS (wrk threads, default 4), WRK_TIMEOUT (default 5s). Talks only to
# 127.0.0.1; the server listens on a free port (port 0).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail
: "${EXA:?EXA must name the exa binary}"
cd "$(dirname "$0")/.."
CONNS=${CONNS:-200} DURATION=${DURATION:-30} THREADS=${THREADS:-4}
WRK_TIMEOUT=${WRK_TIMEOUT:-5s}
command -v wrk >/dev/null || { echo "api-load: wrk is not installed (make test-deps)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/exa-bench-api.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$W"
}
trap cleanup EXIT

mkdir -p "$W/home"
export EXAMLOPS_DB="$W/platform.db" HOME="$W/home" XDG_DATA_HOME="$W/home" \
    XDG_CONFIG_HOME="$W/home/.config" EXAMLOPS_HPC_REGISTRY="$W/clusters.yaml"
unset EXAMLOPS_ACTOR EXAMLOPS_HPC_CLUSTER
"$EXA" hpc prometheus-sd >/dev/null # creates and migrates platform.db

# pending NAME: a PENDING cluster row over the local transport, as the
# other benches and the t05xx tests make them (approve binds it to the
# audit chain)
pending() {
    sqlite3 -cmd '.timeout 10000' "$EXAMLOPS_DB" \
        "INSERT INTO clusters(name,scheduler,transport,state,created_at,updated_at)
         VALUES('$1','slurm','local','PENDING','2026-01-01T00:00:00Z','2026-01-01T00:00:00Z')"
}
for i in $(seq 1 8); do
    pending "site$i"
    "$EXA" -y hpc approve "site$i" >/dev/null
done
TOKEN=$("$EXA" auth token create --user bench-viewer --role viewer 2>/dev/null)

"$EXA" serve --listen 127.0.0.1:0 --interval 600 >"$W/serve.out" 2>"$W/serve.err" &
pids+=($!)
port=
for _ in $(seq 300); do # 30 s at most: a loaded CI machine starts slowly
    port=$(sed -n 's/.*port \([0-9][0-9]*\).*/\1/p' "$W/serve.out" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "api-load: exa serve did not start in 30 s" >&2; cat "$W/serve.err" >&2; exit 1; }
URL=http://127.0.0.1:$port/api/v1/clusters
code=$(curl -s -m 20 -o "$W/first.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$URL")
if [ "$code" != 200 ] || ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if "site1" in json.dumps(d) else 1)' "$W/first.json"; then
    echo "api-load: GET /api/v1/clusters answered $code, not the cluster list" >&2
    head -c 500 "$W/first.json" >&2
    exit 1
fi
code=$(curl -s -m 20 -o /dev/null -w '%{http_code}' "$URL")
[ "$code" = 401 ] || { echo "api-load: without a token GET /api/v1/clusters answered $code, not 401" >&2; exit 1; }

# the CLI writer: register, approve, reject until told to stop
: >"$W/cli.log"
(
    r=0 bad=0
    while [ ! -e "$W/stop" ]; do
        r=$((r + 1))
        n="load$r"
        pending "$n" >>"$W/cli.log" 2>&1 || bad=$((bad + 1))
        "$EXA" -y hpc approve "$n" >>"$W/cli.log" 2>&1 || bad=$((bad + 1))
        "$EXA" -y hpc reject "$n" -r "load round $r" >>"$W/cli.log" 2>&1 || bad=$((bad + 1))
        # the rejected row goes (its audit events stay), so the list wrk
        # reads keeps its size: the load stays the same for the whole run
        sqlite3 -cmd '.timeout 10000' "$EXAMLOPS_DB" "DELETE FROM clusters WHERE name='$n'" \
            >>"$W/cli.log" 2>&1 || bad=$((bad + 1))
    done
    echo "$r $bad" >"$W/cli.count"
) &
writer=$!
pids+=("$writer")

wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --timeout "$WRK_TIMEOUT" --latency \
    -H "Authorization: Bearer $TOKEN" "$URL" >"$W/wrk.txt" 2>&1 || true
touch "$W/stop"
wait "$writer" || true
read -r rounds clibad <"$W/cli.count"

cat "$W/wrk.txt" | sed 's/^/# /' >&2
rps=$(awk '/^Requests\/sec:/ {print $2}' "$W/wrk.txt")
total=$(awk '/requests in/ {print $1}' "$W/wrk.txt")
lat() { awk -v p="$1" '$1 == p {print $2}' "$W/wrk.txt"; }
p50=$(lat 50%) p90=$(lat 90%) p99=$(lat 99%)
non2xx=$(awk -F': ' '/Non-2xx or 3xx responses/ {print $2}' "$W/wrk.txt")
non2xx=${non2xx:-0}
# "Socket errors: connect 0, read 0, write 0, timeout 0" (absent when none)
sockerr=$(awk '/Socket errors/ {gsub(/,/, ""); print $4 + $6 + $8 + $10}' "$W/wrk.txt")
sockerr=${sockerr:-0}
locked=$(cat "$W/cli.log" "$W/serve.err" "$W/serve.out" | grep -ci "database is locked" || true)
# every round's approve and reject are in the audit log
state=$(sqlite3 -cmd '.timeout 10000' "$EXAMLOPS_DB" \
    "SELECT count(*) FROM audit_events WHERE target LIKE 'load%' AND action='cluster_rejected'")

printf 'api-load: %s conns, %ss: %s requests, %s req/s, latency p50 %s p90 %s p99 %s; non-2xx %s, socket errors %s; CLI rounds %s (approve+reject, %s rejections in the audit log), CLI failures %s, "database is locked" %s\n' \
    "$CONNS" "$DURATION" "${total:-?}" "${rps:-?}" "${p50:-?}" "${p90:-?}" "${p99:-?}" \
    "$non2xx" "$sockerr" "$rounds" "$state" "$clibad" "$locked"
fail=0
[ -n "$total" ] && [ "$total" -gt 0 ] || { echo "api-load: wrk made no requests" >&2; fail=1; }
[ "$non2xx" -eq 0 ] || { echo "api-load: $non2xx answers were not 2xx" >&2; fail=1; }
[ "$sockerr" -eq 0 ] || { echo "api-load: $sockerr socket errors" >&2; fail=1; }
[ "$clibad" -eq 0 ] || { echo "api-load: $clibad CLI commands failed" >&2; sed 's/^/# /' "$W/cli.log" | tail -20 >&2; fail=1; }
[ "$locked" -eq 0 ] || { echo "api-load: 'database is locked' seen $locked times" >&2; fail=1; }
[ "$rounds" -gt 0 ] && [ "$state" -eq "$rounds" ] || { echo "api-load: the CLI writes did not all land ($state of $rounds)" >&2; fail=1; }
exit "$fail"
