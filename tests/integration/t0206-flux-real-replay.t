#!/bin/bash
# t0206-flux-real-replay.t - the Flux adapter, `exa hpc` and `exa serve`
# against the outputs of a real flux-core 0.88.0 instance
# (tests/fixtures/flux-real, README there), replayed by tests/fakes/flux
# keyed by argv (FAKE_FLUX_MAP) and refusing what the real flux refused
# (flux batch without a slot count, flux jobs -o {ngpus}). Each phase
# writes the map of argv -> capture it needs; every call is logged.
set -u
. "$(dirname "$0")/lib-observe.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
R=$ROOT/tests/fixtures/flux-real
mkdir -p "$EXA_T/bin" "$EXA_T/remote"
ln -s "$ROOT/tests/fakes/flux" "$EXA_T/bin/flux"
unset EXAMLOPS_SLURM_MODE EXAMLOPS_HPC_SSH_HOST EXAMLOPS_HPC_CLUSTER EXAMLOPS_HPC_WORKDIR
export PATH="$EXA_T/bin:$PATH" EXAMLOPS_HPC_SCHEDULER=flux EXAMLOPS_HPC_TRANSPORT=local \
    EXAMLOPS_HPC_REMOTE_WORKDIR="$EXA_T/remote" FAKE_FLUX_MAP="$EXA_T/map" \
    FAKE_FLUX_LOG="$EXA_T/flux.log" FAKE_FLUX_REAL="$R"
MAP=$EXA_T/map
LOG=$EXA_T/flux.log
printf 'echo hi\n' > "$EXA_T/job.sh"
py() { python3 -c "$1" "${@:2}"; }
jget() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1:]: d=d[int(k)] if k.isdigit() else d[k]
print(d)' "$@"; }

# ---- the fake refuses like flux-core 0.88 did --------------------------
: > "$MAP"
flux batch --job-name=noslots ok.sh > "$EXA_T/o" 2> "$EXA_T/e"
is "flux batch without -n/-N: exit 1 and the real stderr (capture 06)" \
    "$?:$(cat "$EXA_T/e")" "1:flux-batch: ERROR: Number of slots to allocate must be specified"
flux jobs -A -o '{id.f58} {username} {queue} {status_abbrev} {ncores} {ngpus} {nodelist}' \
    > "$EXA_T/o" 2> "$EXA_T/e"
is "flux jobs -o {ngpus}: exit 1, as capture 23" "$?:$(cat "$EXA_T/e")" \
    "1:$(cat "$R/23-jobs-A-observe-format-mixed.stderr")"

# ---- 0. the cluster: flux over the local transport, connected (its
# probe reads 01-05) and approved, so the gate lets jobs through ---------
cat > "$MAP" <<'EOF'
01-flux-version 0 version
05-account-help 1 account --help
02-resource-list 0 resource list
03-resource-status 0 resource status
04-resource-R 0 resource R
99s-queue-list-exa-format-no-queues 0 queue list -n -o {queuem}?{submission}*
EOF
"$EXA" hpc connect localhost --name f1 --scheduler flux > "$EXA_T/connect.out" 2>&1 &&
    "$EXA" -y hpc approve f1 > "$EXA_T/approve.out" 2>&1
is "f1 (local, flux) connected and approved" "$?" 0
# no queues configured: flux queue list's one anonymous row is no partition
is "an instance without queues has no partitions, and says nothing of queues" \
    "$("$EXA" --json hpc detect | py 'import json,sys
c = json.load(sys.stdin)["capabilities"]
print(len(c["partitions"]), len([n for n in c["notes"] if "queue" in n]))')" "0 0"

# ---- 1. submit without --ntasks/--nodes: one slot ----------------------
cat > "$MAP" <<'EOF'
10-batch-ok 0 batch *
EOF
: > "$LOG"
out=$("$EXA" --json hpc submit "$EXA_T/job.sh")
is "submit without flags exits 0" "$?" 0
is "the id flux batch printed is recorded" "$(jget job_id <<<"$out")" "ƒ3nbeib1"
run1=$(jget run_id <<<"$out")
is "flux batch gets -n1 (exactly one batch call)" "$(grep -c '^batch ' "$LOG"):$(sed -n 's/^batch .* \(-n1\) .*run\.sh$/\1/p' "$LOG")" "1:-n1"
is "the job row exists" "$("$EXA" --json hpc jobs | jget 0 job_id)" "ƒ3nbeib1"

