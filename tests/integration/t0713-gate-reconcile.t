#!/bin/bash
# The one status writer and the reconcile pass, on the real testbed: five
# jobs from `hpc submit` without --wait stay PENDING in platform.db while
# nobody asks; after they end, `hpc jobs --refresh` (one batched query)
# shows them COMPLETED with sacct's GPU-hours (ElapsedRaw x allocated GPUs
# / 3600, per job), and `hpc capacity` reports sacct's total for them.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
. "$(dirname "$0")/lib-testbed.sh"
H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY PA=$TESTBED_SSH_PORT_TESTA
export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote EXAMLOPS_HPC_ACCOUNT=$TESTBED_ACCOUNT
unset EXAMLOPS_HPC_SCHEDULER EXAMLOPS_HPC_TRANSPORT EXAMLOPS_HPC_SSH_HOST SLURM_CONF
ids=
trap '[ -n "$ids" ] && tb_slurm testa scancel $ids >/dev/null 2>&1; rm -rf "$T"' EXIT
"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null &&
    "$EXA" -q -y hpc approve testa >/dev/null
ok $? "testa registered and approved"
printf 'sleep 12\n' > "$T/w.sh"
for i in 1 2 3 4 5; do
    id=$("$EXA" --json hpc submit "$T/w.sh" --cluster testa --gpus=1 | jget 'd["job_id"]') || break
    ids="$ids $id"
done
set -- $ids
is "$#" 5 "five jobs submitted without --wait"
is "$(sqlite3 "$EXAMLOPS_DB" "select group_concat(state) from jobs where cluster='testa'")" \
    "PENDING,PENDING,PENDING,PENDING,PENDING" "recorded PENDING"
all=0
for id in $ids; do tb_wait_state testa "$id" COMPLETED 240 || all=1; done
ok $all "all five COMPLETED in sacct"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from jobs where cluster='testa' and state='PENDING'")" 5 \
    "without a refresh the rows are still PENDING"

"$EXA" --json hpc jobs --refresh --cluster testa > "$T/jobs.json"; rc=$?
is "$rc" 0 "hpc jobs --refresh exits 0"
# sacct's own figures, per job: ElapsedRaw x gres/gpu of AllocTRES / 3600
for id in $ids; do
    tb_slurm testa sacct -X -n -P -j "$id" -o JobID,ElapsedRaw,AllocTRES
done > "$T/sacct.txt"
python3 - "$T/jobs.json" "$T/sacct.txt" > "$T/cmp.txt" <<'PY'
import json, re, sys
rows = {r["job_id"]: r for r in json.load(open(sys.argv[1]))}
want = {}
for line in open(sys.argv[2]):
    jid, el, tres = line.rstrip("\n").split("|")
    g = re.search(r"gres/gpu=(\d+)", tres)
    want[jid] = int(el) * (int(g.group(1)) if g else 0) / 3600.0
bad = [j for j in want if rows[j]["state"] != "COMPLETED" or rows[j]["gpu_hours"] is None
       or abs(rows[j]["gpu_hours"] - want[j]) > 1e-9 or not want[j] > 0]
print(len(want), len(bad), "%.2f" % sum(want.values()))
PY
read -r nwant nbad total < "$T/cmp.txt"
is "$nwant/$nbad" "5/0" "every job COMPLETED with sacct's GPU-hours"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from jobs where cluster='testa' and run_seconds > 0 and gpus = 1")" 5 \
    "run seconds and the allocated GPU came from accounting"
is "$("$EXA" --json hpc capacity | jget '"%.2f" % [c["gpu_hours_used"] for c in d if c["name"]=="testa"][0]')" "$total" \
    "hpc capacity equals sacct's total ($total GPU-h)"

# an `exa serve` collection runs the same reconcile pass
id=$("$EXA" --json hpc submit "$T/w.sh" --cluster testa --gpus=1 | jget 'd["job_id"]')
ids=$id
tb_wait_state testa "$id" COMPLETED 240; ok $? "a sixth job COMPLETED in sacct"
is "$(sqlite3 "$EXAMLOPS_DB" "select state from jobs where job_id='$id'")" PENDING "its row is PENDING"
"$EXA" serve --once > "$T/metrics.txt" 2>"$T/serve.err"; ok $? "exa serve --once collects"
want=$(tb_slurm testa sacct -X -n -P -j "$id" -o ElapsedRaw | head -n 1)
is "$(sqlite3 "$EXAMLOPS_DB" "select state||' '||printf('%.9f', gpu_hours) from jobs where job_id='$id'")" \
    "COMPLETED $(python3 -c "print('%.9f' % ($want / 3600.0))")" "the collection moved it to COMPLETED with sacct's GPU-hours"
grep -q "^exa_jobs{cluster=\"testa\",state=\"COMPLETED\"} 6" "$T/metrics.txt"; ok $? "and /metrics exports six COMPLETED jobs, none pending"
ids=
tap_done
