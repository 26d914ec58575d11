#!/bin/bash
# bench/s12_rule_gpu_run.sh: the twelfth session's final rule (a challenger displaces the
# short-timing winner on 5 of 5 rounds, or 4 of 5 by a median of 2%): the default run timed,
# DGEMM 8192^3 tuned into its database, bench_dgemm on it. Logs under $OUT.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s12_rule_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
make -j"$(nproc)" all build/bench/bench_dgemm > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
DB=$(mktemp -d)/default.db
{ echo "# the default run, then DGEMM 8192^3 and bench_dgemm; commit ${COMMIT:-?}; $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  s=$(date +%s.%N)
  timeout 200 build/autotune --device 0 --db "$DB" 2>&1
  echo "exit status $?; wall $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $s }") s"
  timeout 40 build/autotune --device 0 --db "$DB" --kernel dgemm --size 8192x8192x8192:f64 2>&1 | grep -E "evaluated|best |sustained re-timing|vendor cublas"
  timeout 60 build/bench/bench_dgemm "$DB" 2>&1 | grep -E "rounds|^m x n|^4096|^8192|^4097"
} > "$OUT/rule.txt" 2>&1
grep -E "^done|exit status|sustained re-timing|^4096|^8192|^4097" "$OUT/rule.txt" | cut -c1-220
