#!/bin/bash
# run4.sh: pingpong checks, then the BF16 sweep over issue 15's eight shapes, FP16 and TF32 at 4096^3/8192^3.
set -u
O=${OUT:-/tmp}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
timeout 100 ./proto check 0 BM=128,BN=128,PING=1,STAGES=6 BM=64,BN=256,PING=1,CM=2,STAGES=5 BM=128,BN=128,PING=1,CN=2,SPLITK=2 > $O/check.txt 2>&1; grep -E "FAIL|CHECK|failed|rror|no grid" $O/check.txt | head
timeout 60 ./proto check 2 BM=256,BN=64,PING=1,STAGES=5 BM=128,BN=128,PING=1,CM=2,STAGES=6 >> $O/check.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -3
S="BM=128,BN=256 BM=128,BN=256,CM=2 BM=128,BN=128,PING=1,STAGES=6 BM=128,BN=128,PING=1,CM=2,STAGES=6 BM=128,BN=128,PING=1,CN=2,STAGES=6 BM=64,BN=256,PING=1,STAGES=5 BM=64,BN=256,PING=1,CM=2,STAGES=5"
for sh in "4096 4096 4096" "8192 8192 8192" "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  timeout 100 ./proto bench 0 $sh $S >> $O/bf16.txt 2>&1; grep BEST $O/bf16.txt | tail -1
done
for sh in "4096 4096 4096" "8192 8192 8192"; do timeout 60 ./proto bench 1 $sh BM=128,BN=256,CM=2 BM=128,BN=128,PING=1,CM=2,STAGES=6 BM=64,BN=256,PING=1,CM=2,STAGES=5 >> $O/fp16.txt 2>&1; grep BEST $O/fp16.txt | tail -1; done
ST="BM=256,BN=128 BM=256,BN=64,PING=1,STAGES=5 BM=256,BN=64,PING=1,CN=2,STAGES=5 BM=128,BN=128,PING=1,STAGES=6 BM=128,BN=128,PING=1,CM=2,STAGES=6"
for sh in "4096 4096 4096" "8192 8192 8192"; do timeout 80 ./proto bench 2 $sh $ST >> $O/tf32.txt 2>&1; grep BEST $O/tf32.txt | tail -1; done
