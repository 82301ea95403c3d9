#!/bin/bash
# up.sh - start exa's real Slurm testbed on this machine, loopback only.
#
# The integration tests drive real Slurm commands (sinfo, squeue, sacct,
# sbatch, scancel, scontrol, sacctmgr) locally and over SSH, so this script
# brings up, under $TESTBED_ROOT (default /tmp/exa-testbed):
#
#   munged (own key and socket) -> mariadbd 127.0.0.1:3307 -> slurmdbd :6819
#   -> per cluster (testa, testb): slurmctld :6817/:6827, slurmd :6818/:6828
#   -> per cluster an sshd "login node" 127.0.0.1:2222/:2223
#   -> prometheus 127.0.0.1:9090 with a file_sd targets file
#
# It installs the Debian packages it lacks (apt-get), never uses systemd
# (CI machines have none as PID 1), and is idempotent: a daemon whose pid
# file names a live process of the right name is left alone, config files
# are rewritten only when their content changes, and a re-run prints the
# same lines again.
#
# stdout carries only `export NAME='value'` lines (also written to
# $TESTBED_ROOT/env.sh); progress and errors go to stderr. Use it as
#     tb_env=$(tests/testbed/up.sh) || exit 1; eval "$tb_env"
# (`eval "$(up.sh)"` alone would hide a failure: eval of nothing is 0).
#
# Settings: TESTBED_ROOT, TESTBED_CLUSTERS ("testa testb"; cluster i gets
# slurmctld port TESTBED_CTLD_PORT+10*i and slurmd that plus 1),
# TESTBED_MYSQL_PORT (3307), TESTBED_DBD_PORT (6819), TESTBED_CTLD_PORT
# (6817), TESTBED_SSH_PORT (2222, cluster i: +i), TESTBED_PROM_PORT (9090),
# TESTBED_SSH=0 / TESTBED_PROMETHEUS=0 to leave those out,
# TESTBED_SKIP_INSTALL=1, TESTBED_SSH_USER_CONFIG=1 (see README.md).
# Stop with tests/testbed/down.sh [--purge].
set -euo pipefail
# shellcheck disable=SC2034 # read by say() in common.sh
tb_me='[testbed-up]'
tb_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR
. "$tb_here/common.sh"

[ "$(id -u)" = 0 ] || fail "run as root: it installs packages and runs daemons as root"
tb_check_root
for c in $tb_clusters; do
    case $c in
    *[!a-z0-9-]* | -*) fail "cluster name '$c': use lower-case letters, digits, '-'" ;;
    esac
done
tb_first=${tb_clusters%% *}
tb_short_host=$(hostname -s)
db_user=slurm
db_pass=exa-testbed-only

# ---------------------------------------------------------------- helpers
step_t=0
step_name=
step_times=()
step() { step_name=$1; step_t=$(date +%s%N); }
step_done() {
    local ms
    ms=$(tb_ms "$step_t")
    step_times+=("$step_name=${ms}ms")
    say "$step_name ready (${ms} ms)"
}

# log_tail FILE: the last lines of a daemon log, for error messages
log_tail() {
    if [ -s "$1" ]; then
        printf 'last lines of %s:\n' "$1"
        tail -n 20 "$1"
    else
        printf '%s is empty or missing\n' "$1"
    fi
}

# await SECS WHAT PIDFILE COMM LOG CMD...: run CMD every 0.25 s until it
# succeeds. Fails with the tail of LOG after SECS, or as soon as the daemon
# is gone (after a 3 s grace: forking daemons write their pid file late).
await() {
    local secs=$1 what=$2 pf=$3 comm=$4 lf=$5 start now
    shift 5
    start=$(date +%s)
    until "$@" >/dev/null 2>&1; do
        now=$(date +%s)
        if [ $((now - start)) -ge 3 ] && ! pidfile_pid "$pf" "$comm" >/dev/null; then
            fail "$what: $comm is not running; $(log_tail "$lf")"
        fi
        if [ $((now - start)) -ge "$secs" ]; then
            fail "$what: not ready after ${secs}s; $(log_tail "$lf")"
        fi
        sleep 0.25
    done
}

