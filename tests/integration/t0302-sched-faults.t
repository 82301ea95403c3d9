#!/bin/bash
# t0302-sched-faults.t - faults on the real testbed:
#  - slurmctld of testa shut down (SIGTERM) for 20 s during a wait, then
#    started again by the testbed's own (idempotent) up script: squeue
#    fails while it is away, sacct (slurmdbd is up) keeps the job
#    observable, and the wait completes with the job's real end state;
#  - two clusters with the same numeric job id are kept apart;
#  - a changed or unknown host key is refused with the host named.
set -u
. "$(dirname "$0")/lib-sched.sh"
require_testbed
echo "1..13"
sched_setup testa local
sched_register testb local
export EXAMLOPS_SLURM_CMD_TIMEOUT=3

printf 'exit 0\n' > "$T/z0.sh"

# --- controller stopped during a wait
printf 'sleep 12; echo done\n' > "$T/s.sh"
id=$(submit "$T/s.sh")
wait_state "$id" RUNNING 30
ok $? "job running before the fault"
pidf=$TESTBED_ROOT/testa/run/slurmctld.pid
ctld=$(cat "$pidf" 2>/dev/null || pgrep -f "slurmctld -f $TESTBED_SLURM_CONF_TESTA" | head -n 1)
tb_up=$(cd "$(dirname "$0")/../testbed" && pwd)/up.sh
restart_ctld() { TESTBED_ROOT=$TESTBED_ROOT "$tb_up" > /dev/null 2> "$T/up.err"; }
(
    sleep 2
    kill -TERM "$ctld"
    for _ in $(seq 1 100); do kill -0 "$ctld" 2>/dev/null || break; sleep 0.1; done
    sleep 20
    restart_ctld
) &
faulter=$!
trap 'scontrol ping >/dev/null 2>&1 || restart_ctld; rm -rf "$T"' EXIT
start=$SECONDS
"$EXA" hpc wait "$id" > "$T/wait.out" 2> "$T/wait.err"
rc=$?
wait "$faulter"
is "$rc" 0 "wait completes across a 20 s controller shutdown and restart"
ok "$(scontrol ping >/dev/null 2>&1; echo $?)" "slurmctld of testa is back"
is "$(jfield "$id" state)" COMPLETED "job COMPLETED after the controller returns"
[ $((SECONDS - start)) -ge 20 ]
ok $? "the wait really spanned the stop ($((SECONDS - start)) s)"

# --- a lost sbatch reply: sbatch ran, but its answer never came back
# (the stand-in runs the real sbatch, then hangs past the cap)
mkdir -p "$T/lossy"
printf '#!/bin/sh\n"%s" "$@" > /dev/null\nexec sleep 60\n' "$(command -v sbatch)" > "$T/lossy/sbatch"
chmod +x "$T/lossy/sbatch"
out=$(PATH="$T/lossy:$PATH" "$EXA" --json hpc submit "$T/z0.sh" --hold 2> "$T/lossy.err")
reused=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["reused"])' <<<"$out" 2>/dev/null)
is "$reused" True "a lost reply is recovered by looking the run id up"
lid=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out" 2>/dev/null)
name=$(squeue -h -j "$lid" -o %j 2>/dev/null)
is "$(squeue -h --name="$name" -o %i | wc -l)" 1 "exactly one job carries that run id"
scancel "$lid" 2>/dev/null

# --- same numeric job id on two clusters
# Each cluster counts job ids on its own; advance the lower counter with
# held jobs (cancelled at once) until both hand out the same next id.
printf 'exit 0\n' > "$T/z.sh"
hold() { SLURM_CONF=$1 sbatch --parsable --hold --account="$TESTBED_ACCOUNT" \
    --output=/dev/null --wrap true | cut -d';' -f1; }
for attempt in 1 2 3; do
    a=$(hold "$TESTBED_SLURM_CONF_TESTA"); b=$(hold "$TESTBED_SLURM_CONF_TESTB")
    SLURM_CONF=$TESTBED_SLURM_CONF_TESTA scancel "$a"; SLURM_CONF=$TESTBED_SLURM_CONF_TESTB scancel "$b"
    while [ "$a" != "$b" ]; do
        if [ "$a" -lt "$b" ]; then
            a=$(hold "$TESTBED_SLURM_CONF_TESTA"); SLURM_CONF=$TESTBED_SLURM_CONF_TESTA scancel "$a"
        else
            b=$(hold "$TESTBED_SLURM_CONF_TESTB"); SLURM_CONF=$TESTBED_SLURM_CONF_TESTB scancel "$b"
        fi
    done
    ida=$(submit "$T/z.sh")
    idb=$(SLURM_CONF=$TESTBED_SLURM_CONF_TESTB sbatch --parsable --account="$TESTBED_ACCOUNT" \
        --output=/dev/null --wrap 'exit 7' | cut -d';' -f1)
    [ "$ida" = "$idb" ] && break
done
is "$idb" "$ida" "both clusters have a job $ida"
"$EXA" hpc wait "$ida" > /dev/null 2>&1
for _ in $(seq 60); do
    st=$(SLURM_CONF=$TESTBED_SLURM_CONF_TESTB EXAMLOPS_HPC_CLUSTER=testb "$EXA" --json hpc status "$ida" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])')
    [ "$st" = FAILED ] && break
    sleep 1
done
is "$st" FAILED "job $ida on testb is testb's (FAILED exit 7)"
is "$(jfield "$ida" state)/$(jfield "$ida" exit_code)" COMPLETED/0 "job $ida on testa is still COMPLETED/0"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*)||' '||state from jobs where job_id='$ida'")" \
    "1 COMPLETED" "the jobs row of testa was not touched by testb's job"

# --- host keys over ssh (a fresh $T: remove the first one, whose EXIT trap
# sched_setup replaces; its remote work dir stays under $T too)
rm -rf "$T"
sched_setup testa ssh
# The gate compares the pinned key (known_hosts.d/testa, written by the
# connect in sched_setup) with the fingerprint recorded at approval.
pin=$XDG_CONFIG_HOME/examlops/known_hosts.d/testa
cp "$pin" "$T/pin.orig"
grep "2223" "$TESTBED_SSH_KNOWN_HOSTS" | sed 's/\[127.0.0.1\]:2223/[127.0.0.1]:2222/; s/\[localhost\]:2223/[localhost]:2222/' > "$pin"
"$EXA" hpc status 1 > /dev/null 2> "$T/err"
rc=$?
is "$rc/$(grep -c "host key for '127.0.0.1' changed: cluster 'testa' was approved with SHA256:" "$T/err")" "4/1" "changed host key refused, host named (exit 4)"
: > "$pin"
"$EXA" hpc status 1 > /dev/null 2> "$T/err"
rc=$?
is "$rc/$(grep -c "host key for '127.0.0.1' changed: .* but the pinned known_hosts holds no key" "$T/err")" "4/1" "a pinned file with no key is refused, host named (exit 4)"
cp "$T/pin.orig" "$pin"
exit $((fails > 0))
