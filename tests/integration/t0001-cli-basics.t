#!/bin/bash
# t0001-cli-basics - the front end: version, help, did-you-mean, global
# flags before and after the command, and --json error documents.
. "$(dirname "$0")/lib.sh"
exa_test_env

version=$(cat "$SRCDIR/VERSION")

run_exa --version
is "$RC" 0 "--version exits 0"
is "$OUT" "exa $version" "--version prints the VERSION file"

run_exa --json --version
json_ok "--json --version is {version}" --arg v "$version" '.version == $v'

run_exa --help
is "$RC" 0 "--help exits 0"
like "$OUT" '^  pipeline ' "help lists the pipeline group"
like "$OUT" '^  models ' "help lists the models group"
like "$OUT" '^  hpc ' "help lists the hpc group"
like "$OUT" '^  train ' "help lists exa train"

run_exa
is "$RC" 2 "no arguments is a usage error"
like "$ERR" '^usage: exa ' "and prints usage on stderr"

run_exa --json
is "$RC" 2 "--json with no command exits 2"
json_ok "with one JSON error document, not help text" \
    '.error == "no command given" and .exit_code == 2'

for g in hpc models pipeline finops debug; do
    run_exa --json "$g"
    is "$RC" 2 "--json $g (no command) exits 2"
    json_ok "--json $g (no command): one JSON error naming the group" \
        --arg e "'exa $g' needs a command" --arg h "see 'exa $g --help'" \
        '.error == $e and .exit_code == 2 and .hint == $h'
    run_exa "$g"
    like "$ERR" "^usage: exa $g COMMAND" "$g (no command) prints its usage on stderr"
done

for c in "models list" "models cost-list" "finops carbon providers" \
    "finops cost providers"; do
    # shellcheck disable=SC2086 # $c is the command words
    run_exa --json $c --bogus
    is "$RC" 2 "$c --bogus exits 2"
    json_ok "$c --bogus: 'option is unknown' as a JSON error" \
        '.error == "option '"'--bogus'"' is unknown" and .exit_code == 2'
    # shellcheck disable=SC2086
    run_exa --json $c extra
    json_ok "$c extra: 'unexpected argument'" \
        '.error == "unexpected argument '"'extra'"'" and .exit_code == 2'
done

run_exa pipelin run
is "$RC" 2 "a mistyped group exits 2"
is "$ERR" "exa: error: 'pipelin' is not an exa command
hint: did you mean 'exa pipeline'?" "and suggests the group"

run_exa hpc jbos
is "$RC" 2 "a mistyped command exits 2"
like "$ERR" "did you mean 'exa hpc jobs'\\?" "and suggests the command"

run_exa --json modles list
is "$RC" 2 "--json typo exits 2"
json_ok "--json error is one document {error, exit_code, hint}" '
    .error == "'"'modles'"' is not an exa command" and .exit_code == 2
    and .hint == "did you mean '"'exa models'"'?"'
is "$ERR" "" "--json error leaves stderr empty"

run_exa pipeline run --help
is "$RC" 0 "command --help exits 0"
like "$OUT" '--dataset-path F' "command help lists its options"

run_exa --json hpc jobs --limit x
is "$RC" 2 "a bad option value exits 2"
json_ok "as a JSON error" '.exit_code == 2 and
    (.error | test("--limit.*non-negative integer"))'

run_exa hpc jobs --json
is "$RC" 0 "global --json after the command"
is "$OUT" "[]" "an empty store lists no jobs as []"

run_exa -o json models list
is "$OUT" "[]" "-o json works before the group"

run_exa hpc jobs
is "$OUT" "No HPC jobs tracked yet." "table mode says there are no jobs"

run_exa models show JPCP --version 1
is "$RC" 1 "--version after a command belongs to the command"
is "$ERR" "exa: error: model 'JPCP' has no version 1
hint: see 'exa models show MODEL' for its versions" "and names the version"

done_testing
