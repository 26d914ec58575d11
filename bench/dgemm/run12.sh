#!/usr/bin/env bash
# bench/dgemm/run12.sh: GPU session 11, the one call of the dgemm family (docs/notes/dgemm.md
# section 11, TMA copies): build (the tentative lattice with the TMA rows, and the wide build);
# the dgemm and batched GPU tests (every TMA lattice row at every transpose and the odd and
# ragged shapes); float64 checks of the sweep rows at 1000^3 and a ragged batch; sweep 12a
# (4096^3, 8192^3) and 12b (256^3 x 512, 512^3 x 128), each row in paired rounds with cuBLAS;
# the default tuning's time with the tentative lattice. Everything into $OUT/logs.tgz (plus
# steps.txt and the main logs). DEADLINE=seconds (default 225) stops optional steps.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
DL=${DEADLINE:-226}
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
BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep12a.txt; echo ';'; cat bench/dgemm/sweep12b.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="1000x1000x1000 258x250x130:b99" \
    timeout 25 build-wide/bench/bench_dgemm > "$L/check12.log" 2>&1
rc=$?
step check12 $rc $t0
cp "$L/check12.log" "$OUT/"
SW=1
[ $rc -eq 124 ] && { SW=0; echo "check12 timed out (a hang?): sweeps skipped" >> "$L/steps.txt"; }
t0=$(date +%s)
[ $SW = 1 ] && BENCH_DGEMM_SWEEP_ROUNDS=3 BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep12a.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192" \
    timeout 55 build-wide/bench/bench_dgemm > "$L/sweep12a.log" 2>&1
step sweep12a $? $t0
cp "$L/sweep12a.log" "$OUT/"
t0=$(date +%s)
[ $SW = 1 ] && BENCH_DGEMM_SWEEP_ROUNDS=3 BENCH_DGEMM_SWEEP="$(cat bench/dgemm/sweep12b.txt)" \
    BENCH_DGEMM_SWEEP_SHAPES="256x256x256:b512 512x512x512:b128" \
    timeout 48 build-wide/bench/bench_dgemm > "$L/sweep12b.log" 2>&1
step sweep12b $? $t0
cp "$L/sweep12b.log" "$OUT/"
t0=$(date +%s)
TT=$(( $(left) > 75 ? 65 : $(left) - 10 ))
[ $TT -lt 5 ] && TT=5
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout $TT build/run_tests dgemm > "$L/tests_dgemm.log" 2>&1
step "tests dgemm" $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 15 build/run_tests batched > "$L/tests_batched.log" 2>&1
step "tests batched" $? $t0
if [ "$(left)" -gt 15 ]; then
    DB=$(mktemp -d)/t.db
    t0=$(date +%s)
    timeout $(( $(left) - 3 )) build/autotune --device 0 --db "$DB" --kernel dgemm > "$L/tune_default.log" 2>&1
    step "tune default" $? $t0
    build/autotune show --db "$DB" > "$L/show.log" 2>&1
fi
if [ "$(left)" -gt 28 ]; then
    # Nsight Compute, a few metrics, one launch each at 4096^3: TMA 1 S3 against LDR 3 S3
    M=gpu__time_duration.sum,gpc__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,lts__t_sectors_srcunit_tex.sum
    for r in 2 1; do
        [ "$(left)" -gt 12 ] || break
        t0=$(date +%s)
        BENCH_DGEMM_SWEEP="$(sed -n ${r}p bench/dgemm/sweep12a.txt)" BENCH_DGEMM_SWEEP_SHAPES=4096x4096x4096 \
            timeout $(( $(left) - 3 )) ncu --clock-control none --metrics $M -k regex:dg_mma -c 1 \
            build-wide/bench/bench_dgemm > "$L/ncu_row$r.log" 2>&1
        step "ncu row $r" $? $t0
    done
fi
step all 0 $T0
