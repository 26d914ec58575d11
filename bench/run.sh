#!/usr/bin/env bash
# bench/run.sh: the one driver of the GPU benchmarks and GPU checks. Builds what the step needs,
# runs it on GPU 0 (multigpu: on every GPU too) and writes a dated, self-describing results file
# (date, commit, GPU, driver, power limit, toolkit, CPU cores in its first lines) into OUTDIR
# (argument, else $OUT, else bench/results).
#
# Usage: bench/run.sh STEP [OUTDIR]      (from any directory; SQLite from .dev/ where present)
#   matmul | tcgemm | dgemm | bgemm | reduce | dreduce | jacobi | trial
#                 tune the family's benchmark shapes into the benchmark database, then run
#                 bench_FAMILY against cuBLAS/CUB: OUTDIR/DATE-GPU-FAMILY.txt
#   epilogue | fp8
#                 tune bench/shapes/epilogue.txt / fp8.txt into the benchmark database, then
#                 bench_tcgemm with BENCH_TCGEMM_EPILOGUE=1 (fused bias + GELU against cuBLASLt
#                 GELU_BIAS and the unfused pair) / BENCH_TCGEMM_FP8=1 (FP8 against cuBLASLt
#                 FP8): OUTDIR/DATE-GPU-epilogue.txt / -fp8.txt
#   fp8-block     tune bench/shapes/fp8_block.txt, then bench_tcgemm with BENCH_TCGEMM_FP8_BLOCK=1
#                 (block-scaled FP8 against our per-tensor FP8 and cuBLASLt's block scaling):
#                 OUTDIR/DATE-GPU-fp8-block.txt
#   all           every family above, epilogue, fp8 and fp8-block, then default-run, the random
#                 calls and the named calls (layouts.txt, small_m.txt, short_k.txt,
#                 narrow_side.txt): every table README.md and docs/performance.md quote
#   default-run   `autotune --device 0` into a fresh database, timed, then gc, show and the
#                 HTML report: OUTDIR/DATE-GPU-default-run.txt (+ report.html)
#   calls         bench_calls, random GEMM calls of every kind against cuBLAS (the vendor
#                 candidate off, then on), with no database at all, with the shipped database
#                 alone (OUTDIR/shipped.db, ship-built from share/hopper.json) and, where
#                 $CALLS_DB names one, with it over the shipped one: OUTDIR/DATE-GPU-calls-*.txt
#                 (+ each call's .tsv and an HTML report of the calls: autotune report --calls);
#                 `all` runs the first two and then the default run's database over the
#                 shipped one
#   named         bench_calls --shapes $NAMED_SHAPES (default bench/shapes/layouts.txt: issue 33's
#                 rows) --bandwidth, the vendor candidate off, with no database and, where
#                 $NAMED_DB names one, with it: OUTDIR/DATE-GPU-named-*.txt (+ .tsv). NAMED_TUNE=1
#                 without NAMED_DB first makes OUTDIR/named.db, tuned at those calls: the calls'
#                 canonical problems (bench_calls --print-problems, the sum's line too) into
#                 `autotune --device 0 --problems FILE --db OUTDIR/named.db $NAMED_TUNE_ARGS`
#                 (default --budget 30 per problem: about 25 min for layouts.txt's 50 items)
#   gpu-tier      the GPU tier of build/run_tests (GPU_TESTS_TIMEOUT s, default 900; a name
#                 filter in $TESTS; AUTOTUNE_TEST_SHARD=i/n runs the i-th of n interleaved
#                 parts, for machines that hold a call for less than the whole tier):
#                 OUTDIR/DATE-GPU-gpu-tests[-part-i-of-n].txt; exit 1 on a failure
#   multigpu      the default run (`autotune --seed $SEED`, default 7) into fresh databases on
#                 GPU 0 (--device 0) and on every GPU (--device all), each timed (300 s at most),
#                 then per round the ratio all/one, the seconds per family, the winners and the
#                 evaluations per problem side by side: OUTDIR/DATE-GPUxN-multigpu.txt (with both
#                 logs and `show` of both databases), the runs' own files
#                 OUTDIR/{one,all}ROUND.{db,log,wall,best}.
#                 ROUNDS=2 repeats the pair in the other order (all first), only if it fits before
#                 DEADLINE s (default 420) after the start; BIN (default $BUILD/autotune) and ARGS
#                 change the program and add options: with BIN=$BUILD/autotune-test
#                 ARGS='--kernel test_wide' AUTOTUNE_WORKER="$BUILD/autotune-test __fake_worker"
#                 AUTOTUNE_FAKE_DEVICES=2 the fake worker poses as two GPUs (no GPU needed)
#   strategies    the matmul search check: an exhaustive run at $SIZE (default 4096x4096x4096,
#                 nothing cached), then each strategy of $STRATEGIES (default guided) for each
#                 seed of $SEEDS (default 1 2 3) with a quarter of its time, each from an empty
#                 database; the table (evaluations, best ms, gap to exhaustive):
#                 OUTDIR/DATE-GPU-strategies.txt; DUMP=FILE also writes the exhaustive run's
#                 `show --all` into FILE
#   tests         `make test`, both tiers: OUTDIR/DATE-GPU-make-test.txt
#   build         build everything the steps use (log in OUTDIR/build.log)
# Every step but tests and build needs a GPU that nvidia-smi lists, and stops at once without one
# (exit 2, nothing built or written). With no STEP it prints this text.
# Knobs (environment): BUILD (build folder, default build); SKIP_BUILD=1 uses the build as it
# is; BENCH_DB (default $BUILD/bench.db); BENCH_SKIP_TUNE=1 runs the benchmarks on the database
# as it is; BENCH_MATMUL_SHAPES, BENCH_TCGEMM_SHAPES, BENCH_TCGEMM_KINDS, BENCH_DGEMM_SHAPES,
# BENCH_BGEMM_SHAPES, BENCH_BGEMM_KINDS ("" for none) and BENCH_MATMUL_SEARCH,
# BENCH_TCGEMM_SEARCH, BENCH_BGEMM_SEARCH override what each family tunes and how;
# TUNE_TIMEOUT (default 3600 s) bounds the default run; CALLS_N, CALLS_SEED the random calls
# (default 200, 1); NAMED_SHAPES, NAMED_DB, NAMED_TUNE, NAMED_TUNE_ARGS the named calls;
# SEED, ROUNDS, DEADLINE, BIN, ARGS the multigpu step; SIZE, STRATEGIES, SEEDS, DUMP the
# strategies step; COMMIT names the tree where the copy has no git data. A relative OUTDIR or
# DUMP is taken from the directory run.sh is called in.
set -uo pipefail
families="matmul tcgemm dgemm bgemm reduce dreduce jacobi trial"
steps="${families// /|}|epilogue|fp8|fp8-block|all|default-run|calls|named|gpu-tier|multigpu"
steps="$steps|strategies|tests|build"
step="${1:-}"
case "$step" in
"" | -h | --help | help)                # the comment above, without its first line
    usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
    if [ -n "$step" ]; then usage; exit 0; fi
    usage >&2
    exit 2 ;;
