#!/bin/bash
# check-layering.sh [ROOT] - the include and call layering scan of `make check`
# (doc/design.md §1.7, §2; doc/architecture.md "Layering").
#
# Fails (exit 1, one line per violation: "FILE:LINE: rule: what") when
#   1. a file in src/cmd/ or src/server/ (the front ends) includes
#      libtransport/*, libutil/subprocess.h or <sqlite3.h>, or calls
#      transport_*(), subprocess_*(), sqlite3_*(), fleet_conn_transport() or
#      fleet_cluster_transport(): front ends open clusters through libfleet
#      and never build a transport, run a subprocess or touch SQLite;
#   2. a library (src/lib*/) includes cmd/ or server/;
#   3. a layer includes a layer above it (the order of doc/design.md §2:
#      libutil < libhostlist < libres < libtransport < libsched <
#      libdiscovery < libstore < libauth < libfleet < libobserve <
#      libpipeline < libview < libwork, libtask, libprovision, libworker < libmcp
#      < cmd, server; cmd/ and server/ are the one front-end tier, and server/
#      never includes cmd/);
#   4. a C string literal outside src/libstore/ holds an SQL statement
#      keyword (SELECT INSERT UPDATE DELETE CREATE, upper case, as a word):
#      SQL lives only in libstore.
# Comments are ignored; adjacent string literals are joined before rule 4.
# ROOT defaults to the repository this script is in. Exit 0 when clean.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# Known violations that colleagues are removing right now, as "FILE RULE"
# (RULE: frontend, libfront, layer, sql). Each entry names why it is here;
# the list must end empty (doc/architecture.md). An entry that no longer
# matches anything is reported on stderr (not a failure, so that the
# colleague who fixes it is not blocked) and should then be removed.
allow=(
)

perl -e '
use strict; use warnings;
my %layer = (libutil=>0, libhostlist=>1, libres=>1.5, libtransport=>2, libsched=>3,
             libdiscovery=>4, libstore=>5, libauth=>5.5, libfleet=>6, libobserve=>7,
             libpipeline=>8, libview=>8.5, libwork=>9, libtask=>9, libprovision=>9, libworker=>9,
             libmcp=>9.5,
             cmd=>10, server=>10);
my %allow; my %used;
for (@ARGV) { $allow{$_} = 1; }
my @files = split /\n/, `find src -type f \\( -name "*.c" -o -name "*.h" \\) | sort`;
my $bad = 0;
sub report { my ($f, $ln, $rule, $msg) = @_;
    if ($allow{"$f $rule"}) { $used{"$f $rule"} = 1; return; }
    print "$f:$ln: $rule: $msg\n"; $bad++; }
for my $f (@files) {
    my ($dir) = $f =~ m{^src/([^/]+)/} or next;
    open my $fh, "<", $f or die "$f: $!";
    local $/; my $src = <$fh>; close $fh;
    # Blank comments and the contents of string/char literals, keeping
    # line breaks so line numbers stay right; collect the literals.
    my $code = ""; my @lits;   # [line, text]
    my $line = 1; my $i = 0; my $n = length $src;
    while ($i < $n) {
        my $c = substr($src, $i, 1);
        if ($c eq "/" && substr($src, $i, 2) eq "/*") {
            my $e = index($src, "*/", $i + 2); $e = $n - 2 if $e < 0;
            my $t = substr($src, $i, $e + 2 - $i);
            my $nl = ($t =~ tr/\n//); $line += $nl;
            $code .= " " . ("\n" x $nl); $i = $e + 2; next;
        }
        if ($c eq "/" && substr($src, $i, 2) eq "//") {
            my $e = index($src, "\n", $i); $e = $n if $e < 0;
            $code .= " "; $i = $e; next;
        }
        if ($c eq "\"" || $c eq "\x27") {
            my $j = $i + 1; my $t = "";
            while ($j < $n && substr($src, $j, 1) ne $c) {
                if (substr($src, $j, 1) eq "\\") { $t .= substr($src, $j, 2); $j += 2; next; }
                $t .= substr($src, $j, 1); $j++;
            }
            my $nl = ($t =~ tr/\n//);
            push @lits, [$line, $t, length($code), length($code) + 2 + $nl] if $c eq "\"";
            $code .= $c . ("\n" x $nl) . $c;
            $line += ($t =~ tr/\n//); $i = $j + 1; next;
        }
        $line++ if $c eq "\n";
        $code .= $c; $i++;
    }
    my $front = ($dir eq "cmd" || $dir eq "server");
    # includes (from the raw source; comments cannot hide a directive
    # that the compiler sees, and commented-out ones are skipped below)
    my @lines = split /\n/, $src, -1;
    my @clines = split /\n/, $code, -1;
    for my $k (0..$#lines) {
        my $l = $lines[$k];
        next unless ($clines[$k] =~ /^\s*#\s*include/);
        my $ln = $k + 1;
        if ($l =~ /^\s*#\s*include\s*<sqlite3\.h>/ && $front) {
            report($f, $ln, "frontend", "includes <sqlite3.h> (SQL lives in libstore)");
        }
        next unless $l =~ /^\s*#\s*include\s*"([^"\/]+)\/([^"]+)"/;
        my ($inc, $path) = ($1, $2);
        if ($front && ($inc eq "libtransport" || "$inc/$path" eq "libutil/subprocess.h")) {
            report($f, $ln, "frontend", "includes $inc/$path (front ends open clusters through libfleet)");
            next;
        }
        if ($dir =~ /^lib/ && ($inc eq "cmd" || $inc eq "server")) {
            report($f, $ln, "libfront", "a library includes $inc/$path");
            next;
        }
        if ($dir eq "server" && $inc eq "cmd") {
            report($f, $ln, "layer", "server/ includes $inc/$path (the CLI front end)");
            next;
        }
        if (!exists $layer{$inc}) {
            report($f, $ln, "layer", "includes $inc/$path from a folder with no layer");
            next;
        }
        if (exists $layer{$dir} && $layer{$inc} > $layer{$dir}) {
            report($f, $ln, "layer", "$dir includes $inc/$path, a layer above it");
        }
    }
    if ($front) {
        for my $k (0..$#clines) {
            my $l = $clines[$k];
            while ($l =~ /\b((?:transport|subprocess|sqlite3)_\w+|fleet_conn_transport|fleet_cluster_transport)\s*\(/g) {
                report($f, $k + 1, "frontend", "calls $1() (front ends never build a transport, run a subprocess or use SQLite)");
            }
        }
    }
    if ($dir ne "libstore") {
        # join adjacent literals: "UPDATE x" " SET y"
        my @joined;
        for my $li (@lits) {
            my ($ln, $t, $start, $end) = @$li;
            if (@joined && substr($code, $joined[-1][3], $start - $joined[-1][3]) =~ /^\s*$/) {
                $joined[-1][1] .= $t; $joined[-1][3] = $end; next;
            }
            push @joined, [$ln, $t, $start, $end];
        }
        for my $li (@joined) {
            if ($li->[1] =~ /\b(SELECT|INSERT|UPDATE|DELETE|CREATE)\b/) {
                report($f, $li->[0], "sql", "SQL keyword $1 in a string literal (SQL lives only in src/libstore/)");
            }
        }
    }
}
for my $k (sort keys %allow) {
    next if $used{$k};
    print STDERR "check-layering: allowlist entry \x27$k\x27 matches nothing; remove it\n";
}
exit($bad ? 1 : 0);
' -- "${allow[@]+"${allow[@]}"}"
