#!/bin/bash
# bench/s16_retime_study_gpu_run.sh: how reliably the settled re-timing picks a configuration at the power cap
# (issue 15, TF32 8192^3). One device call: TF32 8192^3 (and BF16 8192^3) tuned into a fresh database, then
# re-timed again on the same rows (AUTOTUNE_RETIME_AGAIN) with 8 configurations and many rounds, every round's
# times printed (AUTOTUNE_RETIME_TRACE), so rules of fewer rounds can be replayed offline on the data.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s16_retime_study_gpu_run.sh
set -u
DEADLINE=${DEADLINE:-585}
source bench/gpu_lib.sh
build_step build/autotune || exit 1
DB=$(mktemp -d)/tc.db
tune() { tune_traced "$1" tcgemm "$2" "" "${@:3}"; }    # label, size, then env assignments
{ header "settled re-timing study: TF32 and BF16 8192^3, 8 configurations, many rounds, every round printed"
  tune "tf32 search + re-timing 1 (settle 150, 24 rounds)" 8192x8192x8192:tf32 AUTOTUNE_RETIME_MAX=8 AUTOTUNE_RETIME_ROUNDS=24
  tune "tf32 re-timing 2 (settle 150, 24 rounds)" 8192x8192x8192:tf32 AUTOTUNE_RETIME_AGAIN=1 AUTOTUNE_RETIME_MAX=8 AUTOTUNE_RETIME_ROUNDS=24
  tune "tf32 re-timing 3 (settle 400, 12 rounds)" 8192x8192x8192:tf32 AUTOTUNE_RETIME_AGAIN=1 AUTOTUNE_RETIME_MAX=8 AUTOTUNE_RETIME_ROUNDS=12 AUTOTUNE_RETIME_SETTLE_MS=400
  tune "bf16 search + re-timing (settle 150, 16 rounds)" 8192x8192x8192:bf16 AUTOTUNE_RETIME_MAX=8 AUTOTUNE_RETIME_ROUNDS=16
  tune "tf32 re-timing 4 (settle 150, 24 rounds, after bf16)" 8192x8192x8192:tf32 AUTOTUNE_RETIME_AGAIN=1 AUTOTUNE_RETIME_MAX=8 AUTOTUNE_RETIME_ROUNDS=24
} > "$OUT/retime_study.txt" 2>&1
grep -E "^##|sustained re-timing|rc " "$OUT/retime_study.txt" | cut -c1-400
