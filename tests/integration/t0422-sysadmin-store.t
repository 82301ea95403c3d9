#!/bin/bash
# platform.db's open rules (issue 13, doc/store.md): a mistyped
# EXAMLOPS_DB (its directory missing) is an error naming the variable and
# creates nothing; the default path's directories are created; a database
# this user can read but not write is opened read-only, so reads work and
# a write fails naming the read-only file.
. "$(dirname "$0")/lib.sh"
exa_test_env

run_exa hpc jobs
is "$RC" 0 "the test's EXAMLOPS_DB (directory exists) opens"
EXAMLOPS_DB=$T/typo/sub/platform.db run_exa hpc jobs
is "$RC" 3 "a missing database directory is a configuration error (3)"
is "$ERR" "exa: error: database directory '$T/typo/sub' does not exist (EXAMLOPS_DB='$T/typo/sub/platform.db'): create it, or unset EXAMLOPS_DB for the default path" \
    "the message names the directory and EXAMLOPS_DB"
[ ! -e "$T/typo" ]; ok "nothing was created" true
[ ! -e "$T/typo" ] || _tap_result 0 "(typo directory exists)"
EXAMLOPS_DB=$T/typo/sub/platform.db run_exa --json hpc clusters
json_ok "--json: one error document with exit_code 3" '.exit_code == 3'

(unset EXAMLOPS_DB; XDG_DATA_HOME=$T/xdg "$EXA" hpc jobs >/dev/null)
ok "without EXAMLOPS_DB the default path's directories are created" test -f "$T/xdg/examlops/platform.db"
EXAMLOPS_DB=$T/xdg2/examlops/platform.db XDG_DATA_HOME=$T/xdg2 run_exa hpc jobs
is "$RC" 0 "EXAMLOPS_DB naming the default path may create it too"

# a read-only database: a job row to read, then no write access
sqlite3 "$EXAMLOPS_DB" "INSERT INTO jobs(cluster,scheduler,job_id,state,created_at,updated_at) VALUES('c1','slurm','42','COMPLETED','t','t')"
"$EXA" hpc connect local --name m1 --scheduler mock >/dev/null
# a clusters.yaml entry platform.db has no row for yet: reconciling it
# (hpc capacity) is a write
printf '  y1: {scheduler: slurm, host: h1}\n' >>"$EXAMLOPS_HPC_REGISTRY"
before=$(sqlite3 "$EXAMLOPS_DB" .dump | sha256sum)
if [ "$(id -u)" = 0 ]; then
    # root writes anything: read as nobody, who may read but not write
    chmod 0755 "$T" "$T/db" "$T/home" "$T/config" "$T/data"
    chmod 0644 "$EXAMLOPS_DB" "$EXAMLOPS_DB"-* 2>/dev/null
    chmod 0777 "$T/config" "$(dirname "$EXAMLOPS_HPC_REGISTRY")" # only the db is read-only
    chmod 0666 "$EXAMLOPS_HPC_REGISTRY" "$EXAMLOPS_HPC_REGISTRY".lock 2>/dev/null
    as_reader() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
else
    chmod 0555 "$T/db"
    chmod 0444 "$EXAMLOPS_DB"
    as_reader() { "$@"; }
fi
o=$(as_reader "$EXA" --json hpc jobs --cluster c1 2>&1); rc=$?
is "$rc" 0 "a read-only platform.db is readable: hpc jobs"
is "$(jq -r '.[0].job_id' <<<"$o")" 42 "and lists its rows"
o=$(as_reader "$EXA" hpc audit 2>&1); rc=$?
is "$rc" 0 "hpc audit reads it too"
o=$(as_reader "$EXA" hpc capacity 2>&1); rc=$?
isnt "$rc" 0 "a write fails"
like "$o" "opened read-only: this user cannot write it" "naming the read-only database"
is "$(sqlite3 "$EXAMLOPS_DB" .dump | sha256sum)" "$before" "and nothing changed"
chmod -R u+w "$T"
done_testing
