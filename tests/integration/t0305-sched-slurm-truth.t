#!/bin/bash
# t0305-sched-slurm-truth.t - a job's own text never hides it: on the real
# testbed (cluster testa, local transport) a held job named after Slurm's
# client error ("Unable to contact slurm controller") is listed by
# `exa hpc queue`, found by exa's own squeue and sacct queries (the
# formats of libsched/parse_slurm.h, read by `exa debug parse`), while the
# message on a line of its own is still no job, and one named "a|b c" is
# listed whole. Until session 14 the error-text check ran on whole rows
# and dropped the first, and `hpc queue` read '|'-separated rows and
# dropped the second.
set -u
. "$(dirname "$0")/lib-sched.sh"
require_testbed
echo "1..11"
sched_setup testa local
# every job submitted here is cancelled at the end, whatever happened
trap '[ -s "$T/ids" ] && SLURM_CONF=$TB_CONF scancel $(cat "$T/ids") >/dev/null 2>&1; rm -rf "$T"' EXIT
sub() { local i; i=$(submit "$@") && echo "$i" >> "$T/ids"; echo "$i"; }
printf '#!/bin/sh\ntrue\n' > "$T/ok.sh"
name="Unable to contact slurm controller"
id=$(sub "$T/ok.sh" --hold --job-name="$name")
ok $? "held job named '$name' submitted"
ids=$("$EXA" --json hpc queue --cluster testa |
    python3 -c 'import json,sys; print(" ".join(j["job_id"] for j in json.load(sys.stdin)["jobs"]))')
case " $ids " in *" $id "*) ok 0 "hpc queue lists it";; *) ok 1 "hpc queue lists it"; echo "#   ids: $ids";; esac
# a name holding '|' (the separator of the queue's old format) and blanks
pid=$(sub "$T/ok.sh" --hold --job-name="a|b c")
got=$("$EXA" --json hpc queue --cluster testa |
    python3 -c 'import json,sys; print([(j["name"].split(".exa-")[0], j["user"], j["state"]) for j in json.load(sys.stdin)["jobs"] if j["job_id"] == "'"$pid"'"])')
is "$got" "[('a|b c', '$(id -un)', 'PENDING')]" "hpc queue lists a job named 'a|b c' whole"
SLURM_CONF=$TB_CONF scancel "$pid"

# a name that makes up records (scontrol update: a user may rename a
# pending job of theirs): the rows come from a listing without names, and
# a name record claiming another job's id leaves that job without a name
US=$(printf '\037') RS=$(printf '\036')
vid=$(sub "$T/ok.sh" --hold --job-name=victim)
aid=$(sub "$T/ok.sh" --hold --job-name=tmp)
rows() {
    "$EXA" --json hpc queue --cluster testa | python3 -c '
import json, sys
d = json.load(sys.stdin)
ids = sys.argv[1:]
def nm(n):
    return None if n is None else n.split(".exa-")[0].replace("\x1f", "|")
print(sorted((j["job_id"], j["state"], nm(j["name"])) for j in d["jobs"] if j["job_id"] in ids), d["refused_records"])' "$@"
}
# a whole RUNNING record for the victim, as the queue's old format read it
SLURM_CONF=$TB_CONF scontrol update jobid="$aid" \
    name="x${US}r${US}n${US}t${US}$aid${RS}$vid${US}RUNNING${US}0:01${US}1:00${US}0:59${US}N/A${US}N/A${US}2026-12-06T06:00:00${US}1${US}1${US}debug${US}research${US}mallory${US}exa-e1-w1"
is "$(rows "$vid" "$aid")" "[('$vid', 'PENDING', 'victim'), ('$aid', 'PENDING', 'x|r|n|t')] 1" \
    "a made-up RUNNING record for another job adds nothing"
# a names record for the victim, closed by its own id
SLURM_CONF=$TB_CONF scontrol update jobid="$aid" \
    name="x${RS}$vid${US}evil${US}$vid
