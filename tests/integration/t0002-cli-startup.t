#!/bin/bash
# t0002-cli-startup - what a command maps at start-up (issue 14): the exa
# binary names no libxgboost (nor its libgomp, libdmlc, libstdc++), so
# `exa --version` and `exa --json hpc jobs` never map it (the dynamic
# loader's own trace, LD_DEBUG=files, lists every object it opens);
# training loads it at run time, and a missing library is one clear error
# naming it, with nothing half-written.
. "$(dirname "$0")/lib.sh"
exa_test_env

needed=$(readelf -d "$EXA" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
# Under `make sanitize` libubsan itself needs libstdc++: there only
# XGBoost's own libraries count.
xgb='libxgboost|libgomp|libdmlc|libstdc'
case "$needed" in *libubsan*) xgb='libxgboost|libgomp|libdmlc' ;; esac
ok "the binary does not link libxgboost ($needed)" \
    sh -c "! printf '%s\n' '$needed' | grep -Eq '$xgb'"

maps() { # maps CMD...: the objects the loader opened, one per line
    LD_DEBUG=files "$@" 2>&1 >/dev/null | sed -n 's/.*file=\([^ ]*\) .*/\1/p' | sort -u
}
v=$(maps "$EXA" --version)
like "$v" "libsqlite3" "LD_DEBUG=files lists what exa --version maps"
is "$(grep -Ec "$xgb" <<<"$v")" 0 \
    "exa --version maps no libxgboost, libgomp, libdmlc or libstdc++"
j=$(maps "$EXA" --json hpc jobs)
is "$(grep -Ec 'libxgboost|libgomp' <<<"$j")" 0 "nor does exa --json hpc jobs"

t=$(maps "$EXA" train --model JPCP --dataset PM100Dataset \
    --dataset-path "$SAMPLE" --out "$T/art" --dummy)
like "$t" "libxgboost" "exa train loads libxgboost when it trains"
ok "and trains" test -s "$T/art/model.json"

EXAMLOPS_XGBOOST_LIBRARY=$T/no/libxgboost.so.0 run_exa train --model JPCP \
    --dataset PM100Dataset --dataset-path "$SAMPLE" --out "$T/art2" --dummy
is "$RC" 1 "a missing libxgboost: exit 1"
like "$ERR" "cannot load XGBoost library '$T/no/libxgboost.so.0'" \
    "the error names the library"
is "$(grep -c "error:" <<<"$ERR")" 1 "one error line (a dataset warning may precede it)"
like "$(grep "error:" <<<"$ERR")" "libxgboost0" "naming the Debian package"
ok "nothing half-written" test ! -e "$T/art2"
done_testing
