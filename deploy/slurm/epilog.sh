#!/bin/sh
# epilog.sh - Slurm Epilog snippet: remove this job's id from the
# dcgm-exporter GPU mapping files (other jobs' ids on shared GPUs stay).
# Never fails: an Epilog that exits non-zero drains the node.
EXA=${EXA:-/usr/local/bin/exa}
export EXAMLOPS_JOB_MAP_DIR="${EXAMLOPS_JOB_MAP_DIR:-/var/run/dcgm-job-map}"
if ! msg=$("$EXA" -q hpc job-map epilog 2>&1); then
    logger -t exa-job-map "epilog job ${SLURM_JOB_ID:-?}: $msg" 2>/dev/null || true
fi
exit 0
