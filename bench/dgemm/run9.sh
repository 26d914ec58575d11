#!/usr/bin/env bash
# bench/dgemm/run9.sh: GPU session 9, round 2 of the dgemm family (docs/notes/dgemm.md section
# 9): build; the dgemm and batched GPU tests (the PERS rows in the lattice); sweep 9 (PERS 1
# beside the lattice rows, one timing each between two cuBLAS timings, plus a ragged batched
# shape for the check); the tuner's timing beside bench_dgemm's at 256^3 x 512 and 4096^3
# (BENCH_DGEMM_TCMP, NVML clocks); the default tuning (its time), the batched bench shapes'
# tuning, bench_dgemm's paired rounds of those; one Nsight Compute profile if time is left.
# Everything goes into $OUT/logs.tgz. DEADLINE=seconds (default 225) stops optional steps.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
DL=${DEADLINE:-225}
left() { echo $(( DL - ($(date +%s) - T0) )); }
step() { echo "$1 rc $2 $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$L/steps.txt"; }
fin() { tar -C "$L" -czf "$OUT/logs.tgz" . ; cp "$L/steps.txt" "$OUT/" 2>/dev/null; }
trap fin EXIT
trap 'exit 143' TERM
{ nvidia-smi; nvcc --version; date -u; } > "$L/env.txt" 2>&1
t0=$(date +%s)
( make -j16 all build/run_tests build/bench/bench_dgemm &&
  make -j16 BUILD=build-wide OPT="-O2 -DDG_WIDE_SPACE" build-wide/bench/bench_dgemm ) > "$L/build.log" 2>&1
step build $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 60 build/run_tests dgemm > "$L/tests_dgemm.log" 2>&1
step "tests dgemm" $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 15 build/run_tests batched > "$L/tests_batched.log" 2>&1
step "tests batched" $? $t0
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep9.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="256x256x256:b512 512x512x512:b128 258x250x130:b99 4096x4096x4096 8192x8192x8192" \
    timeout 50 build-wide/bench/bench_dgemm > "$L/sweep9.log" 2>&1
step sweep9 $? $t0
cp "$L/sweep9.log" "$OUT/"
t0=$(date +%s)
BENCH_DGEMM_TCMP="$(cat bench/dgemm/tcmp9.txt)" BENCH_DGEMM_SWEEP_SHAPES="256x256x256:b512 4096x4096x4096" \
    timeout 45 build/bench/bench_dgemm > "$L/tcmp9.log" 2>&1
step tcmp9 $? $t0
cp "$L/tcmp9.log" "$OUT/"
DB=$(mktemp -d)/bench.db
t0=$(date +%s)
timeout 30 build/autotune --device 0 --db "$DB" --kernel dgemm > "$L/tune_default.log" 2>&1
step "tune default" $? $t0
for shape in 256x256x256:f64:b512 512x512x512:f64:b128; do
    [ "$(left)" -gt 35 ] || { echo "skip tune $shape (time)" >> "$L/steps.txt"; continue; }
    t0=$(date +%s)
    timeout 20 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$shape" >> "$L/tune_shapes.log" 2>&1
    step "tune $shape" $? $t0
done
build/autotune show --db "$DB" > "$L/show.log" 2>&1
if [ "$(left)" -gt 20 ]; then
    t0=$(date +%s)
    BENCH_DGEMM_BATCHED_ONLY=1 timeout $(( $(left) - 3 )) build/bench/bench_dgemm "$DB" > "$L/bench_dgemm.log" 2>&1
    step bench $? $t0
    cp "$L/bench_dgemm.log" "$OUT/"
fi
# Nsight Compute of the PERS row and its PERS 0 form at 256^3 x 512 (first dg_mma launch)
for v in 0 1; do
    [ "$(left)" -gt 22 ] || { echo "skip ncu $v (time)" >> "$L/steps.txt"; continue; }
    t0=$(date +%s)
    row="$(sed -n 2p bench/dgemm/sweep9.txt | tr -d ';')"
    [ $v = 1 ] && row="$(sed -n 4p bench/dgemm/sweep9.txt | tr -d ';')"
    BENCH_DGEMM_SWEEP="$row" BENCH_DGEMM_SWEEP_SHAPES="256x256x256:b512" \
        timeout 18 ncu --set full --clock-control none --import-source no -k regex:dg_mma -c 1 \
        -o "$L/ncu_pers$v" build-wide/bench/bench_dgemm > "$L/ncu_pers$v.log" 2>&1
    ncu -i "$L/ncu_pers$v.ncu-rep" --page raw --csv > "$L/ncu_pers$v.raw.csv" 2>/dev/null
    rm -f "$L/ncu_pers$v.ncu-rep"
    step "ncu pers$v" $? $t0
done
step all 0 $T0