# put FILE MODE < content: replace FILE only when the content differs, so a
# re-run leaves running daemons' configs (and mtimes) alone. Sets put_changed.
put_changed=0
put() {
    local tmp
    tmp=$(mktemp "$1.new.XXXXXX")
    cat >"$tmp"
    chmod "$2" "$tmp"
    if [ -f "$1" ] && cmp -s "$tmp" "$1"; then
        rm -f "$tmp"
    else
        mv -f "$tmp" "$1"
        put_changed=1
    fi
}

# Daemons must not inherit our stdout (a `$(up.sh)` would then never return)
# nor the lock fd (down.sh could never take the lock again).
# spawn LOG CMD...: CMD forks itself into the background
spawn() {
    local lf=$1
    shift
    "$@" </dev/null >>"$lf" 2>&1 {tb_lock}>&-
}
# detach PIDFILE LOG CMD...: CMD stays in the foreground; run it in its own
# session and record its pid
detach() {
    local pf=$1 lf=$2
    shift 2
    setsid "$@" </dev/null >>"$lf" 2>&1 {tb_lock}>&- &
    echo "$!" >"$pf"
}

# need_port PORT KNOB: fail early and clearly when PORT is taken by someone
# else (a daemon that cannot bind only says so in its own log)
need_port() {
    port_listening "$1" && fail "port $1 is in use by another process (set $2)"
    return 0
}

