#!/bin/bash
# run_s15c.sh (session 15, after the family took TFLOAT32 tensor maps): which TF32 tile order and cluster wins at
# 8192^3 and 4096^3 once the TMA rounds the operands? The family's tuner picked CN 1 GROUP 16 at 8192^3 by its
# 5-round re-timing (bench_tcgemm then read 0.978x); run_s15b measured CN 2 GROUP 8 at 1.005-1.016x. Paired
# steady-state rounds of five candidates, two passes. Cubins from bench/tc/.cache/cubins (`proto compile`).
set -u
source bench/tc/proto_lib.sh
A="BM=256,BN=128,CN=2,TES=1"; B="BM=256,BN=128,CN=1,GROUP=16,TES=1"; C="BM=256,BN=128,CN=2,GROUP=16,TES=1"
D="BM=256,BN=128,CN=2"; E="BM=256,BN=128,CN=1,TES=1"
for pass in 1 2; do
  echo "== pass $pass: $(nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader)"
  timeout 150 $P rounds 2 8192 8192 8192 ${ROUNDS:-12} $A $B $C $D $E > $O/c${pass}_8192.txt 2>&1
  grep -h 'cuBLAS err\|FAIL\|^ROUNDS' $O/c${pass}_8192.txt
done
timeout 90 $P rounds 2 4096 4096 4096 ${ROUNDS:-12} $A $B $C $D $E > $O/c_4096.txt 2>&1
grep -h 'cuBLAS err\|FAIL\|^ROUNDS' $O/c_4096.txt
