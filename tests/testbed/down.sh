#!/bin/bash
# down.sh - stop what tests/testbed/up.sh started, and nothing else.
#
# Every daemon is found through its pid file under $TESTBED_ROOT and is
# signalled only when /proc/<pid>/comm names the daemon expected there, so
# a stale pid file whose number now belongs to another process is dropped,
# not obeyed. Nothing is looked up by name across the machine. The jobs of
# each testbed cluster are cancelled while its slurmctld still runs, and any
# job step daemon that outlived its slurmd (it carries our SLURM_CONF in its
# environment) is killed with its children.
#
#   down.sh           stop; keep the state (database, keys, configs) so the
#                     next up.sh takes a few seconds
#   down.sh --purge   stop and delete $TESTBED_ROOT
#
# Running it when nothing runs does nothing and exits 0.
set -uo pipefail
# shellcheck disable=SC2034 # read by say() in common.sh
tb_me='[testbed-down]'
tb_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR
. "$tb_here/common.sh"

purge=0
for arg in "$@"; do
    case $arg in
    --purge) purge=1 ;;
    -h | --help)
        sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: $0 [--purge]" >&2
        exit 2
        ;;
    esac
done
tb_check_root
if [ ! -d "$tb_root" ]; then
    say "$tb_root does not exist; nothing to stop"
    exit 0
fi
exec {tb_lock}>"$tb_root/.lock"
flock -w 120 "$tb_lock" || fail "another up.sh or down.sh holds $tb_root/.lock"

# halt PIDFILE COMM SECS: TERM, up to SECS for it to go, then KILL
halt() {
    local pf=$1 comm=$2 secs=$3 pid i
    if pid=$(pidfile_pid "$pf" "$comm"); then
        say "stopping $comm (pid $pid)"
        kill -TERM "$pid" 2>/dev/null
        for ((i = 0; i < secs * 4; i++)); do
            proc_live "$pid" "$comm" || break
            sleep 0.25
        done
        if proc_live "$pid" "$comm"; then
            say "$comm (pid $pid) still running after ${secs}s; sending KILL"
            kill -KILL "$pid" 2>/dev/null
            sleep 0.5
        fi
    fi
    rm -f "$pf"
}

# The clusters are whatever directories up.sh configured, so a down.sh run
# with other TESTBED_CLUSTERS still stops them all.
testbed_clusters() {
    local f
    for f in "$tb_root"/*/etc/slurm.conf; do
        [ -f "$f" ] || continue
        f=${f%/etc/slurm.conf}
        echo "${f##*/}"
    done
}

queued_jobs() { timeout 10 squeue -h -o %i 2>/dev/null; }

cancel_jobs() {
    local c=$1 i
    SLURM_CONF=$tb_root/$c/etc/slurm.conf
    export SLURM_CONF
    [ -n "$(queued_jobs)" ] || return 0
    say "cancelling the jobs of cluster '$c'"
    # shellcheck disable=SC2046 # one argument per job id
    timeout 10 scancel --full $(queued_jobs) 2>/dev/null
    for ((i = 0; i < 60; i++)); do
        [ -z "$(queued_jobs)" ] && break
        # a job cancelled while still being set up may need a second try
        # shellcheck disable=SC2046 # one argument per job id
        [ $((i % 20)) -eq 19 ] && timeout 10 scancel --full $(queued_jobs) 2>/dev/null
        sleep 0.25
    done
}

# Job step daemons whose slurmd died first are orphans nothing else stops.
kill_orphan_steps() {
    local e pid ppid roots=() all=() changed
    for e in /proc/[0-9]*/environ; do
        pid=${e#/proc/}
        pid=${pid%/environ}
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] || continue
        # the process may be gone by now: keep the shell's own error quiet
        { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -q "^SLURM_CONF=$tb_root/" &&
            roots+=("$pid")
    done
    [ ${#roots[@]} -gt 0 ] || return 0
    all=("${roots[@]}")
    changed=1
    while [ "$changed" = 1 ]; do
        changed=0
        while read -r pid ppid; do
            if [[ " ${all[*]} " == *" $ppid "* && " ${all[*]} " != *" $pid "* ]]; then
                all+=("$pid")
                changed=1
            fi
        done < <(ps -eo pid=,ppid=)
    done
    say "killing leftover job processes of the testbed: ${all[*]}"
    kill -TERM "${all[@]}" 2>/dev/null
    sleep 1
    kill -KILL "${all[@]}" 2>/dev/null
    return 0
}

remove_user_ssh_block() {
    local state=$tb_root/ssh/user-config.state cfg made_file made_dir
    [ -s "$state" ] || return 0
    read -r cfg made_file made_dir <"$state"
    if [ -f "$cfg" ]; then
        strip_user_block "$cfg" >"$cfg.exa-testbed" &&
            chmod 600 "$cfg.exa-testbed" && mv -f "$cfg.exa-testbed" "$cfg"
        [ "$made_file" = 1 ] && [ ! -s "$cfg" ] && rm -f "$cfg"
        [ "$made_dir" = 1 ] && rmdir "${cfg%/*}" 2>/dev/null
        say "removed the testbed block from $cfg"
    fi
    rm -f "$state"
}

t0=$(date +%s%N)
remove_user_ssh_block
halt "$tb_root/prometheus/prometheus.pid" prometheus 20
for pf in "$tb_root"/ssh/sshd.*.pid; do
    [ -e "$pf" ] && halt "$pf" sshd 5
done
for c in $(testbed_clusters); do
    if pidfile_pid "$tb_root/$c/run/slurmctld.pid" slurmctld >/dev/null; then
        cancel_jobs "$c"
    fi
    halt "$tb_root/$c/run/slurmd.pid" slurmd 15
    halt "$tb_root/$c/run/slurmctld.pid" slurmctld 15
done
kill_orphan_steps
# in this order: each needs the next one
halt "$tb_root/slurmdbd/run/slurmdbd.pid" slurmdbd 15
halt "$tb_root/mariadb/run/mariadbd.pid" mariadbd 60
halt "$tb_root/munge/munged.pid" munged 10

if [ "$purge" = 1 ]; then
    say "removing $tb_root"
    exec {tb_lock}>&-
    rm -rf "$tb_root"
fi
say "down in $(tb_ms "$t0") ms"
exit 0
