#!/bin/bash
# t0202-fake-flux.t - the fake `flux` (tests/fakes/flux) replays the
# capture named by its subcommand, logs each call, honours .rc/.err, and
# what it replays parses with exa's own Flux parsers.
set -u
cd "$(dirname "$0")/../.."
: "${EXA:=$PWD/build/exa}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/xdg" EXAMLOPS_DB="$tmp/exa.db"
mkdir -p "$HOME" "$XDG_DATA_HOME" "$tmp/caps"
cp tests/fixtures/flux/* "$tmp/caps/"
cp tests/fixtures/flux/jobs-default.txt "$tmp/caps/jobs"
printf 'JobID 999 unknown\n' > "$tmp/caps/jobs.999"
export FAKE_FLUX_DIR="$tmp/caps" FAKE_FLUX_LOG="$tmp/log"
FLUX=tests/fakes/flux
echo "1..7"
n=0
t() { n=$((n + 1)); if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fi; }

out=$($FLUX jobs -a -o '{id} {status}' | $EXA debug parse flux-jobs)
t "jobs replayed and parsed" '[ "$(echo "$out" | python3 -c "import json,sys; print(len(json.load(sys.stdin)[\"jobs\"]))")" = 3 ]'
printf '1700000000.5 submit userid=1\n' > "$tmp/caps/job-eventlog.ƒABC"
out=$($FLUX job eventlog -p exec "ƒABC" | $EXA debug parse flux-eventlog)
t "job eventlog per id, -p argument not taken as the id" \
  'echo "$out" | grep -q "\"flux_state\": \"DEPEND\""'
out=$($FLUX job info "ƒABC" R)
t "job info KEY picks job-info-R" 'echo "$out" | grep -q R_lite'
out=$($FLUX resource list -o '{state} {nodelist}' | $EXA debug parse flux-resource)
t "resource list replayed and parsed" \
  '[ "$(echo "$out" | python3 -c "import json,sys; print(len(json.load(sys.stdin)[\"nodes\"]))")" = 5 ]'
cp "$tmp/caps/resource-list.txt" "$tmp/caps/resource-list"
echo 3 > "$tmp/caps/resource-list.rc"
$FLUX resource list >/dev/null 2>&1; rc=$?
t "exit status from .rc" '[ $rc = 3 ]'
$FLUX queue status > /dev/null 2> "$tmp/err"; rc=$?
t "missing capture exits 127" '[ $rc = 127 ] && grep -q "no capture queue-status" "$tmp/err"'
t "every call logged" '[ "$(wc -l < "$tmp/log")" = 6 ] && grep -q "^job eventlog -p exec ƒABC$" "$tmp/log"'
