#!/bin/bash
# 20 concurrent `connect` processes (half to "remote" hosts through a fake
# ssh-keyscan on PATH, half to localhost with the mock scheduler) and then
# 20 concurrent `approve`s: no entry is lost from clusters.yaml or the
# clusters table, every cluster ends ACTIVE, and the audit chain holds one
# connect and one approve event per cluster and still verifies.
. "$(dirname "$0")/lib-fleet.sh"
mkdir -p "$T/bin"
cat > "$T/bin/ssh-keyscan" <<'K'
#!/bin/sh
# fake ssh-keyscan: one fixed ed25519 host key for any host
for a; do h=$a; done
echo "$h ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB+3fhnQf0eWc883MdMb0NG7iLdubzSoWNj5SsGYOTZX"
K
chmod +x "$T/bin/ssh-keyscan"
export PATH=$T/bin:$PATH
pids=
for i in $(seq 1 20); do
    if [ $((i % 2)) = 0 ]; then
        "$EXA" hpc connect "host$i.example" --name "c$i" --scheduler mock -p $((2200 + i)) >"$T/c$i.out" 2>&1 &
    else
        "$EXA" hpc connect localhost --name "c$i" --scheduler mock >"$T/c$i.out" 2>&1 &
    fi
    pids="$pids $!"
done
fails=0; for p in $pids; do wait "$p" || fails=$((fails + 1)); done
is "$fails" 0 "20 concurrent connects succeed"
is "$(grep -c '^  c[0-9]*:' "$EXAMLOPS_HPC_REGISTRY")" 20 "clusters.yaml holds all 20"
is "$(sqlite3 "$EXAMLOPS_DB" 'select count(*) from clusters')" 20 "the table holds all 20"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from clusters where state='PENDING'")" 20 "all PENDING"
is "$(sqlite3 "$EXAMLOPS_DB" "select host_key_fingerprint from clusters where name='c2'")" "SHA256:GrZPTzVzm9iHPYaIE5tKEUtviHg/PpsoHUclpAzzkPI" "the scanned host key is pinned"
is "$(sqlite3 "$EXAMLOPS_DB" "select port from clusters where name='c4'")" 2204 "ports recorded per cluster"
pids=
for i in $(seq 1 20); do "$EXA" -y hpc approve "c$i" >"$T/a$i.out" 2>&1 & pids="$pids $!"; done
fails=0; for p in $pids; do wait "$p" || fails=$((fails + 1)); done
is "$fails" 0 "20 concurrent approves succeed"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from clusters where state='ACTIVE'")" 20 "all ACTIVE"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from audit_events where action='cluster_connect_requested'")" 20 "one connect event each"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from audit_events where action='cluster_approved'")" 20 "one approve event each"
"$EXA" hpc audit verify >/dev/null; ok $? "the chain verifies after concurrent writers"
# mixed: concurrent re-connects (same identity) and approves of ACTIVE clusters
pids=
for i in $(seq 1 10); do
    "$EXA" hpc connect localhost --name "c$((2 * i - 1))" --scheduler mock >/dev/null 2>&1 & pids="$pids $!"
    "$EXA" hpc connect "host$((2 * i)).example" --name "c$((2 * i))" --scheduler mock -p $((2200 + 2 * i + 1000)) >/dev/null 2>&1 & pids="$pids $!"
done
for p in $pids; do wait "$p"; done
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from clusters where state='ACTIVE'")" 10 "re-probes keep ACTIVE; a port change returns to PENDING"
is "$(grep -c '^  c[0-9]*:' "$EXAMLOPS_HPC_REGISTRY")" 20 "still 20 entries in clusters.yaml"
is "$(sqlite3 "$EXAMLOPS_DB" "select count(*) from audit_events where action='cluster_identity_changed'")" 10 "each identity change audited"
"$EXA" hpc audit verify >/dev/null; ok $? "the chain still verifies"
tap_done
