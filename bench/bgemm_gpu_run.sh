#!/usr/bin/env bash
# bench/bgemm_gpu_run.sh: one GPU session for the strided batched GEMM: build, the bgemm and
# batched tests, the eight batched shapes tuned, bench_bgemm, the default run timed.
# Run from the repository root; OUT (default bench/results/bgemm-run) receives every log.
set -u
OUT="${OUT:-bench/results/bgemm-run}"
mkdir -p "$OUT"
T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; date -u; } > "$OUT/env.txt" 2>&1
make -j16 all build/run_tests build/bench/bench_bgemm > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
echo "build done $(( $(date +%s) - T0 )) s"
for t in bgemm batched; do
    timeout 120 build/run_tests "$t" > "$OUT/tests-$t.log" 2>&1
    echo "tests $t rc=$? $(( $(date +%s) - T0 )) s"; grep -E "FAIL|:[0-9]+:|passed" "$OUT/tests-$t.log" | head -20
done
DB="${DB:-/tmp/bgemm_bench.db}"
rm -f "$DB"*
tune() {
    timeout $(($2 + 15)) build/autotune --device 0 --db "$DB" --kernel bgemm --size "$1" \
        --strategy guided --budget "$2" >> "$OUT/tune.log" 2>&1
    echo "tuned $1 rc=$? $(( $(date +%s) - T0 )) s"
}
for s in 32x32x32:b65536 64x64x64:b8192 32x32x32:f64:b65536 64x64x64:f64:b8192; do tune "$s" "${BUD_SMALL:-22}"; done
for s in 256x256x256:b512 512x512x512:b128 256x256x256:f64:b512 512x512x512:f64:b128; do tune "$s" "${BUD_LARGE:-7}"; done
grep -E "^  best" "$OUT/tune.log"
timeout 90 build/bench/bench_bgemm "$DB" > "$OUT/bench.txt" 2>&1; echo "bench rc=$? $(( $(date +%s) - T0 )) s"
cat "$OUT/bench.txt"
rm -f /tmp/bgemm_default.db*
( time timeout 60 build/autotune --device 0 --db /tmp/bgemm_default.db --kernel bgemm ) > "$OUT/default_run.log" 2>&1
echo "default bgemm problems rc=$?"; tail -8 "$OUT/default_run.log"
