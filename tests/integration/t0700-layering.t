#!/bin/bash
# The layering scan of `make check` (scripts/check-layering.sh): it passes
# on this tree, and fails, naming the file, line and rule, on a copy of the
# tree with one planted violation of each rule.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

out=$("$SRC/scripts/check-layering.sh" "$SRC" 2>&1); rc=$?
is "$rc" 0 "the scan passes on the tree"
[ "$rc" = 0 ] || diag "$out"

# plant FILE TEXT RULE DESC: copy the tree, append TEXT to FILE (created
# when missing), expect exit 1 and "FILE:LINE: RULE:" in the output.
plant() {
    local file=$1 text=$2 rule=$3 desc=$4 tree=$T/tree line
    rm -rf "$tree" && mkdir -p "$tree" && cp -r "$SRC/src" "$tree/"
    mkdir -p "$(dirname "$tree/$file")"
    printf '%s\n' "$text" >>"$tree/$file"
    line=$(wc -l <"$tree/$file")
    out=$("$SRC/scripts/check-layering.sh" "$tree" 2>&1); rc=$?
    is "$rc" 1 "$desc: the scan fails"
    if grep -qF "$file:$line: $rule:" <<<"$out"; then
        _tap_result 1 "$desc: names $file:$line ($rule)"
    else
        _tap_result 0 "$desc: names $file:$line ($rule)"
        diag "$out"
    fi
}

plant src/cmd/hpc_observe.c '#include "libtransport/transport.h"' frontend \
    "cmd/ includes libtransport"
plant src/cmd/hpc_observe.c '#include "libutil/subprocess.h"' frontend \
    "cmd/ includes libutil/subprocess.h"
plant src/server/http.c '#include <sqlite3.h>' frontend \
    "server/ includes sqlite3.h"
plant src/cmd/hpc_observe.c 'static void f(void) { transport_close(0); }' \
    frontend "cmd/ calls transport_close()"
plant src/cmd/output.c 'static int g(void) { return subprocess_run(0, 0, 0, 0); }' \
    frontend "cmd/ calls subprocess_run()"
plant src/server/http.c 'static void h(void) { sqlite3_finalize(0); }' \
    frontend "server/ calls sqlite3_finalize()"
plant src/cmd/hpc_observe.c 'static void *k(void) { return fleet_conn_transport(0, 0); }' \
    frontend "cmd/ calls fleet_conn_transport()"
plant src/libfleet/connect.c '#include "cmd/cmd.h"' libfront \
    "a library includes cmd/"
plant src/libstore/nodes.c '#include "server/http.h"' libfront \
    "a library includes server/"
plant src/libstore/nodes.c '#include "libfleet/registry.h"' layer \
    "libstore includes libfleet (a layer above it)"
plant src/libutil/strbuf.c '#include "libhostlist/hostlist.h"' layer \
    "libutil includes libhostlist"
plant src/server/http.c '#include "cmd/cmd.h"' layer \
    "server/ includes cmd/"
plant src/libfleet/placement.c 'static const char *q = "UPDATE clusters" " SET state = 1";' \
    sql "an UPDATE statement in libfleet"
plant src/cmd/output.c 'static const char *q2 = "DELETE FROM jobs";' sql \
    "SQL in cmd/"

# What the scan must not flag: comments and lower-case words.
tree=$T/tree
rm -rf "$tree" && mkdir -p "$tree" && cp -r "$SRC/src" "$tree/"
cat >>"$tree/src/cmd/output.c" <<'EOC'
/* transport_close(t); SELECT * FROM jobs; #include "libtransport/x.h" */
// subprocess_run(argv);
static const char *note = "select a cluster, then update it";
EOC
out=$("$SRC/scripts/check-layering.sh" "$tree" 2>&1); rc=$?
is "$rc" 0 "comments and lower-case prose are not violations"
[ "$rc" = 0 ] || diag "$out"
done_testing
