#!/bin/bash
# Snapshot age and refresh on the real Slurm testbed, queue through the
# adapter, and the cluster-name rule: `hpc capacity` and `hpc place` show
# each snapshot's age (snapshot_age_s, captured_at), refresh one older than
# EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S through the cluster's connection (fresh
# counts: GPUs a running job holds are not idle), and flag it (stale: true
# plus the error) when the refresh fails; `hpc queue` lists a running job;
# bad cluster names are refused (exit 2, the rule); and with testa's pinned
# key replaced by testb's, queue, nodes --save and gpus refuse (exit 4).
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
KEY=$TESTBED_SSH_KEY PA=$TESTBED_SSH_PORT_TESTA H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER
sa() { SLURM_CONF=$TESTBED_SLURM_CONF_TESTA "$@"; }
jid=
trap '[ -n "$jid" ] && sa scancel "$jid" >/dev/null 2>&1; rm -rf "$T"' EXIT

"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" >/dev/null &&
    "$EXA" -y -q hpc approve testa >/dev/null
ok $? "connect and approve testa"

# A job holding GPUs on testa, then a snapshot that claims all idle, 1 h old.
jid=$(sa sbatch --parsable --account="$TESTBED_ACCOUNT" --gpus=2 -c 1 --job-name=exa-t0411 --wrap 'sleep 120')
for i in $(seq 1 90); do [ "$(sa squeue -h -j "$jid" -o %T)" = RUNNING ] && break; sleep 1; done
is "$(sa squeue -h -j "$jid" -o %T)" RUNNING "a 2-GPU job runs on testa"
seed_nodes testa "$TESTBED_NODE_TESTA idle 4 0"
sqlite3 "$EXAMLOPS_DB" "UPDATE nodes SET captured_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-3600 seconds') WHERE cluster = 'testa'"

out=$("$EXA" --json hpc capacity --no-refresh)
is "$(echo "$out" | jget '[(c["idle_gpus"], c["stale"], c["snapshot_age_s"] >= 3600) for c in d if c["name"]=="testa"][0]')" "(4, True, True)" "capacity --no-refresh shows the 1 h old snapshot as stale"
# The testbed is shared: other tests may hold GPUs too, so the fresh
# count is what a probe sees now (at most 2 idle while our job runs).
fresh() { "$EXA" --json hpc nodes --cluster testa | jget 'sum(max(n["gpus"] - max(n["gpus_used"], 0), 0) for n in d["nodes"] if n["state"] in ("idle", "mixed"))'; }
out=$("$EXA" --json hpc capacity); want=$(fresh)
is "$(echo "$out" | jget '[(c["idle_gpus"], c["total_gpus"], c["stale"], c["snapshot_age_s"] < 60, c["stale_error"]) for c in d if c["name"]=="testa"][0]')" "($want, 4, False, True, None)" "capacity refreshes it: $want of 4 GPUs idle (a probe's count), seconds old"
[ "$want" -le 2 ]; ok $? "not the snapshot's 4: the running job's GPUs are in use"
cap=$(echo "$out" | jget '[c["captured_at"] for c in d if c["name"]=="testa"][0]')
is "$cap" "$(sqlite3 "$EXAMLOPS_DB" "SELECT min(captured_at) FROM nodes WHERE cluster='testa'")" "captured_at is the stored snapshot time"
"$EXA" hpc capacity | grep -Eq "testa .* [0-9]+ s"
ok $? "the text table shows the age in seconds"

seed_nodes testa "$TESTBED_NODE_TESTA idle 4 0"
sqlite3 "$EXAMLOPS_DB" "UPDATE nodes SET captured_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-3600 seconds') WHERE cluster = 'testa'"
out=$("$EXA" --json hpc place --gpus 1 --explain); want=$(fresh)
is "$(echo "$out" | jget '[(c["idle_gpus"], c["stale"], c["snapshot_age_s"] < 60, c["captured_at"] is not None) for c in d["explain"]["candidates"] if c["cluster"]=="testa"][0]')" "($want, False, True, True)" "place refreshes the stale snapshot: $want/4 idle, not 4/4"
"$EXA" hpc place --gpus 1 | grep -Eq "testa .*[0-2]/4"
ok $? "place's table says at most 2/4 idle GPUs"

# A refresh that fails (host key no longer the pinned one) flags the snapshot.
sqlite3 "$EXAMLOPS_DB" "UPDATE nodes SET captured_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-3600 seconds') WHERE cluster = 'testa'"
mkdir -p "$T/cfg2/examlops/known_hosts.d"
echo "[$H]:$PA ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB+3fhnQf0eWc883MdMb0NG7iLdubzSoWNj5SsGYOTZX" > "$T/cfg2/examlops/known_hosts.d/testa"
cp "$EXAMLOPS_HPC_REGISTRY" "$T/cfg2/examlops/clusters.yaml"
out=$(XDG_CONFIG_HOME=$T/cfg2 EXAMLOPS_HPC_REGISTRY=$T/cfg2/examlops/clusters.yaml "$EXA" --json hpc capacity 2>/dev/null)
is "$(echo "$out" | jget '[(c["stale"], c["snapshot_age_s"] >= 3600, "host key" in (c["stale_error"] or "")) for c in d if c["name"]=="testa"][0]')" "(True, True, True)" "a failed refresh is flagged: stale, old age, and the error"
out=$(XDG_CONFIG_HOME=$T/cfg2 EXAMLOPS_HPC_REGISTRY=$T/cfg2/examlops/clusters.yaml "$EXA" --json hpc place --gpus 1 2>/dev/null)
is "$(echo "$out" | jget '[(c["stale"], c["stale_error"] is not None) for c in d["candidates"] if c["name"]=="testa"][0]')" "(True, True)" "and in place"