# ---------------------------------------------------------------- packages
install_packages() {
    local pkgs=(munge mariadb-server slurm-wlm slurmctld slurmd slurm-client
        slurmdbd iproute2 util-linux) missing=() p made_policy=0 ok=0 try
    [ "$tb_want_ssh" = 1 ] && pkgs+=(openssh-server openssh-client)
    [ "$tb_want_prom" = 1 ] && pkgs+=(prometheus curl)
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        say "packages already installed"
        return 0
    fi
    say "installing ${missing[*]}"
    # Keep the packages' maintainer scripts from starting system-wide
    # services (munge on /run/munge, mariadb on 3306, ssh on 22, ...).
    # An existing policy-rc.d is the machine's own: never replace it.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\n# temporary, tests/testbed/up.sh\nexit 101\n' \
            >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        made_policy=1
    fi
    for try in 1 2; do
        # wait for a concurrent apt/dpkg instead of failing on its lock
        DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=120 \
            update >&2 || true
        if DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=120 \
            install -y --no-install-recommends "${missing[@]}" >&2; then
            ok=1
            break
        fi
        say "apt-get install failed (try $try)"
    done
    [ "$made_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
    [ "$ok" = 1 ] || fail "apt-get install ${missing[*]} failed"
}

check_commands() {
    local cmd cmds=(munged munge unmunge mariadb-install-db mariadbd mariadb
        mariadb-admin slurmdbd slurmctld slurmd sacctmgr sinfo scontrol ss
        setsid flock)
    [ "$tb_want_ssh" = 1 ] && cmds+=(/usr/sbin/sshd ssh ssh-keygen)
    [ "$tb_want_prom" = 1 ] && cmds+=(prometheus promtool curl)
    for cmd in "${cmds[@]}"; do
        command -v "$cmd" >/dev/null || fail "'$cmd' not found (TESTBED_SKIP_INSTALL=$tb_skip_install)"
    done
}

# ---------------------------------------------------------------- munge
munge_round_trip() { munge -n -S "$tb_munge_sock" | unmunge -S "$tb_munge_sock"; }

start_munge() {
    local d=$tb_root/munge
    # munged wants its socket dir searchable by all and its key private
    mkdir -p "$d"
    chmod 755 "$d"
    if [ ! -s "$d/munge.key" ]; then
        head -c 1024 /dev/urandom >"$d/munge.key.new"
        mv -f "$d/munge.key.new" "$d/munge.key"
    fi
    chmod 400 "$d/munge.key"
    if pidfile_pid "$d/munged.pid" munged >/dev/null; then
        say "munged already running"
    else
        say "starting munged"
        rm -f "$tb_munge_sock" "$tb_munge_sock.lock"
        spawn "$d/munged.out" munged --key-file="$d/munge.key" \
            --socket="$tb_munge_sock" --pid-file="$d/munged.pid" \
            --log-file="$d/munged.log" --seed-file="$d/munged.seed" ||
            fail "munged did not start; $(log_tail "$d/munged.log")"
    fi
    await 20 "munge round trip" "$d/munged.pid" munged "$d/munged.log" \
        munge_round_trip
}

# ---------------------------------------------------------------- mariadb
start_mariadb() {
    local d=$tb_root/mariadb
    mkdir -p "$d/data" "$d/run" "$d/log"
    if [ ! -d "$d/data/mysql" ]; then
        # --no-defaults everywhere: /etc/mysql/* would bring its own socket,
        # port and log paths
        mariadb-install-db --no-defaults --user=root --datadir="$d/data" \
            --auth-root-authentication-method=socket --skip-test-db \
            >"$d/log/install-db.log" 2>&1 ||
            fail "mariadb-install-db failed; $(log_tail "$d/log/install-db.log")"
    fi
    if pidfile_pid "$d/run/mariadbd.pid" mariadbd >/dev/null; then
        say "mariadbd already running"
    else
        need_port "$tb_mysql_port" TESTBED_MYSQL_PORT
        say "starting mariadbd on 127.0.0.1:$tb_mysql_port"
        rm -f "$d/run/mariadbd.pid"
        # the buffer pool and lock timeout are what slurmdbd checks for
        detach "$d/run/mariadbd.pid" "$d/log/mariadbd.err" \
            mariadbd --no-defaults --user=root --datadir="$d/data" \
            --socket="$tb_db_sock" --port="$tb_mysql_port" \
            --bind-address=127.0.0.1 --skip-name-resolve \
            --log-error="$d/log/mariadbd.err" \
            --innodb-buffer-pool-size=512M --innodb-log-file-size=64M \
            --innodb-lock-wait-timeout=900
    fi
    await 60 "mariadbd on port $tb_mysql_port" "$d/run/mariadbd.pid" \
        mariadbd "$d/log/mariadbd.err" \
        mariadb-admin --no-defaults --socket="$tb_db_sock" -u root ping
    mariadb --no-defaults --socket="$tb_db_sock" -u root >&2 <<SQL
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS '$db_user'@'127.0.0.1' IDENTIFIED BY '$db_pass';
CREATE USER IF NOT EXISTS '$db_user'@'localhost' IDENTIFIED BY '$db_pass';
GRANT ALL PRIVILEGES ON slurm_acct_db.* TO '$db_user'@'127.0.0.1';
GRANT ALL PRIVILEGES ON slurm_acct_db.* TO '$db_user'@'localhost';
SQL
}

# ---------------------------------------------------------------- slurmdbd
# Bind the Slurm daemons to loopback: with NoInAddrAny they bind the address
# the host name resolves to, which is only right when that is 127.x.
comm_params=
dbd_comm_params=
pick_bind() {
    local addr
    addr=$(getent ahostsv4 "$(hostname)" 2>/dev/null | awk 'NR == 1 { print $1 }')
    case $addr in
    127.*)
        comm_params=CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
        dbd_comm_params=CommunicationParameters=NoInAddrAny
        ;;
    *)
        say "warning: host name '$(hostname)' resolves to '${addr:-nothing}', not 127.x: Slurm daemons bind all addresses (clients still use 127.0.0.1)"
        comm_params="# NoInAddrAny left out: $(hostname) does not resolve to 127.x"
        dbd_comm_params=$comm_params
        ;;
    esac
}

