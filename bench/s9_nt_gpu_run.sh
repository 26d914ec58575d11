#!/usr/bin/env bash
# bench/s9_nt_gpu_run.sh: session 9, SGEMM NT (issue 16), second device call (docs/notes/matmul.md
# round 8): build; the matmul GPU tests (in the background: they compile on the CPU and run
# small shapes) that cover cuBLAS's 4-warp 128-accumulator tile in every op pair; the sweep of
# bench/nt_sweep_s9.txt at 4096^3 NT, TN, TT and NN (two passes, cuBLAS same ops, then the
# fastest in paired rounds against cuBLAS on the same inputs). Every phase has a timeout; OUT
# receives the logs. Run from the tree root with CPATH/LIBRARY_PATH/LD_LIBRARY_PATH set. The variants it measured were taken
# out afterwards (notes round 8): with today's tree the list's -D lines time the plain kernel and the 4-warp tile is skipped.
set -u
OUT="${OUT:-bench/results/s9-run}"
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  nvcc --version | tail -2; date -u; } > "$OUT/env.txt" 2>&1
timeout "${BUILD_T:-70}" make -j16 all build/run_tests build/bench/bench_matmul > "$OUT/build.log" 2>&1 \
    || { echo "BUILD FAILED $(el)"; tail -30 "$OUT/build.log"; exit 1; }
echo "build done $(el)"
( for t in ${TESTS:-matmul_gpu_ops_and_batches matmul_gpu_configs_verify_at_ragged_shapes matmul_gpu_leading_dimensions_and_alignment matmul_gpu_streamk_repeat_bitwise}; do
    echo "## build/run_tests $t" >> "$OUT/tests.log"
    AUTOTUNE_SKIP_COMPILE_ALL=1 timeout "${TEST_T:-120}" build/run_tests "$t" >> "$OUT/tests.log" 2>&1
    echo "## rc=$? $(el)" >> "$OUT/tests.log"
  done ) &
TP=$!
BN_SWEEP_LIST=${SWEEP_LIST:-bench/nt_sweep_s9.txt} BN_SWEEP_PAIRS=${PAIRS:-4} BN_SWEEP_ROUNDS=${ROUNDS:-7} \
    timeout "${SWEEP_T:-120}" build/bench/bench_matmul --sweep \
    "${SWEEP_SHAPES:-4096x4096x4096:NT,4096x4096x4096:TT,4096x4096x4096:TN,4096x4096x4096}" 1 "${TOP:-14}" \
    "${RUNS:-12}" > "$OUT/sweep.txt" 2>&1
echo "sweep rc=$? $(el)"
grep -E "^sweep|^pairs|FAILED|skipped" "$OUT/sweep.txt" | cut -c1-330
wait "$TP"
echo "tests done $(el)"
grep -E "^ *(ok|FAIL)|passed|CHECK|tests/" "$OUT/tests.log" | head -20
