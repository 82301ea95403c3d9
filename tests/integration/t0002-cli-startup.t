#!/bin/bash
# t0002-cli-startup - what a command maps at start-up (issue 14): the exa
# binary names no libxgboost (nor its libgomp, libdmlc, libstdc++), no
# libcurl and no libmicrohttpd, so `exa --version` and `exa --json hpc
# jobs` never map them nor what they pull in (GnuTLS, nghttp2, krb5, ...;
# the dynamic loader's own trace, LD_DEBUG=files, lists every object it
# opens); training, `exa worker` and the HTTP listeners load them at run
# time (libutil/dlib.h), and a missing library is one clear error naming
# it and its Debian package, with nothing half-written. t0810, t0951 and
# t0960 run the listeners and workers themselves.
. "$(dirname "$0")/lib.sh"
exa_test_env

needed=$(readelf -d "$EXA" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
# Under `make sanitize` libubsan itself needs libstdc++: there only
# XGBoost's own libraries count.
xgb='libxgboost|libgomp|libdmlc|libstdc'
case "$needed" in *libubsan*) xgb='libxgboost|libgomp|libdmlc' ;; esac
ok "the binary does not link libxgboost ($needed)" \
    sh -c "! printf '%s\n' '$needed' | grep -Eq '$xgb'"
dl='libcrypto|libcurl|libmicrohttpd|libgnutls|libnghttp2|libssh2|libkrb5|libldap'
is "$(printf '%s\n' $needed | grep -Ec "$dl")" 0 \
    "nor libcrypto, libcurl, libmicrohttpd or what they pull in"

maps() { # maps CMD...: the objects the loader opened, one per line
    LD_DEBUG=files "$@" 2>&1 >/dev/null | sed -n 's/.*file=\([^ ]*\) .*/\1/p' | sort -u
}
v=$(maps "$EXA" --version)
like "$v" "libsqlite3" "LD_DEBUG=files lists what exa --version maps"
is "$(grep -Ec "$xgb" <<<"$v")" 0 \
    "exa --version maps no libxgboost, libgomp, libdmlc or libstdc++"
is "$(grep -Ec "$dl" <<<"$v")" 0 \
    "exa --version maps no libcrypto, libcurl, libmicrohttpd, GnuTLS, nghttp2, ssh2, krb5, ldap"
j=$(maps "$EXA" --json hpc jobs)
like "$j" "libsqlite3" "exa --json hpc jobs maps libsqlite3"
is "$(grep -Ec 'libxgboost|libgomp' <<<"$j")" 0 "nor does exa --json hpc jobs"
is "$(grep -Ec "$dl" <<<"$j")" 0 "nor libcrypto, libcurl, libmicrohttpd or their libraries"

# libcrypto is loaded by the first hash or token: exa auth token create
# draws random bytes and stores a SHA-256
a=$(maps "$EXA" auth token create --user t0002 --role viewer)
like "$a" "libcrypto\.so\.3" "exa auth token create loads libcrypto at run time"
is "$("$EXA" --json auth token list | jq '[.[] | select(.user == "t0002")] | length')" 1 \
    "and makes the token"
EXAMLOPS_CRYPTO_LIBRARY=$T/no/libcrypto.so.3 run_exa auth token create \
    --user t0002b --role viewer
is "$RC" 3 "a missing libcrypto: exit 3"
is "$ERR" "exa: error: cannot load libcrypto library '$T/no/libcrypto.so.3': $T/no/libcrypto.so.3: cannot open shared object file: No such file or directory (install Debian's libssl3, or set EXAMLOPS_CRYPTO_LIBRARY)" \
    "one line naming the library and the Debian package"
is "$OUT" "" "and no token printed"
is "$("$EXA" --json auth token list | jq '[.[] | select(.user == "t0002b")] | length')" 0 \
    "nor stored"

# SHA-256 (the audit chain, job rows) is libnettle's, loaded by the first
# hash: registering a cluster hashes its audit event and maps neither
# libcrypto nor what libcurl or libmicrohttpd pull in (libutil/sha256.h)
c=$(maps "$EXA" hpc connect localhost --name t0002a --scheduler mock)
like "$c" "libnettle\.so\.8" "exa hpc connect loads libnettle for SHA-256"
is "$(grep -Ec "$dl" <<<"$c")" 0 "and no libcrypto, libcurl or libmicrohttpd"
EXAMLOPS_NETTLE_LIBRARY=$T/no/libnettle.so.8 run_exa hpc connect localhost \
    --name t0002b --scheduler mock
