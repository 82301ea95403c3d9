#!/bin/bash
# t0202-fake-flux.t - the fake `flux` (tests/fakes/flux) replays the
# capture named by its subcommand byte for byte, logs each call, honours
# .rc/.err, and what it replays parses with exa's own Flux parsers to the
# exact ids, states and numbers of the fixtures.
set -u
cd "$(dirname "$0")/../.."
: "${EXA:=$PWD/build/exa}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/xdg" EXAMLOPS_DB="$tmp/exa.db"
mkdir -p "$HOME" "$XDG_DATA_HOME" "$tmp/caps"
cp tests/fixtures/flux/* "$tmp/caps/"
cp tests/fixtures/flux/jobs-default.txt "$tmp/caps/jobs"
export FAKE_FLUX_DIR="$tmp/caps" FAKE_FLUX_LOG="$tmp/log"
FLUX=tests/fakes/flux
echo "1..12"
n=0
fails=0
is() { # is GOT WANT NAME
    n=$((n + 1))
    if [ "$1" = "$2" ]; then echo "ok $n - $3"; else
        echo "not ok $n - $3"; echo "#   got: '$1'"; echo "#  want: '$2'"; fails=$((fails + 1)); fi
}
py() { python3 -c "$1"; }

# flux jobs -> "jobs": replayed unchanged, exit 0, parsed to the fixture's rows
$FLUX jobs -a -o '{id} {status}' > "$tmp/jobs.out"
is "$?/$(cmp -s "$tmp/jobs.out" tests/fixtures/flux/jobs-default.txt && echo same)" "0/same" \
    "flux jobs replays the capture byte for byte, exit 0"
is "$($EXA debug parse flux-jobs < "$tmp/jobs.out" | py '
import json, sys
for j in json.load(sys.stdin)["jobs"]:
    print(j["id"], j["state"], j["raw_state"], j["elapsed_s"], j["user"], j["ntasks"], j["nnodes"], ",".join(j.get("nodelist") or []))')" \
"ƒHxn7Bw3 RUNNING R 4500.0 alice 8 2 gpu1,gpu2
ƒHxm2Kq9 PENDING S None alice 1 None 
ƒHxk1Aa1 COMPLETED CD 121.02 bob 1 1 gpu3" "jobs parse to the exact ids, states and numbers"

# flux job eventlog -p exec ID -> job-eventlog.ID (the -p argument is not the id)
printf '1700000000.5 submit userid=1\n' > "$tmp/caps/job-eventlog.ƒABC"
is "$($FLUX job eventlog -p exec "ƒABC" | $EXA debug parse flux-eventlog | py '
import json, sys
d = json.load(sys.stdin); s = d["summary"]
print(len(d["events"]), d["events"][0]["name"], d["events"][0]["context"], s["flux_state"], s["state"], s["submit"], s["start"])')" \
    "1 submit {'userid': 1} DEPEND PENDING 1700000000.5 None" \
    "job eventlog picks the per-id capture; it parses to one submit event, DEPEND"
# another id falls back to job-eventlog(.txt)
$FLUX job eventlog "ƒOTHER" > "$tmp/ev.out"
is "$?/$(cmp -s "$tmp/ev.out" tests/fixtures/flux/job-eventlog.txt && echo same)" "0/same" \
    "an id without its own capture gets job-eventlog.txt"

# flux job info ID R -> job-info-R(.json), unchanged
$FLUX job info "ƒABC" R > "$tmp/R.out"
is "$?/$(cmp -s "$tmp/R.out" tests/fixtures/flux/job-info-R.json && echo same)" "0/same" \
    "job info ID R replays job-info-R.json"

# flux resource list -> resource-list(.txt), parsed to exact groups and nodes
is "$($FLUX resource list -o '{state} {nodelist}' | $EXA debug parse flux-resource | py '
import json, sys
d = json.load(sys.stdin)
print(" ".join("%s:%s:%s:%s" % (g["state"], g["nnodes"], g["ncores"], g["ngpus"]) for g in d["groups"]))
print(" ".join(n["name"] + ":" + n["state"] for n in d["nodes"]))')" \
"free:2:72:4 allocated:2:96:8 down:1:48:4
gpu3:idle gpu4:idle gpu1:allocated gpu2:allocated gpu5:down" \
    "resource list parses to the exact groups and node states"

# .rc and .err: exit status and stderr come from the capture's side files
cp "$tmp/caps/resource-list.txt" "$tmp/caps/resource-list"
echo 3 > "$tmp/caps/resource-list.rc"
printf 'flux-resource: partial answer\n' > "$tmp/caps/resource-list.err"
$FLUX resource list > "$tmp/rl.out" 2> "$tmp/rl.err"
rc=$?
is "$rc" 3 "exit status from resource-list.rc"
is "$(cmp -s "$tmp/rl.out" tests/fixtures/flux/resource-list.txt && echo same)/$(cat "$tmp/rl.err")" \
    "same/flux-resource: partial answer" "stdout is the capture, stderr is resource-list.err"

# a missing capture: 127 and a message naming the key, nothing on stdout
$FLUX queue status > "$tmp/q.out" 2> "$tmp/q.err"
rc=$?
is "$rc" 127 "missing capture exits 127"
is "$(cat "$tmp/q.err")/$(wc -c < "$tmp/q.out")" "flux-fake: no capture queue-status/0" \
    "missing capture names queue-status on stderr"

# flux cancel -> "cancel": .rc replays a refusal
printf 'flux-cancel: ƒNOPE: unknown job id\n' > "$tmp/caps/cancel.err"
: > "$tmp/caps/cancel"
echo 1 > "$tmp/caps/cancel.rc"
$FLUX cancel "ƒNOPE" > /dev/null 2> "$tmp/c.err"
is "$?/$(cat "$tmp/c.err")" "1/flux-cancel: ƒNOPE: unknown job id" "cancel replays its refusal and exit 1"

# every call logged, in order, arguments joined by single spaces
is "$(cat "$tmp/log")" "jobs -a -o {id} {status}
job eventlog -p exec ƒABC
job eventlog ƒOTHER
job info ƒABC R
resource list -o {state} {nodelist}
resource list
queue status
cancel ƒNOPE" "every call is logged exactly"
exit $((fails > 0))
