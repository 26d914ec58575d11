#!/bin/bash
# run.sh: builds and runs the PATH 80 prototype harness on the GPU machine, from the checkout root;
# the log (header: date, GPU, driver, toolkit) goes to stdout and to $OUT/log when OUT is set.
set -o pipefail
LOG=${OUT:-/tmp}/log
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    nvcc --version | tail -2 | head -1
    echo "commit: $(cat bench/tc80/COMMIT 2>/dev/null)"
    nvcc -O2 -std=c++17 -arch=sm_90 -o /tmp/proto bench/tc80/proto.cu bench/tc80/t8_host.c \
        -lcuda -lnvrtc -lcublas 2>&1 | grep -v deprecated
    /tmp/proto --src templates/tcgemm.cu "$@"
    echo "exit: $?"
} 2>&1 | tee "$LOG"
