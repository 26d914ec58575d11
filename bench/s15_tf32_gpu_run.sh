#!/bin/bash
# bench/s15_tf32_gpu_run.sh: the fifteenth session's family call for TF32 rounded by the TMA (TFLOAT32
# tensor maps; PATH 80 rounds its fragments): the tcgemm, gemm_api and vendor GPU tests, then issue 15's
# evidence (tcgemm tuned at the default sizes and 8192^3 of each type into a fresh database, bench_tcgemm
# of every type on it, BENCH_TCGEMM_ROUNDS paired rounds at 4096^3 / 8192^3), then the rest of the GPU tier
# while DEADLINE (s) lasts. Logs under $OUT.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s15_tf32_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DL=${DEADLINE:-560}
left() { echo $(( DL - ($(date +%s) - T0) )); }
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
{ header "build/run_tests tcgemm gemm_api vendor (GPU tier)"
  AUTOTUNE_TEST_TIER=gpu timeout 200 build/run_tests tcgemm gemm_api vendor 2>&1; echo "exit status $?"; } > "$OUT/gputests_tc.log" 2>&1
step "GPU tests tcgemm gemm_api vendor" $? "$t0"
grep -E "FAIL|passed, " "$OUT/gputests_tc.log" | tail -12

DBT=$(mktemp -d)/tc.db
t0=$(date +%s)
{ header "tcgemm: the default sizes and 8192^3 of each type tuned, then bench_tcgemm (every type) on that database"
  timeout 90 build/autotune --device 0 --db "$DBT" --kernel tcgemm 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  for shape in 8192x8192x8192:bf16 8192x8192x8192:f16 8192x8192x8192:tf32; do
      timeout 40 build/autotune --device 0 --db "$DBT" --kernel tcgemm --size "$shape" 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  done
  BENCH_TCGEMM_ROUNDS=${TC_ROUNDS:-9} timeout 200 build/bench/bench_tcgemm "$DBT" 2>&1
  echo "exit status $?"; } > "$OUT/tcgemm.txt" 2>&1
step "tcgemm tune + bench" $? "$t0"
grep -E "x |geomean" "$OUT/tcgemm.txt" | cut -c1-150 | tail -30

t0=$(date +%s)
{ header "build/run_tests (GPU tier, the rest) within the deadline"
  AUTOTUNE_TEST_TIER=gpu timeout $(( $(left) - 10 )) build/run_tests 2>&1; echo "exit status $?"; } > "$OUT/gputests_all.log" 2>&1
step "GPU tier (all)" $? "$t0"
grep -E "FAIL|passed, " "$OUT/gputests_all.log" | tail -12
