#!/bin/bash
# Man pages and bash completion generated from the command tables (issue
# 13): exa(1), one page per group and exa-env(7), each silent under
# `man --warnings -l`; the completion script, sourced in bash, offers the
# hpc subcommands for `exa hpc <TAB>`, a command's options for `--<TAB>`
# and the registered clusters for `--cluster <TAB>`; `exa help TOPIC`.
. "$(dirname "$0")/lib.sh"
exa_test_env
command -v man >/dev/null || skip_all "man(1) is not installed"

pages=$("$EXA" debug commands --format=list)
is "$(echo "$pages" | head -1) $(echo "$pages" | tail -1)" "exa.1 exa-env.7" "the pages: exa(1) ... exa-env(7)"
echo "$pages" | grep -qx "exa-hpc.1"; ok "one page per group (exa-hpc.1)" test $? -eq 0
for p in $pages; do
    "$EXA" debug commands --format=man --page="${p%.*}" >"$T/$p"
    w=$(LC_ALL=C.UTF-8 man --warnings -l "$T/$p" 2>&1 >/dev/null)
    is "$w" "" "man --warnings -l $p is silent"
done
LC_ALL=C.UTF-8 MANWIDTH=100 man -l "$T/exa-hpc.1" 2>/dev/null >"$T/hpc.txt"
grep -q "exa hpc queue \[--cluster/-c NAME\]" "$T/hpc.txt"; ok "exa-hpc(1) has each command's usage" test $? -eq 0
grep -q "the scheduler queue of an ACTIVE cluster" "$T/hpc.txt"; ok "and its summary" test $? -eq 0
LC_ALL=C.UTF-8 MANWIDTH=100 man -l "$T/exa-env.7" 2>/dev/null | grep -q "EXAMLOPS_DB"
ok "exa-env(7) lists EXAMLOPS_DB" test $? -eq 0
if [ -f "$SRCDIR/build/man/exa-hpc.1" ]; then
    cmp -s "$SRCDIR/build/man/exa-hpc.1" "$T/exa-hpc.1"; ok "the build wrote the same pages (make)" test $? -eq 0
else
    skip "the build wrote the same pages" "no build/man in this tree"
fi

"$EXA" debug commands --format=bash >"$T/exa.bash"
"$EXA" hpc connect local --name alpha --scheduler mock >/dev/null
"$EXA" hpc connect local --name beta --scheduler mock >/dev/null
# complete WORDS...: the candidates bash would offer for the last word
complete_words() {
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _exa; printf "%s\n" "${COMPREPLY[@]}"' _ "$T/exa.bash" "$@" | sort | tr '\n' ' '
}
got=$(complete_words "$EXA" hpc "")
for c in detect clusters approve queue jobs submit wait logs; do
    like "$got" "(^| )$c( |$)" "exa hpc <TAB> offers $c"
done
is "$(complete_words "$EXA" hpc qu)" "queue " "exa hpc qu<TAB> completes queue"
is "$(complete_words "$EXA" hpc queue --cluster "")" "alpha beta " "--cluster <TAB> offers the registered clusters"
is "$(complete_words "$EXA" hpc queue -c b)" "beta " "-c b<TAB> completes beta"
like "$(complete_words "$EXA" hpc queue --)" "--cluster" "exa hpc queue --<TAB> offers its options"
like "$(complete_words "$EXA" pip)" "pipeline" "exa pip<TAB> completes the group"
like "$(complete_words "$EXA" pipeline run --max)" "--max-skip" "pipeline run's options come from its usage line"

run_exa help hpc queue
is "$RC" 0 "exa help hpc queue"
like "$OUT" "^usage: exa hpc queue" "prints the command's help"
run_exa help hpc
like "$OUT" "^usage: exa hpc COMMAND" "exa help hpc prints the group's"
run_exa help env
like "$OUT" "EXAMLOPS_DB +platform.db" "exa help env lists the environment"
run_exa help nosuch
is "$RC" 2 "an unknown topic is a usage error"
done_testing
