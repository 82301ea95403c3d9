# shellcheck shell=bash
# lib-testbed.sh - helpers for integration tests that use the real testbed.
#
# Sourced by tests/integration/t*.t, next to lib.sh (which has the TAP
# helpers; this file prints only require_testbed's skip plan). The testbed (tests/testbed/up.sh)
# describes itself through the TESTBED_* variables it prints; these helpers
# only read them, so a test works against any root and ports. A cluster is
# named as in $TESTBED_CLUSTERS (testa, testb); its slurm.conf is
# $TESTBED_SLURM_CONF_<NAME upper-cased, '-' as '_'>.
#
# Slurm accounting is asynchronous. Right after a job ends sacct can still
# say RUNNING; and a job that ends within a second or two can reach
# slurmdbd before its start record does, so for a few seconds sacct shows a
# partial row: the right State, ExitCode, Account and AllocTRES, but
# JobName "allocation", an empty Partition and Eligible "Unknown"
# (22.05.8, seen on this testbed). tb_wait_state therefore polls, and waits
# for an end state in sacct with the Partition filled in.

# require_testbed: print a TAP skip-all plan and exit 0 unless the testbed
# is up (TESTBED_ROOT set and its env file present)
require_testbed() {
    if [ -z "${TESTBED_ROOT:-}" ]; then
        echo "1..0 # SKIP testbed not running (TESTBED_ROOT unset; see tests/testbed/README.md)"
        exit 0
    fi
    if [ ! -s "$TESTBED_ROOT/env.sh" ]; then
        echo "1..0 # SKIP no testbed at TESTBED_ROOT='$TESTBED_ROOT' (no env.sh)"
        exit 0
    fi
}

# tb_conf CLUSTER: print the path of CLUSTER's slurm.conf; 1 if unknown
tb_conf() {
    local var
    var=TESTBED_SLURM_CONF_$(tr 'a-z-' 'A-Z_' <<<"$1")
    if [ -z "${!var:-}" ]; then
        echo "tb_conf: unknown testbed cluster '$1'" >&2
        return 1
    fi
    echo "${!var}"
}

# tb_slurm CLUSTER CMD ARGS...: run a Slurm command against CLUSTER
tb_slurm() {
    local conf
    conf=$(tb_conf "$1") || return 1
    shift
    SLURM_CONF=$conf "$@"
}

# tb_sbatch CLUSTER SBATCH-ARGS...: submit with sbatch --parsable on CLUSTER
# and print the job id alone (without a ";cluster" suffix). The caller
# passes --account (AccountingStorageEnforce=associations is on; root's
# default account is not $TESTBED_ACCOUNT). Returns sbatch's status.
tb_sbatch() {
    local c=$1 out rc
    shift
    out=$(tb_slurm "$c" sbatch --parsable "$@") || {
        rc=$?
        echo "tb_sbatch: sbatch on '$c' exited $rc" >&2
        return "$rc"
    }
    echo "${out%%;*}"
}

# tb_job_state CLUSTER JOBID: print the job's state, taken from sacct's
# allocation line (first word: "CANCELLED by 0" prints CANCELLED), or from
# squeue when accounting has no record yet; empty when neither knows it
tb_job_state() {
    local st
    st=$(tb_slurm "$1" sacct -X -n -P -j "$2" -o State 2>/dev/null | head -n 1)
    if [ -z "$st" ]; then
        st=$(tb_slurm "$1" squeue -h -t all -j "$2" -o %T 2>/dev/null | head -n 1)
    fi
    echo "${st%% *}"
}

# tb_wait_state CLUSTER JOBID STATE TIMEOUT: poll every 0.5 s until the job
# is in STATE (a Slurm state name, e.g. RUNNING, COMPLETED, TIMEOUT);
# TIMEOUT is in seconds. End states are awaited in sacct, so a test may
# query sacct right after; other states in squeue, then sacct. Returns 0,
# or 1 after TIMEOUT with the last state seen on stderr.
tb_wait_state() {
    local c=$1 id=$2 want=$3 secs=$4 end st
    end=$((SECONDS + secs))
    while :; do
        case $want in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL | \
            PREEMPTED | BOOT_FAIL | DEADLINE)
            # "STATE|PARTITION"; an empty partition marks a partial record
            st=$(tb_slurm "$c" sacct -X -n -P -j "$id" -o State,Partition \
                2>/dev/null | head -n 1)
            if [ -n "$st" ] && [ -z "${st#*|}" ]; then
                st="${st%%|*} (partial record)"
            else
                st=${st%%|*}
                st=${st%% *}
            fi
            ;;
        *)
            st=$(tb_slurm "$c" squeue -h -j "$id" -o %T 2>/dev/null | head -n 1)
            [ -n "$st" ] || st=$(tb_job_state "$c" "$id")
            ;;
        esac
        [ "$st" = "$want" ] && return 0
        if [ "$SECONDS" -ge "$end" ]; then
            echo "tb_wait_state: job $id on '$c' is '${st:-unknown}', not '$want', after ${secs}s" >&2
            return 1
        fi
        sleep 0.5
    done
}

# tb_ssh CLUSTER CMD...: run CMD on CLUSTER's login node through the
# testbed's ssh_config (BatchMode, StrictHostKeyChecking=yes, its own key
# and known_hosts). As with ssh itself, the words of CMD are joined with
# spaces and run by the remote shell: quote for that shell.
tb_ssh() {
    local c=$1
    shift
    ssh -F "$TESTBED_SSH_CONFIG" -- "$c" "$@"
}
