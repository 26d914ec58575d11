#!/usr/bin/env bash
# bench/dgemm/run3.sh: GPU session 3 of the dgemm family (docs/notes/dgemm.md section 6), one
# call: build, the DMMA ceiling (dmma_peak), sweep 3 at 4096^3 / 8192^3 (bench/dgemm/sweep3.txt)
# and at the batched shapes (sweep3b.txt), the dgemm GPU tests, tuning of the five shapes and
# bench_dgemm (paired rounds), SASS of two kernels where cuobjdump exists. Logs under $OUT.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
mkdir -p "$OUT"
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
left() { echo $(( ${BUDGET:-280} - ($(date +%s) - T0) )); }
step() { echo "$1 rc $2 $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$OUT/steps.txt"; }
{ nvidia-smi; nvcc --version; date -u; } > "$OUT/env.txt" 2>&1
t0=$(date +%s)
( make -j16 all build/run_tests build/bench/bench_dgemm &&
  make -j16 BUILD=build-wide OPT="-O2 -DDG_WIDE_SPACE" build-wide/bench/bench_dgemm ) > "$OUT/build.log" 2>&1
step build $? $t0
t0=$(date +%s)
nvcc -O3 -arch=sm_90 -o build/dmma_peak bench/dgemm/dmma_peak.cu > "$OUT/peak.log" 2>&1 &&
    timeout 30 build/dmma_peak >> "$OUT/peak.log" 2>&1
step peak $? $t0
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep3.txt)" BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192" \
    timeout $(( $(left) - 120 )) build-wide/bench/bench_dgemm > "$OUT/sweep3.log" 2>&1
step sweep3 $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 60 build/run_tests dgemm > "$OUT/tests_dgemm.log" 2>&1
step tests $? $t0
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep3b.txt)" BENCH_DGEMM_SWEEP_SHAPES="512x512x512:b128 256x256x256:b512" \
    timeout 30 build-wide/bench/bench_dgemm > "$OUT/sweep3b.log" 2>&1
step sweep3b $? $t0
DB=$OUT/bench.db
for shape in 4096x4096x4096:f64 8192x8192x8192:f64 4097x4097x4097:f64 512x512x512:f64:b128 256x256x256:f64:b512; do
    [ "$(left)" -gt 35 ] || break
    t0=$(date +%s)
    timeout 25 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$shape" >> "$OUT/tune_shapes.log" 2>&1
    step "tune $shape" $? $t0
done
if [ "$(left)" -gt 20 ]; then
    t0=$(date +%s)
    timeout $(( $(left) - 5 )) build/bench/bench_dgemm "$DB" > "$OUT/bench_dgemm.log" 2>&1
    step bench $? $t0
fi
build/autotune show --db "$DB" > "$OUT/show.log" 2>&1
rm -f "$DB-wal" "$DB-shm"
if command -v cuobjdump > /dev/null && [ "$(left)" -gt 10 ]; then
    for cfg in "MMA=1684,BK=16,WARPS_M=2,WARPS_N=4,STAGES=4,FRAG=2,LDR=1" "MMA=1688,BK=32,WARPS_M=4,WARPS_N=2,STAGES=3,FRAG=1,LDR=0"; do
        d=""; for kv in ${cfg//,/ }; do d="$d -D$kv"; done
        nvcc -cubin -arch=sm_90 -O3 $d -DBM=128 -DBN=128 templates/dgemm.cu -o build/k.cubin &&
            cuobjdump -sass -fun dg_mma build/k.cubin > "$OUT/sass_${cfg//[=,]/_}.txt" 2>&1
    done
fi
step all 0 $T0
