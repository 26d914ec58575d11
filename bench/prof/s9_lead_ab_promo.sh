#!/usr/bin/env bash
# bench/prof/s9_lead_ab_promo.sh: session 9, the lead's second device call. (1) The NN 4096^3
# winner's source today against b9ff5ed's (2026-11-22) in one process, paired rounds against
# cuBLAS (docs/notes/matmul.md round 8 saw the NN winner ~6% slower than on 11-22). (2) The TF32
# tensor maps' L2 promotion (bench/tc/run_promo.sh, trimmed): ncu counters at 8192^3:
# counters of PROMO 3 (256B, the family's) against 2 (128B) and 0 (none).
# Needs bench/ab/ (the old source and the list) and bench/tc/.cache (proto and cubins).
set -u
OUT="${OUT:-/tmp/out}"
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  nvcc --version | tail -1; ncu --version | tail -1; date -u; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 80 make -j16 build/bench/bench_matmul > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -20 "$OUT/build.log"; }
echo "build done $(el)"
BN_SWEEP_LIST=bench/ab/nn_ab.txt BN_SWEEP_PAIRS=2 BN_SWEEP_ROUNDS=7 timeout 80 \
    build/bench/bench_matmul --sweep 4096x4096x4096 1 2 12 > "$OUT/nn_ab.txt" 2>&1
echo "nn a/b rc=$? $(el)"
grep -E "^sweep|^pairs|FAILED|skipped|ms" "$OUT/nn_ab.txt" | cut -c1-300 | tail -20
export REPS=20 WARM_MS=150 CUBIN_DIR=$PWD/bench/tc/.cache/cubin
P=./bench/tc/.cache/proto
B="BM=256,BN=128,CN=2"
MET=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lrc__lts2lrc_sectors_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors.sum,gpu__time_duration.sum,gpc__cycles_elapsed.max
timeout 45 ncu --clock-control none --metrics $MET --print-units base -k regex:'^tcgemm$|xmma|nvjet|cutlass' --csv \
    --log-file "$OUT/ncu_promo_8192.csv" $P prof 2 8192 8192 8192 $B $B,PROMO=2 $B,PROMO=0 \
    > "$OUT/ncu_promo.log" 2>&1
echo "ncu rc=$? $(el)"
python3 bench/tc/ncu_table.py "$OUT/ncu_promo_8192.csv" 8192x8192x8192 2>&1 | tail -12
# the check battery and paired rounds of PROMO follow in the final call if the counters move
