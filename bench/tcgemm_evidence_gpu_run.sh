#!/bin/bash
# bench/tcgemm_evidence_gpu_run.sh: issue 15's evidence in one device call: the GPU tests named in TESTS (one
# run_tests filter each; default "retime tcgemm gemm_api vendor"), tcgemm tuned at the default sizes and 8192^3 of
# each type into a fresh database, bench_tcgemm of every type on it (BENCH_TCGEMM_ROUNDS=TC_ROUNDS paired rounds at
# 4096^3 and 8192^3), TF32 alone a second time (TF32_AGAIN=0: not), then with ALL_TIER=1 the whole GPU tier while
# DEADLINE (s) lasts. With TF32_RETUNE=1, TF32 4096^3 and 8192^3 are then tuned again into a second fresh
# database and bench_tcgemm's TF32 rows run on it (a second, independent pick). The re-timings print every
# round (AUTOTUNE_RETIME_TRACE). Logs under $OUT. Session 15 ran it as bench/s15_tf32_gpu_run.sh (7e66a73:
# TESTS=tcgemm, ALL_TIER=1, TF32_AGAIN=0) and bench/s15_settle_gpu_run.sh (4479e46: the defaults).
# usage (repository root, carry .dev): COMMIT=hash [TESTS=...] [ALL_TIER=1] bash bench/tcgemm_evidence_gpu_run.sh
set -u
DEADLINE=${DEADLINE:-585}
source bench/gpu_lib.sh
build_step all build/run_tests build/bench/bench_tcgemm || exit 1

t0=$(date +%s)
{ header "build/run_tests ${TESTS:-retime tcgemm gemm_api vendor} (GPU tier)"
  for f in ${TESTS:-retime tcgemm gemm_api vendor}; do      # run_tests takes one filter
      AUTOTUNE_TEST_TIER=gpu timeout 200 build/run_tests "$f" 2>&1; echo "exit status $?"
  done; } > "$OUT/gputests.log" 2>&1
step "GPU tests" $? "$t0"
grep -E "FAIL|passed, " "$OUT/gputests.log" | tail -12

export AUTOTUNE_RETIME_TRACE=1
KEEP="valid|evaluated|best|sustained|retime trace|^done|vendor cublas"
DBT=$(mktemp -d)/tc.db
t0=$(date +%s)
{ header "tcgemm: the default sizes and 8192^3 of each type tuned, then bench_tcgemm (every type) on that database"
  timeout 120 build/autotune --device 0 --db "$DBT" --kernel tcgemm 2>&1 | grep -E "$KEEP"
  for shape in 8192x8192x8192:bf16 8192x8192x8192:f16 8192x8192x8192:tf32; do
      timeout 60 build/autotune --device 0 --db "$DBT" --kernel tcgemm --size "$shape" 2>&1 | grep -E "$KEEP"
  done
  BENCH_TCGEMM_ROUNDS=${TC_ROUNDS:-9} timeout 200 build/bench/bench_tcgemm "$DBT" 2>&1
  echo "exit status $?"
  if [ "${TF32_AGAIN:-1}" = 1 ]; then
      BENCH_TCGEMM_TYPES=tf32 BENCH_TCGEMM_ROUNDS=${TC_ROUNDS:-9} timeout 100 build/bench/bench_tcgemm "$DBT" 2>&1
      echo "exit status $?"
  fi; } > "$OUT/tcgemm.txt" 2>&1
step "tcgemm tune + bench" $? "$t0"
grep -E "sustained re-timing|x |geomean" "$OUT/tcgemm.txt" | cut -c1-170 | tail -40

if [ "${TF32_RETUNE:-0}" = 1 ]; then
    t0=$(date +%s)
    DB2=$(mktemp -d)/tc2.db
    { header "tcgemm: TF32 4096^3 and 8192^3 tuned again into a second fresh database, then bench_tcgemm TF32"
      for shape in 4096x4096x4096:tf32 8192x8192x8192:tf32; do
          timeout 60 build/autotune --device 0 --db "$DB2" --kernel tcgemm --size "$shape" 2>&1 | grep -E "$KEEP"
      done
      BENCH_TCGEMM_TYPES=tf32 BENCH_TCGEMM_ROUNDS=${TC_ROUNDS:-9} timeout 100 build/bench/bench_tcgemm "$DB2" 2>&1
      echo "exit status $?"; } > "$OUT/tcgemm_tf32_retune.txt" 2>&1
    step "tcgemm TF32 retune + bench" $? "$t0"
    grep -E "sustained re-timing|x |geomean" "$OUT/tcgemm_tf32_retune.txt" | cut -c1-170 | tail -20
fi

if [ "${ALL_TIER:-0}" = 1 ]; then
    t0=$(date +%s)
    gpu_tier $(( $(left) - 10 )) "$OUT/gputests_all.log"
    step "GPU tier (all)" $? "$t0"
    grep -E "FAIL|passed, " "$OUT/gputests_all.log" | tail -12
fi
