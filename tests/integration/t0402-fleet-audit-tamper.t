#!/bin/bash
# The audit chain: governance events verify; UPDATE/DELETE are refused by
# triggers; a copy edited behind the triggers' back (dropped, then the
# row rewritten with sqlite3) fails `exa hpc audit verify` with exit 1.
# Audit binds state: a clusters row changed behind exa's back (state or
# identity) is treated as PENDING by every gate (place, pipeline run,
# preflight) and named by `hpc audit --verify`; a deleted tail (the last
# event, trigger dropped as an attacker with sqlite3 would) is reported
# from the chain's head; a version-2 database (before the binding) migrates with its rows bound.
. "$(dirname "$0")/lib-fleet.sh"
printf 'clusters:\n  testa: {scheduler: slurm, host: login1}\n' > "$EXAMLOPS_HPC_REGISTRY"
"$EXA" -y hpc approve testa >/dev/null; ok $? "approve"
"$EXA" -y hpc reject testa -r "disk full" >/dev/null; ok $? "reject"
out=$("$EXA" --json hpc audit verify); rc=$?
is "$rc" 0 "intact chain verifies"
is "$(echo "$out" | jget 'd["events"]')" 3 "defined, approved, rejected"
msg=$(sqlite3 "$EXAMLOPS_DB" "UPDATE audit_events SET actor='mallory'" 2>&1)
echo "$msg" | grep -q "append-only"; ok $? "UPDATE is refused"
msg=$(sqlite3 "$EXAMLOPS_DB" "DELETE FROM audit_events" 2>&1)
echo "$msg" | grep -q "append-only"; ok $? "DELETE is refused"
cp "$EXAMLOPS_DB" "$T/copy.db"
sqlite3 "$T/copy.db" "DROP TRIGGER audit_events_no_update; UPDATE audit_events SET actor='mallory' WHERE action='cluster_approved'"
ok $? "tampered copy written"
out=$(EXAMLOPS_DB=$T/copy.db "$EXA" --json hpc audit verify); rc=$?
is "$rc" 1 "verify fails on the tampered copy"
is "$(echo "$out" | jget 'd["bad_event_id"]')" 2 "it names the edited event"
echo "$out" | grep -q "hash does not match"; ok $? "and says why"
cp "$EXAMLOPS_DB" "$T/copy2.db"
sqlite3 "$T/copy2.db" "DROP TRIGGER audit_events_no_delete; DELETE FROM audit_events WHERE id=2"
EXAMLOPS_DB=$T/copy2.db "$EXA" hpc audit verify 2>/dev/null; is $? 1 "a deleted event breaks the link"
"$EXA" hpc audit verify >/dev/null; is $? 0 "the original still verifies"

# ---- a deleted tail: the chain still links, the head does not agree ----
cp "$EXAMLOPS_DB" "$T/tail.db"
sqlite3 "$T/tail.db" "DROP TRIGGER audit_events_no_delete; DELETE FROM audit_events WHERE id=(SELECT max(id) FROM audit_events)"
out=$(EXAMLOPS_DB=$T/tail.db "$EXA" --json hpc audit --verify); rc=$?
is "$rc" 1 "--verify fails when the last event is deleted"
is "$(echo "$out" | jget 'd["problems"][0]["message"]')" \
   "audit chain tail deleted: the head records 3 event(s) up to event 3, the table holds 2 up to event 2" \
   "it names the deleted tail from the head"
is "$(echo "$out" | jget 'd["bad_event_id"]')" 3 "the first missing event"
is "$(echo "$out" | jget 'd["clusters_mismatched"]')" "['testa']" \
   "testa, bound to the deleted event, no longer agrees"
err=$(EXAMLOPS_DB=$T/tail.db "$EXA" hpc audit --verify 2>&1 >/dev/null)
echo "$err" | grep -qF "exa: error: audit chain tail deleted"; ok $? "text mode says so on stderr"

# ---- a row changed behind exa's back ----
cat > "$EXAMLOPS_HPC_REGISTRY" <<'Y'
clusters:
  testa: {scheduler: slurm, host: login1}
  pend: {scheduler: mock, transport: local, host: localhost}
  good: {scheduler: mock, transport: local, host: localhost}
