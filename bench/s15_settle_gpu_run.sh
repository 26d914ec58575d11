#!/bin/bash
# bench/s15_settle_gpu_run.sh: the fifteenth session's calls for the re-timing's settle (tcgemm's
# retime_settle_ms: each candidate's timed share after 150 ms of its own runs): the retime, tcgemm and
# gemm_api GPU tests, then issue 15's evidence again (tcgemm tuned at the default sizes and 8192^3 of each
# type into a fresh database, bench_tcgemm of every type on it, then TF32 alone a second time).
# usage (repository root, carry .dev): COMMIT=hash bash bench/s15_settle_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
step() { echo "$1: rc $2, $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$OUT/steps.txt"; }
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
header() {
    echo "# $1"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: ${COMMIT:-?}"
    nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader | sed 's/^/# GPU: /'
    echo "# CUDA toolkit: $(nvcc --version | grep -o 'release [0-9.]*')"
}
t0=$(date +%s)
make -j"$(nproc)" all build/run_tests build/bench/bench_tcgemm > "$OUT/build.log" 2>&1
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }
t0=$(date +%s)
{ header "build/run_tests retime tcgemm gemm_api (GPU tier)"
  for f in retime tcgemm gemm_api vendor; do      # run_tests takes one filter
      AUTOTUNE_TEST_TIER=gpu timeout 200 build/run_tests $f 2>&1; echo "exit status $?"
  done; } > "$OUT/gputests.log" 2>&1
step "GPU tests" $? "$t0"
grep -E "FAIL|passed, " "$OUT/gputests.log" | tail -12
DBT=$(mktemp -d)/tc.db
t0=$(date +%s)
{ header "tcgemm: the default sizes and 8192^3 of each type tuned, then bench_tcgemm (every type) on that database, then TF32 again"
  timeout 120 build/autotune --device 0 --db "$DBT" --kernel tcgemm 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  for shape in 8192x8192x8192:bf16 8192x8192x8192:f16 8192x8192x8192:tf32; do
      timeout 60 build/autotune --device 0 --db "$DBT" --kernel tcgemm --size "$shape" 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  done
  BENCH_TCGEMM_ROUNDS=${TC_ROUNDS:-9} timeout 200 build/bench/bench_tcgemm "$DBT" 2>&1
  echo "exit status $?"
  BENCH_TCGEMM_TYPES=tf32 BENCH_TCGEMM_ROUNDS=${TC_ROUNDS:-9} timeout 100 build/bench/bench_tcgemm "$DBT" 2>&1
  echo "exit status $?"; } > "$OUT/tcgemm.txt" 2>&1
step "tcgemm tune + bench" $? "$t0"
grep -E "sustained re-timing|x |geomean" "$OUT/tcgemm.txt" | cut -c1-170 | tail -40
