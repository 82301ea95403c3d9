#!/bin/bash
# The worker listener over HTTPS with a pinned key (shared/WORKERS.md
# §5.2), on loopback, no Slurm: `exa serve --worker-tls-cert/--worker-tls-key`
# with the fixture pairs of tests/fixtures/tls/ (README.md there).
#   the pin serve logs and records is openssl's; a worker with that pin
#   runs tasks to done; a wrong pin, or no pin against the self-signed
#   key: exit 1 at once naming the cause, no lease taken; a malformed
#   --pin: exit 2; a plain-HTTP worker listener beyond loopback refused
#   before anything binds (203.0.113.7, TEST-NET-3); unreadable, non-PEM
#   and mismatched certificate/key files: one line naming the file, exit 3,
#   nothing listening; http:// at the TLS listener and https:// at a
#   plain one: exit 1 at once naming the scheme the listener speaks, no
#   lease (a port with no listener is still an outage); `exa provision status` shows the pin and whether
#   each provisioner's "pin" matches, and the job script carries --pin.
. "$(dirname "$0")/lib.sh"
exa_test_env

export EXAMLOPS_WORKER_HEARTBEAT_S=1 EXAMLOPS_WORKER_LEASE_TTL_S=3 \
    EXAMLOPS_WORKER_LONGPOLL_S=2
DB=$EXAMLOPS_DB
FX=$(cd "$(dirname "$0")/../fixtures/tls" && pwd)
PIN_A=$(cat "$FX/a-pin.txt")
PIN_B=$(cat "$FX/b-pin.txt")
SERVE_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -9 "$SERVE_PID" 2>/dev/null
    wait 2>/dev/null
}
trap 'cleanup; rm -rf "$T"' EXIT

sql() { sqlite3 "$DB" "$@"; }
unlike() { # unlike TEXT ERE NAME
    if grep -Eq -- "$2" <<<"$1"; then
        _tap_result 0 "$3"
        diag "'$1' matches /$2/"
    else
        _tap_result 1 "$3"
    fi
}

# the pin as openssl computes it, against the committed value
if command -v openssl >/dev/null; then
    got="sha256//$(openssl x509 -in "$FX/a-cert.pem" -pubkey -noout |
        openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)"
    is "$got" "$PIN_A" "the fixture's pin is openssl's"
fi

# ---- refusals before anything listens
run_exa serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 203.0.113.7:0
is "$RC" 2 "a plain-HTTP worker listener beyond loopback is refused"
like "$ERR" "refusing to serve workers on '203.0.113.7:0' beyond loopback without TLS" \
    "naming the address and the options"
is "$(printf '%s\n' "$ERR" | grep -c .)" 1 "in one line"
unlike "$OUT$ERR" "Serving" "and nothing was started"
run_exa serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 127.0.0.1:0 \
    --worker-tls-cert "$T/nope.pem" --worker-tls-key "$FX/a-key.pem"
is "$RC" 3 "a missing certificate file: exit 3"
like "$ERR" "--worker-tls-cert '$T/nope.pem': No such file" "naming the file"
unlike "$OUT" "Serving" "nothing started"
printf 'not a certificate\n' >"$T/junk.pem"
run_exa serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 127.0.0.1:0 \
    --worker-tls-cert "$T/junk.pem" --worker-tls-key "$FX/a-key.pem"
is "$RC" 3 "a file that is not PEM: exit 3"
like "$ERR" "--worker-tls-cert '$T/junk.pem': expected a PEM file" "naming the file"
run_exa serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 127.0.0.1:0 \
    --worker-tls-cert "$FX/a-key.pem" --worker-tls-key "$FX/a-key.pem"
is "$RC" 3 "a key given as the certificate: exit 3"
like "$ERR" "--worker-tls-cert '$FX/a-key.pem': not a PEM certificate" "naming the file"
run_exa serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 127.0.0.1:0 \
    --worker-tls-cert "$FX/a-cert.pem" --worker-tls-key "$FX/b-key.pem"
is "$RC" 3 "a key of another certificate: exit 3"
like "$ERR" "--worker-tls-key '$FX/b-key.pem': does not match the certificate" \
    "naming the key file"
if [ "$(id -u)" != 0 ]; then
    cp "$FX/a-key.pem" "$T/unreadable.pem"
    chmod 000 "$T/unreadable.pem"
    run_exa serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 127.0.0.1:0 \
        --worker-tls-cert "$FX/a-cert.pem" --worker-tls-key "$T/unreadable.pem"
    is "$RC" 3 "an unreadable key file: exit 3"
    like "$ERR" "--worker-tls-key '$T/unreadable.pem': Permission denied" "naming the file"
