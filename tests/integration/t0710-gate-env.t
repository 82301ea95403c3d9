#!/bin/bash
# The seed's environment form under the gate, on the real testbed:
# EXAMLOPS_HPC_SCHEDULER/TRANSPORT/SSH_* pointing at a PENDING cluster, at
# a REJECTED one and at an unregistered host each make `hpc submit` exit 6
# with nothing reaching squeue; the unregistered target is registered
# PENDING (requested_by the actor, an audit event) under a name the hint
# gives, and once approved the same submit runs. The local transport is
# matched the same way, --cluster wins over the environment, and mock mode
# needs no registration.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
PA=$TESTBED_SSH_PORT_TESTA PB=$TESTBED_SSH_PORT_TESTB
export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote EXAMLOPS_HPC_ACCOUNT=$TESTBED_ACCOUNT
export EXAMLOPS_HPC_POLL_INTERVAL=1 EXAMLOPS_ACTOR=alice
sa() { SLURM_CONF=$TESTBED_SLURM_CONF_TESTA "$@"; }
sb() { SLURM_CONF=$TESTBED_SLURM_CONF_TESTB "$@"; }
tag=gate-t0710-$$
trap 'for c in "$TESTBED_SLURM_CONF_TESTA" "$TESTBED_SLURM_CONF_TESTB"; do
    SLURM_CONF=$c squeue -h -o "%i %j" | awk -v t="$tag" "index(\$2, t) == 1 {print \$1}" |
        xargs -r env SLURM_CONF=$c scancel; done; rm -rf "$T"' EXIT
# jobs of this test in a cluster's queue (held: they stay there)
queued() { "$@" squeue -h -o %j | grep -c "^$tag"; }
printf 'echo hi\n' > "$T/p.sh"
# the environment of seed 002 pointing at testa (or $1's port) over ssh
envssh() {
    local port=$1; shift
    EXAMLOPS_HPC_SCHEDULER=slurm EXAMLOPS_HPC_TRANSPORT=ssh EXAMLOPS_HPC_SSH_HOST=$H \
        EXAMLOPS_HPC_SSH_USER=$U EXAMLOPS_HPC_SSH_KEY=$KEY EXAMLOPS_HPC_SSH_PORT=$port \
        EXAMLOPS_HPC_SSH_KNOWN_HOSTS=$TESTBED_SSH_KNOWN_HOSTS "$@"
}

# --- a PENDING cluster
"$EXA" -q hpc connect "$H" --name pend -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null
ok $? "connect testa as 'pend' (PENDING)"
envssh "$PA" "$EXA" hpc submit "$T/p.sh" --hold --job-name="$tag-pend" >/dev/null 2>"$T/err"
is "$?" 6 "env target = PENDING cluster: submit exits 6"
grep -q "cluster 'pend' is PENDING" "$T/err"; ok $? "and names the cluster and its state"
is "$(queued sa)" 0 "squeue of testa shows no new job"
# --cluster wins over the environment as well
envssh "$PB" "$EXA" hpc submit "$T/p.sh" --hold --cluster pend >/dev/null 2>&1
is "$?" 6 "--cluster pend with the env pointing elsewhere: still pend, exit 6"

# --- a REJECTED cluster
"$EXA" -q -y hpc reject pend -r "t0710" >/dev/null
envssh "$PA" "$EXA" hpc submit "$T/p.sh" --hold --job-name="$tag-rej" >/dev/null 2>"$T/err"
is "$?" 6 "env target = REJECTED cluster: submit exits 6"
grep -q "cluster 'pend' is REJECTED" "$T/err"; ok $? "and says REJECTED"
is "$(queued sa)" 0 "squeue of testa still shows no new job"

# --- an unregistered host (testb)
name=env-slurm-$H-$PB
n_before=$("$EXA" --json hpc clusters | jget 'len(d)')
envssh "$PB" "$EXA" hpc submit "$T/p.sh" --hold --job-name="$tag-new" >/dev/null 2>"$T/err"
is "$?" 6 "env target = unregistered host: submit exits 6"
is "$(queued sb)" 0 "squeue of testb shows no new job"
grep -q "hint: a sysadmin approves it: exa hpc approve $name" "$T/err"; ok $? "the hint names 'exa hpc approve $name'"
out=$("$EXA" --json hpc clusters)
is "$(echo "$out" | jget 'len(d)')" $((n_before + 1)) "one cluster registered"
is "$(echo "$out" | jget "[(c['state'], c['host'], c['ssh_port'], c['ssh_user'], c['scheduler'], c['requested_by']) for c in d if c['name']=='$name'][0]")" \
    "('PENDING', '$H', $PB, '$U', 'slurm', '$(id -un) (as alice)')" "registered PENDING with the target's identity, requested by the actor"
want_fpr=$(grep "^\[$H\]:$PB[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | ssh-keygen -lf - | awk '/ED25519/ {print $2}')
is "$(echo "$out" | jget "[c['host_key_fingerprint'] for c in d if c['name']=='$name'][0]")" "$want_fpr" "its host key pinned from EXAMLOPS_HPC_SSH_KNOWN_HOSTS"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from audit_events where target='$name' and action='cluster_connect_requested'")" 1 "the registration is audited"
envssh "$PB" "$EXA" hpc submit "$T/p.sh" --hold >/dev/null 2>&1
is "$?/$("$EXA" --json hpc clusters | jget 'len(d)')" "6/$((n_before + 1))" "a second try is refused again, nothing registered twice"

# --- approved: the same submit runs
"$EXA" -q -y hpc approve "$name" >/dev/null; ok $? "approve $name"
out=$(envssh "$PB" "$EXA" --json hpc submit "$T/p.sh" --hold --job-name="$tag-ok"); rc=$?
is "$rc" 0 "the same submit now runs"
id=$(echo "$out" | jget 'd["job_id"]')
is "$(echo "$out" | jget 'd["cluster"]')" "$name" "on the env-registered cluster"
is "$(sb squeue -h -j "$id" -o %j)" "$tag-ok.exa-$(echo "$out" | jget 'd["run_id"]')" "squeue of testb shows the job"
is "$(sqlite3 "$EXAMLOPS_DB" "select cluster||' '||state from jobs where job_id='$id'")" "$name PENDING" "recorded on that cluster"
"$EXA" hpc cancel "$id" >/dev/null; ok $? "cancel it through its recorded cluster (no environment)"

# --- the local transport is matched the same way
EXAMLOPS_HPC_SCHEDULER=slurm EXAMLOPS_HPC_TRANSPORT=local SLURM_CONF=$TESTBED_SLURM_CONF_TESTA \
    "$EXA" hpc submit "$T/p.sh" --hold --job-name="$tag-local" >/dev/null 2>"$T/err"
is "$?" 6 "env target slurm over the local transport, unregistered: exit 6"
grep -q "registered it as 'env-slurm-local' (PENDING)" "$T/err"; ok $? "registered as env-slurm-local"
is "$(queued sa)" 0 "no job reached testa"

# --- mock mode: nothing named, nothing registered
n_now=$("$EXA" --json hpc clusters | jget 'len(d)')
out=$(env -u EXAMLOPS_HPC_SCHEDULER "$EXA" --json hpc submit "$T/p.sh"); rc=$?
is "$rc/$(echo "$out" | jget 'd["scheduler"], d["cluster"]')" "0/mock default" "mock mode submits without registration"
is "$("$EXA" --json hpc clusters | jget 'len(d)')" "$n_now" "and registers nothing"
tap_done
