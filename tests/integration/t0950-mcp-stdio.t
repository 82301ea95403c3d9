#!/bin/bash
# t0950-mcp-stdio.t - exa mcp serve over stdio with the SDK client: initialize, tools/list without and with writes, every tool against the testbed's clusters (structuredContent checked against the output schemas), wrong arguments are InvalidParams, an approve changes the state and writes one audit event naming the client, no result holds the ssh user or key
# The checks are in tests/e2e/mcp-stdio.test.mjs (node --test, TAP for prove), with the
# official MCP SDK client pinned in tests/e2e/package.json.
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
exec timeout 300 node --test --test-reporter=tap mcp-stdio.test.mjs
