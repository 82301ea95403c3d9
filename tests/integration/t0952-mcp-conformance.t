#!/bin/bash
# t0952-mcp-conformance.t - the @modelcontextprotocol/conformance 0.1.13 server scenarios that apply to any server, against exa mcp serve --transport http (through a token-adding proxy): server-initialize, ping, tools-list, logging-set-level, server-sse-multiple-streams, dns-rebinding-protection, server-sse-polling
# The checks are in tests/e2e/mcp-conformance.test.mjs (node --test, TAP for prove), with the
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
exec timeout 300 node --test --test-reporter=tap mcp-conformance.test.mjs
