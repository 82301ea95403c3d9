#!/bin/bash
# Red team of "no workload ever runs on a cluster until a sysadmin approves
# it", on the real testbed. Each way tried to get a payload onto a cluster
# that is PENDING, REJECTED, unregistered or changed since its approval is
# refused here, and nothing reaches the cluster: no new job in squeue of
# testa/testb (the jobs of this test carry $tag in their name, so a
# colleague's jobs on the shared testbed do not count) and no marker file
# from a payload run over ssh ($SSH_CONNECTION in it tells an ssh session
# from a local run). The holes found (and fixed) by this test:
# - the mock scheduler (the default) with EXAMLOPS_HPC_TRANSPORT=ssh /
#   EXAMLOPS_HPC_SSH_HOST ran the payload with bash over ssh on an
#   unregistered host: mock over ssh is now an environment target;
# - clusters.yaml's scheduler changed (slurm -> mock, whose payload runs on
#   the login node, or -> flux) kept the cluster ACTIVE: the scheduler is
#   now part of the approved identity (also for `hpc connect` again);
# - a second key appended to the pinned known_hosts passed the gate (only
#   the ed25519 key was compared) while ssh trusted it: every key of the
#   pin must now be the approved one (submit/status/queue/cancel, and
#   `hpc wait` resuming a pipeline run, which had registered a model).
# Kept as regression checks: the legacy EXAMLOPS_SLURM_MODE, the
# --cluster / EXAMLOPS_HPC_CLUSTER / environment precedence, names that
# differ by case, whitespace, unicode or a leading '-', clusters.yaml
# edits of port, host, transport and user, ids that look like options,
# unknown ids, reject racing a submit, and an edit between approve's prompt
# and its answer.
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
. "$(dirname "$0")/lib-testbed.sh"
H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
PA=$TESTBED_SSH_PORT_TESTA PB=$TESTBED_SSH_PORT_TESTB
export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote EXAMLOPS_HPC_ACCOUNT=$TESTBED_ACCOUNT
export EXAMLOPS_HPC_POLL_INTERVAL=1
unset EXAMLOPS_HPC_SCHEDULER EXAMLOPS_SLURM_MODE EXAMLOPS_HPC_TRANSPORT EXAMLOPS_HPC_SSH_HOST \
    EXAMLOPS_HPC_SSH_PORT EXAMLOPS_HPC_SSH_USER EXAMLOPS_HPC_SSH_KEY EXAMLOPS_HPC_SSH_KNOWN_HOSTS SLURM_CONF
tag=rt0720-$$
M=$T/marks # payloads write $M/NAME (the testbed's sshd is this machine)
mkdir -p "$M"
trap 'for c in testa testb; do
    tb_slurm $c squeue -h -o "%i %j" | awk -v t="$tag" "index(\$2, t) == 1 {print \$1}" |
        xargs -r env SLURM_CONF=$(tb_conf $c) scancel; done; rm -rf "$T"' EXIT
queued() { tb_slurm "$1" squeue -h -o %j | grep -c "^$tag"; }
printf 'echo "ssh=[$SSH_CONNECTION]" > %s/$1\n' "$M" > "$T/p.sh"
R=$EXAMLOPS_HPC_REGISTRY
# the environment of seed 002 pointing at $1's port over ssh
envssh() {
    local port=$1; shift
    env EXAMLOPS_HPC_TRANSPORT=ssh EXAMLOPS_HPC_SSH_HOST=$H EXAMLOPS_HPC_SSH_USER=$U \
        EXAMLOPS_HPC_SSH_KEY=$KEY EXAMLOPS_HPC_SSH_PORT=$port \
        EXAMLOPS_HPC_SSH_KNOWN_HOSTS=$TESTBED_SSH_KNOWN_HOSTS "$@"
}
# refused WANT-RC DESCRIPTION CMD...: the command exits WANT-RC
refused() {
    local want=$1 what=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    is "$rc" "$want" "$what: exit $want"
    [ "$rc" = "$want" ] || sed 's/^/#   /' "$T/err"
}

"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null &&
    "$EXA" -q -y hpc approve testa >/dev/null
ok $? "testa registered and approved (ACTIVE)"
"$EXA" -q hpc connect "$H" --name pend -u "$U" -k "$KEY" -p "$PB" --scheduler slurm >/dev/null
ok $? "testb registered as 'pend' (PENDING)"
cp "$R" "$T/reg.good"

# --- 1. the mock scheduler over an ssh environment target
refused 6 "default (mock) scheduler, EXAMLOPS_HPC_TRANSPORT=ssh to testb" \
    envssh "$PB" "$EXA" hpc submit "$T/p.sh" -- mock-ssh
