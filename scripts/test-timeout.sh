#!/bin/bash
# test-timeout.sh TEST - run one TAP test file under a wall-clock bound, for
# prove --exec (scripts/run-integration.sh). GNU timeout(1) puts the test
# in its own process group and signals the whole group, so the servers and
# workers a test started in the background go with it. A test that runs
# past EXA_TEST_TIMEOUT_S seconds (default 900) gets SIGTERM, SIGKILL 15 s
# later, and a "not ok" line naming the bound and which of the two ended
# it: 124, it timed out and ended on SIGTERM; 137 after the bound, it
# ignored SIGTERM for the 15 s grace and was killed; 137 before the bound,
# something else killed it (the OOM killer, a person). prove counts each
# as failed; the exit status is the test's, as timeout(1) gives it.
set -uo pipefail
lim=${EXA_TEST_TIMEOUT_S:-900}
start=$SECONDS
timeout -k 15 "$lim" "$@"
rc=$?
took=$((SECONDS - start))
if [ "$rc" -eq 124 ]; then
    echo "not ok - $1 ran past its bound of $lim s (EXA_TEST_TIMEOUT_S): timed out, ended by SIGTERM (exit 124)"
elif [ "$rc" -eq 137 ] && [ "$took" -ge "$lim" ]; then
    echo "not ok - $1 ran past its bound of $lim s (EXA_TEST_TIMEOUT_S) and outlived SIGTERM by 15 s: killed by SIGKILL (exit 137)"
elif [ "$rc" -eq 137 ]; then
    echo "not ok - $1 was killed by SIGKILL after $took s, within its bound of $lim s (not the timeout: out of memory?) (exit 137)"
fi
exit "$rc"
