# bench/tc/proto_lib.sh: the common start of the prototype's device scripts (bench/tc/run_s15*.sh; source it from
# the tree root): O=$OUT, REPS and WARM_MS defaults, cubins from bench/tc/.cache/cubins (`proto compile` there
# without a GPU spares the device NVRTC), the environment line (date, GPU, driver, power limit, clock, temperature,
# toolkit, $COMMIT) in $O/env.txt and on stdout, and P=the proto binary built from bench/tc/proto.cu (exit 1 if not).
O=${OUT:-/tmp}
export REPS=${REPS:-20} WARM_MS=${WARM_MS:-150} CUBIN_DIR=$PWD/bench/tc/.cache/cubins
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
mkdir -p bench/tc/.cache
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv,noheader
  nvcc --version | tail -1; echo "commit ${COMMIT:-unknown}"; } > $O/env.txt 2>&1
cat $O/env.txt
timeout 120 nvcc -O2 -std=c++17 -o bench/tc/.cache/proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas > $O/build.log 2>&1 ||
    { tail -20 $O/build.log; exit 1; }
P=bench/tc/.cache/proto
