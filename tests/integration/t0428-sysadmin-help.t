#!/bin/bash
# `exa ... --help` (issue 13): every command of the command tables (as
# `exa debug commands --format=commands` lists them, the tables that also
# drive dispatch, the man pages and the completion) explains what it does,
# lists each option of its usage line in an Options section with a
# sentence, and ends with an example of itself. A new command without
# them fails here. Only commands marked "(internal)" in their summary
# (exa task-shim, run by exa worker) are left out.
. "$(dirname "$0")/lib.sh"
exa_test_env
all=$("$EXA" debug commands --format=commands)
is "$?" 0 "exa debug commands --format=commands"
h=$("$EXA" debug commands --help)
is "$?" 0 "exa debug commands --help exits 0 (it is hidden, not in the list)"
like "$h" "^Example: exa debug commands " "and ends with an example"
for g in hpc models pipeline finops auth task provision mcp debug; do
    like "$all" "^$g [a-z]" "the command list has the $g group"
done
like "$all" "^serve$" "the command list has exa serve"
while read -r gc; do
    [ -n "$gc" ] || continue
    h=$("$EXA" $gc --help 2>&1)
    rc=$?
    usage=$(head -1 <<<"$h")
    summary=$(sed -n 3p <<<"$h")
    case "$summary" in *"(internal)") continue ;; esac
    is "$rc" 0 "$gc: --help exits 0"
    like "$usage" "^usage: exa $gc( |$)" "$gc: --help starts with its usage"
    opts=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$usage" | sort -u)
    if [ -n "$opts" ]; then
        body=$(sed -n '/^Options:/,$p' <<<"$h")
        isnt "$body" "" "$gc: --help has an Options section"
        missing=
        for o in $opts; do
            # each option starts a line of the section and has words after it
            grep -qE -- "^  ([^ ].*[ ,/])?$o([ ,=/].*)?  +[^ ]" <<<"$body" ||
                missing="$missing $o"
        done
        is "$missing" "" "$gc: every option of its usage line is explained"
    fi
    like "$h" "^Example: .*exa (-y )?$gc( |$)" "$gc: --help ends with an example"
    [ "$(wc -l <<<"$h")" -ge 5 ]; ok "$gc: more than a one-line help" test $? -eq 0
done <<<"$all"
done_testing
