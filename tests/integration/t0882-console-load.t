#!/bin/bash
# t0882-console-load.t - the short form of bench/api-load.sh: 50 wrk
# connections on GET /api/v1/clusters (a viewer's Bearer token) for 5 s
# while the CLI approves and rejects clusters in the same platform.db. No
# answer other than 2xx, no socket error, every CLI write lands, and no
# "database is locked" anywhere. The figures line is echoed as a comment.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
: "${EXA:?EXA must name the exa binary}"
if ! command -v wrk >/dev/null; then echo "1..0 # SKIP wrk not installed (make test-deps)"; exit 0; fi
out=$(CONNS=50 DURATION=5 THREADS=2 timeout 120 "$ROOT/bench/api-load.sh" 2>"${TMPDIR:-/tmp}/t0882.$$.err")
rc=$?
echo "# $out"
n=0 fails=0
t() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
t "$rc" "bench/api-load.sh (50 connections, 5 s, CLI writes alongside) finds no error"
# the reason on stderr too, so that a CI log shows it
[ "$rc" -eq 0 ] || sed 's/^/# /' "${TMPDIR:-/tmp}/t0882.$$.err" | tail -40 >&2
rm -f "${TMPDIR:-/tmp}/t0882.$$.err"
echo "$out" | grep -q 'non-2xx 0, socket errors 0;'; t $? "non-2xx 0 and socket errors 0"
echo "$out" | grep -q '"database is locked" 0$'; t $? "no 'database is locked'"
echo "$out" | grep -Eq 'CLI rounds [1-9][0-9]* .*CLI failures 0'; t $? "the CLI approved and rejected at least once, without a failure"
echo "1..$n"
[ "$fails" -eq 0 ]