start_slurmdbd() {
    local d=$tb_root/slurmdbd
    mkdir -p "$d/etc" "$d/log" "$d/run"
    # slurmdbd exits unless slurmdbd.conf is 0600 and owned by SlurmUser
    put "$d/etc/slurmdbd.conf" 600 <<EOF
# slurmdbd.conf - written by tests/testbed/up.sh
AuthType=auth/munge
AuthInfo=socket=$tb_munge_sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$tb_dbd_port
$dbd_comm_params
SlurmUser=root
DebugLevel=info
LogFile=$d/log/slurmdbd.log
PidFile=$d/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$tb_mysql_port
StorageUser=$db_user
StoragePass=$db_pass
StorageLoc=slurm_acct_db
EOF
    chown root:root "$d/etc/slurmdbd.conf"
    if pidfile_pid "$d/run/slurmdbd.pid" slurmdbd >/dev/null; then
        say "slurmdbd already running"
    else
        need_port "$tb_dbd_port" TESTBED_DBD_PORT
        say "starting slurmdbd on 127.0.0.1:$tb_dbd_port"
        # slurmdbd has no -f: it reads slurmdbd.conf from dirname($SLURM_CONF)
        spawn "$d/log/slurmdbd.out" env SLURM_CONF="$d/etc/slurm.conf" slurmdbd ||
            fail "slurmdbd did not start; $(log_tail "$d/log/slurmdbd.log")"
    fi
    await 60 "slurmdbd on port $tb_dbd_port" "$d/run/slurmdbd.pid" slurmdbd \
        "$d/log/slurmdbd.log" port_listening "$tb_dbd_port"
}

# ---------------------------------------------------------------- clusters
# The first cluster is the "A100" site, every other one an "H100" site.
cluster_shape() { # NAME -> "cpus mem gpu_type gpu_count"
    if [ "$1" = "$tb_first" ]; then echo "4 8000 a100 4"; else echo "8 16000 h100 2"; fi
}

# The H100 sites keep each batch script in accounting (sacct -B), as sites
# that audit job scripts do: the join-token test (t0964, WORKERS.md T11)
# checks that a token read back from there is refused.
store_flags_of() { # NAME -> a slurm.conf line
    if [ "$1" = "$tb_first" ]; then
        echo "# batch scripts are not stored in accounting (testb stores them)"
    else
        echo "AccountingStoreFlags=job_script"
    fi
}

configure_cluster() {
    local c=$1 d=$tb_root/$1 node cpus mem gtype gcount k
    node=$(node_of "$c")
    read -r cpus mem gtype gcount <<<"$(cluster_shape "$c")"
    mkdir -p "$d/etc" "$d/state" "$d/spool" "$d/log" "$d/run" "$d/dev"
    # Slurm 22.05 drops GPUs that have no File= (the node then goes INVAL),
    # so each GPU is a character device with NVIDIA's major 195 and no
    # driver behind it; a plain file is the fallback where mknod is refused.
    for ((k = 0; k < gcount; k++)); do
        [ -e "$d/dev/nvidia$k" ] ||
            mknod "$d/dev/nvidia$k" c 195 "$k" 2>/dev/null ||
            : >"$d/dev/nvidia$k"
    done
    put_changed=0
    put "$d/etc/slurm.conf" 644 <<EOF
# slurm.conf of testbed cluster $c - written by tests/testbed/up.sh
ClusterName=$c
SlurmctldHost=$tb_short_host(127.0.0.1)
SlurmctldPort=$(ctld_port_of "$c")
SlurmdPort=$(slurmd_port_of "$c")
$comm_params
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tb_munge_sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$d/etc/plugstack.conf
MailProg=/bin/true
# no cgroups: CI machines and containers have no delegated cgroup tree
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# without a default, a job would hold the whole node's memory
DefMemPerCPU=500
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$tb_dbd_port
# connections to slurmdbd take the munge socket from here, not AuthInfo
AccountingStoragePass=$tb_munge_sock
AccountingStorageTRES=gres/gpu,gres/gpu:$gtype
AccountingStorageEnforce=associations
$(store_flags_of "$c")
# report the node as declared below, not the (smaller) real hardware
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=300
KillWait=5
OverTimeLimit=0
Waittime=0
NodeName=$node NodeHostname=$tb_short_host NodeAddr=127.0.0.1 CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=$mem Gres=gpu:$gtype:$gcount State=UNKNOWN
PartitionName=$tb_partition Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
    put "$d/etc/gres.conf" 644 <<EOF
# gres.conf of testbed cluster $c: fake GPUs (device nodes without a driver)
AutoDetect=off
NodeName=$node Name=gpu Type=$gtype File=$d/dev/nvidia[0-$((gcount - 1))]
EOF
    put "$d/etc/plugstack.conf" 644 </dev/null
    if [ "$put_changed" = 1 ] &&
        pidfile_pid "$d/run/slurmctld.pid" slurmctld >/dev/null; then
        say "warning: the config of running cluster '$c' changed; run down.sh then up.sh to apply it"
    fi
}

