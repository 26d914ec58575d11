#!/usr/bin/env bash
# bench/prof/s9_nt_profile.sh: session 9, SGEMM NT (issue 16), first device call. Nsight Compute
# profiles (full set, --clock-control none, per-instruction SASS samples) of our NT 4096^3 winner
# and of cuBLAS's kernel with the same ops, then the NN pair as the control (NN is at parity),
# then our TN winner (the fastest transposed kind). One bench_matmul --sweep process per profile
# (one configuration, few runs). Reports' text pages go into $OUT/prof.tgz, a summary to $OUT.
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
fin() { tar -C "$L" -czf "$OUT/prof.tgz" --exclude='*.ncu-rep' . ; cp "$L/steps.txt" "$L/summary.txt" "$OUT/" 2>/dev/null; }
trap fin EXIT
step() { echo "$1 rc $2 (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$L/steps.txt"; }
{ nvidia-smi; nvcc --version; ncu --version; date -u; } > "$L/env.txt" 2>&1
timeout 60 make -j16 build/bench/bench_matmul > "$L/build.log" 2>&1
step "build" $?
NCU="ncu --set full --import-source no --clock-control none -f"
pages() {  # report name: details, SASS with samples, raw metrics
    ncu -i "$L/$1.ncu-rep" --page details --print-details all > "$L/$1.details.txt" 2>&1
    ncu -i "$L/$1.ncu-rep" --page source --print-source sass --csv > "$L/$1.sass.csv" 2>&1
    ncu -i "$L/$1.ncu-rep" --page raw --csv > "$L/$1.raw.csv" 2>&1
}
W="ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32"
NT="$W,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=1"
NN="ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=0"
TN="$W,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=0,SPLITK=1,FRAG=1,SK=0,FFMA=1,OPA=1,OPB=0"
CUB='regex:sgemm|xmma|cutlass|nvjet|Kernel2'
prof() {  # tag shape config kernel-regex count
    [ $(( $(date +%s) - T0 )) -gt "${STOP_AT:-115}" ] && { step "skip $1 (time)" 0; return; }
    echo "$3" > "$L/$1.list"
    BN_SWEEP_LIST="$L/$1.list" timeout 45 $NCU -k "$4" -c "$5" -o "$L/$1" \
        build/bench/bench_matmul --sweep "$2" 1 5 2 > "$L/$1.log" 2>&1
    step "ncu $1" $?
    pages "$1"
}
prof nt_ours 4096x4096x4096:NT "$NT" regex:matmul_tuned 1
prof nt_cublas 4096x4096x4096:NT "$NT" "$CUB" 2
prof nn_ours 4096x4096x4096 "$NN" regex:matmul_tuned 1
prof nn_cublas 4096x4096x4096 "$NN" "$CUB" 2
prof tn_ours 4096x4096x4096:TN "$TN" regex:matmul_tuned 1
for r in "$L"/*.details.txt; do echo "== $r"; grep -E "^  [a-zA-Z_]+.*\(|Duration|SM Frequency|Registers|Achieved Occupancy|Executed Ipc|Issue Slots Busy|No Eligible|Shared Memory Configuration|Block Limit|Theoretical Occupancy|FMA" "$r" | head -40; done > "$L/summary.txt"
head -c 12000 "$L/summary.txt"
