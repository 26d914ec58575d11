#!/bin/bash
# bench/s11_final_gpu_run.sh: the eleventh session's last device call, on two
# H200s: the build, the whole GPU tier (the MPI front end's two-GPU test
# included), DGEMM tuned with the TMA lattice rows and bench_dgemm on that
# database beside cuBLAS, then one round of bench/multigpu.sh if time is
# left. Logs under $OUT; DEADLINE (seconds, default 560) bounds the whole.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s11_final_gpu_run.sh
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
    nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | sed 's/^/# GPU: /'
    echo "# CUDA toolkit: $(nvcc --version | grep -o 'release [0-9.]*')"
}
t0=$(date +%s)
make -j"$(nproc)" all build/run_tests build/bench/bench_dgemm > "$OUT/build.log" 2>&1
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }

t0=$(date +%s)
{ header "build/run_tests, GPU tier only (two GPUs: the MPI test runs)"
  AUTOTUNE_TEST_TIER=gpu timeout 300 build/run_tests 2>&1; echo "exit status $?"; } > "$OUT/gputests.log" 2>&1
step "GPU tier" $? "$t0"
grep -E "FAIL|passed, " "$OUT/gputests.log" | tail -8

DB=$(mktemp -d)/dgemm.db
t0=$(date +%s)
{ header "DGEMM: default dgemm tuning, then the issue's shapes, then bench_dgemm on that database"
  timeout 40 build/autotune --device 0 --db "$DB" --kernel dgemm --quiet 2>&1
  for shape in 8192x8192x8192:f64 256x256x256:f64:b512 512x512x512:f64:b128; do
      timeout 30 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$shape" --quiet 2>&1
  done
  build/autotune show --db "$DB" 2>&1 | grep -iE "dgemm|TMA" | head -20
  timeout $(( $(left) > 260 ? 110 : $(left) - 150 )) build/bench/bench_dgemm "$DB" 2>&1
  echo "exit status $?"; } > "$OUT/dgemm.txt" 2>&1
step "DGEMM tune + bench" $? "$t0"
grep -E "x cuBLAS|ratio|4096|8192" "$OUT/dgemm.txt" | tail -12

if [ "$(left)" -gt 200 ]; then
    t0=$(date +%s)
    SKIP_BUILD=1 ROUNDS=1 timeout $(( $(left) - 5 )) bash bench/multigpu.sh /tmp/mg > /dev/null 2>&1
    step "multigpu one round" $? "$t0"
    cp /tmp/mg/multigpu.txt "$OUT/" 2>/dev/null
    grep "^# " "$OUT/multigpu.txt" | head -12
else
    echo "multigpu skipped: $(left) s left" | tee -a "$OUT/steps.txt"
fi