Y
"$EXA" hpc clusters >/dev/null 2>&1  # reconcile: pend and good PENDING
"$EXA" -y hpc approve good >/dev/null; ok $? "approve good"
seed_nodes pend "p1 idle 8 0"
seed_nodes good "g1 mixed 4 3"
sqlite3 "$EXAMLOPS_DB" "UPDATE nodes SET scheduler='mock' WHERE cluster IN ('pend','good')"
"$EXA" --json hpc audit --verify >/dev/null; is $? 0 "untouched fleet verifies"
sqlite3 "$EXAMLOPS_DB" "UPDATE clusters SET state='ACTIVE' WHERE name='pend'"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT state FROM clusters WHERE name='pend'")" ACTIVE "the row says ACTIVE"
pend_ev=$(sqlite3 "$EXAMLOPS_DB" "SELECT max(id) FROM audit_events WHERE target='pend'")
want="cluster 'pend' does not match its audit chain: the row says ACTIVE but its latest audit event ($pend_ev, cluster_defined) left it PENDING; it is treated as PENDING ('exa hpc audit --verify')"
out=$("$EXA" --json hpc place --no-refresh --gpus 1); rc=$?
is "$rc" 0 "place still works with the approved cluster"
is "$(echo "$out" | jget 'd["cluster"]')" good "and never chooses the tampered one (8 idle GPUs)"
"$EXA" hpc prometheus-sd --cluster pend >/dev/null 2>"$T/sd.err"; rc=$?
is "$rc/$(grep -c "cluster 'pend' is PENDING, not ACTIVE" "$T/sd.err")" "6/1" "prometheus-sd --cluster pend: the tampered row is PENDING (exit 6)"
is "$("$EXA" hpc prometheus-sd 2>/dev/null | jq -r '[.[].labels.cluster] | unique | join(",")')" good "prometheus-sd targets only the cluster that agrees with its chain"
sqlite3 "$EXAMLOPS_DB" "UPDATE clusters SET state='REJECTED' WHERE name='good'"
"$EXA" hpc place --no-refresh --gpus 1 >/dev/null 2>&1; is $? 6 "place refuses: no cluster agrees with its chain and is ACTIVE"
out=$("$EXA" pipeline run --dummy --cluster pend </dev/null 2>&1); rc=$?
is "$rc" 6 "pipeline run --cluster pend refuses (exit 6)"
echo "$out" | grep -qF "exa: error: $want"; ok $? "naming the mismatch"
"$EXA" hpc preflight pend >/dev/null 2>&1; is $? 6 "preflight refuses the tampered cluster"
printf '#!/bin/sh\necho hi\n' > "$T/job.sh"
out=$("$EXA" hpc submit "$T/job.sh" --cluster pend 2>&1); rc=$?
is "$rc" 6 "submit --cluster pend refuses (exit 6)"
echo "$out" | grep -qF "exa: error: $want"; ok $? "naming the mismatch"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM jobs WHERE cluster='pend'")" 0 "and records no job"
out=$("$EXA" --json hpc clusters 2>/dev/null)
is "$(echo "$out" | jget '[c["state"] for c in d if c["name"]=="pend"][0]')" PENDING "hpc clusters shows it PENDING"
is "$(echo "$out" | jget '[c["audit_mismatch"] for c in d if c["name"]=="pend"][0]')" "$want" "with the reason"
out=$("$EXA" --json hpc audit --verify); rc=$?
is "$rc" 1 "--verify fails"
is "$(echo "$out" | jget 'sorted(d["clusters_mismatched"])')" "['good', 'pend']" "naming both rows"
is "$(echo "$out" | jget '[p["message"] for p in d["problems"] if p["cluster"]=="pend"][0]')" "$want" "pend: row ACTIVE, chain PENDING"
err=$("$EXA" hpc audit --verify 2>&1 >/dev/null)
echo "$err" | grep -qF "exa: error: cluster 'good' does not match its audit chain: the row says REJECTED but its latest audit event"; ok $? "good: row REJECTED, chain ACTIVE"
# an identity edit with the state left alone is caught by the row digest
sqlite3 "$EXAMLOPS_DB" "UPDATE clusters SET state='ACTIVE' WHERE name='good'"
is "$("$EXA" --json hpc audit --verify | jget 'd["clusters_mismatched"]')" "['pend']" "restoring good's state by hand makes it agree again"
good_ev=$(sqlite3 "$EXAMLOPS_DB" "SELECT max(id) FROM audit_events WHERE target='good'")
sqlite3 "$EXAMLOPS_DB" "UPDATE clusters SET ssh_user='mallory' WHERE name='good'"
out=$("$EXA" --json hpc audit --verify); rc=$?
is "$(echo "$out" | jget '[p["message"] for p in d["problems"] if p["cluster"]=="good"][0]')" \
   "cluster 'good' does not match its audit chain: the row's identity differs from what its latest audit event ($good_ev, cluster_approved) recorded; it is treated as PENDING ('exa hpc audit --verify')" \
   "an edited ssh_user is named"
