#!/bin/sh
# run-unit.sh DIR BIN... - run the cmocka unit test binaries under prove
# (TAP), from the repository root so tests find tests/fixtures. HOME and
# every exa data and config path point into a scratch directory removed on
# exit, so no unit test can read or write the user's real files.
set -eu
dir=$1; shift
[ $# -gt 0 ] || { echo "run-unit.sh: no unit tests found" >&2; exit 1; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/exa-unit.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
mkdir -p "$scratch/home" "$scratch/data" "$scratch/config"
HOME=$scratch/home
XDG_DATA_HOME=$scratch/data
XDG_CONFIG_HOME=$scratch/config
EXAMLOPS_DB=$scratch/data/examlops/platform.db
EXAMLOPS_HPC_REGISTRY=$scratch/config/examlops/clusters.yaml
CMOCKA_MESSAGE_OUTPUT=TAP
export HOME XDG_DATA_HOME XDG_CONFIG_HOME EXAMLOPS_DB EXAMLOPS_HPC_REGISTRY \
    CMOCKA_MESSAGE_OUTPUT
# each binary bounded in time like the integration tests
prove -f --exec "$(dirname "$0")/test-timeout.sh" "$@"
