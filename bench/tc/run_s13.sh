#!/bin/bash
# run_s13.sh (session 13, one device call): what does the register-operand path cost? cuBLAS's TF32 kernel for
# the all-K-major layout (column-major "TN": both wgmma operands from shared memory, BLAS_ALT=TN) beside its NN
# kernel (A operand from registers, as ours) and the family's TF32 winner, in steady-state paired rounds with SM
# clock, power and energy per flop; BF16 the same for comparison (its NN kernel reads both operands from shared
# memory already). If cuBLAS TN runs at a clearly higher clock than its NN at the same power, an all-shared-memory
# TF32 kernel (B packed K-major first) is worth building; if not, the register path is not the energy sink.
set -u
O=${OUT:-/tmp}
export REPS=${REPS:-20} WARM_MS=${WARM_MS:-150}
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
mkdir -p bench/tc/.cache
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt 2>&1
cat $O/env.txt
timeout 120 nvcc -O2 -std=c++17 -o bench/tc/.cache/proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas > $O/build.log 2>&1 || { tail -20 $O/build.log; exit 1; }
P=bench/tc/.cache/proto
TF="BM=256,BN=128,CN=2,VEC=8"                                        # the family's TF32 row the tuner picks (TES)
BF="BM=128,BN=256,BK=64,STAGES=3,WG=2,VEC=8,RASTER=0,GROUP=16"      # session 5's BF16 winner
export BLAS_ALT=TN
for pass in 1 2; do
  echo "== pass $pass: $(nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader)"
  timeout 100 $P rounds 2 8192 8192 8192 ${ROUNDS:-8} $TF > $O/tf32_8192_$pass.txt 2>&1
  timeout 60 $P rounds 2 4096 4096 4096 ${ROUNDS:-8} $TF > $O/tf32_4096_$pass.txt 2>&1
  grep -h '^ROUNDS\|FAIL' $O/tf32_8192_$pass.txt $O/tf32_4096_$pass.txt
done
timeout 100 $P rounds 0 8192 8192 8192 ${ROUNDS:-8} $BF > $O/bf16_8192.txt 2>&1
grep -h '^ROUNDS\|FAIL' $O/bf16_8192.txt
