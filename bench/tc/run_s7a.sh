#!/bin/bash
# (Ran at commit d65e066: the PERM key, -DT9_PERM and the TF32 VEC 4 epilogue were removed in 3037e1c.)
# run_s7a.sh (session 7, first device call): TF32 candidates for 8192^3 (docs/notes/tcgemm.md section 11):
# conflict-free fragment loads (PERM=1, -DT9_PERM=1), the 16-byte epilogue (VEC=4), the transposed B tile
# (TB=1, STAGES=3), clusters, GROUP; correctness battery first, then interleaved rounds with the SM clock
# sampled per contender (NVML), nvidia-smi logged every 200 ms, and cuBLASLt's own log of its 8192^3 choice.
# Uses a proto binary and cubins built on the workstation (bench/tc/.cache, CUBIN_DIR) when they load.
set -u
O=${OUT:-/tmp}
export REPS=${REPS:-30}
export CUBIN_DIR=$PWD/bench/tc/.cache/cubin
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $O/smi.csv 2>&1 &
SMI=$!
P=./bench/tc/.cache/proto
if ! $P compile 2 >/dev/null 2>&1; then
  echo "prebuilt proto does not run: building"; nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1; P=./proto
fi
CK="BM=256,BN=128,PERM=1,CN=2 BM=256,BN=128,PERM=1,VEC=4,CN=2 BM=256,BN=128,VEC=4 BM=256,BN=128,PERM=1,SPLITK=2 BM=256,BN=128,PERM=1,VEC=4,CM=2,CN=2 BM=256,BN=128,STAGES=3,TB=1,CN=2 BM=256,BN=128,PERM=1,VEC=4,TFK=1 BM=128,BN=128,PERM=1,VEC=4"
timeout 100 $P check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -8
C="BM=256,BN=128 BM=256,BN=128,CN=2 BM=256,BN=128,PERM=1,CN=2 BM=256,BN=128,PERM=1,VEC=4,CN=2 BM=256,BN=128,VEC=4,CN=2 BM=256,BN=128,PERM=1,VEC=4 BM=256,BN=128,STAGES=3,TB=1,CN=2 BM=256,BN=128,STAGES=3,TB=1 BM=256,BN=128,PERM=1,VEC=4,CM=2,CN=2 BM=256,BN=128,PERM=1,VEC=4,CN=2,GROUP=16 BM=256,BN=128,PERM=1,VEC=4,CN=2,GROUP=4 BM=256,BN=128,PERM=1,VEC=4,CN=2,TFK=1"
timeout 60 $P rounds 2 8192 8192 8192 14 $C > $O/r8192.txt 2>&1
timeout 30 $P rounds 2 4096 4096 4096 14 $C > $O/r4096.txt 2>&1
C6="BM=256,BN=128,CN=2 BM=256,BN=128,PERM=1,CN=2 BM=256,BN=128,PERM=1,VEC=4,CN=2 BM=256,BN=128,VEC=4,CN=2 BM=256,BN=128,PERM=1,VEC=4 BM=256,BN=128,STAGES=3,TB=1,CN=2"
for sh in "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  timeout 25 $P rounds 2 $sh 5 $C6 >> $O/rother.txt 2>&1
done
grep -h -E "ROUNDS|FAIL" $O/r8192.txt $O/r4096.txt $O/rother.txt
CUBLASLT_LOG_LEVEL=5 REPS=1 timeout 20 $P bench 2 8192 8192 8192 > $O/cublaslt_8192.txt 2>&1
CUBLASLT_LOG_LEVEL=5 REPS=1 timeout 20 $P bench 2 4096 4096 4096 > $O/cublaslt_4096.txt 2>&1
grep -i -E "algo|tile|cluster|kernel|sm90" $O/cublaslt_8192.txt | head -5 | cut -c1-400
kill $SMI
