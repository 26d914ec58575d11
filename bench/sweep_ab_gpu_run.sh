#!/bin/bash
# bench/sweep_ab_gpu_run.sh: a source-variant A/B of the matmul family on one H200, from a
# `bench_matmul --sweep` list whose lines may add compiler options ("CONFIG -DVARIANT=1"): every line
# verified on CHECK_SHAPES, then timed on TIME_SHAPES against cuBLAS (same ops) in paired rounds; with
# SASS=1 first the SASS opcode counts of each line's matmul_tuned (nvcc and cuobjdump on the device).
# Session 14 ran it as bench/s14_xcp_gpu_run.sh (0ef8c1a) and bench/s14_rsg_gpu_run.sh (62bb1c2).
# usage (repository root, carry .dev):
#   COMMIT=hash LIST=bench/lists/FILE.txt CHECK_SHAPES=... [TIME_SHAPES=...] [SASS=1] bash bench/sweep_ab_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
LIST=${LIST:?LIST=bench/lists/FILE.txt}
CHECK_SHAPES=${CHECK_SHAPES:?CHECK_SHAPES=MxNxK[:ops],... (ragged shapes that verify every line)}
TIME_SHAPES=${TIME_SHAPES:-4096x4096x4096:NT,4096x4096x4096:TT,4096x4096x4096}
NAME=$(basename "$LIST" .txt)
source bench/gpu_lib.sh
build build/bench/bench_matmul || exit 1
sass_counts() {   # line number, configuration, extra options: one line of opcode counts
    local D; D=$(echo "$2" | sed 's/,/ -D/g; s/^/-D/')
    nvcc -cubin -arch=sm_90 -O3 $D $3 templates/matmul.cu -o /tmp/k$1.cubin 2>/dev/null &&
    echo "$2 $3: $(cuobjdump -sass -fun matmul_tuned /tmp/k$1.cubin 2>/dev/null | grep -oE '^ +/\*[0-9a-f]+\*/ +[@!A-Z0-9_.]+( [A-Z0-9_.]+)?' |
        awk '{o=$2; if (o ~ /^@/) o=o " " $3; sub(/\..*/, "", o); n[o]++} END {for (k in n) if (n[k] >= 8) printf "%s %d, ", k, n[k]}')" > /tmp/sass$1.txt
}
{
    if [ "${SASS:-0}" = 1 ]; then
        echo "# SASS opcodes of matmul_tuned per list line (sm_90, nvcc -cubin, cuobjdump -sass)"
        i=0
        while read -r cfg defs; do
            case "$cfg" in ''|'#'*) continue ;; esac
            i=$((i + 1)); sass_counts $i "$cfg" "$defs" &
        done < "$LIST"
        wait
        for k in $(seq 1 $i); do cat /tmp/sass$k.txt 2>/dev/null; done
    fi
    header "A/B: bench_matmul --sweep, list $LIST"
    BN_SWEEP_LIST="$LIST" timeout 100 build/bench/bench_matmul --sweep "$CHECK_SHAPES" 1 30 5 2>&1
    echo "exit status $?"
    BN_SWEEP_LIST="$LIST" BN_SWEEP_PAIRS=${PAIRS:-8} BN_SWEEP_ROUNDS=${ROUNDS:-9} \
        timeout ${TLIM:-420} build/bench/bench_matmul --sweep "$TIME_SHAPES" 1 30 2>&1
    echo "exit status $?"
} > "$OUT/$NAME.txt" 2>&1
grep -vE "^skipped" "$OUT/$NAME.txt" | cut -c1-260 | tail -80
