#!/bin/bash
# run_s12.sh (session 12, one device call): BF16 8192^3 in steady-state paired rounds beside cuBLAS,
# session 5's winning configuration (GROUP 16), today's tuned picks (GROUP 1 and 8, BN 192), with
# the SM clock and power of every contender, twice: first on the cold GPU, then again right after
# (the GPU hot). Why: bench_tcgemm measured BF16 8192^3 at 0.953x-0.988x this session against
# 0.996x-1.047x in session 5, with the kernels' code byte-identical (notes_tcgemm 15).
set -u
O=${OUT:-/tmp}
export REPS=${REPS:-20} WARM_MS=${WARM_MS:-150}
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
mkdir -p bench/tc/.cache
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt 2>&1
cat $O/env.txt
timeout 120 nvcc -O2 -std=c++17 -o bench/tc/.cache/proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas > $O/build.log 2>&1 || { tail -20 $O/build.log; exit 1; }
B="BM=128,BN=256,BK=64,STAGES=3,WG=2,VEC=8"
S5="$B,RASTER=0,GROUP=16"     # session 5's BF16 8192^3 winner (1.028x)
T1="$B,RASTER=0,GROUP=1"      # session 12 call 4's pick (0.953x)
T8="$B,RASTER=0,GROUP=8"      # the default run's 4096^3 pick
B192="BM=128,BN=192,BK=64,STAGES=4,WG=2,VEC=8,RASTER=1,GROUP=8"   # call 2's pick (0.988x)
for pass in cold hot; do
  echo "== $pass: $(nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader)"
  timeout 100 bench/tc/.cache/proto rounds 0 8192 8192 8192 ${ROUNDS:-10} $S5 $T1 $T8 $B192 2>&1
done
