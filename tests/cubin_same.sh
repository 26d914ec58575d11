#!/bin/sh
# cubin_same.sh: builds revision BASE (default main) and this working tree,
# compiles the same sample of every family's configurations with both and compares.
#
# Usage: tests/cubin_same.sh [BASE [ARCH...]]   (default archs: sm_90 sm_80)
# The sample (tests/cubin_dump.c): each family's default, its baselines and
# five valid configurations evenly spaced over its space. Every cubin must
# be byte-identical and every manifest line (size, cubin key, configuration)
# equal. Exits 0 then, 1 on the first difference.
set -eu
base=${1:-main}
[ $# -gt 0 ] && shift
archs=${*:-sm_90 sm_80}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/cubin-same-XXXXXX")
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
    # the same program, compiled against each tree's headers and library
    cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I"$tree/runtime" -I"$tree/driver" \
        -I"$tree/templates" -I"$cuda/include" "$root/tests/cubin_dump.c" "$tree/build/libautotune.a" \
        -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lnvrtc -lsqlite3 -ldl -lpthread -lm \
        -o "$work/dump-$side"
    echo "compiling the sample with $side ($archs)"
    # shellcheck disable=SC2086  # one argument per architecture
    "$work/dump-$side" "$work/$side.out" $archs
done
if ! diff "$work/old.out/manifest" "$work/new.out/manifest"; then
    echo "DIFFERENT: the manifests (sizes, cubin keys or configurations)"
    exit 1
fi
n=0
for f in "$work/new.out"/*.cubin; do
    name=$(basename "$f")
    cmp -s "$f" "$work/old.out/$name" || { echo "DIFFERENT: $name"; exit 1; }
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no cubins were written"; exit 1; }
grep '^#' "$work/new.out/manifest"
echo "all $n cubins byte-identical to $base ($archs), cubin keys equal"
