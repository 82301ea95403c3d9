#!/bin/bash
# t0811-api-sessions.t - the console's session contract on the REST API:
# POST /api/v1/auth/login with a token answers {user, role, csrf} and sets
# exa_session (HttpOnly, SameSite=Strict, Path=/, no Secure over plain
# HTTP); the cookie reads alone; a cookie POST needs X-CSRF-Token (403
# without or with a wrong one, audited), a Bearer POST does not; whoami
# gives the csrf back; a bad token at login is 401 under its user; a
# revoked token ends its sessions; logout ends the session; after five
# failed authentications from one address its next failures get 429 with
# Retry-After and write no audit row, while a good token or login from
# that address is never held back, /mcp counts in the same slow-down, and
# an over-long path is audited cut to 256 bytes.
. "$(dirname "$0")/lib.sh"
exa_test_env
# a first hold-back of 30 s, not 1: the checks of the 429s after the fifth
# failure must not race a loaded machine's clock (CI stop 17)
export EXAMLOPS_SERVE_AUTH_FAIL_DELAY_S=30
. "$(dirname "$0")/lib-api.sh"
command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq needed"

mkdir -p "$(dirname "$EXAMLOPS_HPC_REGISTRY")"
cat >"$EXAMLOPS_HPC_REGISTRY" <<YAML
clusters:
  alpha: {scheduler: slurm, transport: ssh, host: 127.0.0.1, ssh_port: 1}
  beta: {scheduler: slurm, transport: ssh, host: 127.0.0.1, ssh_port: 1}
YAML
ADMIN=$(mk_token alice admin)
VIEW=$(mk_token victor viewer)
api_serve

api POST /api/v1/auth/login "" "{\"token\": \"$ADMIN\"}"
is "$CODE" 200 "login with an admin token: 200"
jq_ok "login answers user, role and a csrf token" '.user == "alice" and .role == "admin" and (.csrf | test("^[A-Za-z0-9_-]{43}$"))'
CSRF=$(jq -r .csrf <<<"$BODY")
cookie=$(grep -i '^Set-Cookie:' <<<"$HDRS" | tr -d '\r')
like "$cookie" 'exa_session=[A-Za-z0-9_-]{43};' "Set-Cookie exa_session"
like "$cookie" 'HttpOnly' "HttpOnly"
like "$cookie" 'SameSite=Strict' "SameSite=Strict"
like "$cookie" 'Path=/' "Path=/"
ok "no Secure over plain HTTP" bash -c "! grep -q Secure <<<'$cookie'"
SID=$(sed -E 's/.*exa_session=([^;]*);.*/\1/' <<<"$cookie")
ok "the session id is not the token" test "$SID" != "${ADMIN#exa_}"

C=(-H "Cookie: exa_session=$SID")
api GET /api/v1/facility/fleet "" "" "${C[@]}"
is "$CODE" 200 "the cookie alone reads the fleet"
api GET /api/v1/auth/whoami "" "" "${C[@]}"
jq_ok "whoami over the cookie gives user and role" '.user == "alice" and .role == "admin"'
is "$(jq -r .csrf <<<"$BODY")" "$CSRF" "whoami's csrf is the login's"
api GET /api/v1/auth/whoami "$VIEW"
jq_ok "whoami over a Bearer token has no csrf" '.user == "victor" and .csrf == null'

api POST /api/v1/facility/fleet/alpha/approve "" "" "${C[@]}"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "403/forbidden" "a cookie POST without X-CSRF-Token: 403"
api POST /api/v1/facility/fleet/alpha/approve "" "" "${C[@]}" -H "X-CSRF-Token: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
is "$CODE" 403 "with a wrong X-CSRF-Token: 403"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action='api_denied' AND actor='alice' AND json_extract(details,'\$.reason') LIKE '%CSRF%'")" 2 \
    "both CSRF refusals are audited under alice"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT state FROM clusters WHERE name='alpha'")" PENDING "alpha still PENDING"
api POST /api/v1/facility/fleet/alpha/approve "" "" "${C[@]}" -H "X-CSRF-Token: $CSRF"
is "$CODE" 200 "with the session's X-CSRF-Token: 200"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT state || ' ' || approved_by FROM clusters WHERE name='alpha'")" "ACTIVE alice" \
    "alpha ACTIVE, approved by the session's user"
api POST /api/v1/facility/fleet/beta/reject "$ADMIN" '{"reason": "no"}'
is "$CODE" 200 "a Bearer POST needs no CSRF header"

# a viewer's session reads but may not approve
api POST /api/v1/auth/login "" "{\"token\": \"$VIEW\"}"
VSID=$(grep -i '^Set-Cookie:' <<<"$HDRS" | tr -d '\r' | sed -E 's/.*exa_session=([^;]*);.*/\1/')
VCSRF=$(jq -r .csrf <<<"$BODY")
api POST /api/v1/facility/fleet/beta/approve "" "" -H "Cookie: exa_session=$VSID" -H "X-CSRF-Token: $VCSRF"
is "$CODE" 403 "a viewer's session with its csrf still may not approve: 403"

