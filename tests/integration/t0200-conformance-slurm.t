#!/bin/bash
# t0200-conformance-slurm.t - every handed Slurm and hostlist case through
# `exa debug parse KIND`, compared with NAME.expect by doc/formats.md's rules
# (tests/conformance/compare.py). One TAP line per case. The cases live in
# ../shared/cases relative to the repository root and are never copied in.
# The case's `command` is part of the input: it is passed with --command
# (headerless output is named by its format, separators by -P/--delimiter).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cases=$root/../shared/cases
: "${EXA:?EXA must name the exa binary}"
if [ ! -d "$cases" ]; then
    echo "1..0 # SKIP no case corpus at $cases"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export EXAMLOPS_DB=$tmp/platform.db XDG_DATA_HOME=$tmp/data HOME=$tmp/home
mkdir -p "$HOME" "$XDG_DATA_HOME"

kinds="sinfo squeue sacct sbatch hostlist"
list=()
for kind in $kinds; do
    for in in "$cases/$kind"/*.in; do
        [ -e "$in" ] && list+=("$kind:$in")
    done
done
if [ ${#list[@]} -eq 0 ]; then
    echo "1..0 # SKIP no slurm cases under $cases"
    exit 0
fi
echo "1..${#list[@]}"
n=0
for item in "${list[@]}"; do
    kind=${item%%:*}
    in=${item#*:}
    name=$(basename "$in" .in)
    expect=${in%.in}.expect
    n=$((n + 1))
    cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("command") or "")' "$expect")
    "$EXA" debug parse "$kind" --command "$cmd" <"$in" >"$tmp/out.json" \
        2>"$tmp/err"
    rc=$?
    if diag=$(python3 "$root/tests/conformance/compare.py" "$kind" \
                  "$expect" "$tmp/out.json" 2>&1); then
        # an error case must also exit non-zero, a result case zero
        if grep -q '"error"' "$expect" && ! grep -q '"result"' "$expect" \
            && [ $rc -eq 0 ]; then
            echo "not ok $n - $kind/$name exited 0 on rejected input"
        elif grep -q '"result"' "$expect" && [ $rc -ne 0 ]; then
            echo "not ok $n - $kind/$name exited $rc"
        else
            echo "ok $n - $kind/$name"
        fi
    else
        echo "not ok $n - $kind/$name"
        printf '%s\n' "$diag" | sed 's/^/# /'
    fi
done