# ---- 2. --nodes 2 --gpus 2: -N2 -n2 -g1; the row takes R's allocation --
cat > "$MAP" <<'EOF'
14-batch-gpu 0 batch *
EOF
: > "$LOG"
out=$("$EXA" --json hpc submit "$EXA_T/job.sh" --nodes 2 --gpus 2)
is "--nodes 2 --gpus 2 submits" "$(jget job_id <<<"$out")" "ƒ48WZ57d"
is "argv: -N2 -n2 -g1 (2 slots of 1 GPU = the job total)" \
    "$(sed -n 's/^batch --job-name=exa-[0-9a-f]* --output=[^ ]* --error=[^ ]* \(.*\) [^ ]*run\.sh$/\1/p' "$LOG")" \
    "-N2 -n2 -g1"
err=$("$EXA" hpc submit "$EXA_T/job.sh" --ntasks 3 --gpus 4 2>&1)
is "4 GPUs over 3 slots is refused before flux runs (exit 2)" "$?:$(grep -c '^batch ' "$LOG")" "2:1"
is "... with the per-slot rule in the message" "$err" \
    "exa: error: gpus 4 cannot be split over 3 flux slots: flux -g is per slot (ask a multiple of 3 GPUs, or ntasks dividing 4)"

# the partition is the Flux queue; Flux has no QOS: dropped, said, also
# by --dry-run (which runs nothing)
: > "$LOG"
out=$("$EXA" --json hpc submit "$EXA_T/job.sh" --partition debug --qos high 2> "$EXA_T/e")
is "--partition debug --qos high: flux batch gets --queue=debug, no QOS" \
    "$(sed -n 's/^batch --job-name=exa-[0-9a-f]* --output=[^ ]* --error=[^ ]* \(.*\) [^ ]*run\.sh$/\1/p' "$LOG")" \
    "--queue=debug -n1"
is "... and says the QOS was dropped" "$(cat "$EXA_T/e")" \
    "exa: warning: qos 'high' dropped: Flux has no QOS (a Flux queue is --partition)"
: > "$LOG"
"$EXA" hpc submit "$EXA_T/job.sh" --partition debug --mem 1G --dry-run > "$EXA_T/o" 2> "$EXA_T/e"
is "--dry-run: --queue=debug in the command, the dropped memory said, flux not run" \
    "$?:$(grep -c -- '--queue=debug' "$EXA_T/o"):$(cat "$EXA_T/e"):$(wc -c < "$LOG")" \
    "0:1:exa: warning: mem '1G' dropped: Flux has no memory request:0"

# ---- 3. status of the nine jobs, all inactive (captures 41, 61, 62) ----
cat > "$MAP" <<'EOF'
41-jobs-exa-status-format-final 0 jobs --no-header -o {id.f58}*{state}*{result}*{t_submit}*{t_run}*{t_inactive}*{waitstatus}*{runtime} *
61-job-info-R-gpu-completed 0 job info ƒ48WZ57d R
62-job-info-R-completed-cpu 0 job info ƒ3nbeib1 R
50-eventlog-completed 0 job info ƒ3nbeib1 eventlog
51-eventlog-failed-exit3 0 job info ƒ3qfZEQP eventlog
52-eventlog-cancelled-running 0 job info ƒ3uVwNg7 eventlog
53-eventlog-timeout 0 job info ƒ3ytwF9R eventlog
54-eventlog-exception-test 0 job info ƒ4JFQMV1 eventlog
55-eventlog-exception-unsatisfiable 0 job info ƒ4ebWVoV eventlog
56-eventlog-cancelled-held 0 job info ƒ4WGCXw5 eventlog
57-eventlog-cancelled-pending-started 0 job info ƒ4Q6uX1y eventlog
58-eventlog-gpu-completed 0 job info ƒ48WZ57d eventlog
EOF
: > "$LOG"
st=$("$EXA" --json hpc status ƒ3nbeib1 ƒ3qfZEQP ƒ3uVwNg7 ƒ3ytwF9R ƒ48WZ57d ƒ4JFQMV1 ƒ4Q6uX1y ƒ4WGCXw5 ƒ4ebWVoV)
is "hpc status exits 0" "$?" 0
is "states, raw states (flux's result word), exit codes, elapsed, gpus" \
    "$(py 'import json,sys
