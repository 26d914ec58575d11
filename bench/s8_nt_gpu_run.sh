#!/usr/bin/env bash
# bench/s8_nt_gpu_run.sh: one GPU session for SGEMM NT with K-major operands in shared memory
# (matmul OPA=2 / OPB=2, docs/notes/matmul.md round 7): build, the matmul GPU tests that cover
# the new layouts (in the background, during the sweep: they compile on the CPU and run small
# shapes), the sweep of bench/nt_sweep_kmaj.txt (bench_matmul --sweep, two passes, cuBLAS with
# the same ops), a guided NT tuning, bench_matmul --ops. Every phase has a timeout; OUT (default
# bench/results/s8-run) receives the logs (at most 8 files: the device returns no more).
# PHASES lists the phases (default "build tests sweep nt ops"); DB (default build/s8.db). The
# K-major layouts were taken out after this ran (notes round 7): with the default list only its
# old-layout lines still parse; give SWEEP_LIST, SWEEP_SHAPES and TESTS for another round.
set -u
OUT="${OUT:-bench/results/s8-run}"
PHASES="${PHASES:-build tests sweep nt ops}"
DB="${DB:-build/s8.db}"
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; nvcc --version | tail -2; date -u; } > "$OUT/env.txt" 2>&1

ph_build() {
    timeout "${BUILD_T:-110}" make -j16 all build/run_tests build/bench/bench_matmul \
        > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED $(el)"; tail -30 "$OUT/build.log"; exit 1; }
    echo "build done $(el)"
}
TESTS_PID=""
ph_tests() {      # in the background; waited for before the tuning
    ( for t in ${TESTS:-matmul_gpu_ops_and_batches matmul_gpu_leading_dimensions_and_alignment}; do
        echo "## build/run_tests $t" >> "$OUT/tests.log"
        AUTOTUNE_SKIP_COMPILE_ALL=1 timeout "${TEST_T:-100}" build/run_tests "$t" >> "$OUT/tests.log" 2>&1
        echo "## rc=$? $(el)" >> "$OUT/tests.log"
      done ) &
    TESTS_PID=$!
    echo "tests started $(el)"
}
ph_sweep() {
    BN_SWEEP_LIST=${SWEEP_LIST:-bench/nt_sweep_kmaj.txt} timeout "${SWEEP_T:-80}" \
        build/bench/bench_matmul --sweep "${SWEEP_SHAPES:-4096x4096x4096:NT,4096x4096x4096,4096x4096x4096:TT}" \
        1 200 "${SWEEP_RUNS:-12}" > "$OUT/nt_sweep.txt" 2>&1
    echo "sweep rc=$? $(el)"; grep -E "^sweep|FAILED|skipped" "$OUT/nt_sweep.txt" | head -12
    grep -E "^  " "$OUT/nt_sweep.txt" | head -8
}
ph_nt() {
    [ -n "$TESTS_PID" ] && { wait "$TESTS_PID"; echo "tests done $(el)"; grep -E "passed|FAIL" "$OUT/tests.log" | head -8; }
    TESTS_PID=""
    local bud="${NT_BUDGET:-20}"
    timeout $((bud + 25)) build/autotune --device 0 --db "$DB" --kernel matmul \
        --size 4096x4096x4096:NT --budget "$bud" > "$OUT/tune.log" 2>&1
    echo "tuned NT rc=$? $(el): $(grep -E '^  best' "$OUT/tune.log" | tail -1 | cut -c1-240)"
}
ph_ops() {
    timeout "${OPS_T:-40}" build/bench/bench_matmul --ops "$DB" > "$OUT/bench_ops.txt" 2>&1
    echo "ops rc=$? $(el)"; grep -E "^4096" "$OUT/bench_ops.txt"
}
for p in $PHASES; do "ph_$p"; done
[ -n "$TESTS_PID" ] && wait "$TESTS_PID"
echo "all done $(el)"
