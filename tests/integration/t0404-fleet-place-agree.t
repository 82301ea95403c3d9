#!/bin/bash
# `exa hpc place` and `exa pipeline run --cluster auto` choose the same
# cluster for the same ask over the same seeded fleet (they share
# libfleet's place_load_candidates and place_choose): more idle GPUs wins,
# a PENDING cluster and snapshot rows of an unregistered cluster are
# ignored, upper-case names (which sort first in strcmp order) are matched
# to their own rows, and a follow-up occupancy change moves both. The
# clusters use the mock scheduler, so the pipeline stops right after
# placement (a cluster run needs slurm or flux) and nothing runs.
. "$(dirname "$0")/lib-fleet.sh"
cat > "$EXAMLOPS_HPC_REGISTRY" <<'Y'
clusters:
  Zeta: {scheduler: mock, transport: local, host: localhost}
  alpha: {scheduler: mock, transport: local, host: localhost}
  beta: {scheduler: mock, transport: local, host: localhost}
  gamma: {scheduler: mock, transport: local, host: localhost}
Y
"$EXA" hpc capacity >/dev/null 2>&1 # reconcile creates rows
for c in Zeta alpha beta; do "$EXA" --yes hpc approve "$c" >/dev/null; done
seed() { # seed CLUSTER "node state gpus gpus_used" ... (mock scheduler rows)
    seed_nodes "$@"
    sqlite3 "$EXAMLOPS_DB" "UPDATE nodes SET scheduler='mock' WHERE cluster='$1'"
}
place_reason() { "$EXA" --json hpc place --no-refresh "$@" | jget 'd["reason"]'; }
auto_reason() {
    "$EXA" pipeline run --model JPCP --dataset PM100Dataset --dummy --cluster auto "$@" </dev/null 2>&1 |
        sed -n 's/^ *placement  //p'
}
agree() { # agree DESCRIPTION WANT-CLUSTER ARGS...
    local what=$1 want=$2; shift 2
    local p a
    p=$(place_reason "$@")
    a=$(auto_reason "$@")
    like_chose=$(printf '%s' "$p" | sed -n 's/^chose mock@\([^ ]*\) .*/\1/p')
    is "$like_chose" "$want" "hpc place: $what"
    is "$a" "$p" "pipeline --cluster auto agrees: $what"
}
seed alpha "a1 mixed 4 3" "a2 down 8 0"
seed beta "b1 mixed 4 1" "b2 drain 8 0"
seed Zeta "z1 mixed 4 2"
seed gamma "g1 idle 8 0" "g2 idle 8 0"        # PENDING: never chosen
seed aardvark "x1 idle 8 0" "x2 idle 8 0"     # not registered: ignored
agree "most idle GPUs among ACTIVE clusters" beta --gpus 1
agree "only one cluster fits 3 GPUs" beta --gpus 3
seed Zeta "z1 idle 4 0" "z2 idle 4 0"
agree "an upper-case name gets its own rows" Zeta --gpus 1
seed Zeta "z1 down 4 0"
seed alpha "a1 idle 4 0" "a2 idle 4 0"
agree "occupancy changes move both" alpha --gpus 2
p=$(place_reason --gpus 5)
a=$("$EXA" pipeline run --model JPCP --dataset PM100Dataset --dummy --cluster auto --gpus 5 </dev/null 2>&1)
like_chose=$(printf '%s' "$p" | grep -c '^chose')
is "$like_chose" 0 "hpc place: nothing fits 5 GPUs on one node"
printf '%s\n' "$a" | grep -qxF "exa: error: auto-placement found no cluster: $p"
ok $? "pipeline --cluster auto fails with the same reason"

# A partition asked (--partition, else EXAMLOPS_HPC_PARTITION) counts only
# each cluster's nodes in it (nodes.partitions, as sinfo lists them); a
# cluster with none there fits nothing, and both say so alike.
parts() { # parts CLUSTER "node partitions" ...
    local c=$1; shift
    for row in "$@"; do
        set -- $row
        sqlite3 "$EXAMLOPS_DB" "UPDATE nodes SET partitions='$2' WHERE cluster='$c' AND node='$1'"
    done
}
seed alpha "a1 idle 4 0" "a2 idle 2 0"
seed beta "b1 idle 4 0" "b2 idle 4 0" "b3 down 8 0"
seed Zeta "z1 down 4 0"
parts alpha "a1 cpu,long" "a2 gpu"
parts beta "b1 gpu" "b2 gpu,long" "b3 cpu"
agree "the whole cluster without a partition" beta --gpus 1
agree "--partition gpu: beta's 8 GPUs there" beta --gpus 1 --partition gpu
agree "--partition cpu: beta's cpu node is down" alpha --gpus 1 --partition cpu
agree "--partition long: 4 idle GPUs each, alpha by name" alpha --gpus 4 --partition long
agree "--partition cpu,long: a node in either (alpha's a1, 4 GPUs)" alpha --gpus 4 --partition cpu,long
p=$(place_reason --gpus 1 --partition nope1,nope2)
is "$p" "no ACTIVE cluster can satisfy the ask (gpus=1, nodes=1, partition=nope1,nope2)" "a list no node is in: nothing fits"
export EXAMLOPS_HPC_PARTITION=cpu
agree "EXAMLOPS_HPC_PARTITION is the default" alpha --gpus 1
unset EXAMLOPS_HPC_PARTITION
out=$("$EXA" --json hpc place --no-refresh --gpus 1 --partition gpu --explain)
is "$(printf '%s' "$out" | jget 'd["explain"]["ask"]["partition"]')" gpu "the ask names the partition"
is "$(printf '%s' "$out" | jget '[c["partition"] for c in d["candidates"]]')" "['gpu', 'gpu', 'gpu']" "each candidate names it"
printf '%s' "$out" | jget 'd["reason"]' | grep -qF "in partition 'gpu'"
ok $? "the reason names it"
p=$(place_reason --gpus 1 --partition nope)
a=$("$EXA" pipeline run --model JPCP --dataset PM100Dataset --dummy --cluster auto --gpus 1 --partition nope </dev/null 2>&1)
is "$p" "no ACTIVE cluster can satisfy the ask (gpus=1, nodes=1, partition=nope)" "hpc place: no cluster has partition nope"
printf '%s\n' "$a" | grep -qxF "exa: error: auto-placement found no cluster: $p"
ok $? "pipeline --cluster auto fails with the same reason"
why=$("$EXA" --json hpc place --no-refresh --partition nope | jget '[c["why"] for c in d["candidates"] if c["name"]=="alpha"][0]')
is "$why" "does not fit: no node in partition 'nope' (of 2 node(s) in its snapshot)" "the why tells no node there from no snapshot"
"$EXA" hpc place --no-refresh --partition 'a b' >/dev/null 2>"$T/err"
is $? 2 "a partition that is no name is a usage error"
EXAMLOPS_HPC_PARTITION='a b' "$EXA" hpc place --no-refresh >/dev/null 2>"$T/err2"
is $? 2 "so is one in EXAMLOPS_HPC_PARTITION"
grep -qF "EXAMLOPS_HPC_PARTITION: partition 'a b'" "$T/err2"
ok $? "naming the variable"
EXAMLOPS_HPC_TIME=bogus "$EXA" hpc place --no-refresh >/dev/null 2>&1
is $? 0 "other EXAMLOPS_HPC_* values are not placement's to check"
grep -qF "partition 'a b' is not a partition name" "$T/err"
ok $? "naming it"
tap_done
