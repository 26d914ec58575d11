#!/bin/sh
# cubin_same_texts.sh: like cubin_same.sh, but names each configuration by its text, so a
# change of a family's source (hence of its cubin keys) or a new parameter that texts leave
# out at its first value can still be checked: the cubins of the same texts must be equal.
#
# Usage: tests/cubin_same_texts.sh BASE ARCH SKIP FAMILY...
#   e.g. tests/cubin_same_texts.sh d76f2c4 sm_90 TYPE=1 sum dot jacobi
# (SKIP "BN=256&SCALE=1": texts holding every part)
# The sample (tests/cubin_texts_dump.c): default, baselines, every 97th valid
# configuration (CUBIN_TEXTS_EVERY=N: every Nth, 1 the whole space); texts holding SKIP
# (e.g. "" for none) are left out. Exits 0 when the lists of texts and
# every cubin are equal, 1 on the first difference.
set -eu
base=$1 arch=$2 skip=$3
shift 3
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/cubin-texts-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/old" "$work/old.out" "$work/new.out"
git -C "$root" archive "$base" | tar -x -C "$work/old"
echo "building $base in $work/old"
make -C "$work/old" -j2 build/libautotune.a > "$work/old.log" 2>&1 || { tail -20 "$work/old.log"; exit 1; }
echo "building the working tree"
make -C "$root" -j2 build/libautotune.a > "$work/new.log" 2>&1 || { tail -20 "$work/new.log"; exit 1; }
cuda=${CUDA_HOME:-/usr/local/cuda}
for side in old new; do
    if [ "$side" = old ]; then tree="$work/old"; else tree="$root"; fi
    cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I"$tree/runtime" -I"$tree/driver" \
        -I"$tree/templates" -I"$cuda/include" "$root/tests/cubin_texts_dump.c" \
        "$tree/build/libautotune.a" -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lnvrtc -lsqlite3 \
        -ldl -lpthread -lm -o "$work/dump-$side"
    echo "compiling the sample with $side ($arch)"
    "$work/dump-$side" "$work/$side.out" "$arch" "$skip" "$@" > "$work/$side.list"
done
if ! diff "$work/old.list" "$work/new.list"; then
    echo "DIFFERENT: the lists of configurations or cubin sizes"
    exit 1
fi
n=0
for f in "$work/new.out"/*.cubin; do
    name=$(basename "$f")
    cmp -s "$f" "$work/old.out/$name" || { echo "DIFFERENT: $name"; exit 1; }
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no cubins were written"; exit 1; }
echo "all $n cubins byte-identical to $base ($arch) for the same configuration texts"
