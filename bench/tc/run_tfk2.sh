#!/bin/bash
# run_tfk2.sh: TF32 with T9_TFK 3 the default: wider check battery (PING, SPLITK, clusters, wgmma N
# 64), issue 15's eight TF32 shapes, T9_TFK 3 / 1 / 0 at 4096^3 and 8192^3 in one session, BF16 and
# FP16 rows at 4096^3 and 8192^3 (their PTX is unchanged). REPS 50.
set -u
O=${OUT:-/tmp}
export REPS=50
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
ST="BM=256,BN=128 BM=256,BN=128,CN=2 BM=256,BN=128,CN=2,GROUP=16 BM=128,BN=256 BM=192,BN=192,WG=3 BM=256,BN=128,BK=64,STAGES=2"
CK="$ST BM=256,BN=128,SPLITK=2 BM=128,BN=128,PING=1 BM=64,BN=64,WG=1 BM=128,BN=256,CM=2,CN=2 BM=256,BN=128,CM=2"
timeout 90 ./proto check 2 $CK > $O/check.txt 2>&1; echo "ok lines: $(grep -c ' ok ' $O/check.txt)"; grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -5
SH=("4096 4096 4096" "8192 8192 8192" "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512")
for sh in "${SH[@]}"; do timeout 40 ./proto bench 2 $sh $ST >> $O/type2.txt 2>&1; done
grep BEST $O/type2.txt
grep BEST $O/type2.txt | awk '{x=$(NF-2); sub("x","",x); x=x+0; s+=log(x); n++; if (n==1||x<mn) mn=x} END {printf "SUMMARY type 2: geomean %.3fx cuBLAS over %d shapes, min %.3fx\n", exp(s/n), n, mn}'
for x in 1 0 3; do
  for sh in "4096 4096 4096" "8192 8192 8192"; do XDEFS=-DT9_TFK=$x timeout 30 ./proto bench 2 $sh BM=256,BN=128 BM=256,BN=128,CN=2 >> $O/tfk$x.txt 2>&1; done
  echo "== T9_TFK=$x"; grep BEST $O/tfk$x.txt
done
for t in 0 1; do for sh in "4096 4096 4096" "8192 8192 8192"; do timeout 30 ./proto bench $t $sh BM=128,BN=256,VEC=8,STAGES=3 >> $O/type$t.txt 2>&1; done; grep BEST $O/type$t.txt; done