esac
if ! [[ "|$steps|" == *"|$step|"* ]]; then
    echo "bench/run.sh: unknown step '$step' (${steps//|/ })" >&2
    exit 2
fi
caller_dir="$PWD"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

from_caller() {         # PATH, relative ones taken from the directory run.sh was called in
    case "$1" in /*) echo "$1" ;; *) echo "$caller_dir/$1" ;; esac
}

need_gpu() {            # stops before building or writing anything where no GPU answers
    [ -n "${AUTOTUNE_FAKE_DEVICES:-}" ] && return 0     # the fake worker poses as GPUs
    if ! command -v nvidia-smi > /dev/null 2>&1; then
        echo "bench/run.sh $step: no nvidia-smi on this machine: the step needs an NVIDIA GPU" \
            "and its driver (nothing built or written)" >&2
        exit 2
    fi
    if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
        echo "bench/run.sh $step: nvidia-smi lists no GPU: the step needs one" \
            "(nothing built or written)" >&2
        exit 2
    fi
}
case "$step" in
tests | build) ;;
*) need_gpu ;;
esac

if [ -n "${2:-}" ]; then out="$(from_caller "$2")"; else out="${OUT:-bench/results}"; fi
mkdir -p "$out"
BUILD="${BUILD:-build}"
DB="${BENCH_DB:-$BUILD/bench.db}"
if [ -d .dev/include ]; then            # SQLite for GPU images without it (HACKING.md)
    export CPATH="$root/.dev/include${CPATH:+:$CPATH}"
    export LIBRARY_PATH="$root/.dev/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$root/.dev/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
gpu_short="$(echo "${gpu:-unknown-gpu}" | sed 's/^NVIDIA //; s/ .*//')"
commit="${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
day="$(date -u +%Y-%m-%d)"

header() {
    echo "# $*"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: $commit"
    nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader 2>/dev/null |
        sed 's/^/# GPU (index, name, driver, power limit): /'
    echo "# CUDA toolkit: $("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version 2>/dev/null |
        grep -o 'release [0-9.]*' | head -1)"
    echo "# CPU cores: $(nproc)"
}