# Accounting objects, each added only when missing (sacctmgr -i: no prompt).
# They must exist before a slurmctld registers, or its first jobs are refused.
setup_accounting() {
    local c have
    export SLURM_CONF
    SLURM_CONF=$(conf_of "$tb_first")
    await 60 "sacctmgr reaching slurmdbd" "$tb_root/slurmdbd/run/slurmdbd.pid" \
        slurmdbd "$tb_root/slurmdbd/log/slurmdbd.log" sacctmgr -n -P list cluster
    have=$(sacctmgr -n -P list cluster format=Cluster)
    for c in $tb_clusters; do
        grep -qx -- "$c" <<<"$have" || sacctmgr -i add cluster "$c" >&2
    done
    if ! sacctmgr -n -P list account "$tb_account" format=Account |
        grep -qx "$tb_account"; then
        sacctmgr -i add account "$tb_account" Description="exa testbed" \
            Organization=testbed Cluster="${tb_clusters// /,}" >&2
    fi
    for c in $tb_clusters; do
        sacctmgr -n -P list assoc cluster="$c" account="$tb_account" user=root \
            format=User | grep -qx root ||
            sacctmgr -i add user root Account="$tb_account" Cluster="$c" >&2
    done
}

node_state() { sinfo -h -n "$1" -o %t 2>/dev/null; }
node_usable() { node_state "$1" | grep -Eqx 'idle|mix|alloc|comp'; }
ctld_up() { scontrol ping | grep -q 'is UP'; }

start_cluster() {
    local c=$1 d=$tb_root/$1 node st i
    node=$(node_of "$c")
    export SLURM_CONF
    SLURM_CONF=$(conf_of "$c")
    if pidfile_pid "$d/run/slurmctld.pid" slurmctld >/dev/null; then
        say "slurmctld of '$c' already running"
    else
        need_port "$(ctld_port_of "$c")" TESTBED_CTLD_PORT
        say "starting slurmctld of '$c' on port $(ctld_port_of "$c")"
        spawn "$d/log/slurmctld.out" slurmctld -f "$SLURM_CONF" ||
            fail "slurmctld of '$c' did not start; $(log_tail "$d/log/slurmctld.log")"
    fi
    await 60 "slurmctld of '$c'" "$d/run/slurmctld.pid" slurmctld \
        "$d/log/slurmctld.log" ctld_up
    if pidfile_pid "$d/run/slurmd.pid" slurmd >/dev/null; then
        say "slurmd of '$c' already running"
    else
        need_port "$(slurmd_port_of "$c")" TESTBED_CTLD_PORT
        say "starting slurmd $node of '$c' on port $(slurmd_port_of "$c")"
        spawn "$d/log/slurmd.out" slurmd -f "$SLURM_CONF" -N "$node" ||
            fail "slurmd of '$c' did not start; $(log_tail "$d/log/slurmd.log")"
    fi
    # A node an earlier run left down or drained (slurmd killed, say) is
    # resumed once; ReturnToService=2 covers the plain "not responding" case.
    for ((i = 0; i < 20; i++)); do
        st=$(node_state "$node")
        case $st in
        idle* | mix* | alloc* | comp*) break ;;
        down* | drain* | drng* | fail* | inval*)
            say "node $node is '$st' ($(sinfo -h -n "$node" -o %E)); resuming it"
            scontrol update NodeName="$node" State=RESUME >&2 || true
            break
            ;;
        esac
        sleep 0.25
    done
    await 60 "node $node of '$c' to be idle (see sinfo -R)" \
        "$d/run/slurmd.pid" slurmd "$d/log/slurmd.log" \
        node_usable "$node"
}

