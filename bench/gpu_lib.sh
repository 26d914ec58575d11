# bench/gpu_lib.sh: what the device-call scripts under bench/ share (source it from the tree root).
# It makes $OUT, exports the paths of .dev (SQLite for GPU images without it, HACKING.md), and defines
#   left            seconds left of $DEADLINE (default 570) since the script started
#   step NAME RC T0 one timing line, also appended to $OUT/steps.txt
#   header TITLE    a result file's first lines: title, date, $COMMIT, GPU, driver, power limit, toolkit
#   build TARGET... make the targets (log in $OUT/build.log; its tail and status 1 on failure)
#   build_step TARGET...  build, timed as the step "build"; its status
#   gpu_tier S FILE the whole GPU tier of build/run_tests for at most S seconds into FILE (with its header)
#   default_run DB FILE  the default `autotune --device 0` into database DB, timed, into FILE
#   tune_traced LABEL KERNEL SIZE ARGS [VAR=value...]  one tuning into $DB with those variables and every
#                   re-timing round printed (AUTOTUNE_RETIME_TRACE), the log's summary lines, a step line
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
DL=${DEADLINE:-570}
export CPATH=$PWD/.dev/include LIBRARY_PATH=$PWD/.dev/lib LD_LIBRARY_PATH=$PWD/.dev/lib
left() { echo $(( DL - ($(date +%s) - T0) )); }
step() { echo "$1: rc $2, $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$OUT/steps.txt"; }
header() {
    echo "# $1"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: ${COMMIT:-?}"
    nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader | sed 's/^/# GPU: /'
    echo "# CUDA toolkit: $(nvcc --version | grep -o 'release [0-9.]*')"
}
build() { make -j"$(nproc)" "$@" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; return 1; }; }
build_step() { local t=$(date +%s) rc; build "$@"; rc=$?; step build $rc "$t"; return $rc; }
gpu_tier() {
    { header "build/run_tests, GPU tier only"
      AUTOTUNE_TEST_TIER=gpu timeout "$1" build/run_tests 2>&1; echo "exit status $?"; } > "$2" 2>&1
}
default_run() {
    { header "autotune --device 0 (the default run), timed"
      local s=$(date +%s.%N)
      timeout 200 build/autotune --device 0 --db "$1" 2>&1
      echo "exit status $?; wall $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $s }") s"; } > "$2" 2>&1
}
tune_traced() {
    local label=$1 kernel=$2 size=$3 args=$4; shift 4
    local t=$(date +%s)
    echo "## $label ($size; $*)"
    env "$@" AUTOTUNE_RETIME_TRACE=1 timeout $(( $(left) - 5 )) build/autotune --device 0 --db "$DB" \
        --kernel "$kernel" --size "$size" $args 2>&1 |
        grep -E "valid|evaluated|best|sustained|retime trace|^done|vendor"
    step "$label" $? "$t"
}
