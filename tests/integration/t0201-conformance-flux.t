#!/bin/bash
# t0201-conformance-flux.t - `exa debug parse` against every handed case of
# the Flux kinds and nvidia-smi in ../shared/cases (doc/formats.md), one TAP
# line per case, compared by tests/conformance/compare_flux.py. The case
# files are read in place, never copied. The case's `command` is passed in
# EXA_PARSE_COMMAND: headerless nvidia-smi output is named by its query.
set -u
cd "$(dirname "$0")/../.."
: "${EXA:=$PWD/build/exa}"
CASES=${EXA_CASES_DIR:-../shared/cases}
KINDS="flux-jobs flux-eventlog flux-resource nvidia-smi"

if [ ! -d "$CASES" ]; then
    echo "1..0 # SKIP no case corpus at $CASES"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/xdg" EXAMLOPS_DB="$tmp/exa.db"
mkdir -p "$HOME" "$XDG_DATA_HOME"

cases=()
for kind in $KINDS; do
    for f in "$CASES/$kind"/*.in; do
        [ -e "$f" ] && cases+=("$kind:$f")
    done
done
if [ ${#cases[@]} -eq 0 ]; then
    echo "1..0 # SKIP no flux or nvidia-smi cases in $CASES"
    exit 0
fi
echo "1..${#cases[@]}"
n=0
for c in "${cases[@]}"; do
    kind=${c%%:*}
    in=${c#*:}
    base=${in%.in}
    name=$kind/$(basename "$base")
    n=$((n + 1))
    cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("command") or "")' "$base.expect")
    EXA_PARSE_COMMAND="$cmd" "$EXA" debug parse "$kind" < "$in" \
        > "$tmp/out.json" 2> "$tmp/err.txt"
    rc=$?
    if python3 tests/conformance/compare_flux.py "$kind" "$base.expect" \
        "$tmp/out.json" "$rc" > "$tmp/diff.txt" 2>&1; then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name"
        sed 's/^/# /' "$tmp/diff.txt" | head -20
    fi
done
