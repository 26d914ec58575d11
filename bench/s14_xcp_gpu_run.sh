#!/bin/bash
# bench/s14_xcp_gpu_run.sh: the transposed-copy plan A/B (bench/lists/s14_xcp.txt) on one H200:
# every line verified on ragged shapes, then timed at 4096^3 NN, NT and TT with cuBLAS (same ops)
# in paired rounds. The variant (XCP in templates/matmul.cu at 0ef8c1a) lost on every line and was
# reverted: bench/results/2026-11-28-H200-matmul-xcp-ab-s14.txt. usage (repository root, carry .dev): COMMIT=hash bash bench/s14_xcp_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
make -j"$(nproc)" build/bench/bench_matmul > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
{
    echo "# transposed-copy plan A/B: bench_matmul --sweep, list bench/lists/s14_xcp.txt"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: ${COMMIT:-?}"
    nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader | sed 's/^/# GPU: /'
    echo "# CUDA toolkit: $(nvcc --version | grep -o 'release [0-9.]*')"
    BN_SWEEP_LIST=bench/lists/s14_xcp.txt timeout 100 build/bench/bench_matmul --sweep \
        1023x1025x1021,1023x1025x1021:NT,1023x1025x1021:TT,97x131x77:NT,97x131x77:TT,97x131x77 1 30 5 2>&1
    echo "exit status $?"
    BN_SWEEP_LIST=bench/lists/s14_xcp.txt BN_SWEEP_PAIRS=${PAIRS:-8} BN_SWEEP_ROUNDS=${ROUNDS:-9} \
        timeout ${TLIM:-420} build/bench/bench_matmul --sweep \
        4096x4096x4096:NT,4096x4096x4096:TT,4096x4096x4096 1 30 2>&1
    echo "exit status $?"
} > "$OUT/xcp.txt" 2>&1
grep -vE "^skipped" "$OUT/xcp.txt" | cut -c1-260 | tail -80
