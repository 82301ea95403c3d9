#!/bin/sh
# bench/spawn.sh - the cost of starting a command from exa as its own
# resident memory grows: subprocess_run against a bare posix_spawnp +
# waitpid (the floor) and against fork + execvp (how subprocess_run
# started children until session 14), interleaved. exa serve and the
# pipeline run scheduler commands from processes of hundreds of MiB.
#
#   SIZES="0 256 1024" SPAWN_N=200 bench/spawn.sh
set -eu
cd "$(dirname "$0")/.."
make -s build/libexa.a >/dev/null
tmp=$(mktemp -d /tmp/exa-bench-spawn.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -D_GNU_SOURCE -O2 -Isrc -include src/libutil/banned.h \
    -o "$tmp/spawn" bench/spawn.c build/libexa.a -lpthread
# shellcheck disable=SC2086
"$tmp/spawn" ${SIZES:-0 256 1024}
