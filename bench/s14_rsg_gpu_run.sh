#!/bin/bash
# bench/s14_rsg_gpu_run.sh: the register-staged copies A/B (bench/lists/s14_rsg.txt) on one H200:
# every line verified on ragged shapes, then timed at 4096^3 NN, NT and TT with cuBLAS (same ops)
# in paired rounds, with the SASS opcode counts of each variant's kernel (cuobjdump on the device). The variant
# (RSG in templates/matmul.cu at 62bb1c2) lost on every line and was reverted:
# bench/results/2026-11-28-H200-matmul-rsg-ab-s14.txt. usage (repository root, carry .dev): COMMIT=hash bash bench/s14_rsg_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
make -j"$(nproc)" build/bench/bench_matmul > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
{
    echo "# SASS opcodes of matmul_tuned per list line (sm_90, nvcc -cubin, cuobjdump -sass)"
    sass_counts() {   # line number, configuration, extra options: one line of opcode counts
        local D; D=$(echo "$2" | sed 's/,/ -D/g; s/^/-D/')
        nvcc -cubin -arch=sm_90 -O3 $D $3 templates/matmul.cu -o /tmp/k$1.cubin 2>/dev/null &&
        echo "$2 $3: $(cuobjdump -sass -fun matmul_tuned /tmp/k$1.cubin 2>/dev/null | grep -oE '^ +/\*[0-9a-f]+\*/ +[@!A-Z0-9_.]+( [A-Z0-9_.]+)?' |
            awk '{o=$2; if (o ~ /^@/) o=o " " $3; sub(/\..*/, "", o); n[o]++} END {for (k in n) if (n[k] >= 8) printf "%s %d, ", k, n[k]}')" > /tmp/sass$1.txt
    }
    i=0
    while read -r cfg defs; do
        case "$cfg" in ''|'#'*) continue ;; esac
        i=$((i + 1)); sass_counts $i "$cfg" "$defs" &
    done < bench/lists/s14_rsg.txt
    wait
    for k in $(seq 1 $i); do cat /tmp/sass$k.txt 2>/dev/null; done
    echo "# register-staged copies A/B: bench_matmul --sweep, list bench/lists/s14_rsg.txt"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: ${COMMIT:-?}"
    nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader | sed 's/^/# GPU: /'
    echo "# CUDA toolkit: $(nvcc --version | grep -o 'release [0-9.]*')"
    BN_SWEEP_LIST=bench/lists/s14_rsg.txt timeout 100 build/bench/bench_matmul --sweep \
        1023x1025x1024,1023x1025x1024:NT,1023x1025x1024:TT,1024x1024x1024:NT,1023x1025x1021:NT,260x264x512:TT 1 30 5 2>&1
    echo "exit status $?"
    BN_SWEEP_LIST=bench/lists/s14_rsg.txt BN_SWEEP_PAIRS=${PAIRS:-8} BN_SWEEP_ROUNDS=${ROUNDS:-9} \
        timeout ${TLIM:-420} build/bench/bench_matmul --sweep \
        4096x4096x4096:NT,4096x4096x4096:TT,4096x4096x4096 1 30 2>&1
    echo "exit status $?"
} > "$OUT/rsg.txt" 2>&1
grep -vE "^skipped" "$OUT/rsg.txt" | cut -c1-260 | tail -80
