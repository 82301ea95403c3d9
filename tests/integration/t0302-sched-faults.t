#!/bin/bash
# t0302-sched-faults.t - faults on the real testbed:
#  - slurmctld of testa stopped (SIGSTOP) for 60 s during a wait, then
#    continued, and at the same time a private sshd login node of testa stopped for 60 s during
#    a wait over ssh: outages are not job states, both waits show the
#    outage with a bounded backoff and complete with the job's real end
#    state;
#  - exit codes: ssh cannot connect (4), sbatch exiting 255 over a working
#    connection (5, its message), a command past its cap (4);
#  - two clusters with the same numeric job id are kept apart;
#  - a changed or unknown host key is refused with the host named.
set -u
. "$(dirname "$0")/lib-sched.sh"
require_testbed

sched_setup testa local
sched_register testb local
export EXAMLOPS_SLURM_CMD_TIMEOUT=3

printf 'exit 0\n' > "$T/z0.sh"

# --- outages are not job states: slurmctld of testa stopped for 60 s, and
# at the same time the sshd of a second login node of testa (a private
# sshd, same host key and SLURM_CONF as testa's, so stopping it disturbs
# no other test): a local wait and a wait over that sshd both poll every
# second with the default 5 unknown polls, see the outage (back off, say
# since when), and end COMPLETED when both are back.
P=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
sed -e "s/^Port .*/Port $P/" -e "s|^PidFile .*|PidFile $T/sshd.pid|" \
    "$TESTBED_ROOT/ssh/sshd_config.testa" > "$T/sshd_config"
chmod 600 "$T/sshd_config"
start_sshd() {
    /usr/sbin/sshd -f "$T/sshd_config" -E "$T/sshd.log" || return 1
    for _ in $(seq 100); do
        [ -s "$T/sshd.pid" ] && ssh-keyscan -p "$P" 127.0.0.1 > /dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
kill_tree() { # kill_tree PID: the processes of the private sshd, by id
    local c
    for c in $(ps -o pid= --ppid "$1"); do kill_tree "$c"; done
    kill -TERM "$1" 2>/dev/null
}
stop_sshd() { [ -s "$T/sshd.pid" ] && kill_tree "$(cat "$T/sshd.pid")"; rm -f "$T/sshd.pid"; }
start_sshd; ok $? "a private login node of testa on 127.0.0.1:$P"
"$EXA" -y hpc connect 127.0.0.1 --name testa-p -u "$TESTBED_SSH_USER" -k "$TESTBED_SSH_KEY" \
    -p "$P" -s slurm > /dev/null 2> "$T/connect.err" &&
    "$EXA" -y hpc approve testa-p > /dev/null
ok $? "registered and approved as testa-p"
KH=$XDG_CONFIG_HOME/examlops/known_hosts.d/testa-p
via_p() { # via_p CMD...: run CMD against testa-p over its sshd
    env -u SLURM_CONF EXAMLOPS_HPC_CLUSTER=testa-p EXAMLOPS_HPC_TRANSPORT=ssh \
        EXAMLOPS_HPC_SSH_HOST=127.0.0.1 EXAMLOPS_HPC_SSH_USER="$TESTBED_SSH_USER" \
        EXAMLOPS_HPC_SSH_KEY="$TESTBED_SSH_KEY" EXAMLOPS_HPC_SSH_PORT="$P" \
        EXAMLOPS_HPC_SSH_KNOWN_HOSTS="$KH" "$@"
}
pfield() { via_p "$EXA" --json hpc status "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['$2'])"; }
printf 'sleep 15; echo done\n' > "$T/s.sh"
idb=$(submit "$T/s.sh")
ida=$(via_p "$EXA" --json hpc submit "$T/s.sh" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])')
wait_state "$idb" RUNNING 30
ok $? "the local job running before the faults"
for _ in $(seq 60); do [ "$(pfield "$ida" state)" = RUNNING ] && break; sleep 0.5; done
is "$(pfield "$ida" state)" RUNNING "the ssh job running before the faults"
pidf=$TESTBED_ROOT/testa/run/slurmctld.pid
ctld=$(cat "$pidf" 2>/dev/null || pgrep -f "slurmctld -f $TESTBED_SLURM_CONF_TESTA" | head -n 1)
# The controller is stopped (SIGSTOP), not killed: the testbed is shared,
# and a colleague's up.sh would restart a dead one early; a stopped one
# accepts connections and never answers, so squeue runs into its cap.
(
    sleep 2
    kill -STOP "$ctld"
    stop_sshd
    sleep 60
    kill -CONT "$ctld"
    start_sshd
) &
faulter=$!
trap 'kill -CONT "$ctld" 2>/dev/null; stop_sshd; rm -rf "$T"' EXIT
start=$SECONDS
unset EXAMLOPS_SLURM_MAX_UNKNOWN_POLLS # the default: 5
"$EXA" hpc wait "$idb" > "$T/wait.out" 2> "$T/wait.err" &
wb=$!
via_p "$EXA" hpc wait "$ida" > "$T/waitp.out" 2> "$T/waitp.err" &
wa=$!
# while testa-p's sshd is away: ssh's own failure is a transport error
sleep 6
via_p "$EXA" hpc submit "$T/z0.sh" > /dev/null 2> "$T/down.err"
rc=$?
is "$rc/$(grep -c "ssh to '127.0.0.1' failed: .*Connection refused" "$T/down.err")" 4/1 \
    "ssh cannot connect: exit 4 naming the host"
