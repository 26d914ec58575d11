#!/bin/bash
# bench/s16_final_gpu_run.sh: the sixteenth session's verification call: the build, the whole GPU tier, the default
# `autotune --device 0` timed (the settled re-timing's cost), then TF32 4096^3 and 8192^3 tuned into a fresh
# database (a third independent pick with the settled re-timing) and bench_tcgemm's TF32 rows on it. Logs under
# $OUT; DEADLINE (s) bounds the whole. At b9e6adb the GPU tier ran past its 280 s there (42 of 45 tests done; the
# last three passed in a second call, bench/results/2026-11-28-H200-gpu-tests-b9e6adb.txt): run the tier alone
# (bench/tcgemm_evidence_gpu_run.sh ALL_TIER=1) where it must finish in one call.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s16_final_gpu_run.sh
set -u
DEADLINE=${DEADLINE:-585}
source bench/gpu_lib.sh
build_step all build/run_tests build/bench/bench_tcgemm || exit 1

t0=$(date +%s)
gpu_tier 280 "$OUT/gputests.log"
step "GPU tier" $? "$t0"
grep -E "FAIL|passed, " "$OUT/gputests.log" | tail -8

DB=$(mktemp -d)/default.db
t0=$(date +%s)
default_run "$DB" "$OUT/default-tune.txt"
step "default run" $? "$t0"
grep -E "sustained re-timing|^done|exit status" "$OUT/default-tune.txt" | cut -c1-200

t0=$(date +%s)
DB2=$(mktemp -d)/tc.db
KEEP="valid|evaluated|best|sustained|retime trace|^done|vendor cublas"
{ header "tcgemm: TF32 4096^3 and 8192^3 tuned into a fresh database, then bench_tcgemm TF32"
  for shape in 4096x4096x4096:tf32 8192x8192x8192:tf32; do
      AUTOTUNE_RETIME_TRACE=1 timeout 60 build/autotune --device 0 --db "$DB2" --kernel tcgemm --size "$shape" 2>&1 | grep -E "$KEEP"
  done
  BENCH_TCGEMM_TYPES=tf32 BENCH_TCGEMM_ROUNDS=9 timeout $(( $(left) - 5 )) build/bench/bench_tcgemm "$DB2" 2>&1
  echo "exit status $?"; } > "$OUT/tcgemm_tf32.txt" 2>&1
step "tcgemm TF32 tune + bench" $? "$t0"
grep -E "sustained re-timing|x |geomean" "$OUT/tcgemm_tf32.txt" | cut -c1-170 | tail -12
