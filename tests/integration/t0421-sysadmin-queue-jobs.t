#!/bin/bash
# Day one for a sysadmin (issue 13), jobs and queue on the testbed:
# `hpc queue` shows REASON (squeue %r) and tells an empty queue from a
# failed query; `hpc jobs --cluster nope` says the cluster is unknown;
# `hpc wait` on an id exa never recorded fails at once; a header printed
# on stdout comes before the error under 2>&1.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
sa() { SLURM_CONF=$TESTBED_SLURM_CONF_TESTA "$@"; }
jid=
trap '[ -n "$jid" ] && sa scancel "$jid" >/dev/null 2>&1; rm -rf "$T"' EXIT
# testa through the local transport (this host is testa's client), and a
# mock cluster with nothing submitted
"$EXA" hpc connect local --name loc --scheduler slurm >/dev/null && "$EXA" -y hpc approve loc >/dev/null
ok $? "a local slurm cluster registered and approved"
"$EXA" hpc connect local --name m1 --scheduler mock >/dev/null && "$EXA" -y hpc approve m1 >/dev/null
ok $? "a mock cluster registered and approved"

printf '#!/bin/sh\nsleep 1\n' >"$T/job.sh"
out=$("$EXA" --json hpc submit --cluster loc --hold "$T/job.sh"); rc=$?
is "$rc" 0 "submit a held job"
jid=$(echo "$out" | jget 'd["job_id"]')
want=$(sa squeue -h -j "$jid" -o %r)
is "$want" JobHeldUser "squeue says why it waits"
tbl=$("$EXA" hpc queue --cluster loc)
echo "$tbl" | grep -Eq '^Job +Name +User +State +Nodes +Reason$'; ok $? "queue has a Reason column"
echo "$tbl" | grep -Eq "^$jid +.* PENDING +- +$want\$"; ok $? "the held job's row shows squeue's reason"
is "$("$EXA" --json hpc queue --cluster loc | jget "[j['reason'] for j in d['jobs'] if j['job_id']=='$jid'][0]")" "$want" "--json carries it as reason"

out=$("$EXA" hpc queue --cluster m1 2>&1); rc=$?
is "$rc" 0 "an empty queue exits 0"
is "$out" "Queue of 'm1' (mock) is empty: the scheduler lists no jobs." "and says the queue is empty"
out=$(PATH=/nonexistent "$EXA" hpc queue --cluster loc 2>&1); rc=$?
is "$rc" 4 "a failed query exits 4 (transport)"
echo "$out" | grep -q "^exa: error: queue of 'loc': query failed: cannot run 'squeue'"; ok $? "and says the query failed, not empty"
echo "$out" | grep -q "empty"; is $? 1 "never 'empty' when the query failed"

out=$("$EXA" hpc jobs --cluster nope 2>&1); rc=$?
is "$rc" 1 "jobs --cluster nope exits 1"
echo "$out" | grep -q "^exa: error: unknown cluster 'nope'"; ok $? "and says the cluster is unknown"
out=$("$EXA" --json hpc jobs --cluster nope); rc=$?
is "$(echo "$out" | jget 'd["error"]')" "unknown cluster 'nope'" "--json: an error document"
out=$("$EXA" hpc jobs --cluster m1); rc=$?
is "$rc:$out" "0:No HPC jobs match cluster m1." "a known cluster without jobs is an empty list"

start=$(date +%s)
out=$("$EXA" --json hpc wait 99999999 --cluster loc); rc=$?
took=$(($(date +%s) - start))
is "$rc" 1 "wait on an unrecorded id exits 1"
is "$(echo "$out" | jget 'd["error"]')" "job '99999999' is not recorded on cluster 'loc': exa waits only for jobs it submitted" "and names the id and cluster"
[ "$took" -le 3 ]; ok $? "at once (${took}s), not after the scheduler's polls"
"$EXA" --json hpc wait "$jid" --cluster loc --help >/dev/null; ok $? "(wait --help still works)"

# 2>&1 into a pipe: the header printed on stdout comes before the error
out=$("$EXA" pipeline run --dummy --cluster loc --gpus 1 --partition nosuchpart 2>&1 | cat)
first=$(echo "$out" | head -1)
echo "$first" | grep -q "^Running "; ok $? "under 2>&1 the 'Running' header comes first"
echo "$out" | grep -q "^exa: error:"; ok $? "and the error after it"
tap_done
