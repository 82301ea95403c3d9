#!/bin/bash
# check-sched-lines.sh [ROOT] - the "one parser per tool output" scan of
# `make check` (doc/style.md, issue 15; doc/architecture.md "One parser
# per tool output"): scheduler output is split into lines and fields only
# by the parser files, never by the code that runs the commands.
#
# Scope: every .c and .h file under src/libsched, src/libdiscovery,
# src/libobserve, src/libfleet, src/cmd and src/server, except the parser
# files, which are allowed to split:
#   - src/lib*/parse_*.c, parse_*.h, *_int.h of the parsers
#     (parse_slurm_int.h, parse_flux_int.h),
#   - src/libsched/slurm_table.c (the shared table splitter),
#   - src/libres/ and src/libutil/ (not in scope: below the adapters).
# Comments are ignored; string literals count only as separators (below).
#
# A violation (exit 1, one line "FILE:LINE: FUNCTION: what") is any of
#   1. a call of strchr, strrchr, memchr, memrchr, strchrnul, strcspn,
#      strpbrk, strsep, strtok_r, strstr, memmem, strvec_split, getline,
#      getdelim or sscanf whose arguments hold a line or field separator
#      of scheduler output: the character constants '\n' '|' '\x1e'
#      '\x1f' '\036' '\037', the numbers 0x1e / 0x1f, or a string literal
#      made only of such characters ("\n", "|", "\x1f", ...);
#   2. a while/for loop whose condition compares a byte with one of those
#      character constants using != (the "advance to the separator" idiom
#      of a hand-written line splitter);
#   3. a call of first_line or first_line_dup, the private "first line of
#      the output" readers this rule replaced by tool_message()
#      (libsched/parse_message.h, a parser file).
# Not covered: splitting through a helper of another name, or a loop
# written with == instead of !=; review keeps those out.
# The allowlist below names functions (FILE FUNCTION) that split text
# which is not scheduler output (files exa writes itself, ssh host keys,
# tail(1)'s error text); each entry says what it reads. An entry that
# matches nothing is reported on stderr (not a failure) and should go.
# ROOT defaults to the repository this script is in. Exit 0 when clean.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

allow=(
    # tail(1)'s stderr when a log file cannot be read (a file, not a
    # scheduler answer)
    "src/libsched/sched.c sched_fetch_tail"
    # the exporter's own "cluster<TAB>age" table, written by exa
    "src/libobserve/exporter.c obs_exporter_scrape_begin"
    # GPU -> job mapping files written by exa (jobmap.c writes them)
    "src/libobserve/jobmap.c read_ids"
    # known_hosts lines (EXAMLOPS_HPC_SSH_KNOWN_HOSTS, pinned keys): ssh
    "src/libfleet/gate.c kh_key_lines"
    "src/libfleet/gate.c target_host_keys"
    # ssh-keyscan / known_hosts / public key text (host key pinning)
    "src/libfleet/governance.c fleet_pubkey_fingerprint"
    "src/libfleet/governance.c fleet_host_key_fingerprint"
)

perl -e '
use strict; use warnings;
my %allow; my %used;
$allow{$_} = 1 for @ARGV;
my @dirs = qw(src/libsched src/libdiscovery src/libobserve src/libfleet
              src/cmd src/server);
my @files = grep { -f } split /\n/,
    `find @dirs -type f \\( -name "*.c" -o -name "*.h" \\) 2>/dev/null | sort`;
