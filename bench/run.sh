#!/usr/bin/env bash
# bench/run.sh: `make bench`: tunes (resumable; skipped where already stored),
# then runs every benchmark against the vendor libraries and saves the output
# with date, GPU, driver and toolkit under bench/results/.
set -uo pipefail
BUILD="${1:-build}"
DB="${AUTOTUNE_DB:-$BUILD/bench.db}"
export AUTOTUNE_DB="$DB"
mkdir -p bench/results
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-')"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
toolkit="$("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)"
out="bench/results/$(date -u +%Y-%m-%d)-${gpu:-unknown-gpu}.txt"
{
    echo "# autotune benchmarks"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')"
    echo "# GPU: ${gpu:-unknown}  driver: ${driver:-unknown}  CUDA toolkit: ${toolkit:-unknown}"
    echo "# database: $DB"
} | tee "$out"
if [ -z "${BENCH_SKIP_TUNE:-}" ]; then
    "$BUILD/autotune" --device 0 --db "$DB" 2>&1 | tee -a "$out" || exit 1
fi
status=0
for bench in "$BUILD"/bench/bench_*; do
    [ -x "$bench" ] || continue
    echo "## $(basename "$bench")" | tee -a "$out"
    "$bench" "$DB" 2>&1 | tee -a "$out" || status=1
done
echo "# saved to $out"
exit $status
