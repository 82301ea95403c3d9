#!/bin/sh
# run-fuzz.sh SECONDS BIN... - run each libFuzzer target for SECONDS on a
# scratch copy of its seed corpus (fuzz/corpus/<name>/).
set -eu
secs=$1; shift
for bin in "$@"; do
    name=$(basename "$bin")
    work=build/fuzz/work/$name
    mkdir -p "$work"
    [ -d "fuzz/corpus/${name#fuzz_}" ] && cp -r "fuzz/corpus/${name#fuzz_}/." "$work/" || true
    echo "fuzz: $name for ${secs}s"
    "$bin" -artifact_prefix=build/fuzz/ -max_total_time="$secs" -max_len=65536 -print_final_stats=1 "$work" \
        2>build/fuzz/$name.log || { tail -40 build/fuzz/$name.log; exit 1; }
    grep -E 'stat::number_of_executed_units' build/fuzz/$name.log || true
done
