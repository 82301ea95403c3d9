# lib-fleet.sh - helpers for the fleet integration tests (TAP).
# Source it; it makes a private HOME/XDG/DB and defines ok/is/tap_done.
set -u
: "${EXA:?EXA must name the exa binary}"
T=$(mktemp -d /tmp/exa-fleet-XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config
export EXAMLOPS_DB=$T/platform.db EXAMLOPS_HPC_REGISTRY=$T/config/examlops/clusters.yaml
unset EXAMLOPS_ACTOR EXAMLOPS_HPC_CLUSTER EXAMLOPS_PLACEMENT_PROVIDER
mkdir -p "$HOME" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME/examlops"
n=0
fails=0
ok() { # ok COND-EXIT-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
is() { # is GOT WANT DESCRIPTION
    n=$((n + 1))
    if [ "$1" = "$2" ]; then echo "ok $n - $3"; else
        echo "not ok $n - $3"; echo "#   got:  '$1'"; echo "#   want: '$2'"; fails=$((fails + 1)); fi
}
tap_done() { echo "1..$n"; [ "$fails" -eq 0 ]; }
# jq-free JSON field read through python3
jget() { python3 -c 'import json,sys; d=json.load(sys.stdin); exec("print(" + sys.argv[1] + ")")' "$1"; }
# seed_nodes CLUSTER "node state gpus gpus_used" ...
seed_nodes() {
    local c=$1; shift
    local now; now=$(date -u +%FT%TZ)
    local sql="DELETE FROM nodes WHERE cluster='$c';"
    for row in "$@"; do
        set -- $row
        sql="$sql INSERT INTO nodes(cluster,node,scheduler,gpus,gpus_used,state,cpus,captured_at) VALUES('$c','$1','slurm',$3,$4,'$2',32,'$now');"
    done
    sqlite3 "$EXAMLOPS_DB" "$sql"
}
