#!/bin/bash
# run_s11.sh (session 11, one device call of at most 240 s): cuBLAS's TF32 main-loop schedule (TFP) and its
# TMA-store epilogue (TES) against the family's TF32 kernel, in steady-state paired rounds with the SM clock and
# power of every contender (docs/notes/tcgemm.md section 14).
#   1. proto check battery of TFP and TES configurations (odd shapes, offsets, odd ld, alpha/beta, split-K, clusters);
#   2. rounds at 8192^3 and 4096^3 (16 each, WARM_MS 150): base, TFP, TES, TFP + TES;
#   3. the family's GPU-tier tcgemm tests built with T9_TFP on for TF32 (the device copy's kernel default is patched
#      before its build; proto reads the unpatched copy through TCGEMM_SRC, so its cubins come from CUBIN_DIR);
#   4. the other six issue-15 shapes, 5 rounds each (WARM_MS 100), the same contenders.
# `run_s11.sh compile` (no GPU, LD_LIBRARY_PATH to a stub libcuda): every configuration's cubin into CUBIN_DIR.
# Every phase has a timeout and is skipped when it would pass the script's own deadline (T_END seconds).
set -u
O=${OUT:-/tmp}
T0=$(date +%s); T_END=${T_END:-226}
left() { echo $(( T_END - ($(date +%s) - T0) )); }
step() { echo "== $1 (elapsed $(( $(date +%s) - T0 )) s)"; }
export REPS=${REPS:-20} WARM_MS=${WARM_MS:-150}
export CUBIN_DIR=$PWD/bench/tc/.cache/cubin
export LD_LIBRARY_PATH=$PWD/../../.dev/lib:${LD_LIBRARY_PATH:-}
P=./bench/tc/.cache/proto
B="BM=256,BN=128,CN=2"
X0="$B"                      # the family's TF32 default
X1="$B,TFP=1"                # cuBLAS's main-loop schedule
X2="$B,TES=1"                # cuBLAS's epilogue form (C staged in shared memory, TMA stores)
X3="$B,TFP=1,TES=1"
CK="$X1 $X2 $X3 BM=256,BN=128,CM=2,TFP=1,TES=1 BM=128,BN=128,TFP=1,TES=1 BM=256,BN=128,BK=64,STAGES=2,TFP=1
    BM=128,BN=256,CM=2,TFP=1 BM=256,BN=128,SPLITK=2,TFP=1 BM=64,BN=64,WG=1,TFP=1,TES=1"
if [ "${1:-}" = compile ]; then
  $P compile 2 $X0 $X1 $X2 $X3 $CK; exit $?
fi
cp templates/tcgemm.cu bench/tc/.cache/tcgemm_s11.cu
export TCGEMM_SRC=$PWD/bench/tc/.cache/tcgemm_s11.cu
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } \
  > $O/env.txt 2>&1
cat $O/env.txt
# the family with T9_TFP on for TF32 (device copy only)
sed -i 's|^#define T9_TFP 0 |#define T9_TFP (TYPE == 2 \&\& !PING) |' templates/tcgemm.cu
grep -n '^#define T9_TFP' templates/tcgemm.cu
( export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib
  timeout 150 nice make -j14 all build/run_tests > $O/build.log 2>&1; echo "build rc $? at $(( $(date +%s) - T0 )) s" >> $O/build.log ) &
BUILD=$!
if ! $P compile 2 >/dev/null 2>&1; then
  echo "prebuilt proto does not run: building"; nvcc -O2 -std=c++17 -arch=sm_90 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1; P=./proto
fi
step "check"
timeout 45 $P check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror|rejected" $O/check.txt | tail -8
C="$X0 $X1 $X2 $X3"
step "rounds 8192"
timeout 50 $P rounds 2 8192 8192 8192 16 $C > $O/r8192.txt 2>&1
step "rounds 4096"
timeout 35 $P rounds 2 4096 4096 4096 16 $C > $O/r4096.txt 2>&1
grep -h -E "^ROUNDS|FAIL" $O/r8192.txt $O/r4096.txt | cut -c1-60,100-
step "tests (waiting for the build)"
wait $BUILD; tail -2 $O/build.log
if [ "$(left)" -gt 40 ]; then
  timeout $(( $(left) - 35 )) build/run_tests tcgemm > $O/tests.log 2>&1; echo "tests rc $?"; tail -3 $O/tests.log
fi
step "other shapes"
for sh in "8192 8192 1024" "16384 16384 512" "2048 2048 2048" "1024 8192 8192" "8192 1024 8192" "4097 4097 4097"; do
  [ "$(left)" -gt 7 ] || { echo "skipped $sh: deadline"; continue; }
  WARM_MS=100 timeout $(( $(left) - 2 )) $P rounds 2 $sh 5 $C >> $O/rother.txt 2>&1
done
grep -h -E "^ROUNDS|FAIL" $O/rother.txt | cut -c1-60,100-
step "done"
