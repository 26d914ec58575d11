#!/bin/bash
# bench/s14_nt_exhaustive_gpu_run.sh: SGEMM NT 4096^3 searched exhaustively (every valid configuration the
# budget reaches) on one H200, then the 8 fastest in paired rounds against cuBLAS NT in one process
# (bench_matmul --sweep over a list taken from the database). usage (repository root, carry .dev):
# COMMIT=hash [BUDGET=400] bash bench/s14_nt_exhaustive_gpu_run.sh
set -u
source bench/gpu_lib.sh
build all build/bench/bench_matmul || exit 1
DB=$(mktemp -d)/nt.db
{
    header "SGEMM NT 4096^3: exhaustive search, budget ${BUDGET:-400} s, then the 8 fastest in paired rounds"
    timeout $(( ${BUDGET:-400} + 60 )) build/autotune --device 0 --db "$DB" --kernel matmul \
        --size 4096x4096x4096:NT --strategy exhaustive --budget "${BUDGET:-400}" 2>&1 |
        grep -E "valid|evaluated|best|sustained|^done|vendor|rror"
    echo "exit status ${PIPESTATUS[0]}"
    build/autotune show --all --kernel matmul --db "$DB" | awk -F'\t' '$4 == "ok"' | sort -t$'\t' -k5,5g > "$OUT/all.tsv"
    echo "# $(wc -l < "$OUT/all.tsv") verified configurations; the 20 fastest (ms, min, max, configuration):"
    head -20 "$OUT/all.tsv" | awk -F'\t' '{printf "%s %s %s  %s\n", $5, $6, $7, $12}'
    head -8 "$OUT/all.tsv" | cut -f12 > "$OUT/top8.txt"
    BN_SWEEP_LIST="$OUT/top8.txt" BN_SWEEP_PAIRS=8 BN_SWEEP_ROUNDS=9 timeout 120 \
        build/bench/bench_matmul --sweep 4096x4096x4096:NT 1 30 2>&1
    echo "exit status $?"
} > "$OUT/nt.txt" 2>&1
grep -vE "^skipped" "$OUT/nt.txt" | cut -c1-260 | tail -60
