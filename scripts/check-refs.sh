#!/bin/bash
# check-refs.sh [ROOT] - the dead-reference scan of `make check`
# (doc/architecture.md "Checks"): fails (exit 1, one line per reference:
# "FILE:LINE: names 'REF', which is not in the repository") when a comment
# names a file that the repository does not hold.
#
# Comments are: /* ... */ and // ... in C sources and headers (.c, .h),
# and # ... lines in shell scripts, test scripts (.sh, .t) and the
# Makefile. A reference is a word that ends in .md, or a path with a '/'
# whose first part is a top-level directory of the repository (src/, doc/,
# tests/, scripts/, fuzz/, bench/, deploy/, data/, include/), a library or
# front-end directory under src/ (libutil/, cmd/, server/, ...) or
# shared/ (material outside the repository: never cited). A reference is
# found when it names a tracked file or directory, from the top, from
# src/, from the citing file's directory, or (a bare name ending in .md) as the name
# of a tracked file anywhere. URLs and globs (src/lib*/, parse_*.c,
# tNNNN-...) are not references. A few references to pages being written
# may be allowed below, each with its reason; the list must end empty.
# ROOT defaults to the repository this script is in. Exit 0 when clean.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files --cached --others --exclude-standard)
else
    files=$(find . -type f -not -path './.git/*' -not -path './build/*' | sed 's|^\./||')
fi
printf '%s\n' "$files" | perl -e '
    use strict; use warnings;
    my @files = map { chomp; $_ } <STDIN>;
    my %have; my %base;
    for my $f (@files) {
        next unless -e $f;
        $have{$f} = 1;
        my @p = split m{/}, $f;
        for my $i (1 .. $#p) { $have{join "/", @p[0 .. $i - 1]} = 1 }
        $base{$p[-1]} = 1;
    }
    opendir(my $d, "src") or die "no src/: run from the repository\n";
    my @libs = grep { -d "src/$_" && !/^\./ } readdir $d;
    closedir $d;
    my $tops = join "|", map { quotemeta } (qw(src doc tests scripts fuzz bench deploy data include shared), @libs);
    # References to pages a colleague is writing now, each with its
    # reason; the list must end empty. (doc/architecture.md "Checks")
    my %allow = map { $_ => 1 } (
        "shared/WORKERS.md",     # workers helper: libtask/ and tasks.h comments
        "WORKERS.md",            # workers helper: as above
        "shared/E2E-TESTING.md", # mcp helper: libmcp/ comments
        "fuzz/fuzz_http_router.c", # api helper: the router fuzz target
        "bench/README.md",         # speed helper: the bench/ page
    );
    # Paths that exist only once built, installed or run (gitignored):
    # npm ci (`make test-deps`) and the screenshots of the browser tests.
    my $generated = qr{^tests/e2e/(?:node_modules|test-results)(?:/|$)};
    my $bad = 0;
    for my $f (@files) {
        my $kind = $f =~ /\.[ch]$/ ? "c" : ($f =~ /\.(sh|t)$/ || $f =~ m{(^|/)Makefile$}) ? "sh" : next;
        open(my $fh, "<", $f) or next;
        local $/; my $text = <$fh>; close $fh;
        my @comments; # [line, text]
        if ($kind eq "c") {
            # strip string and char literals first, keeping line breaks
            my $t = $text;
            while ($t =~ m{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27)}gs) {
                my ($m, $pos) = ($1, $-[1]);
                next unless $m =~ m{^/[*/]};
                my $line = 1 + (substr($t, 0, $pos) =~ tr/\n//);
                my $n = 0;
                for my $l (split /\n/, $m, -1) { push @comments, [$line + $n++, $l] }
            }
        } else {
            my $n = 0;
            for my $l (split /\n/, $text, -1) {
                $n++;
                push @comments, [$n, $1] if $l =~ /^\s*#(.*)$/ || $l =~ /\s#\s(.*)$/;
            }
        }
        (my $dir = $f) =~ s{/[^/]*$}{};
        $dir = "." if $dir eq $f;
        for my $c (@comments) {
            my ($line, $l) = @$c;
            $l =~ s{\b[a-z][a-z0-9+.-]*://\S+}{}gi; # URLs
            my %seen;
            while ($l =~ m~(?<![\w./<>*-])((?>(?:(?:$tops)/[\w.+-]+(?:/[\w.+-]+)*)|[\w.+-]+\.md))(?![\w<>*\x7b\[])~g) {
                my $r = $1;
                $r =~ s/[.]+$//;
                next if $seen{$r}++;
                next if $allow{$r} || $r =~ $generated;
                next if $r =~ /^[\w.+-]+\.md$/ && $base{$r};
                next if $r !~ m{^shared/} &&
                    ($have{$r} || $have{"src/$r"} || $have{"$dir/$r"} ||
                     -e $r || -e "src/$r" || -e "$dir/$r");
                # another project\x27s tree (Slurm\x27s src/common/...): a
                # src/ path whose library this repository does not have
                next if $r =~ m{^src/([^/]+)/} && !$have{"src/$1"};
                print "$f:$line: names \x27$r\x27, which is not in the repository\n";
                $bad++;
            }
        }
    }
    exit($bad ? 1 : 0);
'
