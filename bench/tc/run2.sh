#!/bin/bash
# run2.sh: correctness battery per type (clusters included) and a first sweep per type.
set -u
O=${OUT:-/tmp}
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
C16="BM=128,BN=256 BM=128,BN=256,CM=2 BM=128,BN=256,CN=2 BM=128,BN=128,WG=1,STAGES=6 BM=128,BN=256,SPLITK=3,VEC=1 BM=128,BN=64,WG=2,CM=2,CN=2,RASTER=1,GROUP=1"
timeout 150 ./proto check 0 $C16 > $O/check0.txt 2>&1; grep -E "FAIL|CHECK|failed|rror|no grid" $O/check0.txt | head -20
timeout 60 ./proto check 1 BM=128,BN=256 BM=128,BN=256,CM=2 > $O/check1.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check1.txt | head
CT="BM=256,BN=128 BM=128,BN=128,CM=2 BM=128,BN=128,WG=1,SPLITK=2 BM=256,BN=128,STAGES=3,CN=2"
timeout 100 ./proto check 2 $CT > $O/check2.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check2.txt | head -20
S="BM=128,BN=256 BM=128,BN=256,CM=2 BM=128,BN=256,CN=2 BM=128,BN=256,CM=2,CN=2 BM=256,BN=128,CM=2 BM=128,BN=256,CM=2,GROUP=16 BM=128,BN=256,CM=2,RASTER=1 BM=128,BN=256,CM=2,VEC=1"
for sh in "4096 4096 4096" "8192 8192 8192"; do timeout 100 ./proto bench 0 $sh $S 2>&1 | tee -a $O/bench0.txt; done
ST="BM=256,BN=128 BM=256,BN=128,CM=2 BM=256,BN=128,CN=2 BM=128,BN=128,STAGES=6 BM=128,BN=256,WG=2,STAGES=3 BM=256,BN=128,BK=64,STAGES=2"
timeout 100 ./proto bench 2 4096 4096 4096 $ST 2>&1 | tee -a $O/bench2.txt
timeout 60 ./proto bench 0 4097 4097 4097 BM=128,BN=256,CM=2 BM=128,BN=256 2>&1 | tee -a $O/bench0.txt
