#!/usr/bin/env bash
# bench/run.sh: the one driver of the GPU benchmarks and GPU checks. Builds what the step needs,
# runs it on GPU 0 and writes a dated, self-describing results file (date, commit, GPU, driver,
# power limit, toolkit in its first lines) into OUTDIR (argument, else $OUT, else bench/results).
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
#                 candidate off, then on), with no database and, where $CALLS_DB names one,
#                 with it: OUTDIR/DATE-GPU-calls-*.txt; `all` runs it before and after the
#                 default run
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
#   tests         `make test`, both tiers: OUTDIR/DATE-GPU-make-test.txt
#   build         build everything the steps use (log in OUTDIR/build.log)
# Knobs (environment): BUILD (build folder, default build); BENCH_DB (default
# $BUILD/bench.db); BENCH_SKIP_TUNE=1 runs the benchmarks on the database as it is;
# BENCH_MATMUL_SHAPES, BENCH_TCGEMM_SHAPES, BENCH_TCGEMM_KINDS, BENCH_DGEMM_SHAPES,
# BENCH_BGEMM_SHAPES, BENCH_BGEMM_KINDS ("" for none) and BENCH_MATMUL_SEARCH,
# BENCH_TCGEMM_SEARCH, BENCH_BGEMM_SEARCH override what each family tunes and how;
# TUNE_TIMEOUT (default 3600 s) bounds the default run; CALLS_N, CALLS_SEED the random calls
# (default 200, 1); NAMED_SHAPES, NAMED_DB, NAMED_TUNE, NAMED_TUNE_ARGS the named calls;
# COMMIT names the tree where the copy
# has no git data.
set -uo pipefail
step="${1:?usage: bench/run.sh matmul|tcgemm|dgemm|bgemm|reduce|dreduce|jacobi|trial|epilogue|fp8|fp8-block|all|default-run|calls|named|gpu-tier|tests|build [OUTDIR]}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${2:-${OUT:-bench/results}}"
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
    echo "# $1"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: $commit"
    nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader 2>/dev/null |
        sed 's/^/# GPU (index, name, driver, power limit): /'
    echo "# CUDA toolkit: $("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version 2>/dev/null |
        grep -o 'release [0-9.]*' | head -1)"
}

build() {
    make -j"$(nproc)" BUILD="$BUILD" "$@" > "$out/build.log" 2>&1 ||
        { tail -30 "$out/build.log"; return 1; }
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
    rm -f "$db" "$db-wal" "$db-shm"
    (
        header "autotune --device 0 (the default run) into a fresh database, timed; then gc, show, report"
        local s; s=$(date +%s.%N)
        timeout "${TUNE_TIMEOUT:-3600}" "$BUILD/autotune" --device 0 --db "$db" 2>&1
        rc=$?
        echo "exit status $rc; wall $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $s }") s"
        ls -l "$db"*
        "$BUILD/autotune" gc --db "$db" --dry-run 2>&1
        "$BUILD/autotune" gc --db "$db" 2>&1
        ls -l "$db"*
        "$BUILD/autotune" show --db "$db" 2>&1
        "$BUILD/autotune" report --db "$db" -o "$out/report.html" 2>&1
        exit $rc
    ) > "$file" 2>&1
    rc=$?
    grep -E "^done|exit status|gc|before|after" "$file" | tail -8
    echo "saved $file"
    return $rc
}

calls() {       # NAME LABEL [DB]: bench_calls on a copy of DB (none: a fresh database), the
                # vendor candidate off, then on: OUTDIR/DATE-GPU-calls-NAME.txt (+ .tsv of each call)
    local name=$1 label=$2 src=${3:-} file="$out/$day-$gpu_short-calls-$1.txt" rc=0 v
    (
        header "bench_calls: ${CALLS_N:-200} random GEMM calls against cuBLAS in one process, $label"
        for v in off on; do
            rm -f "$out/calls.db" "$out/calls.db-wal" "$out/calls.db-shm"
            [ -n "$src" ] && cp "$src" "$out/calls.db"
            COMMIT=$commit "$BUILD/bench/bench_calls" --db "$out/calls.db" --calls "${CALLS_N:-200}" \
                --seed "${CALLS_SEED:-1}" --label "$label, vendor candidate $v" --vendor "$v" \
                --tsv "$out/$day-$gpu_short-calls-$name-vendor-$v.tsv" 2>&1 || rc=1
            echo
        done
        exit $rc
    ) > "$file" 2>&1
    rc=$?
    grep -E "^# (state|summary|type|bf16|fp16|tf32|fp32|fp64|all|short)" "$file"
    echo "saved $file"
    return $rc
}

named_shapes="${NAMED_SHAPES:-bench/shapes/layouts.txt}"

named() {       # NAME LABEL [DB]: bench_calls on the calls of $named_shapes with the sum's
                # bandwidth, on a copy of DB (none: a fresh database), the vendor candidate off:
                # OUTDIR/DATE-GPU-named-NAME.txt (+ .tsv of each call)
    local name=$1 label=$2 src=${3:-} file="$out/$day-$gpu_short-named-$1.txt" rc db="$out/named-run.db"
    (
        header "bench_calls --shapes $named_shapes --bandwidth: named GEMM calls against cuBLAS in one process, $label"
        rm -f "$db" "$db-wal" "$db-shm"
        [ -n "$src" ] && cp "$src" "$db"
        COMMIT=$commit "$BUILD/bench/bench_calls" --shapes "$named_shapes" --bandwidth --db "$db" \
            --seed "${CALLS_SEED:-1}" --label "$label, vendor candidate off" --vendor off \
            --tsv "$out/$day-$gpu_short-named-$name.tsv" 2>&1
        rc=$?
        rm -f "$db" "$db-wal" "$db-shm"
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
        echo "exit status $rc; wall $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $s }") s"
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

families="matmul tcgemm dgemm bgemm reduce dreduce jacobi trial"
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
    calls default-run "after the default run" "$out/default.db" || status=1
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
    if [ -n "${CALLS_DB:-}" ]; then
        calls tuned "the database $CALLS_DB" "$CALLS_DB" || status=1
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
build)
    build all "$BUILD/run_tests" bench-build || status=1 ;;
*)
    echo "bench/run.sh: unknown step '$step' (matmul tcgemm dgemm bgemm reduce dreduce jacobi trial all default-run calls named gpu-tier tests build)" >&2
    exit 2 ;;
esac
exit $status
