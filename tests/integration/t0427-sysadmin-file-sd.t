#!/bin/bash
# hpc prometheus-sd targets are where a node is reached: Slurm's NodeAddr
# (which defaults to NodeHostname, then NodeName), saved with the node
# snapshot; the testbed's testa-n1 has NodeAddr 127.0.0.1 (issue 13).
if [ -z "${TESTBED_ROOT:-}" ]; then echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"; exit 0; fi
. "$(dirname "$0")/lib-fleet.sh"
node=$TESTBED_NODE_TESTA
addr=$(SLURM_CONF=$TESTBED_SLURM_CONF_TESTA sinfo -h -N -n "$node" -o %o | head -1)
isnt() { n=$((n + 1)); if [ "$1" != "$2" ]; then echo "ok $n - $3"; else echo "not ok $n - $3"; fails=$((fails + 1)); fi; }
isnt "$addr" "$node" "the testbed node's NodeAddr ($addr) differs from its name ($node)"
"$EXA" hpc connect "$TESTBED_SSH_HOST" --name testa -u "$TESTBED_SSH_USER" -k "$TESTBED_SSH_KEY" -p "$TESTBED_SSH_PORT_TESTA" >/dev/null &&
    "$EXA" -y hpc approve testa >/dev/null
ok $? "testa registered and approved"
"$EXA" hpc nodes --cluster testa --save >/dev/null; ok $? "nodes --save"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT node || ' ' || IFNULL(addr, '-') FROM nodes WHERE cluster='testa'")" "$node $addr" \
    "the snapshot keeps the node's address"
out=$("$EXA" hpc prometheus-sd)
is "$(echo "$out" | jget '[(g["labels"]["job"], g["targets"]) for g in d]')" "[('dcgm', ['$addr:9400']), ('node', ['$addr:9100'])]" \
    "file_sd targets are NodeAddr:port, not the node name"
# a snapshot saved before addresses were kept (addr NULL) still gives names
sqlite3 "$EXAMLOPS_DB" "UPDATE nodes SET addr = NULL WHERE cluster='testa'"
is "$("$EXA" hpc prometheus-sd | jget 'd[1]["targets"]')" "['$node:9100']" "without an address the name is the target"
tap_done
