#!/bin/sh
# install-deps.sh build|test - install the Debian 12 packages exa needs that
# are missing (apt-get, as root or through sudo). Prints nothing when all
# are present.
set -eu
BUILD="make gcc pkg-config libjansson-dev libsqlite3-dev libyaml-dev \
libmicrohttpd-dev libcurl4-openssl-dev libssl-dev nettle-dev libxgboost-dev"
TEST="$BUILD libcmocka-dev jq sqlite3 perl clang clang-format openssh-client \
openssh-server procps python3 curl prometheus"
case "${1:-build}" in
build) want=$BUILD ;;
test) want=$TEST ;;
*) echo "install-deps.sh: unknown set '$1': expected build or test" >&2; exit 2 ;;
esac
missing=
for p in $want; do
    s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$s" in *"ok installed") ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "installing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
