#!/bin/bash
# The fleet on the real Slurm testbed (two clusters, each behind its own
# sshd "login node" on 127.0.0.1): detect over SSH, connect (host key
# pinned), place refuses PENDING clusters and follows idle GPUs after
# approval, reject blocks, a host edit in clusters.yaml returns a cluster
# to PENDING, preflight passes and fails with exit 1 for a missing
# partition, an invalid account, too many GPUs per node and a drained
# node, and a node taken down leaves placement capacity.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
KEY=$TESTBED_SSH_KEY
PA=$TESTBED_SSH_PORT_TESTA PB=$TESTBED_SSH_PORT_TESTB H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER
NA=$TESTBED_NODE_TESTA
export EXAMLOPS_HPC_REMOTE_EXA=$EXA
sa() { SLURM_CONF=$TESTBED_SLURM_CONF_TESTA "$@"; }
resume_a() { sa scontrol update nodename="$NA" state=resume >/dev/null 2>&1 || true; }
# wait_state WORD: until sinfo shows testa's node in a state matching WORD
wait_state() { for i in $(seq 1 20); do sa sinfo -h -N -n "$NA" -o %T | grep -q "$1" && return 0; sleep 0.5; done; return 1; }
jid=
trap 'resume_a; [ -n "$jid" ] && sa scancel "$jid" >/dev/null 2>&1; rm -rf "$T"' EXIT

# The testbed may be shared with other tests: expectations below are
# computed from what the clusters show, not assumed idle.
out=$("$EXA" --json hpc detect "$H" -u "$U" -k "$KEY" -p "$PA"); rc=$?
is "$rc" 0 "detect testa over ssh"
is "$(echo "$out" | jget 'd["capabilities"]["scheduler"], d["capabilities"]["total_gpus"], d["capabilities"]["accounting"]')" "slurm 4 True" "testa: slurm, 4 GPUs, accounting"
out=$("$EXA" --json hpc detect "$H" -u "$U" -k "$KEY" -p "$PB")
is "$(echo "$out" | jget 'd["capabilities"]["scheduler"], d["capabilities"]["total_gpus"]')" "slurm 2" "testb: slurm, 2 GPUs"
"$EXA" hpc detect "$H" -u "$U" -k "$KEY" -p "$PA" | grep -q "export EXAMLOPS_HPC_SCHEDULER=slurm"
ok $? "detect prints the suggested config without --verbose"
out=$("$EXA" --json hpc detect "$H" -u "$U" -k /nonexistent/key -p "$PA" 2>&1); rc=$?
is "$rc" 4 "a failed ssh is a transport error (exit 4), not 'no scheduler'"
echo "$out" | grep -q "no known scheduler"; is $? 1 "and is not reported as 'no scheduler detected'"