# logout ends the session
api POST /api/v1/auth/logout "" "" -H "Cookie: exa_session=$VSID" -H "X-CSRF-Token: $VCSRF"
is "$CODE" 200 "logout: 200"
like "$(grep -i '^Set-Cookie:' <<<"$HDRS")" 'exa_session=;.*Max-Age=0' "logout clears the cookie"
api GET /api/v1/facility/fleet "" "" -H "Cookie: exa_session=$VSID"
is "$CODE" 401 "the logged-out session no longer reads"

# revoking the token ends its sessions
"$EXA" -q auth token revoke 1 >/dev/null
api GET /api/v1/facility/fleet "" "" "${C[@]}"
is "$CODE" 401 "a session of a revoked token: 401"
like "$BODY" "revoked" "says revoked"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT actor FROM audit_events WHERE action='api_denied' ORDER BY id DESC LIMIT 1")" alice \
    "audited under alice"

# login failures
api POST /api/v1/auth/login "" '{"token": "nonsense"}'
is "$CODE/$(jq -r .error.code <<<"$BODY")" "401/unauthorized" "login with a bad token: 401"
ok "a failed login sets no cookie" bash -c "! grep -qi '^Set-Cookie' <<<'$HDRS'"
api POST /api/v1/auth/login "" "{\"token\": \"$ADMIN\"}"
is "$CODE" 401 "login with a revoked token: 401"
api POST /api/v1/auth/login "" '{"token": 5}'
is "$CODE" 400 "login with a token that is no string: 400"
api GET /api/v1/auth/login "" ""
is "$CODE" 405 "GET on login: 405"
# login CSRF (redteam-s3 14): a cross-site form can send text/plain and
# a foreign Origin, never application/json without CORS
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -H 'Content-Type: text/plain' \
    --data-binary "{\"token\": \"$VIEW\"}" "$API_URL/api/v1/auth/login")
is "$code" 415 "a text/plain login: 415"
api POST /api/v1/auth/login "" "{\"token\": \"$VIEW\"}" -H 'Origin: http://evil.example'
is "$CODE" 403 "a login with another site's Origin: 403"
ok "and no cookie" bash -c "! grep -qi '^Set-Cookie' <<<'$HDRS'"
api POST /api/v1/auth/login "" "{\"token\": \"$VIEW\"}" -H "Origin: http://127.0.0.1:$API_PORT"
is "$CODE" 200 "a login with this server's Origin: 200"

ok "no token in serve's output so far" bash -c "! grep -qF -e '${ADMIN#exa_}' -e '${VIEW#exa_}' '$T/serve.out' '$T/serve.err'"

# slow-down (redteam-s3 2, 3, 9), on a fresh server: five failures from
# one address, then its failures get 429 (not audited) while good tokens,
# good logins and sessions go on; /mcp shares the count
api_stop
api_serve
V2=$(mk_token vera viewer)
BAD=exa_XBADBADBADBADBADBADBADBADBADBADBADBADBADBAD
long=/api/v1/clusters/$(head -c 15000 /dev/zero | tr '\0' a)
api GET "$long" ""
is "$CODE" 401 "no token, a 15,000-byte path: 401"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT length(target) || ' ' || (length(details) < 400) FROM audit_events WHERE action='api_denied' ORDER BY id DESC LIMIT 1")" "259 1" \
    "its audit row keeps the path once, cut to 256 bytes and '...'"
