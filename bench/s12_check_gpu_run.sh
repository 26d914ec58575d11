#!/bin/bash
# bench/s12_check_gpu_run.sh: the twelfth session's last device call: the
# GPU tests of the re-timing's back-to-back timing (retime, jacobi, dgemm),
# the default `autotune --device 0` timed again (Jacobi's re-timing now
# resets x before every run), then tcgemm tuned at 8192^3 for each type into
# the default run's database and bench_tcgemm of every type on it. Logs
# under $OUT; DEADLINE (s) bounds the whole.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s12_check_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DL=${DEADLINE:-400}
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
{ header "build/run_tests retime jacobi dgemm (GPU tier)"
  AUTOTUNE_TEST_TIER=gpu timeout 120 build/run_tests retime jacobi dgemm 2>&1; echo "exit status $?"; } > "$OUT/gputests.log" 2>&1
step "GPU tests" $? "$t0"
grep -E "FAIL|jacobi 4096|passed, " "$OUT/gputests.log" | tail -8

DB=$(mktemp -d)/default.db
t0=$(date +%s)
{ header "autotune --device 0 (the default run), timed"
  s=$(date +%s.%N)
  timeout 200 build/autotune --device 0 --db "$DB" 2>&1
  echo "exit status $?; wall $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $s }") s"; } > "$OUT/default-tune.txt" 2>&1
step "default run" $? "$t0"
grep -E "^done|exit status|sustained re-timing" "$OUT/default-tune.txt" | cut -c1-120 | tail -14

t0=$(date +%s)
{ header "tcgemm 8192^3 of each type tuned into the default run's database, then bench_tcgemm (every type)"
  for shape in 8192x8192x8192:bf16 8192x8192x8192:f16 8192x8192x8192:tf32; do
      timeout 40 build/autotune --device 0 --db "$DB" --kernel tcgemm --size "$shape" 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  done
  BENCH_TCGEMM_ROUNDS=${TC_ROUNDS:-7} timeout $(( $(left) - 5 )) build/bench/bench_tcgemm "$DB" 2>&1
  echo "exit status $?"; } > "$OUT/tcgemm.txt" 2>&1
step "tcgemm tune + bench" $? "$t0"
grep -E "x |geomean" "$OUT/tcgemm.txt" | cut -c1-140 | tail -30
