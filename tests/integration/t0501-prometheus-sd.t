#!/bin/bash
# t0501-prometheus-sd.t - exa hpc prometheus-sd: the file_sd groups of
# ACTIVE clusters (exact content, per-cluster ports from clusters.yaml,
# tenant label), identical bytes on an unchanged fleet, and an atomic
# --out: a failed write (full disk, read-only directory) keeps the old
# file and leaves no temporary behind.
set -u
. "$(dirname "$0")/lib-observe.sh"

is "empty fleet prints an empty list" "$("$EXA" hpc prometheus-sd | jq -c .)" "[]"

# clusters.yaml first: approval binds the identity it defines
cat >"$EXAMLOPS_HPC_REGISTRY" <<'YAML'
clusters:
  c2:
    scheduler: flux
    host: login.c2
    node_exporter_port: 9200
    tenant: acme
YAML
add_cluster c1 slurm ACTIVE
add_cluster c0 flux PENDING
add_cluster c2 flux ACTIVE
add_node c1 gpu02 4 mixed
add_node c1 gpu01 8 allocated
add_node c1 cpu01 0 idle
add_node c0 z1 2
add_node c2 f1 0

want='[{"labels":{"cluster":"c1","job":"dcgm","scheduler":"slurm","tenant":"default"},"targets":["gpu01:9400","gpu02:9400"]},{"labels":{"cluster":"c1","job":"node","scheduler":"slurm","tenant":"default"},"targets":["cpu01:9100","gpu01:9100","gpu02:9100"]},{"labels":{"cluster":"c2","job":"node","scheduler":"flux","tenant":"acme"},"targets":["f1:9200"]}]'
is "groups by (cluster, job), ACTIVE only, ports and tenant from clusters.yaml" \
    "$("$EXA" hpc prometheus-sd | jq -c .)" "$want"
is "--cluster filters" \
    "$("$EXA" hpc prometheus-sd --cluster c2 | jq -c '[.[].targets[]]')" '["f1:9200"]'
is "tenant from clusters.yaml, else EXAMLOPS_TENANT" \
    "$(EXAMLOPS_TENANT=lab "$EXA" hpc prometheus-sd | jq -r '[.[].labels.tenant] | join(",")')" lab,lab,acme
"$EXA" hpc prometheus-sd --cluster c0 >/dev/null 2>&1
is "a PENDING cluster is refused (exit 6)" "$?" 6
"$EXA" hpc prometheus-sd --cluster nope >/dev/null 2>&1
is "an unknown cluster is an error (exit 1)" "$?" 1
"$EXA" hpc prometheus-sd --bogus >/dev/null 2>&1
is "unknown option is a usage error (exit 2)" "$?" 2

add_cluster c3 slurm ACTIVE
err=$("$EXA" hpc prometheus-sd 2>&1 >/dev/null)
is "an ACTIVE cluster without a snapshot is named on stderr" "$err" \
    "exa: warning: cluster 'c3' has no saved node snapshot: run 'exa hpc nodes --cluster c3 --save'"
sql "DELETE FROM clusters WHERE name='c3'"

out="$EXA_T/sd/targets.json"
mkdir -p "$EXA_T/sd"
"$EXA" -q hpc prometheus-sd --out "$out"
is "--out writes the same document" "$(jq -c . "$out")" "$want"
sum1=$(sha256sum <"$out")
"$EXA" -q hpc prometheus-sd --out "$out"
is "an unchanged fleet rewrites identical bytes" "$(sha256sum <"$out")" "$sum1"
is "--out --json reports targets" \
    "$("$EXA" --json hpc prometheus-sd --out "$out" | jq -c '[.groups,.targets]')" "[3,6]"
is "file mode is 0644" "$(stat -c %a "$out")" 644
is "no temporary left beside it" "$(ls -A "$EXA_T/sd")" targets.json

# ---- failed writes keep the old file ----
fs="$EXA_T/fs"
mkdir -p "$fs"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$fs" 2>/dev/null; then
    _obs_cleanup_hooks+=("umount '$fs'")
    "$EXA" -q hpc prometheus-sd --out "$fs/targets.json"
    old=$(sha256sum <"$fs/targets.json")
    # fill the disk, then grow the fleet so the new file cannot fit
    dd if=/dev/zero of="$fs/filler" bs=4k 2>/dev/null
    sql "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<2000)
         INSERT INTO nodes(cluster,node,gpus,captured_at)
         SELECT 'c1', printf('big%05d', i), 8, 'x' FROM n"
    err=$("$EXA" hpc prometheus-sd --out "$fs/targets.json" 2>&1 >/dev/null)
    is "full disk: exit 3" "$?" 3
    case $err in *"No space left on device"*) ok "full disk: error names ENOSPC" ;;
        *) not_ok "full disk: error names ENOSPC"; echo "# $err" ;; esac
    is "full disk: old file intact" "$(sha256sum <"$fs/targets.json")" "$old"
    is "full disk: no temporary left" "$(ls -A "$fs" | sort | tr '\n' ' ')" "filler targets.json "
    rm -f "$fs/filler"
    mount -o remount,ro "$fs"
    "$EXA" hpc prometheus-sd --out "$fs/targets.json" >/dev/null 2>&1
    is "read-only dir: exit 3" "$?" 3
    is "read-only dir: old file intact" "$(sha256sum <"$fs/targets.json")" "$old"
elif [ "$(id -u)" != 0 ]; then
    "$EXA" -q hpc prometheus-sd --out "$fs/targets.json"
    old=$(sha256sum <"$fs/targets.json")
    add_node c1 gpu03 2
    chmod 555 "$fs"
    "$EXA" hpc prometheus-sd --out "$fs/targets.json" >/dev/null 2>&1
    is "read-only dir: exit 3" "$?" 3
    is "read-only dir: old file intact" "$(sha256sum <"$fs/targets.json")" "$old"
    chmod 755 "$fs"
else
    ok "# SKIP root without mount: cannot simulate a failed write"
fi
done_testing
