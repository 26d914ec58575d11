#!/bin/bash
# run5.sh: TMA-store epilogue (VEC 8) checks, then the eight shapes per type with the leading configurations.
set -u
O=${OUT:-/tmp}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
timeout 100 ./proto check 0 BM=128,BN=256,VEC=8,STAGES=3 BM=128,BN=256,VEC=8,STAGES=3,CM=2 BM=256,BN=128,VEC=8,STAGES=3,CN=2 > $O/check.txt 2>&1; grep -E "FAIL|CHECK|failed|rror|no grid" $O/check.txt | head
timeout 60 ./proto check 1 BM=128,BN=256,VEC=8,STAGES=3,CM=2 >> $O/check.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -2
timeout 60 ./proto check 2 BM=256,BN=128,CM=2 BM=256,BN=128,CN=2 >> $O/check.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -2
SH=("4096 4096 4096" "8192 8192 8192" "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512")
S="BM=128,BN=256,CM=2 BM=128,BN=256,VEC=8,STAGES=3 BM=128,BN=256,VEC=8,STAGES=3,CM=2 BM=128,BN=256,VEC=8,STAGES=3,CN=2 BM=256,BN=128,VEC=8,STAGES=3,CM=2 BM=128,BN=128,VEC=8,STAGES=5,CM=2"
for sh in "${SH[@]}"; do timeout 100 ./proto bench 0 $sh $S >> $O/bf16.txt 2>&1; grep BEST $O/bf16.txt | tail -1; done
for sh in "${SH[@]}"; do timeout 100 ./proto bench 1 $sh BM=128,BN=256,CM=2 BM=128,BN=256,VEC=8,STAGES=3,CM=2 BM=256,BN=128,VEC=8,STAGES=3,CM=2 >> $O/fp16.txt 2>&1; grep BEST $O/fp16.txt | tail -1; done
for sh in "${SH[@]}"; do timeout 100 ./proto bench 2 $sh BM=256,BN=128 BM=256,BN=128,CM=2 BM=256,BN=128,CN=2 BM=128,BN=256,STAGES=4 >> $O/tf32.txt 2>&1; grep BEST $O/tf32.txt | tail -1; done
