#!/bin/sh
# parse.sh - issue 4: how much slower than reading the bytes is parsing a
# large sinfo? Generates `sinfo -N -o '%N|%c|%m|%G|%t|%P'` output for
# 10,000 nodes in the layout of the testbed capture
# (tests/fixtures/slurm/sinfo-pipe-header.out), each node listed under two
# partitions like real -N output, then times `exa debug parse sinfo` and
# `wc -l` on the same bytes and prints the ratio (best of 5 each).
# Issue 14: then the same for squeue and sacct, BENCH_ROWS (100,000) rows
# each in exa's own query formats (libsched/parse_slurm.h:
# SLURM_SQUEUE_FORMAT with its header, 0x1E before each record and 0x1F
# between fields, the id again at its end; sacct --parsable2 --delimiter=0x1F -o SLURM_SACCT_FIELDS
# with its header, one row in four a .batch step). With ICOUNT=1 it also
# prints callgrind's instruction count of each parse (and of wc -l); with
# EXA_BEFORE set, that build is measured too, in the same run, first.
set -eu
: "${EXA:?EXA must name the exa binary}"
nodes=${BENCH_NODES:-10000}
rows=${BENCH_ROWS:-100000}
tmp=${KEEP:-$(mktemp -d)}
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
awk -v n="$nodes" 'BEGIN {
    print "NODELIST|CPUS|MEMORY|GRES|STATE|PARTITION"
    split("idle mix alloc drain* down~ idle+drain", st, " ")
    for (i = 1; i <= n; i++) {
        g = (i % 3 == 0) ? "gpu:a100:4(S:0-1)" : (i % 3 == 1 ? "gpu:h100:8" : "(null)")
        s = st[(i % 6) + 1]
        printf "gpu-%05d|%d|%d|%s|%s|%s\n", i, 64, 512000, g, s, "gpu*"
        printf "gpu-%05d|%d|%d|%s|%s|%s\n", i, 64, 512000, g, s, "long"
    }
}' >"$tmp/sinfo.out"

best() { # best wall time in seconds of 5 runs of "$@" < FILE
    in=$1
    shift
    b=
    for _ in 1 2 3 4 5; do
        t0=$(date +%s.%N)
        "$@" <"$in" >/dev/null
        t1=$(date +%s.%N)
        t=$(echo "$t1 - $t0" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
    done
    echo "$b"
}
awk -v n="$rows" 'BEGIN {
    printf "\036JOBID\037STATE\037TIME\037TIME_LIMIT\037TIME_LEFT\037START_TIME"
    printf "\037END_TIME\037SUBMIT_TIME\037NODES\037CPUS\037PARTITION\037ACCOUNT"
    printf "\037USER\037NAME\037REASON\037NODELIST\037TRES_PER_NODE\037JOBID\n"
    for (i = 0; i < n; i++) {
        if (i % 5 < 3)
            printf "\036%d\037RUNNING\0371:02:03\0372-00:00:00\0371-22:57:57" \
                "\0372026-12-01T10:00:00\0372026-12-03T10:00:00\0372026-12-01T09:59:00" \
                "\0372\03764\037gpu\037ml\037u%03d\037train-%d\037None" \
                "\037gpu-[%05d-%05d]\037gres/gpu:4\037%d\n", 1000000 + i, i % 200, i,
                i % 9000 + 1, i % 9000 + 2, 1000000 + i
        else
            printf "\036%d\037PENDING\0370:00\0371:00:00\0371:00:00\037N/A" \
                "\037N/A\0372026-12-01T09:59:00\0371\0378\037cpu\037bio\037u%03d" \
                "\037prep-%d\037Priority\037\037N/A\037%d\n", 1000000 + i, i % 200, i,
                1000000 + i
    }
}' >"$tmp/squeue.out"
awk -v n="$rows" 'BEGIN {
    printf "JobID\037JobIDRaw\037State\037ExitCode\037Start\037End\037Submit"
    printf "\037ElapsedRaw\037AllocTRES\037NodeList\037Partition\037Account"
    printf "\037User\037JobName\037NCPUS\037TimelimitRaw\n"
    for (i = 0; i < n; i++) {
        id = 2000000 + int(i / 4) * 4
        st = (i % 7 == 0) ? "FAILED" : (i % 11 == 0 ? "CANCELLED by 1000" : "COMPLETED")
        ex = (i % 7 == 0) ? "1:0" : "0:0"
        if (i % 4 == 3)
            printf "%d.batch\037%d\037%s\037%s\0372026-12-01T10:00:00\0372026-12-01T11:00:00" \
                "\0372026-12-01T09:59:00\0373600\037cpu=8,mem=32000M,node=1,gres/gpu=2" \
                "\037gpu-%05d\037\037\037\037batch\0378\037\n", id, i, st, ex, i % 9000 + 1
        else
            printf "%d\037%d\037%s\037%s\0372026-12-01T10:00:00\0372026-12-01T11:00:00" \
                "\0372026-12-01T09:59:00\0373600\037billing=8,cpu=8,gres/gpu=2,mem=32000M,node=1" \
                "\037gpu-[%05d-%05d]\037gpu\037ml\037u%03d\037job-%d\0378\0371440\n",
                i % 4 == 0 ? id : id + i % 4, i % 4 == 0 ? id : id + i % 4, st, ex,
                i % 9000 + 1, i % 9000 + 2, i % 200, i
    }
}' >"$tmp/sacct.out"

# measure BIN LABEL: wall (best of 5) of each parse against wc -l, and with
# ICOUNT=1 callgrind's instruction counts
measure() {
    bin=$1
    label=$2
    for k in sinfo squeue sacct; do
        nr=$rows
        what='"state"'
        if [ "$k" = sinfo ]; then
            nr=$((nodes * 2))
            what='"name"'
        fi
        want=$rows
        [ "$k" = sinfo ] && want=$nodes
        got=$("$bin" debug parse "$k" <"$tmp/$k.out" | grep -c "$what")
        [ "$got" -eq "$want" ] || { echo "parse.sh: $label $k: parsed $got, expected $want" >&2; exit 1; }
        p=$(best "$tmp/$k.out" "$bin" debug parse "$k")
        w=$(best "$tmp/$k.out" wc -l)
        printf '%s%s %d rows (%d bytes): exa debug parse %.4fs, wc -l %.4fs, ratio %.1fx\n' \
            "$label" "$k" "$nr" "$(wc -c <"$tmp/$k.out")" "$p" "$w" "$(echo "$p / $w" | bc -l)"
        if [ "${ICOUNT:-}" = 1 ]; then
            c=$(icount "$tmp/$k.out" "$bin" debug parse "$k")
            cw=$(icount "$tmp/$k.out" wc -l)
            printf '%s%s: %d instructions (%d per row), wc -l %d\n' "$label" "$k" "$c" $((c / nr)) "$cw"
        fi
    done
}
icount() { # instructions of "$@" < FILE, from callgrind
    in=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --log-file="$tmp/vg.log" "$@" <"$in" >/dev/null
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/vg.log"
}

# EXA_BEFORE: an older build measured in the same run, before EXA
if [ -n "${EXA_BEFORE:-}" ]; then
    measure "$EXA_BEFORE" 'before: '
    measure "$EXA" 'after:  '
else
    measure "$EXA" ''
fi
