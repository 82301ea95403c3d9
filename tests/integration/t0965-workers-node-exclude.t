#!/bin/bash
# Black-hole nodes (shared/WORKERS.md §9.4) on the real testbed: a profile
# whose job fails before its worker attaches, twice on testa's one node
# (testa-n1, from sacct NodeList), makes the provisioner exclude that node
# from the profile's later submissions for exclude_node_s (1 h default):
#   the event worker_node_excluded {node, profile, cluster, reason, until};
#   the next sbatch command line (logged by a fake ssh first on PATH that
#   then runs the real one) carries --exclude=testa-n1, after exa's own
#   options, so the profile's #SBATCH lines cannot undo it; with its only
#   node excluded, testa's slurmctld refuses the job ("Requested node
#   configuration is not available"): a submit error, not a third start;
#   `exa provision status` (text and --json) and /metrics
#   (exa_provision_excluded_nodes{cluster,profile}) show it; another
#   profile's sbatch carries no --exclude; the exclusion survives a
#   restart of exa serve (platform.db).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-testbed.sh"
require_testbed
exa_test_env

H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
export EXAMLOPS_WORKER_HEARTBEAT_S=1 EXAMLOPS_WORKER_LEASE_TTL_S=3 \
    EXAMLOPS_WORKER_LONGPOLL_S=2 EXAMLOPS_PROVISION_TICK_S=0.5
export EXAMLOPS_PROVISIONERS=$T/provisioners.json
DB=$EXAMLOPS_DB
SERVE_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    sqlite3 "$DB" "SELECT job_id FROM provision_requests WHERE job_id IS NOT NULL" 2>/dev/null |
        while read -r id; do tb_slurm testa scancel "$id" >/dev/null 2>&1; done
    wait 2>/dev/null
    chmod -R u+w "$T" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
sql() { sqlite3 "$DB" "$@"; }

"$EXA" -y hpc connect "$H" --name testa --user "$U" --key "$KEY" \
    --port "$TESTBED_SSH_PORT_TESTA" --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testa >/dev/null 2>&1
is "$("$EXA" --json hpc clusters | jq -r '.[] | select(.name == "testa") | .state')" \
    ACTIVE "testa is connected and approved"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ACC='"--account=research", "--partition=debug", "--time=5"'
cat >"$EXAMLOPS_PROVISIONERS" <<EOF
{"provisioners": [
 {"name": "testa", "cluster": "testa", "engine_url": "http://127.0.0.1:$PORT",
  "remote_exa": "$EXA", "allow_root": true, "provision_timeout_s": 60,
  "max_idle_s": 3, "drain_s": 10, "provision_delay_s": 0.3,
  "submit_min_interval_s": 0, "reconcile_s": 1, "output_dir": "$T/prov",
  "profiles": [
   {"name": "bad", "cpus": 1, "ram_mb": 600, "labels": ["bad"],
    "sbatch": [$ACC],
    "prerun": ["echo boom >&2", "exit 3"], "walltime_s": 300},
   {"name": "held", "cpus": 1, "ram_mb": 700, "labels": ["held"],
    "sbatch": [$ACC, "--begin=now+1hour"], "walltime_s": 300}]}]}
EOF

# a fake ssh first on PATH logs each remote command, then runs the real ssh
mkdir -p "$T/fakessh"
{
    echo '#!/bin/bash'
    echo "printf '%s\\n' \"\${@: -1}\" >>'$T/ssh.log'"
    echo "exec $(command -v ssh) \"\$@\""
} >"$T/fakessh/ssh"
chmod +x "$T/fakessh/ssh"
: >"$T/ssh.log"

start_serve() {
    PATH="$T/fakessh:$PATH" "$EXA" serve --listen 127.0.0.1:0 --interval 3600 \
        --worker-listen "127.0.0.1:$PORT" >"$T/serve.log" 2>&1 &
    SERVE_PID=$!
    if ! wait_for 30 grep -q "worker API on port" "$T/serve.log"; then
        ok "exa serve starts (its log follows)" false
        diag "$(cat "$T/serve.log")"
        done_testing
    fi
    MPORT=$(sed -n 's/.*console on port \([0-9]*\).*/\1/p' "$T/serve.log")
}
stop_serve() {
    kill -TERM "$SERVE_PID"
    wait_pid "$SERVE_PID"
    SERVE_PID=
}
sbatch_lines() { grep -E '(^|[ ;])sbatch ' "$T/ssh.log"; }

start_serve
run_exa task submit --label bad --timeout 60 -- true
TB=$OUT
wait_for 60 sh -c "[ \$(sqlite3 '$DB' \"select count(*) from worker_events where kind = 'worker_node_excluded'\") -ge 1 ]"
is "$?" 0 "two failed starts on one node exclude it"
is "$(sql "select count(*) from provision_requests where profile = 'bad' and reason = 'ended_before_attach'")" 2 \
    "after exactly two failed starts"
