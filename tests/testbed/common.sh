# shellcheck shell=bash
# common.sh - settings and helpers shared by tests/testbed/up.sh and down.sh.
#
# Sourced, never run. Both scripts must agree on where everything lives
# (root, ports, pid files) and on how a pid file is trusted, so that
# down.sh stops exactly what up.sh started and nothing else. A pid file is
# trusted only when /proc/<pid>/comm is the daemon we expect and the process
# is not a zombie: daemons killed here are reaped lazily by PID 1 (not
# systemd on CI machines), so a zombie still has its old comm for a second
# or two.

# ---- settings (every one can be overridden from the environment)
# shellcheck disable=SC2034 # used by the scripts that source this file
{
tb_root=${TESTBED_ROOT:-/tmp/exa-testbed}
tb_clusters=${TESTBED_CLUSTERS:-"testa testb"}
tb_mysql_port=${TESTBED_MYSQL_PORT:-3307}
tb_dbd_port=${TESTBED_DBD_PORT:-6819}
tb_ctld_base=${TESTBED_CTLD_PORT:-6817}
tb_ssh_base=${TESTBED_SSH_PORT:-2222}
tb_prom_port=${TESTBED_PROM_PORT:-9090}
tb_want_ssh=${TESTBED_SSH:-1}
tb_want_prom=${TESTBED_PROMETHEUS:-1}
tb_skip_install=${TESTBED_SKIP_INSTALL:-0}
tb_user_ssh_config=${TESTBED_SSH_USER_CONFIG:-0}

tb_account=research
tb_partition=debug
tb_munge_sock=$tb_root/munge/munge.socket.2
tb_db_sock=$tb_root/mariadb/run/mysqld.sock
tb_user_block_begin='# >>> exa-testbed (tests/testbed/up.sh; removed by down.sh) >>>'
tb_user_block_end='# <<< exa-testbed <<<'
}

# ---- logging: progress goes to stderr; stdout belongs to the env lines
tb_t0=$(date +%s%N)
# tb_ms T0: milliseconds since T0 (a `date +%s%N` value)
tb_ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
say() {
    local ms
    ms=$(tb_ms "$tb_t0")
    # shellcheck disable=SC2154 # tb_me is set by the sourcing script
    printf '%s %3d.%01ds %s\n' "$tb_me" $((ms / 1000)) $((ms % 1000 / 100)) \
        "$*" >&2
}
fail() { say "error: $*"; exit 1; }

# Refuse roots whose removal (down.sh --purge) would be a disaster.
tb_check_root() {
    case ${tb_root%/} in
    "" | / | /tmp | /root | /home | /var | /usr | /etc | /work)
        fail "refusing TESTBED_ROOT='$tb_root'" ;;
    esac
    case $tb_root in
    /*) ;;
    *) fail "TESTBED_ROOT must be an absolute path, not '$tb_root'" ;;
    esac
}

# cluster_index NAME -> 0-based position of NAME in $tb_clusters
cluster_index() {
    local c i=0
    for c in $tb_clusters; do
        [ "$c" = "$1" ] && { echo "$i"; return 0; }
        i=$((i + 1))
    done
    return 1
}
ctld_port_of() { echo $((tb_ctld_base + 10 * $(cluster_index "$1"))); }
slurmd_port_of() { echo $(($(ctld_port_of "$1") + 1)); }
ssh_port_of() { echo $((tb_ssh_base + $(cluster_index "$1"))); }
conf_of() { echo "$tb_root/$1/etc/slurm.conf"; }
node_of() { echo "$1-n1"; }
# env_suffix NAME -> NAME upper-cased with '-' as '_' (TESTBED_NODE_<suffix>)
env_suffix() { tr 'a-z-' 'A-Z_' <<<"$1"; }

# proc_live PID COMM: PID runs (not a zombie) and its comm is COMM
proc_live() {
    local stat
    [ -n "$1" ] || return 1
    [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] || return 1
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    # field 3 (state) follows the parenthesised comm
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# pidfile_pid PIDFILE COMM: print the pid in PIDFILE when it is a live COMM
pidfile_pid() {
    local pid
    [ -s "$1" ] || return 1
    pid=$(tr -cd '0-9' <"$1")
    proc_live "$pid" "$2" || return 1
    echo "$pid"
}

# port_listening PORT: something listens on TCP PORT (any address)
port_listening() {
    ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# strip_user_block FILE: print FILE without the testbed's marked block
strip_user_block() {
    awk -v b="$tb_user_block_begin" -v e="$tb_user_block_end" \
        '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' "$1"
}