build() {               # TARGET...: make them (log in OUTDIR/build.log), unless SKIP_BUILD=1
    [ "${SKIP_BUILD:-0}" = 1 ] && return 0
    local s; s=$(date +%s.%N)
    make -j"$(nproc)" BUILD="$BUILD" "$@" > "$out/build.log" 2>&1 ||
        { tail -30 "$out/build.log"; return 1; }
    build_wall=$(seconds_since "$s")
}

seconds_since() {       # START [FORMAT]: seconds from START (date +%s.%N) to now
    awk -v a="$1" -v b="$(date +%s.%N)" -v f="${2:-%.2f}" 'BEGIN { printf f, b - a }'
}

fresh_db() {            # DB: removes the database and its WAL files
    rm -f "$1" "$1-wal" "$1-shm"
}

record() {              # FILE PATTERN FUNCTION [ARG...]: FUNCTION's output into FILE, then its
                        # lines matching PATTERN (extended regexp) and the file's name; its status
    local file=$1 pattern=$2 rc
    shift 2
    ( "$@" ) > "$file" 2>&1
    rc=$?
    grep -E "$pattern" "$file"
    echo "saved $file"
    return $rc
}

tune() {        # one tuning into the benchmark database, appended to the results file
    "$BUILD/autotune" --device 0 --db "$DB" --quiet "$@" 2>&1
}

tune_family() {
    [ -n "${BENCH_SKIP_TUNE:-}" ] && return 0
    local s k
    case "$1" in
    matmul)
        # each benchmark shape searched exhaustively (4-5 min on an H200 the first time)
        for s in ${BENCH_MATMUL_SHAPES-1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 1000x1000x1000 4097x4097x4097 8192x8192x128 128x8192x8192 8192x64x8192 16384x16384x1024}; do
            tune --kernel matmul --size "$s" ${BENCH_MATMUL_SEARCH:---strategy exhaustive}
        done ;;
    tcgemm)
        for s in ${BENCH_TCGEMM_SHAPES-2048x2048x2048 4096x4096x4096 8192x8192x8192 4097x4097x4097 8192x8192x1024 1024x8192x8192 8192x1024x8192 16384x16384x512}; do
            for k in ${BENCH_TCGEMM_KINDS-bf16 f16 tf32}; do
                tune --kernel tcgemm --size "$s:$k" ${BENCH_TCGEMM_SEARCH:-}
            done
        done ;;
    dgemm)
        tune --kernel dgemm
        for s in ${BENCH_DGEMM_SHAPES-8192x8192x8192:f64 4097x4097x4097:f64 512x512x512:f64:b128 256x256x256:f64:b512}; do
            tune --kernel dgemm --size "$s"
        done ;;
    bgemm)
        for s in ${BENCH_BGEMM_SHAPES-32x32x32:b65536 64x64x64:b8192 256x256x256:b512 512x512x512:b128}; do
            for k in ${BENCH_BGEMM_KINDS-f32 f64}; do
                tune --kernel bgemm --size "$s:$k" ${BENCH_BGEMM_SEARCH:---strategy guided --budget 30}
            done
        done ;;
    reduce|dreduce) tune --kernel sum,dot ;;
    jacobi) tune --kernel jacobi ;;
    trial) tune ;;
    esac
}

