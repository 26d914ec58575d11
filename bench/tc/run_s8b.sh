#!/bin/bash
# run_s8b.sh (session 8, second device call): T9_PAIR=2 (now the kernel's TF32 default: a lane's fragment rows are
# adjacent C columns, chunks {0,1,4,5} so the 8-byte fragment loads are conflict-free under the 128-byte swizzle,
# float2 full-sector epilogue stores) against the old column order (PAIR=0), PAIR=1 and PAIR2 + TKG2; check
# battery first, steady-state paired rounds at 8192^3 and 4096^3, then the other six shapes; meanwhile the family
# builds on the CPU, then its GPU-tier tcgemm tests run with the new default.
set -u
O=${OUT:-/tmp}
export REPS=${REPS:-20} WARM_MS=${WARM_MS:-150}
export CUBIN_DIR=$PWD/bench/tc/.cache/cubin
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
( export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib:${LD_LIBRARY_PATH:-}
  timeout 150 nice make -j12 all build/run_tests > $O/build.log 2>&1; echo "build rc $?" >> $O/build.log ) &
BUILD=$!
P=./bench/tc/.cache/proto
if ! $P compile 2 >/dev/null 2>&1; then
  echo "prebuilt proto does not run: building"; nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1; P=./proto
fi
B="BM=256,BN=128,CN=2"
CK="$B BM=256,BN=128 BM=256,BN=128,SPLITK=2 BM=256,BN=128,CM=2 BM=128,BN=256 BM=128,BN=128,TFK=1 BM=64,BN=64,WG=1
 $B,TKG=2,TFK=1 BM=256,BN=128,BK=64,STAGES=2 $B,PAIR=1"
timeout 35 $P check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -8
C="$B,PAIR=0 $B $B,TKG=2,TFK=1 $B,PAIR=1 BM=256,BN=128"
timeout 45 $P rounds 2 8192 8192 8192 12 $C > $O/r8192.txt 2>&1
timeout 30 $P rounds 2 4096 4096 4096 12 $C > $O/r4096.txt 2>&1
grep -h -E "^ROUNDS|FAIL" $O/r8192.txt $O/r4096.txt | cut -c1-60,100-
C4="$B,PAIR=0 $B $B,TKG=2,TFK=1"
for sh in "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  WARM_MS=100 timeout 10 $P rounds 2 $sh 5 $C4 >> $O/rother.txt 2>&1
done
grep -h -E "^ROUNDS|FAIL" $O/rother.txt | cut -c1-60,100-
wait $BUILD; tail -2 $O/build.log
export LD_LIBRARY_PATH=$PWD/../../.dev/lib:${LD_LIBRARY_PATH:-}
timeout 45 build/run_tests tcgemm > $O/tests.log 2>&1; echo "tests rc $?"; tail -3 $O/tests.log