is "$(sql "select json_extract(detail, '$.node') from worker_events where kind = 'worker_provision_failed' and profile = 'bad' order by id limit 1")" \
    testa-n1 "each failure names its node (sacct NodeList)"
ev=$(sql "select json_object('cluster', cluster, 'profile', profile, 'd', json(detail), 'ts', ts) from worker_events where kind = 'worker_node_excluded'")
is "$(jq -r '[.d.node, .d.profile, .d.cluster, .d.reason, .cluster, .profile] | join(" ")' <<<"$ev")" \
    "testa-n1 bad testa failed_start testa bad" "worker_node_excluded: node, profile, cluster, reason"
ok "until is one hour after the exclusion" jq -e '(.d.until - .ts - 3600) | (. < 0.01 and . > -0.01)' <<<"$ev"

# the next request's sbatch carries --exclude=testa-n1; the only node
# excluded, slurmctld refuses the job
wait_for 30 sh -c "sqlite3 '$DB' \"select reason from provision_requests where profile = 'bad'\" | grep -q submit_error"
is "$?" 0 "the next submission is a submit error"
like "$(sql "select detail from provision_requests where profile = 'bad' and reason = 'submit_error' limit 1")" \
    "Requested node configuration is not available" "slurmctld refused it: its only node is excluded"
is "$(sql "select count(*) from provision_requests where profile = 'bad' and reason = 'ended_before_attach'")" 2 \
    "no third start on that node"
n=$(sbatch_lines | grep -c 'job-name=exa-[0-9a-f]*-bad-')
ok "three sbatch commands of profile bad were run (got $n)" test "$n" -ge 3
is "$(sbatch_lines | grep 'job-name=exa-[0-9a-f]*-bad-' | head -n 2 | grep -c -- '--exclude')" 0 \
    "the first two carried no --exclude"
like "$(sbatch_lines | grep 'job-name=exa-[0-9a-f]*-bad-' | sed -n 3p)" \
    "sbatch --parsable --job-name=exa-[0-9a-f]+-bad-[0-9a-f]+ --output=[^ ]+ --no-requeue --signal=B:USR1@10 --exclude=testa-n1( |$)" \
    "the third: --exclude=testa-n1 after exa's own options"
run_exa task cancel "$TB"

run_exa --json provision status
json_ok "provision status --json lists the exclusion" \
    '.exclusions | length == 1 and .[0].node == "testa-n1" and .[0].profile == "bad" and .[0].cluster == "testa" and .[0].reason == "failed_start" and (.[0].until - .[0].since) == 3600'
json_ok "and the profile's excluded_nodes" \
    '[.provisioners[0].profiles[] | {(.name): .excluded_nodes}] | add == {"bad": ["testa-n1"], "held": []}'
run_exa provision status
like "$OUT" "testa +bad +testa-n1 +[0-9T:-]+Z +failed_start" "the text shows cluster, profile, node, until, reason"
m=$(curl -s "http://127.0.0.1:$MPORT/metrics" | grep '^exa_provision_excluded_nodes{')
like "$m" 'exa_provision_excluded_nodes\{cluster="testa",profile="bad"\} 1' "/metrics: one node excluded from bad"
like "$m" 'exa_provision_excluded_nodes\{cluster="testa",profile="held"\} 0' "none from held"
unlike_m=$(grep -c 'testa-n1' <<<"$m")
is "$unlike_m" 0 "no node name as a label"

# another profile's sbatch: no --exclude
run_exa task submit --label held --timeout 60 -- true
TH=$OUT
wait_for 20 sh -c "sqlite3 '$DB' \"select state from provision_requests where profile = 'held'\" | grep -q submitted"
is "$?" 0 "profile held submits"
HJ=$(sql "select job_id from provision_requests where profile = 'held' and state = 'submitted'")
is "$(tb_slurm testa scontrol show job "$HJ" | grep -o 'ExcNodeList=[^ ]*')" "ExcNodeList=(null)" \
    "its job excludes nothing (scontrol ExcNodeList)"
run_exa task cancel "$TH"

# ---- a restart of exa serve keeps the exclusion (platform.db)
stop_serve
: >"$T/ssh.log"
run_exa provision resume bad
start_serve
run_exa task submit --label bad --timeout 60 -- true
TB2=$OUT
wait_for 30 sh -c "sbatch_lines() { grep -E '(^|[ ;])sbatch ' '$T/ssh.log'; }; sbatch_lines | grep -q 'job-name=exa-[0-9a-f]*-bad-'"
is "$?" 0 "after a restart profile bad submits again"
like "$(sbatch_lines | grep 'job-name=exa-[0-9a-f]*-bad-' | head -n 1)" "--exclude=testa-n1( |$)" \
    "still with --exclude=testa-n1"
run_exa task cancel "$TB2"
stop_serve
done_testing
