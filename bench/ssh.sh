#!/bin/bash
# bench/ssh.sh - 100 commands over one ControlMaster connection (what the
# ssh transport does: ControlMaster=auto, ControlPersist=60) against a
# fresh ssh connection per command, on the testbed's loopback sshd. Also
# 100 `exa hpc status` runs over the ssh transport, end to end.
# Skips when the testbed is not running (TESTBED_ROOT unset).
set -eu
cd "$(dirname "$0")/.."
: "${EXA:=$PWD/build/exa}"
if [ -z "${TESTBED_ROOT:-}" ] && [ -s /tmp/exa-testbed/env.sh ]; then
    . /tmp/exa-testbed/env.sh
fi
if [ -z "${TESTBED_ROOT:-}" ]; then
    echo "bench/ssh.sh: skipped (testbed not running)"
    exit 0
fi
N=100
tmp=$(mktemp -d /tmp/exa-bench-ssh.XXXXXX)
cm=$tmp/cm
mkdir -m 700 "$cm"
base=(ssh -o BatchMode=yes -o StrictHostKeyChecking=yes
    -o GlobalKnownHostsFile=/dev/null -o "UserKnownHostsFile=$TESTBED_SSH_KNOWN_HOSTS"
    -o LogLevel=ERROR -p "$TESTBED_SSH_PORT" -i "$TESTBED_SSH_KEY" -o IdentitiesOnly=yes
    -l "$TESTBED_SSH_USER")
mux=(-o ControlMaster=auto -o "ControlPath=$cm/%C" -o ControlPersist=60)
cleanup() {
    "${base[@]}" "${mux[@]}" -O exit "$TESTBED_SSH_HOST" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
ms() { echo $(( $(date +%s%N) / 1000000 )); }

t0=$(ms)
for _ in $(seq $N); do "${base[@]}" -o ControlMaster=no -o ControlPath=none "$TESTBED_SSH_HOST" true; done
t1=$(ms)
for _ in $(seq $N); do "${base[@]}" "${mux[@]}" "$TESTBED_SSH_HOST" true; done
t2=$(ms)
fresh=$((t1 - t0)); reuse=$((t2 - t1))
echo "$N commands, fresh ssh each:     ${fresh} ms ($((fresh * 1000 / N)) us/command)"
echo "$N commands, one ControlMaster:  ${reuse} ms ($((reuse * 1000 / N)) us/command)"
echo "ratio:                           $(awk "BEGIN { printf \"%.1f\", $fresh / ($reuse > 0 ? $reuse : 1) }")x"

export HOME=$tmp XDG_DATA_HOME=$tmp/data EXAMLOPS_DB=$tmp/p.db
export EXAMLOPS_HPC_SCHEDULER=slurm EXAMLOPS_HPC_TRANSPORT=ssh
export EXAMLOPS_HPC_SSH_HOST=$TESTBED_SSH_HOST EXAMLOPS_HPC_SSH_PORT=$TESTBED_SSH_PORT
export EXAMLOPS_HPC_SSH_USER=$TESTBED_SSH_USER EXAMLOPS_HPC_SSH_KEY=$TESTBED_SSH_KEY
export EXAMLOPS_HPC_SSH_KNOWN_HOSTS=$TESTBED_SSH_KNOWN_HOSTS
t3=$(ms)
for _ in $(seq $N); do "$EXA" hpc status 1 > /dev/null; done
t4=$(ms)
echo "$N x 'exa hpc status' over ssh:  $((t4 - t3)) ms ($(( (t4 - t3) * 1000 / N )) us/run, squeue+sacct each)"
