#!/bin/bash
# bench/s12_final_gpu_run.sh: the twelfth session's verification call: the
# build, the whole GPU tier, the default `autotune --device 0` timed (the
# back-to-back re-timing's cost), then DGEMM 8192^3 tuned twice into fresh
# databases (which configuration the re-timing keeps, with every
# challenger's ratio) and bench_dgemm on the second. Logs under $OUT;
# DEADLINE (s) bounds the whole.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s12_final_gpu_run.sh
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
make -j"$(nproc)" all build/run_tests build/bench/bench_dgemm > "$OUT/build.log" 2>&1
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }

t0=$(date +%s)
{ header "build/run_tests, GPU tier only"
  AUTOTUNE_TEST_TIER=gpu timeout 260 build/run_tests 2>&1; echo "exit status $?"; } > "$OUT/gputests.log" 2>&1
step "GPU tier" $? "$t0"
grep -E "FAIL|passed, " "$OUT/gputests.log" | tail -8

DB=$(mktemp -d)/default.db
t0=$(date +%s)
{ header "autotune --device 0 (the default run), timed"
  s=$(date +%s.%N)
  timeout 200 build/autotune --device 0 --db "$DB" 2>&1
  echo "exit status $?; wall $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $s }") s"; } > "$OUT/default-tune.txt" 2>&1
step "default run" $? "$t0"
grep -E "^done|exit status|sustained re-timing" "$OUT/default-tune.txt" | cut -c1-160 | tail -14

for i in 1 2; do
    [ "$(left)" -gt 60 ] || break
    DBD=$(mktemp -d)/dgemm.db
    t0=$(date +%s)
    { header "DGEMM 8192^3 tuned into a fresh database (try $i), then bench_dgemm on it (try 2)"
      timeout 40 build/autotune --device 0 --db "$DBD" --kernel dgemm --size 8192x8192x8192:f64 2>&1
      build/autotune show --db "$DBD" --kernel dgemm --all 2>&1 | cut -f3- | sort -t$'\t' -k3 -g | head -20
      if [ $i = 2 ]; then
          timeout 40 build/autotune --device 0 --db "$DBD" --kernel dgemm --size 4096x4096x4096:f64 --quiet 2>&1
          timeout $(( $(left) - 5 )) build/bench/bench_dgemm "$DBD" 2>&1
      fi
      echo "exit status $?"; } > "$OUT/dgemm-$i.txt" 2>&1
    step "DGEMM try $i" $? "$t0"
    grep -E "sustained re-timing|^4096x|^8192x" "$OUT/dgemm-$i.txt" | cut -c1-400
done
