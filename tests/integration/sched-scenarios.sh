# shellcheck shell=bash
# sched-scenarios.sh - the adapter scenarios run by t0300 (local) and
# t0301 (ssh) against the real testbed: success, exit 3, cancel, time
# limit, hold, array with throttle, and shell-injection strings.
# Expects lib-sched.sh sourced and sched_setup done.

run_scenarios() {
    local mark=$T/pwned
    cat > "$T/ok.sh" <<'SH'
echo "hello $1"
SH
    printf 'exit 3\n' > "$T/exit3.sh"
    printf 'sleep 300\n' > "$T/sleep.sh"
    printf 'echo "task $SLURM_ARRAY_TASK_ID"; sleep 1\n' > "$T/arr.sh"

    # the time-limit job first: it takes about 90 s to be killed
    tid=$(submit "$T/sleep.sh" --time=1)
    ok $? "submit a job with --time=1"

    # success, with an argument full of shell syntax
    id=$(submit "$T/ok.sh" --time=2 -- "wor ld; touch $mark \$(touch $mark) \`touch $mark\`")
    ok $? "submit succeeds"
    "$EXA" hpc wait "$id" > "$T/wait.out" 2>&1
    ok $? "wait exits 0 for a COMPLETED job"
    is "$(jfield "$id" state)" COMPLETED "state COMPLETED"
    is "$(jfield "$id" exit_code)" 0 "exit code 0"
    is "$("$EXA" hpc logs "$id")" "hello wor ld; touch $mark \$(touch $mark) \`touch $mark\`" \
        "logs hold the argument literally"
    is "$(sqlite3 "$EXAMLOPS_DB" "select state||' '||exit_code||' '||cluster from jobs where job_id='$id'")" \
        "COMPLETED 0 $EXAMLOPS_HPC_CLUSTER" "jobs table records the end on its cluster"

    # exit 3
    id=$(submit "$T/exit3.sh")
    "$EXA" hpc wait "$id" > /dev/null 2>&1
    is "$?" 1 "wait exits 1 for a failed job"
    is "$(jfield "$id" state)" FAILED "exit 3 is FAILED"
    is "$(jfield "$id" exit_code)" 3 "exit code 3 kept"

    # cancel while running
    id=$(submit "$T/sleep.sh")
    wait_state "$id" RUNNING 30
    ok $? "long job reaches RUNNING"
    "$EXA" hpc cancel "$id" > /dev/null
    ok $? "cancel succeeds"
    "$EXA" hpc wait "$id" > /dev/null 2>&1
    is "$(jfield "$id" state)" CANCELLED "cancelled job is CANCELLED"
    case $(jfield "$id" raw_state) in "CANCELLED by"*) ok 0 "raw_state keeps 'CANCELLED by <uid>'";;
        *) ok 1 "raw_state keeps 'CANCELLED by <uid>'";; esac

    # held
    id=$(submit "$T/ok.sh" --hold)
    sleep 1
    is "$(jfield "$id" state)" PENDING "held job is PENDING"
    is "$(jfield "$id" reason)" JobHeldUser "held job's reason is JobHeldUser"
    "$EXA" hpc cancel "$id" > /dev/null

    # array of 10, at most 2 at once
    id=$(submit "$T/arr.sh" --array=0-9%2)
    ok $? "array submit"
    case $(SLURM_CONF=$TB_CONF squeue -h -j "$id" -o %i | tr '\n' ' ') in
    *"%2]"*) ok 0 "array throttle %2 reached Slurm";;
    *) ok 1 "array throttle %2 reached Slurm";; esac
    "$EXA" hpc wait "$id" > /dev/null 2>&1
    ok $? "array wait ends COMPLETED"
    is "$(jfield "$id" state)" COMPLETED "array state COMPLETED"
    # slurmdbd records the last task a moment after the controller ends it:
    # give accounting up to 15 s to catch up before counting
    local ntask=0
    for _ in $(seq 30); do
        ntask=$(SLURM_CONF=$TB_CONF sacct -X -n -P -j "$id" -o JobID | grep -c "^${id}_")
        [ "$ntask" -ge 10 ] && break
        sleep 0.5
    done
    is "$ntask" 10 "array ran 10 tasks"

    # injection strings in job name, partition, account
    id=$(submit "$T/ok.sh" --job-name="x; touch $mark \$(touch $mark) 'q\"")
    ok $? "hostile job name is accepted"
    "$EXA" hpc wait "$id" > /dev/null 2>&1
    "$EXA" hpc submit "$T/ok.sh" --partition="debug; touch $mark" > /dev/null 2>&1
    is "$?" 5 "hostile partition reaches sbatch literally and is refused (exit 5)"
    "$EXA" hpc submit "$T/ok.sh" --account="\$(touch $mark)" > /dev/null 2>&1
    is "$?" 5 "hostile account is refused by Slurm (exit 5)"
    "$EXA" hpc submit "$T/ok.sh" --job-name="$(printf 'a\nb')" > /dev/null 2>&1
    is "$?" 2 "newline in a job name is refused (exit 2)"

    # a job directory with spaces, quotes, % and $(...)
    id=$(EXAMLOPS_HPC_REMOTE_WORKDIR="$T/re mote 100% \$(touch $mark) 'x'" \
        submit "$T/ok.sh" -- pathcheck)
    ok $? "submit into a hostile job directory"
    "$EXA" hpc wait "$id" > /dev/null 2>&1
    is "$("$EXA" hpc logs "$id")" "hello pathcheck" "log written under the hostile directory"
    [ ! -e "$mark" ]
    ok $? "no injected command ran (marker absent)"

    # the time-limit job
    "$EXA" hpc wait "$tid" > /dev/null 2>&1
    is "$(jfield "$tid" state)" TIMEOUT "--time=1 job ends TIMEOUT"
}