wait "$wb"; rcb=$?
wait "$wa"; rca=$?
wait "$faulter"
is "$rcb" 0 "the local wait completes across a 60 s controller outage"
is "$rca" 0 "the wait over ssh completes across a 60 s sshd outage"
[ $((SECONDS - start)) -ge 60 ]
ok $? "the waits really spanned the outage ($((SECONDS - start)) s)"
ok "$(scontrol ping >/dev/null 2>&1; echo $?)" "slurmctld of testa is back"
is "$(jfield "$idb" state)" COMPLETED "local job COMPLETED after the controller returns"
is "$(pfield "$ida" state)" COMPLETED "ssh job COMPLETED after sshd returns"
grep -qE "^testa unreachable since [0-9]{2}:[0-9]{2}:[0-9]{2}, retrying in [0-9.]+ s \(1 failed poll: 'squeue' on 'localhost' (timed out after 3 s|exited 1: .*Unable to contact slurm controller)" "$T/wait.err"
ok $? "the local wait shows the controller outage"
grep -qE "^testa-p unreachable since [0-9]{2}:[0-9]{2}:[0-9]{2}, retrying in [0-9.]+ s \([0-9]+ failed polls?: .*ssh to '127.0.0.1' failed" "$T/waitp.err"
ok $? "the ssh wait shows the sshd outage"
show() { sed 's/^/#   /' "$@"; }
[ "${EXA_TEST_DEBUG:-}" ] && { show "$T/wait.err"; show "$T/waitp.err"; }
for f in wait waitp; do
    most=$(sed -n 's/.* (\([0-9]*\) failed polls*: .*/\1/p' "$T/$f.err" | sort -n | tail -n 1)
    [ "${most:-0}" -gt 5 ]; ok $? "$f: $most failed polls in a row, more than the 5 unknowns"
    worst=$(sed -n 's/.*retrying in \([0-9.]*\) s.*/\1/p' "$T/$f.err" | sort -n | tail -n 1)
    is "$worst" 6 "$f: the backoff grows to its cap (6 x the 1 s poll)"
    grep -qE "reachable again after [0-9]+ s \(unreachable since" "$T/$f.err"
    ok $? "$f: and says when it is back"
done

# --- exit codes: remote exit 255 is the scheduler's (5), a command past
# its cap is a transport failure (4). A fake ssh first on PATH runs the
# real one with the remote command replaced (fault injection, doc/style.md).
mkdir -p "$T/fakessh"
{
    echo '#!/bin/bash'
    echo 'args=("$@")'
    echo 'case "$EXA_FAKE_SSH:${args[-1]}" in'
    echo "remote255:sbatch*) args[-1]=\"echo 'sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified' >&2; exit 255\" ;;"
    echo 'hang:squeue*|hang:sacct*) args[-1]="sleep 20" ;;'
    echo 'esac'
    echo "exec $(command -v ssh) \"\${args[@]}\""
} > "$T/fakessh/ssh"
chmod +x "$T/fakessh/ssh"
via_p env PATH="$T/fakessh:$PATH" EXA_FAKE_SSH=remote255 "$EXA" hpc submit "$T/z0.sh" > /dev/null 2> "$T/e255.err"
rc=$?
is "$rc" 5 "sbatch exiting 255 over a working connection is the scheduler's failure (exit 5)"
grep -qxF "exa: error: sbatch on '127.0.0.1' exited 255: Batch job submission failed: Invalid account or account/partition combination specified" "$T/e255.err"
ok $? "with the scheduler's own message"
via_p env PATH="$T/fakessh:$PATH" EXA_FAKE_SSH=hang EXAMLOPS_SLURM_CMD_TIMEOUT=2 "$EXA" hpc status "$ida" > /dev/null 2> "$T/hang.err"
rc=$?
is "$rc/$(grep -c "on '127.0.0.1' timed out after 2 s" "$T/hang.err")" 4/1 "a status query past EXAMLOPS_SLURM_CMD_TIMEOUT exits 4"
stop_sshd

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
echo "1..$n"
exit $((fails > 0))