is "$RC" 3 "a missing libnettle: exit 3"
is "$ERR" "exa: error: cannot load libnettle library '$T/no/libnettle.so.8': $T/no/libnettle.so.8: cannot open shared object file: No such file or directory (install Debian's libnettle8, or set EXAMLOPS_NETTLE_LIBRARY)" \
    "one line naming the library and the Debian package"
is "$("$EXA" --json hpc clusters | jq '[.[] | select(.name == "t0002b")] | length')" 0 \
    "and the cluster is not registered"
is "$("$EXA" --json hpc clusters | jq '[.[] | select(.name == "t0002a")] | length')" 1 \
    "where the run with libnettle registered its own"

# exa serve loads libmicrohttpd before it resolves the listen address (a
# name that cannot resolve ends it right after, exit 2)
s=$(maps "$EXA" serve --listen nohost.invalid:1)
like "$s" "libmicrohttpd\.so\.12" "exa serve loads libmicrohttpd at run time"
EXAMLOPS_MICROHTTPD_LIBRARY=$T/no/libmicrohttpd.so.12 run_exa serve \
    --listen 127.0.0.1:0
is "$RC" 3 "a missing libmicrohttpd: exa serve exits 3"
is "$(grep -c . <<<"$ERR")" 1 "in one line"
like "$ERR" "cannot load libmicrohttpd library '$T/no/libmicrohttpd.so.12'.*install Debian's libmicrohttpd12" \
    "naming the library and the Debian package"
EXAMLOPS_MICROHTTPD_LIBRARY=$T/no/libmicrohttpd.so.12 run_exa mcp serve \
    --transport http --listen 127.0.0.1:0
is "$RC" 3 "and so does exa mcp serve --transport http"

# exa worker loads libcurl first; against a port where nothing listens
# it gives up after --engine-lost 1 (EX_TEMPFAIL; timeout bounds it)
echo tok >"$T/tok"
w=$(LD_DEBUG=files timeout 30 "$EXA" worker --allow-root --url http://127.0.0.1:1 \
    --worker-id w1 --join-token-stdin --spool "$T/spool" --engine-lost 1 \
    <"$T/tok" 2>&1 >/dev/null | sed -n 's/.*file=\([^ ]*\) .*/\1/p' | sort -u)
like "$w" "libcurl\.so\.4" "exa worker loads libcurl at run time"
EXAMLOPS_CURL_LIBRARY=$T/no/libcurl.so.4 run_exa worker --allow-root \
    --url http://127.0.0.1:1 --worker-id w1 --join-token-stdin \
    --spool "$T/spool2" <"$T/tok"
is "$RC" 3 "a missing libcurl: exa worker exits 3"
is "$(grep -c . <<<"$ERR")" 1 "in one line"
like "$ERR" "cannot load libcurl library '$T/no/libcurl.so.4'.*install Debian's libcurl4" \
    "naming the library and the Debian package"
ok "before it creates its spool" test ! -e "$T/spool2"

t=$(maps "$EXA" train --model JPCP --dataset PM100Dataset \
    --dataset-path "$SAMPLE" --out "$T/art" --dummy)
like "$t" "libxgboost" "exa train loads libxgboost when it trains"
ok "and trains" test -s "$T/art/model.json"

EXAMLOPS_XGBOOST_LIBRARY=$T/no/libxgboost.so.0 run_exa train --model JPCP \
    --dataset PM100Dataset --dataset-path "$SAMPLE" --out "$T/art2" --dummy
is "$RC" 1 "a missing libxgboost: exit 1"
like "$ERR" "cannot load XGBoost library '$T/no/libxgboost.so.0'" \
    "the error names the library"
is "$(grep -c "error:" <<<"$ERR")" 1 "one error line (a dataset warning may precede it)"
like "$(grep "error:" <<<"$ERR")" "libxgboost0" "naming the Debian package"
ok "nothing half-written" test ! -e "$T/art2"
done_testing
