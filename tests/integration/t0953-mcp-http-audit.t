#!/bin/bash
# t0953-mcp-http-audit.t - /mcp on exa serve audits its refusals as the
# REST API does (redteam-s3 8): a tool call refused for the token's role
# is an `api_denied` event with status 403 under the token's user, and a
# refused token's 401 row names the method and the peer address.
. "$(dirname "$0")/lib.sh"
exa_test_env
. "$(dirname "$0")/lib-api.sh"
command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq needed"

mkdir -p "$(dirname "$EXAMLOPS_HPC_REGISTRY")"
cat >"$EXAMLOPS_HPC_REGISTRY" <<YAML
clusters:
  alpha: {scheduler: slurm, transport: ssh, host: 127.0.0.1, ssh_port: 1}
YAML
VIEW=$(mk_token victor viewer)
api_serve

# mcp TOKEN SESSION BODY: sets CODE, BODY, HDRS
mcp() {
    local args=(-s -m 20 -X POST -D "$T/hdrs" -o "$T/body" -w '%{http_code}'
        -H 'Content-Type: application/json'
        -H 'Accept: application/json, text/event-stream'
        -H 'MCP-Protocol-Version: 2025-06-18')
    [ -n "$1" ] && args+=(-H "Authorization: Bearer $1")
    [ -n "$2" ] && args+=(-H "Mcp-Session-Id: $2")
    CODE=$(curl "${args[@]}" --data-binary "$3" "$API_URL/mcp")
    BODY=$(cat "$T/body")
    HDRS=$(cat "$T/hdrs")
}
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t0953","version":"1"}}}'

mcp "$VIEW" "" "$INIT"
is "$CODE" 200 "initialize with a viewer token"
SID=$(grep -i '^Mcp-Session-Id:' <<<"$HDRS" | tr -d '\r' | cut -d' ' -f2)
ok "a session id" test -n "$SID"
mcp "$VIEW" "$SID" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
is "$CODE" 202 "initialized: 202"
mcp "$VIEW" "$SID" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hpc_place","arguments":{"gpus":1}}}'
is "$CODE" 200 "a viewer's hpc_place: answered"
jq_ok "as an error naming the role" '.result.isError == true and (.result.content[0].text | test("operator"))'
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT actor || ' ' || target || ' ' || json_extract(details,'\$.status') || ' ' || json_extract(details,'\$.method') || ' ' || json_extract(details,'\$.remote') FROM audit_events WHERE action='api_denied' ORDER BY id DESC LIMIT 1")" \
    "victor /mcp 403 POST 127.0.0.1" "the refusal is audited: victor, 403, POST, the peer address"

mcp "exa_XBADBADBADBADBADBADBADBADBADBADBADBADBADBAD" "" "$INIT"
is "$CODE" 401 "a bad token: 401"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT actor || ' ' || json_extract(details,'\$.status') || ' ' || json_extract(details,'\$.method') || ' ' || json_extract(details,'\$.remote') FROM audit_events WHERE action='api_denied' ORDER BY id DESC LIMIT 1")" \
    "anonymous 401 POST 127.0.0.1" "its 401 row names the method and the peer address"
done_testing
