#!/bin/bash
# run-integration.sh - run tests/integration/*.t under prove against $EXA.
#
# Starts the project's Slurm testbed (tests/testbed/up.sh) unless
# EXA_TESTBED=0 or it is already up (TESTBED_ROOT set), and stops what it
# started on exit. Tests that need the testbed skip when TESTBED_ROOT is
# unset.
set -euo pipefail
: "${EXA:?EXA must name the exa binary}"
cd "$(dirname "$0")/.."
started=
if [ "${EXA_TESTBED:-1}" != 0 ] && [ -z "${TESTBED_ROOT:-}" ] \
    && [ -x tests/testbed/up.sh ]; then
    tb_env=$(timeout 300 tests/testbed/up.sh) || {
        echo "run-integration.sh: testbed failed to start" >&2; exit 1; }
    eval "$tb_env"
    started=1
fi
cleanup() { [ -n "$started" ] && tests/testbed/down.sh >&2 || true; }
trap cleanup EXIT
export EXA
tests=(tests/integration/*.t)
[ -e "${tests[0]}" ] || { echo "run-integration.sh: no tests" >&2; exit 1; }
prove -f "${tests[@]}"
