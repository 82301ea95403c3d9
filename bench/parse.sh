#!/bin/sh
# parse.sh - issue 4: how much slower than reading the bytes is parsing a
# large sinfo? Generates `sinfo -N -o '%N|%c|%m|%G|%t|%P'` output for
# 10,000 nodes in the layout of the testbed capture
# (tests/fixtures/slurm/sinfo-pipe-header.out), each node listed under two
# partitions like real -N output, then times `exa debug parse sinfo` and
# `wc -l` on the same bytes and prints the ratio (best of 5 each).
set -eu
: "${EXA:?EXA must name the exa binary}"
nodes=${BENCH_NODES:-10000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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

best() { # best wall time in seconds of 5 runs of "$@" < sinfo.out
    b=
    for _ in 1 2 3 4 5; do
        t0=$(date +%s.%N)
        "$@" <"$tmp/sinfo.out" >/dev/null
        t1=$(date +%s.%N)
        t=$(echo "$t1 - $t0" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
    done
    echo "$b"
}
bytes=$(wc -c <"$tmp/sinfo.out")
got=$("$EXA" debug parse sinfo <"$tmp/sinfo.out" | grep -c '"name"')
[ "$got" -eq "$nodes" ] || { echo "parse.sh: parsed $got nodes, expected $nodes" >&2; exit 1; }
p=$(best "$EXA" debug parse sinfo)
w=$(best wc -l)
printf 'sinfo %d nodes (%d rows, %d bytes): exa debug parse %.4fs, wc -l %.4fs, ratio %.1fx\n' \
    "$nodes" $((nodes * 2)) "$bytes" "$p" "$w" "$(echo "$p / $w" | bc -l)"
