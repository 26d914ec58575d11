#!/usr/bin/env bash
# bench/dgemm/run4.sh: GPU session 4 of the dgemm family (docs/notes/dgemm.md section 6), the
# final call: build, sweep 4 (LDR 2 against LDR 1 at 4096^3 / 8192^3), the dgemm and batched GPU
# tests, the default tuning (its time), tuning of the five bench shapes, bench_dgemm (5
# alternating rounds, paired ratios). Every log goes into one archive, $OUT/logs.tgz.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
step() { echo "$1 rc $2 $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$L/steps.txt"; }
{ nvidia-smi; nvcc --version; date -u; } > "$L/env.txt" 2>&1
t0=$(date +%s)
( make -j16 all build/run_tests build/bench/bench_dgemm &&
  make -j16 BUILD=build-wide OPT="-O2 -DDG_WIDE_SPACE" build-wide/bench/bench_dgemm ) > "$L/build.log" 2>&1
step build $? $t0
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep4.txt)" BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192" \
    timeout 40 build-wide/bench/bench_dgemm > "$L/sweep4.log" 2>&1
step sweep4 $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 50 build/run_tests dgemm > "$L/tests_dgemm.log" 2>&1
step "tests dgemm" $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 30 build/run_tests batched > "$L/tests_batched.log" 2>&1
step "tests batched" $? $t0
DB=$L/bench.db
t0=$(date +%s)
timeout 30 build/autotune --device 0 --db "$DB" --kernel dgemm > "$L/tune_default.log" 2>&1
step "tune default" $? $t0
for shape in 8192x8192x8192:f64 4097x4097x4097:f64 512x512x512:f64:b128 256x256x256:f64:b512; do
    t0=$(date +%s)
    timeout 30 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$shape" >> "$L/tune_shapes.log" 2>&1
    step "tune $shape" $? $t0
done
t0=$(date +%s)
timeout 60 build/bench/bench_dgemm "$DB" > "$L/bench_dgemm.log" 2>&1
step bench $? $t0
build/autotune show --db "$DB" > "$L/show.log" 2>&1
rm -f "$DB-wal" "$DB-shm"
step all 0 $T0
tar -C "$L" -czf "$OUT/logs.tgz" .