for j in json.loads(sys.argv[1]):
    print(j["job_id"], j["state"], j["raw_state"], j["exit_code"], j["elapsed_s"], j["gpus"])' "$st")" \
"ƒ3nbeib1 COMPLETED COMPLETED 0 5 0
ƒ3qfZEQP FAILED FAILED 3 3 None
ƒ3uVwNg7 CANCELLED CANCELED 143 9 None
ƒ3ytwF9R TIMEOUT TIMEOUT 129 1 None
ƒ48WZ57d COMPLETED COMPLETED 0 18 1
ƒ4JFQMV1 FAILED FAILED 143 8 None
ƒ4Q6uX1y CANCELLED CANCELED 143 1 None
ƒ4WGCXw5 CANCELLED CANCELED None 0 None
ƒ4ebWVoV FAILED FAILED None 0 None"
is "times are ISO-8601 UTC as hpc jobs prints them; no start for a job that never ran" \
    "$(py 'import json,sys
for j in json.loads(sys.argv[1])[:1] + json.loads(sys.argv[1])[7:8]:
    print(j["start"], j["end"])' "$st")" \
"2026-12-01T18:05:28Z 2026-12-01T18:05:34Z
None 2026-12-01T18:06:09Z"
# status: one flux jobs for all nine, then one flux jobs --json for the
# seven that ended other than COMPLETED (their exception: no capture of
# that moment, so the fake refuses it and the reasons stay empty; phase
# 3b replays one), R once for each of the seven that ran (the adapter);
# then the accounting of the ended jobs' rows (accounting.c) reads each
# eventlog and R once more
is "one flux jobs and one --json for nine ids; R for the seven that ran, then eventlog + R per ended job" \
    "$(grep -c '^jobs ' "$LOG"):$(grep -c '^jobs --json ƒ3qfZEQP ƒ3uVwNg7 ƒ3ytwF9R ƒ4JFQMV1 ƒ4Q6uX1y ƒ4WGCXw5 ƒ4ebWVoV$' "$LOG"):$(grep -c '^job info .* R$' "$LOG"):$(grep -c 'eventlog' "$LOG")" "2:1:16:9"
is "the --nodes 2 --gpus 2 row records what R allocated (1 GPU, 1 core, 1 node)" \
    "$("$EXA" --json hpc jobs | py 'import json,sys
for j in json.load(sys.stdin):
    if j["job_id"] == "ƒ48WZ57d": print(j["gpus"], j["cpus"], j["nodes"], j["state"], j["start_time"])')" \
    "1 1 1 COMPLETED 2026-12-01T18:05:29Z"

# ---- 3b. why listed jobs ended: their exception (99n, 99o) --------------
cat > "$MAP" <<'EOF'
99n-jobs-exa-status-format-ended 0 jobs --no-header -o *
99o-jobs-json-ended 0 jobs --json ƒJBGgNj ƒMgNyyy ƒRk71no
EOF
: > "$LOG"
st=$("$EXA" --json hpc status ƒJBGgNj ƒMgNyyy ƒRk71no ƒVDjL7h)
is "status of listed ended jobs: the exception type is the reason, as from the eventlog" \
    "$(py 'import json,sys
for j in json.loads(sys.argv[1]):
    print(j["job_id"], j["state"], j["raw_state"], j["exit_code"], j["reason"])' "$st")" \
"ƒJBGgNj FAILED FAILED 3 None
ƒMgNyyy TIMEOUT TIMEOUT 142 timeout
ƒRk71no CANCELLED CANCELED None cancel
ƒVDjL7h COMPLETED COMPLETED 0 None"
is "... asked in one flux jobs --json of the three that did not complete" \
    "$(grep -c '^jobs --json ƒJBGgNj ƒMgNyyy ƒRk71no$' "$LOG"):$(grep -c '^jobs --json' "$LOG")" "1:1"

# ---- 4. an id flux jobs does not know: the eventlog (46, 65) -----------
cat > "$MAP" <<'EOF'
46-jobs-exa-status-format-unknown-id 0 jobs --no-header -o * ƒ3nbeib1 fNoSuchJob
65-job-info-eventlog-unknown-id 1 job info fNoSuchJob eventlog
62-job-info-R-completed-cpu 0 job info ƒ3nbeib1 R
EOF
: > "$LOG"
st=$("$EXA" --json hpc status ƒ3nbeib1 fNoSuchJob)
is "known id COMPLETED, unknown id UNKNOWN after its eventlog failed" \
    "$(py 'import json,sys
print(" ".join(j["state"] for j in json.loads(sys.argv[1])))' "$st"):$(grep -c 'job info fNoSuchJob eventlog' "$LOG")" \
    "COMPLETED UNKNOWN:1"

