#!/bin/bash
# bench/settle_study_gpu_run.sh: does a family's re-timing pick change with settles, as tcgemm's did (notes_tcgemm
# 18)? One device call: each of SIZES of KERNEL tuned into a fresh database (--budget BUDGET s), its fastest (8 at
# most) re-timed in ROUNDS rounds without a settle, then the same rows again after 400 ms settles
# (AUTOTUNE_RETIME_AGAIN), every round printed; bench/tc/retime_replay.py reads the log. Defaults: DGEMM 4096^3
# and 8192^3, budget 20, 8 rounds (session 16 ran them as bench/s16_dgemm_settle_gpu_run.sh at 058f2d9).
# usage (repository root, carry .dev): COMMIT=hash [KERNEL=bgemm SIZES="..." BUDGET=s ROUNDS=n]
#        bash bench/settle_study_gpu_run.sh
set -u
DEADLINE=${DEADLINE:-400}
KERNEL=${KERNEL:-dgemm}
SIZES=${SIZES:-4096x4096x4096:f64 8192x8192x8192:f64}
source bench/gpu_lib.sh
build_step build/autotune || exit 1
DB=$(mktemp -d)/study.db
tune() {    # label, size, then env assignments
    tune_traced "$1" "$KERNEL" "$2" "--budget ${BUDGET:-20}" "${@:3}" AUTOTUNE_RETIME_MAX=8 \
        AUTOTUNE_RETIME_ROUNDS=${ROUNDS:-8}
}
{ header "$KERNEL re-timing with and without settles: 8 configurations, ${ROUNDS:-8} rounds, every round printed"
  for size in $SIZES; do
      tune "search + re-timing without a settle" "$size" AUTOTUNE_RETIME_SETTLE_MS=0
      tune "re-timing after 400 ms settles" "$size" AUTOTUNE_RETIME_AGAIN=1 AUTOTUNE_RETIME_SETTLE_MS=400
  done
} > "$OUT/${KERNEL}_settle.txt" 2>&1
grep -E "^##|sustained re-timing|rc " "$OUT/${KERNEL}_settle.txt" | cut -c1-300
