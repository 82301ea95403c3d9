#!/bin/sh
# prolog.sh - Slurm Prolog snippet: map this job's GPUs to its id for
# dcgm-exporter (--hpc-job-mapping-dir). Install on every GPU node and
# call it from the Prolog script named in slurm.conf (Prolog=...), or use
# it as that script. It never fails the job: a Prolog that exits non-zero
# drains the node, which costs far more than a missing metric label.
EXA=${EXA:-/usr/local/bin/exa}
export EXAMLOPS_JOB_MAP_DIR="${EXAMLOPS_JOB_MAP_DIR:-/var/run/dcgm-job-map}"
if ! msg=$("$EXA" -q hpc job-map prolog 2>&1); then
    logger -t exa-job-map "prolog job ${SLURM_JOB_ID:-?}: $msg" 2>/dev/null || true
fi
exit 0
