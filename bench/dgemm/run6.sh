#!/usr/bin/env bash
# bench/dgemm/run6.sh: GPU session 8, call 2 of the dgemm family (docs/notes/dgemm.md section
# 7), with the pruned lattice: build, sweep 5 again (its log did not come back from call 1), the
# dgemm and batched GPU tests, the default tuning (its time), tuning of the five bench shapes,
# bench_dgemm (5 alternating rounds, paired ratios) with every timing's wall-clock span beside an
# nvidia-smi log of SM clock and power (100 ms), SASS of the winners. Everything goes into one
# archive, $OUT/logs.tgz (a call brings back at most 8 files). SWEEP=FILE sweeps another list
# (bench/dgemm/sweep6.txt: the FRAG 3 candidates of notes section 7.5).
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
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
BENCH_DGEMM_SWEEP="$(cat "${SWEEP:-bench/dgemm/sweep5.txt}")" \
    BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192 512x512x512:b128 256x256x256:b512" \
    timeout 75 build-wide/bench/bench_dgemm > "$L/sweep5.log" 2>&1
step sweep5 $? $t0
cp "$L/sweep5.log" "$OUT/"
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
build/autotune show --db "$DB" > "$L/show.log" 2>&1
t0=$(date +%s)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 100 > "$L/clocks.csv" 2>&1 &
SMI=$!
BENCH_DGEMM_TRACE=1 timeout 45 build/bench/bench_dgemm "$DB" > "$L/bench_dgemm.log" 2> "$L/bench_trace.log"
step bench $? $t0
kill $SMI 2>/dev/null
cp "$L/bench_dgemm.log" "$OUT/"
t0=$(date +%s)
for v in "32 2 4 3 3 0" "32 2 4 3 3 1"; do
    set -- $v
    n="bk$1_${2}x$3_s$4_ldr$5_unr$6"
    nvcc -arch=sm_90 -cubin -O3 -DMMA=1684 -DBM=128 -DBN=128 -DBK=$1 -DWARPS_M=$2 -DWARPS_N=$3 \
        -DSTAGES=$4 -DFRAG=2 -DLDR=$5 -DUNR=$6 -x cu templates/dgemm.cu -o "$L/$n.cubin" 2>/dev/null &&
        cuobjdump -sass -fun dg_mma "$L/$n.cubin" | gzip > "$L/sass_$n.txt.gz"
    rm -f "$L/$n.cubin"
done
step sass $? $t0
step all 0 $T0
