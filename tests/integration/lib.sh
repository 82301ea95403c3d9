# lib.sh - tiny TAP helpers for exa's integration tests (bash).
#
#   . "$(dirname "$0")/lib.sh"
#   exa_test_env            # private temp dirs + environment, cleaned on exit
#   run_exa --json hpc jobs # sets RC, OUT (stdout), ERR (stderr)
#   is "$RC" 0 "exit status"
#   ok "valid json" jq -e . <<<"$OUT"
#   done_testing            # prints the plan; exit 1 if anything failed
#
# Or declare the plan first with `plan N`. `skip_all REASON` prints
# "1..0 # SKIP REASON" and exits. Every test gets $EXA (absolute path of
# the binary) from scripts/run-integration.sh.

: "${EXA:?EXA must name the exa binary}"

_tap_n=0
_tap_failed=0
_tap_planned=

plan() {
    _tap_planned=$1
    echo "1..$1"
}

skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

diag() {
    local line
    while IFS= read -r line; do echo "# $line"; done <<<"$*"
}

_tap_result() { # _tap_result PASSED DESC
    _tap_n=$((_tap_n + 1))
    if [ "$1" = 1 ]; then
        echo "ok $_tap_n - $2"
    else
        echo "not ok $_tap_n - $2"
        _tap_failed=$((_tap_failed + 1))
    fi
}

# ok DESC CMD [ARGS...]: passes when CMD exits 0 (stdin is passed on, its
# stdout is discarded so it cannot break the TAP stream).
ok() {
    local desc=$1
    shift
    if "$@" >/dev/null; then
        _tap_result 1 "$desc"
    else
        _tap_result 0 "$desc"
        diag "command failed: $*"
    fi
}

# json_ok DESC [JQ-ARGS...] FILTER: passes when `jq -e FILTER` is true on
# $OUT (set by run_exa); jq's own output is discarded.
json_ok() {
    local desc=$1
    shift
    if jq -e "$@" <<<"$OUT" >/dev/null 2>&1; then
        _tap_result 1 "$desc"
    else
        _tap_result 0 "$desc"
        diag "jq -e ${*: -1} is not true on:"
        diag "$(head -c 2000 <<<"$OUT")"
    fi
}

# is GOT WANT DESC: string equality.
is() {
    if [ "$1" = "$2" ]; then
        _tap_result 1 "$3"
    else
        _tap_result 0 "$3"
        diag "got:  '$1'"
        diag "want: '$2'"
    fi
}

# isnt GOT UNWANTED DESC
isnt() {
    if [ "$1" != "$2" ]; then
        _tap_result 1 "$3"
    else
        _tap_result 0 "$3"
        diag "got the unwanted value '$1'"
    fi
}

# like GOT ERE DESC: GOT matches the extended regular expression.
like() {
    if grep -Eq -- "$2" <<<"$1"; then
        _tap_result 1 "$3"
    else
        _tap_result 0 "$3"
        diag "'$1'"
        diag "does not match /$2/"
    fi
}

# skip DESC REASON: an ok line with the skip directive.
skip() {
    _tap_n=$((_tap_n + 1))
    echo "ok $_tap_n - $1 # skip $2"
}

done_testing() {
    [ -n "$_tap_planned" ] || echo "1..$_tap_n"
    [ "$_tap_failed" -eq 0 ]
    exit $?
}

# wait_pid PID [SECONDS]: wait for a background child, at most SECONDS
# (default 120); returns its exit status, or 124 after killing it with
# SIGKILL when it outlived the bound, so no test can hang the suite.
# wait_worker_port LOG PID: up to 30 s for `exa serve` (PID) to log its
# worker listener's port in LOG; prints the port, or nothing when serve
# ended or never said it.
wait_worker_port() {
    local p i
    for i in $(seq 300); do
        p=$(sed -n 's/.*worker API on port \([0-9]*\).*/\1/p' "$1")
        [ -n "$p" ] && break
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    printf '%s' "$p"
}

wait_pid() {
    local pid=$1 lim=${2:-120} n
    n=$((lim * 10))
    while [ $n -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        n=$((n - 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        diag "process $pid still ran after $lim s: killed"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        return 124
    fi
    wait "$pid"
}

# wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds (0) or
# SECONDS have passed (1).
wait_for() {
    local n=$(($1 * 10))
    shift
    while [ $n -gt 0 ]; do
        "$@" && return 0
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}

# run_exa ARGS...: run $EXA, setting RC, OUT and ERR.
run_exa() {
    local o e
    o=$(mktemp "$T/out.XXXXXX")
    e=$(mktemp "$T/err.XXXXXX")
    RC=0
    "$EXA" "$@" >"$o" 2>"$e" || RC=$?
    OUT=$(cat "$o")
    ERR=$(cat "$e")
    rm -f "$o" "$e"
}

# exa_test_env: a private scratch directory $T (removed on exit) and an
# environment that points every exa path into it, so no test touches the
# user's real data: EXAMLOPS_DB, XDG_DATA_HOME, XDG_CONFIG_HOME, HOME,
# EXAMLOPS_HPC_REGISTRY. Scheduler selection is reset to the mock default.
exa_test_env() {
    T=$(mktemp -d "${TMPDIR:-/tmp}/exa-it.XXXXXX")
    trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
    export HOME="$T/home"
    export XDG_DATA_HOME="$T/data"
    export XDG_CONFIG_HOME="$T/config"
    export EXAMLOPS_DB="$T/db/platform.db"
    export EXAMLOPS_HPC_REGISTRY="$T/config/examlops/clusters.yaml"
    mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$T/db"
    unset EXAMLOPS_HPC_SCHEDULER EXAMLOPS_SLURM_MODE EXAMLOPS_PM100_PATH \
        EXAMLOPS_HPC_CLUSTER EXAMLOPS_HPC_TRANSPORT EXAMLOPS_HPC_SSH_HOST
    SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    SAMPLE="$SRCDIR/data/pm100-sample.csv"
}

# state_digest: one hash of what exa keeps (platform.db's content as SQL,
# and every path and file under $XDG_DATA_HOME), to compare before/after.
state_digest() {
    {
        if [ -e "$EXAMLOPS_DB" ]; then
            sqlite3 "$EXAMLOPS_DB" .dump 2>&1
        else
            echo "no database"
        fi
        (cd "$XDG_DATA_HOME" && find . | LC_ALL=C sort)
        (cd "$XDG_DATA_HOME" && find . -type f -exec sha256sum {} + |
            LC_ALL=C sort)
    } | sha256sum | cut -d' ' -f1
}
