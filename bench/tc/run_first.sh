#!/bin/bash
# run_first.sh: first GPU call: build, SASS check, correctness battery per type, first BF16 sweep.
# Run from the repository root on the GPU machine; writes logs under $OUT.
set -u
O=${OUT:-/tmp}
{ date; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -1; } > $O/env.txt 2>&1
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
gcc -O1 -o nvrtc_check bench/tc/nvrtc_check.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lnvrtc || exit 1
./nvrtc_check templates/tcgemm.cu a.cubin sm_90a -DTYPE=0 -DCM=2 2>/dev/null && cuobjdump -sass a.cubin > $O/sass_bf16_cm2.txt
echo "SASS: HGMMA $(grep -c HGMMA $O/sass_bf16_cm2.txt) UTMALDG $(grep -c UTMALDG $O/sass_bf16_cm2.txt) LDL/STL $(grep -cE 'LDL|STL' $O/sass_bf16_cm2.txt)"
C16="BM=128,BN=256 BM=128,BN=256,CM=2 BM=128,BN=256,CN=2 BM=128,BN=128,WG=1,STAGES=6 BM=256,BN=128,BK=128,STAGES=3 BM=128,BN=256,SPLITK=3,VEC=1 BM=128,BN=64,WG=2,CM=2,CN=2,RASTER=1,GROUP=1"
timeout 120 ./proto check 0 $C16 2>&1 | tee $O/check0.txt | grep -v " ok " | tail -40
timeout 100 ./proto check 1 BM=128,BN=256 BM=128,BN=256,CM=2 2>&1 | tee $O/check1.txt | grep -E "FAIL|CHECK|failed|rror" | head
CT="BM=256,BN=128 BM=128,BN=128,CM=2 BM=128,BN=128,WG=1,SPLITK=2 BM=256,BN=128,BK=64,STAGES=3,CN=2"
timeout 100 ./proto check 2 $CT 2>&1 | tee $O/check2.txt | grep -v " ok " | tail -30
S="BM=128,BN=256 BM=128,BN=256,CM=2 BM=128,BN=256,CN=2 BM=128,BN=256,STAGES=3 BM=256,BN=128 BM=256,BN=128,CM=2 BM=128,BN=128,STAGES=6 BM=128,BN=256,CM=2,GROUP=16 BM=128,BN=256,CM=2,RASTER=1"
for sh in "4096 4096 4096" "8192 8192 8192"; do
  timeout 100 ./proto bench 0 $sh $S 2>&1 | tee -a $O/bench0.txt
done
