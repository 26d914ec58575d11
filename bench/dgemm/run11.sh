#!/usr/bin/env bash
# bench/dgemm/run11.sh: GPU session 10, call 2 of the dgemm family (docs/notes/dgemm.md section
# 10): build; the dgemm and batched GPU tests (the kernel source changed; the lattice's cubins
# are byte-identical); the PERS 2 rows' float64 checks at ragged batches; sweep 10b again (PERS 2 beside PERS 1 at 256^3 x 512 and 512^3 x 128,
# 4 paired rounds per row: call 1 lost its log); the default tuning (its time), the bench
# shapes' tuning and bench_dgemm's paired rounds; then sweep 10c (LDR 3 / LDR 4, GROUP 8, 6
# paired rounds at 4096^3 and 8192^3). Everything into $OUT/logs.tgz (plus steps.txt and the
# main logs). DEADLINE=seconds (default 190) stops optional steps.
# PERS 2 was taken out after call 2 (84ae3ab): the PERS 2 rows of sweep10b.txt no longer validate.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
DL=${DEADLINE:-190}
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
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep10b.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="258x250x128:b99 258x250x130:b99 136x264x64:b40 200x136x20:b50" \
    timeout 25 build-wide/bench/bench_dgemm > "$L/check11.log" 2>&1
step check11 $? $t0
cp "$L/check11.log" "$OUT/"
t0=$(date +%s)
BENCH_DGEMM_SWEEP_ROUNDS=4 BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep10b.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="256x256x256:b512 512x512x512:b128" \
    timeout 35 build-wide/bench/bench_dgemm > "$L/sweep10b.log" 2>&1
step sweep10b $? $t0
cp "$L/sweep10b.log" "$OUT/"
DB=$(mktemp -d)/bench.db
t0=$(date +%s)
timeout 30 build/autotune --device 0 --db "$DB" --kernel dgemm > "$L/tune_default.log" 2>&1
step "tune default" $? $t0
for shape in 8192x8192x8192:f64 256x256x256:f64:b512 512x512x512:f64:b128; do
    [ "$(left)" -gt 50 ] || { echo "skip tune $shape (time)" >> "$L/steps.txt"; continue; }
    t0=$(date +%s)
    timeout 20 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$shape" >> "$L/tune_shapes.log" 2>&1
    step "tune $shape" $? $t0
done
build/autotune show --db "$DB" > "$L/show.log" 2>&1
if [ "$(left)" -gt 30 ]; then
    t0=$(date +%s)
    timeout $(( $(left) - 3 )) build/bench/bench_dgemm "$DB" > "$L/bench_dgemm.log" 2>&1
    step bench $? $t0
    cp "$L/bench_dgemm.log" "$OUT/"
fi
if [ "$(left)" -gt 20 ]; then
    t0=$(date +%s)
    BENCH_DGEMM_SWEEP_ROUNDS=6 BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep10c.txt)" \
        BENCH_DGEMM_SWEEP_SHAPES="8192x8192x8192 4096x4096x4096" \
        timeout $(( $(left) - 3 )) build-wide/bench/bench_dgemm > "$L/sweep10c.log" 2>&1
    step sweep10c $? $t0
    cp "$L/sweep10c.log" "$OUT/"
fi
step all 0 $T0
