#!/bin/bash
# The exa core as a C library (doc/libexa.md): `make install` into a
# temporary DESTDIR installs libexa.a, libexa.so, the headers and exa.pc;
# every installed header compiles on its own with `pkg-config --cflags
# exa` from the install tree (never from src/); doc/examples/submit-wait.c
# builds with `pkg-config --cflags --libs exa` (and statically with
# --static), and, on the testbed, opens the registered and approved testa
# through the gate, submits a script, waits, and prints the job's
# accounting, which equals sacct's (elapsed, GPUs, GPU-hours, exit code).
. "$(dirname "$0")/lib.sh"
exa_test_env

BUILD=$(cd "$(dirname "$EXA")" && pwd)
D=$T/dest
PFX=/opt/exa
LIB=$D$PFX/lib
INC=$D$PFX/include
make -s -C "$SRCDIR" BUILDDIR="$BUILD" -j2 install PREFIX="$PFX" DESTDIR="$D" >"$T/install.log" 2>&1
rc=$?
is "$rc" 0 "make install PREFIX=$PFX DESTDIR=... exits 0"
[ "$rc" = 0 ] || diag "$(tail -c 1500 "$T/install.log")"

ok "libexa.a installed" test -s "$LIB/libexa.a"
is "$(readlink "$LIB/libexa.so") $(readlink "$LIB/libexa.so.0")" \
    "libexa.so.0 libexa.so.$(cat "$SRCDIR/VERSION")" "libexa.so -> libexa.so.0 -> libexa.so.VERSION"
is "$(objdump -p "$LIB/libexa.so" | awk '$1=="SONAME"{print $2}')" libexa.so.0 "the soname is libexa.so.0"
ok "the shared library exports the gate" sh -c "nm -D --defined-only '$LIB/libexa.so' | grep -qw gate_open"
ok "exa.pc installed" test -s "$LIB/pkgconfig/exa.pc"
ok "include/exa/exa.h installed" test -s "$INC/exa/exa.h"
ok "the core headers keep their paths" test -s "$INC/exa/libfleet/gate.h" -a -s "$INC/exa/libsched/sched.h"
is "$(find "$INC" -name '*_int.h' -o -name banned.h | wc -l)" 0 "no private header and no banned.h installed"

export PKG_CONFIG_PATH=$LIB/pkgconfig
is "$(pkg-config --modversion exa)" "$(cat "$SRCDIR/VERSION")" "pkg-config finds exa in the install tree"
CF=$(pkg-config --cflags exa)
LIBS=$(pkg-config --libs exa)
like "$CF" "^-I$LIB/pkgconfig/\.\./\.\./include -I$LIB/pkgconfig/\.\./\.\./include/exa" "cflags point into the install tree"
ok "no flag points at the source tree" sh -c "! printf '%s\n' \"$CF $LIBS\" | grep -q '$SRCDIR'"
st=$(pkg-config --static --libs exa)
miss=
for l in -lexa -ldl -lm -lpthread -ljansson -lsqlite3 -lyaml; do
    grep -qw -- "$l" <<<" $st " || miss="$miss $l"
done
is "$miss" "" "--static adds the private libraries and the Requires.private ones"
is "$(pkg-config --print-requires-private exa | tr '\n' ' ')" \
    "jansson sqlite3 yaml-0.1 " "Requires.private names the three Debian libraries linked"
# libnettle (the first SHA-256), libcrypto (the first token or random
# draw), libcurl (worker_run)
# and libxgboost (rf_train) are dlopen()ed by the functions that use them
# (libutil/dlib.h); libmicrohttpd is exa serve's, outside libexa
is "$(objdump -p "$LIB/libexa.so" | awk '$1=="NEEDED"{print $2}' | grep -Ec 'libcrypto|libcurl|libmicrohttpd|libxgboost')" 0 \
    "libexa.so needs no libcrypto, libcurl, libmicrohttpd or libxgboost"
is "$(nm -D --undefined-only "$LIB/libexa.so" | grep -Ec ' (curl_|MHD_|XGB|EVP_|RAND_|HMAC|CRYPTO_|OPENSSL_|nettle_)')" 0 \
    "and leaves none of their symbols undefined"

# every installed header on its own, as a user's first #include
bad=0
for h in $(cd "$INC" && find exa -name '*.h' | LC_ALL=C sort); do
    if ! printf '#include <%s>\n' "$h" | cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c - $CF 2>"$T/hdr.err"; then
        bad=$((bad + 1))
        diag "$h: $(head -c 300 "$T/hdr.err")"
    fi
done
is "$bad" 0 "every installed header compiles alone with pkg-config's cflags"

# the example, built from the install tree only; when the tree under test
# is make sanitize's (libexa built with ASan+UBSan), the program links the
# same runtimes, as any user of an instrumented library must
SANFL=
if nm "$LIB/libexa.a" 2>/dev/null | grep -q __asan_report; then
    SANFL="-fsanitize=address,undefined"
fi
cp "$SRCDIR/doc/examples/submit-wait.c" "$T/submit-wait.c"
( cd "$T" && cc -std=c11 -Wall -Wextra -Werror $SANFL submit-wait.c $CF $LIBS -o sw ) 2>"$T/cc.err"
is "$?" 0 "doc/examples/submit-wait.c builds with pkg-config --cflags --libs exa"
[ -s "$T/cc.err" ] && diag "$(head -c 800 "$T/cc.err")"
export LD_LIBRARY_PATH=$LIB
like "$(ldd "$T/sw" | grep libexa)" "libexa.so.0 => $LIB/libexa.so.0" "it runs against the installed libexa.so"
# libexa.a with the dependencies shared
STATIC="$LIB/libexa.a $(pkg-config --libs $(pkg-config --print-requires-private exa)) -ldl -lm -lpthread"
( cd "$T" && cc -std=c11 -Wall -Wextra -Werror $SANFL submit-wait.c $CF $STATIC -o sw-static ) 2>"$T/cc2.err"
is "$?" 0 "and against libexa.a, its dependencies from Requires.private and Libs.private"
[ -s "$T/cc2.err" ] && diag "$(head -c 800 "$T/cc2.err")"
is "$(ldd "$T/sw-static" | grep -c libexa)" 0 "the static build needs no libexa.so"

