#!/bin/bash
# Datasets a sysadmin hands exa (issue 13): skipped records are counted
# per reason and warned about; more than --max-skip (default 10%) fails
# naming the counts; a runaway line is an error naming it, not gigabytes
# of memory; --stage-dataset says what it copies and the copy on the
# cluster is private (0600 in a 0700 directory, testbed).
. "$(dirname "$0")/lib.sh"
exa_test_env

# 600 records: 304 usable, 296 skipped (NaN, 1e309, negative power)
python3 - "$T/bad.csv" <<'PY'
import sys
f = open(sys.argv[1], "w")
f.write("job_id,user_id,num_nodes_req,num_nodes_alloc,submit_time,node_power_consumption\n")
for i in range(600):
    month = "05" if i % 2 else "09"   # both splits have rows
    power = "nan" if i < 100 else "1e309" if i < 200 else "-5" if i < 296 else str(100 + i % 50)
    f.write(f"{i},u{i % 7},1,1,2020-{month}-02T10:00:00Z,{power}\n")
PY
run_exa pipeline run --dummy --dataset-path "$T/bad.csv"
is "$RC" 1 "skipping 296 of 600 records fails (default --max-skip 10%)"
like "$ERR" "skipped 296 of 600 records \(49\.3%\): 200 non-finite power sample, 96 zero or negative power" \
    "the error counts the skipped records per reason"
like "$ERR" "more than the allowed 10% \(--max-skip\)" "and names --max-skip"
run_exa --json models list
json_ok "no version was registered" 'length == 0'

run_exa pipeline run --dummy --dataset-path "$T/bad.csv" --max-skip 50%
is "$RC" 0 "--max-skip 50% lets it train"
like "$ERR" "^exa: warning: dataset '.*bad.csv': skipped 296 of 600 records \(49\.3%\): 200 non-finite power sample, 96 zero or negative power$" \
    "and warns with the counts per reason"
run_exa --json train --model JPCP --dataset PM100Dataset --dataset-path "$T/bad.csv" --out "$T/out1" --dummy --max-skip 0.2
is "$RC" 1 "exa train (a cluster run's payload) honours --max-skip 0.2 too"
run_exa pipeline run --dummy --max-skip 2
is "$RC" 2 "--max-skip outside 0..1 is a usage error"
like "$ERR" "--max-skip '2': expected a share of the records between 0 and 1" "naming the option"
run_exa pipeline run --dummy
is "$RC" 0 "the bundled sample (7 of its records skipped) trains under the default"

# one 65 MiB line: an error naming the line, read in bounded memory
python3 -c 'import sys; h=open(sys.argv[1]).readline(); f=open(sys.argv[2],"w"); f.write(h); f.write("1,"+"9"*(65<<20)+"\n")' "$SAMPLE" "$T/long.csv"
/usr/bin/time -f %M -o "$T/rss" "$EXA" pipeline run --dummy --dataset-path "$T/long.csv" >/dev/null 2>"$T/err"; RC=$?
is "$RC" 1 "a record longer than the cap fails"
like "$(head -1 "$T/err")" "line 2: record is longer than 67108864 bytes \(the limit for one CSV record\)" "naming its line and the limit"
rss=$(tail -1 "$T/rss")
[ "$rss" -lt 400000 ]; ok "peak memory ${rss} KiB stays bounded (< 400 MiB for a 65 MiB line)" test $? -eq 0

if [ -z "${TESTBED_ROOT:-}" ]; then
    skip "--stage-dataset on the testbed" "TESTBED_ROOT unset"
    done_testing
fi
export EXAMLOPS_HPC_REMOTE_EXA=$EXA EXAMLOPS_HPC_POLL_INTERVAL=1
"$EXA" hpc connect "$TESTBED_SSH_HOST" --name testa -u "$TESTBED_SSH_USER" -k "$TESTBED_SSH_KEY" -p "$TESTBED_SSH_PORT_TESTA" >/dev/null &&
    "$EXA" -y hpc approve testa >/dev/null
ok "testa registered and approved" test $? -eq 0
cp "$SAMPLE" "$T/stage.csv"
chmod 0644 "$T/stage.csv"
run_exa pipeline run --dummy --cluster testa --gpus 1 --account "$TESTBED_ACCOUNT" --partition "$TESTBED_PARTITION" --stage-dataset --dataset-path "$T/stage.csv"
is "$RC" 0 "--stage-dataset run on testa"
like "$OUT" "copying dataset '$T/stage.csv' \([0-9.]+ MB\) to '.*/stage.csv'\.\.\." "it says what it copies before the copy"
like "$OUT" "dataset copied to '.*/stage.csv' \(0600 in a 0700 directory\): [0-9.]+ MB in [0-9.]+ s, [0-9.]+ MB/s" "and the size, time and rate after it"
rp=$(sed -n "s/.*dataset copied to '\([^']*\)'.*/\1/p" <<<"$OUT" | head -1)
is "$(stat -c %a "$rp")" 600 "the staged copy is 0600 (the local file was 0644)"
is "$(stat -c %a "$(dirname "$rp")")" 700 "in a 0700 directory"
done_testing
