#!/bin/bash
# t0502-job-map.t - exa hpc job-map prolog|epilog as Slurm runs them: the
# job id from SLURM_JOB_ID, GPUs from SLURM_JOB_GPUS (or CUDA_VISIBLE_DEVICES),
# the directory from EXAMLOPS_JOB_MAP_DIR; files appear for the right GPU
# indices, two jobs on one node keep their own files, the epilog removes
# only its own id, and re-running either is harmless.
set -u
. "$(dirname "$0")/lib-observe.sh"

export EXAMLOPS_JOB_MAP_DIR="$EXA_T/map"
listing() { (cd "$EXAMLOPS_JOB_MAP_DIR" 2>/dev/null && for f in $(ls -A | sort); do
    printf '%s=%s;' "$f" "$(tr '\n' ' ' <"$f")"; done); }

SLURM_JOB_ID=184729 SLURM_JOB_GPUS=0,1,3 "$EXA" -q hpc job-map prolog
is "prolog exits 0" "$?" 0
is "one file per GPU index holding the job id" "$(listing)" "0=184729 ;1=184729 ;3=184729 ;"
SLURM_JOB_ID=184729 SLURM_JOB_GPUS=0,1,3 "$EXA" -q hpc job-map prolog
is "prolog is idempotent" "$(listing)" "0=184729 ;1=184729 ;3=184729 ;"

# a second job on the same node: GPU 2 and (sharded) GPU 3
out=$(SLURM_JOB_ID=184730 CUDA_VISIBLE_DEVICES=2,3 "$EXA" --json hpc job-map prolog)
is "second job via CUDA_VISIBLE_DEVICES" \
    "$(echo "$out" | jq -c '[.gpus, .gpus_source, .files_changed]')" '[["2","3"],"CUDA_VISIBLE_DEVICES",2]'
is "both jobs keep their files" "$(listing)" "0=184729 ;1=184729 ;2=184730 ;3=184729 184730 ;"

SLURM_JOB_ID=184729 SLURM_JOB_GPUS=0,1,3 "$EXA" -q hpc job-map epilog
is "epilog removes only its own id" "$(listing)" "2=184730 ;3=184730 ;"
SLURM_JOB_ID=184729 "$EXA" -q hpc job-map epilog
is "epilog is idempotent (no GPU list needed)" "$(listing)" "2=184730 ;3=184730 ;"
SLURM_JOB_ID=184730 "$EXA" -q hpc job-map epilog --dir "$EXAMLOPS_JOB_MAP_DIR"
is "last epilog leaves an empty directory" "$(ls -A "$EXAMLOPS_JOB_MAP_DIR")" ""

SLURM_JOB_ID=7 "$EXA" -q hpc job-map prolog
is "a job without GPUs writes nothing" "$(ls -A "$EXAMLOPS_JOB_MAP_DIR")" ""
"$EXA" hpc job-map prolog --job-id 9 --gpus 0-1 --dir "$EXA_T/other" -q
is "--job-id/--gpus/--dir override the environment" \
    "$(cat "$EXA_T/other/0" "$EXA_T/other/1" | tr '\n' ' ')" "9 9 "

SLURM_JOB_GPUS=0 "$EXA" hpc job-map prolog >/dev/null 2>&1
is "no job id is a usage error" "$?" 2
SLURM_JOB_ID='1;rm' SLURM_JOB_GPUS=0 "$EXA" hpc job-map prolog >/dev/null 2>&1
is "a job id with odd characters is refused" "$?" 2
SLURM_JOB_ID=5 SLURM_JOB_GPUS=GPU-5d1e "$EXA" hpc job-map prolog >/dev/null 2>&1
is "a GPU UUID instead of an index is refused" "$?" 2
"$EXA" hpc job-map resume >/dev/null 2>&1
is "unknown action is a usage error" "$?" 2
done_testing
