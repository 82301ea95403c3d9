#!/bin/bash
# t0011-pipeline-bad-input - every bad input gets its exit status and a
# message naming the problem, and leaves platform.db (compared as SQL)
# and the model directory (every path and file hash) exactly as they were.
. "$(dirname "$0")/lib.sh"
exa_test_env

# A store with something in it, so "unchanged" means something.
run_exa --json pipeline run --dummy --dataset-path "$SAMPLE"
is "$RC" 0 "baseline run registers version 1"

# expect_clean DESC WANT_RC ERE ARGS...: run exa ARGS in --json mode;
# check the status, that the error text matches ERE, that the JSON error
# document carries the status, and that the stored state is unchanged.
expect_clean() {
    local desc=$1 want=$2 ere=$3 before
    shift 3
    before=$(state_digest)
    run_exa --json "$@"
    is "$RC" "$want" "$desc: exits $want"
    json_ok "$desc: JSON error with exit_code $want" --argjson c "$want" \
        '.exit_code == $c and (.error | type) == "string"'
    like "$(jq -r .error <<<"$OUT")" "$ere" "$desc: message"
    is "$(state_digest)" "$before" "$desc: platform.db and models unchanged"
}

expect_clean "missing dataset file" 3 "dataset file '$T/nope.csv' not found" \
    pipeline run --dummy --dataset-path "$T/nope.csv"
json_ok "missing dataset file: hint says how to name one" \
    '.hint | test("--dataset-path FILE or set EXAMLOPS_PM100_PATH")'

{
    head -3 "$SAMPLE"
    echo '1187999,4632,1,2020-05-03T00:00:00Z,700.0'
    tail -n +4 "$SAMPLE"
} >"$T/short-row.csv"
expect_clean "row with a missing field" 1 \
    "^dataset file '$T/short-row.csv': line 4: expected 6 fields like the header, found 5$" \
    pipeline run --dummy --dataset-path "$T/short-row.csv"

{
    head -10 "$SAMPLE"
    echo '1188000,4632,1,1,2020-05-03T00:00:00Z,700.0,extra'
} >"$T/long-row.csv"
expect_clean "row with an extra field" 1 "line 11: expected 6 fields.*found 7" \
    pipeline run --dummy --dataset-path "$T/long-row.csv"

printf 'job_id,user_id\n1,2\n' >"$T/no-cols.csv"
expect_clean "header without the PM100 columns" 1 \
    "line 1: header has no 'num_nodes_req' column" \
    pipeline run --dummy --dataset-path "$T/no-cols.csv"

: >"$T/empty.csv"
expect_clean "empty file" 1 "the file is empty" \
    pipeline run --dummy --dataset-path "$T/empty.csv"

expect_clean "unknown model" 2 "^unknown model 'GPT9': known models: JPCP$" \
    pipeline run --model GPT9 --dataset PM100Dataset --dummy \
    --dataset-path "$SAMPLE"
expect_clean "unknown dataset" 2 \
    "^unknown dataset 'PM200': known datasets: PM100Dataset$" \
    pipeline run --model JPCP --dataset PM200 --dummy --dataset-path "$SAMPLE"
expect_clean "unknown option" 2 "option '--epochs' is unknown" \
    pipeline run --epochs 3

# An unwritable data directory. Root ignores permission bits, so there the
# directory exa must create is blocked by a plain file instead.
models="$XDG_DATA_HOME/examlops/models/JPCP"
if [ "$(id -u)" -ne 0 ]; then
    chmod a-w "$models"
    expect_clean "read-only model directory" 3 \
        "^data directory '.*' is not writable: .*Permission denied" \
        pipeline run --dummy --dataset-path "$SAMPLE"
    chmod u+w "$models"
else
    mkdir -p "$T/ro"
    : >"$T/ro/examlops"
    XDG_DATA_HOME_SAVED=$XDG_DATA_HOME
    before=$(state_digest)
    XDG_DATA_HOME="$T/ro" run_exa --json pipeline run --dummy \
        --dataset-path "$SAMPLE"
    is "$RC" 3 "unwritable data directory: exits 3"
    like "$(jq -r .error <<<"$OUT")" \
        "^data directory '$T/ro/examlops/models' is not writable: .*Not a directory" \
        "unwritable data directory: message names it"
    is "$(state_digest)" "$before" \
        "unwritable data directory: platform.db and models unchanged"
    ok "unwritable data directory: nothing created there" \
        test "$(find "$T/ro" | wc -l)" -eq 2
fi

# A corrupt platform.db: a clear error and the file byte-identical.
head -c 8192 /dev/urandom >"$T/corrupt.db"
sum=$(sha256sum <"$T/corrupt.db")
before=$(state_digest)
EXAMLOPS_DB="$T/corrupt.db" run_exa --json pipeline run --dummy \
    --dataset-path "$SAMPLE"
is "$RC" 3 "corrupt platform.db: exits 3"
like "$(jq -r .error <<<"$OUT")" \
    "^database '$T/corrupt.db' is not a usable SQLite database .*left untouched" \
    "corrupt platform.db: says so"
is "$(sha256sum <"$T/corrupt.db")" "$sum" "corrupt platform.db: not modified"
ok "corrupt platform.db: no journal files beside it" \
    test ! -e "$T/corrupt.db-wal" -a ! -e "$T/corrupt.db-journal"
is "$(state_digest)" "$before" "corrupt platform.db: models unchanged"
EXAMLOPS_DB="$T/corrupt.db" run_exa hpc jobs
is "$RC" 3 "corrupt platform.db: hpc jobs exits 3 too"

# After all that, the store still holds exactly the baseline.
run_exa --json models show JPCP
json_ok "still exactly one version" '(.versions | length) == 1'
run_exa --json hpc jobs
json_ok "still exactly one job" 'length == 1 and .[0].state == "COMPLETED"'

# EXAMLOPS_HPC_CLUSTER names the cluster as --cluster does: a run pointed
# at a cluster that is not registered (or badly named) never trains here.
EXAMLOPS_HPC_CLUSTER=nosuch expect_clean "EXAMLOPS_HPC_CLUSTER of an unknown cluster" 1 \
    "^unknown cluster: 'nosuch'" pipeline run --dummy --dataset-path "$SAMPLE"
EXAMLOPS_HPC_CLUSTER='bad name' expect_clean "EXAMLOPS_HPC_CLUSTER with a bad name" 2 \
    "^invalid cluster name 'bad name': expected" pipeline run --dummy --dataset-path "$SAMPLE"

done_testing
