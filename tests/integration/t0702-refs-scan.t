#!/bin/bash
# scripts/check-refs.sh (run by make check): the repository's comments name
# only files it holds, and a comment naming a missing file, a page of the
# shared material outside the repository, or a bare name ending in .md
# that no file has fails the scan with FILE:LINE; URLs, globs and other
# projects' paths do not.
. "$(dirname "$0")/lib.sh"
exa_test_env
out=$("$SRCDIR/scripts/check-refs.sh" "$SRCDIR" 2>&1); rc=$?
is "$rc" 0 "the repository has no dead reference"
[ "$rc" = 0 ] || diag "$out"

r=$T/tree
mkdir -p "$r/src/libx" "$r/doc" "$r/scripts"
echo "# ok" >"$r/doc/ok.md"
cat >"$r/src/libx/a.c" <<'C'
/* a.c - cites doc/ok.md and libx/a.c, both here; src/lib*/ is a glob;
 * https://example.org/doc/x.md is a URL; Slurm's src/common/hostlist.c
 * is another project's. */
int f(void); /* line 4 names doc/missing.md */
const char *s = "doc/in-a-string.md"; // shared/REFERENCE.md §4
/* FORMAT.md "Jobs" */
C
cat >"$r/scripts/x.sh" <<'S'
#!/bin/sh
# see src/libx/gone.c
echo doc/not-a-comment.md
S
out=$("$SRCDIR/scripts/check-refs.sh" "$r" 2>&1); rc=$?
out=$(sort <<<"$out")
is "$rc" 1 "a planted dead reference fails the scan"
is "$out" "scripts/x.sh:2: names 'src/libx/gone.c', which is not in the repository
src/libx/a.c:4: names 'doc/missing.md', which is not in the repository
src/libx/a.c:5: names 'shared/REFERENCE.md', which is not in the repository
src/libx/a.c:6: names 'FORMAT.md', which is not in the repository" \
    "each one named with file and line; strings, URLs, globs and foreign paths pass"
grep -q "check-refs.sh" "$SRCDIR/scripts/check.sh"; ok "make check (scripts/check.sh) runs it" test $? -eq 0
done_testing