# ---- 5. eventlog-only jobs read by flux_eventlog_parse (50-58) ---------
cat > "$MAP" <<'EOF'
45-jobs-A-default-final 0 jobs --no-header -o *
51-eventlog-failed-exit3 0 job info ƒ3qfZEQP eventlog
53-eventlog-timeout 0 job info ƒ3ytwF9R eventlog
56-eventlog-cancelled-held 0 job info ƒ4WGCXw5 eventlog
27-job-info-eventlog-pending 0 job info ƒ4Q6uX1y eventlog
EOF
st=$("$EXA" --json hpc status ƒ3qfZEQP ƒ3ytwF9R ƒ4WGCXw5 ƒ4Q6uX1y)
is "from the eventlog: FAILED 3, TIMEOUT 129 (reason timeout), CANCELED held, PENDING" \
    "$(py 'import json,sys
for j in json.loads(sys.argv[1]):
    print(j["state"], j["raw_state"], j["exit_code"], j["reason"], j["start"], j["elapsed_s"])' "$st")" \
"FAILED FAILED 3 None 2026-12-01T18:05:28Z 3
TIMEOUT TIMEOUT 129 timeout 2026-12-01T18:05:29Z 2
CANCELLED CANCELED None cancel None None
PENDING SCHED None None None None"

# why listed pending jobs wait: one flux jobs --json for them (99h, 99i)
cat > "$MAP" <<'EOF'
99h-jobs-exa-status-format-pending 0 jobs --no-header -o *
99i-jobs-json-pending 0 jobs --json ƒSCnns1 ƒVaVA4X ƒYvhXyh
EOF
: > "$LOG"
st=$("$EXA" --json hpc status ƒJsJLz3 ƒSCnns1 ƒVaVA4X ƒYvhXyh)
is "status of held, dependent and waiting jobs: the reasons hpc queue gives" \
    "$(py 'import json,sys
for j in json.loads(sys.argv[1]):
    print(j["job_id"], j["state"], j["raw_state"], j["reason"])' "$st")" \
"ƒJsJLz3 RUNNING RUN None
ƒSCnns1 PENDING SCHED held
ƒVaVA4X PENDING DEPEND depends:after-success=ƒJsJLz3
ƒYvhXyh PENDING SCHED None"
is "... asked in one flux jobs --json of the three pending ids" \
    "$(grep -c '^jobs --json ƒSCnns1 ƒVaVA4X ƒYvhXyh$' "$LOG"):$(grep -c '^jobs --json' "$LOG")" "1:1"

# ---- 6. wait ----------------------------------------------------------
cat > "$MAP" <<'EOF'
41-jobs-exa-status-format-final 0 jobs --no-header -o *
62-job-info-R-completed-cpu 0 job info ƒ3nbeib1 R
EOF
w=$("$EXA" hpc wait ƒ3nbeib1 2>&1)
is "hpc wait returns on COMPLETED" "$?:$(head -1 <<<"$w"):$(grep -c '^ƒ3nbeib1  COMPLETED  COMPLETED  0     2026-12-01T18:05:28Z  2026-12-01T18:05:34Z  00:00:05$' <<<"$w")" \
    "0:job ƒ3nbeib1 COMPLETED, waited 00:00:00:1"

# ---- 7. cancel (30) -----------------------------------------------------
# the moment of capture 22 (long running), then its cancel (30)
cat > "$MAP" <<'EOF'
22-jobs-exa-status-format-mixed 0 jobs --no-header -o *
26-job-info-eventlog-running 0 job info ƒ3uVwNg7 eventlog
30-cancel-long 0 cancel *ƒ3uVwNg7
EOF
: > "$LOG"
"$EXA" hpc cancel ƒ3uVwNg7 > "$EXA_T/cancel.out" 2>&1
is "hpc cancel of the running job runs flux cancel once and exits 0" \
    "$?:$(grep -c '^cancel .*ƒ3uVwNg7$' "$LOG")" "0:1"

# ---- 8. logs: the output file, never flux job attach (43, 44) ----------
cat > "$MAP" <<'EOF'
44-jobs-json-failed 0 jobs --json ƒ3qfZEQP
64-job-attach-failed 3 job attach *
EOF
printf 'ok on node0 cuda=none\n' > "$EXA_T/remote/$run1/ƒ3nbeib1.out"
: > "$LOG"
is "logs of an exa job: its --output file" "$("$EXA" hpc logs ƒ3nbeib1)" "ok on node0 cuda=none"
l=$("$EXA" hpc logs ƒ3qfZEQP 2>&1)
is "logs of a job without a job directory: flux-ID.out in its cwd, said clearly when absent (exit 1)" \
    "$?:$(head -1 <<<"$l")" \
    "1:exa: error: no output file for flux job 'ƒ3qfZEQP': '/scratch/fcap/jobs/flux-ƒ3qfZEQP.out' does not exist on 'localhost' (a batch job's output goes to its --output file)"
