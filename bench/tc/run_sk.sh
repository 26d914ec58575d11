#!/bin/bash
# (Ran at commit a0ef5ca: the SK=0/1 configuration key and the kernel's T9_SK were removed with the revert in 3e6d173.)
# run_sk.sh: TF32 stream-K (T9_SK, docs/notes/tcgemm.md section 10): correctness battery with and
# without stream-K (incl. clusters, 128x256, BK 64, split-K), then interleaved rounds (proto rounds:
# cuBLAS and each configuration timed in turn, the start rotating; paired ratios) at issue 15's
# TF32 shapes, stream-K on (SK=1) against off (SK=0), CN 1 and 2.
set -u
O=${OUT:-/tmp}
export REPS=${REPS:-40}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader > $O/smi_before.txt
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
CK="BM=256,BN=128 BM=256,BN=128,CN=2 BM=256,BN=128,CM=2 BM=128,BN=256 BM=256,BN=128,BK=64,STAGES=2 BM=128,BN=128,SPLITK=2 BM=256,BN=128,SK=0"
timeout 100 ./proto check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -8
C4="BM=256,BN=128 BM=256,BN=128,CN=2 BM=256,BN=128,SK=0 BM=256,BN=128,CN=2,SK=0"
timeout 40 ./proto rounds 2 4096 4096 4096 12 $C4 > $O/r4096.txt 2>&1
timeout 70 ./proto rounds 2 8192 8192 8192 12 $C4 > $O/r8192.txt 2>&1
for sh in "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  timeout 40 ./proto rounds 2 $sh 5 $C4 >> $O/rother.txt 2>&1
done
timeout 60 ./proto rounds 2 8192 8192 8192 8 $C4 > $O/r8192b.txt 2>&1
grep -h -E "ROUNDS|FAIL|stream-K" $O/r4096.txt $O/r8192.txt $O/rother.txt $O/r8192b.txt
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader > $O/smi_after.txt
cat $O/smi_before.txt $O/smi_after.txt