${RS}junk"
is "$(rows "$vid" "$aid")" "[('$vid', 'PENDING', None), ('$aid', 'PENDING', None)] 4" \
    "a name made up for another job is not believed: that job is listed without one"
"$EXA" hpc queue --cluster testa 2>&1 >/dev/null | grep -q "4 record(s) of the queue not believed"
ok $? "hpc queue warns of what it did not believe"
SLURM_CONF=$TB_CONF scancel "$vid" "$aid"

fmt=$(printf '\036%%i\037%%T\037%%M\037%%l\037%%L\037%%S\037%%e\037%%V\037%%D\037%%C\037%%P\037%%a\037%%u\037%%j\037%%r\037%%N\037%%b')
SLURM_CONF=$TB_CONF squeue -j "$id" -o "$fmt" > "$T/sq.out"
got=$("$EXA" --json debug parse squeue < "$T/sq.out" |
    python3 -c 'import json,sys; print([(j["id"], j["state"], j["name"].split(".exa-")[0]) for j in json.load(sys.stdin)["jobs"]])')
is "$got" "[('$id', 'PENDING', '$name')]" "exa's squeue format: the job, PENDING, its name"
# the controller's message on a line of its own, as squeue prints it on
# stderr folded into the output: still no row
{ cat "$T/sq.out"; echo "squeue: error: $name (connect failure)"; } > "$T/sq2.out"
is "$("$EXA" --json debug parse squeue < "$T/sq2.out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')" 1 \
    "the message on its own line is no job"

SLURM_CONF=$TB_CONF scancel "$id"
# sacct in exa's format (byname.c: the job found by its name after a
# crash), for a second job of the name that ran to its end (a job
# cancelled while pending may be accounted under another name)
id=$(sub "$T/ok.sh" --job-name="$name")
# (slurmdbd first records the job as "allocation"; its name follows)
for _ in $(seq 60); do
    st=$(SLURM_CONF=$TB_CONF sacct -X -n -P -j "$id" -o State,JobName 2>/dev/null | head -1)
    case $st in "COMPLETED|$name".exa-*) break;; esac
    sleep 0.5
done
SLURM_CONF=$TB_CONF sacct -X -n --parsable2 --delimiter=$'\x1f' -j "$id" \
    -o JobID,JobIDRaw,State,ExitCode,Start,End,Submit,ElapsedRaw,AllocTRES,NodeList,Partition,Account,User,JobName,NCPUS,TimelimitRaw > "$T/sa.out"
got=$(EXA_PARSE_COMMAND="sacct -X -n --parsable2 --delimiter=\$'\\x1f' -o JobID,JobIDRaw,State,ExitCode,Start,End,Submit,ElapsedRaw,AllocTRES,NodeList,Partition,Account,User,JobName,NCPUS,TimelimitRaw" \
    "$EXA" --json debug parse sacct < "$T/sa.out" |
    python3 -c 'import json,sys; print([(j["id"], j["state"], j["name"].split(".exa-")[0]) for j in json.load(sys.stdin)["jobs"]])')
is "$got" "[('$id', 'COMPLETED', '$name')]" "exa's sacct format: the job, COMPLETED, its name"
{ echo "sacct: error: $name"; cat "$T/sa.out"; } > "$T/sa2.out"
cnt=$(EXA_PARSE_COMMAND="sacct -X -n --parsable2 --delimiter=\$'\\x1f' -o JobID,JobIDRaw,State,ExitCode,Start,End,Submit,ElapsedRaw,AllocTRES,NodeList,Partition,Account,User,JobName,NCPUS,TimelimitRaw" \
    "$EXA" --json debug parse sacct < "$T/sa2.out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')
is "$cnt" 1 "sacct: the message on its own line is no job"
"$EXA" --json hpc status "$id" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d[0]["state"] == "COMPLETED" else 1)'
ok $? "hpc status reads it COMPLETED"
exit $((fails > 0))
