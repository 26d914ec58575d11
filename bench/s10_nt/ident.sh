#!/usr/bin/env bash
# bench/s10_nt/ident.sh: nvcc cubins (sm_90) of several configurations (the pre-round-9 winners and others) from the working tree's
# templates/matmul.cu and from the revision before round 9 (a4bfb06~1, or the file $REF), compared byte for byte
# (CPS off must not change them).
cd "$(dirname "$0")/../.."
mkdir -p /tmp/s10nt
[ -n "${REF:-}" ] || { REF=/tmp/s10nt/matmul_ref.cu; git show a4bfb06~1:templates/matmul.cu > "$REF"; }
B="-DALGO=2 -DTILE=8 -DUNROLL=1"
while read -r name defs; do
  [ -z "$name" ] && continue
  nvcc -cubin -arch=sm_90 -std=c++17 -O3 $B $defs templates/matmul.cu -o /tmp/s10nt/id_new.cubin &&
  nvcc -cubin -arch=sm_90 -std=c++17 -O3 $B $defs $REF -o /tmp/s10nt/id_old.cubin &&
  if cmp -s /tmp/s10nt/id_new.cubin /tmp/s10nt/id_old.cubin; then echo "identical $name"; else echo "DIFFERENT $name"; fi
done <<'LIST'
nt_winner -DBM=128 -DBN=128 -DBK=16 -DWM=64 -DWN=32 -DTM=4 -DTN=8 -DWNITER=1 -DSTAGES=3 -DVEC=4 -DPAD=4 -DSPLITK=1 -DFRAG=1 -DSK=0 -DFFMA=2 -DOPA=0 -DOPB=1
tt_winner -DBM=128 -DBN=128 -DBK=16 -DWM=64 -DWN=32 -DTM=4 -DTN=8 -DWNITER=1 -DSTAGES=3 -DVEC=4 -DPAD=4 -DSPLITK=1 -DFRAG=1 -DSK=0 -DFFMA=2 -DOPA=1 -DOPB=1
tn_winner -DBM=128 -DBN=128 -DBK=16 -DWM=64 -DWN=32 -DTM=4 -DTN=4 -DWNITER=2 -DSTAGES=2 -DVEC=4 -DPAD=0 -DSPLITK=1 -DFRAG=1 -DSK=0 -DFFMA=1 -DOPA=1 -DOPB=0
nn_winner -DBM=128 -DBN=256 -DBK=16 -DWM=64 -DWN=64 -DTM=4 -DTN=8 -DWNITER=2 -DSTAGES=2 -DVEC=4 -DPAD=4 -DSPLITK=1 -DFRAG=1 -DSK=0 -DFFMA=2 -DOPA=0 -DOPB=0
default -DBM=128 -DBN=128 -DBK=8 -DWM=64 -DWN=32 -DTM=4 -DTN=4 -DWNITER=2 -DSTAGES=3 -DVEC=4 -DPAD=4 -DSPLITK=1 -DFRAG=0 -DSK=0 -DFFMA=0 -DOPA=0 -DOPB=0
nt_streamk -DBM=128 -DBN=128 -DBK=16 -DWM=64 -DWN=32 -DTM=4 -DTN=8 -DWNITER=1 -DSTAGES=3 -DVEC=4 -DPAD=4 -DSPLITK=1 -DFRAG=1 -DSK=1 -DFFMA=1 -DOPA=0 -DOPB=1
nn_splitk -DBM=64 -DBN=128 -DBK=16 -DWM=32 -DWN=64 -DTM=4 -DTN=8 -DWNITER=1 -DSTAGES=3 -DVEC=4 -DPAD=4 -DSPLITK=4 -DFRAG=1 -DSK=0 -DFFMA=0 -DOPA=0 -DOPB=0
nt_batch1 -DBM=128 -DBN=128 -DBK=16 -DWM=64 -DWN=32 -DTM=4 -DTN=8 -DWNITER=1 -DSTAGES=3 -DVEC=4 -DPAD=4 -DSPLITK=1 -DFRAG=1 -DSK=0 -DFFMA=2 -DOPA=0 -DOPB=1 -DBATCH=1
LIST
