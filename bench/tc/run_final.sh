#!/bin/bash
# run_final.sh: checks of the leading configurations, then issue 15's eight shapes per type with a
# short list of configurations each, and the per-type summary (geomean of best/cuBLAS, minimum).
set -u
O=${OUT:-/tmp}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
S16="BM=128,BN=256,VEC=8,STAGES=3 BM=128,BN=256,VEC=8,STAGES=3,GROUP=16 BM=128,BN=256,VEC=8,STAGES=3,RASTER=1 BM=128,BN=192,VEC=8,STAGES=4 BM=128,BN=256,VEC=8,STAGES=3,CM=2"
ST="BM=256,BN=128 BM=256,BN=128,CN=2 BM=256,BN=128,CN=2,GROUP=16 BM=256,BN=128,BK=64,STAGES=2 BM=128,BN=256"
timeout 100 ./proto check 0 $S16 > $O/check.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -3
timeout 60 ./proto check 1 BM=128,BN=256,VEC=8,STAGES=3 BM=128,BN=192,VEC=8,STAGES=4 >> $O/check.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -2
timeout 100 ./proto check 2 $ST >> $O/check.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -3
SH=("4096 4096 4096" "8192 8192 8192" "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512")
for t in ${TYPES:-2 0 1}; do
  S=$S16; [ $t = 2 ] && S=$ST
  for sh in "${SH[@]}"; do timeout 100 ./proto bench $t $sh $S >> $O/type$t.txt 2>&1; done
  grep BEST $O/type$t.txt
  grep BEST $O/type$t.txt | awk -v t=$t '{x=$(NF-2); sub("x","",x); x=x+0; s+=log(x); n++; if (n==1||x<mn) mn=x} END {printf "SUMMARY type %d: geomean %.3fx cuBLAS over %d shapes, min %.3fx\n", t, exp(s/n), n, mn}'
done