# ---------------------------------------------------------------- sshd
# One sshd per cluster plays that cluster's login node. Its SetEnv puts the
# cluster's SLURM_CONF into every session it serves (commands, scp, sftp),
# with no ForceCommand and nothing in the user's ~/.ssh, as on a site where
# /etc/slurm/slurm.conf is the login node's own.
start_sshd() {
    local d=$tb_root/ssh c p
    mkdir -p "$d"
    chmod 700 "$d"
    mkdir -p /run/sshd # sshd's privilege separation directory
    chmod 755 /run/sshd
    [ -s "$d/id_ed25519" ] ||
        ssh-keygen -q -t ed25519 -N '' -C exa-testbed-client -f "$d/id_ed25519"
    put "$d/authorized_keys" 600 <"$d/id_ed25519.pub"
    for c in $tb_clusters; do
        # every login node has its own host key, as different sites would
        [ -s "$d/host_$c" ] ||
            ssh-keygen -q -t ed25519 -N '' -C "exa-testbed-$c" -f "$d/host_$c"
    done
    for c in $tb_clusters; do
        p=$(ssh_port_of "$c")
        printf '[127.0.0.1]:%s,[localhost]:%s %s\n' "$p" "$p" \
            "$(cut -d' ' -f1,2 "$d/host_$c.pub")"
    done | put "$d/known_hosts" 644
    {
        echo "# ssh_config of the exa testbed: ssh -F this-file <cluster> <command>"
        for c in $tb_clusters; do
            printf 'Host %s\n    HostName 127.0.0.1\n    Port %s\n' "$c" "$(ssh_port_of "$c")"
        done
        cat <<EOF
Host *
    User root
    IdentityFile $d/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $d/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 10
EOF
    } | put "$d/ssh_config" 644
    for c in $tb_clusters; do
        p=$(ssh_port_of "$c")
        # StrictModes no: the keys live under world-writable /tmp
        put "$d/sshd_config.$c" 600 <<EOF
# sshd_config of the login node of testbed cluster $c - tests/testbed/up.sh
Port $p
ListenAddress 127.0.0.1
HostKey $d/host_$c
PidFile $d/sshd.$c.pid
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
PrintLastLog no
SetEnv SLURM_CONF=$(conf_of "$c")
Subsystem sftp internal-sftp
EOF
        if pidfile_pid "$d/sshd.$c.pid" sshd >/dev/null; then
            say "sshd of '$c' already running"
        else
            need_port "$p" TESTBED_SSH_PORT
            say "starting sshd of '$c' on 127.0.0.1:$p"
            /usr/sbin/sshd -t -f "$d/sshd_config.$c" ||
                fail "sshd -t rejected $d/sshd_config.$c"
            spawn "$d/sshd.$c.out" /usr/sbin/sshd -f "$d/sshd_config.$c" \
                -E "$d/sshd.$c.log" ||
                fail "sshd of '$c' did not start; $(log_tail "$d/sshd.$c.log")"
        fi
    done
    for c in $tb_clusters; do
        await 20 "ssh to '$c'" "$d/sshd.$c.pid" sshd "$d/sshd.$c.log" \
            ssh -F "$d/ssh_config" "$c" true
    done
    [ "$tb_user_ssh_config" = 1 ] && install_user_ssh_block
    return 0
}

