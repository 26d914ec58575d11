#!/bin/bash
# bench/s16_dgemm_settle_gpu_run.sh: does DGEMM's re-timing pick change with settles, as tcgemm's did (PENDING,
# notes_tcgemm 18)? One device call: DGEMM 4096^3 and 8192^3 tuned into a fresh database (budget 20 s each, as
# bench/s13_issue16_gpu_run.sh), their 8 fastest re-timed in 8 rounds without a settle, then the same rows again
# after 400 ms settles (AUTOTUNE_RETIME_AGAIN), every round printed; bench/tc/retime_replay.py reads the log.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s16_dgemm_settle_gpu_run.sh
set -u
DEADLINE=${DEADLINE:-400}
source bench/gpu_lib.sh
t0=$(date +%s)
build build/autotune
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || exit 1
DB=$(mktemp -d)/dgemm.db
tune() {    # label, size, then env assignments
    local label=$1 size=$2; shift 2
    local t=$(date +%s)
    echo "## $label ($size; $*)"
    env "$@" AUTOTUNE_RETIME_TRACE=1 AUTOTUNE_RETIME_MAX=8 AUTOTUNE_RETIME_ROUNDS=8 timeout 90 build/autotune \
        --device 0 --db "$DB" --kernel dgemm --size "$size" --budget 20 2>&1 |
        grep -E "valid|evaluated|best|sustained|retime trace|^done|vendor"
    step "$label" $? "$t"
}
{ header "DGEMM re-timing with and without settles: 8 configurations, 8 rounds, every round printed"
  for size in 4096x4096x4096:f64 8192x8192x8192:f64; do
      tune "search + re-timing without a settle" $size AUTOTUNE_RETIME_SETTLE_MS=0
      tune "re-timing after 400 ms settles" $size AUTOTUNE_RETIME_AGAIN=1 AUTOTUNE_RETIME_SETTLE_MS=400
  done
} > "$OUT/dgemm_settle.txt" 2>&1
grep -E "^##|sustained re-timing|rc " "$OUT/dgemm_settle.txt" | cut -c1-300