grep -q "registered it as 'env-mock-$H-$PB' (PENDING)" "$T/err"; ok $? "registered PENDING as env-mock-$H-$PB"
refused 6 "EXAMLOPS_HPC_SCHEDULER=mock, EXAMLOPS_HPC_SSH_HOST only (transport implied)" \
    env EXAMLOPS_HPC_SCHEDULER=mock EXAMLOPS_HPC_SSH_HOST=$H EXAMLOPS_HPC_SSH_PORT=$PB EXAMLOPS_HPC_SSH_USER=$U \
    EXAMLOPS_HPC_SSH_KEY=$KEY "$EXA" hpc submit "$T/p.sh" -- mock-host
refused 6 "EXAMLOPS_SLURM_MODE=mock over ssh" \
    envssh "$PB" env EXAMLOPS_SLURM_MODE=mock "$EXA" hpc submit "$T/p.sh" -- mock-legacy
is "$(ls "$M" | wc -l)" 0 "no payload ran anywhere"
# a mock job's own id (mock mode) never opens the environment's host
id=$(env -u EXAMLOPS_HPC_SCHEDULER "$EXA" --json hpc submit "$T/p.sh" -- mock-local | jget 'd["job_id"]')
is "$(cat "$M/mock-local")" "ssh=[]" "plain mock mode runs locally ($id)"
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "$*" >> %s/ssh.log\nexec /usr/bin/ssh "$@"\n' "$T" > "$T/bin/ssh"; chmod +x "$T/bin/ssh"
PATH="$T/bin:$PATH" envssh "$PB" "$EXA" --json hpc status "$id" >/dev/null 2>&1
[ -s "$T/ssh.log" ]; is $? 1 "hpc status of a mock job with the env at testb runs no ssh"
"$EXA" -q -y hpc approve "env-mock-$H-$PB" >/dev/null
envssh "$PB" "$EXA" hpc submit "$T/p.sh" -- mock-approved >/dev/null 2>&1
ok $? "once env-mock-$H-$PB is approved the same submit runs"
case $(cat "$M/mock-approved" 2>/dev/null) in *" $PB]") r=0 ;; *) r=1 ;; esac
ok $r "over ssh to testb's port"
rm -f "$M"/*

# --- 2. the legacy EXAMLOPS_SLURM_MODE and the env target at PENDING pend
for m in slurm real; do
    refused 6 "EXAMLOPS_SLURM_MODE=$m, env at PENDING pend" \
        envssh "$PB" env EXAMLOPS_SLURM_MODE=$m "$EXA" hpc submit "$T/p.sh" --job-name="$tag-$m"
done
refused 2 "EXAMLOPS_SLURM_MODE=legacy (no such scheduler)" \
    envssh "$PB" env EXAMLOPS_SLURM_MODE=legacy "$EXA" hpc submit "$T/p.sh" --job-name="$tag-legacy"
refused 6 "EXAMLOPS_HPC_CLUSTER=pend" \
    env EXAMLOPS_HPC_CLUSTER=pend "$EXA" hpc submit "$T/p.sh" --job-name="$tag-envc"
refused 6 "--cluster=pend with EXAMLOPS_HPC_CLUSTER=testa" \
    env EXAMLOPS_HPC_CLUSTER=testa "$EXA" hpc submit "$T/p.sh" --cluster=pend --job-name="$tag-flag"
refused 6 "--cluster pend with the env target at ACTIVE testa" \
    envssh "$PA" "$EXA" hpc submit "$T/p.sh" --cluster pend --job-name="$tag-mix"
refused 6 "--cluster '' falls back to the env target (pend)" \
    envssh "$PB" env EXAMLOPS_HPC_SCHEDULER=slurm "$EXA" hpc submit "$T/p.sh" --cluster "" --job-name="$tag-empty"
# names that are not pend's: never pend, never a job
for c in PEND " pend" "pend " "$(printf 'pend\n.')" "pénd" "-pend" "testa/../pend"; do
    "$EXA" hpc submit "$T/p.sh" --cluster "$c" --job-name="$tag-name" >/dev/null 2>&1; rc=$?
    case $rc in 1 | 2) r=0 ;; *) r=1 ;; esac
    ok $r "--cluster '$c' is refused (exit 1 or 2, got $rc)"
done
"$EXA" -q -y hpc reject pend -r t0720 >/dev/null
refused 6 "env target at REJECTED pend" envssh "$PB" env EXAMLOPS_HPC_SCHEDULER=slurm "$EXA" hpc submit "$T/p.sh" --job-name="$tag-rej"
refused 6 "cancel on REJECTED pend (scheduling)" "$EXA" hpc cancel 1 --cluster pend
is "$(queued testb)/$(queued testa)" "0/0" "squeue of testb and testa shows no job of this test"

# --- 3. clusters.yaml edits of ACTIVE testa send it back to PENDING
yedit() { # yedit FROM TO: replace in testa's entry, from a freshly approved testa
    cp "$T/reg.good" "$R"
    "$EXA" -q -y hpc approve testa >/dev/null 2>&1
    python3 - "$R" "$1" "$2" <<'EOF'
import sys
p, a, b = sys.argv[1:]
t = open(p).read()
i = t.index("  testa:")
open(p, "w").write(t[:i] + t[i:].replace(a, b, 1))
EOF
}
st() { "$EXA" --json hpc clusters | jget "[c['state'] for c in d if c['name']=='testa'][0]"; }
for e in "ssh_port: $PA|ssh_port: $PB" "host: $H|host: localhost" "transport: ssh|transport: local" \
    "ssh_user: $U|ssh_user: nobody" "scheduler: slurm|scheduler: mock" "scheduler: slurm|scheduler: flux"; do
    yedit "${e%%|*}" "${e#*|}"
    refused 6 "clusters.yaml '${e#*|}' on ACTIVE testa, then submit" \
        "$EXA" hpc submit "$T/p.sh" --cluster testa --job-name="$tag-yaml" -- yaml
    is "$(st)" PENDING "testa is PENDING after '${e#*|}'"
done
is "$(ls "$M" | wc -l)/$(queued testa)/$(queued testb)" "0/0/0" "no payload ran, no job in either squeue"
is "$(sqlite3 "$EXAMLOPS_DB" "select group_concat(json_extract(details, '\$.changes.scheduler.old') || '>' || json_extract(details, '\$.changes.scheduler.new'), ' ') from audit_events where target='testa' and action='cluster_identity_changed' and json_extract(details, '\$.changes.scheduler') is not null order by id")" \
    "slurm>mock mock>slurm slurm>flux" "the scheduler edits are audited as identity changes (and the revert to slurm)"
cp "$T/reg.good" "$R"
"$EXA" -q -y hpc approve testa >/dev/null
# connecting again with another scheduler is an identity change as well
"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" --scheduler mock >/dev/null 2>&1
is "$(st)" PENDING "hpc connect testa again with --scheduler mock: PENDING"
refused 6 "and submit to it" "$EXA" hpc submit "$T/p.sh" --cluster testa -- reconnect
is "$(ls "$M" | wc -l)" 0 "no payload ran"
"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null 2>&1 &&
    "$EXA" -q -y hpc approve testa >/dev/null
is "$(st)" ACTIVE "testa connected as slurm again and approved"

# --- 4. ids that look like options, unknown ids
refused 2 "hpc cancel --cluster testa -- --user=root" "$EXA" hpc cancel --cluster testa -- --user=root
refused 2 "hpc cancel --cluster testa 1 -- -u" "$EXA" hpc cancel --cluster testa 1 -- -u
refused 2 "hpc status --cluster testa -- --all" "$EXA" hpc status --cluster testa -- --all
refused 2 "hpc logs --cluster testa -- --help" "$EXA" hpc logs --cluster testa -- --help
refused 2 "hpc cancel --cluster testa 1,2 (a list in one id)" "$EXA" hpc cancel --cluster testa 1,2
refused 1 "hpc cancel 999999999 --cluster testa" "$EXA" hpc cancel 999999999 --cluster testa
is "$(head -1 "$T/err")" "exa: error: job '999999999' not found on cluster 'testa'" "and says not found"
refused 1 "hpc cancel '1_[1-99999999]' --cluster testa" "$EXA" hpc cancel "1_[1-99999999]" --cluster testa

# --- 5. reject racing a submit: sbatch already ran when the row is inserted
# (an ssh first on PATH holds the sbatch call until the reject is done)
rm -f "$T/at-sbatch" "$T/go"
{
    echo '#!/bin/sh'
    echo "case \"\$*\" in *sbatch*) touch '$T/at-sbatch'; i=0"
    echo "    while [ ! -e '$T/go' ] && [ \$i -lt 150 ]; do sleep 0.2; i=\$((i + 1)); done ;; esac"
    echo 'exec /usr/bin/ssh "$@"'
} > "$T/bin/ssh"
chmod +x "$T/bin/ssh"
printf 'sleep 60\n' > "$T/long.sh"
(PATH="$T/bin:$PATH" "$EXA" hpc submit "$T/long.sh" --cluster testa --job-name="$tag-race" >"$T/race.out" 2>&1
    echo "rc=$?" >>"$T/race.out") &
for _ in $(seq 150); do [ -e "$T/at-sbatch" ] && break; sleep 0.2; done
"$EXA" -q -y hpc reject testa -r "t0720 race" >/dev/null
touch "$T/go"
wait
is "$(tail -1 "$T/race.out")" rc=6 "testa rejected while its sbatch ran: submit exits 6"
grep -q "job cancelled: cluster 'testa' is REJECTED: job [0-9]* is not recorded" "$T/race.out"
ok $? "and says the job was cancelled"
rid=$(sed -n "s/.*job \([0-9][0-9]*\) is not recorded.*/\1/p" "$T/race.out")
# (cancelled before it started: sacct's record stays partial, so its state)
for _ in $(seq 60); do
    s=$(tb_slurm testa sacct -n -X -j "$rid" -o state%40 2>/dev/null | awk 'NR == 1 {print $1}')
    [ "$s" = CANCELLED ] && break; sleep 1
