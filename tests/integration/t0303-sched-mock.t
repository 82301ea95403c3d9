#!/bin/bash
# t0303-sched-mock.t - exa hpc submit/status/wait/logs/cancel with the mock
# scheduler (no testbed needed): the payload runs inline through the same
# adapter vtable, its record survives across processes, and hostile
# arguments reach the script literally.
set -u
: "${EXA:?EXA must name the exa binary}"
T=$(mktemp -d /tmp/exa-t0303.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config EXAMLOPS_DB=$T/platform.db
mkdir -p "$HOME"
unset EXAMLOPS_HPC_SCHEDULER EXAMLOPS_SLURM_MODE EXAMLOPS_HPC_TRANSPORT EXAMLOPS_HPC_SSH_HOST \
    EXAMLOPS_HPC_REMOTE_WORKDIR EXAMLOPS_HPC_WORKDIR EXAMLOPS_HPC_CLUSTER
export EXAMLOPS_HPC_POLL_INTERVAL=0.2
n=0; fails=0
is() {
    n=$((n + 1))
    if [ "$1" = "$2" ]; then echo "ok $n - $3"; else echo "not ok $n - $3"; echo "#   got: '$1'  want: '$2'"; fails=$((fails + 1)); fi
}
field() { "$EXA" --json hpc status "$1" | python3 -c "import json,sys; v=json.load(sys.stdin)[0]['$2']; print('' if v is None else v)"; }
echo "1..21"

mark=$T/pwned
printf 'echo "hello $1"; exit ${2:-0}\n' > "$T/job.sh"
out=$("$EXA" --json hpc submit "$T/job.sh" -- "x; touch $mark \$(touch $mark)" 0)
is "$?" 0 "mock submit exits 0"
id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
is "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["scheduler"])' <<<"$out")" mock "scheduler is mock by default"
"$EXA" hpc wait "$id" > /dev/null 2>&1
is "$?" 0 "wait exits 0"
is "$(field "$id" state)/$(field "$id" exit_code)" COMPLETED/0 "COMPLETED exit 0"
is "$("$EXA" hpc logs "$id")" "hello x; touch $mark \$(touch $mark)" "log holds the argument literally"
# a log longer than EXAMLOPS_HPC_LOG_MAX_BYTES keeps its last bytes and says so
logout=$(EXAMLOPS_HPC_LOG_MAX_BYTES=7 "$EXA" hpc logs "$id" 2> "$T/logs.err")
is "$logout" "pwned)" "capped log keeps the last 7 bytes ('pwned)\\n')"
is "$(cat "$T/logs.err")" "exa: warning: log of job '$id' truncated: showing its last 7 bytes (EXAMLOPS_HPC_LOG_MAX_BYTES)" \
    "truncation is reported on stderr"
EXAMLOPS_HPC_LOG_MAX_BYTES=lots "$EXA" hpc logs "$id" > /dev/null 2>&1
is "$?" 3 "a bad EXAMLOPS_HPC_LOG_MAX_BYTES is a configuration error"
is "$(sqlite3 "$EXAMLOPS_DB" "select cluster||' '||scheduler||' '||state from jobs where job_id='$id'")" \
    "default mock COMPLETED" "jobs row on cluster 'default'"

id3=$("$EXA" --json hpc submit "$T/job.sh" -- a 3 | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])')
"$EXA" hpc wait "$id3" > /dev/null 2>&1
is "$?" 1 "wait exits 1 for a failed job"
is "$(field "$id3" state)/$(field "$id3" exit_code)" FAILED/3 "exit 3 is FAILED 3"

idh=$("$EXA" --json hpc submit "$T/job.sh" --hold | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])')
is "$(field "$idh" state)" PENDING "held mock job is PENDING"
"$EXA" hpc cancel "$idh" > /dev/null
is "$(field "$idh" state)" CANCELLED "cancelled held job is CANCELLED"

# a missing script is configuration (3), and the message names the path
"$EXA" hpc submit "$T/nope.sh" > /dev/null 2> "$T/sub.err"
is "$?" 3 "submit of a missing script exits 3"
is "$(cat "$T/sub.err")" "exa: error: cannot read script '$T/nope.sh': No such file or directory" \
    "the message names the missing path"
# a failed cancel in --json: one document, the error convention plus each id's outcome
idh2=$("$EXA" --json hpc submit "$T/job.sh" --hold | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])')
"$EXA" --json hpc cancel "$idh2" mock-999 > "$T/cancel.json" 2> "$T/cancel.err"
is "$?" 1 "cancel with an unknown id exits 1"
is "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(sorted(d), d["error"], d["exit_code"], [(r["job_id"], r["cancelled"], r.get("error")) for r in d["results"]])' "$T/cancel.json")" \
    "['error', 'exit_code', 'hint', 'results'] 1 of 2 cancels failed: job 'mock-999' not found on cluster 'default' 1 [('$idh2', True, None), ('mock-999', False, \"job 'mock-999' not found on cluster 'default'\")]" \
    "failed cancel prints {error, exit_code, hint, results}"
is "$(field "$idh2" state)" CANCELLED "the known id of a partly failed cancel is CANCELLED"
"$EXA" --json hpc cancel mock-998 > "$T/cancel1.json" 2>/dev/null
is "$?/$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["error"], d["exit_code"], len(d["results"]))' "$T/cancel1.json")" \
    "1/job 'mock-998' not found on cluster 'default' 1 1" "a single unknown id: its own error text"

is "$(field mock-nosuchjob state)" UNKNOWN "an unknown id is UNKNOWN, not an error"
[ ! -e "$mark" ]
is "$?" 0 "no injected command ran"
exit $((fails > 0))
