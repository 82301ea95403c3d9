#!/bin/sh
# place.sh - time placement decisions over 1,000 clusters x 100 nodes.
#
# 1. In memory: bench/place_bench.c calls place_choose() on synthetic
#    snapshots (the decision itself).
# 2. End to end: `exa hpc place` against a platform.db holding 1,000
#    ACTIVE clusters and 100,000 node rows (clusters.yaml reconcile, the
#    snapshot read and the decision), compared with `sqlite3` merely
#    reading the same node rows, as a ratio.
set -eu
cd "$(dirname "$0")/.."
: "${EXA:=$PWD/build/exa}"
export EXA
NC=${BENCH_PLACE_CLUSTERS:-1000}
NN=${BENCH_PLACE_NODES:-100}
T=$(mktemp -d /tmp/exa-bench-place-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT INT TERM
make -s build/libexa.a
PKG=$(pkg-config --cflags --libs jansson sqlite3 yaml-0.1 libcrypto)
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Werror -Isrc -include src/libutil/banned.h \
    -o "$T/place_bench" bench/place_bench.c build/libexa.a $PKG -lm
"$T/place_bench" "$NC" "$NN" 20
# bench_store VERB DB, through libexa as exa itself writes:
#   approve  approve every cluster through the governance API (a row set
#            ACTIVE with sqlite3 does not agree with its audit chain and
#            counts as PENDING), as `exa hpc approve` would one at a time;
#   resave   save every cluster's snapshot again through
#            store_nodes_replace(), as a refresh does (the rows below are
#            written with sqlite3, which leaves each cluster's summary
#            text NULL: placement would group the node rows instead).
cat > "$T/bench_store.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "libfleet/governance.h"
#include "libstore/nodes.h"
int main(int argc, char **argv)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct cluster_row *rows;
    size_t n;
    int resave = argc == 3 && !strcmp(argv[1], "resave");
    store_t *st = resave || (argc == 3 && !strcmp(argv[1], "approve"))
                      ? store_open(argv[2], &err)
                      : NULL;
    if (!st || store_cluster_list(st, &rows, &n, &err) < 0)
        return fprintf(stderr, "bench_store: %s\n", err.text), 1;
    for (size_t i = 0; i < n; i++) {
        struct node_row *nr = NULL;
        size_t nn = 0;
        int rc = resave ? store_nodes_list(st, rows[i].name, &nr, &nn, &err) ||
                              store_nodes_replace(st, rows[i].name, "slurm",
                                                  nr, nn, &err)
                        : gov_approve(st, NULL, rows[i].name, NULL, "bench",
                                      NULL, &err);
        node_rows_free(nr, nn);
        if (rc)
            return fprintf(stderr, "bench_store: %s\n", err.text), 1;
    }
    store_close(st);
    return 0;
}
C
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Werror -Isrc -include src/libutil/banned.h \
    -o "$T/bench_store" "$T/bench_store.c" build/libexa.a $PKG -lm

export HOME=$T EXAMLOPS_DB=$T/p.db EXAMLOPS_HPC_REGISTRY=$T/clusters.yaml
python3 - "$NC" "$NN" "$T" <<'PY'
import sqlite3, sys, random, datetime, subprocess, os
nc, nn, t = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(os.environ["EXAMLOPS_HPC_REGISTRY"], "w") as f:
    f.write("clusters:\n")
    for c in range(nc):
        f.write(f"  cluster{c:04d}: {{scheduler: slurm, host: login{c}}}\n")
subprocess.run([os.environ["EXA"], "hpc", "clusters"], check=True,
               stdout=subprocess.DEVNULL)
db = sqlite3.connect(os.environ["EXAMLOPS_DB"])
now = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
subprocess.run([t + "/bench_store", "approve", os.environ["EXAMLOPS_DB"]],
               check=True)
rnd = random.Random(42)
states = ["idle", "mixed", "allocated", "down", "drain", "idle"]
db.executemany(
    "INSERT INTO nodes(cluster,node,scheduler,cpus,gpus,gpus_used,state,"
    "captured_at) VALUES (?,?,?,?,?,?,?,?)",
    ((f"cluster{c:04d}", f"n{i:03d}", "slurm", 128, 8, rnd.randint(0, 8),
      rnd.choice(states), now) for c in range(nc) for i in range(nn)))
db.commit()
PY
"$T/bench_store" resave "$EXAMLOPS_DB"
# one call first, untimed: it checkpoints the WAL the snapshot saves above
# left (the next writer would), so the timed calls are all alike
"$EXA" --json hpc place --gpus 8 --cpus 64 --nodes 2 >/dev/null
runs=${BENCH_PLACE_RUNS:-20}
t0=$(date +%s.%N)
i=0; while [ $i -lt $runs ]; do
    "$EXA" --json hpc place --gpus 8 --cpus 64 --nodes 2 >/dev/null; i=$((i+1)); done
t1=$(date +%s.%N)
i=0; while [ $i -lt $runs ]; do
    sqlite3 "$EXAMLOPS_DB" "SELECT * FROM nodes ORDER BY cluster, node" >/dev/null; i=$((i+1)); done
t2=$(date +%s.%N)
python3 -c "
a=($t1-$t0)/$runs; b=($t2-$t1)/$runs
print('$NC clusters x $NN nodes: exa hpc place %.1f ms per decision end to end; sqlite3 reading the same rows %.1f ms; ratio %.2f' % (a*1e3, b*1e3, a/b))"
