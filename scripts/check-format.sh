#!/bin/sh
# check-format.sh - fail when clang-format (with the checked-in
# .clang-format) would change a tracked C source or header. Lists each
# such file; `make fmt` rewrites them. Run by `make check`.
set -eu
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null 2>&1 || {
    echo "check-format.sh: clang-format not found: install the Debian package clang-format" >&2
    exit 1
}
bad=0
for f in $(git ls-files '*.c' '*.h' 2>/dev/null || find src tests fuzz bench include doc -name '*.[ch]'); do
    [ -f "$f" ] || continue
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then
        echo "check-format.sh: $f: differs from clang-format (run: make fmt)" >&2
        bad=$((bad + 1))
    fi
done
if [ "$bad" -ne 0 ]; then
    echo "check-format.sh: $bad file(s) not formatted" >&2
    exit 1
fi
