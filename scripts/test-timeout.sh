#!/bin/bash
# test-timeout.sh TEST - run one TAP test file under a wall-clock bound, for
# prove --exec (scripts/run-integration.sh). GNU timeout(1) puts the test
# in its own process group and signals the whole group, so the servers and
# workers a test started in the background go with it. A test that runs
# past EXA_TEST_TIMEOUT_S seconds (default 900) gets SIGTERM, SIGKILL 15 s
# later, and a "not ok" line naming the bound; prove counts it as failed.
set -uo pipefail
lim=${EXA_TEST_TIMEOUT_S:-900}
timeout -k 15 "$lim" "$@"
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "not ok - $1 ran past its bound of $lim s (EXA_TEST_TIMEOUT_S) and was killed"
fi
exit "$rc"
