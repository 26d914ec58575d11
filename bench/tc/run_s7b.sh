#!/bin/bash
# (Ran at commit b747d1c: the PERM key, -DT9_PERM and the TF32 VEC 4 epilogue were removed in 3037e1c.)
# run_s7b.sh (session 7, second device call): the TF32 candidates again, each contender timed in the
# steady state of the power cap (WARM_MS of back-to-back runs before its timed runs; run_s7a.sh showed
# 8192^3 at 1460-1500 MHz and order effects between neighbours), with the reworked VEC 4 epilogue (no
# per-group branches), cuBLAS's own 8192^3 choice in our terms (128x256, cluster 2 along m: BM=128,BN=256,CM=2),
# GROUP/RASTER; then the family's build and GPU-tier tcgemm tests as they stand.
set -u
O=${OUT:-/tmp}
export REPS=${REPS:-30} WARM_MS=${WARM_MS:-150}
export CUBIN_DIR=$PWD/bench/tc/.cache/cubin
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
P=./bench/tc/.cache/proto
if ! $P compile 2 >/dev/null 2>&1; then
  echo "prebuilt proto does not run: building"; nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1; P=./proto
fi
CK="BM=256,BN=128,VEC=4,CN=2 BM=256,BN=128,PERM=1,VEC=4,CN=2 BM=256,BN=128,VEC=4,SPLITK=2 BM=128,BN=256,CM=2 BM=128,BN=256,VEC=4,CM=2"
timeout 60 $P check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -8
C="BM=256,BN=128,CN=2 BM=256,BN=128 BM=256,BN=128,VEC=4,CN=2 BM=256,BN=128,PERM=1,VEC=4,CN=2 BM=256,BN=128,PERM=1,CN=2 BM=128,BN=256,CM=2 BM=128,BN=256,CM=2,TFK=1 BM=256,BN=128,CN=2,GROUP=16 BM=256,BN=128,CN=2,RASTER=1 BM=256,BN=128,VEC=4"
timeout 70 $P rounds 2 8192 8192 8192 10 $C > $O/r8192.txt 2>&1
timeout 40 $P rounds 2 4096 4096 4096 10 $C > $O/r4096.txt 2>&1
C6="BM=256,BN=128,CN=2 BM=256,BN=128 BM=256,BN=128,VEC=4,CN=2 BM=256,BN=128,PERM=1,VEC=4,CN=2 BM=256,BN=128,VEC=4"
for sh in "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  WARM_MS=100 timeout 15 $P rounds 2 $sh 4 $C6 >> $O/rother.txt 2>&1
done
grep -h -E "ROUNDS|FAIL" $O/r8192.txt $O/r4096.txt $O/rother.txt
# the family as it stands: build, GPU-tier tcgemm tests
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib:${LD_LIBRARY_PATH:-}
timeout 100 make -j16 all build/run_tests > $O/build.log 2>&1; echo "build rc $?"; tail -3 $O/build.log
timeout 60 build/run_tests tcgemm > $O/tests.log 2>&1; echo "tests rc $?"; tail -3 $O/tests.log
