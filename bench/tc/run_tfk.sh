#!/bin/bash
# run_tfk.sh: TF32 one-wgmma-group-per-k8 experiment (T9_TFK 0 = per stage, the committed kernel;
# 1 and 3 = groups in flight): TF32 checks, 4096^3 and 8192^3 per variant, one BF16 row, then
# issue 15's other TF32 shapes for the variants.
set -u
O=${OUT:-/tmp}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
ST="BM=256,BN=128 BM=256,BN=128,CN=2 BM=256,BN=128,CN=2,GROUP=16 BM=128,BN=256 BM=192,BN=192,WG=3 BM=256,BN=128,BK=64,STAGES=2"
for x in 1 3; do
  echo "== check T9_TFK=$x"
  XDEFS=-DT9_TFK=$x timeout 60 ./proto check 2 $ST > $O/check_tfk$x.txt 2>&1; grep -cE " ok " $O/check_tfk$x.txt; grep -E "FAIL|CHECK|failed|rror" $O/check_tfk$x.txt | tail -4
done
for x in 0 1 3; do
  for sh in "4096 4096 4096" "8192 8192 8192"; do
    XDEFS=-DT9_TFK=$x timeout 40 ./proto bench 2 $sh $ST >> $O/bench_tfk$x.txt 2>&1
  done
  echo "== bench T9_TFK=$x"; grep BEST $O/bench_tfk$x.txt
done
timeout 30 ./proto bench 0 4096 4096 4096 BM=128,BN=256,VEC=8,STAGES=3 > $O/bench_bf16.txt 2>&1; grep BEST $O/bench_bf16.txt
SH=("2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512")
for x in 1 3 0; do
  for sh in "${SH[@]}"; do XDEFS=-DT9_TFK=$x timeout 30 ./proto bench 2 $sh $ST >> $O/bench_tfk$x.txt 2>&1; done
  echo "== all shapes T9_TFK=$x"; grep BEST $O/bench_tfk$x.txt
done
