#!/bin/bash
# Dial-back workers without Slurm (shared/WORKERS.md §13, the parts that
# need no batch system): `exa serve --worker-listen` on 127.0.0.1:0 and
# `exa worker` started by hand with `exa worker token`. Timers: heartbeat
# 1 s, lease TTL 3 s, long-poll 2 s.
#   happy path: result, artifact with its sha256, idle exit 0, events;
#   T6  worker killed -9 mid-task: the shim takes the task down within 2 s,
#       the lease expires, attempt 2 runs on another worker, one result;
#   T7  a SIGSTOPped worker past the TTL: attempt 2 elsewhere; SIGCONT:
#       410, it kills its task and rejoins (new incarnation, same id);
#   T8  engine killed -9 mid-task and restarted on the same port: the same
#       session carries on, the task completes with one attempt; T8b the
#       engine away past --engine-lost: exit 75, cause restart, no charge;
#   T9  a dropped reply on results: retried, answered duplicate, one row;
#       a result meeting 503s as SIGTERM comes: still retried and recorded
#       once, no rejoin; SIGHUP ignored; 503s bounded by --engine-lost;
#   T10 wrong worker, flipped MAC, replayed, expired, rate limit;
#   T11 the token is in no argv, environment, log or event;
#   T15 200 noop tasks, capacity 4: never more than 4 leases at once;
#       with sqlite_busy:8, 503 + Retry-After and every task done once;
#   T16 protocol 99: exit 64, and the engine serves the next worker;
#   a black-hole worker drained, its tasks given back; cancel of a
#   running task, SIGTERM drain, refusal to run as root, and
#   bad `exa task submit` input.
. "$(dirname "$0")/lib.sh"
exa_test_env

export EXAMLOPS_WORKER_HEARTBEAT_S=1 EXAMLOPS_WORKER_LEASE_TTL_S=3 \
    EXAMLOPS_WORKER_LONGPOLL_S=2 EXAMLOPS_WORKER_RESTART_GRACE_S=2 \
    EXAMLOPS_WORKER_JOIN_SKEW_S=1
DB=$EXAMLOPS_DB
SERVE_PID=
WPIDS=()
cleanup() { # every background child, also those not in WPIDS, bounded
    local p
    for p in "${WPIDS[@]}" $SERVE_PID $(jobs -p); do kill -9 "$p" 2>/dev/null; done
    for p in $(jobs -p); do wait_pid "$p" 5 2>/dev/null; done
}
trap 'cleanup; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT

# start_serve [PORT]: exa serve in the background; sets SERVE_PID, MPORT
# (/metrics), PORT (workers) and URL. A serve that does not come up within
# 30 s fails the test at once, with its log, instead of leaving every
# worker below retrying an engine that is not there.
start_serve() {
    local want=${1:-0} i
    : >"$T/serve.log"
    "$EXA" serve --listen 127.0.0.1:0 --interval 3600 \
        --worker-listen "127.0.0.1:$want" >>"$T/serve.log" 2>&1 &
    SERVE_PID=$!
    PORT=
    for i in $(seq 300); do
        PORT=$(sed -n 's/.*worker API on port \([0-9]*\).*/\1/p' "$T/serve.log")
        [ -n "$PORT" ] && break
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.1
    done
    MPORT=$(sed -n 's/.*console on port \([0-9]*\).*/\1/p' "$T/serve.log")
    if [ -z "$PORT" ]; then
        ok "exa serve starts (its log follows)" false
        diag "$(cat "$T/serve.log")"
        done_testing
    fi
    URL=http://127.0.0.1:$PORT
}

# worker ID [ARGS...]: mint a token and run a worker in the background
# (stderr to $T/ID.log); sets WPID.
worker() {
    local id=$1
    shift
    "$EXA" worker token --worker-id "$id" --ttl 60 >"$T/$id.tok"
    "$EXA" worker --url "$URL" --worker-id "$id" --join-token-stdin \
        --allow-root --max-idle 2 --engine-lost 30 "$@" <"$T/$id.tok" 2>"$T/$id.log" &
    WPID=$!
    WPIDS+=("$WPID")
}

sql() { sqlite3 "$DB" "$@"; }


start_serve
like "$(cat "$T/serve.log")" "worker API on port [0-9]+" "exa serve starts the worker listener"