run_tcgemm_mode() {     # epilogue|fp8|fp8-block: tune its shapes, then bench_tcgemm in that mode
    local mode=$1 file="$out/$day-$gpu_short-$1.txt" rc flag shapes
    case "$mode" in
    fp8) flag=BENCH_TCGEMM_FP8 ;;
    fp8-block) flag=BENCH_TCGEMM_FP8_BLOCK ;;
    *) flag=BENCH_TCGEMM_EPILOGUE ;;
    esac
    shapes="bench/shapes/$(echo "$mode" | tr - _).txt"
    (
        header "bench/run.sh $mode: tuning $shapes into $DB, then bench_tcgemm ($flag=1)"
        [ -n "${BENCH_SKIP_TUNE:-}" ] || tune --problems "$shapes"
        echo "## bench_tcgemm, $flag=1"
        env "$flag=1" "$BUILD/bench/bench_tcgemm" "$DB" 2>&1
        rc=$?
        echo "# exit status $rc"
        exit $rc
    ) > "$file" 2>&1
    rc=$?
    grep -E "x  |FAIL|exit status" "$file" | tail -12
    echo "saved $file"
    return $rc
}

run_family() {          # FAMILY: tune, then bench_FAMILY, into one results file
    local fam=$1 file="$out/$day-$gpu_short-$1.txt" rc
    (
        header "bench/run.sh $fam: tuning into $DB, then bench_$fam against the vendor library"
        tune_family "$fam"
        echo "## bench_$fam"
        "$BUILD/bench/bench_$fam" "$DB" 2>&1
        rc=$?
        echo "# exit status $rc"
        exit $rc
    ) > "$file" 2>&1
    rc=$?
    grep -E "geomean|x  |FAIL|exit status" "$file" | tail -20
    echo "saved $file"
    return $rc
}

default_run() {
    local db="$out/default.db" file="$out/$day-$gpu_short-default-run.txt" rc
    fresh_db "$db"
    (
        header "autotune --device 0 (the default run) into a fresh database, timed; then gc, show, report"
        local s; s=$(date +%s.%N)
        timeout "${TUNE_TIMEOUT:-3600}" "$BUILD/autotune" --device 0 --db "$db" 2>&1
        rc=$?
        echo "exit status $rc; wall $(seconds_since "$s" %.1f) s"
        ls -l "$db"*
        "$BUILD/autotune" gc --db "$db" --dry-run 2>&1
        "$BUILD/autotune" gc --db "$db" 2>&1
        ls -l "$db"*
        "$BUILD/autotune" show --db "$db" 2>&1
        "$BUILD/autotune" report --db "$db" -o "$out/report.html" 2>&1
        exit $rc
    ) > "$file" 2>&1
    rc=$?
    grep -E "^done|^search time|^speculative|exit status|gc|before|after" "$file" | tail -10
    awk '/^done: [0-9]+ results stored in/ { printf "evaluations per second: %.1f\n", $2 / $6 }' "$file"
    echo "saved $file"
    return $rc
}

shipped_db() {  # builds OUTDIR/shipped.db from share/hopper.json once (autotune ship-build)
    [ -f share/hopper.json ] || { echo "bench/run.sh: no share/hopper.json" >&2; return 1; }
    [ -f "$out/shipped.db" ] && return 0
    "$BUILD/autotune" ship-build share/hopper.json -o "$out/shipped.db" > "$out/ship-build.log" 2>&1 \
        || { tail -5 "$out/ship-build.log" >&2; return 1; }
}

calls() {       # NAME LABEL [DB [SHIPPED]]: bench_calls on a copy of DB (none: a fresh database)
                # over the read-only SHIPPED database (none: no shipped layer), the vendor
                # candidate off, then on: OUTDIR/DATE-GPU-calls-NAME.txt (+ .tsv of each call)
    local name=$1 label=$2 src=${3:-} shipped=${4:-} file="$out/$day-$gpu_short-calls-$1.txt" rc=0 v
    (
        header "bench_calls: ${CALLS_N:-200} random GEMM calls against cuBLAS in one process, $label"
        for v in off on; do
            fresh_db "$out/calls.db"
            [ -n "$src" ] && cp "$src" "$out/calls.db"
            AUTOTUNE_SHIPPED_DB="$shipped" COMMIT=$commit "$BUILD/bench/bench_calls" \
                --db "$out/calls.db" --calls "${CALLS_N:-200}" \
                --seed "${CALLS_SEED:-1}" --label "$label, vendor candidate $v" --vendor "$v" \
                --tsv "$out/$day-$gpu_short-calls-$name-vendor-$v.tsv" 2>&1 || rc=1
            echo
        done
        exit $rc
    ) > "$file" 2>&1
    rc=$?
    grep -E "^# (state|summary|type|bf16|fp16|tf32|fp32|fp64|all|short)" "$file"
    echo "saved $file"
    # the report's random-calls section over both tables (the calls' own database, which holds
    # the trials' winners; with none of its own a report of the calls alone)
    "$BUILD/autotune" report -o "$out/$day-$gpu_short-calls-$name-report.html" --db "$out/calls.db" \
        --calls "$out/$day-$gpu_short-calls-$name-vendor-off.tsv" \
        --calls "$out/$day-$gpu_short-calls-$name-vendor-on.tsv" || rc=1
    return $rc
}

