#!/bin/sh
# run-bench.sh - run every bench/*.sh against $EXA; each prints ratios.
set -eu
cd "$(dirname "$0")/.."
for b in bench/*.sh; do
    [ -e "$b" ] || continue
    echo "== $b"
    sh "$b"
done
