#!/bin/bash
# t0814-api-connections.t - exa serve's listener under many idle
# connections (redteam-s3 4): 1,100 half-sent requests from one address
# (127.0.0.2, a slowloris) do not stop /healthz from answering another
# (127.0.0.1): the server polls with epoll/poll rather than select()
# (which stops at 1,024 descriptors) and one address may hold at most a
# quarter of the connections.
. "$(dirname "$0")/lib.sh"
exa_test_env
. "$(dirname "$0")/lib-api.sh"
command -v curl >/dev/null && command -v python3 >/dev/null || skip_all "curl and python3 needed"
[ "$(ulimit -n)" -ge 2400 ] 2>/dev/null || ulimit -n 4096 2>/dev/null || skip_all "needs 2,400 file descriptors"

api_serve
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$API_URL/healthz")
is "$code" 200 "healthz answers"

python3 - "$API_PORT" 1100 >"$T/slow.out" 2>&1 <<'PY' &
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
cs = []
for i in range(n):
    try:
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
        s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        cs.append(s)
    except Exception as e:
        print("stopped at", i, e, flush=True)
        break
print("open", len(cs), flush=True)
time.sleep(20)
PY
SLOW=$!
for i in $(seq 1 100); do grep -q '^open' "$T/slow.out" && break; sleep 0.2; done
ok "the slow client opened its connections ($(tail -1 "$T/slow.out"))" grep -q '^open' "$T/slow.out"
t0=$(date +%s%N)
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$API_URL/healthz")
t1=$(date +%s%N)
is "$code" 200 "healthz still answers another address"
ok "within 2 s (took $(((t1 - t0) / 1000000)) ms)" test $(((t1 - t0) / 1000000)) -lt 2000
kill "$SLOW" 2>/dev/null
wait "$SLOW" 2>/dev/null
done_testing
