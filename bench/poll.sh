#!/bin/sh
# bench/poll.sh - batched status polling against one query per job.
#
# Part 1 (fake transport, 10,000 jobs): builds bench/poll.c against
# build/libexa.a and prints calls per poll and us per job, side by side.
# Part 2 (real processes): `exa hpc status` for 1,000 ids through the local
# transport with squeue/sacct stand-ins on PATH that print captured rows,
# against the same stand-ins run once per job (what a per-job poll costs in
# process spawns alone).
set -eu
cd "$(dirname "$0")/.."
: "${EXA:=$PWD/build/exa}"
make -s build/libexa.a >/dev/null
tmp=$(mktemp -d /tmp/exa-bench-poll.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
CFLAGS_B="-std=c11 -D_GNU_SOURCE -O2 -Isrc -include src/libutil/banned.h"
# shellcheck disable=SC2046
cc $CFLAGS_B $(pkg-config --cflags jansson) -o "$tmp/poll" bench/poll.c \
    build/libexa.a $(pkg-config --libs jansson sqlite3) -lm -lpthread
echo "-- fake transport, 10000 jobs"
"$tmp/poll"

echo "-- real processes (local transport, stand-ins on PATH), 1000 jobs"
mkdir -p "$tmp/bin"
cat > "$tmp/bin/squeue" <<'SH'
#!/bin/sh
echo squeue >> "$BENCH_LOG"
ids=
while [ $# -gt 0 ]; do [ "$1" = -j ] && ids=$2; shift; done
printf '%s\n' "$ids" | tr ',' '\n' | awk '$1 % 2 == 0 { printf "%s\037RUNNING\037None\0372026-11-30T01:00:02\0372026-11-30T01:00:03\0372026-11-30T01:10:03\n", $1 }'
SH
cat > "$tmp/bin/sacct" <<'SH'
#!/bin/sh
echo sacct >> "$BENCH_LOG"
ids=
while [ $# -gt 0 ]; do [ "$1" = -j ] && ids=$2; shift; done
printf '%s\n' "$ids" | tr ',' '\n' | awk '$1 % 2 == 1 { printf "%s\037COMPLETED\0370:0\0372026-11-30T00:59:43\0372026-11-30T00:59:46\0372026-11-30T00:59:48\0372\037billing=1,cpu=1,gres/gpu=1,mem=500M,node=1\n", $1 }'
SH
chmod +x "$tmp/bin/squeue" "$tmp/bin/sacct"
ids=$(seq 800000 800999 | tr '\n' ' ')
export BENCH_LOG="$tmp/log" EXAMLOPS_DB="$tmp/p.db" HOME="$tmp" \
    EXAMLOPS_HPC_SCHEDULER=slurm EXAMLOPS_HPC_TRANSPORT=local
# the gate runs nothing on an unapproved target: the environment's target
# registers itself PENDING on first use; approve it as a sysadmin would
PATH="$tmp/bin:$PATH" "$EXA" --json hpc status 800000 >/dev/null 2>&1 || true
"$EXA" -q -y hpc approve env-slurm-local >/dev/null
: > "$tmp/log"
t0=$(date +%s%N)
# shellcheck disable=SC2086
PATH="$tmp/bin:$PATH" "$EXA" --json hpc status $ids > "$tmp/out.json"
t1=$(date +%s%N)
batched_calls=$(wc -l < "$tmp/log")
sort "$tmp/log" | uniq -c | sed "s/^/# batched: /"
: > "$tmp/log"
t2=$(date +%s%N)
for id in $(seq 800000 800099); do
    PATH="$tmp/bin:$PATH" squeue -h -j "$id" -o x > /dev/null
    PATH="$tmp/bin:$PATH" sacct -X -j "$id" > /dev/null
done
t3=$(date +%s%N)
single_calls=$(($(wc -l < "$tmp/log") * 10))
b_us=$(( (t1 - t0) / 1000 / 1000 ))
s_us=$(( (t3 - t2) / 1000 / 100 ))
echo "calls per poll, batched:  $batched_calls"
echo "calls per poll, per job:  $single_calls"
echo "us per job, batched:      $b_us (whole exa process included)"
echo "us per job, per job:      $s_us (two spawns per job)"
echo "time ratio:               $(awk "BEGIN { printf \"%.1f\", $s_us / ($b_us > 0 ? $b_us : 1) }")x"
grep -c '"state": "COMPLETED"' "$tmp/out.json" | sed 's/^/completed seen: /'