# TESTBED_SSH_USER_CONFIG=1: a marked block at the top of the user's own
# ~/.ssh/config (ssh takes the home from passwd, not $HOME), so a bare
# `ssh -p 2222 root@127.0.0.1 cmd` works too. down.sh removes it again.
install_user_ssh_block() {
    local d=$tb_root/ssh home cfg ports made_file=0 made_dir=0 c
    home=$(getent passwd "$(id -un)" | cut -d: -f6)
    cfg=$home/.ssh/config
    if [ -s "$d/user-config.state" ]; then
        read -r _ made_file made_dir <"$d/user-config.state"
    else
        [ -d "$home/.ssh" ] || made_dir=1
        [ -e "$cfg" ] || made_file=1
    fi
    mkdir -p "$home/.ssh"
    chmod 700 "$home/.ssh"
    ports=
    for c in $tb_clusters; do ports="$ports${ports:+|}$(ssh_port_of "$c")"; done
    {
        echo "$tb_user_block_begin"
        echo "Match host 127.0.0.1,localhost exec \"case %p in $ports) exit 0;; esac; exit 1\""
        echo "    IdentityFile $d/id_ed25519"
        echo "    UserKnownHostsFile $d/known_hosts"
        echo "$tb_user_block_end"
        if [ -f "$cfg" ]; then strip_user_block "$cfg"; fi
    } >"$cfg.exa-testbed"
    chmod 600 "$cfg.exa-testbed"
    mv -f "$cfg.exa-testbed" "$cfg"
    echo "$cfg $made_file $made_dir" >"$d/user-config.state"
    say "testbed block added at the top of $cfg"
}

# ---------------------------------------------------------------- prometheus
prom_has_target() {
    curl -fsS "$1/api/v1/targets?state=active" | grep -q '"scrapeUrl"'
}

start_prometheus() {
    local d=$tb_root/prometheus url
    url=http://127.0.0.1:$tb_prom_port
    mkdir -p "$d/etc" "$d/data" "$d/log"
    # targets.json belongs to the tests once it exists (they add exporters)
    [ -s "$d/etc/targets.json" ] || cat >"$d/etc/targets.json" <<EOF
[
  {"targets": ["127.0.0.1:$tb_prom_port"], "labels": {"job_kind": "prometheus"}}
]
EOF
    put "$d/etc/rules.yml" 644 <<'EOF'
groups:
  - name: exa-testbed
    rules:
      - record: testbed:targets_up:count
        expr: count(up == 1)
      - alert: TestbedTargetDown
        expr: up == 0
        for: 1m
        labels:
          severity: warning
        annotations:
          summary: "target {{ $labels.instance }} is down"
EOF
    put "$d/etc/prometheus.yml" 644 <<EOF
# prometheus.yml of the exa testbed - tests/testbed/up.sh
global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files:
  - $d/etc/rules.yml
scrape_configs:
  - job_name: testbed
    file_sd_configs:
      - files:
          - $d/etc/targets.json
        refresh_interval: 5s
EOF
    promtool check config "$d/etc/prometheus.yml" >&2 ||
        fail "promtool rejected $d/etc/prometheus.yml"
    if pidfile_pid "$d/prometheus.pid" prometheus >/dev/null; then
        say "prometheus already running"
    else
        need_port "$tb_prom_port" TESTBED_PROM_PORT
        say "starting prometheus on 127.0.0.1:$tb_prom_port"
        detach "$d/prometheus.pid" "$d/log/prometheus.log" \
            prometheus --config.file="$d/etc/prometheus.yml" \
            --storage.tsdb.path="$d/data" \
            --storage.tsdb.retention.time=2d \
            --web.listen-address="127.0.0.1:$tb_prom_port" \
            --web.enable-lifecycle
    fi
    await 60 "prometheus at $url" "$d/prometheus.pid" prometheus \
        "$d/log/prometheus.log" curl -fsS "$url/-/ready"
    # /-/ready comes seconds before file_sd's first read; wait for a target
    if grep -q '"targets": *\[ *"' "$d/etc/targets.json"; then
        await 30 "prometheus loading targets.json" "$d/prometheus.pid" \
            prometheus "$d/log/prometheus.log" \
            prom_has_target "$url"
    fi
}

