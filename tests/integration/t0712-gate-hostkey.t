#!/bin/bash
# A host key that does not match the approval is refused for every purpose,
# on the real testbed: the pinned known_hosts of ACTIVE testa replaced by
# testb's key makes queue, nodes --save, gpus, status, submit and a serve
# collection exit 4 naming the cluster and both fingerprints (the approved
# one, ssh-keygen's of testa's key, and the pinned one, testb's); `hpc
# clusters` shows the mismatch; with the right key pinned again all of it
# works. Then the server side: the pinned key and the approval agree but
# the server presents another key (testa's approval and pin pointed at
# testb's port), which ssh itself refuses; the gate names both.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
. "$(dirname "$0")/lib-testbed.sh"
H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
PA=$TESTBED_SSH_PORT_TESTA PB=$TESTBED_SSH_PORT_TESTB
export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote EXAMLOPS_HPC_ACCOUNT=$TESTBED_ACCOUNT
unset EXAMLOPS_HPC_SCHEDULER EXAMLOPS_HPC_TRANSPORT EXAMLOPS_HPC_SSH_HOST SLURM_CONF
fpr_of() { grep "^\[$H\]:$1[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | ssh-keygen -lf - | awk '/ED25519/ {print $2}'; }
FA=$(fpr_of "$PA") FB=$(fpr_of "$PB")
"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null &&
    "$EXA" -q -y hpc approve testa >/dev/null
ok $? "testa registered and approved"
is "$("$EXA" --json hpc clusters | jget '[c["host_key_fingerprint"] for c in d if c["name"]=="testa"][0]')" "$FA" "approved with testa's key ($FA)"
printf 'echo hi\n' > "$T/p.sh"
id=$("$EXA" --json hpc submit "$T/p.sh" --cluster testa --hold | jget 'd["job_id"]')
ok $? "a job submitted while the key matches ($id)"
pin=$XDG_CONFIG_HOME/examlops/known_hosts.d/testa
cp "$pin" "$T/pin.good"
grep "^\[$H\]:$PB[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | sed "s/\[$H\]:$PB/[$H]:$PA/g; s/\[localhost\]:$PB/[localhost]:$PA/g" > "$pin"

want="host key for '$H' changed: cluster 'testa' was approved with $FA but the pinned known_hosts holds $FB"
refused() { # refused NAME CMD...: exit 4 and the message with both fingerprints
    local what=$1; shift
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    grep -q -F "$want" "$T/err"
    is "$rc/$?" "4/0" "$what refuses with exit 4 naming both fingerprints"
}
refused "hpc queue --cluster testa" "$EXA" hpc queue --cluster testa
refused "hpc nodes --save --cluster testa" "$EXA" hpc nodes --save --cluster testa
refused "hpc gpus --cluster testa" "$EXA" hpc gpus --cluster testa
refused "hpc status ID" "$EXA" hpc status "$id"
refused "hpc submit --cluster testa" "$EXA" hpc submit "$T/p.sh" --cluster testa --hold
refused "hpc cancel ID" "$EXA" hpc cancel "$id"
refused "exa serve --once (a collection)" "$EXA" serve --once
is "$(tb_slurm testa squeue -h -j "$id" -o %T)" PENDING "the held job was not cancelled"

out=$("$EXA" --json hpc clusters)
is "$(echo "$out" | jget '[(c["state"], c["host_key_mismatch"]["approved"], c["host_key_mismatch"]["seen"]) for c in d if c["name"]=="testa"][0]')" \
    "('ACTIVE', '$FA', '$FB')" "hpc clusters --json shows the mismatch with both fingerprints"
"$EXA" hpc clusters >"$T/cl.out" 2>"$T/cl.err"
is "$(awk '$1 == "testa" {print $NF}' "$T/cl.out")" MISMATCH "the table marks testa MISMATCH"
grep -q "host key of 'testa' does not match its approval (approved $FA, seen $FB" "$T/cl.err"; ok $? "and warns with both fingerprints"

cp "$T/pin.good" "$pin"
is "$("$EXA" --json hpc status "$id" | jget 'd[0]["state"]')" PENDING "with testa's key pinned again status works"
is "$("$EXA" --json hpc clusters | jget '[c["host_key_mismatch"] for c in d if c["name"]=="testa"][0]')" None "and the mismatch is cleared"
"$EXA" hpc cancel "$id" >/dev/null; ok $? "cancel the held job"

# the approved key pinned under another host name: ssh finds no key for
# testa's address and refuses, while the server still offers the approved
# key; that is a pin problem, not a changed server, so it is said so and
# the cluster is not marked as a mismatch
sed "s/\[$H\]:$PA/[198.51.100.7]:$PA/g; s/\[localhost\]:$PA/[198.51.100.7]:$PA/g" "$T/pin.good" > "$pin"
"$EXA" hpc queue --cluster testa >/dev/null 2>"$T/err"; rc=$?
is "$rc/$(grep -c -F "ssh refused the host key of '$H' (cluster 'testa'), although the server offers the approved $FA" "$T/err")" "4/1" \
    "the approved key pinned under another name: exit 4, said to be the pin, not the server"
is "$("$EXA" --json hpc clusters | jget '[c["host_key_mismatch"] for c in d if c["name"]=="testa"][0]')" None "and testa is not marked as a mismatch"
cp "$T/pin.good" "$pin"

# the server presents another key than the one approved and pinned: ssh
# refuses it (REMOTE HOST IDENTIFICATION HAS CHANGED) and the gate names
# the approved key and the one the server offers now
sed -i "s/ssh_port: $PA/ssh_port: $PB/" "$EXAMLOPS_HPC_REGISTRY"
sed -i "s/\[$H\]:$PA/[$H]:$PB/g; s/\[localhost\]:$PA/[localhost]:$PB/g" "$pin"
# (the port edit in clusters.yaml is an identity change: testa is PENDING
# again, which reading allows; the key is what refuses it)
"$EXA" hpc status 1 --cluster testa >/dev/null 2>"$T/err"; rc=$?
is "$rc/$(grep -c -F "host key for '$H' changed: cluster 'testa' was approved with $FA but the server offers $FB" "$T/err")" "4/1" \
    "a server offering another key: exit 4, approved and offered fingerprints named"
tap_done
