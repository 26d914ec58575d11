#!/bin/sh
# report_same.sh: builds revision BASE (default HEAD) and this working tree,
# writes the report of every test fixture database with both and compares them.
#
# Usage: tests/report_same.sh [BASE]   (from anywhere inside the repository)
# The databases come from this tree's report tests (kept with
# AUTOTUNE_KEEP_TMP); the generation time is the only text masked. Exits 0
# when every report is byte-identical, 1 on the first difference.
set -eu
base=${1:-HEAD}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/report-same-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/old" "$work/tmp"
git -C "$root" archive "$base" | tar -x -C "$work/old"
echo "building $base in $work/old"
make -C "$work/old" -j2 build/autotune > "$work/old.log" 2>&1 || { tail -20 "$work/old.log"; exit 1; }
echo "building the working tree"
make -C "$root" -j2 build/autotune build/run_tests > "$work/new.log" 2>&1 || { tail -20 "$work/new.log"; exit 1; }
for t in report_fixture report_rich report_errors; do
    (cd "$root" && TMPDIR="$work/tmp" AUTOTUNE_KEEP_TMP=1 AUTOTUNE_SKIP_COMPILE_ALL=1 \
        build/run_tests "$t" > "$work/tests.log" 2>&1) || { cat "$work/tests.log"; exit 1; }
done
mask() { sed 's/^<p class="muted">Generated [0-9-]* [0-9:]* UTC /<p class="muted">Generated (time) /' "$1"; }
n=0
for db in $(find "$work/tmp" -name '*.db' | sort); do
    for side in old new; do
        if [ "$side" = old ]; then bin="$work/old/build/autotune"; else bin="$root/build/autotune"; fi
        set +e
        "$bin" report --db "$db" -o "$work/$side.html" > "$work/$side.out" 2>&1
        echo "exit $?" >> "$work/$side.out"
        set -e
        sed -i "s|$work/$side.html|OUT|" "$work/$side.out"
        if [ -f "$work/$side.html" ]; then mask "$work/$side.html" > "$work/$side.masked"; rm "$work/$side.html"
        else : > "$work/$side.masked"; fi
    done
    if ! cmp -s "$work/old.out" "$work/new.out" || ! cmp -s "$work/old.masked" "$work/new.masked"; then
        echo "DIFFERENT: report of $db"
        diff "$work/old.out" "$work/new.out" || true
        diff "$work/old.masked" "$work/new.masked" | head -40 || true
        exit 1
    fi
    echo "same: $(basename "$db") ($(wc -c < "$work/new.masked") bytes, $(tail -1 "$work/new.out"))"
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no fixture databases were written"; exit 1; }
echo "all $n reports byte-identical to $base (generation time masked)"
