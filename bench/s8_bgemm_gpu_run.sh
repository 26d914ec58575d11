#!/usr/bin/env bash
# bench/s8_bgemm_gpu_run.sh: one GPU call for bgemm round 3 (issue 16, small strided batched
# GEMM): build, the bgemm and batched GPU tests, the four small batched shapes tuned (budgets
# share what is left of TOTAL seconds after the build and tests, keeping BENCH_T for the
# benchmark), bench_bgemm (through at_gemm_strided_batched, paired rounds against cuBLAS) and
# every stored bgemm measurement (show --all and export, gzipped). OUT (default bench/results/s8-run)
# receives at most 8 files; DB (default build/s8.db).
set -u
OUT="${OUT:-bench/results/s8-run}"
DB="${DB:-build/s8.db}"
TOTAL="${TOTAL:-228}"
BENCH_T="${BENCH_T:-20}"
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 ))"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  nvcc --version | tail -2; date -u; } > "$OUT/env.txt" 2>&1

timeout 130 make -j16 all build/run_tests build/bench/bench_bgemm > "$OUT/build.log" 2>&1 ||
    { echo "BUILD FAILED $(el) s"; tail -30 "$OUT/build.log"; exit 1; }
echo "build done $(el) s"
for t in bgemm batched; do
    echo "## AUTOTUNE_TEST_TIER=gpu build/run_tests $t" >> "$OUT/tests.log"
    AUTOTUNE_SKIP_COMPILE_ALL=1 AUTOTUNE_TEST_TIER=gpu timeout 40 build/run_tests "$t" \
        >> "$OUT/tests.log" 2>&1
    echo "tests $t rc=$? $(el) s: $(grep -E 'passed' "$OUT/tests.log" | tail -1)"
done
grep -E "FAIL|: error" "$OUT/tests.log" | head -8
SHAPES="${SHAPES:-64x64x64:f64:b8192 32x32x32:f64:b65536 64x64x64:b8192 32x32x32:b65536}"
n=4
for s in $SHAPES; do
    left=$(( TOTAL - BENCH_T - $(el) ))
    bud=$(( left / n - 9 ))
    n=$(( n - 1 ))
    [ "$bud" -lt 3 ] && bud=3
    timeout $((bud + 25)) build/autotune --device 0 --db "$DB" --kernel bgemm --size "$s" \
        --budget "$bud" >> "$OUT/tune.log" 2>&1
    echo "tuned $s budget $bud rc=$? $(el) s: $(grep -E '^  best' "$OUT/tune.log" | tail -1 | cut -c1-230)"
done
BENCH_BGEMM_MAX_DIM=64 timeout "$BENCH_T" build/bench/bench_bgemm "$DB" > "$OUT/bench_bgemm.txt" 2>&1
echo "bench_bgemm rc=$? $(el) s"; grep -E "x[0-9]+ " "$OUT/bench_bgemm.txt"
timeout 10 build/autotune show --db "$DB" --kernel bgemm --all 2>&1 | gzip > "$OUT/show_all.txt.gz"
timeout 10 build/autotune export -o - --db "$DB" --kernel bgemm 2>/dev/null | gzip > "$OUT/export.json.gz"
echo "all done $(el) s"