is "flux job attach is never run" "$(grep -c 'attach' "$LOG"):$(grep -c '^jobs --json ƒ3qfZEQP$' "$LOG")" "0:1"

# an id flux does not know: not found, as status and cancel say (99g)
cat > "$MAP" <<'EOF'
99g-jobs-json-unknown-id 1 jobs --json ƒ2222222
EOF
"$EXA" hpc logs ƒ2222222 --cluster f1 > "$EXA_T/o" 2> "$EXA_T/e"
is "hpc logs of an id flux does not know: exit 1, not found" "$?:$(cat "$EXA_T/e")" \
    "1:exa: error: job 'ƒ2222222' not found: flux jobs says it is unknown"

# ---- 9. queue (24, 90, 92): flux jobs -A --json --count=0 -------------
cat > "$MAP" <<'EOF'
90-jobs-A-json-count0-long-names 0 jobs -A --json --count=0
EOF
: > "$LOG"
q=$("$EXA" --json hpc queue --cluster f1)
is "hpc queue runs flux jobs -A --json --count=0, once" "$(cat "$LOG")" "jobs -A --json --count=0"
is "hpc queue: names whole (blanks, '|', 30 bytes), states, nodes, reasons as flux's INFO" \
    "$(py 'import json,sys
for j in json.loads(sys.argv[1])["jobs"]:
    print(j["job_id"], repr(j["name"]), j["state"], j["raw_state"], j["nodes"], j.get("reason"))' "$q")" \
"ƒg2r6KZ 'waiting' PENDING SCHED None None
ƒcTHpsH 'held one' PENDING SCHED None held
ƒkQMyWX 'dep' PENDING DEPEND None depends:after-success=ƒJvGKYj
ƒX5xRgs 'pipe|bar' RUNNING RUN 1 None
ƒT6gMj5 'exa-0123456789ab-worker-000001' RUNNING RUN 1 None
ƒNxWN5D 'two words here' RUNNING RUN 1 None
ƒJvGKYj 'train' RUNNING RUN 1 None"
# the default table of the same moment cuts names to ten columns: what
# exa read before (the provisioner never found its workers' names)
is "the default table (92) has only cut names" \
    "$("$EXA" debug parse flux-jobs < "$R/92-jobs-A-default-long-names.stdout" | py 'import json,sys
print(" ".join(sorted(j["name"] for j in json.load(sys.stdin)["jobs"] if j["name"].endswith("+"))))')" \
    "exa-01234+ two words+"
cat > "$MAP" <<'EOF'
94-jobs-A-json-count0-empty 0 jobs -A --json --count=0
EOF
is "an empty queue: no jobs, exit 0" "$("$EXA" --json hpc queue --cluster f1 | py 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')" 0
cat > "$MAP" <<'EOF'
24-jobs-A-default-mixed 0 jobs -A --json --count=0
EOF
"$EXA" hpc queue --cluster f1 > "$EXA_T/o" 2> "$EXA_T/e"
is "a table where JSON was asked for: exit 5 (scheduler), said so, nothing listed" \
    "$?:$(grep -c 'flux jobs --json printed no JSON' "$EXA_T/e"):$(wc -c < "$EXA_T/o")" "5:1:0"

# ---- 10. serve: totals from R, drain states from status (76-78, 88) -----
cat > "$MAP" <<'EOF'
76-resource-list-drained-and-draining 0 resource list
77-resource-status-drained-and-draining 0 resource status
78-resource-R-drained 0 resource R
01-flux-version 0 version
05-account-help 1 account --help
derived/88-jobs-A-observe-format-us 0 jobs -A --no-header --count=0 -o {id.f58}*{username}*{queue}*{status_abbrev}*{ncores}*{nodelist}
EOF
: > "$LOG"
m=$("$EXA" serve --once)
is "exa serve --once exits 0" "$?" 0
metric() { printf '%s\n' "$m" | sed -n "s/^$1{cluster=\"f1\"} //p"; }
is "flux_cpus_total 8 (R: 4 cores on each of 2 nodes)" "$(metric flux_cpus_total)" 8
is "flux_gpus_total 4 (R: 2 GPUs on each of 2 nodes)" "$(metric flux_gpus_total)" 4
is "drained and draining nodes are drain, none down (no flux_nodes_down series)" \
    "$(metric flux_nodes_drain):$(metric flux_nodes_down):$(metric flux_nodes_total)" "2::2"