fi
run_exa serve --worker-listen 127.0.0.1:0 --worker-tls-cert "$FX/a-cert.pem"
is "$RC" 2 "--worker-tls-cert without --worker-tls-key: usage error"
run_exa worker --url https://127.0.0.1:1 --worker-id w0 --pin sha256//short= \
    --join-token-stdin --allow-root </dev/null
is "$RC" 2 "a malformed --pin: exit 2"
like "$ERR" "--pin 'sha256//short=': expected sha256//BASE64" "naming the option"

# ---- https serve with a fixture's key
: >"$T/serve.log"
"$EXA" serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 127.0.0.1:0 \
    --worker-tls-cert "$FX/a-cert.pem" --worker-tls-key "$FX/a-key.pem" \
    >>"$T/serve.log" 2>&1 &
SERVE_PID=$!
PORT=$(wait_worker_port "$T/serve.log" "$SERVE_PID")
if [ -z "$PORT" ]; then
    ok "exa serve starts over https (its log follows)" false
    diag "$(cat "$T/serve.log")"
    done_testing
fi
URL=https://127.0.0.1:$PORT
like "$(cat "$T/serve.log")" \
    "worker listener on 127.0.0.1:0 over https \\(engine [0-9a-f]{8}, pin $(printf '%s' "$PIN_A" | sed 's/[+/]/\\&/g')\\)" \
    "serve logs the listener, https, the engine and the pin"
is "$(sql "select value from engine_kv where key = 'worker_pin'")" "$PIN_A" \
    "the engine records its pin"
if command -v curl >/dev/null; then
    v=$(curl -s --tlsv1.1 --tls-max 1.1 -k -o /dev/null -w '%{http_code}' "$URL/v1/ping" 2>/dev/null)
    is "$v" "000" "TLS 1.1 is refused"
    v=$(curl -s -k --tlsv1.2 -o /dev/null -w '%{http_code}' "$URL/v1/ping")
    like "$v" "^[1-5][0-9][0-9]$" "TLS 1.2 answers"
    v=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/v1/ping")
    unlike "$v" "^200$" "plain HTTP gets no answer from the TLS listener"
fi

leases() { sql "select count(*) from task_attempts"; }

run_exa task submit -- sh -c 'echo over-tls'
is "$RC" 0 "a task is queued"
T1=$OUT

# a wrong pin: exit 1 at once, no lease
"$EXA" worker token --worker-id wbad --ttl 60 >"$T/wbad.tok"
start=$(date +%s)
"$EXA" worker --url "$URL" --worker-id wbad --pin "$PIN_B" --join-token-stdin \
    --allow-root --max-idle 2 --engine-lost 60 <"$T/wbad.tok" 2>"$T/wbad.log"
is "$?" 1 "a wrong pin: exit 1"
ok "at once, not retried as an outage" [ $(($(date +%s) - start)) -le 5 ]
like "$(cat "$T/wbad.log")" "engine $URL: public key does not match --pin" \
    "naming the engine and the cause"
is "$(grep -c 'error' "$T/wbad.log")" 1 "one error line"
is "$(leases)" 0 "no task was leased"
is "$(sql "select count(*) from workers where id = 'wbad'")" 0 "nor a worker registered"

# no pin against the self-signed key: exit 1 at once
"$EXA" worker token --worker-id wnopin --ttl 60 >"$T/wnopin.tok"
start=$(date +%s)
"$EXA" worker --url "$URL" --worker-id wnopin --join-token-stdin \
    --allow-root --max-idle 2 --engine-lost 60 <"$T/wnopin.tok" 2>"$T/wnopin.log"
is "$?" 1 "no pin against a self-signed certificate: exit 1"
ok "at once" [ $(($(date +%s) - start)) -le 5 ]
like "$(cat "$T/wnopin.log")" "engine $URL: certificate not trusted" "saying why"
is "$(leases)" 0 "no task was leased"

# http:// at the TLS listener (libmicrohttpd closes a plaintext
# connection without a byte): exit 1 at once, saying it speaks https
"$EXA" worker token --worker-id wplain --ttl 60 >"$T/wplain.tok"
start=$(date +%s)
"$EXA" worker --url "http://127.0.0.1:$PORT" --worker-id wplain \
    --join-token-stdin --allow-root --max-idle 2 --engine-lost 60 \
    <"$T/wplain.tok" 2>"$T/wplain.log"
