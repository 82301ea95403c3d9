#!/bin/bash
# bench/submit.sh - `exa hpc submit` against a raw `sbatch` loop on the
# shared testbed (cluster $CLUSTER, default testa; local transport; held
# jobs).
#
# N (default 200) submits each way, interleaved one for one so machine
# noise and slurmctld load hit both alike:
#   raw:  sbatch --parsable --hold --account=A --output=... SCRIPT
#   exa:  exa hpc submit SCRIPT --hold (stages the script and run.sh in a
#         job directory, records the job in platform.db, then sbatch)
# Prints the mean wall time per job of each and the ratio exa / raw. With
# EXA_BEFORE (another build of exa), its submits run in the same loop
# too, on a database of their own (a build refuses a newer schema), and
# its figure and the ratio after / before are printed. Every job
# submitted here is held and cancelled at the end (scancel by id).
# Skips when the testbed is not running.
#
#   EXA=build/exa N=200 [EXA_BEFORE=/tmp/exa-main] bench/submit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${EXA:=$PWD/build/exa}"
N=${N:-200}
if [ -z "${TESTBED_ROOT:-}" ] && [ -s /tmp/exa-testbed/env.sh ]; then
    . /tmp/exa-testbed/env.sh
fi
if [ -z "${TESTBED_ROOT:-}" ]; then
    echo "bench/submit.sh: skipped (testbed not running)"
    exit 0
fi
T=$(mktemp -d /tmp/exa-bench-submit.XXXXXX)
ids=()
cleanup() {
    if [ ${#ids[@]} -gt 0 ]; then
        printf '%s\n' "${ids[@]}" | xargs -n 100 scancel 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config
export EXAMLOPS_DB=$T/platform.db EXAMLOPS_HPC_SCHEDULER=slurm
CLUSTER=${CLUSTER:-testa}
up=$(tr a-z A-Z <<<"$CLUSTER") conf_var=TESTBED_SLURM_CONF_$up
export EXAMLOPS_HPC_CLUSTER=$CLUSTER EXAMLOPS_HPC_TRANSPORT=local
export EXAMLOPS_HPC_ACCOUNT=$TESTBED_ACCOUNT EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote
export SLURM_CONF=${!conf_var}
mkdir -p "$HOME" "$T/raw"
"$EXA" -q hpc connect localhost --name "$CLUSTER" --scheduler slurm >/dev/null
"$EXA" -q -y hpc approve "$CLUSTER" >/dev/null
if [ -n "${EXA_BEFORE:-}" ]; then
    (export EXAMLOPS_DB=$T/before.db HOME=$T/before-home \
         XDG_CONFIG_HOME=$T/before-config XDG_DATA_HOME=$T/before-data
     mkdir -p "$HOME"
     "$EXA_BEFORE" -q hpc connect localhost --name "$CLUSTER" \
         --scheduler slurm >/dev/null
     "$EXA_BEFORE" -q -y hpc approve "$CLUSTER" >/dev/null)
fi
printf '#!/bin/sh\ntrue\n' >"$T/job.sh"
chmod +x "$T/job.sh"

exa_us=0 raw_us=0 before_us=0
for i in $(seq 1 "$N"); do
    if [ -n "${EXA_BEFORE:-}" ]; then
        t0=${EPOCHREALTIME/[.,]/}
        out=$(EXAMLOPS_DB=$T/before.db HOME=$T/before-home \
            XDG_CONFIG_HOME=$T/before-config XDG_DATA_HOME=$T/before-data \
            "$EXA_BEFORE" hpc submit "$T/job.sh" --hold)
        t1=${EPOCHREALTIME/[.,]/}
        id=$(sed -n 's/^Submitted job \([0-9]*\) .*/\1/p' <<<"$out")
        [ -n "$id" ] || { echo "submit.sh: EXA_BEFORE hpc submit said '$out'" >&2; exit 1; }
        ids+=("$id")
        before_us=$((before_us + 10#$t1 - 10#$t0))
    fi
    t0=${EPOCHREALTIME/[.,]/}
    out=$("$EXA" hpc submit "$T/job.sh" --hold)
    t1=${EPOCHREALTIME/[.,]/}
    id=$(sed -n 's/^Submitted job \([0-9]*\) .*/\1/p' <<<"$out")
    [ -n "$id" ] || { echo "submit.sh: exa hpc submit said '$out'" >&2; exit 1; }
    ids+=("$id")
    t2=${EPOCHREALTIME/[.,]/}
    id=$(sbatch --parsable --hold --account="$TESTBED_ACCOUNT" \
        --job-name="bench-raw-$i" --output="$T/raw/%j.out" "$T/job.sh")
    t3=${EPOCHREALTIME/[.,]/}
    ids+=("${id%%;*}")
    exa_us=$((exa_us + 10#$t1 - 10#$t0))
    raw_us=$((raw_us + 10#$t3 - 10#$t2))
done
awk -v n="$N" -v c="$CLUSTER" -v e="$exa_us" -v r="$raw_us" \
    -v b="$before_us" 'BEGIN {
    printf "%d held jobs each way on %s (local transport):\n", n, c
    printf "  raw sbatch        %8.2f ms/job\n", r / n / 1000
    printf "  exa hpc submit    %8.2f ms/job\n", e / n / 1000
    printf "  ratio exa / raw   %8.2fx (target <= 1.5x)\n", e / r
    if (b > 0) {
        printf "  EXA_BEFORE        %8.2f ms/job (%.2fx raw)\n", b / n / 1000, b / r
        printf "  after / before    %8.3fx\n", e / b
    }
}'