want_fpr=$(ssh-keyscan -p "$PA" "$H" 2>/dev/null | ssh-keygen -lf - | awk '/ED25519/ {print $2}')
out=$("$EXA" --json hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA"); rc=$?
is "$rc" 0 "connect testa"
is "$(echo "$out" | jget 'd["state"]')" PENDING "registered PENDING"
is "$(echo "$out" | jget 'd["host_key_fingerprint"]')" "$want_fpr" "the pinned host key fingerprint is ssh-keygen's"
is "$(echo "$out" | jget 'd["key_fingerprint"]')" "$(ssh-keygen -lf "$KEY.pub" | awk '{print $2}')" "the client key fingerprint is OpenSSH's"
test -s "$XDG_CONFIG_HOME/examlops/known_hosts.d/testa"; ok $? "host key pinned in known_hosts.d/testa"
"$EXA" --json hpc connect "$H" --name testb -u "$U" -k "$KEY" -p "$PB" >/dev/null; ok $? "connect testb"
is "$("$EXA" --json hpc place --gpus 1 | jget 'd["cluster"]')" None "place refuses while PENDING"
"$EXA" -y hpc approve testa >/dev/null && "$EXA" -y hpc approve testb >/dev/null; ok $? "approve both"
out=$("$EXA" --json hpc place --gpus 1 --explain)
best=$(echo "$out" | jget 'sorted([c for c in d["explain"]["candidates"] if c["fits"]], key=lambda c: (-c["idle_gpus"], -c["idle_nodes"], c["cluster"]))[0]["cluster"]')
is "$(echo "$out" | jget 'd["cluster"]')" "$best" "prefers the cluster with more idle GPUs"
is "$(echo "$out" | jget 'd["reason"]')" "$(echo "$out" | jget '"chose slurm@%s — %d/%d idle GPUs, %d/%d idle nodes" % next((c["cluster"], c["idle_gpus"], c["total_gpus"], c["idle_nodes"], c["total_nodes"]) for c in d["explain"]["candidates"] if c["rank"] == 1)')" "explains the choice"
idle_a=$(echo "$out" | jget '[c["idle_gpus"] for c in d["explain"]["candidates"] if c["cluster"]=="testa"][0]')

[ "$idle_a" -gt 0 ] || idle_a=4
jid=$(sa sbatch --parsable --account="$TESTBED_ACCOUNT" --gpus="$idle_a" -c 1 --wrap 'sleep 120')
for i in $(seq 1 60); do [ "$(sa squeue -h -j "$jid" -o %T)" = RUNNING ] && break; sleep 1; done
sleep 2
# What testa has idle now, read from slurmctld itself: configured minus
# allocated gres/gpu on IDLE and MIXED nodes (no state flags), as exa counts.
# With our job running that is 0 unless the shared testbed changed meanwhile.
live_idle() {
    sa scontrol show node -o | awk '{
        st = ""; cfg = 0; al = 0
        for (i = 1; i <= NF; i++) {
            if ($i ~ /^State=/) st = substr($i, 7)
            if ($i ~ /^CfgTRES=/ && match($i, /gres\/gpu=[0-9]+/)) cfg = substr($i, RSTART + 9, RLENGTH - 9)
            if ($i ~ /^AllocTRES=/ && match($i, /gres\/gpu=[0-9]+/)) al = substr($i, RSTART + 9, RLENGTH - 9)
        }
        if (st == "IDLE" || st == "MIXED") s += cfg - al
    } END { print s + 0 }'
}
got=$(EXAMLOPS_HPC_SNAPSHOT_MAX_AGE_S=1 "$EXA" --json hpc place --gpus 1 --explain | jget '[c["idle_gpus"] for c in d["explain"]["candidates"] if c["cluster"]=="testa"][0]')
is "$got" "$(live_idle)" "a stale snapshot is refreshed through the cluster's transport (slurmctld's idle GPUs)"
"$EXA" hpc nodes --save --cluster testa >/dev/null; ok $? "nodes --save from the cluster's own host"
is "$("$EXA" --json hpc place --gpus 1 | jget 'd["cluster"] != "testa"')" True "changes its choice when a job occupies testa's GPUs"
sa scancel "$jid"
for i in $(seq 1 30); do [ -z "$(sa squeue -h -j "$jid" -o %T 2>/dev/null)" ] && break; sleep 1; done
jid=
# A job holding 2 of testa's GPUs: `hpc gpus` names them by GRES index
# (GresUsed's IDX list) as allocated and the others idle, as sinfo does.
jid=$(sa sbatch --parsable --account="$TESTBED_ACCOUNT" --gpus=2 -c 1 --wrap 'sleep 120')
for i in $(seq 1 60); do [ "$(sa squeue -h -j "$jid" -o %T)" = RUNNING ] && break; sleep 1; done
idx_of() { # the indices of sinfo's GresUsed IDX list on testa's node, "0,1"
    sa sinfo -h -N -n "$NA" -O 'GresUsed:200' | python3 -c '
import re, sys
m = re.findall(r"IDX:([0-9,-]+)", sys.stdin.read())
out = []
for part in ",".join(m).split(","):
    if part:
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
print(",".join(map(str, sorted(out))))'
}
want=$(idx_of)
gi=$("$EXA" --json hpc gpus --cluster testa | jget '",".join(str(g["index"]) for g in d["gpus"] if g["node"]=="'"$NA"'" and g["state"]=="allocated")')
is "$gi" "$want" "hpc gpus: the GPUs GresUsed's IDX names are allocated"
others=$("$EXA" --json hpc gpus --cluster testa | jget 'sorted(set(g["state"] for g in d["gpus"] if g["node"]=="'"$NA"'" and g["state"]!="allocated"))')
[ "$want" = "0,1,2,3" ] || is "$others" "['idle']" "and the others idle, not unknown"
sa scancel "$jid"
for i in $(seq 1 30); do [ -z "$(sa squeue -h -j "$jid" -o %T 2>/dev/null)" ] && break; sleep 1; done
jid=
"$EXA" hpc nodes --save --cluster testa >/dev/null
"$EXA" hpc nodes --save --cluster testa --host "$H" -p "$PB" >/dev/null 2>&1
is $? 1 "nodes --save refuses another cluster's host"
"$EXA" hpc nodes --save --cluster nosuch >/dev/null 2>&1; is $? 1 "nodes --save refuses an unregistered cluster"

"$EXA" -y hpc reject testa -r "test" >/dev/null; ok $? "reject testa"
is "$("$EXA" --json hpc place --gpus 1 --explain | jget '[c["cluster"] for c in d["explain"]["candidates"]]')" "['testb']" "reject blocks it"
"$EXA" -y hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" >/dev/null
"$EXA" -y hpc approve testa >/dev/null; ok $? "a new connect and approval bring it back"

