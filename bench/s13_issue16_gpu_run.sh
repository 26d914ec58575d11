#!/bin/bash
# bench/s13_issue16_gpu_run.sh: every "done when" row of issue 16 measured at one commit, through
# databases tuned in the same call sequence, on one H200. Three device calls:
#   PHASE=tune  build; tune each issue-16 problem into a fresh database (budgets below), then
#               `bench_matmul --ops` on it (BENCH_OPS_ROUNDS paired rounds: NT, TN, TT,
#               column-major, batched FP32);
#   PHASE=bench build; the FP64, small-batch and reduction problems tuned again into a fresh
#               database (the first call's, 175 MB of cubins, cannot come back from the device),
#               then bench_dgemm, bench_bgemm (f32, f64) and bench_dreduce on it.
#   PHASE=tests build; the whole GPU tier.
# usage (repository root, carry .dev): COMMIT=hash PHASE=tune|bench|tests bash bench/s13_issue16_gpu_run.sh
set -u
source bench/gpu_lib.sh
tune() {   # kernel size budget: one problem into $DB, the log's summary lines
    timeout $(( $3 + 30 )) build/autotune --device 0 --db "$DB" --kernel "$1" --size "$2" --budget "$3" 2>&1 |
        grep -E "valid|evaluated|best|sustained|^done|vendor|rror"
}
tune_rest() {   # the problems of bench_bgemm, bench_dgemm and bench_dreduce
    for s in 64x64x64:b8192 32x32x32:b65536; do tune bgemm $s 15; done
    for s in 64x64x64:f64:b8192 32x32x32:f64:b65536; do tune bgemm $s 20; done
    for s in 4096x4096x4096:f64 8192x8192x8192:f64 512x512x512:f64:b128 256x256x256:f64:b512; do tune dgemm $s 20; done
    tune sum 134217728:f64 10; tune dot 134217728:f64 10; tune jacobi 8192:f64 10
}
PHASE=${PHASE:-tune}
t0=$(date +%s)
if [ "$PHASE" = tune ]; then
    make -j"$(nproc)" all build/bench/bench_matmul > "$OUT/build.log" 2>&1
else
    make -j"$(nproc)" all build/run_tests build/bench/bench_dgemm build/bench/bench_bgemm \
        build/bench/bench_dreduce > "$OUT/build.log" 2>&1
fi
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }

if [ "$PHASE" = tune ]; then
    DB=$(mktemp -d)/issue16.db   # 175 MB of cubins: too big to come back through $OUT
    t0=$(date +%s)
    { header "issue 16: every problem tuned into one fresh database (--size, budgets in seconds as given)"
      for s in 4096x4096x4096:NT 4096x4096x4096:TN 4096x4096x4096:TT; do tune matmul $s ${OPS_BUDGET:-25}; done
      for s in 512x512x512:b128 256x256x256:b512; do tune matmul $s 20; done
      tune_rest
      build/autotune show --db "$DB" 2>&1
      echo "exit status $?"; } > "$OUT/tune.txt" 2>&1
    step "tuning" $? "$t0"
    grep -E "evaluated|sustained" "$OUT/tune.txt" | cut -c1-220
    t0=$(date +%s)
    { header "bench_matmul --ops on the issue-16 database, BENCH_OPS_ROUNDS=${OPS_ROUNDS:-9}"
      BENCH_OPS_ROUNDS=${OPS_ROUNDS:-9} timeout $(( $(left) - 5 )) build/bench/bench_matmul --ops "$DB" 2>&1
      echo "exit status $?"; } > "$OUT/matmul-ops.txt" 2>&1
    step "bench_matmul --ops" $? "$t0"
    grep -E "x |median|checks" "$OUT/matmul-ops.txt" | cut -c1-200
    exit 0
fi
if [ "$PHASE" = tests ]; then
    t0=$(date +%s)
    { header "build/run_tests, GPU tier"; AUTOTUNE_TEST_TIER=gpu timeout $(( $(left) - 5 )) build/run_tests 2>&1; echo "exit status $?"; } > "$OUT/gputests.log" 2>&1
    step "GPU tier" $? "$t0"
    grep -E "FAIL|passed, " "$OUT/gputests.log" | tail -8
    exit 0
fi

DB=$(mktemp -d)/issue16.db
t0=$(date +%s)
{ header "issue 16: the FP64, small-batch and reduction problems tuned into a fresh database"
  tune_rest; echo "exit status $?"; } > "$OUT/tune.txt" 2>&1
step "tuning" $? "$t0"
grep -E "sustained" "$OUT/tune.txt" | cut -c1-220
t0=$(date +%s)
{ header "bench_dgemm on the issue-16 database"; timeout 170 build/bench/bench_dgemm "$DB" 2>&1; echo "exit status $?"; } > "$OUT/dgemm.txt" 2>&1
step "bench_dgemm" $? "$t0"
grep -E "x  |ratio|^#.*targ" "$OUT/dgemm.txt" | cut -c1-200 | tail -14
t0=$(date +%s)
{ header "bench_bgemm on the issue-16 database (f32 and f64, up to 64^3)"
  BENCH_BGEMM_MAX_DIM=64 timeout 90 build/bench/bench_bgemm "$DB" 2>&1; echo "exit status $?"; } > "$OUT/bgemm.txt" 2>&1
step "bench_bgemm" $? "$t0"
grep -E "x[0-9]+ " "$OUT/bgemm.txt" | cut -c1-200
t0=$(date +%s)
{ header "bench_dreduce on the issue-16 database"; timeout 60 build/bench/bench_dreduce "$DB" 2>&1; echo "exit status $?"; } > "$OUT/dreduce.txt" 2>&1
step "bench_dreduce" $? "$t0"
grep -E "^134217728|sweep|target|met" "$OUT/dreduce.txt"