# ---- bad input to `exa task submit` and `exa worker`
run_exa task submit --cpus 2
is "$RC" 2 "submit without a command is a usage error"
run_exa task submit --env NOEQ -- true
is "$RC" 2 "submit --env without '=' is a usage error"
run_exa task submit --cwd relative -- true
is "$RC" 2 "submit --cwd relative is refused"
like "$ERR" "'cwd' must be an absolute path" "and says why"
run_exa worker --url "$URL" --worker-id w0
is "$RC" 2 "a worker without --join-token-stdin is refused"
if [ "$(id -u)" = 0 ]; then
    run_exa worker --url "$URL" --worker-id w0 --join-token-stdin </dev/null
    is "$RC" 2 "a worker refuses to run as root without --allow-root"
    like "$ERR" "refuses to run as root" "naming the reason"
fi

# ---- an engine that never answers: SIGTERM still ends the worker (CI
# stop 17 hung here when the worker sat in its registration retries)
"$EXA" worker token --worker-id w0 --ttl 60 >"$T/w0.tok"
"$EXA" worker --url "http://127.0.0.1:1" --worker-id w0 --join-token-stdin \
    --allow-root <"$T/w0.tok" 2>"$T/w0.log" &
W0=$!
wait_for 10 grep -q "Couldn't connect" "$T/w0.log"
kill -TERM "$W0"
wait_pid "$W0" 3
is "$?" 0 "SIGTERM during the registration retries: exit 0 within 3 s"
like "$(cat "$T/w0.log")" "stopped by a signal before registering" "saying why"
"$EXA" worker --url "http://127.0.0.1:1" --worker-id w0 --join-token-stdin \
    --allow-root --engine-lost 1 <"$T/w0.tok" 2>"$T/w0.log"
is "$?" 75 "an engine away past --engine-lost: exit 75 (EX_TEMPFAIL)"
like "$(cat "$T/w0.log")" "unreachable for 1 s" "naming the engine and the bound"

# ---- happy path with an artifact
run_exa task submit --artifact out.txt -- sh -c 'printf hello > out.txt; echo ran'
is "$RC" 0 "submit queues a task"
T1=$OUT
worker w1
wait_pid "$WPID"
is "$?" 0 "the worker exits 0 after --max-idle without work"
run_exa --json task show "$T1"
json_ok "the task is done with attempt 1" '.state == "done" and .attempt == 1'
json_ok "its stdout tail is kept" '.result.stdout_tail == "ran\n"'
want=$(printf hello | sha256sum | cut -d' ' -f1)
json_ok "the artifact is recorded with the sha256 of its bytes" \
    --arg h "$want" '.result.artifacts[0].sha256 == $h and .result.artifacts[0].size == 5'
stored=$(find "$T/db/artifacts/$T1/1" -name out.txt -exec sha256sum {} + | cut -d' ' -f1)
is "$stored" "$want" "the stored file hashes to the same value"
is "$(sql "select group_concat(kind, ' ') from (select kind from worker_events where worker_id = 'w1' order by id)")" \
    "worker_attached worker_exited" "events: attached, then exited"
is "$(sql "select json_extract(detail, '$.reason') from worker_events where kind = 'worker_exited' and worker_id = 'w1'")" \
    idle "the exit reason is idle"
like "$(cat "$T/w1.log")" "registered as 'w1'" "the worker logs its registration"

