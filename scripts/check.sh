#!/bin/bash
# check.sh - what `make check` runs after installing test dependencies:
# the format check (scripts/check-format.sh), the layering scan (scripts/check-layering.sh), the line-splitting scan
# (scripts/check-sched-lines.sh), the dead-reference scan (scripts/check-refs.sh), build,
# the instruction-count check (scripts/check-icount.sh, callgrind against
# bench/icount.txt), unit tests,
# integration tests against the real Slurm testbed, then
# both suites again built with ASan+UBSan. The testbed is started once
# (tests/testbed/up.sh) and stopped at the end if this script started it.
set -euo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
started=
if [ "${EXA_TESTBED:-1}" != 0 ] && [ -z "${TESTBED_ROOT:-}" ]; then
    root=${EXA_TESTBED_ROOT:-/tmp/exa-testbed}
    was_up=
    # Up already when its env file exists and its MariaDB still runs (not
    # only when slurmctld answers: a fault test may have it down briefly).
    if [ -r "$root/env.sh" ] && [ -r "$root/mariadb/run/mariadbd.pid" ] &&
        kill -0 "$(cat "$root/mariadb/run/mariadbd.pid")" 2>/dev/null; then
        was_up=1
    fi
    tb_env=$(TESTBED_ROOT=$root timeout 300 tests/testbed/up.sh) || {
        echo "check.sh: the Slurm testbed failed to start" >&2; exit 1; }
    eval "$tb_env"
    [ -n "$was_up" ] || started=1
fi
cleanup() {
    if [ -n "$started" ]; then tests/testbed/down.sh --purge >&2 || true; fi
}
trap cleanup EXIT
scripts/check-format.sh
scripts/check-layering.sh
scripts/check-sched-lines.sh
scripts/check-refs.sh
$MAKE --no-print-directory -j2 all
scripts/check-icount.sh
$MAKE --no-print-directory check-unit check-integration
$MAKE --no-print-directory sanitize
