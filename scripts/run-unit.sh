#!/bin/sh
# run-unit.sh DIR BIN... - run the cmocka unit test binaries under prove
# (TAP), from the repository root so tests find tests/fixtures.
set -eu
dir=$1; shift
[ $# -gt 0 ] || { echo "run-unit.sh: no unit tests found" >&2; exit 1; }
CMOCKA_MESSAGE_OUTPUT=TAP
export CMOCKA_MESSAGE_OUTPUT
exec prove -f --exec '' "$@"
