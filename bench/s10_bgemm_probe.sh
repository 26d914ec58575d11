#!/usr/bin/env bash
# bench/s10_bgemm_probe.sh: session 10, first bgemm device call (issue 16, FP64 small batched
# GEMM): build; bench_bgemm's sweep (configurations compiled in the process, paired per-call
# rounds and back-to-back soaks beside cuBLAS with NVML's SM clock and power) of the round-3
# winners under the three launch grids (GRID 0 persistent, 1 one block per unit, 2 balanced
# persistent) and cuBLAS-like tiles; Nsight Compute (full set) of cuBLAS and ours at FP64 64^3 x
# 8192 and 32^3 x 65536. Everything under $OUT (prof.tgz: reports' text pages).
set -uo pipefail
OUT="${OUT:-/tmp/out}"
L=$(mktemp -d)
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib LD_LIBRARY_PATH=$PWD/../../.dev/lib
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 ))"; }
fin() { tar -C "$L" -czf "$OUT/prof.tgz" . ; }
trap fin EXIT
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
  nvcc --version | tail -2; ncu --version | tail -1; date -u; } > "$OUT/env.txt" 2>&1
timeout 100 make -j16 all build/bench/bench_bgemm > "$OUT/build.log" 2>&1 ||
    { echo "BUILD FAILED $(el) s"; tail -30 "$OUT/build.log"; exit 1; }
echo "build done $(el) s"
W64="TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=2,TN=2,STAGES=3,VEC=2,LDF=1"
C64="TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=16,G=1,TM=2,TN=4,STAGES=4,VEC=2,LDF=1"
W32="TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=2,TN=2,STAGES=4,VEC=2,LDF=1"
O32="TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=1,TM=2,TN=2,STAGES=2,VEC=2,LDF=1"
M32="TYPE=1,MMA=2,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=2,TN=2,STAGES=2,VEC=2,LDF=1"
F32="TYPE=0,MMA=0,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=1,TM=4,TN=4,STAGES=3,VEC=4,LDF=1"
F64="TYPE=0,MMA=0,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=8,TN=4,STAGES=2,VEC=4,LDF=1"
LIST="$W64;$W64,GRID=1;$W64,GRID=2;${W64/STAGES=3/STAGES=2},GRID=1;$C64;$C64,GRID=1"
LIST="$LIST;$W32;$W32,GRID=1;$W32,GRID=2;$O32,GRID=1;$M32,GRID=1;${W32/STAGES=4/STAGES=2},GRID=1"
LIST="$LIST;$F32;$F32,GRID=1;$F64;$F64,GRID=1"
BENCH_BGEMM_SWEEP="$LIST" BENCH_BGEMM_SWEEP_SHAPES="64x64x64:f64:b8192 32x32x32:f64:b65536 64x64x64:b8192 32x32x32:b65536" \
    timeout 75 build/bench/bench_bgemm > "$OUT/sweep.txt" 2>&1
echo "sweep rc=$? $(el) s"; cat "$OUT/sweep.txt" | cut -c1-250
NCU="ncu --set full --import-source no --clock-control none -f"
for sh in 64 32; do
    [ $(el) -gt 120 ] && break
    if [ $sh = 64 ]; then S="64x64x64:f64:b8192"; Lst="$W64;$W64,GRID=1"; else S="32x32x32:f64:b65536"; Lst="$W32;$W32,GRID=1"; fi
    BENCH_BGEMM_SWEEP_CHECK=1 BENCH_BGEMM_SWEEP="$Lst" BENCH_BGEMM_SWEEP_SHAPES="$S" \
        timeout $(( 140 - $(el) )) $NCU -k regex:gemm -c 3 -o "$L/f64_$sh" build/bench/bench_bgemm > "$L/ncu_$sh.log" 2>&1
    echo "ncu $S rc=$? $(el) s"
    ncu -i "$L/f64_$sh.ncu-rep" --page details --print-details all > "$L/f64_$sh.details.txt" 2>&1
    ncu -i "$L/f64_$sh.ncu-rep" --page raw --csv > "$L/f64_$sh.raw.csv" 2>&1
    grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|SM Frequency|DRAM Frequency|Memory Throughput|L2 Hit|Registers Per|Achieved Occupancy|Theoretical Occupancy|Executed Ipc A|Issue Slots Busy|No Eligible|Grid Size|Block Size|Waves Per SM|Dynamic Shared|L1/TEX Hit|Mem Busy|Max Bandwidth|Compute \(SM\) Th" "$L/f64_$sh.details.txt" > "$OUT/ncu_summary_$sh.txt"
    cat "$OUT/ncu_summary_$sh.txt" | cut -c1-200
done
echo "all done $(el) s"
