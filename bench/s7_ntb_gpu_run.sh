#!/usr/bin/env bash
# bench/s7_ntb_gpu_run.sh: one GPU session for SGEMM NT (matmul OPB=2) and the small strided
# batched shapes (bgemm): build, the GPU tests that cover them, the NT A/B sweep (each tile with
# OPB=1 and OPB=2, bench/nt_sweep_list.txt), NT tuned, bench_matmul --ops, the four small
# batched shapes tuned, bench_bgemm (through at_gemm_strided_batched). Every phase has a
# timeout; OUT (default bench/results/s7-run) receives every log. PHASES picks phases
# (default "build tests sweep bgemm nt ops"); DB (default build/s7.db) is kept between phases.
set -u
OUT="${OUT:-bench/results/s7-run}"
PHASES="${PHASES:-build tests sweep bgemm nt ops}"
DB="${DB:-build/s7.db}"
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
has() { case " $PHASES " in *" $1 "*) return 0;; esac; return 1; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; nvcc --version | tail -2; date -u; } > "$OUT/env.txt" 2>&1
if has build; then
    timeout 150 make -j16 all build/run_tests build/bench/bench_bgemm build/bench/bench_matmul \
        > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -30 "$OUT/build.log"; exit 1; }
    echo "build done $(el)"
fi
if has tests; then
    for t in matmul_gpu_ops_and_batches bgemm_configurations_verify batched gemm_api_every_order; do
        AUTOTUNE_SKIP_COMPILE_ALL=1 timeout "${TEST_T:-60}" build/run_tests "$t" > "$OUT/tests-$t.log" 2>&1
        echo "tests $t rc=$? $(el): $(grep -E 'passed' "$OUT/tests-$t.log" | tail -1)"
        grep -E "FAIL|: error" "$OUT/tests-$t.log" | head -5
    done
fi
if has sweep; then
    BN_SWEEP_LIST=bench/nt_sweep_list.txt timeout "${SWEEP_T:-75}" build/bench/bench_matmul --sweep \
        "${SWEEP_SHAPES:-4096x4096x4096:NT}" 1 60 "${SWEEP_RUNS:-15}" > "$OUT/nt_sweep.txt" 2>&1
    echo "sweep rc=$? $(el)"; grep -E "^sweep|FAILED|skipped" "$OUT/nt_sweep.txt" | head; head -12 <(grep -E "^  " "$OUT/nt_sweep.txt")
fi
tune() {     # tune SIZE BUDGET LOG
    timeout $(($2 + 20)) build/autotune --device 0 --db "$DB" --kernel "${FAM:-bgemm}" --size "$1" \
        --budget "$2" >> "$OUT/$3" 2>&1
    echo "tuned $1 rc=$? $(el): $(grep -E '^  best' "$OUT/$3" | tail -1 | cut -c1-200)"
}
if has bgemm; then
    for s in ${BG_SHAPES:-32x32x32:b65536 64x64x64:b8192 32x32x32:f64:b65536 64x64x64:f64:b8192}; do
        tune "$s" "${BUD_BG:-8}" tune_bgemm.log
    done
    BENCH_BGEMM_MAX_DIM=64 timeout 60 build/bench/bench_bgemm "$DB" > "$OUT/bench_bgemm.txt" 2>&1
    echo "bench_bgemm rc=$? $(el)"; cat "$OUT/bench_bgemm.txt" | grep -E "x[0-9]+ "
fi
if has nt; then
    for s in ${NT_SHAPES:-4096x4096x4096:NT}; do FAM=matmul tune "$s" "${BUD_NT:-30}" tune_matmul.log; done
fi
if has ops; then
    timeout "${OPS_T:-60}" build/bench/bench_matmul --ops "$DB" > "$OUT/bench_ops.txt" 2>&1
    echo "ops rc=$? $(el)"; grep -E "^4096|^512|^256" "$OUT/bench_ops.txt"
fi
echo "all done $(el)"