named_shapes="${NAMED_SHAPES:-bench/shapes/layouts.txt}"

named() {       # NAME LABEL [DB]: bench_calls on the calls of $named_shapes with the sum's
                # bandwidth, on a copy of DB (none: a fresh database), the vendor candidate off:
                # OUTDIR/DATE-GPU-named-NAME.txt (+ .tsv of each call)
    local name=$1 label=$2 src=${3:-} file="$out/$day-$gpu_short-named-$1.txt" rc db="$out/named-run.db"
    (
        header "bench_calls --shapes $named_shapes --bandwidth: named GEMM calls against cuBLAS in one process, $label"
        fresh_db "$db"
        [ -n "$src" ] && cp "$src" "$db"
        COMMIT=$commit "$BUILD/bench/bench_calls" --shapes "$named_shapes" --bandwidth --db "$db" \
            --seed "${CALLS_SEED:-1}" --label "$label, vendor candidate off" --vendor off \
            --tsv "$out/$day-$gpu_short-named-$name.tsv" 2>&1
        rc=$?
        fresh_db "$db"
        exit $rc
    ) > "$file" 2>&1
    rc=$?
    grep -E "^# (state|bandwidth|summary|lines below)" "$file"
    echo "saved $file"
    return $rc
}

named_tune() {  # tunes OUTDIR/named.db at the canonical problems of $named_shapes' calls
    local db="$out/named.db" problems="$out/named-problems.txt" file="$out/$day-$gpu_short-named-tune.txt" rc
    (
        header "autotune --device 0 --problems $problems (the canonical problems of $named_shapes) --db $db"
        "$BUILD/bench/bench_calls" --shapes "$named_shapes" --print-problems --bandwidth > "$problems" ||
            exit 2
        cat "$problems"
        local s; s=$(date +%s.%N)
        timeout "${TUNE_TIMEOUT:-3600}" "$BUILD/autotune" --device 0 --problems "$problems" \
            --db "$db" --quiet ${NAMED_TUNE_ARGS:---budget 30} 2>&1
        rc=$?
        echo "exit status $rc; wall $(seconds_since "$s" %.1f) s"
        exit $rc
    ) > "$file" 2>&1
    rc=$?
    tail -1 "$file"
    echo "saved $file"
    return $rc
}

gpu_tier() {
    local shard="${AUTOTUNE_TEST_SHARD:-}" rc
    local file="$out/$day-$gpu_short-gpu-tests${shard:+-part-${shard/\//-of-}}.txt"
    {
        header "build/run_tests, GPU tier only${TESTS:+ (filter: $TESTS)}${shard:+ (part $shard)}"
        AUTOTUNE_TEST_TIER=gpu timeout "${GPU_TESTS_TIMEOUT:-900}" "$BUILD/run_tests" ${TESTS:-} 2>&1
        echo "exit status $?"
    } > "$file" 2>&1
    grep -E "FAIL|passed, " "$file" | tail -12
    echo "saved $file"
    grep -qE "(^|, )0 failed" "$file"
}

# multigpu: the default run on GPU 0 and on every GPU, timed, winners compared (usage above).
mg_bin="${BIN:-$BUILD/autotune}"
mg_args="${ARGS:-}"
mg_seed="${SEED:-7}"

mg_run_one() {          # NAME DEVICE: one timed run; OUTDIR/NAME.log, its wall seconds NAME.wall
    local name=$1 dev=$2 s rc
    fresh_db "$out/$name.db"
    s=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout 300 "$mg_bin" --device "$dev" --db "$out/$name.db" --seed "$mg_seed" --quiet $mg_args \
        > "$out/$name.log" 2>&1
    rc=$?
    seconds_since "$s" > "$out/$name.wall"
    echo "# $name: autotune --device $dev --seed $mg_seed $mg_args: exit $rc," \
        "wall $(cat "$out/$name.wall") s"
    return $rc
}