sqlite3 "$EXAMLOPS_DB" "UPDATE clusters SET audit_hash=NULL WHERE name='good'"
out=$("$EXA" --json hpc audit --verify)
echo "$out" | jget '[p["message"] for p in d["problems"] if p["cluster"]=="good"][0]' |
    grep -qF "the row is not bound to its latest audit event ($good_ev, cluster_approved)"; ok $? "an unbound row is named"
# a governance decision rewrites the row through the API: bound again
"$EXA" -y hpc approve pend >/dev/null; ok $? "approving the tampered PENDING cluster"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT json_extract(details,'\$.audit_mismatch') FROM audit_events WHERE target='pend' ORDER BY id DESC LIMIT 1")" \
   "$want" "the approval event records what it repaired"
"$EXA" -y hpc reject good -r "edited by hand" >/dev/null; ok $? "rejecting the edited one"
out=$("$EXA" --json hpc audit --verify); rc=$?
is "$rc" 0 "after approve/reject through exa every row agrees again"
is "$(echo "$out" | jget 'd["clusters_checked"]')" 3 "three rows checked"

# ---- listing ----
out=$("$EXA" --json hpc audit --cluster pend)
is "$(echo "$out" | jget '[e["action"] for e in d]')" "['cluster_defined', 'cluster_approved']" "--cluster lists that cluster's events"
is "$(echo "$out" | jget 'd[1]["details"]["state"]')" ACTIVE "each cluster event records the state it left"
is "$(echo "$out" | jget 'len(d[1]["details"]["row_sha256"])')" 64 "and the row digest"
is "$("$EXA" --json hpc audit --since 2999-01-01 | jget 'len(d)')" 0 "--since in the future: nothing"
is "$("$EXA" --json hpc audit --since 1h | jget 'len(d)')" \
   "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events")" "--since 1h: everything just written"
"$EXA" hpc audit --since yesterday >/dev/null 2>&1; is $? 2 "a bad --since is a usage error"
"$EXA" hpc audit --verify --cluster pend >/dev/null 2>&1; is $? 2 "--verify takes no filter"
out=$("$EXA" hpc audit --cluster testa)
echo "$out" | grep -qE "^[0-9]+ +[0-9T:-]+Z +[^ ]+ +cluster_rejected +testa +REJECTED$"; ok $? "the table shows action, target and state"

# ---- a version-2 database (before the binding) migrates: head and bindings computed ----
cp "$EXAMLOPS_DB" "$T/v1.db"
# The schema of user_version 2 is frozen (shipped migrations never change):
# keep its objects, drop every table, index and trigger a later migration
# made, and the columns later migrations added.
v2_objects="'clusters','nodes','jobs','ix_jobs_model','ix_jobs_state','ix_jobs_run_uuid',
'audit_events','audit_events_no_update','audit_events_no_delete','model_versions',
'model_costs','carbon_records','ux_carbon_records_key','sqlite_sequence'"
drops=$(sqlite3 "$T/v1.db" "SELECT 'DROP ' || upper(type) || ' IF EXISTS ' || name || ';'
    FROM sqlite_master WHERE name NOT IN ($v2_objects) AND name NOT LIKE 'sqlite_autoindex%'
    ORDER BY CASE type WHEN 'trigger' THEN 0 WHEN 'index' THEN 1 ELSE 2 END")
sqlite3 "$T/v1.db" "$drops ALTER TABLE clusters DROP COLUMN audit_hash; ALTER TABLE nodes DROP COLUMN addr; ALTER TABLE model_versions DROP COLUMN task_id; ALTER TABLE model_versions DROP COLUMN task_attempt; ALTER TABLE model_versions DROP COLUMN worker_id; PRAGMA user_version=2"
out=$(EXAMLOPS_DB=$T/v1.db "$EXA" --json hpc audit --verify); rc=$?
is "$rc" 0 "a migrated version-2 database verifies"
is "$(sqlite3 "$T/v1.db" "SELECT count FROM audit_head")" \
   "$(sqlite3 "$T/v1.db" "SELECT count(*) FROM audit_events")" "the head counts the existing events"
is "$(sqlite3 "$T/v1.db" "SELECT count(*) FROM clusters c WHERE audit_hash = (SELECT hash FROM audit_events e WHERE e.target=c.name AND e.action LIKE 'cluster_%' ORDER BY id DESC LIMIT 1)")" 3 "every row bound to its latest event"
tap_done
