#!/bin/bash
# bench/s12_probe_gpu_run.sh: the twelfth session's first device call: TF32
# tuned through the tuner at 4096^3 and 8192^3 and bench_tcgemm (TF32 rows)
# on that database; DGEMM 8192^3 tuned, every stored row shown (short and
# sustained times), then the cp.async winner beside the TMA row, the
# tuner's way and the sweep's way (paired rounds with cuBLAS). Logs under
# $OUT; DEADLINE (s) bounds the whole.
# usage (repository root, carry .dev): COMMIT=hash bash bench/s12_probe_gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DL=${DEADLINE:-280}
left() { echo $(( DL - ($(date +%s) - T0) )); }
step() { echo "$1: rc $2, $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$OUT/steps.txt"; }
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
header() {
    echo "# $1"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: ${COMMIT:-?}"
    nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader | sed 's/^/# GPU: /'
    echo "# CUDA toolkit: $(nvcc --version | grep -o 'release [0-9.]*')"
}
t0=$(date +%s)
make -j"$(nproc)" all build/bench/bench_dgemm build/bench/bench_tcgemm > "$OUT/build.log" 2>&1
rc=$?; step build $rc "$t0"
[ $rc = 0 ] || { tail -30 "$OUT/build.log"; exit 1; }

DBT=$(mktemp -d)/tf32.db
t0=$(date +%s)
{ header "TF32: tuned at 4096^3 and 8192^3 (--size), every row, then bench_tcgemm (TF32) on that database"
  for shape in 4096x4096x4096:tf32 8192x8192x8192:tf32; do
      timeout 60 build/autotune --device 0 --db "$DBT" --kernel tcgemm --size "$shape" 2>&1 | grep -v "^  *[0-9]* /"
  done
  build/autotune show --db "$DBT" --kernel tcgemm --all 2>&1 | head -120
  BENCH_TCGEMM_TYPES=tf32 timeout 90 build/bench/bench_tcgemm "$DBT" 2>&1
  echo "exit status $?"; } > "$OUT/tf32.txt" 2>&1
step "TF32 tune + bench" $? "$t0"
grep -E "x cuBLAS|geomean|4096|8192" "$OUT/tf32.txt" | tail -14

DBD=$(mktemp -d)/dgemm.db
t0=$(date +%s)
CPA="PATH=1,OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=1,LDR=3,SA=2"
TMA="PATH=1,OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=2,FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=1,LDR=2,SA=2,TMA=1"
TMA1="PATH=1,OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=2,FRAG=2,TM=8,TN=8,GROUP=1,SPLITK=1,LDR=2,SA=2,TMA=1"
{ header "DGEMM 8192^3: tuned (--size), every row, then the cp.async winner beside the TMA rows"
  timeout 60 build/autotune --device 0 --db "$DBD" --kernel dgemm --size 8192x8192x8192:f64 2>&1 | grep -v "^  *[0-9]* /"
  build/autotune show --db "$DBD" --kernel dgemm --all 2>&1 | head -60
  echo "## BENCH_DGEMM_TCMP (tuner's way and sweep's way, short and sustained)"
  BENCH_DGEMM_TCMP="$CPA;$TMA;$TMA1" BENCH_DGEMM_SWEEP_SHAPES="8192x8192x8192" timeout $(( $(left) > 150 ? 70 : $(left) / 2 )) build/bench/bench_dgemm 2>&1
  echo "exit status $?"
  echo "## paired sweep, 8 rounds"
  BENCH_DGEMM_SWEEP="$CPA;$TMA;$TMA1" BENCH_DGEMM_SWEEP_ROUNDS=8 BENCH_DGEMM_SWEEP_SHAPES="8192x8192x8192 4096x4096x4096" timeout $(( $(left) - 10 )) build/bench/bench_dgemm 2>&1
  echo "exit status $?"; } > "$OUT/dgemm.txt" 2>&1
step "DGEMM tune + compare" $? "$t0"
grep -E "paired|sustained|cuBLAS" "$OUT/dgemm.txt" | tail -20
