#!/usr/bin/env bash
# bench/strategy_compare.sh: issue 6's search check on the matmul space at
# 4096^3: an exhaustive run (every valid configuration, nothing cached),
# then each strategy of $STRATEGIES (default guided) with a quarter of that time for each
# seed in $SEEDS (default 1 2 3), each from an empty database; prints the table to commit.
set -uo pipefail
BUILD="${1:-build}"
SIZE="${SIZE:-4096x4096x4096}"
STRATEGIES="${STRATEGIES:-guided}"
tmp="$(mktemp -d)"
echo "# strategy comparison, matmul $SIZE, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
start=$(date +%s.%N)
"$BUILD/autotune" --device 0 --kernel matmul --size "$SIZE" --strategy exhaustive \
    --db "$tmp/ex.db" --seed 1 --quiet > "$tmp/ex.log" 2>&1 || { cat "$tmp/ex.log"; exit 1; }
ex_wall=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN{printf "%.2f", a-b}')
cat "$tmp/ex.log"
[ -n "${DUMP:-}" ] && "$BUILD/autotune" show --all --kernel matmul --db "$tmp/ex.db" > "$DUMP"
ex_best=$(grep -o 'best [0-9.]* GFLOP/s ([0-9.]* ms' "$tmp/ex.log" | head -1 | grep -o '([0-9.]*' | tr -d '(')
ex_n=$(grep -o '[0-9]* evaluated' "$tmp/ex.log" | head -1 | grep -o '[0-9]*')
budget=$(awk -v w="$ex_wall" 'BEGIN{printf "%.1f", w/4}')
printf '| strategy | seed | budget s | wall s | evaluations | best ms | gap to exhaustive |\n'
printf '|---|---|---|---|---|---|---|\n'
printf '| exhaustive | 1 | - | %.1f | %s | %s | 0 |\n' "$ex_wall" "$ex_n" "$ex_best"
for STRATEGY in $STRATEGIES; do
    for seed in ${SEEDS:-1 2 3}; do
        start=$(date +%s.%N)
        "$BUILD/autotune" --device 0 --kernel matmul --size "$SIZE" --strategy "$STRATEGY" \
            --budget "${budget}s" --db "$tmp/$STRATEGY$seed.db" --seed "$seed" --quiet > "$tmp/$STRATEGY$seed.log" 2>&1
        wall=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN{printf "%.2f", a-b}')
        best=$(grep -o 'best [0-9.]* GFLOP/s ([0-9.]* ms' "$tmp/$STRATEGY$seed.log" | head -1 | grep -o '([0-9.]*' | tr -d '(')
        n=$(grep -o '[0-9]* evaluated' "$tmp/$STRATEGY$seed.log" | head -1 | grep -o '[0-9]*')
        gap=$(awk -v x="$best" -v e="$ex_best" 'BEGIN{printf "%.2f", 100*(x-e)/e}')
        printf '| %s | %s | %s | %.1f | %s | %s | %s%% |\n' "$STRATEGY" "$seed" "$budget" "$wall" "$n" "$best" "$gap"
    done
done
printf 'amortized wall time per evaluated configuration (exhaustive, compile included): %.0f ms\n' \
    "$(awk -v w="$ex_wall" -v n="$ex_n" 'BEGIN{print 1000*w/n}')"
rm -rf "$tmp"