mg_family_times() {     # NAME: seconds per family of run NAME (the sum of its problems' times)
    echo "# $1: seconds per family (sum of the problems' times):"
    grep -E '^(GPU [0-9,]+: )?[a-z_0-9]+ [0-9x:a-z]+: [0-9]+ evaluated' "$out/$1.log" |
        sed -E 's/^GPU [0-9,]+: //' |
        awk '{fam=$1; for (i = 1; i <= NF; i++) if ($i == "s" && $(i-1) ~ /^[0-9.]+$/) t[fam] += $(i-1);
              n = $3; e[fam] += n} END {for (f in t) printf "#   %-8s %7.1f s, %5d evaluated\n", f, t[f], e[f]}'
}

mg_best() {             # DB: per kernel and size the fastest ok result over every GPU of the
                        # database (a model is one): time, modeled time, configuration
    "$mg_bin" show --all --db "$1" 2>/dev/null |
        awk -F'\t' 'NF >= 12 && $4 == "ok" { k = $2 " " $3; if (!(k in t) || $5 < t[k]) { t[k] = $5; c[k] = $12; m[k] = $6 } }
                    END { for (k in t) printf "%s\t%.6f\t%.6f\t%s\n", k, t[k], m[k], c[k] }' | sort
}

mg_evaluations() {      # NAME: kernel size and evaluations per problem of run NAME (first looks)
    grep -E '^(GPU [0-9,]+: )?[a-z_0-9]+ [0-9x:a-z_]+: [0-9]+ evaluated' "$out/$1.log" |
        sed -E 's/^GPU [0-9,]+: //' | awk '{ sub(":", "", $2); print $1 " " $2 "\t" $3 }' | sort
}

mg_compare() {          # ROUND: the round's winners side by side, then the evaluations per problem
    local r=$1
    mg_best "$out/one$r.db" > "$out/one$r.best"
    mg_best "$out/all$r.db" > "$out/all$r.best"
    echo "# round $r winners: kernel size | one GPU ms | all GPUs ms | all/one | same configuration"
    join -t $'\t' "$out/one$r.best" "$out/all$r.best" |
        awk -F'\t' '{ r = $5 / $2; same = ($4 == $7) ? "same" : "other";
                      printf "%-34s %10.4f %10.4f %7.3f %s\n", $1, $2, $5, r, same;
                      n++; lr += log(r); if (same == "same") s++ }
                    END { if (n) printf "# %d problems: %d same configuration, geomean all/one %.4f\n", n, s, exp(lr / n) }'
    echo "# round $r evaluations: kernel size | one GPU | all GPUs (target: all >= one for every problem)"
    join -t $'\t' <(mg_evaluations "one$r") <(mg_evaluations "all$r") |
        awk -F'\t' '{ printf "%-34s %6d %6d%s\n", $1, $2, $3, $3 < $2 ? "  fewer" : "";
                      n++; if ($3 < $2) f++; so += $2; sa += $3 }
                    END { if (n) printf "# %d problems: %d with fewer evaluations on all GPUs; %d evaluations on one GPU, %d on all\n", n, f + 0, so, sa }'
}

