#!/bin/bash
# bench/s12_batched_gpu_run.sh: issue 16's FP64 batched shapes through the
# tuner with the back-to-back re-timing: bgemm 64^3 x 8192 and 32^3 x 65536
# tuned (bench_bgemm: per call and back to back beside cuBLAS), dgemm 256^3 x
# 512 and 512^3 x 128 tuned (bench_dgemm's batched rows). Logs under $OUT.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s12_batched_gpu_run.sh
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
make -j"$(nproc)" all build/bench/bench_bgemm build/bench/bench_dgemm > "$OUT/build.log" 2>&1
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }
DB=$(mktemp -d)/batched.db
t0=$(date +%s)
{ header "bgemm FP64 64^3 x 8192 and 32^3 x 65536 tuned (budget 20 s each), then bench_bgemm (f64, up to 64^3)"
  for s in 64x64x64:f64:b8192 32x32x32:f64:b65536; do
      timeout 45 build/autotune --device 0 --db "$DB" --kernel bgemm --size "$s" --budget 20 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  done
  BENCH_BGEMM_TYPES=f64 BENCH_BGEMM_MAX_DIM=64 timeout 40 build/bench/bench_bgemm "$DB" 2>&1
  echo "exit status $?"; } > "$OUT/bgemm.txt" 2>&1
step "bgemm tune + bench" $? "$t0"
grep -E "sustained re-timing|x[0-9]+ " "$OUT/bgemm.txt" | cut -c1-300
t0=$(date +%s)
{ header "dgemm 256^3 x 512 and 512^3 x 128 tuned, then bench_dgemm's batched rows (BENCH_DGEMM_BATCHED_ONLY)"
  for s in 256x256x256:f64:b512 512x512x512:f64:b128; do
      timeout 40 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$s" 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  done
  BENCH_DGEMM_BATCHED_ONLY=1 timeout 60 build/bench/bench_dgemm "$DB" 2>&1
  echo "exit status $?"; } > "$OUT/dgemm-batched.txt" 2>&1
step "dgemm batched tune + bench" $? "$t0"
grep -E "sustained re-timing|\(512\)|\(128\)" "$OUT/dgemm-batched.txt" | cut -c1-300
