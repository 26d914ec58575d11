#!/bin/bash
# bench/s12_dgemm_repeat_gpu_run.sh: how often the tuner keeps the TMA row at
# DGEMM 8192^3: three tunings into fresh databases (each re-timing's line and
# the stored rows by short time), bench_dgemm on the last; then SGEMM NT
# 4096^3 tuned (--budget 40) and bench_matmul --ops on that database. Logs
# under $OUT.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s12_dgemm_repeat_gpu_run.sh
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
make -j"$(nproc)" all build/bench/bench_dgemm build/bench/bench_matmul > "$OUT/build.log" 2>&1
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }
for i in 1 2 3; do
    DB=$(mktemp -d)/dgemm.db
    t0=$(date +%s)
    { header "DGEMM 8192^3 tuned into a fresh database (try $i)"
      timeout 40 build/autotune --device 0 --db "$DB" --kernel dgemm --size 8192x8192x8192:f64 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
      build/autotune show --db "$DB" --kernel dgemm --all 2>&1 | cut -f3- | sort -t$'\t' -k3 -g | head -6
      [ $i = 3 ] && timeout 60 build/bench/bench_dgemm "$DB" 2>&1 | grep -E "^dgemm|rounds|^m x n|^8192|^4096"
      echo "exit status $?"; } > "$OUT/dgemm-$i.txt" 2>&1
    step "DGEMM try $i" $? "$t0"
    grep -E "sustained re-timing|^8192x" "$OUT/dgemm-$i.txt" | cut -c1-250
done
DB=$(mktemp -d)/nt.db
t0=$(date +%s)
{ header "SGEMM NT 4096^3 tuned (--budget 40), then bench_matmul --ops on that database"
  timeout 80 build/autotune --device 0 --db "$DB" --kernel matmul --size 4096x4096x4096:NT --budget 40 2>&1 | grep -E "valid|evaluated|best|sustained|^done|vendor cublas"
  timeout 90 build/bench/bench_matmul --ops "$DB" 2>&1
  echo "exit status $?"; } > "$OUT/nt.txt" 2>&1
step "NT tune + bench" $? "$t0"
grep -E "sustained re-timing|NT" "$OUT/nt.txt" | cut -c1-250 | head -12
