#!/usr/bin/env bash
# bench/dgemm/run5.sh: GPU session 8, call 1 of the dgemm family (docs/notes/dgemm.md section
# 7): build, sweep 5 (LDR 3 running-pointer copies against LDR 2, 16-warp tiles, m16n8k8) at
# the two square and two batched shapes, SASS of three configurations (nvcc + cuobjdump), the
# dgemm and batched GPU tests (the provisional lattice holds the LDR 3 twins), the default
# tuning (its time), tuning of the five bench shapes, bench_dgemm (5 alternating rounds, paired
# ratios). Every log goes into $OUT (the SASS gzipped).
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L="$OUT"
mkdir -p "$L"
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
step() { echo "$1 rc $2 $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$L/steps.txt"; }
{ nvidia-smi; nvcc --version; date -u; } > "$L/env.txt" 2>&1
t0=$(date +%s)
( make -j16 all build/run_tests build/bench/bench_dgemm &&
  make -j16 BUILD=build-wide OPT="-O2 -DDG_WIDE_SPACE" build-wide/bench/bench_dgemm ) > "$L/build.log" 2>&1
step build $? $t0
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep5.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192 512x512x512:b128 256x256x256:b512" \
    timeout 75 build-wide/bench/bench_dgemm > "$L/sweep5.log" 2>&1
step sweep5 $? $t0
t0=$(date +%s)
for v in "32 2 4 3 2" "32 2 4 3 3" "32 4 4 3 3"; do
    set -- $v
    n="bk$1_${2}x$3_s$4_ldr$5"
    nvcc -arch=sm_90 -cubin -O3 -DMMA=1684 -DBM=128 -DBN=128 -DBK=$1 -DWARPS_M=$2 -DWARPS_N=$3 \
        -DSTAGES=$4 -DFRAG=2 -DLDR=$5 -x cu templates/dgemm.cu -o "$L/$n.cubin" 2>/dev/null &&
        cuobjdump -sass -fun dg_mma "$L/$n.cubin" 2>&1 | gzip > "$L/sass_$n.txt.gz"
    rm -f "$L/$n.cubin"
done
step sass $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 50 build/run_tests dgemm > "$L/tests_dgemm.log" 2>&1
step "tests dgemm" $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 20 build/run_tests batched > "$L/tests_batched.log" 2>&1
step "tests batched" $? $t0
DB=$(mktemp -d)/bench.db
t0=$(date +%s)
timeout 30 build/autotune --device 0 --db "$DB" --kernel dgemm > "$L/tune_default.log" 2>&1
step "tune default" $? $t0
for shape in 8192x8192x8192:f64 4097x4097x4097:f64 512x512x512:f64:b128 256x256x256:f64:b512; do
    t0=$(date +%s)
    timeout 25 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$shape" >> "$L/tune_shapes.log" 2>&1
    step "tune $shape" $? $t0
done
t0=$(date +%s)
timeout 45 build/bench/bench_dgemm "$DB" > "$L/bench_dgemm.log" 2>&1
step bench $? $t0
build/autotune show --db "$DB" > "$L/show.log" 2>&1
step all 0 $T0
