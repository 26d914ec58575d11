#!/usr/bin/env bash
# bench/dgemm/run10.sh: GPU session 10, call 1 of the dgemm family (docs/notes/dgemm.md section
# 10): build the wide bench (every legal configuration); the new rows' float64 checks at odd and
# ragged shapes (edges, partial K tiles, PERS 2 with and without the cross-product prefetch);
# sweep 10a (LDR 4 beside LDR 3 at 4096^3 and 8192^3) and sweep 10b (PERS 2 beside PERS 1 at
# 256^3 x 512 and 512^3 x 128), each row in BENCH_DGEMM_SWEEP_ROUNDS alternating rounds with
# cuBLAS (median of the paired ratios); SASS of the LDR 3 / LDR 4 K loops (cuobjdump), in the
# background. Logs into $OUT. DEADLINE=seconds (default 190) stops optional steps.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
DL=${DEADLINE:-190}
left() { echo $(( DL - ($(date +%s) - T0) )); }
step() { echo "$1 rc $2 $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$OUT/steps.txt"; }
{ nvidia-smi; nvcc --version; date -u; } > "$OUT/env.txt" 2>&1
t0=$(date +%s)
make -j16 BUILD=build-wide OPT="-O2 -DDG_WIDE_SPACE" build-wide/bench/bench_dgemm > "$OUT/build.log" 2>&1
step build $? $t0
# SASS of the two copy forms (1688 SA 2 128x128x32), in the background
( for l in 3 4; do
    nvcc -cubin -arch=sm_90 -O3 -DPATH=1 -DMMA=1688 -DBM=128 -DBN=128 -DBK=32 -DWARPS_M=2 -DWARPS_N=4 \
        -DSTAGES=3 -DFRAG=2 -DSA=2 -DGROUP=1 -DLDR=$l templates/dgemm.cu -o /tmp/k$l.cubin &&
    cuobjdump -sass /tmp/k$l.cubin > "$OUT/sass_ldr$l.txt" 2>&1
  done ) > "$OUT/sass.log" 2>&1 &
SASS=$!
LIST="$(cat bench/dgemm/sweep10a.txt bench/dgemm/sweep10b.txt)"
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$LIST" \
    BENCH_DGEMM_SWEEP_SHAPES="258x250x130:b99 136x264x72:b40 200x136x20:b50 1000x1000x1000 4097x4097x4097" \
    timeout 40 build-wide/bench/bench_dgemm > "$OUT/check10.log" 2>&1
step check10 $? $t0
t0=$(date +%s)
BENCH_DGEMM_SWEEP_ROUNDS=4 BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep10a.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192" \
    timeout 75 build-wide/bench/bench_dgemm > "$OUT/sweep10a.log" 2>&1
step sweep10a $? $t0
if [ "$(left)" -gt 15 ]; then
    t0=$(date +%s)
    BENCH_DGEMM_SWEEP_ROUNDS=4 BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep10b.txt)" \
        BENCH_DGEMM_SWEEP_SHAPES="256x256x256:b512 512x512x512:b128" \
        timeout $(( $(left) - 5 )) build-wide/bench/bench_dgemm > "$OUT/sweep10b.log" 2>&1
    step sweep10b $? $t0
fi
wait $SASS
for l in 3 4; do gzip -f "$OUT/sass_ldr$l.txt" 2>/dev/null; done
step all 0 $T0
