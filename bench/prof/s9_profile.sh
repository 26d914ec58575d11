#!/usr/bin/env bash
# bench/prof/s9_profile.sh: session 9, first device call. Nsight Compute profiles (full set,
# --clock-control none, per-instruction SASS samples) of our kernel beside cuBLAS's for the two
# open GEMM gaps: DGEMM at 4096^3 and 256^3 x 512 (issue 16) and TF32 at 8192^3 (issue 15,
# DRAM and L2 bytes). Reports and their text pages go into $OUT/prof.tgz.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
T0=$(date +%s)
fin() { tar -C "$L" -czf "$OUT/prof.tgz" . ; cp "$L/steps.txt" "$OUT/" 2>/dev/null; }
trap fin EXIT
step() { echo "$1 rc $2 (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$L/steps.txt"; }
{ nvidia-smi; nvcc --version; ncu --version; date -u; } > "$L/env.txt" 2>&1
( make -j16 build/bench/bench_dgemm > "$L/build.log" 2>&1 ) &
B1=$!
nvcc -O2 -std=c++17 -o "$L/proto" bench/tc/proto.cu -lcuda -lnvrtc -lcublas > "$L/proto_build.log" 2>&1
step "proto build" $?
wait $B1; step "bench_dgemm build" $?
NCU="ncu --set full --import-source no --clock-control none -f"
pages() {  # report name: details, SASS with samples, raw metrics
    ncu -i "$L/$1.ncu-rep" --page details --print-details all > "$L/$1.details.txt" 2>&1
    ncu -i "$L/$1.ncu-rep" --page source --print-source sass --csv > "$L/$1.sass.csv" 2>&1
    ncu -i "$L/$1.ncu-rep" --page raw --csv > "$L/$1.raw.csv" 2>&1
}
DGW="PATH=1,OPA=0,OPB=0,TM=8,TN=8,SPLITK=1,GROUP=8,MMA=1684,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,FRAG=2,LDR=3"
export BENCH_DGEMM_SWEEP="$DGW;"
for shape in 4096x4096x4096 256x256x256:b512; do
    tag=${shape//[:x]/_}
    BENCH_DGEMM_SWEEP_SHAPES=$shape timeout 90 $NCU -k regex:dg_mma -c 1 -o "$L/dg_ours_$tag" \
        build/bench/bench_dgemm > "$L/dg_ours_$tag.log" 2>&1
    step "ncu dgemm ours $shape" $?
    BENCH_DGEMM_SWEEP_SHAPES=$shape timeout 90 $NCU -k regex:'nvjet|xmma|cutlass|gemm_|Kernel' -c 2 \
        -o "$L/dg_cublas_$tag" build/bench/bench_dgemm > "$L/dg_cublas_$tag.log" 2>&1
    step "ncu dgemm cublas $shape" $?
    pages dg_ours_$tag; pages dg_cublas_$tag
done
TFW="BM=256,BN=128,CN=2"
timeout 90 $NCU -k regex:'^tcgemm$' -c 1 -o "$L/tf_ours_8192" "$L/proto" bench 2 8192 8192 8192 $TFW \
    > "$L/tf_ours.log" 2>&1
step "ncu tf32 ours" $?
timeout 90 $NCU -k regex:'nvjet|xmma|cutlass|gemm_|Kernel' -c 2 -o "$L/tf_cublas_8192" "$L/proto" bench 2 8192 8192 8192 $TFW \
    > "$L/tf_cublas.log" 2>&1
step "ncu tf32 cublas" $?
pages tf_ours_8192; pages tf_cublas_8192
for r in "$L"/*.details.txt; do echo "== $r"; grep -E "^  [a-zA-Z_]+.*\(|Duration|DRAM Throughput|SM Frequency|Memory Throughput|L2 Hit|Registers|Achieved Occupancy|Executed Ipc|Issue Slots Busy|No Eligible" "$r" | head -40; done > "$L/summary.txt"
head -c 20000 "$L/summary.txt"
