# lib-observe.sh - TAP helpers and a scratch environment for the
# observability tests (t05xx). Source it; it sets EXAMLOPS_DB, HOME and
# XDG_DATA_HOME under a temp dir removed on exit, and exports EXA_T.
: "${EXA:?EXA must name the exa binary}"
EXA_T=$(mktemp -d "${TMPDIR:-/tmp}/exa-t05.XXXXXX")
export HOME="$EXA_T/home" XDG_DATA_HOME="$EXA_T/xdg" \
    EXAMLOPS_DB="$EXA_T/platform.db" EXAMLOPS_HPC_REGISTRY="$EXA_T/clusters.yaml"
mkdir -p "$HOME" "$XDG_DATA_HOME"
unset EXAMLOPS_TENANT EXAMLOPS_JOB_MAP_DIR SLURM_JOB_ID SLURM_JOB_GPUS \
    SLURM_STEP_GPUS CUDA_VISIBLE_DEVICES
_obs_cleanup_hooks=()
_obs_cleanup() {
    for h in "${_obs_cleanup_hooks[@]}"; do eval "$h" || true; done
    rm -rf "$EXA_T"
}
trap _obs_cleanup EXIT
_n=0
_fail=0
ok() { _n=$((_n + 1)); echo "ok $_n - $1"; }
not_ok() { _n=$((_n + 1)); _fail=$((_fail + 1)); echo "not ok $_n - $1"; }
# check DESC CMD...: ok when CMD succeeds
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# is DESC GOT WANT
is() {
    if [ "$2" = "$3" ]; then ok "$1"; else
        not_ok "$1"; printf '#   got:  %s\n#   want: %s\n' "$2" "$3"; fi
}
done_testing() { echo "1..$_n"; [ "$_fail" -eq 0 ]; }
# sql STATEMENTS: run against the test database (created by exa first)
sql() { sqlite3 "$EXAMLOPS_DB" "$@"; }
# init_db: let exa create and migrate the database
init_db() { "$EXA" hpc prometheus-sd >/dev/null; }
# add_cluster NAME SCHED STATE
# The row is inserted PENDING; ACTIVE and REJECTED go through exa's own
# approve/reject, so the state is bound to the audit chain (a row set
# ACTIVE by SQL alone is treated as PENDING everywhere).
add_cluster() {
    sql "INSERT INTO clusters(name,scheduler,state,created_at,updated_at)
         VALUES('$1','$2','PENDING','2026-01-01T00:00:00Z','2026-01-01T00:00:00Z')"
    case $3 in
    ACTIVE) "$EXA" -y hpc approve "$1" >/dev/null ;;
    REJECTED) "$EXA" -y hpc reject "$1" -r "test fixture" >/dev/null ;;
    esac
}
# add_node CLUSTER NODE GPUS [STATE]
add_node() {
    sql "INSERT INTO nodes(cluster,node,gpus,state,captured_at)
         VALUES('$1','$2',$3,'${4:-idle}','2026-01-01T00:00:00Z')"
}
# free_port: a free TCP port on 127.0.0.1
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
