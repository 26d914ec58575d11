#!/usr/bin/env bash
# bench/dgemm/run1.sh: GPU session 1 of the dgemm family (docs/notes/dgemm.md): build, the
# prototype sweep (a build without the lattice: -DDG_WIDE_SPACE), the dgemm GPU tests, the
# default tuning of dgemm and bench_dgemm. Logs under $OUT.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
{ nvidia-smi; nvcc --version; date -u; } > "$OUT/env.txt" 2>&1
t0=$(date +%s)
( make -j16 all build/run_tests build/bench/bench_dgemm &&
  make -j16 BUILD=build-wide OPT="-O2 -DDG_WIDE_SPACE" build-wide/bench/bench_dgemm ) > "$OUT/build.log" 2>&1
echo "build rc $? $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep1.txt)" BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192" \
    timeout 75 build-wide/bench/bench_dgemm > "$OUT/sweep1.log" 2>&1
echo "sweep rc $? $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 80 build/run_tests dgemm > "$OUT/tests_dgemm.log" 2>&1
echo "tests rc $? $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
t0=$(date +%s)
DB=$OUT/bench.db
timeout 30 build/autotune --device 0 --db "$DB" --kernel dgemm > "$OUT/tune_default.log" 2>&1
echo "tune default rc $? $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
t0=$(date +%s)
timeout 40 build/bench/bench_dgemm "$DB" > "$OUT/bench_dgemm.log" 2>&1
echo "bench rc $? $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
build/autotune show --db "$DB" > "$OUT/show.log" 2>&1
rm -f "$DB-wal" "$DB-shm"
