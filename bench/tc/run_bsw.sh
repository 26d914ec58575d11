#!/bin/bash
# run_bsw.sh (prepared in session 7, not yet run): TF32 with the B tile (the register fragments' source) in
# boxes of 8 columns with the 32-byte swizzle (BSW=32, -DT9_BSW=32): conflict-free fragment loads with the C
# column order (and so the epilogue's full-sector stores) unchanged (docs/notes/tcgemm.md section 11);
# and SUSP (-DT9_SUSPEND=10^7: waiting warps sleep in mbarrier try_wait, as CUTLASS's waits do).
# Correctness battery first, then steady-state rounds (WARM_MS per contender) against cuBLAS and the
# 128B-swizzled kernel, SM clocks per contender. Prebuilt proto/cubins from bench/tc/.cache when present.
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
CK="BM=256,BN=128,BSW=32 BM=256,BN=128,BSW=32,CN=2 BM=256,BN=128,BSW=32,CM=2 BM=256,BN=128,BSW=32,SPLITK=2 BM=128,BN=256,BSW=32 BM=256,BN=128,BK=64,STAGES=2,BSW=32 BM=128,BN=128,BSW=32,TFK=1 BM=256,BN=128,CN=2,SUSP=10000000"
timeout 60 $P check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -8
C="BM=256,BN=128,CN=2 BM=256,BN=128 BM=256,BN=128,BSW=32,CN=2 BM=256,BN=128,BSW=32 BM=256,BN=128,BSW=32,CN=2,RASTER=1 BM=256,BN=128,CN=2,RASTER=1 BM=256,BN=128,CN=2,SUSP=10000000 BM=256,BN=128,BSW=32,CN=2,SUSP=10000000"
timeout 60 $P rounds 2 8192 8192 8192 10 $C > $O/r8192.txt 2>&1
timeout 30 $P rounds 2 4096 4096 4096 10 $C > $O/r4096.txt 2>&1
C4="BM=256,BN=128,CN=2 BM=256,BN=128 BM=256,BN=128,BSW=32,CN=2 BM=256,BN=128,BSW=32 BM=256,BN=128,BSW=32,CN=2,SUSP=10000000"
for sh in "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  WARM_MS=100 timeout 15 $P rounds 2 $sh 4 $C4 >> $O/rother.txt 2>&1
done
grep -h -E "ROUNDS|FAIL" $O/r8192.txt $O/r4096.txt $O/rother.txt