"$T/sw" >"$T/o" 2>"$T/e"
is "$?" 2 "no arguments: exit 2"
like "$(cat "$T/e")" "usage: submit-wait CLUSTER SCRIPT" "with the usage"
printf '#!/bin/bash\nsleep 2\necho hello from exa\n' >"$T/job.sh"
"$T/sw" nope "$T/job.sh" >"$T/o" 2>"$T/e"
is "$?" 1 "an unknown cluster: exit 1"
like "$(cat "$T/e")" "unknown cluster: 'nope'" "naming it"

# --- on the testbed ---------------------------------------------------------
. "$(dirname "$0")/lib-testbed.sh"
if [ -z "${TESTBED_ROOT:-}" ] || [ ! -s "$TESTBED_ROOT/env.sh" ]; then
    skip "the example against the testbed" "testbed not running"
    done_testing
    exit 0
fi
. "$TESTBED_ROOT/env.sh"
H=$TESTBED_SSH_HOST U=$TESTBED_SSH_USER KEY=$TESTBED_SSH_KEY
export EXAMLOPS_HPC_ACCOUNT=$TESTBED_ACCOUNT EXAMLOPS_HPC_PARTITION=$TESTBED_PARTITION
export EXAMLOPS_HPC_GPUS=1 EXAMLOPS_HPC_POLL_INTERVAL=1 EXAMLOPS_ACTOR=it-libexa
export EXAMLOPS_HPC_REMOTE_WORKDIR=$T/remote-jobs
"$EXA" -y hpc connect "$H" --name testa --user "$U" --key "$KEY" --port "$TESTBED_SSH_PORT_TESTA" \
    --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc connect "$H" --name testp --user "$U" --key "$KEY" --port "$TESTBED_SSH_PORT_TESTB" \
    --scheduler slurm >/dev/null 2>&1
"$EXA" -y hpc approve testa >/dev/null 2>&1
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT name||'='||state FROM clusters ORDER BY name" | tr '\n' ' ')" \
    "testa=ACTIVE testp=PENDING " "testa registered and approved, testp only registered"

"$T/sw" testa "$T/job.sh" >"$T/o" 2>"$T/e"
rc=$?
is "$rc" 0 "the example submits to testa and waits: exit 0"
[ "$rc" = 0 ] || diag "$(head -c 800 "$T/e")"
val() { sed -n "s/^$1: //p" "$T/o"; }
ID=$(val job_id)
like "$ID" '^[0-9]+$' "it printed the Slurm job id ($ID)"
is "$(val cluster) $(val scheduler) $(val state)" "testa slurm COMPLETED" "cluster, scheduler and state"
# sacct can hold a partial record (JobName "allocation", no Partition) for
# a few seconds after a short job ends: wait for the full one first.
tb_wait_state testa "$ID" COMPLETED 30 || true
acct=$(tb_slurm testa sacct -X -P -n -j "$ID" -o ElapsedRaw,AllocTRES,ExitCode,State,JobName | head -n 1)
IFS='|' read -r el tres ec st jn <<<"$acct"
is "$(val elapsed_s)" "$el" "elapsed_s equals sacct ElapsedRaw ($el)"
g=$(sed -n 's/.*gres\/gpu=\([0-9]*\).*/\1/p' <<<"$tres")
is "$(val gpus)" "$g" "gpus equal sacct AllocTRES gres/gpu ($tres)"
is "$(val gpu_hours)" "$(awk -v g="$g" -v e="$el" 'BEGIN{printf "%.6f", g*e/3600}')" \
    "gpu_hours = sacct's GPUs x ElapsedRaw / 3600"
is "$(val exit_code)" "${ec%%:*}" "exit_code equals sacct ExitCode ($ec)"
is "$st" COMPLETED "sacct says COMPLETED too"
like "$jn" "exa-$(val run_id)\$" "the job name carries the run id"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT state||' '||printf('%.6f', gpu_hours) FROM jobs WHERE cluster='testa' AND job_id='$ID'")" \
    "COMPLETED $(val gpu_hours)" "the job is recorded in platform.db with the same GPU-hours"

printf '#!/bin/bash\necho failing >&2\nexit 3\n' >"$T/fail.sh"
"$T/sw" testa "$T/fail.sh" >"$T/o" 2>"$T/e"
is "$?" 1 "a job that fails: exit 1"
ID=$(val job_id)
is "$(val state) $(val exit_code)" "FAILED 3" "FAILED with exit code 3"
is "$(tb_slurm testa sacct -X -P -n -j "$ID" -o State,ExitCode | head -n 1)" "FAILED|3:0" "as sacct says"

"$T/sw" testp "$T/job.sh" >"$T/o" 2>"$T/e"
is "$?" 6 "a cluster not approved: exit 6"
like "$(cat "$T/e")" "testp" "naming it"
is "$(sqlite3 "$EXAMLOPS_DB" "SELECT COUNT(*) FROM jobs WHERE cluster='testp'")" 0 "and no job was recorded for it"
ok "nor printed" test ! -s "$T/o"
done_testing
