# bench/gpu_lib.sh: the common start of the device-call scripts under bench/ (source it from the tree root).
# It makes $OUT, exports the paths of .dev (SQLite for GPU images without it, HACKING.md), and defines
#   left            seconds left of $DEADLINE (default 570) since the script started
#   step NAME RC T0 one timing line, also appended to $OUT/steps.txt
#   header TITLE    a result file's first lines: title, date, $COMMIT, GPU, driver, power limit, toolkit
#   build TARGET... make the targets (log in $OUT/build.log; its tail and status 1 on failure)
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
