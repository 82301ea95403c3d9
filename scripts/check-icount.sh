#!/bin/bash
# check-icount.sh [--update] - the instruction-count regression check of
# `make check` (issue 14; bench/README.md "Instruction counts").
#
# Wall time on a shared 2-core machine varies by 2x between runs, so the
# speed figures that must not regress are counted in instructions
# (valgrind's callgrind, Ir of the exa process itself; children are not
# traced), which repeat to well under 1%. Two small fixed inputs, a few
# seconds under callgrind each:
#   parse-sinfo-1000   `exa debug parse sinfo` on 1,000 nodes (2,000 rows,
#                      the layout of bench/parse.sh)
#   exporter-1000      `exa serve --once` (one collection and one render)
#                      on bench/exporter_gen.py's 100 nodes and 1,000 jobs
#                      (seeded), served by sinfo/squeue stand-ins
# Each count is compared with bench/icount.txt ("NAME COUNT" lines): more
# than 20% above it fails (exit 1), more than 20% below it asks for the
# baseline to be lowered with --update (which rewrites the file). Skips
# (exit 0) when valgrind is missing. EXA defaults to build/exa.
set -euo pipefail
cd "$(dirname "$0")/.."
EXA=$(realpath "${EXA:-build/exa}")
BASE=bench/icount.txt
update=
[ "${1:-}" = --update ] && update=1
if ! command -v valgrind >/dev/null; then
    echo "check-icount: skipped (valgrind not installed)"
    exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/exa-icount.XXXXXX")
trap 'rm -rf "$T"' EXIT

# icount CMD...: instructions of CMD (stdin as given), from callgrind
icount() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --log-file="$T/vg.log" "$@" >/dev/null
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/vg.log" | sort -n | tail -1
}

# 1. sinfo, 1,000 nodes
awk -v n=1000 'BEGIN {
    print "NODELIST|CPUS|MEMORY|GRES|STATE|PARTITION"
    split("idle mix alloc drain* down~ idle+drain", st, " ")
    for (i = 1; i <= n; i++) {
        g = (i % 3 == 0) ? "gpu:a100:4(S:0-1)" : (i % 3 == 1 ? "gpu:h100:8" : "(null)")
        s = st[(i % 6) + 1]
        printf "gpu-%05d|%d|%d|%s|%s|%s\n", i, 64, 512000, g, s, "gpu*"
        printf "gpu-%05d|%d|%d|%s|%s|%s\n", i, 64, 512000, g, s, "long"
    }
}' >"$T/sinfo.out"
sinfo_n=$(icount "$EXA" debug parse sinfo <"$T/sinfo.out")

# 2. the exporter, one collection and render
mkdir -p "$T/bin" "$T/home"
for c in sinfo squeue; do
    printf '#!/bin/sh\nexec cat "%s/%s.txt"\n' "$T" "$c" >"$T/bin/$c"
done
chmod +x "$T/bin/"*
(
    export EXAMLOPS_DB="$T/platform.db" HOME="$T/home" XDG_DATA_HOME="$T/home"
    export EXAMLOPS_HPC_REGISTRY="$T/clusters.yaml" PATH="$T/bin:$PATH"
    "$EXA" hpc prometheus-sd >/dev/null
    sqlite3 "$EXAMLOPS_DB" "INSERT INTO clusters(name,scheduler,transport,state,created_at,updated_at)
        VALUES('bench','slurm','local','PENDING','x','x')"
    "$EXA" -y hpc approve bench >/dev/null
    python3 bench/exporter_gen.py "$T" 100 1000
    icount "$EXA" serve --once </dev/null
) >"$T/exporter.n"
exporter_n=$(tail -1 "$T/exporter.n")

if [ -n "$update" ]; then
    printf 'parse-sinfo-1000 %s\nexporter-1000 %s\n' "$sinfo_n" "$exporter_n" >"$BASE"
    echo "check-icount: wrote $BASE"
    cat "$BASE"
    exit 0
fi
fail=0
check() { # check NAME COUNT
    local want
    want=$(awk -v k="$1" '$1 == k {print $2}' "$BASE")
    if [ -z "$want" ]; then
        echo "check-icount: $1: no baseline in $BASE (run $0 --update)" >&2
        fail=1
        return
    fi
    awk -v n="$1" -v got="$2" -v want="$want" 'BEGIN {
        r = got / want
        printf "check-icount: %-18s %12d instructions, baseline %12d (%.3fx)\n", n, got, want, r
        if (r > 1.2) { printf "check-icount: %s grew by more than 20%%\n", n > "/dev/stderr"; exit 1 }
        if (r < 0.8) printf "check-icount: %s dropped by more than 20%%: lower the baseline (%s --update)\n", n, "scripts/check-icount.sh"
    }' || fail=1
}
check parse-sinfo-1000 "$sinfo_n"
check exporter-1000 "$exporter_n"
exit "$fail"
