#!/bin/bash
# t0812-api-tls.t - exa serve's transport rules: --tls-cert/--tls-key serve
# HTTPS (libmicrohttpd with GnuTLS) that curl verifies against the
# certificate, and the session cookie carries Secure there; plain HTTP to
# that port gets no answer; one of the two flags alone, a missing file or
# a file that is not PEM are refused before listening; a listen address
# beyond loopback without TLS is refused (exit 2) unless --insecure-http,
# which warns; with TLS it is allowed. /metrics is open by default and
# with --metrics-token needs that bearer token (401 otherwise); a short
# metrics token is refused; no token shows in serve's output.
. "$(dirname "$0")/lib.sh"
exa_test_env
# a first hold-back of 30 s, not 1: the checks of the 429s after the fifth
# failure must not race a loaded machine's clock (CI stop 17)
export EXAMLOPS_SERVE_AUTH_FAIL_DELAY_S=30
. "$(dirname "$0")/lib-api.sh"
command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq needed"
command -v openssl >/dev/null || skip_all "openssl needed to make a test certificate"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$T/key.pem" -out "$T/cert.pem" -days 2 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
ok "a self-signed test certificate" test -s "$T/cert.pem" -a -s "$T/key.pem"
VIEW=$(mk_token victor viewer)

API_SCHEME=https api_serve --tls-cert "$T/cert.pem" --tls-key "$T/key.pem"
like "$(cat "$T/serve.out")" "over https" "serve says it speaks https"
API_CURL_EXTRA="--cacert $T/cert.pem" api GET /api/v1/clusters "$VIEW"
is "$CODE" 200 "HTTPS with a verified certificate: 200"
API_CURL_EXTRA="--cacert $T/cert.pem" api POST /api/v1/auth/login "" "{\"token\": \"$VIEW\"}"
is "$CODE" 200 "login over HTTPS"
like "$(grep -i '^Set-Cookie:' <<<"$HDRS")" '; Secure' "the session cookie is Secure under TLS"
like "$HDRS" 'Strict-Transport-Security: max-age=31536000' "HSTS under TLS (RFC 6797)"
code=$(curl -s -m 5 --cacert "$T/cert.pem" --tls-max 1.1 --ciphers 'DEFAULT:@SECLEVEL=0' -o /dev/null -w '%{http_code}' "https://127.0.0.1:$API_PORT/healthz")
is "$code" 000 "TLS 1.1 is refused"
code=$(curl -s -m 5 --cacert "$T/cert.pem" --tlsv1.2 --tls-max 1.2 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$API_PORT/healthz")
is "$code" 200 "TLS 1.2 is served"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$API_PORT/healthz")
isnt "$code" 200 "plain HTTP to the TLS port gets no answer"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$API_PORT/healthz")
is "$code" 000 "an unverified certificate is refused by curl"
api_stop

run_exa serve --listen 127.0.0.1:0 --tls-cert "$T/cert.pem"
is "$RC" 2 "--tls-cert without --tls-key: usage error"
run_exa serve --listen 127.0.0.1:0 --tls-cert "$T/nope.pem" --tls-key "$T/key.pem"
is "$RC" 3 "a missing certificate file: exit 3"
like "$ERR" "nope.pem" "naming the file"
echo "not a certificate" >"$T/bad.pem"
run_exa serve --listen 127.0.0.1:0 --tls-cert "$T/bad.pem" --tls-key "$T/key.pem"
is "$RC" 3 "a file that is not PEM: exit 3"
like "$ERR" "expected a PEM file" "says what was expected"
cp "$T/key.pem" "$T/key2.pem"
run_exa serve --listen 127.0.0.1:0 --tls-cert "$T/key.pem" --tls-key "$T/key2.pem"
is "$RC" 3 "a key given as the certificate: refused (exit 3)"

run_exa serve --listen 0.0.0.0:0
is "$RC" 2 "beyond loopback without TLS: refused (exit 2)"
like "$ERR" "refusing to listen on '0.0.0.0:0' beyond loopback without TLS" "with a message naming the address"
like "$ERR" "insecure-http" "and the way out"

api_serve_at() { # like api_serve, on an explicit address
    "$EXA" serve --listen "$1" --interval 3600 "${@:2}" >"$T/serve.out" 2>"$T/serve.err" &
    API_PID=$!
    local i
    for i in $(seq 1 100); do
        API_PORT=$(grep -o 'on port [0-9]*' "$T/serve.out" | cut -d' ' -f3)
        [ -n "$API_PORT" ] && break
        kill -0 "$API_PID" 2>/dev/null || break
        sleep 0.1
    done
}
api_serve_at 0.0.0.0:0 --insecure-http
ok "--insecure-http listens beyond loopback" test -n "$API_PORT"
like "$(cat "$T/serve.err")" "without TLS \(--insecure-http\)" "and warns"
is "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$API_PORT/healthz")" 200 "answers"
api_stop
api_serve_at 0.0.0.0:0 --tls-cert "$T/cert.pem" --tls-key "$T/key.pem"
ok "with TLS, beyond loopback is allowed" test -n "$API_PORT"
is "$(curl -s -m 5 --cacert "$T/cert.pem" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$API_PORT/healthz")" 200 "and answers over HTTPS"
api_stop

MT=metrics-secret-0123456789abcdef
api_serve --metrics-token "$MT"
api GET /metrics ""
is "$CODE" 401 "/metrics with --metrics-token and no token: 401"
api GET /metrics "wrong-token-0123456789"
is "$CODE" 401 "/metrics with a wrong token: 401"
api GET /metrics "$VIEW"
is "$CODE" 401 "an API token is not the metrics token"
api GET /metrics "$MT"
is "$CODE" 200 "/metrics with the metrics token: 200"
like "$BODY" "^# (HELP|TYPE)" "and the exposition"
api GET /healthz ""
is "$CODE" 200 "/healthz stays open"
api_stop
ok "the metrics token is not in serve's output" bash -c "! grep -qF '$MT' '$T/serve.out' '$T/serve.err'"
run_exa serve --listen 127.0.0.1:0 --metrics-token short
is "$RC" 2 "a metrics token under 16 characters: usage error"
like "$ERR" "visible to every local user in ps" "--metrics-token warns that ps shows it (redteam-s3 13)"

# --metrics-token-file keeps the token out of ps; wrong tokens are
# slowed down like failed logins (redteam-s3 13)
printf '%s\n' "$MT" >"$T/mt"
api_serve --metrics-token-file "$T/mt"
ok "the token is not on serve's command line" bash -c "! tr '\\0' ' ' </proc/$API_PID/cmdline | grep -qF '$MT'"
api GET /metrics "$MT"
is "$CODE" 200 "/metrics with the token from --metrics-token-file: 200"
for i in 1 2 3 4 5; do api GET /metrics "wrong-token-0123456789"; done
is "$CODE" 401 "five wrong metrics tokens: 401"
api GET /metrics "wrong-token-0123456789"
is "$CODE" 429 "the sixth: 429"
like "$HDRS" 'Retry-After: [0-9]' "with Retry-After"
api GET /metrics "$MT"
is "$CODE" 200 "the right token still scrapes"
api_stop
run_exa serve --listen 127.0.0.1:0 --metrics-token-file "$T/nope"
is "$RC" 3 "a missing --metrics-token-file: exit 3"
like "$ERR" "nope" "naming the file"
done_testing
