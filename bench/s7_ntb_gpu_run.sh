#!/usr/bin/env bash
# bench/s7_ntb_gpu_run.sh: one GPU session for SGEMM NT (matmul) and the small strided batched
# shapes (bgemm): build, the NT sweep (bench_matmul --sweep over a configuration list against
# cuBLAS with the same ops), NT/TN/TT tuned, bench_matmul --ops, the GPU tests that cover
# them, the four small batched shapes tuned and bench_bgemm (through at_gemm_strided_batched).
# Every phase has a timeout; OUT (default bench/results/s7-run) receives the logs (at most 8
# files: the device returns no more). PHASES lists the phases in the order they run (default
# "build sweep nt ops tests bgemm"); DB (default build/s7.db) is kept between phases.
# Shapes are given as SIZE=BUDGET (seconds).
set -u
OUT="${OUT:-bench/results/s7-run}"
PHASES="${PHASES:-build sweep nt ops tests bgemm}"
DB="${DB:-build/s7.db}"
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; nvcc --version | tail -2; date -u; } > "$OUT/env.txt" 2>&1

tune() {     # tune FAMILY SIZE=BUDGET
    local size="${2%=*}" bud="${2#*=}"
    timeout $((bud + 20)) build/autotune --device 0 --db "$DB" --kernel "$1" --size "$size" \
        --budget "$bud" >> "$OUT/tune.log" 2>&1
    echo "tuned $size rc=$? $(el): $(grep -E '^  best' "$OUT/tune.log" | tail -1 | cut -c1-220)"
}
ph_build() {
    timeout 150 make -j16 all build/run_tests build/bench/bench_bgemm build/bench/bench_matmul \
        > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -30 "$OUT/build.log"; exit 1; }
    echo "build done $(el)"
}
ph_sweep() {
    BN_SWEEP_LIST=${SWEEP_LIST:-bench/nt_sweep_bk32.txt} timeout "${SWEEP_T:-75}" \
        build/bench/bench_matmul --sweep "${SWEEP_SHAPES:-4096x4096x4096:NT}" 1 80 \
        "${SWEEP_RUNS:-15}" > "$OUT/nt_sweep.txt" 2>&1
    echo "sweep rc=$? $(el)"; grep -E "^sweep|FAILED|skipped" "$OUT/nt_sweep.txt" | head
    grep -E "^  " "$OUT/nt_sweep.txt" | head -12
}
ph_nt() {
    for s in ${NT_SHAPES:-4096x4096x4096:NT=25 4096x4096x4096:TN=6 4096x4096x4096:TT=6}; do
        tune matmul "$s"
    done
}
ph_ops() {
    timeout "${OPS_T:-40}" build/bench/bench_matmul --ops "$DB" > "$OUT/bench_ops.txt" 2>&1
    echo "ops rc=$? $(el)"; grep -E "^4096|^512|^256|^1000" "$OUT/bench_ops.txt"
}
ph_tests() {
    for t in ${TESTS:-matmul_gpu_ops_and_batches}; do
        echo "## build/run_tests $t" >> "$OUT/tests.log"
        AUTOTUNE_SKIP_COMPILE_ALL=1 timeout "${TEST_T:-60}" build/run_tests "$t" > /tmp/s7t.log 2>&1
        local rc=$?
        cat /tmp/s7t.log >> "$OUT/tests.log"
        echo "tests $t rc=$rc $(el): $(grep -E 'passed' /tmp/s7t.log | tail -1)"
        grep -E "FAIL|: error" /tmp/s7t.log | head -5
    done
}
ph_bgemm() {
    for s in ${BG_SHAPES:-32x32x32:b65536=5 64x64x64:b8192=14 32x32x32:f64:b65536=12 64x64x64:f64:b8192=14}; do
        tune bgemm "$s"
    done
    BENCH_BGEMM_MAX_DIM=64 timeout 60 build/bench/bench_bgemm "$DB" > "$OUT/bench_bgemm.txt" 2>&1
    echo "bench_bgemm rc=$? $(el)"; grep -E "x[0-9]+ " "$OUT/bench_bgemm.txt"
}
for p in $PHASES; do "ph_$p"; done
echo "all done $(el)"
