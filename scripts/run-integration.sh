#!/bin/bash
# run-integration.sh - run tests/integration/*.t under prove against $EXA.
#
# The Slurm testbed (tests/testbed/up.sh) is started unless EXA_TESTBED=0 or
# TESTBED_ROOT is already set in the environment. A testbed that was
# already running (its env.sh exists and slurmctld answers) is reused and
# left running; one this script started is stopped on exit. Tests that
# need the testbed skip when TESTBED_ROOT is unset. Each test file runs
# under scripts/test-timeout.sh (EXA_TEST_TIMEOUT_S, default 900 s).
set -euo pipefail
: "${EXA:?EXA must name the exa binary}"
cd "$(dirname "$0")/.."
started=
if [ "${EXA_TESTBED:-1}" != 0 ] && [ -z "${TESTBED_ROOT:-}" ] \
    && [ -x tests/testbed/up.sh ]; then
    root=${EXA_TESTBED_ROOT:-/tmp/exa-testbed}
    was_up=
    # Up already when its env file exists and its MariaDB still runs (not
    # only when slurmctld answers: a fault test may have it down briefly).
    if [ -r "$root/env.sh" ] && [ -r "$root/mariadb/run/mariadbd.pid" ] &&
        kill -0 "$(cat "$root/mariadb/run/mariadbd.pid")" 2>/dev/null; then
        was_up=1
    fi
    tb_env=$(TESTBED_ROOT=$root timeout 300 tests/testbed/up.sh) || {
        echo "run-integration.sh: testbed failed to start" >&2; exit 1; }
    eval "$tb_env"
    [ -n "$was_up" ] || started=1
fi
cleanup() {
    if [ -n "$started" ]; then tests/testbed/down.sh >&2 || true; fi
}
trap cleanup EXIT
export EXA
tests=(tests/integration/*.t)
[ -e "${tests[0]}" ] || { echo "run-integration.sh: no tests" >&2; exit 1; }
# every test file is bounded in time (scripts/test-timeout.sh)
prove -f --exec scripts/test-timeout.sh "${tests[@]}"
