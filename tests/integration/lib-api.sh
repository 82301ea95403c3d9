# lib-api.sh - helpers for the REST API tests (TAP, bash): start `exa
# serve` on a free loopback port and call it with curl.
#
#   . "$(dirname "$0")/lib.sh"; exa_test_env; . "$(dirname "$0")/lib-api.sh"
#   api_serve [EXTRA SERVE ARGS...]   # sets API_URL, API_PID; stopped on exit
#   api GET /api/v1/clusters "$TOKEN" # sets CODE, BODY, HDRS
#   api POST /api/v1/... "$TOKEN" '{"reason": "x"}'
#
# Every body api() receives is appended to $T/responses.all, so a test can
# grep all of them at the end (no key path, no ssh user, no token).
# Serve's stdout/stderr are $T/serve.out and $T/serve.err.

api_serve() {
    : >"$T/serve.out"
    "$EXA" serve --listen 127.0.0.1:0 --interval 3600 "$@" \
        >"$T/serve.out" 2>"$T/serve.err" &
    API_PID=$!
    trap 'kill $API_PID 2>/dev/null; wait $API_PID 2>/dev/null; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
    local port="" i
    for i in $(seq 1 100); do
        port=$(grep -o 'on port [0-9]*' "$T/serve.out" | cut -d' ' -f3)
        [ -n "$port" ] && break
        kill -0 "$API_PID" 2>/dev/null || break
        sleep 0.1
    done
    API_PORT=$port
    API_URL=${API_SCHEME:-http}://127.0.0.1:$port
}

api_stop() {
    kill "$API_PID" 2>/dev/null
    wait "$API_PID" 2>/dev/null
}

# api METHOD PATH [TOKEN [BODY [EXTRA CURL ARGS...]]]
api() {
    local m=$1 p=$2 tok=${3:-} body=${4:-}
    shift 4 2>/dev/null || shift $#
    local args=(-s -m 20 -X "$m" -D "$T/hdrs" -o "$T/body" -w '%{http_code}')
    [ -n "$tok" ] && args+=(-H "Authorization: Bearer $tok")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
    [ -n "${API_CURL_EXTRA:-}" ] && args+=($API_CURL_EXTRA)
    CODE=$(curl "${args[@]}" "$@" "$API_URL$p")
    BODY=$(cat "$T/body")
    HDRS=$(cat "$T/hdrs")
    printf '%s\n' "$BODY" >>"$T/responses.all"
}

# jq_ok DESC FILTER: `jq -e FILTER` on $BODY
jq_ok() {
    if jq -e "$2" <<<"$BODY" >/dev/null 2>&1; then
        _tap_result 1 "$1"
    else
        _tap_result 0 "$1"
        diag "jq -e $2 is not true on: $(head -c 1500 <<<"$BODY")"
    fi
}

# a token for USER ROLE [EXPIRES]
mk_token() {
    "$EXA" -q auth token create --user "$1" --role "$2" ${3:+--expires "$3"} 2>/dev/null
}
