#!/bin/bash
# `exa hpc COMMAND --help` (issue 13): every hpc command explains what it
# does, lists each option of its usage line in an Options section with a
# sentence, and ends with an example of itself; the models, finops,
# pipeline and debug commands and exa train give an example as well.
. "$(dirname "$0")/lib.sh"
exa_test_env
cmds=$("$EXA" hpc --help | awk '/^commands:/{f=1;next} f&&/^  [a-z]/{print $1}')
isnt "$cmds" "" "exa hpc --help lists the commands"
for c in $cmds; do
    h=$("$EXA" hpc "$c" --help)
    usage=$(head -1 <<<"$h")
    body=$(sed -n '/^Options:/,$p' <<<"$h")
    missing=
    for o in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$usage" | sort -u); do
        grep -q -- "$o" <<<"$body" || missing="$missing $o"
    done
    is "$missing" "" "hpc $c: every option of its usage line is explained"
    like "$h" "^Example: exa (-y )?hpc $c( |$)" "hpc $c: --help ends with an example"
    [ "$(wc -l <<<"$h")" -ge 6 ]; ok "hpc $c: more than a one-line help" test $? -eq 0
done
# the other groups' commands and exa train end with an example too
for gc in "models list" "models show" "models cost-list" "finops carbon" \
    "finops cost" "pipeline run" "debug parse" "train"; do
    h=$("$EXA" $gc --help)
    like "$h" "^Example: .*exa $gc( |$)" "$gc: --help ends with an example"
done
done_testing
