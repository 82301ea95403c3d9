#!/bin/bash
# Jobs know their cluster, on the real testbed: a running job on testa
# (submitted with --cluster testa, then asked about by id alone) is
# RUNNING in `hpc status`, `hpc logs` reads it over ssh (a local tail that
# always fails is first on PATH), `hpc cancel ID` cancels it (sacct
# CANCELLED); `hpc cancel -- --user=root` exits 2 and a second running job
# survives; an unknown id and an already finished job exit 1 and say so,
# never "Cancelled"; an id recorded on two clusters is ambiguous until
# --cluster picks one; ids outside the grammar are usage errors.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
. "$(dirname "$0")/lib-testbed.sh"
H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY PA=$TESTBED_SSH_PORT_TESTA
export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote EXAMLOPS_HPC_ACCOUNT=$TESTBED_ACCOUNT
export EXAMLOPS_HPC_POLL_INTERVAL=1
unset EXAMLOPS_HPC_SCHEDULER EXAMLOPS_HPC_TRANSPORT EXAMLOPS_HPC_SSH_HOST SLURM_CONF
ids=
trap '[ -n "$ids" ] && tb_slurm testa scancel $ids >/dev/null 2>&1; rm -rf "$T"' EXIT
"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null &&
    "$EXA" -q -y hpc approve testa >/dev/null
ok $? "testa registered and approved"
mark=gate-$$-$RANDOM
printf 'echo "started %s"\nsleep 300\n' "$mark" > "$T/long.sh"
sub() { "$EXA" --json hpc submit "$T/long.sh" --cluster testa | jget 'd["job_id"]'; }
j1=$(sub); j2=$(sub); ids="$j1 $j2"
tb_wait_state testa "$j1" RUNNING 180 && tb_wait_state testa "$j2" RUNNING 180
ok $? "two jobs running on testa ($j1, $j2)"

is "$("$EXA" --json hpc status "$j1" | jget 'd[0]["state"], d[0]["cluster"]')" "RUNNING testa" "hpc status ID (no --cluster) says RUNNING on testa"
is "$(sqlite3 "$EXAMLOPS_DB" "select state from jobs where cluster='testa' and job_id='$j1'")" RUNNING "and writes RUNNING into the jobs row"
# logs over ssh: a local tail would fail
mkdir -p "$T/bin"; printf '#!/bin/sh\necho "local tail called" >&2\nexit 99\n' > "$T/bin/tail"; chmod +x "$T/bin/tail"
for _ in $(seq 20); do
    out=$(PATH="$T/bin:$PATH" "$EXA" hpc logs "$j1" 2>"$T/logs.err"); rc=$?
    [ "$out" = "started $mark" ] && break; sleep 0.5
done
is "$rc/$out" "0/started $mark" "hpc logs ID reads the job's log over ssh"
grep -q "local tail" "$T/logs.err"; is $? 1 "no local tail ran"

"$EXA" hpc cancel -- --user=root >/dev/null 2>"$T/err"
is "$?" 2 "hpc cancel -- --user=root exits 2"
grep -q "invalid job id '--user=root'" "$T/err"; ok $? "naming the bad id"
"$EXA" hpc cancel --cluster testa -- --user=root >/dev/null 2>&1
is "$?" 2 "the same with --cluster testa"
"$EXA" hpc status "1;touch $T/x" >/dev/null 2>&1
is "$?" 2 "an id with shell syntax is a usage error"

out=$("$EXA" hpc cancel "$j1" 2>&1); rc=$?
is "$rc/$out" "0/Cancelled job $j1 on cluster 'testa'" "hpc cancel ID cancels it"
tb_wait_state testa "$j1" CANCELLED 120; ok $? "sacct says CANCELLED"
# (RUNNING, or PENDING again if the shared testbed's controller requeued it)
case $(tb_slurm testa squeue -h -j "$j2" -o %T 2>/dev/null) in RUNNING | PENDING) r=0 ;; *) r=1 ;; esac
ok $r "the second job survives (still in squeue)"

out=$("$EXA" hpc cancel "$j1" 2>&1); rc=$?
is "$rc" 1 "cancel of an already finished job exits 1"
case $out in *"already ended CANCELLED"*) r=0 ;; *) r=1 ;; esac
ok $r "and says it already ended"
case $out in *Cancelled*) r=1 ;; *) r=0 ;; esac
ok $r "never 'Cancelled'"
out=$("$EXA" hpc cancel 999999999 --cluster testa 2>&1); rc=$?
is "$rc/$out" "1/exa: error: job '999999999' not found on cluster 'testa'
hint: the job may have ended or never existed; see 'exa hpc status JOBID'" "hpc cancel 999999999 exits 1 and says not found"
out=$("$EXA" hpc status 999999999 --cluster testa 2>&1 >/dev/null); rc=$?
is "$rc/$out" "1/exa: error: job '999999999' not found on cluster 'testa'" "hpc status 999999999 --cluster testa exits 1 and says not found"
out=$("$EXA" --json hpc status 999999999 --cluster testa 2>/dev/null); rc=$?
is "$rc/$(echo "$out" | jget 'd[0]["job_id"], d[0]["state"]')" "1/999999999 UNKNOWN" "--json: one document listing it UNKNOWN, exit 1"
EXAMLOPS_HPC_CLUSTER=testa "$EXA" hpc cancel 999999999 >/dev/null 2>&1
is "$?" 1 "the same through EXAMLOPS_HPC_CLUSTER"
out=$("$EXA" hpc cancel 999999999 2>&1); rc=$?
is "$rc/$out" "1/exa: error: job '999999999' is not recorded on any cluster
hint: pass --cluster C (see 'exa hpc clusters')" "with no cluster named: exit 1, not recorded anywhere"

# the same id recorded on a second cluster
sqlite3 "$EXAMLOPS_DB" "insert into jobs (cluster, scheduler, job_id, created_at, updated_at) values ('testb', 'slurm', '$j2', 'x', 'x')"
"$EXA" hpc status "$j2" >/dev/null 2>"$T/err"
is "$?" 2 "an id recorded on two clusters is ambiguous (exit 2)"
grep -q "job id '$j2' is recorded on several clusters (testa, testb): pass --cluster" "$T/err"; ok $? "the error lists the clusters"
is "$("$EXA" --json hpc status "$j2" --cluster testa | jget 'd[0]["state"] in ("RUNNING", "PENDING"), d[0]["cluster"]')" "True testa" "--cluster disambiguates"
"$EXA" hpc cancel "$j2" --cluster testa >/dev/null; ok $? "cancel the second job"
tb_wait_state testa "$j2" CANCELLED 120; ok $? "sacct says CANCELLED"
is "$(sqlite3 "$EXAMLOPS_DB" "select state||' '||(gpu_hours is not null) from jobs where cluster='testa' and job_id='$j1'")" "CANCELLED 1" \
    "the cancelled job's row is CANCELLED with accounting"

# every host argument to ssh-keyscan comes after "--": a host that looks
# like an option (-fFILE would make ssh-keyscan read FILE) stays a host
printf '#!/bin/sh\necho "$*" >> "%s"\nexit 1\n' "$T/keyscan.log" > "$T/bin/ssh-keyscan"; chmod +x "$T/bin/ssh-keyscan"
PATH="$T/bin:$PATH" "$EXA" hpc detect -p "$PA" -- "-f$T/hosts" >/dev/null 2>&1
is "$(cat "$T/keyscan.log")" "-p $PA -- -f$T/hosts" "hpc detect -- -fFILE: ssh-keyscan gets it after --"
tap_done
