#!/bin/bash
# run_s15.sh (session 15, one device call): is TF32's missing clock data-dependent power? cuBLAS's TF32 output
# differs from a truncating reference by 7.7e-4 (s13 log): it rounds its register operand to TF32, so the low 13
# bits of the fragments it feeds the tensor cores are zero; ours pass them as loaded (wgmma ignores them). Two
# measurements, steady-state paired rounds with SM clock and power: (1) the family's TF32 winner with the
# fragments' low bits cleared (TRM=1: same result, fewer toggling bits on the register operand path); (2) both
# kernels on operands that are already TF32 (DATA_TF32=1: every operand path, cuBLAS's too). Cubins come from
# bench/tc/.cache/cubins (`proto compile` without a GPU), so the device spends no time in NVRTC.
# Ran at 8c45640; TRM was taken out after it (notes_tcgemm section 17), so the script needs that commit.
set -u
source bench/tc/proto_lib.sh
TF="BM=256,BN=128,CN=2,TES=1"         # the family's TF32 row the tuner picks (VEC 8 = TES in the family)
timeout 90 $P check 2 $TF,TRM=1 BM=256,BN=128,CN=2,TRM=1 > $O/check_trm.txt 2>&1; tail -3 $O/check_trm.txt
for pass in 1 2 3; do
  unset DATA_TF32; tag=fp32
  if [ $pass = 2 ]; then export DATA_TF32=1; tag=tf32data; fi
  echo "== pass $pass ($tag): $(nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv,noheader)"
  timeout 120 $P rounds 2 8192 8192 8192 ${ROUNDS:-10} $TF $TF,TRM=1 > $O/p${pass}_${tag}_8192.txt 2>&1
  timeout 90 $P rounds 2 4096 4096 4096 ${ROUNDS:-10} $TF $TF,TRM=1 > $O/p${pass}_${tag}_4096.txt 2>&1
  grep -h 'cuBLAS err\| ok \|FAIL\|^ROUNDS\|^  #\|ratio' $O/p${pass}_${tag}_8192.txt $O/p${pass}_${tag}_4096.txt
done
