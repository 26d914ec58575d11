#!/bin/bash
# run_tb.sh: TF32 with the B tile transposed to K-major shared memory by the producer warpgroup's
# warps 1-3 (T9_TB=1: both wgmma operands by descriptor, one group per stage; 3 stages fit) against
# the register-fragment kernel (T9_TFK 3, 4 stages): correctness battery, then interleaved rounds
# (proto rounds: cuBLAS and each configuration in turn, start rotating; paired ratios).
set -u
O=${OUT:-/tmp}
export REPS=${REPS:-40}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader > $O/smi_before.txt
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
CK="BM=256,BN=128,STAGES=3,TB=1 BM=256,BN=128,STAGES=3,CN=2,TB=1 BM=256,BN=128,STAGES=3,CM=2,TB=1 BM=128,BN=128,TB=1 BM=64,BN=64,WG=1,TB=1 BM=256,BN=128,STAGES=2,BK=64,TB=1 BM=256,BN=128"
timeout 100 ./proto check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -8
C="BM=256,BN=128 BM=256,BN=128,CN=2 BM=256,BN=128,STAGES=3,TB=1 BM=256,BN=128,STAGES=3,CN=2,TB=1 BM=256,BN=128,STAGES=3,CM=2,TB=1 BM=256,BN=128,STAGES=3"
timeout 40 ./proto rounds 2 4096 4096 4096 10 $C > $O/r4096.txt 2>&1
timeout 80 ./proto rounds 2 8192 8192 8192 10 $C > $O/r8192.txt 2>&1
C4="BM=256,BN=128 BM=256,BN=128,CN=2 BM=256,BN=128,STAGES=3,TB=1 BM=256,BN=128,STAGES=3,CN=2,TB=1"
for sh in "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  timeout 30 ./proto rounds 2 $sh 4 $C4 >> $O/rother.txt 2>&1
done
grep -h -E "ROUNDS|FAIL" $O/r4096.txt $O/r8192.txt $O/rother.txt
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader > $O/smi_after.txt
cat $O/smi_before.txt $O/smi_after.txt
