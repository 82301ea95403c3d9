#!/bin/bash
# t0500-promtool.t - promtool is clean on what exa ships: the /metrics of
# a running `exa serve` (started on 127.0.0.1 with a free port, bounded
# curl; one ACTIVE Slurm cluster over the local transport whose sinfo and
# squeue replay the testbed captures in tests/fixtures/observe/),
# deploy/prometheus/rules.yml (check and unit tests), and every
# query of the Grafana dashboard (parsed as recording rules); the
# dashboard has at most six panels.
set -u
. "$(dirname "$0")/lib-observe.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v promtool >/dev/null; then
    echo "1..0 # SKIP promtool not installed (scripts/install-deps.sh test)"
    exit 0
fi

init_db
add_cluster c1 slurm PENDING
add_cluster c2 flux PENDING
sql "UPDATE clusters SET transport='local' WHERE name='c1'"
"$EXA" -y hpc approve c1 >/dev/null
mkdir -p "$EXA_T/bin"
for c in sinfo squeue; do
    printf '#!/bin/sh\necho %s >>"%s/calls"\nexec cat "%s/tests/fixtures/observe/%s-testa.txt"\n' \
        "$c" "$EXA_T" "$ROOT" "$c" >"$EXA_T/bin/$c"
    chmod +x "$EXA_T/bin/$c"
done
export PATH="$EXA_T/bin:$PATH"
sql "INSERT INTO jobs(cluster,scheduler,job_id,model,state,gpu_hours,created_at,updated_at)
     VALUES('c1','slurm','184729','JPCP','COMPLETED',32,'x','x')"
sql "INSERT INTO carbon_records(ts,model,provider,kwh,co2e_g) VALUES('x','JPCP','static',9.6,3360)"

port=$(free_port)
"$EXA" serve --listen "127.0.0.1:$port" --interval 600 >"$EXA_T/serve.out" 2>"$EXA_T/serve.err" &
pid=$!
_obs_cleanup_hooks+=("kill $pid 2>/dev/null; wait $pid 2>/dev/null")
for _ in $(seq 100); do   # until the first collection is done
    [ "$(curl -sf -m 2 "http://127.0.0.1:$port/healthz")" = "ok 1" ] && break
    sleep 0.1
done
metrics=$(curl -sf -m 5 "http://127.0.0.1:$port/metrics")
is "/metrics answers 200" "$?" 0
ctype=$(curl -s -m 5 -o /dev/null -w '%{content_type}' "http://127.0.0.1:$port/metrics")
is "content type is the 0.0.4 text format" "$ctype" "text/plain; version=0.0.4; charset=utf-8"
lint=$(printf '%s\n' "$metrics" | promtool check metrics 2>&1)
is "promtool check metrics is clean" "$?:$lint" "0:"
case $metrics in *'exa_clusters{state="ACTIVE"} 1'*) ok "exa_clusters by state" ;;
    *) not_ok "exa_clusters by state" ;; esac
case $metrics in *'exa_gpu_seconds_total{cluster="c1",account="unknown",model="JPCP"} 115200'*)
    ok "GPU-seconds from recorded GPU-hours (32 h)" ;; *) not_ok "GPU-seconds from recorded GPU-hours" ;; esac
case $metrics in *'exa_energy_joules_total{model="JPCP",provider="static"} 34560000'*)
    ok "energy in joules from kWh" ;; *) not_ok "energy in joules from kWh" ;; esac
case $metrics in *'exa_exporter_cache_age_seconds '*) ok "cache age reported" ;;
    *) not_ok "cache age reported" ;; esac
case $metrics in *'slurm_job_info{cluster="c1",job_id="24",user="root",account="research",partition="debug",state="RUNNING"} 1'*)
    ok "slurm_job_info from the collected squeue" ;; *) not_ok "slurm_job_info from the collected squeue" ;; esac
case $metrics in *'slurm_account_gpus_running{cluster="c1",account="research"} 2'*)
    ok "GPUs per account" ;; *) not_ok "GPUs per account" ;; esac
for _ in 1 2 3 4 5 6 7 8 9 10; do curl -sf -m 5 -o /dev/null "http://127.0.0.1:$port/metrics"; done
is "12 scrapes in one interval ran sinfo and squeue once each" \
    "$(sort "$EXA_T/calls" | uniq -c | awk '{print $2"="$1}' | tr '\n' ' ')" "sinfo=1 squeue=1 "
is "/healthz is ok" "$(curl -s -m 5 "http://127.0.0.1:$port/healthz" | cut -d' ' -f1)" ok
is "unknown path is 404" "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/x")" 404
is "POST /metrics is 405" "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/metrics")" 405
kill "$pid"; wait "$pid" 2>/dev/null
is "SIGTERM stops exa serve cleanly" "$?" 0

"$EXA" serve --listen "127.0.0.1:notaport" >/dev/null 2>&1
is "a bad listen address is a usage error" "$?" 2

out=$(promtool check rules "$ROOT/deploy/prometheus/rules.yml" 2>&1)
is "promtool check rules" "$?" 0
out=$(cd "$ROOT/deploy/prometheus" && promtool test rules rules_test.yml 2>&1)
if [ $? -eq 0 ]; then ok "promtool test rules (attribution numbers, 3 faults)"; else
    not_ok "promtool test rules"; printf '%s\n' "$out" | sed 's/^/# /'; fi
is "exactly three alerts" "$(grep -c '^ *- alert:' "$ROOT/deploy/prometheus/rules.yml")" 3
for a in $(grep '^ *- alert:' "$ROOT/deploy/prometheus/rules.yml" | awk '{print $3}'); do
    blk=$(awk -v a="$a" '$0 ~ "- alert: "a"$" {p=1; next} p && /- (alert|record):/ {p=0} p' \
        "$ROOT/deploy/prometheus/rules.yml")
    case $blk in *"for: "*runbook_url*) ok "$a has for: and a runbook" ;;
        *) not_ok "$a has for: and a runbook" ;; esac
done

dash="$ROOT/deploy/grafana/exa-gpu-attribution.json"
n=$(jq '.panels | length' "$dash")
check "dashboard has at most 6 panels ($n)" test "$n" -le 6
jq -r '[.panels[].targets[].expr] | to_entries[] |
       "      - record: dashboard:q\(.key)\n        expr: \(.value | gsub("\\$cluster"; ".*") | tojson)"' \
    "$dash" | { echo "groups:"; echo "  - name: dashboard"; echo "    rules:"; cat; } >"$EXA_T/dash_rules.yml"
out=$(promtool check rules "$EXA_T/dash_rules.yml" 2>&1)
if [ $? -eq 0 ]; then ok "every dashboard query parses"; else
    not_ok "every dashboard query parses"; printf '%s\n' "$out" | sed 's/^/# /'; fi
done_testing
