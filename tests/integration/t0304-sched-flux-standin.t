#!/bin/bash
# t0304-sched-flux-standin.t - the Flux adapter end to end through real
# processes: a stand-in `flux` on PATH logs its argv and answers in the
# formats exa asks for (flux batch prints an F58 id; flux jobs prints the
# 0x1F-separated row; flux job info ID eventlog prints RFC 18 JSON lines).
# Checks the translated flags (FSD time with Slurm's minute rule, -g per
# slot: the job total split over the slots, --bank dropped without flux-accounting), status of a listed job and
# of one only the eventlog knows, and cancel.
set -u
: "${EXA:?EXA must name the exa binary}"
T=$(mktemp -d /tmp/exa-t0304.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T/home XDG_DATA_HOME=$T/data EXAMLOPS_DB=$T/platform.db
mkdir -p "$HOME" "$T/bin"
unset EXAMLOPS_SLURM_MODE EXAMLOPS_HPC_SSH_HOST EXAMLOPS_HPC_CLUSTER EXAMLOPS_HPC_WORKDIR
export EXAMLOPS_HPC_SCHEDULER=flux EXAMLOPS_HPC_TRANSPORT=local EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote
export FLUX_LOG=$T/flux.log
cat > "$T/bin/flux" <<'SH'
#!/bin/bash
printf '%s\n' "$*" >> "$FLUX_LOG"
case "$1 $2" in
"account --help") exit 1 ;;
"batch "*) echo "ƒ2TR77Ao1" ;;
"cancel "*) [ "$2" = "ƒ2TR77Ao1" ] || { echo "flux-cancel: ERROR: $2: unknown job id" >&2; exit 1; } ;;
"jobs "*)
    for a in "$@"; do
        [ "$a" = "ƒ2TR77Ao1" ] &&
            printf 'ƒ2TR77Ao1\037INACTIVE\037COMPLETED\0371738774194.078\0371738774194.117\0371738774200.182\0370\0376.06\n'
        [ "$a" = "ƒGone" ] && echo "flux-jobs: ERROR: ƒGone: unknown job id" >&2
    done
    exit 0 ;;
"job info")
    [ "$3" = "ƒGone" ] || exit 1
    printf '%s\n' '{"timestamp":1738774194.0,"name":"submit","context":{"userid":0}}' \
        '{"timestamp":1738774194.1,"name":"alloc","context":{}}' \
        '{"timestamp":1738774194.2,"name":"start","context":{}}' \
        '{"timestamp":1738774199.2,"name":"finish","context":{"status":256}}' \
        '{"timestamp":1738774199.3,"name":"clean","context":{}}' ;;
*) echo "stand-in flux: unexpected: $*" >&2; exit 2 ;;
esac
SH
chmod +x "$T/bin/flux"
export PATH="$T/bin:$PATH"
# the gate matches the environment's target (flux over the local transport)
# against the registry: register it in clusters.yaml and approve it
mkdir -p "$HOME/.config/examlops"
printf 'clusters:\n  fluxl:\n    scheduler: flux\n    transport: local\n' > "$HOME/.config/examlops/clusters.yaml"
"$EXA" -q -y hpc approve fluxl > /dev/null || echo "# approving fluxl failed"
n=0; fails=0
is() {
    n=$((n + 1))
    if [ "$1" = "$2" ]; then echo "ok $n - $3"; else echo "not ok $n - $3"; echo "#   got: '$1'  want: '$2'"; fails=$((fails + 1)); fi
}
echo "1..8"
printf 'echo hi\n' > "$T/job.sh"
out=$("$EXA" --json hpc submit "$T/job.sh" --time=90 --ntasks=2 --gpus=4 --account=bank1 --mem=4G 2> "$T/warn")
is "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")" "ƒ2TR77Ao1" "flux batch id recorded"
line=$(grep '^batch ' "$FLUX_LOG")
case "$line" in *" -n2 -g2 -t5400s "*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "flags: -n2 -g2 (4 GPUs over 2 slots) -t5400s (90 minutes)"
case "$line" in *--bank*) r=1 ;; *) r=0 ;; esac
is "$r" 0 "--bank not sent without flux-accounting"
is "$(grep -c "account 'bank1' dropped\|mem '4G' dropped" "$T/warn")" 2 "dropped account and mem are warned about"
st=$("$EXA" --json hpc status "ƒ2TR77Ao1" "ƒGone")
is "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[0]["state"], d[0]["exit_code"], d[0]["elapsed_s"])' <<<"$st")" \
    "COMPLETED 0 6" "listed job: COMPLETED, exit 0, runtime 6 s"
is "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[1]["state"], d[1]["exit_code"])' <<<"$st")" \
    "FAILED 1" "eventlog-only job: wait status 256 is FAILED exit 1"
is "$(grep -c '^jobs ' "$FLUX_LOG")" 1 "one flux jobs call for both ids"
"$EXA" hpc cancel "ƒ2TR77Ao1" > /dev/null 2>&1
is "$?/$(grep -c '^cancel ' "$FLUX_LOG")" "1/0" "cancel of a COMPLETED job exits 1 and runs no flux cancel"
exit $((fails > 0))
