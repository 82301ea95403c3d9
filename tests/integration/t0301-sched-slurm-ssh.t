#!/bin/bash
# t0301-sched-slurm-ssh.t - the same scenarios as t0300 over the ssh
# transport to testb's login node (127.0.0.1, strict host keys, one
# ControlMaster connection).
set -u
. "$(dirname "$0")/lib-sched.sh"
. "$(dirname "$0")/sched-scenarios.sh"
require_testbed
echo "1..29"
sched_setup testb ssh
run_scenarios
exit $((fails > 0))
