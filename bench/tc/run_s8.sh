#!/bin/bash
# run_s8.sh (session 8, one device call): TF32 energy-per-flop candidates at 8192^3 and 4096^3 in the steady
# state of the power cap (WARM_MS per contender, SM clock, power and energy per GEMM from NVML), then the other
# six issue-15 shapes for the family default and the two best. Candidates (docs/notes/tcgemm.md section 12):
# BSW=32 (conflict-free fragment loads, C order unchanged), PAIR=1 (a lane's fragment rows are adjacent C
# columns: 8-byte fragment loads, float2 epilogue stores), TKG=2/4 (k8 steps per wgmma group), SUSP (mbarrier
# try_wait suspend hint), CN 1, RASTER 1, GROUP 16, TFK 1, BK 64. Prebuilt proto and cubins: bench/tc/.cache.
set -u
O=${OUT:-/tmp}
export REPS=${REPS:-20} WARM_MS=${WARM_MS:-150}
export CUBIN_DIR=$PWD/bench/tc/.cache/cubin
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; } > $O/env.txt
cat $O/env.txt
P=./bench/tc/.cache/proto
if ! $P compile 2 >/dev/null 2>&1; then
  echo "prebuilt proto does not run: building"; nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1; P=./proto
fi
B="BM=256,BN=128,CN=2"
CK="$B,BSW=32,PAIR=1 BM=256,BN=128,PAIR=1 BM=256,BN=128,BSW=32,PAIR=1,SPLITK=2 BM=256,BN=128,BSW=32,PAIR=1,CM=2
 BM=128,BN=256,BSW=32,PAIR=1 $B,BSW=32,PAIR=1,BK=64,STAGES=2,TKG=4,TFK=1 BM=128,BN=128,BSW=32,PAIR=1,TFK=1
 $B,BSW=32,PAIR=1,TKG=2,TFK=1 $B,TKG=2,TFK=1 $B,BSW=32 BM=64,BN=64,WG=1,PAIR=1 $B,SUSP=10000000"
timeout 40 $P check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -8
C="$B $B,BSW=32 $B,BSW=32,PAIR=1 $B,PAIR=1 BM=256,BN=128,BSW=32,PAIR=1 $B,BSW=32,PAIR=1,RASTER=1
 $B,BSW=32,PAIR=1,SUSP=10000000 $B,SUSP=10000000 $B,BSW=32,PAIR=1,TFK=1 $B,BSW=32,PAIR=1,TKG=2,TFK=1 $B,TKG=2,TFK=1
 $B,BSW=32,PAIR=1,BK=64,STAGES=2,TKG=4,TFK=1 $B,BSW=32,PAIR=1,GROUP=16"
timeout 65 $P rounds 2 8192 8192 8192 10 $C > $O/r8192.txt 2>&1
timeout 40 $P rounds 2 4096 4096 4096 10 $C > $O/r4096.txt 2>&1
grep -h -E "ROUNDS|FAIL" $O/r8192.txt $O/r4096.txt
# the two best by the product of the 8192^3 and 4096^3 paired ratios (the family default always runs too)
set -- $C
best=$(cat $O/r8192.txt $O/r4096.txt | grep "^ROUNDS.*paired" |
  sed -E 's/.*: #([0-9]+) .*paired ratio median ([0-9.]+)x.*/\1 \2/' |
  awk '{if (!($1 in p)) p[$1] = 1; p[$1] *= $2} END {for (i in p) print p[i], i + 1}' | sort -rn | awk '$2 != 1 {print $2}' | head -2)
C4="$B"
for i in $best; do C4="$C4 ${!i}"; done
echo "other shapes: $C4"
for sh in "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  WARM_MS=100 timeout 12 $P rounds 2 $sh 4 $C4 >> $O/rother.txt 2>&1
done
grep -h -E "ROUNDS|FAIL" $O/rother.txt
# SASS of every cubin (if the device has cuobjdump): instruction histogram of the whole kernel
if command -v cuobjdump >/dev/null; then
  mkdir -p $O/sass
  for f in $CUBIN_DIR/*.cubin; do
    timeout 5 cuobjdump -sass -fun tcgemm $f 2>/dev/null | grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+[A-Z][A-Z0-9_.]*' | awk '{print $2}' |
      sort | uniq -c | sort -rn > $O/sass/$(basename $f .cubin).hist
  done
fi
