# shellcheck shell=bash
# lib-sched.sh - helpers for the scheduler-adapter integration tests
# (t03NN). Sourced after lib-testbed.sh when that exists.
#
# sched_setup CLUSTER MODE: a private HOME, XDG_DATA_HOME and EXAMLOPS_DB
# under a temp dir ($T), the Slurm adapter, fast polling, and the
# connection to CLUSTER (testa | testb) either locally (SLURM_CONF) or over
# the cluster's loopback sshd with the testbed's key and known_hosts.

: "${EXA:?EXA must name the exa binary}"

if [ -f "$(dirname "$0")/lib-testbed.sh" ]; then
    # shellcheck source=/dev/null
    . "$(dirname "$0")/lib-testbed.sh"
fi
if ! command -v require_testbed >/dev/null 2>&1; then
    require_testbed() {
        if [ -z "${TESTBED_ROOT:-}" ] || [ ! -s "$TESTBED_ROOT/env.sh" ]; then
            echo "1..0 # SKIP testbed not running (TESTBED_ROOT unset)"
            exit 0
        fi
    }
fi

n=0
fails=0
ok() {
    n=$((n + 1))
    if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
is() { # is GOT WANT NAME
    if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got: '$1'  want: '$2'"; fi
}

sched_setup() {
    local cluster=$1 mode=$2 up
    up=$(tr 'a-z' 'A-Z' <<<"$cluster")
    T=$(mktemp -d /tmp/exa-t03.XXXXXX)
    trap 'rm -rf "$T"' EXIT
    export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config
    export EXAMLOPS_DB=$T/platform.db
    mkdir -p "$HOME"
    export EXAMLOPS_HPC_SCHEDULER=slurm EXAMLOPS_HPC_CLUSTER=$cluster
    export EXAMLOPS_HPC_POLL_INTERVAL=1 EXAMLOPS_SLURM_CMD_TIMEOUT=20
    export EXAMLOPS_HPC_ACCOUNT=$TESTBED_ACCOUNT
    # every job directory lives under $T: over ssh the testbed's sshd logs
    # in as this machine's user, and the default ($HOME/.local/share/...
    # of the remote side) would be the real home directory
    export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote
    local conf_var=TESTBED_SLURM_CONF_$up port_var=TESTBED_SSH_PORT_$up
    TB_CONF=${!conf_var}   # for checks made directly with Slurm's tools
    if [ "$mode" = ssh ]; then
        export EXAMLOPS_HPC_TRANSPORT=ssh EXAMLOPS_HPC_SSH_HOST=$TESTBED_SSH_HOST
        export EXAMLOPS_HPC_SSH_USER=$TESTBED_SSH_USER
        export EXAMLOPS_HPC_SSH_KEY=$TESTBED_SSH_KEY
        export EXAMLOPS_HPC_SSH_PORT=${!port_var}
        export EXAMLOPS_HPC_SSH_KNOWN_HOSTS=$TESTBED_SSH_KNOWN_HOSTS
        unset SLURM_CONF
    else
        export EXAMLOPS_HPC_TRANSPORT=local SLURM_CONF=${!conf_var}
    fi
    sched_register "$cluster" "$mode"
}

# sched_register CLUSTER MODE: register CLUSTER (connect: the host key is
# pinned, the identity recorded) and approve it, as a sysadmin would; the
# gate refuses every cluster that is not registered and ACTIVE
sched_register() {
    local cluster=$1 mode=$2 up port_var
    up=$(tr 'a-z' 'A-Z' <<<"$cluster")
    port_var=TESTBED_SSH_PORT_$up
    if [ "$mode" = ssh ]; then
        "$EXA" -q hpc connect "$TESTBED_SSH_HOST" --name "$cluster" -u "$TESTBED_SSH_USER" \
            -k "$TESTBED_SSH_KEY" -p "${!port_var}" --scheduler slurm >/dev/null
    else
        "$EXA" -q hpc connect localhost --name "$cluster" --scheduler slurm >/dev/null
    fi || echo "# sched_register: connect $cluster ($mode) failed" >&2
    "$EXA" -q -y hpc approve "$cluster" >/dev/null ||
        echo "# sched_register: approve $cluster failed" >&2
}

# submit ARGS...: exa --json hpc submit; prints the job id
submit() {
    "$EXA" --json hpc submit "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])'
}

# jfield JOBID FIELD: one field of `exa --json hpc status JOBID`
jfield() {
    "$EXA" --json hpc status "$1" | python3 -c "import json,sys; v=json.load(sys.stdin)[0]['$2']; print('' if v is None else v)"
}

# wait_state JOBID STATE SECS: poll exa hpc status until STATE
wait_state() {
    local end=$((SECONDS + $3)) st
    while :; do
        st=$(jfield "$1" state)
        [ "$st" = "$2" ] && return 0
        [ "$SECONDS" -ge "$end" ] && { echo "# job $1 is '$st', not '$2'"; return 1; }
        sleep 0.5
    done
}