multigpu() {            # round 1 runs the one-GPU run first (a cold GPU, if anything, favours
                        # it); round 2 (ROUNDS=2) the other order, if it fits before DEADLINE
    local rounds=${ROUNDS:-1} deadline=${DEADLINE:-420} done_rounds=0 rc=0 r w need order name
    export LC_ALL=C
    header "autotune --device 0 vs --device all: the default tuning run, timed (seed $mg_seed)"
    nvidia-smi --query-gpu=index,memory.total --format=csv,noheader 2>/dev/null |
        sed 's/^/# GPU memory (index, total): /'
    [ -n "${AUTOTUNE_FAKE_DEVICES:-}" ] &&
        echo "# fake GPUs: AUTOTUNE_FAKE_DEVICES=$AUTOTUNE_FAKE_DEVICES" \
            "(the fake worker; nothing timed on a GPU)"
    [ -n "${build_wall:-}" ] && echo "# build: $build_wall s"
    for r in $(seq 1 "$rounds"); do
        if [ "$r" -gt 1 ]; then
            need=$(awk -v a="$(cat "$out/one1.wall")" -v b="$(cat "$out/all1.wall")" \
                'BEGIN { printf "%d", (a + b) * 1.15 + 10 }')
            if [ $((SECONDS + need)) -gt "$deadline" ]; then
                echo "# round $r skipped: about $need s more would pass the ${deadline} s deadline"
                break
            fi
        fi
        if [ $((r % 2)) = 1 ]; then order="one all"; else order="all one"; fi
        for w in $order; do
            if [ "$w" = one ]; then mg_run_one "one$r" 0 || rc=1; else mg_run_one "all$r" all || rc=1; fi
        done
        echo "# round $r ($order): ratio all/one: $(awk -v a="$(cat "$out/all$r.wall")" \
            -v o="$(cat "$out/one$r.wall")" 'BEGIN { printf "%.3f", a / o }')  (target <= 0.55)"
        mg_family_times "one$r"
        mg_family_times "all$r"
        mg_compare "$r"
        done_rounds=$r
    done
    for r in $(seq 1 "$done_rounds"); do
        for name in "one$r" "all$r"; do
            printf '\n==== %s.log ====\n' "$name"
            cat "$out/$name.log"
        done
    done
    for name in one1 all1; do
        printf '\n==== autotune show --db %s.db ====\n' "$name"
        "$mg_bin" show --db "$out/$name.db" 2>&1
    done
    return $rc
}

# strategies: the matmul search strategies against an exhaustive run (usage above).
log_best_ms() {         # LOG: the time of the search's best line of an autotune log
    grep -o 'best [0-9.]* GFLOP/s ([0-9.]* ms' "$1" | head -1 | grep -o '([0-9.]*' | tr -d '('
}

log_evaluated() {       # LOG: the count of evaluated configurations of an autotune log
    grep -o '[0-9]* evaluated' "$1" | head -1 | grep -o '[0-9]*'
}

strategies() {          # TMPDIR: the exhaustive run, then each strategy and seed, the table
    local tmp=$1 size=${SIZE:-4096x4096x4096} s ex_wall ex_best ex_n budget strategy seed wall best
    export LC_ALL=C
    header "bench/run.sh strategies: matmul $size exhaustive, then ${STRATEGIES:-guided}" \
        "with a quarter of its time, seeds ${SEEDS:-1 2 3}"
    s=$(date +%s.%N)
    "$BUILD/autotune" --device 0 --kernel matmul --size "$size" --strategy exhaustive \
        --db "$tmp/ex.db" --seed 1 --quiet > "$tmp/ex.log" 2>&1 ||
        { cat "$tmp/ex.log"; echo "# the exhaustive run failed"; return 1; }
    ex_wall=$(seconds_since "$s")
    cat "$tmp/ex.log"
    if [ -n "${DUMP:-}" ]; then
        "$BUILD/autotune" show --all --kernel matmul --db "$tmp/ex.db" > "$(from_caller "$DUMP")"
    fi
    ex_best=$(log_best_ms "$tmp/ex.log")
    ex_n=$(log_evaluated "$tmp/ex.log")
    budget=$(awk -v w="$ex_wall" 'BEGIN { printf "%.1f", w / 4 }')
    printf '| strategy | seed | budget s | wall s | evaluations | best ms | gap to exhaustive |\n'
    printf '|---|---|---|---|---|---|---|\n'
    printf '| exhaustive | 1 | - | %.1f | %s | %s | 0 |\n' "$ex_wall" "$ex_n" "$ex_best"
    for strategy in ${STRATEGIES:-guided}; do
        for seed in ${SEEDS:-1 2 3}; do
            s=$(date +%s.%N)
            "$BUILD/autotune" --device 0 --kernel matmul --size "$size" --strategy "$strategy" \
                --budget "${budget}s" --db "$tmp/$strategy$seed.db" --seed "$seed" --quiet \
                > "$tmp/$strategy$seed.log" 2>&1
            wall=$(seconds_since "$s")
            best=$(log_best_ms "$tmp/$strategy$seed.log")
            printf '| %s | %s | %s | %.1f | %s | %s | %s%% |\n' "$strategy" "$seed" "$budget" "$wall" \
                "$(log_evaluated "$tmp/$strategy$seed.log")" "$best" \
                "$(awk -v x="$best" -v e="$ex_best" 'BEGIN { printf "%.2f", 100 * (x - e) / e }')"
        done
    done
    printf 'amortized wall time per evaluated configuration (exhaustive, compile included): %.0f ms\n' \
        "$(awk -v w="$ex_wall" -v n="$ex_n" 'BEGIN { print 1000 * w / n }')"
}

