#!/usr/bin/env bash
# bench/s10_bgemm_gpu_run.sh: session 10, second bgemm device call (issue 16): build; the bgemm
# and batched GPU tests; bench_bgemm's sweep of the FP64 candidates (GRID 1 one block per unit,
# MMA 3 m16n8k8, register-bounded tiles for 2-3 blocks per SM) beside cuBLAS at FP64 64^3 x 8192
# and 32^3 x 65536, and the FP32 winners unchanged; the FP64 shapes tuned (new baselines first);
# bench_bgemm through at_gemm_strided_batched for FP64. Files under $OUT.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
DB="${DB:-build/s10.db}"
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 ))"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  nvcc --version | tail -2; date -u; } > "$OUT/env.txt" 2>&1
timeout 100 make -j16 all build/run_tests build/bench/bench_bgemm > "$OUT/build.log" 2>&1 ||
    { echo "BUILD FAILED $(el) s"; tail -30 "$OUT/build.log"; exit 1; }
echo "build done $(el) s"
for t in bgemm batched; do
    echo "## AUTOTUNE_TEST_TIER=gpu build/run_tests $t" >> "$OUT/tests.log"
    AUTOTUNE_SKIP_COMPILE_ALL=1 AUTOTUNE_TEST_TIER=gpu timeout 45 build/run_tests "$t" \
        >> "$OUT/tests.log" 2>&1
    echo "tests $t rc=$? $(el) s: $(grep -E 'passed' "$OUT/tests.log" | tail -1)"
done
grep -E "FAIL|: error" "$OUT/tests.log" | head -8
W64="TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=2,TN=2,STAGES=3,VEC=2,LDF=1"
A2="TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=16,G=1,TM=2,TN=2,STAGES=4,VEC=2,LDF=1"
A3="TYPE=1,MMA=3,OPA=0,OPB=0,BM=64,BN=64,BK=16,G=1,TM=2,TN=2,STAGES=4,VEC=2,LDF=1"
C2="TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=16,G=1,TM=2,TN=4,STAGES=3,VEC=2,LDF=1"
W32="TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=2,TN=2,STAGES=4,VEC=2,LDF=1"
O32="TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=1,TM=2,TN=2,STAGES=2,VEC=2,LDF=1"
M32="TYPE=1,MMA=2,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=2,TN=2,STAGES=2,VEC=2,LDF=1"
K31="TYPE=1,MMA=3,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=1,TM=1,TN=2,STAGES=2,VEC=2,LDF=1"
K32="TYPE=1,MMA=3,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=1,TN=2,STAGES=2,VEC=2,LDF=1"
F32="TYPE=0,MMA=0,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=1,TM=4,TN=4,STAGES=3,VEC=4,LDF=1"
F64="TYPE=0,MMA=0,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=8,TN=4,STAGES=2,VEC=4,LDF=1"
LIST="$W64;$A2;$A2,GRID=1;$A3;$A3,GRID=1;$C2,GRID=1;$C2;$W64,MINB=2;${A2/STAGES=4/STAGES=3},GRID=1"
LIST="$LIST;$W32;$W32,GRID=1;$O32,GRID=1;$M32,GRID=1;$K31,GRID=1;$K32,GRID=1"
LIST="$LIST;$F32;$F64"
BENCH_BGEMM_SWEEP="$LIST" BENCH_BGEMM_SWEEP_SHAPES="64x64x64:f64:b8192 32x32x32:f64:b65536 64x64x64:b8192 32x32x32:b65536" \
    timeout 80 build/bench/bench_bgemm > "$OUT/sweep.txt" 2>&1
echo "sweep rc=$? $(el) s"; grep -E "^sweep|^  " "$OUT/sweep.txt" | cut -c1-250
for s in 64x64x64:f64:b8192 32x32x32:f64:b65536; do
    bud=$(( (150 - $(el)) / 2 - 8 ))
    [ "$s" = 32x32x32:f64:b65536 ] && bud=$(( 150 - $(el) - 8 ))
    [ "$bud" -gt 25 ] && bud=25
    [ "$bud" -lt 4 ] && bud=4
    timeout $((bud + 20)) build/autotune --device 0 --db "$DB" --kernel bgemm --size "$s" \
        --budget "$bud" >> "$OUT/tune.log" 2>&1
    echo "tuned $s budget $bud rc=$? $(el) s: $(grep -E '^  best' "$OUT/tune.log" | tail -1 | cut -c1-230)"
done
BENCH_BGEMM_TYPES=f64 BENCH_BGEMM_MAX_DIM=64 timeout 25 build/bench/bench_bgemm "$DB" > "$OUT/bench_bgemm.txt" 2>&1
echo "bench_bgemm rc=$? $(el) s"; grep -E "x[0-9]+ " "$OUT/bench_bgemm.txt"
timeout 10 build/autotune show --db "$DB" --kernel bgemm --all 2>&1 | gzip > "$OUT/show_all.txt.gz"
echo "all done $(el) s"
