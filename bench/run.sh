#!/usr/bin/env bash
# bench/run.sh: `make bench`: tunes (the default sizes, then every matmul
# benchmark shape exhaustively; resumable, skipped where already stored),
# then runs every benchmark against the vendor libraries and saves the output
# with date, GPU, driver and toolkit under bench/results/.
# Knobs (environment): BENCH_SKIP_TUNE=1 skips all tuning; BENCH_DEFAULT_TUNE=0
# skips the default sizes; BENCH_MATMUL_SEARCH (default "--strategy
# exhaustive") is how each matmul shape is searched; BENCH_MATMUL_SHAPES the
# shapes ("" for none); BENCH_TCGEMM_SHAPES, BENCH_TCGEMM_KINDS and
# BENCH_TCGEMM_SEARCH the same for the tensor-core family; BENCH_DGEMM_SHAPES
# the double-precision family's; BENCH_ONLY="bench_matmul ..." runs those benchmarks
# only; BENCH_OUT names the output file.
set -uo pipefail
BUILD="${1:-build}"
DB="${AUTOTUNE_DB:-$BUILD/bench.db}"
export AUTOTUNE_DB="$DB"
mkdir -p bench/results
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-')"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
toolkit="$("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)"
out="${BENCH_OUT:-bench/results/$(date -u +%Y-%m-%d)-${gpu:-unknown-gpu}.txt}"
{
    echo "# autotune benchmarks"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')"
    echo "# GPU: ${gpu:-unknown}  driver: ${driver:-unknown}  CUDA toolkit: ${toolkit:-unknown}"
    echo "# database: $DB"
} | tee "$out"
if [ -z "${BENCH_SKIP_TUNE:-}" ]; then
    if [ "${BENCH_DEFAULT_TUNE:-1}" != 0 ]; then
        "$BUILD/autotune" --device 0 --db "$DB" 2>&1 | tee -a "$out" || exit 1
    fi
    # The matmul benchmark's shapes, each searched exhaustively (about 4-5
    # minutes on an H200 the first time: cubins are compiled once and shared
    # by every shape; resumable, and a rerun skips what is stored).
    # BENCH_MATMUL_SHAPES="" skips this step.
    for shape in ${BENCH_MATMUL_SHAPES-1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 1000x1000x1000 4097x4097x4097 8192x8192x128 128x8192x8192 8192x64x8192 16384x16384x1024}; do
        "$BUILD/autotune" --device 0 --db "$DB" --kernel matmul --size "$shape" \
            ${BENCH_MATMUL_SEARCH:---strategy exhaustive} --quiet 2>&1 | tee -a "$out" || exit 1
    done
    # The tensor-core benchmark's shapes, each type (bf16, f16, and FP32
    # data with TF32 math) tuned per shape; BENCH_TCGEMM_SHAPES="" skips it,
    # BENCH_TCGEMM_SEARCH says how each is searched (default: the tuner's
    # choice for the space).
    for shape in ${BENCH_TCGEMM_SHAPES-2048x2048x2048 4096x4096x4096 8192x8192x8192 4097x4097x4097 8192x8192x1024 1024x8192x8192 8192x1024x8192 16384x16384x512}; do
        for kind in ${BENCH_TCGEMM_KINDS-bf16 f16 tf32}; do
            "$BUILD/autotune" --device 0 --db "$DB" --kernel tcgemm --size "$shape:$kind" \
                ${BENCH_TCGEMM_SEARCH:-} --quiet 2>&1 | tee -a "$out" || exit 1
        done
    done
    # The double-precision benchmark's shapes (dgemm; 4096^3 is a default
    # problem), batches included; BENCH_DGEMM_SHAPES="" skips it.
    for shape in ${BENCH_DGEMM_SHAPES-8192x8192x8192:f64 4097x4097x4097:f64 512x512x512:f64:b128 256x256x256:f64:b512}; do
        "$BUILD/autotune" --device 0 --db "$DB" --kernel dgemm --size "$shape" --quiet 2>&1 \
            | tee -a "$out" || exit 1
    done
    # The strided batched benchmark's shapes (bench_bgemm), each type tuned for the bgemm
    # family; BENCH_BGEMM_SHAPES="" skips it, BENCH_BGEMM_SEARCH says how.
    for shape in ${BENCH_BGEMM_SHAPES-32x32x32:b65536 64x64x64:b8192 256x256x256:b512 512x512x512:b128}; do
        for kind in ${BENCH_BGEMM_KINDS-f32 f64}; do
            "$BUILD/autotune" --device 0 --db "$DB" --kernel bgemm --size "$shape:$kind" \
                ${BENCH_BGEMM_SEARCH:---strategy guided --budget 30} --quiet 2>&1 | tee -a "$out" || exit 1
        done
    done
fi
status=0
for bench in "$BUILD"/bench/bench_*; do
    [ -x "$bench" ] || continue
    if [ -n "${BENCH_ONLY:-}" ] && [[ " $BENCH_ONLY " != *" $(basename "$bench") "* ]]; then
        continue
    fi
    echo "## $(basename "$bench")" | tee -a "$out"
    "$bench" "$DB" 2>&1 | tee -a "$out" || status=1
done
echo "# saved to $out"
exit $status
