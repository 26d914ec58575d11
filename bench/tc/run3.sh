#!/bin/bash
# run3.sh: pingpong and cluster (default-semantics remote arrive) checks and sweeps, 4097 pack layout.
set -u
O=${OUT:-/tmp}
nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1
timeout 150 ./proto check 0 BM=128,BN=128,PING=1 BM=64,BN=256,PING=1,CM=2 BM=128,BN=256,CM=2 BM=128,BN=128,PING=1,CN=2,SPLITK=2 > $O/check0.txt 2>&1; grep -E "FAIL|CHECK|failed|rror|no grid" $O/check0.txt | head -20
timeout 100 ./proto check 2 BM=256,BN=64,PING=1 BM=128,BN=128,PING=1,CM=2 > $O/check2.txt 2>&1; grep -E "FAIL|CHECK|failed|rror" $O/check2.txt | head -20
S="BM=128,BN=256 BM=128,BN=256,CM=2 BM=128,BN=256,CN=2 BM=128,BN=128,PING=1 BM=128,BN=128,PING=1,STAGES=6 BM=128,BN=128,PING=1,CM=2,STAGES=6 BM=128,BN=128,PING=1,CN=2,STAGES=6 BM=64,BN=256,PING=1,STAGES=5 BM=64,BN=256,PING=1,CM=2,STAGES=5 BM=128,BN=192,PING=0,STAGES=5"
for sh in "4096 4096 4096" "8192 8192 8192"; do timeout 100 ./proto bench 0 $sh $S 2>&1 | tee -a $O/bench0.txt; done
for a in 16 128 256; do echo "PACKALIGN $a"; PACKALIGN=$a timeout 60 ./proto bench 0 4097 4097 4097 BM=128,BN=256 BM=128,BN=128,PING=1,STAGES=6 2>&1 | tee -a $O/bench0.txt; done
ST="BM=256,BN=128 BM=256,BN=128,CM=2 BM=256,BN=64,PING=1,STAGES=5 BM=256,BN=64,PING=1,CN=2,STAGES=5 BM=128,BN=128,PING=1,STAGES=6 BM=192,BN=128,STAGES=5"
timeout 100 ./proto bench 2 8192 8192 8192 $ST 2>&1 | tee -a $O/bench2.txt
