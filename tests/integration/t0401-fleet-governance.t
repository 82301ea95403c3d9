#!/bin/bash
# Governance through the CLI: YAML-defined clusters start PENDING, place
# refuses them, approve needs --yes (JSON alone does not approve), place
# prefers more idle GPUs and follows occupancy, reject blocks, a host edit
# in clusters.yaml returns an ACTIVE cluster to PENDING, audit verifies.
. "$(dirname "$0")/lib-fleet.sh"
cat > "$EXAMLOPS_HPC_REGISTRY" <<'Y'
clusters:
  testa: {scheduler: slurm, host: login1, ssh_port: 2222}
  testb: {scheduler: slurm, host: login2, ssh_port: 2223}
Y
out=$("$EXA" --json hpc clusters)
is "$(echo "$out" | jget '[c["state"] for c in d]')" "['PENDING', 'PENDING']" "YAML-only clusters are PENDING"
"$EXA" hpc capacity >/dev/null 2>&1 # reconcile creates rows
seed_nodes testa "a1 idle 4 0" "a2 down 4 0"
seed_nodes testb "b1 mixed 4 2" "b2 drain 4 0"
out=$("$EXA" --json hpc place --gpus 1); rc=$?
is "$(echo "$out" | jget 'd["cluster"]')" "None" "place refuses while PENDING"
is "$rc" 6 "place exits 6 (not approved) when no cluster is ACTIVE"
is "$(echo "$out" | jget 'd["exit_code"]')" 6 "and says so in its JSON document"
is "$(echo "$out" | jget 'd["reason"]')" "no ACTIVE clusters registered — 'exa hpc connect' then 'exa hpc approve'" "reason names the empty fleet"
out=$("$EXA" --json hpc approve testa </dev/null); rc=$?
is "$rc" 1 "--json alone does not approve"
is "$(echo "$out" | jget 'd["exit_code"]')" 1 "the refusal is a JSON error document"
is "$("$EXA" --json hpc clusters | jget '[c["state"] for c in d if c["name"]=="testa"][0]')" PENDING "still PENDING"
"$EXA" -y hpc approve testa >/dev/null; ok $? "approve --yes"
out=$("$EXA" --json hpc approve testa -y); rc=$?
is "$rc" 1 "approving an ACTIVE cluster is refused"
"$EXA" --yes hpc approve testb >/dev/null
out=$("$EXA" --json hpc place --gpus 1)
is "$(echo "$out" | jget 'd["cluster"]')" testa "prefers the cluster with more idle GPUs (4 vs 2)"
is "$(echo "$out" | jget 'd["reason"]')" "chose slurm@testa — 4/8 idle GPUs, 1/2 idle nodes" "the reason counts only usable nodes"
seed_nodes testa "a1 mixed 4 3" "a2 down 4 0"
is "$("$EXA" --json hpc place --gpus 1 | jget 'd["cluster"]')" testb "changes its choice when GPUs are occupied"
out=$("$EXA" --json hpc place --gpus 3 --explain); rc=$?
is "$(echo "$out" | jget 'd["cluster"]')" None "3 GPUs on one node fit nowhere"
is "$rc" 1 "a placement that fits nowhere exits 1"
echo "$out" | grep -q Infinity; is $? 1 "no -Infinity in the JSON"
is "$(echo "$out" | jget '[c["score"] for c in d["explain"]["candidates"]]')" "[None, None]" "non-fitting scores are null"
"$EXA" hpc place --gpus 1 --explain | grep -q '^  #1 testb: score'; ok $? "--explain ranks candidates"
sqlite3 "$EXAMLOPS_DB" "UPDATE nodes SET captured_at='2020-01-01T00:00:00Z' WHERE cluster='testb'"
out=$("$EXA" --json hpc place --gpus 1 --explain --no-refresh)
is "$(echo "$out" | jget '[(c["cluster"], c["stale"]) for c in d["explain"]["candidates"]]')" "[('testb', True), ('testa', False)]" "an old snapshot is flagged stale"
echo "$out" | jget 'd["reason"]' | grep -q "\[stale snapshot: "; ok $? "and the reason says so"
err=$("$EXA" --json hpc place --gpus 1 2>&1 >/dev/null)
echo "$err" | grep -q "snapshot of 'testb' is stale and was not refreshed"; ok $? "an unreachable cluster's stale snapshot is reported, not hidden"
seed_nodes testb "b1 mixed 4 2" "b2 drain 4 0"
"$EXA" -y hpc reject testb --reason "maintenance" >/dev/null; ok $? "reject"
is "$("$EXA" --json hpc place --gpus 1 | jget 'd["cluster"]')" testa "reject blocks placement on it"
"$EXA" -y hpc approve testb >/dev/null 2>&1; is $? 1 "a REJECTED cluster cannot be approved"
sed -i 's/host: login1/host: evil.example/' "$EXAMLOPS_HPC_REGISTRY"
is "$("$EXA" --json hpc clusters | jget '[c["state"] for c in d if c["name"]=="testa"][0]')" PENDING "a host edit in clusters.yaml returns ACTIVE to PENDING"
is "$("$EXA" --json hpc place --gpus 1 | jget 'd["cluster"]')" None "and placement stops using it"
"$EXA" --json hpc place --gpus 64 >/dev/null; is $? 6 "still exit 6 with nothing ACTIVE"
n_changed=$(sqlite3 "$EXAMLOPS_DB" "select count(*) from audit_events where action='cluster_identity_changed' and target='testa' and details like '%evil.example%'")
is "$n_changed" 1 "the identity change is audited"
actor=$(sqlite3 "$EXAMLOPS_DB" "select actor from audit_events where action='cluster_approved' limit 1")
is "$actor" "$(id -un)" "the approver is the OS user"
EXAMLOPS_ACTOR=someone-else "$EXA" -y hpc approve testa >/dev/null
actor=$(sqlite3 "$EXAMLOPS_DB" "select actor from audit_events where action='cluster_approved' order by id desc limit 1")
is "$actor" "$(id -un) (as someone-else)" "EXAMLOPS_ACTOR is recorded beside the OS user"
out=$("$EXA" --json hpc audit verify)
is "$(echo "$out" | jget 'd["ok"]')" True "the audit chain verifies"
out=$("$EXA" --json hpc capacity)
is "$(echo "$out" | jget '[(c["name"], c["idle_gpus"], c["total_gpus"], c["utilization_pct"]) for c in d]')" "[('testa', 1, 8, 87.5)]" "capacity covers ACTIVE clusters only"
# hours by cluster, never by scheduler name: testb's job (also slurm, same
# job id) is not testa's. GPU-h: 6 recorded + 4 GPUs x 1800 s = 8; CPU-h:
# 8 recorded + 8 CPUs x 1800 s = 12; cost 8 x 2.50 + 12 x 0.05 = 20.60
sqlite3 "$EXAMLOPS_DB" "INSERT INTO jobs(cluster,scheduler,job_id,gpus,cpus,run_seconds,gpu_hours,cpu_hours,created_at,updated_at) VALUES
  ('testa','slurm','42',2,8,10800,6.0,8.0,'t','t'),
  ('testa','slurm','43',4,8,1800,NULL,NULL,'t','t'),
  ('testb','slurm','42',8,64,36000,80.0,640.0,'t','t')"
out=$("$EXA" --json hpc capacity)
is "$(echo "$out" | jget '[(c["gpu_hours_used"], c["cpu_hours_used"], c["cost_usd"]) for c in d]')" "[(8.0, 12.0, 20.6)]" "GPU-hours and cost from this cluster's jobs only"
out=$(GPU_COST_PER_HOUR=1 CPU_COST_PER_HOUR=bogus "$EXA" --json hpc capacity)
is "$(echo "$out" | jget 'd[0]["cost_usd"]')" 8.6 "rates from the environment; an invalid one falls back to its default"
"$EXA" hpc detect login1 --port 70000 >/dev/null 2>&1; is $? 2 "detect refuses a port outside 1..65535"
"$EXA" -y hpc approve no-such-cluster >/dev/null 2>&1; is $? 1 "approving an unknown cluster is refused"
tap_done