pf() { "$EXA" hpc preflight testa "$@" >"$T/pf.out" 2>&1; }
pf --gpus 1 --nodes 1 --partition "$TESTBED_PARTITION" --account "$TESTBED_ACCOUNT"
is $? 0 "preflight passes"
grep -q "✓ remote_exa" "$T/pf.out"; ok $? "it checked the remote exa"
pf --gpus 1 --partition nope; is $? 1 "preflight fails for a missing partition"
grep -q "✗ partition: 'nope' does not exist" "$T/pf.out"; ok $? "and says which check"
pf --gpus 1 --account nobank; is $? 1 "preflight fails for an invalid account"
# without --partition: EXAMLOPS_HPC_PARTITION, as hpc submit takes it
EXAMLOPS_HPC_PARTITION=nope pf --gpus 1; is $? 1 "EXAMLOPS_HPC_PARTITION is the partition preflight checks"
grep -q "✗ partition: 'nope' does not exist" "$T/pf.out"; ok $? "... named in the partition check"
EXAMLOPS_SLURM_PARTITION=nope pf --gpus 1; is $? 1 "... and the older EXAMLOPS_SLURM_PARTITION, as hpc submit reads it"
# neither: the partition sbatch uses, the Default=YES one (debug*)
pf --gpus 1; is $? 0 "without a partition, the default partition passes"
grep -q "✓ partition: none asked: the default partition '$TESTBED_PARTITION' (Default=YES, state UP)" "$T/pf.out"
ok $? "... and the check names it"
# SBATCH_PARTITION counts where sbatch runs: over ssh the login shell's
# environment (printenv there), not exa's own
SBATCH_PARTITION=nope pf --gpus 1; is $? 0 "exa's own SBATCH_PARTITION does not reach sbatch over ssh"
grep -q "✓ partition: none asked: the default partition" "$T/pf.out"; ok $? "... so the default partition is checked"
pf --gpus 8 --nodes 1; is $? 1 "preflight fails for too many GPUs per node"
grep -q "✗ gpus_per_node" "$T/pf.out"; ok $? "the per-node check is the one failing"
sa scontrol update nodename="$NA" state=drain reason=exa-test
wait_state drain
pf --gpus 1; is $? 1 "preflight fails for a drained node"
resume_a
wait_state idle
# ReturnToService may bring a DOWN node back when slurmd re-registers, so
# take the snapshot while sinfo still says down (retry a few times).
saved=
for i in 1 2 3 4 5; do
    sa scontrol update nodename="$NA" state=down reason=exa-test
    wait_state down || continue
    st=$("$EXA" --json hpc nodes --save --cluster testa | jget 'd["nodes"][0]["state"]')
    [ "$st" = down ] && { saved=1; break; }
done
is "$saved" 1 "snapshot taken with testa's node down"
out=$("$EXA" --json hpc capacity)
is "$(echo "$out" | jget '[c["idle_gpus"] for c in d if c["name"]=="testa"][0]')" 0 "a down node leaves placement capacity"
is "$("$EXA" --json hpc place --gpus 1 | jget 'd["cluster"] != "testa"')" True "placement avoids it"
resume_a

# A host key that no longer matches the pinned one is a transport error.
# The pinned file lives in a fresh config dir (a new known_hosts path, so
# no ssh master connection made before can be reused).
mkdir -p "$T/cfg2/examlops/known_hosts.d"
echo "[$H]:$PA ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB+3fhnQf0eWc883MdMb0NG7iLdubzSoWNj5SsGYOTZX" > "$T/cfg2/examlops/known_hosts.d/testa"
err=$(XDG_CONFIG_HOME=$T/cfg2 "$EXA" hpc gpus --cluster testa 2>&1 >/dev/null); rc=$?
is "$rc" 4 "a changed host key is exit 4"
echo "$err" | grep -q "host key for '$H' changed"; ok $? "and says the host key changed"
XDG_CONFIG_HOME=$T/cfg2 "$EXA" hpc preflight testa --gpus 1 >"$T/pf.out" 2>&1
is $? 1 "preflight fails on the changed host key"
grep -q "✗ host_key" "$T/pf.out"; ok $? "naming the host_key check"

sed -i "s/host: $H/host: localhost/" "$EXAMLOPS_HPC_REGISTRY"
is "$("$EXA" --json hpc clusters | jget '[c["state"] for c in d if c["name"]=="testb"][0]')" PENDING "editing the host in clusters.yaml returns testb to PENDING"
is "$("$EXA" --json hpc audit verify | jget 'd["ok"]')" True "the audit chain verifies"
tap_done
