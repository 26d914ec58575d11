#!/bin/bash
# run_tfo.sh: TF32 fragment/fence order experiment (T9_TFO 0, 1, 2): checks, 4096^3 and 8192^3.
set -u
O=${OUT:-/tmp}
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
for x in 0 1 2; do
  echo "== T9_TFO=$x"
  XDEFS=-DT9_TFO=$x timeout 60 ./proto check 2 BM=256,BN=128 BM=256,BN=128,CN=2 2>&1 | grep -E "FAIL|CHECK"
  for sh in "4096 4096 4096" "8192 8192 8192"; do XDEFS=-DT9_TFO=$x timeout 60 ./proto bench 2 $sh BM=256,BN=128 BM=256,BN=128,CN=2 2>&1; done
done | tee $O/tfo.txt | grep -E "==|CHECK|FAIL|BEST"