is "the running job parses with its empty queue in place (RUNNING, 1 core, node0)" \
    "$(printf '%s\n' "$m" | grep -c '^flux_job_info{cluster="f1",job_id="ƒ2wh2kji7",user="root",account="unknown",partition="unknown",state="RUNNING"} 1$'):$(printf '%s\n' "$m" | grep -c '^flux_node_job{cluster="f1",job_id="ƒ2wh2kji7",node="node0"} 1$')" "1:1"
is "list, status, R, the allocated set's R and the observe jobs query, each once" \
    "$(sort "$LOG" | cut -d' ' -f1-4 | tr '\n' ';')" \
    "jobs -A --no-header --count=0;resource R;resource R --states=allocated;resource list;resource status;"

# the probe (hpc nodes) reads the same three outputs
n=$("$EXA" --json hpc nodes --cluster f1)
is "hpc nodes: drain states from flux resource status, cpus/gpus from R" \
    "$(py 'import json,sys
d = json.loads(sys.argv[1])
for n in d["nodes"]:
    print(n["name"], n["state"], n["raw_state"], n["cpus"], n["gpus"])
print(d["capabilities"]["total_cpus"], d["capabilities"]["total_gpus"], d["capabilities"]["version"])' "$n")" \
"node0 drain draining 4 2
node1 drain drained 4 2
8 4 0.88.0"
# preflight has the slot rule: one slot by default, GPUs split over slots
slots() { "$EXA" --json hpc preflight f1 "$@" | py 'import json,sys
for c in json.load(sys.stdin)["checks"]:
    if c["check"] == "slots": print(c["ok"], c["detail"])'; }
is "preflight without tasks or nodes: flux batch gets -n1" "$(slots)" "True flux batch gets -n1"
is "preflight --nodes 2 --gpus 2: -n2 with -g1 per slot" "$(slots --nodes 2 --gpus 2)" \
    "True flux batch gets -n2 with -g1 per slot (2 GPUs in all)"
is "preflight --ntasks 3 --gpus 4 fails its slots check" "$(slots --ntasks 3 --gpus 4)" \
    "False gpus 4 cannot be split over 3 flux slots: flux -g is per slot (ask a multiple of 3 GPUs, or ntasks dividing 4)"

# ---- 11. flux batch printing 4 KiB before the id records the job -------
python3 -c '
import sys
for i in range(64):
    print("flux-batch: warning: %03d %s" % (i, "x" * 38))
sys.stdout.write(open(sys.argv[1]).read())' "$R/11-batch-fail.stdout" > "$EXA_T/long-batch.stdout"
cat > "$MAP" <<EOF
$EXA_T/long-batch 0 batch *
EOF
out=$("$EXA" --json hpc submit "$EXA_T/job.sh" 2>&1)
is "4 KiB of output before the id: exit 0, the id recorded" \
    "$?:$(wc -c < "$EXA_T/long-batch.stdout"):$(jget job_id <<<"$out" 2>/dev/null)" "0:4106:ƒ3qfZEQP"
is "... and its row is in hpc jobs" \
    "$("$EXA" --json hpc jobs | py 'import json,sys; print(sum(j["job_id"] == "ƒ3qfZEQP" for j in json.load(sys.stdin)))')" 1

# ---- 12. debug parse reads exa's own 0x1F status query (22) ------------
is "debug parse flux-jobs of the status query: 9 jobs, states as flux said" \
    "$("$EXA" debug parse flux-jobs < "$R/22-jobs-exa-status-format-mixed.stdout" | py 'import json,sys
print(" ".join(j["state"] for j in json.load(sys.stdin)["jobs"]))')" \
    "COMPLETED FAILED RUNNING TIMEOUT RUNNING RUNNING PENDING PENDING PENDING"
is "debug parse flux-resource of flux resource status: STATEUP read as STATE + UP" \
    "$("$EXA" debug parse flux-resource < "$R/77-resource-status-drained-and-draining.stdout" | py 'import json,sys
d = json.load(sys.stdin)
print(" ".join("%s:%s:%s" % (n["name"], n["state"], n["raw_state"]) for n in d["nodes"]))')" \
    "node0:drain:draining node1:drain:drained"
# ---- 13. what jobs hold on each node: the allocated set (96-99f) -------
# a 1-core job on node0, a 1-core 1-GPU job on node1 (the list puts both
# nodes in its free and its allocated row), then node1 draining with its
# job, then no job (02, 96); R and status as 03 and 04 (the same moments)
flux_moment() { # LIST STATUS ALLOC JOBS
    cat > "$MAP" <<EOF
$1 0 resource list
$2 0 resource status
04-resource-R 0 resource R
$3 0 resource R --states=allocated
01-flux-version 0 version
05-account-help 1 account --help
$4 0 jobs -A --no-header --count=0 -o *
EOF
}
flux_moment 97-resource-list-cpu-node0-gpu-node1 03-resource-status \
    98-resource-R-allocated-cpu-node0-gpu-node1 99c-jobs-A-observe-count0-cpu-node0-gpu-node1
n=$("$EXA" --json hpc nodes --cluster f1 --save)
is "hpc nodes: both mixed; GPUs used 0 on node0 and 1 on node1 (the allocated set)" \
    "$(py 'import json,sys
for n in json.loads(sys.argv[1])["nodes"]:
    print(n["name"], n["state"], n["gpus"], n["gpus_used"])' "$n")" \
"node0 mixed 2 0
node1 mixed 2 1"
is "hpc gpus: node1's GPU 0 is the allocated set's (R gpu id 0), the others idle" \
    "$("$EXA" --json hpc gpus --cluster f1 | py 'import json,sys
for g in json.load(sys.stdin)["gpus"]:
    print(g["node"], g["index"], g["state"])')" \
"node0 0 idle
node0 1 idle
node1 0 allocated
node1 1 idle"
is "hpc capacity: 3 of 4 GPUs idle, as flux resource list's free row says" \
    "$("$EXA" --json hpc capacity | py 'import json,sys
for c in json.load(sys.stdin):
    if c["name"] == "f1": print(c["idle_gpus"], c["total_gpus"])')" "3 4"
gpn() { "$EXA" --json hpc preflight f1 "$@" | py 'import json,sys
for c in json.load(sys.stdin)["checks"]:
    if c["check"] == "gpus_per_node": print(c["ok"], c["detail"])'; }
is "preflight --ntasks 2 --gpus 4: two slots of 2 GPUs, one per node, fit" \
    "$(gpn --ntasks 2 --gpus 4)" \
    "True asked 2 slot(s) of 2 GPU(s), each on one node; the usable nodes hold 2 such slot(s) (largest node: 2 GPUs)"
is "preflight --qos on Flux says it is dropped at submit" \
    "$("$EXA" --json hpc preflight f1 --qos high | py 'import json,sys
for c in json.load(sys.stdin)["checks"]:
    if c["check"] == "qos": print(c["ok"], c["detail"])')" \
    "True Flux has no QOS: 'high' is dropped at submit (a Flux queue is --partition)"
is "preflight --ntasks 1 --gpus 4: one slot of 4 GPUs fits no node" \
    "$(gpn --ntasks 1 --gpus 4)" \
    "False asked 1 slot(s) of 4 GPU(s), each on one node; the usable nodes hold 0 such slot(s) (largest node: 2 GPUs)"
"$EXA" hpc place --gpus 2 > "$EXA_T/o" 2> "$EXA_T/e"
is "hpc place --gpus 2 fits (node0 has its 2 GPUs free)" "$?:$(grep -c 'chose flux@f1' "$EXA_T/o")" "0:1"
m=$("$EXA" serve --once)
is "serve: GPUs 1 allocated, 3 idle; CPUs 2 allocated, 6 idle" \
    "$(metric flux_gpus_alloc):$(metric flux_gpus_idle):$(metric flux_cpus_alloc):$(metric flux_cpus_idle)" "1:3:2:6"
is "serve: node_gres_used per node from the allocated set" \
    "$(printf '%s\n' "$m" | sed -n 's/^flux_node_gres_used{cluster="f1",node="\(node[01]\)".*} /\1=/p' | tr -d '\n')" "node0=0node1=1"
flux_moment 99d-resource-list-node1-draining 99e-resource-status-node1-draining \
    98-resource-R-allocated-cpu-node0-gpu-node1 99c-jobs-A-observe-count0-cpu-node0-gpu-node1
n=$("$EXA" --json hpc nodes --cluster f1)
is "hpc nodes: node1 draining with its job is in the list's allocated and down rows; its cores and GPUs are R's, counted once" \
    "$(py 'import json,sys
d = json.loads(sys.argv[1])
for n in d["nodes"]:
    print(n["name"], n["state"], n["cpus"], n["gpus"], n["gpus_used"])
print(d["capabilities"]["total_cpus"], d["capabilities"]["total_gpus"])' "$n")" \
"node0 mixed 4 2 0
node1 drain 4 2 1
8 4"
m=$("$EXA" serve --once)
is "node1 draining with its job: CPUs idle 3 (node0's free cores, as flux says), other 3 (node1's not held), alloc 2: 8 in all" \
    "$(metric flux_cpus_idle):$(metric flux_cpus_other):$(metric flux_cpus_alloc):$(metric flux_cpus_total)" "3:3:2:8"
is "... GPUs idle 2 (node0), other 1 (node1's not held), alloc 1: 4 in all" \
    "$(metric flux_gpus_idle):$(metric flux_gpus_other):$(metric flux_gpus_alloc):$(metric flux_gpus_total)" "2:1:1:4"
flux_moment 02-resource-list 03-resource-status 96-resource-R-allocated-none \
    99f-jobs-A-observe-count0-empty
m=$("$EXA" serve --once)
is "no job: CPUs 0 allocated and 8 idle are still said" \
    "$(metric flux_cpus_alloc):$(metric flux_cpus_idle):$(metric flux_gpus_idle)" "0:8:4"

# ---- 14. queues: without --partition preflight counts the default
# queue's nodes (99j-99l): flux puts such a job there --------------------
cat > "$MAP" <<'EOF'
99k-resource-list-queues 0 resource list
03-resource-status 0 resource status
99l-resource-R-queues 0 resource R
96-resource-R-allocated-none 0 resource R --states=allocated
99j-queue-list-n-o-queuem 0 queue list -n -o {queuem}
99p-queue-list-exa-format 0 queue list -n -o {queuem}?{submission}*
01-flux-version 0 version
05-account-help 1 account --help
EOF
pf() { "$EXA" --json hpc preflight f1 "$@" | py 'import json,sys
for c in json.load(sys.stdin)["checks"]:
    if c["check"] in ("partition", "gpus_per_node"): print(c["check"], c["ok"], c["detail"])'; }
is "no --partition: the default queue batch (one node) holds one slot of 2 GPUs, not two" \
    "$(pf --ntasks 2 --gpus 4)" \
"partition True none asked: the default queue 'batch' (flux queue list, state UP), 1 node(s)
gpus_per_node False asked 2 slot(s) of 2 GPU(s), each on one node; the usable nodes hold 1 such slot(s) (largest node: 2 GPUs)"
is "--partition debug: that queue's node, its 2 GPUs" \
    "$(pf --partition debug --ntasks 1 --gpus 2)" \
"partition True 'debug' exists (state UP)
gpus_per_node True asked 1 slot(s) of 2 GPU(s), each on one node; the usable nodes hold 1 such slot(s) (largest node: 2 GPUs)"
is "--partition nope: no such queue" "$(pf --partition nope --ntasks 1)" \
    "partition False 'nope' does not exist"
# the default queue stopped (99r: batch* enabled, stopped; debug disabled;
# an instance of the same two nodes and queues, limits aside): jobs would
# wait there, and the named one takes none
sed -i 's/^99p-queue-list-exa-format /99r-queue-list-exa-format-disabled-stopped /' "$MAP"
is "a stopped default queue fails the partition check, naming its state" \
    "$(pf --ntasks 1 | head -1)" \
    "partition False none asked: the default queue 'batch' (flux queue list, state DOWN), 1 node(s)"
is "a disabled queue asked by name fails it too" \
    "$(pf --partition debug --ntasks 1 | head -1)" \
    "partition False 'debug' exists (state DRAIN)"
sed -i 's/^99r-queue-list-exa-format-disabled-stopped /99p-queue-list-exa-format /' "$MAP"
# the queues are the partitions detection reports (99p: debug, batch*)
is "hpc detect: each queue a partition, the default marked, state UP" \
    "$("$EXA" --json hpc detect | py 'import json,sys
c = json.load(sys.stdin)["capabilities"]
for p in c["partitions"]:
    print(p["name"], p["default"], p["state"], p["max_time"], p["total_nodes"], p["total_cpus"])
print(len([n for n in c["notes"] if "queue" in n]))')" \
"debug False UP UNLIMITED 1 4
batch True UP UNLIMITED 1 4
0"

done_testing
