#!/bin/bash
# t0300-sched-slurm-local.t - exa hpc submit/status/wait/cancel/logs on
# the real testbed's cluster testa through the local transport.
set -u
. "$(dirname "$0")/lib-sched.sh"
. "$(dirname "$0")/sched-scenarios.sh"
require_testbed
echo "1..29"
sched_setup testa local
run_scenarios
exit $((fails > 0))