is "$?" 1 "http:// at the https listener: exit 1"
ok "at once, not retried as an outage" [ $(($(date +%s) - start)) -le 5 ]
like "$(cat "$T/wplain.log")" \
    "engine http://127.0.0.1:$PORT: no HTTP reply; the worker listener speaks https\$" \
    "naming the URL and the listener's scheme"
is "$(grep -c 'error' "$T/wplain.log")" 1 "one error line"
is "$(leases)" 0 "no task was leased"
is "$(sql "select count(*) from workers where id = 'wplain'")" 0 "nor a worker registered"

# the right pin (in a list with another): the task runs to done
"$EXA" worker token --worker-id wgood --ttl 60 >"$T/wgood.tok"
"$EXA" worker --url "$URL" --worker-id wgood --pin "$PIN_B;$PIN_A" --join-token-stdin \
    --allow-root --max-idle 2 --engine-lost 30 <"$T/wgood.tok" 2>"$T/wgood.log" &
WPID=$!
wait_pid "$WPID" 60
is "$?" 0 "a worker with the right pin exits 0 after --max-idle"
run_exa --json task show "$T1"
json_ok "its task is done" '.state == "done" and .result.stdout_tail == "over-tls\n"'

# ---- provision status: the engine's pin and each provisioner's match
cat >"$T/provisioners.json" <<JSON
{"provisioners": [
  {"name": "good", "cluster": "c1", "engine_url": "$URL", "pin": "$PIN_A",
   "profiles": [{"name": "p1", "cpus": 1}]},
  {"name": "stale", "cluster": "c1", "engine_url": "$URL", "pin": "$PIN_B",
   "profiles": [{"name": "p2", "cpus": 1}]},
  {"name": "nopin", "cluster": "c1", "engine_url": "$URL",
   "profiles": [{"name": "p3", "cpus": 1}]}
]}
JSON
export EXAMLOPS_PROVISIONERS=$T/provisioners.json
run_exa --json provision status
is "$RC" 0 "provision status runs"
json_ok "it shows the engine's pin" --arg p "$PIN_A" '.engine.worker_pin == $p'
json_ok "a provisioner whose pin is the engine's: match" \
    '.provisioners[0].pin_match == true'
json_ok "a stale pin: no match" '.provisioners[1].pin_match == false'
json_ok "no pin: the engine's is used" --arg p "$PIN_A" \
    '.provisioners[2].pin_match == null and .provisioners[2].pin == $p'
run_exa provision status
like "$OUT" "Worker pin: $(printf '%s' "$PIN_A" | sed 's/[+/]/\\&/g')" "the table shows the pin"
like "$OUT" "stale.*mismatch" "and the stale provisioner's mismatch"

kill "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=

# ---- https:// at a plain-HTTP listener (it answers the ClientHello with
# an HTTP 400: "wrong version number"): exit 1 at once, it speaks http
: >"$T/plain.log"
"$EXA" serve --listen 127.0.0.1:0 --interval 3600 --worker-listen 127.0.0.1:0 \
    >>"$T/plain.log" 2>&1 &
SERVE_PID=$!
PPORT=$(wait_worker_port "$T/plain.log" "$SERVE_PID")
"$EXA" worker token --worker-id wtls --ttl 60 >"$T/wtls.tok"
start=$(date +%s)
"$EXA" worker --url "https://127.0.0.1:$PPORT" --worker-id wtls --pin "$PIN_A" \
    --join-token-stdin --allow-root --max-idle 2 --engine-lost 60 \
    <"$T/wtls.tok" 2>"$T/wtls.log"
is "$?" 1 "https:// at a plain-HTTP listener: exit 1"
ok "at once, not retried as an outage" [ $(($(date +%s) - start)) -le 5 ]
like "$(cat "$T/wtls.log")" \
    "engine https://127.0.0.1:$PPORT: the TLS handshake failed; the worker listener speaks http\$" \
    "naming the URL and the listener's scheme"
is "$(grep -c 'error' "$T/wtls.log")" 1 "one error line"
is "$(sql "select count(*) from task_attempts where worker_id = 'wtls'")" 0 "no task was leased"
is "$(sql "select count(*) from workers where id = 'wtls'")" 0 "nor a worker registered"
# nothing listens at all: still an outage, retried (not a mismatch)
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start=$(date +%s)
"$EXA" worker --url "https://127.0.0.1:$DEAD" --worker-id wtls --pin "$PIN_A" \
    --join-token-stdin --allow-root --max-idle 2 --engine-lost 2 \
    <"$T/wtls.tok" 2>"$T/wdead.log"
is "$?" 75 "a port with no listener: the engine-lost exit (75), after retrying"
unlike "$(cat "$T/wdead.log")" "speaks" "and no claim about a protocol"
kill "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=
done_testing
