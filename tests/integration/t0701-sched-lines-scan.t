#!/bin/bash
# The line-splitting scan of `make check` (scripts/check-sched-lines.sh):
# it passes on this tree, and fails, naming file, line and function, on a
# copy of the tree with one planted violation of each rule; the same code
# in a parser file, in a comment or on an allowlisted function passes.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

out=$("$SRC/scripts/check-sched-lines.sh" "$SRC" 2>&1); rc=$?
is "$rc" 0 "the scan passes on the tree"
[ "$rc" = 0 ] || diag "$out"
is "$out" "" "and prints nothing (no stale allowlist entry either)"

# tree FILE TEXT: a copy of src/ with TEXT (a function whose line 3 is the
# offending one) appended to FILE; sets LINE to that line.
tree() {
    local file=$1 text=$2
    rm -rf "$T/tree" && mkdir -p "$T/tree" && cp -r "$SRC/src" "$T/tree/"
    mkdir -p "$(dirname "$T/tree/$file")"
    LINE=$(( $(wc -l <"$T/tree/$file" 2>/dev/null || echo 0) + 3 ))
    printf '%s\n' "$text" >>"$T/tree/$file"
}

# plant FILE FUNC TEXT DESC: expect exit 1 and "FILE:LINE: FUNC:".
plant() {
    local file=$1 func=$2 text=$3 desc=$4
    tree "$file" "$text"
    out=$("$SRC/scripts/check-sched-lines.sh" "$T/tree" 2>&1); rc=$?
    is "$rc" 1 "$desc: the scan fails"
    if grep -qF "$file:$LINE: $func:" <<<"$out"; then
        _tap_result 1 "$desc: names $file:$LINE ($func)"
    else
        _tap_result 0 "$desc: names $file:$LINE ($func)"
        diag "$out"
    fi
}

# clean FILE TEXT DESC: expect exit 0.
clean() {
    tree "$1" "$2"
    out=$("$SRC/scripts/check-sched-lines.sh" "$T/tree" 2>&1); rc=$?
    is "$rc" 0 "$3: the scan passes"
    [ "$rc" = 0 ] || diag "$out"
}

nl_split='static void planted(char *p)
{
    char *nl = strchr(p, '"'"'\n'"'"');
    (void)nl;
}'
plant src/libsched/slurm.c planted "$nl_split" \
    "strchr(p, '\\n') in slurm.c (rule 1)"
plant src/libobserve/collect.c planted 'static void planted(const char *b, size_t n)
{
    const char *bar = memchr(b,
                             '"'"'|'"'"', n);
    (void)bar;
}' "memchr over two lines with '|' in collect.c (rule 1)"
plant src/cmd/hpc_jobs.c planted 'static void planted(struct strvec *v, const char *s)
{
    strvec_split(v, s, '"'"'\x1f'"'"');
}' "strvec_split on 0x1F in cmd/ (rule 1)"
plant src/libfleet/capacity.c planted 'static void planted(const char *s)
{
    (void)strstr(s, "\n");
}' "strstr with a \"\\n\" literal in libfleet (rule 1)"
plant src/libdiscovery/probe_slurm.c planted 'static size_t planted(const char *b, size_t n)
{
    size_t k = 0; while (k < n && b[k] != 0x1f)
        k++;
    return k;
}' "a loop to 0x1F in probe_slurm.c (rule 2)"
plant src/libsched/flux.c planted 'static char *planted(const struct strbuf *sb)
{
    return first_line_dup(sb);
}' "first_line_dup() in flux.c (rule 3)"

clean src/libsched/parse_squeue.c "$nl_split" "the same split in a parser file"
clean src/libsched/slurm.c '/* strchr(p, '"'"'\n'"'"') in a comment */' "the split in a comment"
clean src/libsched/slurm.c 'static void planted(char *p)
{
    char *c = strchr(p, '"'"','"'"');
    (void)c;
}' "strchr on a comma (not a line or field separator)"
clean src/libsched/sched.c 'int sched_fetch_tail(char *p);
int sched_fetch_tail(char *p)
{
    return strchr(p, '"'"'\n'"'"') != 0;
}' "an allowlisted function (tail's error text)"
done_testing
