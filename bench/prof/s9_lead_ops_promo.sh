#!/usr/bin/env bash
# bench/prof/s9_lead_ops_promo.sh: session 9, the lead's third device call. (1) SGEMM at 4096^3
# NN, NT, TN, TT with the one-product kernels (BATCH=0, no batch offsets: bbde61f): the four
# winners (bench/prof/s9_matmul_ops_list.txt, plus the NN tile with op(B) = T), paired rounds
# against cuBLAS with the same ops. (2) TF32 steady-state paired rounds of the tensor maps' L2
# promotion: 256B (the family's) against 128B (PROMO=2), 12 rounds at 8192^3.
set -u
OUT="${OUT:-/tmp/out}"
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  nvcc --version | tail -1; date -u; git log -1 --format=%h 2>/dev/null; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 80 make -j16 build/bench/bench_matmul > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -20 "$OUT/build.log"; }
echo "build done $(el)"
BN_SWEEP_LIST=bench/prof/s9_matmul_ops_list.txt BN_SWEEP_PAIRS=2 BN_SWEEP_ROUNDS=7 timeout 100 \
    build/bench/bench_matmul --sweep "4096x4096x4096,4096x4096x4096:NT,4096x4096x4096:TN,4096x4096x4096:TT" \
    1 2 12 > "$OUT/ops.txt" 2>&1
echo "ops rc=$? $(el)"
grep -E "^pairs|FAILED|skipped" "$OUT/ops.txt" | cut -c1-200
export REPS=20 WARM_MS=150 CUBIN_DIR=$PWD/bench/tc/.cache/cubin
P=./bench/tc/.cache/proto
B="BM=256,BN=128,CN=2"
for sh in "8192 8192 8192"; do
    timeout 50 $P rounds 2 $sh 12 $B $B,PROMO=2 > "$OUT/promo_${sh// /x}.txt" 2>&1
    echo "rounds $sh rc=$? $(el)"
    grep -v "^  BM" "$OUT/promo_${sh// /x}.txt" | tail -6
done
