#!/bin/bash
# t0951-mcp-http.t - exa mcp serve --transport http and /mcp on exa serve with the SDK's streamable HTTP client and raw requests: bearer tokens and roles (viewer reads, operator places, admin approves), sessions (Mcp-Session-Id, DELETE, 404), MCP-Protocol-Version, 202, 405, Host/Origin 403, schemas, InvalidParams, one audit event per approve naming client and user, redaction
# The checks are in tests/e2e/mcp-http.test.mjs (node --test, TAP for prove), with the
# MCP packages pinned in tests/e2e/package.json.
set -u
: "${EXA:?EXA must name the exa binary}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EXA=$(cd "$(dirname "$EXA")" && pwd)/$(basename "$EXA")
if ! command -v node >/dev/null 2>&1 ||
    [ ! -d "$ROOT/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]; then
    echo "1..0 # SKIP node or tests/e2e/node_modules missing (make test-deps)"
    exit 0
fi
if [ -z "${TESTBED_ROOT:-}" ]; then
    echo "1..0 # SKIP TESTBED_ROOT unset (no Slurm testbed)"
    exit 0
fi
cd "$ROOT/tests/e2e" || exit 1
export EXA
exec timeout 300 node --test --test-reporter=tap mcp-http.test.mjs
