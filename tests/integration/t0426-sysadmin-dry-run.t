#!/bin/bash
# --dry-run on `hpc submit` and `pipeline run` (issue 13): the resolved
# cluster, the scheduler command and the job script are printed; nothing
# is created or copied on the cluster, submitted or recorded (testbed).
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
export EXAMLOPS_HPC_REMOTE_EXA=$EXA
sa() { SLURM_CONF=$TESTBED_SLURM_CONF_TESTA "$@"; }
"$EXA" hpc connect "$TESTBED_SSH_HOST" --name testa -u "$TESTBED_SSH_USER" -k "$TESTBED_SSH_KEY" -p "$TESTBED_SSH_PORT_TESTA" >/dev/null &&
    "$EXA" -y hpc approve testa >/dev/null
ok $? "testa registered and approved"
printf '#!/bin/sh\necho hi\n' >"$T/job.sh"
# jobs of this name in the shared testbed's queue (other tests run too)
queued() { sa squeue -h -n "$1" -o %i | wc -l; }

out=$("$EXA" hpc submit "$T/job.sh" --cluster testa --gpus 1 --partition "$TESTBED_PARTITION" --dry-run -- a 'b c'); rc=$?
is "$rc" 0 "hpc submit --dry-run exits 0"
echo "$out" | grep -q "^cluster:   testa (slurm)$"; ok $? "it names the resolved cluster and scheduler"
cmdline=$(echo "$out" | sed -n 's/^command:   //p')
echo "$cmdline" | grep -Eq "^sbatch --parsable --job-name=exa-[0-9a-f]+ --partition=$TESTBED_PARTITION --gpus=1 --output=.*%j\.out --error=.*%j\.err --chdir=.* .*/run\.sh$"
ok $? "the sbatch command line, resources translated"
echo "$out" | grep -q "^exec bash .*/payload-job.sh a 'b c'$"; ok $? "and run.sh with the payload and its quoted arguments"
dir=$(echo "$out" | sed -n 's/^directory: //p')
[ -n "$dir" ] && [ ! -e "$dir" ]; ok $? "the job directory was not created"
is "$("$EXA" --json hpc jobs --cluster testa | jget 'len(d)')" 0 "no job recorded"
name=$(echo "$cmdline" | sed -n 's/.*--job-name=\([^ ]*\).*/\1/p')
is "$(queued "$name")" 0 "nothing named $name reached the queue"
json=$("$EXA" --json hpc submit "$T/job.sh" --cluster testa --dry-run)
is "$(echo "$json" | jget 'd["dry_run"], d["cluster"], d["command"][0], d["script"].startswith("#!/bin/bash")')" "True testa sbatch True" \
    "--json: dry_run, cluster, command argv and script"

out=$("$EXA" pipeline run --dummy --cluster testa --gpus 1 --account "$TESTBED_ACCOUNT" --partition "$TESTBED_PARTITION" --dry-run 2>&1); rc=$?
is "$rc" 0 "pipeline run --dry-run exits 0"
echo "$out" | grep -q "preflight .*checks passed on 'testa'"; ok $? "it preflights (read-only)"
echo "$out" | grep -Eq "^command:   sbatch --parsable --job-name=exa_jpcp_pm100dataset\.exa-[0-9a-f]+ .*--gpus=1 --account=$TESTBED_ACCOUNT"
ok $? "prints the sbatch command"
echo "$out" | grep -Eq "^exec [^ ]+ train --model JPCP --dataset PM100Dataset --dataset-path .* --dummy$"; ok $? "and run.sh with the training payload"
dir=$(echo "$out" | sed -n 's/^directory: //p')
[ -n "$dir" ] && [ ! -e "$dir" ]; ok $? "no job directory was created"
is "$("$EXA" --json hpc jobs --cluster testa | jget 'len(d)')" 0 "no job recorded"
is "$("$EXA" --json models list | jget 'len(d)')" 0 "no model version"
name=$(echo "$out" | sed -n 's/^command: .*--job-name=\([^ ]*\).*/\1/p')
is "$(queued "$name")" 0 "nothing named $name reached the queue"
"$EXA" pipeline run --dummy --dry-run >/dev/null 2>&1; is $? 2 "--dry-run without --cluster is a usage error"
tap_done
