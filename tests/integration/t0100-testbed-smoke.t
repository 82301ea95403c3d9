#!/bin/bash
# t0100-testbed-smoke.t - the real Slurm testbed answers as documented.
#
# Every later testbed test leans on these facts: both clusters report their
# own node and GRES, a job with the testbed account runs and reaches
# accounting, an unknown account is refused (associations are enforced),
# each login node's sshd runs the Slurm commands of its own cluster, host
# keys are checked strictly, and Prometheus is up when the testbed has it.
# Skips when the testbed is not running (TESTBED_ROOT unset).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
. "$here/lib.sh"
# shellcheck source-path=SCRIPTDIR
. "$here/lib-testbed.sh"
require_testbed
[ "$TESTBED_CLUSTERS" = "testa testb" ] ||
    skip_all "needs the default clusters 'testa testb', not '$TESTBED_CLUSTERS'"
exa_test_env
tmp=$T

plan 21

# --- both clusters, each with its own node, CPUs, memory and GPUs
is "$(tb_slurm testa sinfo -h -N -o '%N|%c|%m|%G|%P')" \
    "testa-n1|4|8000|gpu:a100:4|debug*" "sinfo on testa: node, cpus, memory, gres, default partition"
is "$(tb_slurm testb sinfo -h -N -o '%N|%c|%m|%G|%P')" \
    "testb-n1|8|16000|gpu:h100:2|debug*" "sinfo on testb: node, cpus, memory, gres, default partition"
st=$(tb_slurm testa sinfo -h -N -o %t)
like "$st" '^(idle|mix|alloc)$' "node testa-n1 is usable (state '$st')"
is "$(tb_slurm testb scontrol show config | awk '$1 == "ClusterName" { print $3 }')" \
    testb "scontrol on testb reports ClusterName testb"

# --- a job with the testbed account runs and is in accounting
id=$(tb_sbatch testa --account="$TESTBED_ACCOUNT" --job-name=t0100-hi \
    --output="$tmp/hi.%j.out" --wrap 'echo hi')
like "$id" '^[0-9]+$' "sbatch --account=$TESTBED_ACCOUNT on testa gives a job id"
case $id in '' | *[!0-9]*) id=0 ;; esac
ok "job $id reaches COMPLETED in sacct within 60 s" tb_wait_state testa "$id" COMPLETED 60
is "$(tb_slurm testa sacct -X -n -P -j "$id" -o JobID,JobName,State,ExitCode,Account,Cluster)" \
    "$id|t0100-hi|COMPLETED|0:0|$TESTBED_ACCOUNT|testa" "sacct line of job $id"
is "$(cat "$tmp/hi.$id.out" 2>/dev/null)" "hi" "the job wrote 'hi' to its output file"

# a job on testb lands in testb's accounting, not testa's
# shellcheck disable=SC2016 # expanded in the job
idb=$(tb_sbatch testb --account="$TESTBED_ACCOUNT" --gpus=1 --output=/dev/null \
    --wrap 'test "$SLURM_GPUS" = 1')
case $idb in '' | *[!0-9]*) idb=0 ;; esac
ok "a --gpus=1 job on testb (job $idb) reaches COMPLETED" \
    tb_wait_state testb "$idb" COMPLETED 60
is "$(tb_slurm testb sacct -X -n -P -j "$idb" -o Cluster,AllocTRES)" \
    "testb|billing=1,cpu=1,gres/gpu:h100=1,gres/gpu=1,mem=500M,node=1" \
    "sacct on testb: cluster testb, one h100 allocated"

# --- associations are enforced: an unknown account is refused
out=$(tb_slurm testa sbatch --account=no-such-account --wrap true 2>&1)
r=$?
is "$r" 1 "sbatch with an unknown account exits 1"
like "$out" 'Invalid account' "and says why"

# --- each login node runs its own cluster's commands (unless TESTBED_SSH=0)
if [ -z "${TESTBED_SSH_CONFIG:-}" ]; then
    for ((k = 0; k < 8; k++)); do skip "ssh check $((k + 1))" "TESTBED_SSH=0"; done
else
    is "$(ssh -F "$TESTBED_SSH_CONFIG" testa sinfo -h -o %N)" testa-n1 \
        "ssh -F ssh_config testa sinfo answers for testa"
    is "$(ssh -F "$TESTBED_SSH_CONFIG" testb sinfo -h -o %N)" testb-n1 \
        "ssh -F ssh_config testb sinfo answers for testb"
    # shellcheck disable=SC2016 # expanded by the remote shell
    is "$(tb_ssh testb 'echo "$SLURM_CONF"')" "$TESTBED_SLURM_CONF_TESTB" \
        "the testb login node sets SLURM_CONF to testb's slurm.conf"
    echo "payload $$" >"$tmp/up.txt"
    scp -q -F "$TESTBED_SSH_CONFIG" "$tmp/up.txt" "testb:$tmp/remote.txt" &&
        scp -q -F "$TESTBED_SSH_CONFIG" "testb:$tmp/remote.txt" "$tmp/down.txt"
    is "$(cat "$tmp/down.txt" 2>/dev/null)" "payload $$" "scp to and from the testb login node"

    # --- strict host key checking with the testbed's known_hosts, no ssh_config
    strict=(-F /dev/null -p "$TESTBED_SSH_PORT" -i "$TESTBED_SSH_KEY"
        -o BatchMode=yes -o StrictHostKeyChecking=yes -o GlobalKnownHostsFile=/dev/null)
    is "$(ssh "${strict[@]}" -o UserKnownHostsFile="$TESTBED_SSH_KNOWN_HOSTS" \
        "$TESTBED_SSH_USER@$TESTBED_SSH_HOST" sinfo -h -o %N)" testa-n1 \
        "BatchMode + StrictHostKeyChecking=yes with the testbed known_hosts"
    # testb's login node has its own host key: listed under testa's port, wrong
    sed -n "s/^\[127.0.0.1\]:$TESTBED_SSH_PORT_TESTB,[^ ]* /[127.0.0.1]:$TESTBED_SSH_PORT /p" \
        "$TESTBED_SSH_KNOWN_HOSTS" >"$tmp/wrong_known_hosts"
    out=$(ssh "${strict[@]}" -o UserKnownHostsFile="$tmp/wrong_known_hosts" \
        "$TESTBED_SSH_USER@$TESTBED_SSH_HOST" touch "$tmp/should-not-exist" 2>&1)
    r=$?
    is "$r" 255 "a known_hosts with another key for the host: ssh exits 255"
    like "$out" 'REMOTE HOST IDENTIFICATION HAS CHANGED' "and names the changed host key"
    ok "and does not run the command" test ! -e "$tmp/should-not-exist"
fi

# --- prometheus (when the testbed runs it)
if [ -n "${TESTBED_PROM_URL:-}" ]; then
    ok "prometheus is ready at $TESTBED_PROM_URL" curl -fsS "$TESTBED_PROM_URL/-/ready"
else
    skip "prometheus is ready" "TESTBED_PROMETHEUS=0"
fi

done_testing
