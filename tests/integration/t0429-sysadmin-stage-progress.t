#!/bin/bash
# --stage-dataset of a large file (issue 13): the copy reports its progress
# while it runs (libtransport: a line on stderr at each further 10 % or
# after 2 s, with bytes, percent, rate and ETA; only on a terminal or with
# -v) and a summary when it ends; without -v on a pipe only the run's own
# before and after lines. The copy is private (0600 in 0700). Testbed.
. "$(dirname "$0")/lib.sh"
exa_test_env
if [ -z "${TESTBED_ROOT:-}" ]; then
    skip "--stage-dataset progress on the testbed" "TESTBED_ROOT unset"
    done_testing
fi
# the sample's 600 records with a 64 KiB column exa does not read: 39 MB
python3 - "$SAMPLE" "$T/big.csv" <<'PY'
import sys
rows = open(sys.argv[1]).read().splitlines()
with open(sys.argv[2], "w") as f:
    f.write(rows[0] + ",pad\n")
    for r in rows[1:]:
        f.write(r + "," + "x" * 65536 + "\n")
PY
chmod 0644 "$T/big.csv"
size=$(stat -c %s "$T/big.csv")
export EXAMLOPS_HPC_REMOTE_EXA=$EXA EXAMLOPS_HPC_POLL_INTERVAL=1
"$EXA" hpc connect "$TESTBED_SSH_HOST" --name testa -u "$TESTBED_SSH_USER" -k "$TESTBED_SSH_KEY" -p "$TESTBED_SSH_PORT_TESTA" >/dev/null &&
    "$EXA" -y hpc approve testa >/dev/null
ok "testa registered and approved" test $? -eq 0
args=(pipeline run --dummy --cluster testa --gpus 1 --account "$TESTBED_ACCOUNT"
    --partition "$TESTBED_PARTITION" --stage-dataset --dataset-path "$T/big.csv")

run_exa -v "${args[@]}"
is "$RC" 0 "-v --stage-dataset of $size bytes on testa"
prog=$(grep -E "^exa: put '$T/big.csv' to '[^']*/big.csv' on ssh [^:]*:[0-9]+: [0-9.]+ of [0-9.]+ MB \([0-9]+%\), [0-9.]+ MB/s, ETA [0-9]+ s$" <<<"$ERR")
n=$(grep -c . <<<"$prog")
[ "$n" -ge 3 ]; ok "progress lines while it copies ($n: bytes, percent, rate, ETA)" test $? -eq 0
[ -n "$prog" ] || diag "stderr: $ERR"
diag "$(head -2 <<<"$prog")"
pcts=$(sed -E 's/.*\(([0-9]+)%\).*/\1/' <<<"$prog" | tr '\n' ' ')
sorted=$(tr ' ' '\n' <<<"$pcts" | grep . | sort -n | tr '\n' ' ')
is "$pcts" "$sorted" "the percentages only grow ($pcts)"
total=$(sed -nE '1s/.* of ([0-9.]+) MB.*/\1/p' <<<"$prog")
is "$total" "$(awk -v s="$size" 'BEGIN{printf "%.1f", s/1e6}')" "the total is the file's size in MB"
like "$ERR" "^exa: put '$T/big.csv' to '[^']*/big.csv' on ssh [^:]*:[0-9]+: [0-9.]+ MB in [0-9.]+ s, [0-9.]+ MB/s$" "a summary when the copy ends"
diag "$(grep -E ' MB in [0-9.]+ s, ' <<<"$ERR")"
like "$OUT" "dataset copied to '.*/big.csv' \(0600 in a 0700 directory\): [0-9.]+ MB in [0-9.]+ s" "the run's own summary"
rp=$(sed -n "s/.*dataset copied to '\([^']*\)'.*/\1/p" <<<"$OUT" | head -1)
is "$(stat -c %s "$rp")" "$size" "the whole file arrived"
is "$(stat -c %a "$rp")" 600 "the staged copy is 0600 (the local file was 0644)"
is "$(stat -c %a "$(dirname "$rp")")" 700 "in a 0700 directory"

# not a terminal, no -v: no progress lines, the run's summary still
run_exa "${args[@]}" --new
is "$RC" 0 "the same run without -v"
grep -q "MB/s, ETA" <<<"$ERR"
ok "no progress lines on a pipe without -v" test $? -ne 0
like "$OUT" "dataset copied to '.*/big.csv' \(0600 in a 0700 directory\): [0-9.]+ MB in [0-9.]+ s, [0-9.]+ MB/s" "the summary is always there"
# on a terminal (script(1) gives the run one) the lines come without -v
rp2=$(sed -n "s/.*dataset copied to '\([^']*\)'.*/\1/p" <<<"$OUT" | head -1)
rm -f "$rp2"
q=$(printf '%q ' "$EXA" "${args[@]}" --new)
script -qec "$q" "$T/tty.log" >/dev/null 2>&1
tty_rc=$?
is "$tty_rc" 0 "the run on a terminal"
grep -qE "^exa: put '.*big.csv' .*: [0-9.]+ of [0-9.]+ MB \([0-9]+%\), [0-9.]+ MB/s, ETA" <(tr -d '\r' <"$T/tty.log")
ok "progress lines on a terminal without -v" test $? -eq 0
rp3=$(tr -d '\r' <"$T/tty.log" | sed -n "s/.*dataset copied to '\([^']*\)'.*/\1/p" | head -1)
# -q: no progress lines, even on a terminal
touch "$T/tty.log"
q=$(printf '%q ' "$EXA" -q "${args[@]}" --new)
script -qec "$q" "$T/tty-q.log" >/dev/null 2>&1
is "$?" 0 "the run on a terminal with -q"
grep -q "MB/s, ETA" "$T/tty-q.log"
ok "-q: no progress lines on a terminal" test $? -ne 0
# -q hides the run's own lines too: its copy is the big.csv newer than
# the terminal run's log, next to the other runs' (the testbed's login
# node shares this file system)
rp4=$(find "$(dirname "$(dirname "$rp")")" -maxdepth 2 -name big.csv -newer "$T/tty.log" 2>/dev/null | head -1)
# the staged copies are this test's: do not leave them on the node
rm -f "$rp" ${rp3:+"$rp3"} ${rp4:+"$rp4"}
done_testing
