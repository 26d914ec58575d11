#!/usr/bin/env bash
# bench/dgemm/run8.sh: GPU session 9, call 2 of the dgemm family (docs/notes/dgemm.md section
# 8), with the final lattice: build, the dgemm and batched GPU tests, sweep 8 (the winner's
# neighbours, one timing each between two cuBLAS timings), the default tuning (its time),
# tuning of the other bench shapes, bench_dgemm (5 alternating rounds, paired ratios).
# Everything goes into $OUT/logs.tgz. DEADLINE=seconds (default 240) stops optional steps.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
DL=${DEADLINE:-240}
left() { echo $(( DL - ($(date +%s) - T0) )); }
step() { echo "$1 rc $2 $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$L/steps.txt"; }
fin() { tar -C "$L" -czf "$OUT/logs.tgz" . ; cp "$L/steps.txt" "$OUT/" 2>/dev/null; }
trap fin EXIT
trap 'exit 143' TERM
{ nvidia-smi; nvcc --version; date -u; } > "$L/env.txt" 2>&1
t0=$(date +%s)
( make -j16 all build/run_tests build/bench/bench_dgemm &&
  make -j16 BUILD=build-wide OPT="-O2 -DDG_WIDE_SPACE" build-wide/bench/bench_dgemm ) > "$L/build.log" 2>&1
step build $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 50 build/run_tests dgemm > "$L/tests_dgemm.log" 2>&1
step "tests dgemm" $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 15 build/run_tests batched > "$L/tests_batched.log" 2>&1
step "tests batched" $? $t0
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep8.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192 512x512x512:b128 256x256x256:b512" \
    timeout 40 build-wide/bench/bench_dgemm > "$L/sweep8.log" 2>&1
step sweep8 $? $t0
cp "$L/sweep8.log" "$OUT/"
DB=$(mktemp -d)/bench.db
t0=$(date +%s)
timeout 30 build/autotune --device 0 --db "$DB" --kernel dgemm > "$L/tune_default.log" 2>&1
step "tune default" $? $t0
for shape in 8192x8192x8192:f64 4097x4097x4097:f64 512x512x512:f64:b128 256x256x256:f64:b512; do
    [ "$(left)" -gt 40 ] || { echo "skip tune $shape (time)" >> "$L/steps.txt"; continue; }
    t0=$(date +%s)
    timeout 20 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$shape" >> "$L/tune_shapes.log" 2>&1
    step "tune $shape" $? $t0
done
build/autotune show --db "$DB" > "$L/show.log" 2>&1
if [ "$(left)" -gt 22 ]; then
    t0=$(date +%s)
    timeout $(( $(left) - 3 )) build/bench/bench_dgemm "$DB" > "$L/bench_dgemm.log" 2>&1
    step bench $? $t0
    cp "$L/bench_dgemm.log" "$OUT/"
fi
step all 0 $T0
