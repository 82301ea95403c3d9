#!/bin/bash
# t0880-console-assets.t - the Facility console's files are compiled into
# exa and answered by `exa serve` (on 127.0.0.1, port 0) from the binary
# alone: the same bytes as src/server/console/, each with its Content-Type,
# a strict Content-Security-Policy (no inline script or style allowed, and
# none in the page), X-Content-Type-Options, X-Frame-Options and cache
# headers (no-cache with the ETag of its bytes, 304 for a matching
# If-None-Match); HEAD answers the same
# headers, an unknown path 404.
set -u
. "$(dirname "$0")/lib-observe.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/src/server/console

# the copy of exa runs from a scratch folder: nothing is read from the tree
mkdir -p "$EXA_T/bin" "$EXA_T/run"
cp "$EXA" "$EXA_T/bin/exa"
(cd "$EXA_T/run" && exec "$EXA_T/bin/exa" serve --listen 127.0.0.1:0 --interval 600 \
    >"$EXA_T/serve.out" 2>"$EXA_T/serve.err") &
pid=$!
_obs_cleanup_hooks+=("kill $pid 2>/dev/null; wait $pid 2>/dev/null")
port=
for _ in $(seq 100); do
    port=$(sed -n 's/.*port \([0-9][0-9]*\).*/\1/p' "$EXA_T/serve.out" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
done
check "exa serve prints the port it listens on" test -n "$port"
B=http://127.0.0.1:$port

# hdr FILE NAME: the value of header NAME in a curl -D dump (first one)
hdr() { tr -d '\r' <"$1" | awk -v n="$(echo "$2" | tr 'A-Z' 'a-z')" -F': ' \
    'tolower($1) == n { sub(/^[^:]*: /, ""); print; exit }'; }

for f in index.html console.js console.css favicon.svg; do
    path=/$f
    [ "$f" = index.html ] && path=/
    case $f in
    *.html) want="text/html; charset=utf-8" ;;
    *.js) want="text/javascript; charset=utf-8" ;;
    *.css) want="text/css; charset=utf-8" ;;
    *.svg) want="image/svg+xml" ;;
    esac
    code=$(curl -s -m 5 -o "$EXA_T/body" -D "$EXA_T/h" -w '%{http_code}' "$B$path")
    is "GET $path answers 200" "$code" 200
    check "GET $path is the bytes of src/server/console/$f" cmp -s "$EXA_T/body" "$SRC/$f"
    is "GET $path Content-Type" "$(hdr "$EXA_T/h" Content-Type)" "$want"
    csp=$(hdr "$EXA_T/h" Content-Security-Policy)
    check "GET $path CSP: default-src 'none', script-src 'self' only" \
        bash -c '[[ "$1" == *"default-src '"'"'none'"'"'"* && "$1" == *"script-src '"'"'self'"'"';"* ]]' _ "$csp"
    check "GET $path CSP allows nothing inline, no eval, no frames" \
        bash -c '[[ "$1" != *unsafe-* && "$1" == *"frame-ancestors '"'"'none'"'"'"* ]]' _ "$csp"
    is "GET $path X-Content-Type-Options" "$(hdr "$EXA_T/h" X-Content-Type-Options)" nosniff
    is "GET $path X-Frame-Options" "$(hdr "$EXA_T/h" X-Frame-Options)" DENY
    is "GET $path Cache-Control" "$(hdr "$EXA_T/h" Cache-Control)" no-cache
    is "GET $path ETag is the SHA-256 of its bytes" "$(hdr "$EXA_T/h" ETag)" \
        "\"$(sha256sum "$SRC/$f" | cut -c1-16)\""
done

curl -s -m 5 -o /dev/null -I -D "$EXA_T/h" "$B/"
is "HEAD / has the same CSP" "$(hdr "$EXA_T/h" Content-Security-Policy)" "$csp"
is "HEAD / Content-Length is the page's size" "$(hdr "$EXA_T/h" Content-Length)" "$(wc -c <"$SRC/index.html" | tr -d ' ')"
etag=\"$(sha256sum "$SRC/console.js" | cut -c1-16)\"
: >"$EXA_T/body" # curl leaves the file alone when no body comes
code=$(curl -s -m 5 -o "$EXA_T/body" -D "$EXA_T/h" -w '%{http_code}' -H "If-None-Match: $etag" "$B/console.js")
is "If-None-Match with the current ETag answers 304" "$code" 304
is "the 304 has no body" "$(wc -c <"$EXA_T/body" | tr -d ' ')" 0
is "the 304 repeats the ETag" "$(hdr "$EXA_T/h" ETag)" "$etag"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "If-None-Match: \"0123\", W/$etag" "$B/console.js")
is "a weak tag in a list matches too (weak comparison)" "$code" 304
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H 'If-None-Match: "0123456789abcdef"' "$B/console.js")
is "another ETag answers 200" "$code" 200
is "an unknown path is 404" "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$B/nosuch.js")" 404
is "POST / is 405" "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "$B/")" 405

# the page itself holds no inline script, handler or style, and loads
# nothing from another origin
check "index.html: every <script> has a same-origin src and no body" \
    bash -c '! grep -o "<script[^>]*>[^<]*" "$1" | grep -v "^<script src=\"/[a-z.]*\"[^>]*>$"' _ "$SRC/index.html"
check "index.html: no on*= handler or style= attribute" \
    bash -c '! grep -Eiq "[[:space:]]on[a-z]+=|[[:space:]]style=|<style" "$1"' _ "$SRC/index.html"
check "no asset names another origin (http:// or https://)" \
    bash -c '! grep -Eq "(src|href)=\"(https?:)?//" "$1"/*.html' _ "$SRC"
check "console.js never assigns innerHTML or outerHTML, never calls eval" \
    bash -c '! grep -Eq "innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function" "$1"' _ "$SRC/console.js"

kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
done_testing
