#!/bin/sh
# install-e2e.sh - the end-to-end test dependencies: Debian's chromium (for
# playwright-core) and wrk through apt-get, and the npm packages pinned in
# tests/e2e/package.json and package-lock.json (npm ci, exact versions).
# Prints nothing when everything is present. Run by `make test-deps`.
set -eu
cd "$(dirname "$0")/.."
missing=
for p in chromium wrk nodejs npm; do
    case "$p" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    esac
    s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$s" in *"ok installed") ;; *) missing="$missing $p" ;; esac
done
if [ -n "$missing" ]; then
    SUDO=
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    echo "installing Debian packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >&2
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
fi
# npm ci when node_modules is missing or older than the lockfile
lock=tests/e2e/package-lock.json
stamp=tests/e2e/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
    echo "installing npm packages for tests/e2e (npm ci)" >&2
    (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
