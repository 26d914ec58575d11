#!/usr/bin/env bash
# bench/s10_nt/cc.sh NAME "-DX=1 -DY=2 ...": nvcc cubin (sm_90) of templates/matmul.cu with the given
# configuration into /tmp/s10nt/NAME.cubin, printing ptxas -v's lines for matmul_tuned/matmul_streamk
# (registers, spills) (session 10, NT; docs/notes/matmul.md round 9).
set -e
mkdir -p /tmp/s10nt
cd "$(dirname "$0")/../.."
nvcc -cubin -arch=sm_90 -std=c++17 -O3 -Xptxas -v $2 templates/matmul.cu \
    -o /tmp/s10nt/$1.cubin > /tmp/s10nt/$1.log 2>&1 || { cat /tmp/s10nt/$1.log; exit 1; }
awk -v n="$1" '/Compiling entry function/ {k = ($0 ~ /matmul_tuned|matmul_streamk/)}
     k && /spill stores/ {s = $0} k && /Used/ {print n ": " $5 " regs," s; k = 0}' /tmp/s10nt/$1.log \
  | sed 's/ *0 bytes stack frame,//; s/ptxas info *://'
