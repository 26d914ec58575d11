#!/bin/bash
# tools/carry_sqlite.sh: fills .dev/include and .dev/lib with SQLite's headers and libraries from this
# machine, for building on a GPU host that lacks libsqlite3-dev (HACKING.md), and keeps .dev out of git.
# usage (repository root): bash tools/carry_sqlite.sh
set -eu
inc=$(echo '#include <sqlite3.h>' | ${CC:-cc} -E -H -x c - 2>&1 >/dev/null | awk '/sqlite3.h$/ {print $2; exit}')
[ -n "$inc" ] && [ -f "$inc" ] || { echo "carry_sqlite: no sqlite3.h here (install libsqlite3-dev)" >&2; exit 1; }
lib=$(${CC:-cc} -print-file-name=libsqlite3.so)
[ -f "$lib" ] || { echo "carry_sqlite: no libsqlite3.so here (install libsqlite3-dev)" >&2; exit 1; }
mkdir -p .dev/include .dev/lib
cp "$inc" .dev/include/
[ -f "$(dirname "$inc")/sqlite3ext.h" ] && cp "$(dirname "$inc")/sqlite3ext.h" .dev/include/
cp -a "$(dirname "$(readlink -f "$lib")")"/libsqlite3.* .dev/lib/
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '.dev/' "$exclude" 2>/dev/null || echo '.dev/' >> "$exclude"
echo "carry_sqlite: .dev holds $(ls .dev/include | tr '\n' ' ')and $(ls .dev/lib | wc -l) library files; carry \".dev\""