api GET /api/v1/clusters "" "" -H "Authorization: Basic dXNlcjpwYXNz"
is "$CODE" 401 "no bearer token: 401"
for i in 1 2; do api GET /api/v1/clusters "$BAD"; done
is "$CODE" 401 "a bad token: 401"
api POST /api/v1/auth/login "" '{"token": "nonsense"}'
is "$CODE" 401 "the fifth failure (a bad login) is still a 401"
n0=$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action='api_denied'")
api GET /api/v1/clusters "$BAD"
is "$CODE/$(jq -r .error.code <<<"$BODY")" "429/too_many_requests" "the sixth: 429"
ra=$(grep -i '^Retry-After:' <<<"$HDRS" | tr -dc 0-9)
ok "with Retry-After (got '$ra')" test -n "$ra" -a "${ra:-0}" -ge 1
api POST /api/v1/auth/login "" '{"token": "nonsense"}'
is "$CODE" 429 "a bad login is held back"
api GET /api/v1/clusters ""
is "$CODE" 429 "no token at all is held back too"
code=$(curl -s -m 10 -o "$T/mcp.body" -D "$T/mcp.hdrs" -w '%{http_code}' -X POST "$API_URL/mcp" \
    -H "Authorization: Bearer $BAD" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    --data-binary '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
is "$code" 429 "/mcp shares the slow-down: a bad token there is 429 too"
ok "/mcp's 429 has Retry-After" grep -qi '^Retry-After: [0-9]' "$T/mcp.hdrs"
api GET /api/v1/clusters "$V2"
is "$CODE" 200 "a good token from the same address is never held back"
api POST /api/v1/auth/login "" "{\"token\": \"$V2\"}"
is "$CODE" 200 "nor a good login"
for i in $(seq 1 40); do curl -s -m 10 -o /dev/null "$API_URL$long"; done
n1=$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action='api_denied'")
ok "44 failures past the limit wrote at most 2 audit rows (got $((n1 - n0)))" test $((n1 - n0)) -le 2

# calls without any token count too: 40 of them on a fresh server write
# the five rows of the limit and at most two more, not 40
api_stop
api_serve
api GET /api/v1/clusters "exa_YBADBADBADBADBADBADBADBADBADBADBADBADBADBAD" "" -H "X-Forwarded-For: 203.0.113.9"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT json_extract(details,'\$.remote') FROM audit_events ORDER BY id DESC LIMIT 1")" 127.0.0.1 \
    "without --trusted-proxy, X-Forwarded-For is ignored (the peer is recorded)"
n0=$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action='api_denied'")
for i in $(seq 1 40); do curl -s -m 10 -o /dev/null "$API_URL$long"; done
n1=$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action='api_denied'")
ok "40 calls without a token wrote at most 6 audit rows (got $((n1 - n0)))" test $((n1 - n0)) -le 6
api_stop

# behind a trusted proxy: the forwarded address is the one slowed down
api_serve --trusted-proxy 127.0.0.1
for i in 1 2 3 4 5; do
    api GET /api/v1/clusters "exa_${i}BADBADBADBADBADBADBADBADBADBADBADBADBADBAD" "" -H "X-Forwarded-For: 198.51.100.1, 203.0.113.5"
done
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT json_extract(details,'\$.remote') FROM audit_events WHERE action='api_denied' ORDER BY id DESC LIMIT 1")" 203.0.113.5 \
    "the audit records the address the proxy appended, not the client's claim"
api GET /api/v1/clusters "$BAD" "" -H "X-Forwarded-For: 203.0.113.5"
is "$CODE" 429 "--trusted-proxy: the forwarded address that failed five times gets 429 for its next failure"
api GET /api/v1/clusters "$V2" "" -H "X-Forwarded-For: 203.0.113.5"
is "$CODE" 200 "but a good token from it is not held back"
api GET /api/v1/clusters "$BAD" "" -H "X-Forwarded-For: 203.0.113.6"
is "$CODE" 401 "another address behind the same proxy is not slowed down"
api GET /api/v1/clusters "$BAD" "" -H "X-Forwarded-For: not-an-address"
is "$CODE/$(sqlite3 "$EXAMLOPS_DB" "SELECT json_extract(details,'\$.remote') FROM audit_events WHERE action='api_denied' ORDER BY id DESC LIMIT 1")" 401/127.0.0.1 \
    "a forwarded value that is no address counts as the proxy's own"
api_stop

# sessions are capped per token (redteam-s3 10): 33 more logins with one
# token end that token's oldest session, never another user's
api_serve
A2=$(mk_token ada admin)
api POST /api/v1/auth/login "" "{\"token\": \"$A2\"}"
ASID=$(grep -i '^Set-Cookie:' <<<"$HDRS" | tr -d '\r' | sed -E 's/.*exa_session=([^;]*);.*/\1/')
L0=$(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action='login' AND actor='vera'")
api POST /api/v1/auth/login "" "{\"token\": \"$V2\"}"
VFIRST=$(grep -i '^Set-Cookie:' <<<"$HDRS" | tr -d '\r' | sed -E 's/.*exa_session=([^;]*);.*/\1/')
for i in $(seq 1 32); do
    curl -s -m 10 -o /dev/null -H 'Content-Type: application/json' --data-binary "{\"token\": \"$V2\"}" "$API_URL/api/v1/auth/login"
done
api GET /api/v1/auth/whoami "" "" -H "Cookie: exa_session=$VFIRST"
is "$CODE" 401 "the viewer's 33rd login ended its own oldest session"
api GET /api/v1/auth/whoami "" "" -H "Cookie: exa_session=$ASID"
is "$CODE/$(jq -r .user <<<"$BODY")" "200/ada" "the admin's session lives on"
is "$(($(sqlite3 "$EXAMLOPS_DB" "SELECT count(*) FROM audit_events WHERE action='login' AND actor='vera'") - L0))" 33 \
    "every login is audited under its user"
api_stop
EXAMLOPS_SERVE_AUTH_FAIL_DELAY_S=0 run_exa serve --listen 127.0.0.1:0
is "$RC/$ERR" "3/exa: error: EXAMLOPS_SERVE_AUTH_FAIL_DELAY_S is '0': expected an integer between 1 and 3600" \
    "a first delay out of range is a configuration error naming the variable"
run_exa serve --listen 127.0.0.1:0 --trusted-proxy proxy.example
is "$RC" 2 "--trusted-proxy must be an address"
ok "no token in serve's output" bash -c "! grep -qF -e '${ADMIN#exa_}' -e '${VIEW#exa_}' -e '${V2#exa_}' '$T/serve.out' '$T/serve.err'"
ok "no session id or token in platform.db" bash -c "! sqlite3 '$EXAMLOPS_DB' .dump | grep -qF -e '$SID' -e '${ADMIN#exa_}' -e '$CSRF'"
done_testing
