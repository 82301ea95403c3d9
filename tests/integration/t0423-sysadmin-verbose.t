#!/bin/bash
# -v prints each command exa runs on a cluster (issue 13, doc/verbose.md):
# where (transport, user, host, port), the argv as one could paste it, the
# duration and the exit; on stderr, so --json's stdout stays one document.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
KEY=$TESTBED_SSH_KEY PA=$TESTBED_SSH_PORT_TESTA H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER
"$EXA" hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" >/dev/null && "$EXA" -y hpc approve testa >/dev/null
ok $? "testa registered and approved"
"$EXA" hpc connect local --name loc --scheduler slurm >/dev/null && "$EXA" -y hpc approve loc >/dev/null

err=$("$EXA" -v hpc queue --cluster testa 2>&1 >/dev/null)
# the format is exa's own (parse_slurm.h SLURM_SQUEUE_SAFE_FORMAT, the
# queue's first listing): 0x1E before each record, 0x1F between the
# fields, printed as they are
fmt=$(printf "'\036%%i\037%%T\037%%P\037%%u\037%%r\037%%N\037%%i'")
echo "$err" | grep -Fq "exa: debug: ran on ssh $U@$H:$PA: squeue -h -o $fmt ("
ok $? "-v shows the squeue exa ran over ssh: user, host, port, argv"
echo "$err" | grep -Eq "^exa: debug: ran on ssh $U@$H:$PA: squeue -h -o '.*' \([0-9]+\.[0-9]{3} s\): exit 0$"
ok $? "-v shows its duration and exit"
quiet=$("$EXA" hpc queue --cluster testa 2>&1 >/dev/null)
is "$quiet" "" "without -v nothing of it is printed"
out=$("$EXA" -v --json hpc queue --cluster testa 2>/dev/null)
echo "$out" | python3 -c 'import json,sys; json.load(sys.stdin)'; ok $? "--json -v: stdout is still one JSON document"

err=$(PATH=/nonexistent "$EXA" -v hpc queue --cluster loc 2>&1 >/dev/null)
echo "$err" | grep -Eq "^exa: debug: ran on local: squeue .* \([0-9.]+ s\): failed: cannot run 'squeue'"
ok $? "a command that could not run is traced as failed, with the reason"
err=$("$EXA" -v hpc status 1 --cluster loc 2>&1 >/dev/null)
echo "$err" | grep -Eq "^exa: debug: ran on local: (squeue|sacct) .*: exit [0-9]+$"
ok $? "status traces its scheduler queries"
err=$(EXAMLOPS_LOG_LEVEL=debug "$EXA" hpc queue --cluster loc 2>&1 >/dev/null)
echo "$err" | grep -q "^exa: debug: ran on local: squeue"; ok $? "EXAMLOPS_LOG_LEVEL=debug does the same"
tap_done
