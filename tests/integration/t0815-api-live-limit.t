#!/bin/bash
# t0815-api-live-limit.t - calls that wait on a cluster cannot take every
# thread of exa serve (redteam-s3 5): with a cluster whose ssh port
# accepts and never answers, 12 parallel queue reads get at most
# API_MAX_LIVE (4) running and 503 with Retry-After for the rest, and
# /healthz and a cheap read still answer at once.
. "$(dirname "$0")/lib.sh"
exa_test_env
. "$(dirname "$0")/lib-api.sh"
command -v curl >/dev/null && command -v jq >/dev/null && command -v python3 >/dev/null ||
    skip_all "curl, jq and python3 needed"

python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
cs = []
t0 = time.time()
s.settimeout(1)
while time.time() - t0 < 90:
    try:
        c, _ = s.accept(); cs.append(c)
    except socket.timeout:
        pass
' >"$T/bh.port" &
BH=$!
for i in $(seq 1 50); do [ -s "$T/bh.port" ] && break; sleep 0.1; done
BHPORT=$(cat "$T/bh.port")
mkdir -p "$(dirname "$EXAMLOPS_HPC_REGISTRY")"
cat >"$EXAMLOPS_HPC_REGISTRY" <<YAML
clusters:
  slow: {scheduler: slurm, transport: ssh, host: 127.0.0.1, ssh_port: $BHPORT}
YAML
ADMIN=$(mk_token alice admin)
VIEW=$(mk_token victor viewer)
api_serve
api POST /api/v1/facility/fleet/slow/approve "$ADMIN" '{"reason": "t0815"}'
is "$CODE" 200 "the slow cluster is approved"

for i in $(seq 1 12); do
    curl -s -m 60 -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $VIEW" \
        "$API_URL/api/v1/clusters/slow/queue" >"$T/qo.$i" &
    echo $! >>"$T/q.pids"
done
for i in $(seq 1 50); do
    n503=$(cat "$T"/qo.* 2>/dev/null | grep -c '^503$')
    [ "$n503" -ge 8 ] && break
    sleep 0.2
done
cat "$T"/qo.* | sort | uniq -c | sed "s/^/# /"
ok "8 of 12 queue reads were turned away at once with 503 (got $n503)" test "$n503" -ge 8
t0=$(date +%s%N)
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$API_URL/healthz")
t1=$(date +%s%N)
is "$code" 200 "healthz answers while 4 reads wait on the cluster"
ok "within 2 s (took $(((t1 - t0) / 1000000)) ms)" test $(((t1 - t0) / 1000000)) -lt 2000
api GET /api/v1/clusters "$VIEW"
is "$CODE" 200 "a cheap read answers too"
api GET /api/v1/clusters/slow/queue "$VIEW"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "503/busy" "one more queue read: 503 busy"
like "$HDRS" 'Retry-After: 5' "with Retry-After"
kill $(cat "$T/q.pids") "$BH" 2>/dev/null
for p in $(cat "$T/q.pids") "$BH"; do wait "$p" 2>/dev/null; done
done_testing
