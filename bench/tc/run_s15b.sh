#!/bin/bash
# run_s15b.sh (session 15, second device call): TFLOAT32 tensor maps (TMT=1). run_s15.sh showed that the missing
# clock is data-dependent power: with operands whose 13 low bits are already zero our 8192^3 clock rose from 1470
# to 1582 MHz (cuBLAS 1586 -> 1620), clearing only the register fragments' bits (TRM) did about 1%. cuBLAS's error
# (7.7e-4 against the truncating reference) is that of both operands rounded to nearest: its TMA rounds them on
# the way to shared memory (tensor maps of type TFLOAT32), so its tensor cores never see the low bits. TMT does
# the same in our kernel (host only: the cubin is the family's); configurations with TMT verify against a
# float64 reference of inputs rounded to nearest (ties to even), the others against the truncating one.
set -u
source bench/tc/proto_lib.sh
TF="BM=256,BN=128,CN=2,TES=1"         # the family's TF32 row the tuner picks (VEC 8 = TES in the family)
TD="BM=256,BN=128,CN=2"               # the direct-epilogue row (beta != 0, C not TMA-able)
timeout 150 $P check 2 $TF,TMT=1 $TD,TMT=1 BM=128,BN=128,TMT=1 BM=256,BN=128,CN=2,SPLITK=2,TMT=1 > $O/check_tmt.txt 2>&1
grep -c " ok " $O/check_tmt.txt; grep "FAIL\|CHECK\|cuBLAS err" $O/check_tmt.txt | head -20
for pass in 1 2; do
  echo "== pass $pass: $(nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader)"
  timeout 120 $P rounds 2 8192 8192 8192 ${ROUNDS:-12} $TF $TF,TMT=1 > $O/r${pass}_8192.txt 2>&1
  timeout 90 $P rounds 2 4096 4096 4096 ${ROUNDS:-12} $TF $TF,TMT=1 > $O/r${pass}_4096.txt 2>&1
  grep -h 'cuBLAS err\| ok \|FAIL\|^ROUNDS' $O/r${pass}_8192.txt $O/r${pass}_4096.txt
done
for s in "2048 2048 2048" "4097 4097 4097" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512"; do
  f=$O/o_$(echo $s | tr ' ' x).txt
  timeout 90 $P rounds 2 $s ${ROUNDS2:-6} $TF $TF,TMT=1 > $f 2>&1
  grep -h 'cuBLAS err\|FAIL\|^ROUNDS' $f
done
