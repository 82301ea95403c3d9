#!/bin/bash
# t0954-mcp-stdio-framing.t - exa mcp serve's stdio framing (redteam-s3
# 11): a line holding a NUL byte is answered -32700 alone and the next
# request is answered as usual (it used to be swallowed into the NUL
# line); CRLF line ends are accepted.
. "$(dirname "$0")/lib.sh"
exa_test_env
command -v jq >/dev/null || skip_all "jq needed"

printf '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping"\000}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\r\n' |
    timeout 20 "$EXA" mcp serve >"$T/out" 2>"$T/err"
is "$?" 0 "exit 0 at end of input"
is "$(wc -l <"$T/out")" 3 "three answers for three lines"
is "$(sed -n 1p "$T/out" | jq -c '[.id, .result]')" '[1,{}]' "the first ping answered"
is "$(sed -n 2p "$T/out" | jq -c '[.id, .error.code]')" '[null,-32700]' "the NUL line: parse error -32700"
is "$(sed -n 3p "$T/out" | jq -c '[.id, .result]')" '[3,{}]' "the request after it answered too"
done_testing
