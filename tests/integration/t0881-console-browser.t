#!/bin/bash
# t0881-console-browser.t - the Facility console in a real headless
# Chromium (tests/e2e/console.test.mjs, playwright-core + Debian's
# chromium) against a real `exa serve` on a free port, with the Slurm
# testbed's clusters registered in a scratch platform.db:
#   testa  ACTIVE  (connected over ssh, approved by the CLI; one 1-GPU job
#          run on it with `exa hpc submit --wait` for the Jobs panel)
#   testb  PENDING (connected; the admin approves it in the browser)
#   testb-key, testa-rej, testa-cli: more PENDING registrations of the same
#          login nodes (approved by keyboard, rejected with a reason,
#          approved by the CLI while the page is open)
# Tokens: vera (viewer), otto (operator), ada (admin).
# The GPU totals the viewer must see are the ones `exa hpc connect`
# detected (capabilities.total_gpus). Each node test is one TAP line here;
# then the server's output must hold neither token, and the screenshots
# are kept under tests/e2e/test-results/console/.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
E2E=$ROOT/tests/e2e
if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null || [ ! -d "$E2E/node_modules/playwright-core" ]; then
    echo "1..0 # SKIP chromium, node or tests/e2e/node_modules missing (make test-deps)"
    exit 0
fi
. "$(dirname "$0")/lib-fleet.sh"
KEY=$TESTBED_SSH_KEY H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER
PA=$TESTBED_SSH_PORT_TESTA PB=$TESTBED_SSH_PORT_TESTB
export EXAMLOPS_HPC_REMOTE_EXA=$EXA
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$pid" ] && wait "$pid" 2>/dev/null; rm -rf "$T"' EXIT

conn() { "$EXA" --json hpc connect "$H" --name "$1" -u "$U" -k "$KEY" -p "$2" >/dev/null; }
conn testa "$PA"; ok $? "connect testa"
conn testb "$PB"; ok $? "connect testb"
conn testb-key "$PB"; ok $? "connect testb-key (the same login node)"
conn testa-rej "$PA"; ok $? "connect testa-rej"
conn testa-cli "$PA"; ok $? "connect testa-cli"
"$EXA" -y hpc approve testa >/dev/null; ok $? "approve testa (CLI)"
"$EXA" hpc nodes --save --cluster testa >/dev/null; ok $? "snapshot testa's nodes"
printf '#!/bin/sh\nsleep 2\necho console-e2e\n' >"$T/job.sh"
jobid=$("$EXA" --json hpc submit "$T/job.sh" --cluster testa --account "$TESTBED_ACCOUNT" \
    --partition "$TESTBED_PARTITION" --gpus 1 --job-name console-e2e --wait | jget 'd[0]["job_id"]')
ok $? "a 1-GPU job ran on testa through exa (job $jobid)"
clusters=$("$EXA" --json hpc clusters)
expect=$(echo "$clusters" | jget '" ".join("%s=%s" % (c["name"], c["capabilities"]["total_gpus"]) for c in d if c["name"] in ("testa", "testb"))')
is "$(echo "$expect" | wc -w)" 2 "both testbed clusters have a detected GPU total ($expect)"

VTOK=$("$EXA" auth token create --user vera --role viewer 2>/dev/null); ok $? "viewer token for vera"
OTOK=$("$EXA" auth token create --user otto --role operator 2>/dev/null); ok $? "operator token for otto"
ATOK=$("$EXA" auth token create --user ada --role admin 2>/dev/null); ok $? "admin token for ada"

"$EXA" serve --listen 127.0.0.1:0 --interval 600 >"$T/serve.out" 2>"$T/serve.err" &
pid=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's/.*port \([0-9][0-9]*\).*/\1/p' "$T/serve.out" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
done
ok "$([ -n "$port" ]; echo $?)" "exa serve listens on a free port ($port)"

rm -rf "$E2E/test-results/console"
(cd "$E2E" && CONSOLE_URL="http://127.0.0.1:$port" CONSOLE_VIEWER_TOKEN=$VTOK \
    CONSOLE_OPERATOR_TOKEN=$OTOK CONSOLE_ADMIN_TOKEN=$ATOK CONSOLE_ADMIN_USER=ada CONSOLE_EXPECT_GPUS=$expect \
    CONSOLE_APPROVE=testb CONSOLE_KEY_APPROVE=testb-key CONSOLE_REJECT=testa-rej \
    CONSOLE_CLI_APPROVE=testa-cli CONSOLE_JOB="testa/$jobid" EXA=$EXA \
    timeout 300 node --test --test-reporter=tap console.test.mjs) >"$T/node.tap" 2>&1
node_rc=$?
# one line per node test: its top-level "ok"/"not ok", with the failure's
# YAML block as comments
awk -v base="$n" '
    /^(not )?ok [0-9]+ - / { if (cur != "") flush(); cur = $0; blk = ""; next }
    cur != "" && /^  / { blk = blk "# " $0 "\n"; next }
    /^1\.\./ { if (cur != "") flush(); next }
    /^# (tests|pass|fail) / { print }
    function flush(   t, line) {
        t = cur
        if (t ~ /^ok /) { sub(/^ok [0-9]+ - /, "", t); line = "ok " (base + ++k) " - browser: " t }
        else { sub(/^not ok [0-9]+ - /, "", t); line = "not ok " (base + ++k) " - browser: " t }
        print line
        if (line ~ /^not ok/) printf "%s", blk
        cur = ""
    }
    END { if (cur != "") flush(); print "#count " k + 0 }
' "$T/node.tap" >"$T/node.lines"
grep -v '^#count ' "$T/node.lines"
k=$(sed -n 's/^#count //p' "$T/node.lines")
nfail=$(grep -c '^not ok' "$T/node.lines")
n=$((n + k))
fails=$((fails + nfail))
is "$node_rc" 0 "node --test exits 0"
[ "$k" -ge 9 ]; ok $? "all browser tests ran ($k)"
[ "$node_rc" -eq 0 ] || { echo "# exa serve's stderr:"; sed 's/^/#   /' "$T/serve.err" | tail -20; }

is "$(echo "$("$EXA" --json hpc clusters)" | jget '" ".join(c["name"] + "=" + c["state"] for c in sorted(d, key=lambda c: c["name"]))')" \
    "testa=ACTIVE testa-cli=ACTIVE testa-rej=REJECTED testb=ACTIVE testb-key=ACTIVE" \
    "platform.db has each cluster where the browser and the CLI put it"
is "$("$EXA" --json hpc clusters | jget '[c["approved_by"] for c in d if c["name"] == "testb"][0]')" ada \
    "the browser's approval names the token's user"

kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
grep -qF -e "$VTOK" -e "$OTOK" -e "$ATOK" "$T/serve.out" "$T/serve.err"; is $? 1 "exa serve's output holds no token"
for f in viewer-1280x800 admin-after-approve-1280x800 admin-after-reject-1280x800 keyboard-focus-1280x800 admin-phone-390x844; do
    test -s "$E2E/test-results/console/$f.png"; ok $? "screenshot test-results/console/$f.png kept"
done
tap_done
