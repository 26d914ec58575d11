#!/usr/bin/env bash
# bench/dgemm/run7.sh: GPU session 9, call 1 of the dgemm family (docs/notes/dgemm.md section
# 8): build, sweep 7 (SA addressing, m16n8k8 with 8-byte loads, several blocks per SM; each row
# checked against the float64 reference before it is timed), the dgemm and batched GPU tests
# (the provisional lattice), SASS of the K loops of the two best rows at 4096^3, an Nsight
# Compute profile of the best, then (while time is left) tuning of the bench shapes and
# bench_dgemm (5 alternating rounds). Everything goes into $OUT/logs.tgz. DEADLINE=seconds
# (default 240) stops starting optional steps.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
DL=${DEADLINE:-240}
left() { echo $(( DL - ($(date +%s) - T0) )); }
step() { echo "$1 rc $2 $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$L/steps.txt"; }
fin() { tar -C "$L" -czf "$OUT/logs.tgz" . ; cp "$L/steps.txt" "$OUT/" 2>/dev/null; }
trap fin EXIT
trap 'exit 143' TERM
{ nvidia-smi; nvcc --version; ncu --version; date -u; } > "$L/env.txt" 2>&1
t0=$(date +%s)
( make -j16 all build/run_tests build/bench/bench_dgemm &&
  make -j16 BUILD=build-wide OPT="-O2 -DDG_WIDE_SPACE" build-wide/bench/bench_dgemm ) > "$L/build.log" 2>&1
step build $? $t0
t0=$(date +%s)
BENCH_DGEMM_SWEEP="$(cat "${SWEEP:-bench/dgemm/sweep7.txt}")" \
    BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096 8192x8192x8192 512x512x512:b128 256x256x256:b512" \
    timeout 100 build-wide/bench/bench_dgemm > "$L/sweep7.log" 2>&1
step sweep7 $? $t0
cp "$L/sweep7.log" "$OUT/"
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 50 build/run_tests dgemm > "$L/tests_dgemm.log" 2>&1
step "tests dgemm" $? $t0
t0=$(date +%s)
AUTOTUNE_SKIP_COMPILE_ALL=1 timeout 15 build/run_tests batched > "$L/tests_batched.log" 2>&1
step "tests batched" $? $t0
# the two fastest rows at 4096^3 (sweep lines: "  ms TF/s ratio error E  CONFIG")
awk '/^sweep 4096x4096x4096/{s=1; next} /^sweep /{s=0} s && /TF\/s/ && !/FAILED/{print $3, $NF}' \
    "$L/sweep7.log" | sort -rn | head -2 > "$L/best4096.txt"
awk '/^sweep 256x256x256:b512/{s=1; next} /^sweep /{s=0} s && /TF\/s/ && !/FAILED/{print $3, $NF}' \
    "$L/sweep7.log" | sort -rn | head -1 > "$L/best256.txt"
cat "$L/best4096.txt" "$L/best256.txt"
t0=$(date +%s)
i=0
while read -r tf cfg; do
    i=$((i + 1))
    d=$(echo "$cfg" | tr ',' '\n' | grep -v "^PATH\|^OPA\|^OPB\|^TM\|^TN\|^SPLITK" | sed 's/^/-D/' | tr '\n' ' ')
    nvcc -arch=sm_90 -cubin -O3 $d -x cu templates/dgemm.cu -o "$L/best$i.cubin" > "$L/best$i.ptxas" 2>&1 &&
        cuobjdump -sass -fun dg_mma "$L/best$i.cubin" | gzip > "$L/sass_best$i.txt.gz"
    echo "$cfg" > "$L/sass_best$i.cfg"
    rm -f "$L/best$i.cubin"
done < "$L/best4096.txt"
step sass $? $t0
NCU="ncu --set full --import-source no --clock-control none -f"
prof() {  # tag config shape
    [ "$(left)" -gt 40 ] || { echo "skip ncu $1 (time)" >> "$L/steps.txt"; return; }
    t0=$(date +%s)
    BENCH_DGEMM_SWEEP="$2;" BENCH_DGEMM_SWEEP_SHAPES=$3 timeout 45 $NCU -k regex:dg_mma -s 2 -c 1 \
        -o "$L/$1" build-wide/bench/bench_dgemm > "$L/$1.log" 2>&1
    ncu -i "$L/$1.ncu-rep" --page raw --csv > "$L/$1.raw.csv" 2>&1
    ncu -i "$L/$1.ncu-rep" --page source --print-source sass --csv > "$L/$1.sass.csv" 2>&1
    rm -f "$L/$1.ncu-rep"
    step "ncu $1" $? $t0
}
prof ncu_best1_4096 "$(sed -n 1p "$L/best4096.txt" | cut -d' ' -f2)" 4096x4096x4096
DB=$(mktemp -d)/bench.db
for shape in 4096x4096x4096:f64 1024x1024x1024:f64 8192x8192x8192:f64 512x512x512:f64:b128 256x256x256:f64:b512 4097x4097x4097:f64; do
    [ "$(left)" -gt 35 ] || { echo "skip tune $shape (time)" >> "$L/steps.txt"; continue; }
    t0=$(date +%s)
    timeout 20 build/autotune --device 0 --db "$DB" --kernel dgemm --size "$shape" >> "$L/tune_shapes.log" 2>&1
    step "tune $shape" $? $t0
done
build/autotune show --db "$DB" > "$L/show.log" 2>&1
if [ "$(left)" -gt 22 ]; then
    t0=$(date +%s)
    timeout $(( $(left) - 3 )) build/bench/bench_dgemm "$DB" > "$L/bench_dgemm.log" 2>&1
    step bench $? $t0
    cp "$L/bench_dgemm.log" "$OUT/"
fi
prof ncu_best256 "$(cut -d' ' -f2 "$L/best256.txt")" 256x256x256:b512
step all 0 $T0