status=0
case "$step" in
matmul|tcgemm|dgemm|bgemm|reduce|dreduce|jacobi|trial)
    build all "$BUILD/bench/bench_$step" || exit 1
    run_family "$step" || status=1 ;;
epilogue|fp8|fp8-block)
    build all "$BUILD/bench/bench_tcgemm" || exit 1
    run_tcgemm_mode "$step" || status=1 ;;
all)
    build all bench-build || exit 1
    for f in $families; do
        run_family "$f" || status=1
    done
    run_tcgemm_mode epilogue || status=1
    run_tcgemm_mode fp8 || status=1
    run_tcgemm_mode fp8-block || status=1
    default_run || status=1
    calls no-database "no database (built-in defaults)" || status=1
    if shipped_db; then
        calls shipped-database "the shipped database, no user database" "" \
            "$out/shipped.db" || status=1
        calls default-run "after the default run, the shipped database under it" \
            "$out/default.db" "$out/shipped.db" || status=1
    else
        calls default-run "after the default run" "$out/default.db" || status=1
    fi
    named no-database "no database (built-in defaults)" || status=1
    named_shapes=bench/shapes/small_m.txt
    named small-m-no-database "no database (built-in defaults)" || status=1
    named_shapes=bench/shapes/short_k.txt
    named short-k-no-database "no database (built-in defaults)" || status=1
    named_shapes=bench/shapes/narrow_side.txt
    named narrow-side-no-database "no database (built-in defaults)" || status=1 ;;
calls)
    build all "$BUILD/bench/bench_calls" || exit 1
    calls no-database "no database (built-in defaults)" || status=1
    if shipped_db; then
        calls shipped-database "the shipped database, no user database" "" \
            "$out/shipped.db" || status=1
    else
        status=1
    fi
    if [ -n "${CALLS_DB:-}" ]; then
        calls tuned "the database $CALLS_DB, the shipped database under it" "$CALLS_DB" \
            "$out/shipped.db" || status=1
    fi ;;
named)
    build all "$BUILD/bench/bench_calls" || exit 1
    named no-database "no database (built-in defaults)" || status=1
    named_db="${NAMED_DB:-}"
    if [ -z "$named_db" ] && [ -n "${NAMED_TUNE:-}" ]; then
        named_tune || status=1
        named_db="$out/named.db"
    fi
    if [ -n "$named_db" ] && [ -f "$named_db" ]; then
        named tuned "the database $named_db" "$named_db" || status=1
    elif [ -n "$named_db" ]; then
        echo "bench/run.sh: no database $named_db" >&2
        status=1
    fi ;;
default-run)
    build all || exit 1
    default_run || status=1 ;;
gpu-tier)
    build all "$BUILD/run_tests" || exit 1
    gpu_tier || status=1 ;;
tests)
    { header "make test (CPU and GPU tiers)"; make -j"$(nproc)" BUILD="$BUILD" test 2>&1; } \
        > "$out/$day-$gpu_short-make-test.txt" 2>&1 || status=1
    tail -3 "$out/$day-$gpu_short-make-test.txt" ;;
multigpu)
    build all || exit 1
    gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    gpu_tag="$gpu_short$([ "${gpu_count:-0}" -gt 1 ] && echo "x$gpu_count")"
    [ -n "${AUTOTUNE_FAKE_DEVICES:-}" ] && gpu_tag=fake-gpus
    record "$out/$day-$gpu_tag-multigpu.txt" "^# (round|[0-9]+ problems|one|all)" multigpu ||
        status=1 ;;
strategies)
    build all || exit 1
    strategies_tmp="$(mktemp -d)"
    record "$out/$day-$gpu_short-strategies.txt" "^\||^amortized|run failed" strategies "$strategies_tmp" ||
        status=1
    rm -rf "$strategies_tmp" ;;
build)
    build all "$BUILD/run_tests" bench-build || status=1 ;;
esac
exit $status
