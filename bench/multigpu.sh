#!/bin/bash
# multigpu.sh: the default tuning run on one GPU (--device 0) and on every GPU
# (--device all) of this host, timed, then the winners of both side by side.
# usage: bench/multigpu.sh OUTDIR      (run from the repository root)
# Writes OUTDIR/multigpu.txt (the summary with both logs) and the databases.
# Set SKIP_BUILD=1 to use an existing build/; SEED picks the seed (default 7);
# ROUNDS=2 repeats the pair in the other order (all first), fresh databases;
# BIN and ARGS (tests: BIN=build/autotune-test ARGS='--kernel test_wide' with
# the fake worker) change the program and add options.
set -u
export LC_ALL=C
bin=${BIN:-build/autotune}
args=${ARGS:-}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
out=${1:?usage: bench/multigpu.sh OUTDIR}
mkdir -p "$out"
log=$out/multigpu.txt
seed=${SEED:-7}
{
    echo "# autotune --device 0 vs --device all: the default tuning run, timed"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}"
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>&1 |
        sed 's/^/# GPU: /'
    echo "# CUDA toolkit: $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo '?')"
    echo "# CPU cores: $(nproc)"
} > "$log"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    t0=$(date +%s.%N)
    if ! make -j"$(nproc)" all > "$out/build.log" 2>&1; then
        echo "build failed (tail of $out/build.log):" >> "$log"
        tail -30 "$out/build.log" >> "$log"
        exit 1
    fi
    echo "# build: $(secs "$t0" "$(date +%s.%N)") s" >> "$log"
fi

# One timed run: NAME DEVICE-ARG; its log in $out/NAME.log, wall seconds in $out/NAME.wall.
run_one() {
    local name=$1 dev=$2
    rm -f "$out/$name.db" "$out/$name.db-wal" "$out/$name.db-shm"
    local t0 t1
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout 300 "$bin" --device "$dev" --db "$out/$name.db" --seed "$seed" --quiet $args \
        > "$out/$name.log" 2>&1
    local rc=$?
    t1=$(date +%s.%N)
    secs "$t0" "$t1" > "$out/$name.wall"
    echo "# $name: autotune --device $dev --seed $seed $args: exit $rc, wall $(cat "$out/$name.wall") s" >> "$log"
}

# Seconds per family (the problems' own summaries) of run NAME.
family_times() {
    echo "# $1: seconds per family (sum of the problems' times):" >> "$log"
    grep -E '^(GPU [0-9,]+: )?[a-z_0-9]+ [0-9x:a-z]+: [0-9]+ evaluated' "$out/$1.log" |
        sed -E 's/^GPU [0-9,]+: //' |
        awk '{fam=$1; for (i = 1; i <= NF; i++) if ($i == "s" && $(i-1) ~ /^[0-9.]+$/) t[fam] += $(i-1);
              n = $3; e[fam] += n} END {for (f in t) printf "#   %-8s %7.1f s, %5d evaluated\n", f, t[f], e[f]}' \
        >> "$log"
}

# The winners: per kernel and size the fastest ok result (over every GPU of
# the database: a model is one), configuration and time.
best() {
    "$bin" show --all --db "$1" 2>/dev/null |
        awk -F'\t' 'NF >= 12 && $4 == "ok" { k = $2 " " $3; if (!(k in t) || $5 < t[k]) { t[k] = $5; c[k] = $12; m[k] = $6 } }
                    END { for (k in t) printf "%s\t%.6f\t%.6f\t%s\n", k, t[k], m[k], c[k] }' | sort
}

# Round r's winners side by side.
compare() {
    local r=$1
    best "$out/one$r.db" > "$out/one$r.best"
    best "$out/all$r.db" > "$out/all$r.best"
    echo "# round $r winners: kernel size | one GPU ms | all GPUs ms | all/one | same configuration" >> "$log"
    join -t $'\t' "$out/one$r.best" "$out/all$r.best" |
        awk -F'\t' '{ r = $5 / $2; same = ($4 == $7) ? "same" : "other";
                      printf "%-34s %10.4f %10.4f %7.3f %s\n", $1, $2, $5, r, same;
                      n++; lr += log(r); if (same == "same") s++ }
                    END { if (n) printf "# %d problems: %d same configuration, geomean all/one %.4f\n", n, s, exp(lr / n) }' \
        >> "$log"
}

# Part 1: the one-GPU run first (a cold GPU, if anything, favours it);
# part 2 (ROUNDS=2): the other order, only if it fits before DEADLINE
# seconds after the start (default 420).
rounds=${ROUNDS:-1}
deadline=${DEADLINE:-420}
done_rounds=0
for r in $(seq 1 "$rounds"); do
    if [ "$r" -gt 1 ]; then
        need=$(awk -v a="$(cat "$out/one1.wall")" -v b="$(cat "$out/all1.wall")" 'BEGIN { printf "%d", (a + b) * 1.15 + 10 }')
        if [ $((SECONDS + need)) -gt "$deadline" ]; then
            echo "# round $r skipped: about $need s more would pass the ${deadline} s deadline" >> "$log"
            break
        fi
    fi
    if [ $((r % 2)) = 1 ]; then order="one all"; else order="all one"; fi
    for w in $order; do
        if [ "$w" = one ]; then run_one "one$r" 0; else run_one "all$r" all; fi
    done
    one=$(cat "$out/one$r.wall")
    all=$(cat "$out/all$r.wall")
    echo "# round $r ($order): ratio all/one: $(awk -v a="$all" -v o="$one" 'BEGIN { printf "%.3f", a / o }')  (target <= 0.6)" >> "$log"
    family_times "one$r"
    family_times "all$r"
    compare "$r"
    done_rounds=$r
done
rounds=$done_rounds

for r in $(seq 1 "$rounds"); do
    for name in one$r all$r; do
        echo "" >> "$log"
        echo "==== $name.log ====" >> "$log"
        cat "$out/$name.log" >> "$log"
    done
done
for name in one1 all1; do
    echo "" >> "$log"
    echo "==== autotune show --db $name.db ====" >> "$log"
    "$bin" show --db "$out/$name.db" >> "$log" 2>&1
done
head -80 "$log"
