#!/usr/bin/env bash
# bench/s10_nt/gpu_run.sh: session 10, SGEMM NT (issue 16, docs/notes/matmul.md round 9), one device call: build; the
# matmul GPU tests (they compile on the CPU and run small shapes; CPS configurations are in their sets), in the
# background during the sweep (call 1) or after it with BG=0 (call 2: paired rounds with nothing else on the GPU); the sweep of $SWEEP_LIST (default bench/s10_nt/sweep1.txt) at 4096^3 NT, TT, TN, NN (two passes,
# cuBLAS same ops, then the $PAIRS fastest of each kind in $ROUNDS paired rounds against cuBLAS on the same
# inputs). Every phase has a timeout; $OUT receives the logs. Run from the tree root with CPATH, LIBRARY_PATH and
# LD_LIBRARY_PATH set.
set -u
OUT="${OUT:-bench/results/s10-run}"
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  nvcc --version | tail -2; date -u; } > "$OUT/env.txt" 2>&1
timeout "${BUILD_T:-80}" make -j16 all build/run_tests build/bench/bench_matmul > "$OUT/build.log" 2>&1 \
    || { echo "BUILD FAILED $(el)"; tail -30 "$OUT/build.log"; exit 1; }
echo "build done $(el)"
run_tests() { for t in ${TESTS:-matmul_gpu_ops_and_batches matmul_gpu_configs_verify_at_ragged_shapes matmul_gpu_leading_dimensions_and_alignment matmul_gpu_streamk_repeat_bitwise matmul_gpu_api_padded_ldc_matches_cpu}; do
    echo "## build/run_tests $t" >> "$OUT/tests.log"
    AUTOTUNE_SKIP_COMPILE_ALL=1 timeout "${TEST_T:-80}" build/run_tests "$t" >> "$OUT/tests.log" 2>&1
    echo "## rc=$? $(el)" >> "$OUT/tests.log"
  done; }
TP=
[ "${BG:-1}" = 1 ] && { run_tests & TP=$!; }
BN_SWEEP_LIST=${SWEEP_LIST:-bench/s10_nt/sweep1.txt} BN_SWEEP_PAIRS=${PAIRS:-5} BN_SWEEP_ROUNDS=${ROUNDS:-5} \
    timeout "${SWEEP_T:-85}" build/bench/bench_matmul --sweep \
    "${SWEEP_SHAPES:-4096x4096x4096:NT,4096x4096x4096:TT,4096x4096x4096:TN,4096x4096x4096}" 1 "${TOP:-30}" \
    "${RUNS:-10}" > "$OUT/sweep.txt" 2>&1
echo "sweep rc=$? $(el)"
grep -E "^sweep|^pairs|FAILED|skipped|failed" "$OUT/sweep.txt" | cut -c1-400
if [ -n "$TP" ]; then wait "$TP"; else run_tests; fi
echo "tests done $(el)"
grep -E "^ *(ok|FAIL)|passed|CHECK|tests/" "$OUT/tests.log" | head -20