done
is "$s" CANCELLED "sacct says job $rid CANCELLED"
is "$(queued testa)" 0 "nothing of this test left in testa's squeue"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from jobs where cluster='testa' and job_id='$rid'")" 0 "no job row"
rm -f "$T/bin/ssh"
"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null 2>&1 &&
    "$EXA" -q -y hpc approve testa >/dev/null
is "$(st)" ACTIVE "testa connected again and approved"

# --- 6. a second key in testa's pin ('ssh-keyscan >> known_hosts.d/testa'
# after the server was re-keyed): ssh trusts every key of the file, the
# approval records one fingerprint, so any other key in it is refused
fpr_of() { grep "^\[$H\]:$1[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | ssh-keygen -lf - | awk '/ED25519/ {print $2}'; }
FA=$(fpr_of "$PA") FB=$(fpr_of "$PB")
pin=$XDG_CONFIG_HOME/examlops/known_hosts.d/testa
is "$(grep -v '^#' "$pin" | ssh-keygen -lf - | awk '{print $2}' | sort -u)" "$FA" "connect pinned testa's approved key only"
cp "$pin" "$T/pin.good"
grep "^\[$H\]:$PB[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | sed "s/\[$H\]:$PB/[$H]:$PA/g" >> "$pin"
want="host key for '$H' changed: cluster 'testa' was approved with $FA but the pinned known_hosts holds $FB"
for c in "hpc submit $T/p.sh --cluster testa --job-name=$tag-kh -- kh" "hpc status 1 --cluster testa" \
    "hpc queue --cluster testa" "hpc cancel 1 --cluster testa"; do
    refused 4 "$c, testb's key appended to the pin" $EXA $c
    grep -q -F "$want" "$T/err"; ok $? "naming both fingerprints"
done
is "$(ls "$M" | wc -l)/$(queued testa)" "0/0" "no payload ran, no job in testa's squeue"
cp "$T/pin.good" "$pin"
# (job 1 may be long gone: "not known" is exit 1, an answer all the same)
"$EXA" hpc status 1 --cluster testa >/dev/null 2>"$T/err"; rc=$?
[ "$rc" -le 1 ] && ! grep -q 'host key' "$T/err"; ok $? "with the approved key alone pinned again, testa answers"
# lines that C string code would not see but ssh reads: testb's key after
# a NUL byte, and after 1 MiB of comments; both pins are refused
{ cat "$T/pin.good"; printf '\0\n'; grep "^\[$H\]:$PB[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | sed "s/\[$H\]:$PB/[$H]:$PA/g"; } > "$pin"
refused 4 "hpc queue --cluster testa, testb's key hidden after a NUL byte" "$EXA" hpc queue --cluster testa
grep -q "pinned known_hosts holds an unreadable key" "$T/err"; ok $? "said to be a pin that cannot be checked"
{ cat "$T/pin.good"; head -c 1100000 /dev/zero | tr '\0' '#' | fold -w 1000; echo; grep "^\[$H\]:$PB[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | sed "s/\[$H\]:$PB/[$H]:$PA/g"; } > "$pin"
refused 4 "hpc queue --cluster testa, testb's key after 1 MiB of comments" "$EXA" hpc queue --cluster testa
cp "$T/pin.good" "$pin"
# what the rule stops: the server at testa's address replaced by testb's
# (here: the port moved to testb's, the pin carrying both keys for it);
# reading a PENDING cluster is allowed, reaching an unapproved server not
sed -i "s/ssh_port: $PA/ssh_port: $PB/" "$R"
{ sed "s/\[$H\]:$PA/[$H]:$PB/g" "$T/pin.good"; grep "^\[$H\]:$PB[ ,]" "$TESTBED_SSH_KNOWN_HOSTS"; } > "$pin"
refused 4 "hpc status 1 --cluster testa reaching testb's server, both keys pinned" "$EXA" hpc status 1 --cluster testa
grep -q -F "$want" "$T/err"; ok $? "naming both fingerprints"

# --- 7. `hpc wait` resuming a killed pipeline run fetches and registers
# what the cluster produced: only through the approved key as well
cp "$T/reg.good" "$R"
cp "$T/pin.good" "$pin"
"$EXA" -q hpc connect "$H" --name testa -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null 2>&1 &&
    "$EXA" -q -y hpc approve testa >/dev/null
is "$(st)" ACTIVE "testa back to its approved port and key, ACTIVE"
SLOW=$T/slow-exa
printf '#!/bin/sh\nif [ "$1" = train ]; then sleep 15; fi\nexec "%s" "$@"\n' "$EXA" > "$SLOW"
chmod +x "$SLOW"
EXAMLOPS_HPC_REMOTE_EXA=$SLOW "$EXA" pipeline run --new --dummy --cluster testa --gpus 1 \
    --account "$TESTBED_ACCOUNT" >"$T/run.out" 2>&1 &
pid=$!
pj=
for _ in $(seq 120); do
    pj=$(sqlite3 "$EXAMLOPS_DB" "select job_id from jobs where cluster='testa' and state in ('PENDING', 'RUNNING') and run_uuid is not null" 2>/dev/null)
    [ -n "$pj" ] && break; sleep 0.5
done
kill -9 "$pid"; wait "$pid" 2>/dev/null
ok "$([ -n "$pj" ]; echo $?)" "a pipeline run's job is recorded on testa ($pj), its exa killed"
grep "^\[$H\]:$PB[ ,]" "$TESTBED_SSH_KNOWN_HOSTS" | sed "s/\[$H\]:$PB/[$H]:$PA/g" >> "$pin"
EXAMLOPS_HPC_POLL_INTERVAL=1 timeout 180 "$EXA" hpc wait "$pj" --cluster testa >"$T/out" 2>"$T/err"
is "$?" 4 "hpc wait $pj with testb's key appended to the pin: exit 4"
grep -q -F "$want" "$T/err"; ok $? "naming both fingerprints"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from model_versions")/$(sqlite3 "$EXAMLOPS_DB" "select ifnull(model_version, 'none') from jobs where cluster='testa' and job_id='$pj'")" \
    "0/none" "no model version registered from it"
tb_slurm testa scancel "$pj" >/dev/null 2>&1

# --- 8. clusters.yaml edited between approve's prompt and the sysadmin's
# "y" (the prompt needs a terminal: script(1) gives it one)
"$EXA" -q hpc connect "$H" --name late -u "$U" -k "$KEY" -p "$PA" --scheduler slurm >/dev/null 2>&1
if command -v script >/dev/null; then
    mkfifo "$T/in"
    script -qfec "$EXA hpc approve late" /dev/null <"$T/in" >"$T/ap.out" 2>&1 &
    apid=$!
    exec 3>"$T/in"
    for _ in $(seq 50); do grep -q "for scheduling?" "$T/ap.out" && break; sleep 0.2; done
    grep -q "Approve cluster 'late' (slurm @ $H, user $U, port $PA," "$T/ap.out"; ok $? "approve shows late's identity (port $PA)"
    python3 -c 'import sys; p = sys.argv[1]; t = open(p).read(); i = t.index("  late:"); open(p, "w").write(t[:i] + t[i:].replace("ssh_port: " + sys.argv[2], "ssh_port: " + sys.argv[3], 1))' "$R" "$PA" "$PB"
    echo y >&3
    exec 3>&-
    wait "$apid"
    is "$?" 1 "the port edited to testb's before the answer: approve fails"
    grep -q "cluster 'late' changed its connection identity since it was shown" "$T/ap.out"; ok $? "saying the identity changed since it was shown"
    is "$("$EXA" --json hpc clusters | jget "[(c['state'], c['ssh_port']) for c in d if c['name']=='late'][0]")" "('PENDING', $PB)" "late stays PENDING"
else
    for _ in 1 2 3 4; do n=$((n + 1)); echo "ok $n # SKIP no script(1)"; done
fi
tap_done
