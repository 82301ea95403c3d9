#!/bin/bash
# t0210-own-cases.t - the synthetic parser cases committed in tests/cases
# (same layout and envelope as ../shared/cases, see its doc/formats.md) through
# `exa debug parse KIND`, compared by tests/conformance/compare.py. Unlike
# t0200/t0201 this never skips: the files are in the repository. The case's
# `command` is passed in EXA_PARSE_COMMAND (headerless nvidia-smi output is
# named by its query).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cases=$root/tests/cases
: "${EXA:=$root/build/exa}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export EXAMLOPS_DB=$tmp/platform.db XDG_DATA_HOME=$tmp/data HOME=$tmp/home
mkdir -p "$HOME" "$XDG_DATA_HOME"

list=()
for in in "$cases"/*/*.in; do
    [ -e "$in" ] && list+=("$in")
done
if [ ${#list[@]} -eq 0 ]; then
    echo "1..1"
    echo "not ok 1 - no cases under $cases"
    exit 0
fi
echo "1..${#list[@]}"
n=0
for in in "${list[@]}"; do
    kind=$(basename "$(dirname "$in")")
    name=$(basename "$in" .in)
    expect=${in%.in}.expect
    n=$((n + 1))
    cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("command") or "")' "$expect")
    EXA_PARSE_COMMAND="$cmd" "$EXA" debug parse "$kind" <"$in" \
        >"$tmp/out.json" 2>"$tmp/err"
    rc=$?
    # compare.py requires no top-level key for sinfo/flux-resource; here a
    # key the case expects ("groups" vs "nodes") must be there as well
    if diag=$(python3 "$root/tests/conformance/compare.py" "$kind" \
                  "$expect" "$tmp/out.json" 2>&1) &&
       diag=$(python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))
try:
    a = json.load(open(sys.argv[2]))
except ValueError:
    a = {}
miss = [k for k in e.get("result", {}) if k not in a]
if miss:
    print("missing top-level keys %s" % miss)
    sys.exit(1)' "$expect" "$tmp/out.json" 2>&1); then
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