# ---------------------------------------------------------------- checks
# Every port of ours must listen on loopback only.
check_loopback() {
    local p ports=("$tb_mysql_port" "$tb_dbd_port") c addrs bad=0
    for c in $tb_clusters; do
        ports+=("$(ctld_port_of "$c")" "$(slurmd_port_of "$c")")
        [ "$tb_want_ssh" = 1 ] && ports+=("$(ssh_port_of "$c")")
    done
    [ "$tb_want_prom" = 1 ] && ports+=("$tb_prom_port")
    for p in "${ports[@]}"; do
        addrs=$(ss -Hltn "sport = :$p" | awk '{ print $4 }')
        if grep -qvE '^(127\.[0-9.]+|\[::ffff:127\.[0-9.]+\]|\[::1\]):' <<<"$addrs"; then
            say "warning: port $p listens beyond loopback: $(tr '\n' ' ' <<<"$addrs")"
            bad=1
        fi
    done
    return "$bad"
}

# ---------------------------------------------------------------- env
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
write_env() {
    local c u
    {
        echo "export TESTBED_ROOT=$(q "$tb_root")"
        echo "export TESTBED_CLUSTERS=$(q "$tb_clusters")"
        echo "export SLURM_CONF=$(q "$(conf_of "$tb_first")")"
        for c in $tb_clusters; do
            u=$(env_suffix "$c")
            echo "export TESTBED_SLURM_CONF_$u=$(q "$(conf_of "$c")")"
            echo "export TESTBED_NODE_$u=$(q "$(node_of "$c")")"
            [ "$tb_want_ssh" = 1 ] &&
                echo "export TESTBED_SSH_PORT_$u=$(q "$(ssh_port_of "$c")")"
        done
        echo "export TESTBED_ACCOUNT=$(q "$tb_account")"
        echo "export TESTBED_PARTITION=$(q "$tb_partition")"
        echo "export TESTBED_MUNGE_SOCKET=$(q "$tb_munge_sock")"
        if [ "$tb_want_ssh" = 1 ]; then
            echo "export TESTBED_SSH_HOST='127.0.0.1'"
            echo "export TESTBED_SSH_USER='root'"
            echo "export TESTBED_SSH_PORT=$(q "$(ssh_port_of "$tb_first")")"
            echo "export TESTBED_SSH_KEY=$(q "$tb_root/ssh/id_ed25519")"
            echo "export TESTBED_SSH_KNOWN_HOSTS=$(q "$tb_root/ssh/known_hosts")"
            echo "export TESTBED_SSH_CONFIG=$(q "$tb_root/ssh/ssh_config")"
        fi
        if [ "$tb_want_prom" = 1 ]; then
            echo "export TESTBED_PROM_URL=$(q "http://127.0.0.1:$tb_prom_port")"
            echo "export TESTBED_PROM_SD_FILE=$(q "$tb_root/prometheus/etc/targets.json")"
        fi
    } | put "$tb_root/env.sh" 644
}

# ---------------------------------------------------------------- main
step packages
[ "$tb_skip_install" = 1 ] || install_packages
check_commands
step_done
say "PID 1 is '$(cat /proc/1/comm 2>/dev/null)'; daemons are started directly, never through systemd"

mkdir -p "$tb_root"
chmod 755 "$tb_root"
exec {tb_lock}>"$tb_root/.lock"
flock -w 300 "$tb_lock" || fail "another up.sh or down.sh holds $tb_root/.lock"
pick_bind

step munge
start_munge
step_done
step mariadb
start_mariadb
step_done
step slurmdbd
start_slurmdbd
step_done
for c in $tb_clusters; do configure_cluster "$c"; done
step accounting
setup_accounting
step_done
for c in $tb_clusters; do
    step "cluster-$c"
    start_cluster "$c"
    step_done
done
if [ "$tb_want_ssh" = 1 ]; then
    step sshd
    start_sshd
    step_done
fi
if [ "$tb_want_prom" = 1 ]; then
    step prometheus
    start_prometheus
    step_done
fi
check_loopback || true
write_env
cat "$tb_root/env.sh"
say "up in $(tb_ms "$tb_t0") ms: ${step_times[*]}"
printf '%s total=%sms %s\n' "$(date -u +%FT%TZ)" "$(tb_ms "$tb_t0")" "${step_times[*]}" \
    >>"$tb_root/timings.log"
