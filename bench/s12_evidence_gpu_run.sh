#!/bin/bash
# bench/s12_evidence_gpu_run.sh: the twelfth session's second device call:
# the GPU tests of what changed (dgemm: the back-to-back timing and the
# module cache; tuner, retime), then issue 15's evidence (tcgemm tuned at the
# default sizes and 8192^3 for BF16, FP16 and TF32, bench_tcgemm of every
# type on that database, BENCH_TCGEMM_ROUNDS rounds at 4096^3 / 8192^3) and
# issue 16's DGEMM (default dgemm sizes and 8192^3 tuned with the
# back-to-back re-timing, bench_dgemm on that database). Logs under $OUT;
# DEADLINE (s) bounds the whole.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s12_evidence_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DL=${DEADLINE:-420}
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
make -j"$(nproc)" all build/run_tests build/bench/bench_dgemm build/bench/bench_tcgemm > "$OUT/build.log" 2>&1
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }

t0=$(date +%s)
{ header "build/run_tests dgemm retime tuner (GPU tier)"
  AUTOTUNE_TEST_TIER=gpu timeout 150 build/run_tests dgemm retime tuner 2>&1; echo "exit status $?"; } > "$OUT/gputests.log" 2>&1
step "GPU tests" $? "$t0"
grep -E "FAIL|back to back|passed, " "$OUT/gputests.log" | tail -12

DBT=$(mktemp -d)/tc.db
t0=$(date +%s)
{ header "tcgemm: the default sizes and 8192^3 of each type tuned, then bench_tcgemm (every type) on that database"
  timeout 90 build/autotune --device 0 --db "$DBT" --kernel tcgemm 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  for shape in 8192x8192x8192:bf16 8192x8192x8192:f16 8192x8192x8192:tf32; do
      timeout 40 build/autotune --device 0 --db "$DBT" --kernel tcgemm --size "$shape" 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  done
  BENCH_TCGEMM_ROUNDS=${TC_ROUNDS:-7} timeout $(( $(left) > 280 ? 170 : $(left) - 100 )) build/bench/bench_tcgemm "$DBT" 2>&1
  echo "exit status $?"; } > "$OUT/tcgemm.txt" 2>&1
step "tcgemm tune + bench" $? "$t0"
grep -E "x |geomean" "$OUT/tcgemm.txt" | cut -c1-140 | tail -30

DBD=$(mktemp -d)/dgemm.db
t0=$(date +%s)
{ header "DGEMM: default dgemm sizes and 8192^3 tuned (back-to-back re-timing), then bench_dgemm on that database"
  timeout 40 build/autotune --device 0 --db "$DBD" --kernel dgemm 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  timeout 40 build/autotune --device 0 --db "$DBD" --kernel dgemm --size 8192x8192x8192:f64 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  build/autotune show --db "$DBD" --kernel dgemm 2>&1 | head -30
  timeout $(( $(left) - 5 )) build/bench/bench_dgemm "$DBD" 2>&1
  echo "exit status $?"; } > "$OUT/dgemm.txt" 2>&1
step "DGEMM tune + bench" $? "$t0"
grep -E "sustained re-timing|x  |ratio" "$OUT/dgemm.txt" | cut -c1-200 | tail -16
