#!/bin/bash
# Day one for a sysadmin on the testbed (issue 13): detect prints a
# complete `exa hpc connect` line (user, key, port) that works when pasted
# and a clusters.yaml entry; `clusters` shows port and user; answering `n`
# at the approval prompt exits 1; a REJECTED cluster's hints name the
# command that works (connect again, then approve).
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
exa() { "$EXA" "$@"; } # the pasted lines say `exa`
KEY=$TESTBED_SSH_KEY PA=$TESTBED_SSH_PORT_TESTA H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER

# run_pty ANSWER ARGS...: run exa with a terminal on stdin, type ANSWER
# at its prompt; prints what it wrote, exits with its status.
run_pty() {
    python3 - "$@" <<'PY'
import os, pty, sys, select
answer, args = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(os.environ["EXA"], [os.environ["EXA"]] + args)
buf = b""
sent = False
while True:
    r, _, _ = select.select([fd], [], [], 20)
    if not r:
        break
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
    if not sent and b"[y/N]" in buf:
        os.write(fd, answer.encode() + b"\n")
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

out=$("$EXA" hpc detect "$H" -u "$U" -k "$KEY" -p "$PA"); rc=$?
is "$rc" 0 "detect testa over ssh"
line=$(echo "$out" | grep '^  exa hpc connect ' | sed 's/^  //')
is "$line" "exa hpc connect $H --name $H --user $U --key $KEY --port $PA --scheduler slurm" \
    "detect prints a complete connect line (user, key, port, scheduler)"
echo "$out" | grep -q "^      ssh_port: $PA\$"; ok $? "and a clusters.yaml entry with ssh_port"
echo "$out" | grep -q "^      ssh_user: $U\$"; ok $? "and ssh_user"
echo "$out" | grep -q "^  export EXAMLOPS_HPC_SSH_PORT=$PA\$"; ok $? "the environment form carries the port"
json=$("$EXA" --json hpc detect "$H" -u "$U" -k "$KEY" -p "$PA")
is "$(echo "$json" | jget 'd["suggested"]["connect_command"]')" "$line" "--json carries the same connect line"

# The line works as pasted (with another name, to register testa).
eval "${line/--name $H/--name testa}" >/dev/null; ok $? "the pasted connect line registers the cluster"
tbl=$("$EXA" hpc clusters)
echo "$tbl" | head -3 | grep -Eq '^Name +Scheduler +Transport +Host +Port +User +State +Approved by'; ok $? "clusters has Port and User columns"
echo "$tbl" | grep -Eq "^testa +slurm +ssh +$H +$PA +$U +PENDING"; ok $? "testa's row shows port $PA and user $U"

out=$(run_pty n hpc approve testa 2>&1); rc=$?
is "$rc" 1 "answering n at the approval prompt exits 1"
echo "$out" | grep -q "aborted: cluster 'testa' left unchanged"; ok $? "and says the cluster is unchanged"
is "$("$EXA" --json hpc clusters | jget '[c["state"] for c in d][0]')" PENDING "still PENDING"
out=$(run_pty y hpc approve testa 2>&1); rc=$?
is "$rc" 0 "answering y approves"

"$EXA" -y hpc reject testa --reason test >/dev/null; ok $? "reject"
out=$("$EXA" -y hpc approve testa 2>&1); rc=$?
is "$rc" 1 "approving a REJECTED cluster is refused"
hint=$(echo "$out" | sed -n 's/^hint: //p')
echo "$hint" | grep -q "exa hpc connect $H --name testa --user $U --key $KEY --port $PA --scheduler slurm"
ok $? "its hint names the connect line that returns it to PENDING"
out=$("$EXA" hpc preflight testa 2>&1); rc=$?
is "$rc" 6 "preflight on a REJECTED cluster exits 6"
echo "$out" | grep -q "^hint: .*exa hpc connect HOST --name testa"; ok $? "and its hint says to connect again, not just approve"
echo "$out" | grep -q "^hint: a sysadmin approves it"; is $? 1 "never the approve-only hint for a REJECTED cluster"
cmd=$(echo "$hint" | grep -o "exa hpc connect [^,]*")
eval "$cmd" >/dev/null; ok $? "running the hint's connect line works"
is "$("$EXA" --json hpc clusters | jget '[c["state"] for c in d][0]')" PENDING "and the cluster is PENDING again"
"$EXA" -y hpc approve testa >/dev/null; ok $? "then approve works"
tap_done
