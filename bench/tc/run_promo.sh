#!/bin/bash
# (Record of session 9. The UNI, SNAKE, L2A and L2B keys it uses were taken out after the session with their
# kernel code, which stays at commit 1ee6570; run_promo.sh ran in part: docs/notes/tcgemm.md section 13.)
# run_promo.sh (prepared in session 9, not yet run): the TF32 kernel's remaining L2-side excess over cuBLAS
# (docs/notes/tcgemm.md section 13: ~22M L2 read sectors at 8192^3 that never reach the SMs, +85% L2 fabric sectors)
# against the tensor maps' L2 promotion (ours 256B; CUTLASS's default 128B) and an evict_last hint on A alone.
# ncu counters of each candidate beside cuBLAS at 8192^3 and 4096^3, then steady-state paired rounds; everything
# goes to stdout and two csv files (the device returns at most 8 files). Needs the cubins of `run_promo.sh compile`
# (no GPU) in bench/tc/.cache/cubin and the prebuilt bench/tc/.cache/proto.
set -u
O=${OUT:-/tmp}
T0=$(date +%s)
step() { echo "== $1 (elapsed $(( $(date +%s) - T0 )) s)"; }
export REPS=${REPS:-20} WARM_MS=${WARM_MS:-150}
export CUBIN_DIR=$PWD/bench/tc/.cache/cubin
P=./bench/tc/.cache/proto
B="BM=256,BN=128,CN=2"
X0="$B"                       # the family's TF32 kernel (PROMO 3 = 256B)
X1="$B,PROMO=2"               # 128B
X2="$B,PROMO=0"               # none
X3="$B,UNI=1,SNAKE=1,PROMO=2"
X4="$B,UNI=1,L2A=2"           # A evict_last alone
X5="BM=256,BN=128,CN=1,PROMO=2"
if [ "${1:-}" = compile ]; then $P compile 2 $X0 $X3 $X4 $X5; exit $?; fi
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1
  ncu --version | tail -1; }
MET=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lrc__lts2lrc_sectors_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors.sum,gpu__time_duration.sum,gpc__cycles_elapsed.max
for sh in "8192 8192 8192" "4096 4096 4096"; do
  tag=${sh// /x}; step "ncu $tag"
  timeout 40 ncu --clock-control none --metrics $MET --print-units base -k regex:'^tcgemm$|xmma|nvjet|cutlass' --csv \
    --log-file $O/ncu_$tag.csv $P prof 2 $sh $X0 $X1 $X2 $X3 $X4 $X5 2>&1 | grep -E "^prof|rror"
  python3 bench/tc/ncu_table.py $O/ncu_$tag.csv $tag
done
step "check"
timeout 30 $P check 2 $X1 $X2 $X4 2>&1 | grep -E "FAIL|CHECK"
for sh in "8192 8192 8192" "4096 4096 4096"; do
  step "rounds $sh"
  timeout 45 $P rounds 2 $sh 12 $X0 $X1 $X2 $X3 2>&1 | grep -v "^  BM"
done
step "done"