# hpc queue goes through the adapter's queue op over testa's transport.
out=$("$EXA" --json hpc queue --cluster testa)
is "$(echo "$out" | jget '[(j["state"], j["name"], j["nodes"]) for j in d["jobs"] if j["job_id"]=="'"$jid"'"][0]')" "('RUNNING', 'exa-t0411', 1)" "queue lists the running job"
sa scancel "$jid"; jid=

# The cluster-name rule, wherever a name enters: exit 2 and the rule.
rule='[A-Za-z0-9][A-Za-z0-9._-]{0,62}'
long=$(printf 'a%.0s' $(seq 1 300))
for bad in "testa " "$(printf 'te\nsta')" "te'sta" "$(printf 'te\tsta')" "$long"; do
    err=$("$EXA" hpc queue --cluster "$bad" 2>&1 >/dev/null); rc=$?
    is "$rc:$(echo "$err" | wc -l):$(echo "$err" | grep -cF "expected $rule")" "2:1:1" "queue --cluster $(printf %q "${bad:0:20}"): exit 2, one line, the rule"
done
err=$(EXAMLOPS_HPC_CLUSTER="testa " "$EXA" hpc queue 2>&1); rc=$?
is "$rc" 2 "EXAMLOPS_HPC_CLUSTER with a trailing space: exit 2"
echo "$err" | grep -q "(from EXAMLOPS_HPC_CLUSTER)"; ok $? "and names the variable"
"$EXA" hpc connect "$H" --name "bad name" -u "$U" -k "$KEY" -p "$PA" >/dev/null 2>&1
is $? 2 "connect --name 'bad name': exit 2"
"$EXA" hpc nodes --cluster "te\"sta" >/dev/null 2>&1; is $? 2 "nodes --cluster with a quote: exit 2"
"$EXA" hpc preflight "$long" >/dev/null 2>&1; is $? 2 "preflight with a 300-character name: exit 2"
"$EXA" hpc prometheus-sd --cluster "$(printf 'a\tb')" >/dev/null 2>&1; is $? 2 "prometheus-sd --cluster with a tab: exit 2"
"$EXA" hpc status 1 --cluster "$(printf 'te\nsta')" >/dev/null 2>&1; is $? 2 "status --cluster with a newline (through the gate): exit 2"
EXAMLOPS_HPC_CLUSTER="te'sta" "$EXA" hpc submit /dev/null >/dev/null 2>&1; is $? 2 "submit with EXAMLOPS_HPC_CLUSTER holding a quote: exit 2"
is "$("$EXA" --json hpc clusters | jget 'len(d)')" 1 "nothing was registered"
printf 'clusters:\n  "bad name":\n    host: localhost\n' > "$T/bad.yaml"
err=$(EXAMLOPS_HPC_REGISTRY=$T/bad.yaml "$EXA" hpc clusters 2>&1); rc=$?
is "$rc" 3 "clusters.yaml with a bad name: exit 3 (configuration)"
echo "$err" | grep -qF "invalid cluster name 'bad name'"; ok $? "naming the name and the file"

# The pinned key of ACTIVE testa replaced by testb's: every read path
# (queue, nodes --save, gpus, and the capacity refresh) refuses through
# the gate with exit 4, naming both fingerprints.
PB=$TESTBED_SSH_PORT_TESTB
kh=$XDG_CONFIG_HOME/examlops/known_hosts.d/testa
fa=$(ssh-keygen -lf "$kh" | awk '/ED25519/ {print $2}')
ssh-keyscan -p "$PB" -- "$H" 2>/dev/null | sed "s/^\[$H\]:$PB/[$H]:$PA/" > "$kh"
fb=$(ssh-keygen -lf "$kh" | awk '/ED25519/ {print $2}')
[ -n "$fa" ] && [ -n "$fb" ] && [ "$fa" != "$fb" ]; ok $? "testa's pin now holds testb's key"
for cmd in "hpc queue --cluster testa" "hpc nodes --save --cluster testa" "hpc gpus --cluster testa"; do
    err=$("$EXA" $cmd 2>&1 >/dev/null); rc=$?
    is "$rc:$(echo "$err" | grep -cF "$fa"):$(echo "$err" | grep -cF "$fb")" "4:1:1" "$cmd: exit 4 naming both fingerprints"
done
tap_done
