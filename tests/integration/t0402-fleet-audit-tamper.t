#!/bin/bash
# The audit chain: governance events verify; UPDATE/DELETE are refused by
# triggers; a copy edited behind the triggers' back (dropped, then the
# row rewritten with sqlite3) fails `exa hpc audit verify` with exit 1.
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
tap_done