# ---- T11: token hygiene while a worker runs
run_exa task submit -- sleep 3
worker w2
sleep 1
tok=$(cat "$T/w2.tok")
ps -eo args >"$T/ps.txt"
is "$(grep -cF -- "${tok##*.}" "$T/ps.txt")" 0 "the token is in no process's argv"
isnt "$(tr '\0' '\n' </proc/"$WPID"/environ | grep -cF -- "$tok")" 1 \
    "the token is not in the worker's environment"
wait_pid "$WPID"
ok "the token is in neither log" bash -c "! grep -qF -- '$tok' '$T/serve.log' '$T/w2.log'"
ok "the token is in no event" bash -c "! sqlite3 '$DB' 'select * from worker_events' | grep -qF -- '${tok##*.}'"
ok "platform.db holds no session token" bash -c "! sqlite3 '$DB' .dump | grep -q exs_"

# ---- T10: refused tokens
"$EXA" worker token --worker-id w3 --ttl 60 >"$T/w3.tok"
"$EXA" worker --url "$URL" --worker-id w4 --join-token-stdin --allow-root --engine-lost 30 \
    <"$T/w3.tok" >/dev/null 2>"$T/w4.log"
is "$?" 1 "a token for w3 presented as w4 is refused (exit 1)"
like "$(cat "$T/w4.log")" "401 wrong_worker" "as wrong_worker"
sed 's/.$/\n/' "$T/w3.tok" | awk '{ c = substr($0, length($0) - 2, 1); r = (c == "A") ? "B" : "A"; print substr($0, 1, length($0) - 3) r substr($0, length($0) - 1) }' >"$T/w3.bad"
"$EXA" worker --url "$URL" --worker-id w3 --join-token-stdin --allow-root --engine-lost 30 \
    <"$T/w3.bad" >/dev/null 2>"$T/w3.log"
is "$?" 1 "a token with a flipped MAC byte is refused"
like "$(cat "$T/w3.log")" "401 bad_signature" "as bad_signature"
"$EXA" worker --url "$URL" --worker-id w3 --join-token-stdin --allow-root --engine-lost 30 \
    --max-idle 0 <"$T/w3.tok" >/dev/null 2>&1
is "$?" 0 "the real token registers once"
"$EXA" worker --url "$URL" --worker-id w3 --join-token-stdin --allow-root --engine-lost 30 \
    <"$T/w3.tok" >/dev/null 2>"$T/w3.log"
is "$?" 1 "the same token again is refused"
like "$(cat "$T/w3.log")" "401 replayed" "as replayed"
"$EXA" worker token --worker-id w5 --ttl 1 >"$T/w5.tok"
sleep 2.2
"$EXA" worker --url "$URL" --worker-id w5 --join-token-stdin --allow-root --engine-lost 30 \
    <"$T/w5.tok" >/dev/null 2>"$T/w5.log"
like "$(cat "$T/w5.log")" "401 expired" "a token past its lifetime is refused as expired"
is "$(sql "select count(*) from worker_events where kind = 'token_refused'")" 4 \
    "each refusal is an event"

# ---- T16: version skew
"$EXA" worker token --worker-id w6 --ttl 60 >"$T/w6.tok"
"$EXA" worker --url "$URL" --worker-id w6 --join-token-stdin --allow-root --engine-lost 30 \
    --protocol 99 <"$T/w6.tok" >/dev/null 2>"$T/w6.log"
is "$?" 64 "a worker speaking protocol 99 gets 426 and exits 64"
run_exa task submit --noop
worker w7
wait_pid "$WPID"
is "$?" 0 "the engine keeps serving the next worker"

# ---- T15: back-pressure
run_exa task submit --noop --count 200
worker w8 --capacity 4
wait_pid "$WPID"
is "$(sql "select count(*) from tasks where state = 'done' and id in (select task_id from task_attempts where worker_id = 'w8')")" \
    200 "200 noop tasks done by one worker"
is "$(sql "select count(*) from task_results r join task_attempts a using (task_id, attempt) where a.worker_id = 'w8'")" \
    200 "with exactly one result each"
maxc=$(sql "select max(c) from (select (select count(*) from task_attempts b where b.worker_id = 'w8' and b.leased_at <= a.leased_at and b.ended_at > a.leased_at) c from task_attempts a where a.worker_id = 'w8')")
ok "never more than 4 leases held at once (max $maxc)" test "$maxc" -le 4
posts=$(curl -s "http://127.0.0.1:$MPORT/metrics" | sed -n 's/^exa_task_result_posts_total \([0-9]*\)$/\1/p')
ok "results done together go in one request (200 results in $posts posts)" \
    test "${posts:-200}" -lt 200

# ---- /metrics of exa serve carries the workers' families, no token
curl -s "http://127.0.0.1:$MPORT/metrics" >"$T/metrics.txt"
is "$(sed -n 's/^exa_tasks{state="done"} //p' "$T/metrics.txt")" \
    "$(sql "select count(*) from tasks where state = 'done'")" "exa_tasks{state=done} agrees with platform.db"
ok "registrations are counted by result" grep -q '^exa_worker_registrations_total{result="wrong_worker"} 1$' "$T/metrics.txt"
ok "so are lease expiries by cause" grep -q '^exa_task_lease_expired_total{cause="dead"} ' "$T/metrics.txt"
ok "no join token in /metrics" bash -c "! grep -qF -- '${tok##*.}' '$T/metrics.txt'"
if command -v promtool >/dev/null; then
    ok "promtool accepts the exposition" promtool check metrics <"$T/metrics.txt"
fi

# ---- T9: a lost reply on results
kill "$SERVE_PID"
wait_pid "$SERVE_PID" 2>/dev/null
EXAMLOPS_WORKER_FAULT=drop_reply:results:1 start_serve
run_exa task submit -- echo nine
T9=$OUT
worker w9
wait_pid "$WPID"
run_exa --json task show "$T9"
json_ok "after a dropped answer the task is done" '.state == "done" and .attempt == 1'
[ "$(jq -r .state <<<"$OUT")" = done ] || diag "$(cat "$T/w9.log" "$T/serve.log")"
is "$(sql "select count(*) from task_results where task_id = $T9")" 1 "one row in results"
kill "$SERVE_PID"
wait_pid "$SERVE_PID" 2>/dev/null

# ---- a result posted just as SIGTERM comes: its 503s are still retried
# (up to 20 s after the signal) and it is recorded once; an external SIGHUP
# is ignored; after the signal the worker never registers again
EXAMLOPS_WORKER_FAULT=busy_reply:results:2 start_serve
run_exa task submit -- sh -c 'sleep 1; echo twenty'
T20=$OUT
worker w21 --max-idle 30
wait_for 10 grep -q "task $T20 attempt 1 started" "$T/w21.log"
kill -HUP "$WPID"
sleep 0.3
ok "an external SIGHUP does not stop the worker" kill -0 "$WPID"
like "$(cat "$T/w21.log")" "SIGHUP ignored" "and it says so"
wait_for 10 grep -q "results: 503" "$T/w21.log"
kill -TERM "$WPID"
wait_pid "$WPID" 30
is "$?" 0 "SIGTERM while the result meets 503s: the worker exits 0"
like "$(cat "$T/w21.log")" "task $T20 attempt 1 reported: exit 0" \
    "after retrying the 503s past the signal"
run_exa --json task show "$T20"
json_ok "the task is done with its one attempt (not run again)" \
    '.state == "done" and .attempt == 1'
[ "$(jq -r .state <<<"$OUT")" = done ] || diag "$(cat "$T/w21.log")"
is "$(sql "select count(*) from task_results where task_id = $T20")" 1 "one row in results"
is "$(grep -c "registered as" "$T/w21.log")" 1 "no registration after the signal"
kill "$SERVE_PID"
wait_pid "$SERVE_PID" 2>/dev/null

# ---- 503s are retried for --engine-lost, not forever
EXAMLOPS_WORKER_FAULT=busy_reply:register:1000 start_serve
worker w22 --engine-lost 3
wait_pid "$WPID" 20
is "$?" 75 "an engine busy (503) past --engine-lost: exit 75"
like "$(cat "$T/w22.log")" "503 the engine's database is busy" "after retrying the 503s"
kill "$SERVE_PID"
wait_pid "$SERVE_PID" 2>/dev/null

# ---- T15b: a locked database answers 503 + Retry-After; work goes on
EXAMLOPS_WORKER_FAULT=sqlite_busy:8 start_serve
run_exa task submit --noop --count 40
worker w20 --capacity 4
wait_pid "$WPID" 120
is "$?" 0 "with sqlite_busy:8 the worker still ends idle"
is "$(sql "select count(*) from tasks where state = 'done' and id in (select task_id from task_attempts where worker_id = 'w20')")" \
    40 "all 40 tasks are done"
is "$(sql "select count(*) from task_results r join task_attempts a using (task_id, attempt) where a.worker_id = 'w20'")" \
    40 "with exactly one result each"
like "$(cat "$T/w20.log")" "503 the engine's database is busy, retrying in [0-9]+ s" \
    "the worker saw 503 with Retry-After and said so"
ok "the 503 names no engine path" bash -c "! grep -q platform.db '$T/w20.log'"
like "$(cat "$T/serve.log")" "503 \\(database busy\\): database '[^']*platform.db': database is locked" \
    "exa serve logs the cause, with the database path"
nbusy=$(grep -c "503 (database busy)" "$T/serve.log")
ok "at most once every 10 s ($nbusy lines)" test "$nbusy" -le 3
kill "$SERVE_PID"
wait_pid "$SERVE_PID" 2>/dev/null
start_serve

# ---- cancel of a running task
run_exa task submit -- sleep 37.123
TC=$OUT
worker w10
wait_for 5 sh -c "sqlite3 '$DB' \"select state from tasks where id = $TC\" | grep -q leased"
sleep 0.5
run_exa task cancel "$TC"
is "$RC" 0 "cancel of a leased task"
wait_for 5 sh -c "! pgrep -f '[s]leep 37.123' >/dev/null"
is "$?" 0 "the worker kills the cancelled task at its next heartbeat"
wait_pid "$WPID"
is "$?" 0 "and then exits idle"
run_exa --json task attempts "$TC"
json_ok "the attempt is revoked (cancelled)" '.attempts[0].outcome == "revoked" and .attempts[0].cause == "cancelled"'

# ---- SIGTERM drains
run_exa task submit -- sleep 31.456
TS=$OUT
worker w11 --max-idle 30
wait_for 5 sh -c "pgrep -f '[s]leep 31.456' >/dev/null"
kill -TERM "$WPID"
wait_pid "$WPID"
is "$?" 0 "SIGTERM: the worker kills its task, says bye and exits 0"
wait_for 2 sh -c "! pgrep -f '[s]leep 31.456' >/dev/null"
is "$?" 0 "no task process is left (within 2 s)"
is "$(sql "select json_extract(detail, '$.reason') from worker_events where kind = 'worker_exited' and worker_id = 'w11'")" \
    signal "the exit reason is signal"
run_exa --json task show "$TS"
json_ok "the task goes back to the queue without using its budget" '.state == "queued" and .infra_failures == 0'
run_exa task cancel "$TS"

# ---- black hole (WORKERS.md 6.3): five tasks that fail at once with exit
# 127 on w12 drain it; the five go back to the queue without using their
# budget, and attempt 2 of each completes on the next worker
BH=()
for i in 1 2 3 4 5; do
    run_exa task submit -- sh -c '[ "$EXA_TASK_ATTEMPT" = 1 ] && exit 127; exit 0'
    BH+=("$OUT")
done
worker w12 --max-idle 30
wait_pid "$WPID" 20
is "$?" 0 "a black-hole worker is drained and exits 0"
is "$(sql "select count(*) from worker_events where kind = 'worker_black_hole' and worker_id = 'w12'")" 1 \
    "one worker_black_hole event names it"
is "$(sql "select json_extract(detail, '$.requeued') from worker_events where kind = 'worker_black_hole' and worker_id = 'w12'")" 5 \
    "and says the five tasks were given back"
is "$(sql "select count(*) from tasks where id in ($(IFS=,; echo "${BH[*]}")) and state = 'queued' and infra_failures = 0 and exit_code is null")" 5 \
    "the five are queued again, their budget untouched"
like "$(curl -s "http://127.0.0.1:$MPORT/metrics")" 'exa_worker_black_holes_total 1' \
    "exa_worker_black_holes_total counts it"
worker w13
wait_pid "$WPID" 20
is "$?" 0 "the next worker runs them and exits idle"
is "$(sql "select count(*) from tasks where id in ($(IFS=,; echo "${BH[*]}")) and state = 'done' and done_attempt = 2")" 5 \
    "attempt 2 of each is done"
is "$(sql "select count(*) from task_attempts where task_id in ($(IFS=,; echo "${BH[*]}")) and attempt = 1 and outcome = 'failed' and cause = 'black_hole'")" 5 \
    "attempt 1 of each stays failed, cause black_hole"

# ---- T6: kill -9 the worker mid-task
run_exa task submit -- sh -c 'echo "$$ $EXA_TASK_ATTEMPT" >> '"$T"'/marker; [ "$EXA_TASK_ATTEMPT" = 1 ] && sleep 20; exit 0'
T6=$OUT
worker w12 --max-idle 30
wait_for 5 test -s "$T/marker"
tpid=$(cut -d' ' -f1 "$T/marker")
kill -9 "$WPID"
wait_for 2 sh -c "! kill -0 $tpid 2>/dev/null"
is "$?" 0 "within 2 s of kill -9 of the worker its task is gone (the shim's death signal)"
# w13 must outlive the 3 s TTL that declares w12 lost: it starts at once
# now that the shim reaps its task, and an idle limit of 2 s would end it
# before the task is queued again
worker w13 --max-idle 8
wait_for 30 sh -c "sqlite3 '$DB' \"select state from tasks where id = $T6\" | grep -q done"
is "$?" 0 "after the TTL attempt 2 runs on another worker and completes"
run_exa --json task attempts "$T6"
json_ok "attempt 1 lost (dead), attempt 2 ok" \
    '.attempts[0].outcome == "lost" and .attempts[0].cause == "dead" and .attempts[1].outcome == "ok" and .attempts[1].worker == "w13"'
is "$(sql "select count(*) from task_results where task_id = $T6")" 1 "one result"
is "$(wc -l <"$T/marker")" 2 "the marker shows two runs (at-least-once, on purpose)"
wait_pid "$WPID"

# ---- T7: a stopped worker is declared lost; after SIGCONT it is told 410,
# kills its stale attempt and rejoins with its session
run_exa task submit -- sh -c 'echo "$$" >> '"$T"'/marker7; [ "$EXA_TASK_ATTEMPT" = 1 ] && exec sleep 29.789; exit 0'
T7=$OUT
worker w15 --max-idle 3
W15=$WPID
wait_for 5 test -s "$T/marker7"
kill -STOP "$W15"
worker w16 --max-idle 6
wait_for 15 sh -c "sqlite3 '$DB' \"select state from tasks where id = $T7\" | grep -q done"
is "$?" 0 "while w15 is stopped, attempt 2 runs on w16 and completes"
kill -CONT "$W15"
wait_for 8 sh -c "[ \$(sqlite3 '$DB' \"select count(*) from worker_events where kind = 'worker_rejoined' and worker_id = 'w15'\") = 1 ]"
is "$?" 0 "after SIGCONT w15 gets 410 and rejoins"
is "$(sql "select incarnation from workers where id = 'w15'")" 2 "with a new incarnation of the same id"
wait_for 3 sh -c "! pgrep -f '[s]leep 29.789' >/dev/null"
is "$?" 0 "and kills the attempt it no longer owns"
run_exa --json task attempts "$T7"
json_ok "attempt 1 lost, attempt 2 ok, one result" '.attempts[0].outcome == "lost" and .attempts[1].outcome == "ok"'
is "$(sql "select done_attempt from tasks where id = $T7")" 2 "the recorded result is attempt 2's"
wait_pid "$W15"
is "$?" 0 "w15 then exits idle"
wait_pid "$WPID"

# ---- T8: kill -9 the engine mid-task, restart on the same port
run_exa task submit -- sleep 3
T8=$OUT
worker w14 --max-idle 1
wait_for 5 sh -c "sqlite3 '$DB' \"select state from tasks where id = $T8\" | grep -q leased"
kill -9 "$SERVE_PID"
wait_pid "$SERVE_PID" 2>/dev/null
sleep 1
start_serve "$PORT"
wait_pid "$WPID"
is "$?" 0 "the worker rides out the engine restart and exits idle"
run_exa --json task show "$T8"
json_ok "the task completes with one attempt" '.state == "done" and .attempt == 1'
is "$(sql "select count(*) from worker_events where worker_id = 'w14' and kind in ('worker_attached', 'worker_rejoined')")" \
    1 "no re-registration"

# ---- T8b: the engine stays away past the worker's --engine-lost: the
# worker exits 75; after the restart its lease is lost with cause restart,
# the task runs again once, and that loss is not charged to its budget
run_exa task submit -- sh -c 'echo "$EXA_TASK_ATTEMPT" >> '"$T"'/marker8; [ "$EXA_TASK_ATTEMPT" = 1 ] && exec sleep 30.321; exit 0'
T8B=$OUT
worker w17 --engine-lost 3 --max-idle 30
W17=$WPID
wait_for 5 test -s "$T/marker8"
kill -9 "$SERVE_PID"
wait_pid "$SERVE_PID" 2>/dev/null
wait_pid "$W17" 30
is "$?" 75 "an engine away past --engine-lost: the worker exits 75 (EX_TEMPFAIL)"
wait_for 3 sh -c "! pgrep -f '[s]leep 30.321' >/dev/null"
is "$?" 0 "and takes its task down with it"
start_serve "$PORT"
worker w18 --max-idle 10
wait_for 25 sh -c "sqlite3 '$DB' \"select state from tasks where id = $T8B\" | grep -q done"
is "$?" 0 "after the restart grace the task runs again and completes"
run_exa --json task attempts "$T8B"
json_ok "attempt 1 lost with cause restart, attempt 2 ok" \
    '.attempts[0].outcome == "lost" and .attempts[0].cause == "restart" and .attempts[1].outcome == "ok"'
run_exa --json task show "$T8B"
json_ok "the loss is not charged to the infrastructure budget" '.infra_failures == 0'
is "$(wc -l <"$T/marker8")" 2 "two runs in all"
wait_pid "$WPID"

done_testing