my $sepchr = qr{\x27(?:\\n|\||\\x1[eEfF]|\\03[67])\x27};
my $bad = 0;
for my $f (@files) {
    my $base = $f; $base =~ s{.*/}{};
    next if $base =~ /^parse_/;
    next if $base =~ /^parse_.*_int\.h$/;
    next if $f eq "src/libsched/slurm_table.c";
    open my $fh, "<", $f or die "$f: $!";
    local $/; my $src = <$fh>; close $fh;
    # Blank comments (keeping line breaks); replace string literals by
    # SEPSTR when made only of separators, else by an empty literal.
    my $code = ""; my $i = 0; my $n = length $src;
    while ($i < $n) {
        my $c = substr($src, $i, 1);
        if (substr($src, $i, 2) eq "/*") {
            my $e = index($src, "*/", $i + 2); $e = $n - 2 if $e < 0;
            my $t = substr($src, $i, $e + 2 - $i);
            $code .= " " . ("\n" x ($t =~ tr/\n//)); $i = $e + 2; next;
        }
        if (substr($src, $i, 2) eq "//") {
            my $e = index($src, "\n", $i); $e = $n if $e < 0;
            $i = $e; next;
        }
        if ($c eq "\"") {
            my $j = $i + 1; my $t = "";
            while ($j < $n && substr($src, $j, 1) ne "\"") {
                if (substr($src, $j, 1) eq "\\") { $t .= substr($src, $j, 2); $j += 2; next; }
                $t .= substr($src, $j, 1); $j++;
            }
            my $only = ($t ne "" && $t =~ /^(?:\\n|\||\\x1[eEfF]|\\03[67])+$/);
            $code .= $only ? "SEPSTR" : "\"\"";
            $i = $j + 1; next;
        }
        if ($c eq "\x27") {
            my $j = $i + 1;
            $j++ while ($j < $n && substr($src, $j, 1) ne "\x27" &&
                        (substr($src, $j, 1) ne "\\" || ($j++, 1)));
            $code .= substr($src, $i, $j + 1 - $i); $i = $j + 1; next;
        }
        $code .= $c; $i++;
    }
    # function of each line: the last column-0 "name(" before a column-0 "{"
    my @lines = split /\n/, $code, -1;
    my @fn; my $cur = "(file scope)"; my $cand;
    for my $k (0..$#lines) {
        my $l = $lines[$k];
        if ($l =~ /^[A-Za-z_][^;=]*?\b([A-Za-z_]\w*)\s*\(/ && $l !~ /^\s*#/) { $cand = $1; }
        if ($l =~ /^\{/ && defined $cand) { $cur = $cand; }
        if ($l =~ /^\}/) { $fn[$k] = $cur; $cur = "(file scope)"; next; }
        $fn[$k] = $cur;
    }
    my $line_of = sub { my $pos = shift; return (substr($code, 0, $pos) =~ tr/\n//); };
    my $report = sub {
        my ($pos, $what) = @_;
        my $k = $line_of->($pos);
        my $func = $fn[$k] // "(file scope)";
        if ($allow{"$f $func"}) { $used{"$f $func"} = 1; return; }
        print "$f:", $k + 1, ": $func: $what\n"; $bad++;
    };
    my $paren; $paren = qr{\((?:[^()]++|(??{$paren}))*\)};
    # rule 1
    while ($code =~ /\b(strchr|strrchr|memchr|memrchr|strchrnul|strcspn|strpbrk|strsep|strtok_r|strstr|memmem|strvec_split|getline|getdelim|sscanf)\s*($paren)/g) {
        my ($name, $args, $pos) = ($1, $2, $-[0]);
        if ($args =~ /$sepchr|SEPSTR|\b0x1[eEfF]\b/) {
            $report->($pos, "$name() with a line/field separator splits output outside the parser files");
        }
    }
    # rule 2
    while ($code =~ /\b(while|for)\s*($paren)/g) {
        my ($kw, $cond, $pos) = ($1, $2, $-[0]);
        if ($cond =~ /!=\s*(?:$sepchr|\b0x1[eEfF]\b)/) {
            $report->($pos, "$kw loop scanning to a line/field separator outside the parser files");
        }
    }
    # rule 3
    while ($code =~ /\b(first_line|first_line_dup)\s*\(/g) {
        my ($name, $pos) = ($1, $-[0]);
        # the helpers definitions themselves
        my $k = $line_of->($pos);
        next if $lines[$k] =~ /^(?:static\s+)?(?:inline\s+)?(?:void|char\s*\*)\s*\b$name\s*\(/;
        $report->($pos, "$name() reads a line of command output outside the parser files");
    }
}
for my $k (sort keys %allow) {
    next if $used{$k};
    print STDERR "check-sched-lines: allowlist entry \x27$k\x27 matches nothing; remove it\n";
}
exit($bad ? 1 : 0);
' -- "${allow[@]}"
