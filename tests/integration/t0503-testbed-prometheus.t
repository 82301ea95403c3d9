#!/bin/bash
# t0503-testbed-prometheus.t - on the Slurm testbed, cluster testa is
# registered the product's way (exa hpc connect over ssh, approve, nodes
# --save); a real Prometheus on loopback (our own, on a free port, next to
# the testbed's) reads the file_sd file `exa hpc prometheus-sd` wrote and
# scrapes `exa serve`, which collects over ssh with the pinned key; its
# API shows the node_exporter/dcgm targets of cluster testa with exa's
# labels, and the slurm_job_info series of a running testbed job with the
# right account, joined to its node and GPUs; the attribution rules load.
set -u
. "$(dirname "$0")/lib-testbed.sh"
require_testbed
. "$(dirname "$0")/lib-observe.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v prometheus >/dev/null; then
    echo "1..0 # SKIP prometheus not installed"; exit 0
fi
cluster=testa
export SLURM_CONF=$(tb_conf "$cluster")
node_var=TESTBED_NODE_${cluster^^}
node=${!node_var}
# file_sd targets are the node's address (NodeAddr), not its name
addr=$(sinfo -h -N -n "$node" -o %o | head -1)
account=${TESTBED_ACCOUNT:-research}
part=${TESTBED_PARTITION:-debug}

port_var=TESTBED_SSH_PORT_${cluster^^}
"$EXA" -q hpc connect "$TESTBED_SSH_HOST" --name "$cluster" --user "$TESTBED_SSH_USER" \
    --key "$TESTBED_SSH_KEY" --port "${!port_var}" --scheduler slurm >/dev/null
is "exa hpc connect over ssh" "$?" 0
"$EXA" -q -y hpc approve "$cluster" >/dev/null
is "exa hpc approve" "$?" 0
"$EXA" -q hpc nodes --cluster "$cluster" --save >/dev/null
is "exa hpc nodes --save stores the snapshot" "$?" 0

submit() {
    jid=$(sbatch --parsable -A "$account" -p "$part" --gpus=1 -J exa-t0503 \
          -o /dev/null --wrap 'sleep 300')
    _obs_cleanup_hooks+=("scancel $jid 2>/dev/null")
}
submit
check "sbatch a 1-GPU job ($jid)" test -n "$jid"

"$EXA" -q hpc prometheus-sd --out "$EXA_T/targets.json"
is "prometheus-sd wrote node and dcgm targets" \
    "$(jq -c '[.[] | .labels.job + "=" + (.targets | join(","))]' "$EXA_T/targets.json")" \
    "[\"dcgm=$addr:9400\",\"node=$addr:9100\"]"

eport=$(free_port)
"$EXA" serve --listen "127.0.0.1:$eport" --interval 1 >/dev/null 2>"$EXA_T/serve.err" &
epid=$!
_obs_cleanup_hooks+=("kill $epid 2>/dev/null; wait $epid 2>/dev/null")

pport=$(free_port)
mkdir -p "$EXA_T/prom"
cp "$ROOT/deploy/prometheus/rules.yml" "$EXA_T/prom/rules.yml"
cat >"$EXA_T/prom/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [rules.yml]
scrape_configs:
  - job_name: exa-fleet
    file_sd_configs:
      - files: ['$EXA_T/targets.json']
        refresh_interval: 1s
  - job_name: exa
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$eport']
YAML
prometheus --config.file="$EXA_T/prom/prometheus.yml" \
    --storage.tsdb.path="$EXA_T/prom/data" \
    --web.listen-address="127.0.0.1:$pport" >"$EXA_T/prom/log" 2>&1 &
ppid_=$!
_obs_cleanup_hooks+=("kill $ppid_ 2>/dev/null; wait $ppid_ 2>/dev/null")
api="http://127.0.0.1:$pport/api/v1"

# poll URL JQ WANT: up to 30 s until jq on the answer prints WANT
poll() {
    local got=
    for _ in $(seq 60); do
        got=$(curl -s -m 2 "$1" | jq -r "$2" 2>/dev/null)
        [ "$got" = "$3" ] && break
        sleep 0.5
    done
    printf '%s' "$got"
}

q='[.data.activeTargets[] | select(.labels.job=="node" or .labels.job=="dcgm")
    | .labels.job + " " + .labels.instance + " " + .labels.cluster + " "
      + .labels.scheduler + " " + .labels.tenant] | sort | join(";")'
is "Prometheus discovered exa's targets with their labels" \
    "$(poll "$api/targets" "$q" "dcgm $addr:9400 $cluster slurm default;node $addr:9100 $cluster slurm default")" \
    "dcgm $addr:9400 $cluster slurm default;node $addr:9100 $cluster slurm default"
is "Prometheus scrapes exa serve" \
    "$(poll "$api/targets" '[.data.activeTargets[] | select(.labels.job=="exa") | .health] | join(",")' up)" up

# The testbed is shared: another suite's cleanup may cancel our job, or
# its jobs may hold the GPUs for a while. Resubmit (at most twice) when
# the job is gone from the queue.
want_info="$cluster $account $part RUNNING"
for attempt in 1 2 3; do
    sel="slurm_job_info%7Bjob_id%3D%22$jid%22%7D"
    got=$(poll "$api/query?query=$sel" '.data.result[0].metric | [.cluster, .account, .partition, .state] | join(" ")' "$want_info")
    [ "$got" = "$want_info" ] && break
    if squeue -h -j "$jid" 2>/dev/null | grep -q .; then
        got=$(poll "$api/query?query=$sel" '.data.result[0].metric | [.cluster, .account, .partition, .state] | join(" ")' "$want_info")
        [ "$got" = "$want_info" ] && break
    fi
    echo "# job $jid left the queue early (attempt $attempt); resubmitting"
    scancel "$jid" 2>/dev/null
    submit
done
is "slurm_job_info of the running job carries its account" "$got" "$want_info"
is "slurm_node_job puts it on the testbed node" \
    "$(poll "$api/query?query=slurm_node_job%7Bjob_id%3D%22$jid%22%7D" '.data.result[0].metric.node' "$node")" "$node"
is "slurm_job_gpus is 1" \
    "$(poll "$api/query?query=slurm_job_gpus%7Bjob_id%3D%22$jid%22%7D" '.data.result[0].value[1]' 1)" 1
is "the attribution rules loaded without errors" \
    "$(poll "$api/rules" '[.data.groups[].rules[] | select(.health != "ok")] | length' 0)" 0
is "exa's collector reports no command errors" \
    "$(poll "$api/query?query=sum(exa_exporter_command_errors_total)" '.data.result[0].value[1]' 0)" 0
done_testing
