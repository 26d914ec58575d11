#!/usr/bin/env bash
# bench/gpu_session.sh: what one visit to a GPU machine runs, in steps chosen by
# name: build, tests (both tiers), gputests (the GPU tier only, within
# GPU_TESTS_TIMEOUT seconds), tune (the default `autotune --device 0`, timed,
# then gc and the report), trial (bench_trial on the tuned database), bench
# (make bench's tuning and benchmarks); logs under OUTDIR. BUILD_TARGETS
# narrows the build; TUNE_DB puts the tuned database outside OUTDIR.
# Usage: [COMMIT=hash] bench/gpu_session.sh OUTDIR STEP...  (SQLite from .dev/ if
# present; COMMIT names the tree sent where the copy has no current git data)
set -uo pipefail
out="${1:?usage: gpu_session.sh OUTDIR STEP...}"
shift
mkdir -p "$out"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ -d .dev/include ]; then
    export CPATH="$root/.dev/include${CPATH:+:$CPATH}"
    export LIBRARY_PATH="$root/.dev/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$root/.dev/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
toolkit="$(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)"
header() {
    echo "# $1"
    echo "# date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')  commit: ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    echo "# GPU: ${gpu:-unknown}  driver: ${driver:-unknown}  CUDA toolkit: ${toolkit:-unknown}"
}
status=0
for step in "$@"; do
    case "$step" in
    build)
        { header "build"; make -j"$(nproc)" ${BUILD_TARGETS:-all build/run_tests bench-build} 2>&1; } \
            > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
        ;;
    tests)
        { header "make test (CPU and GPU tiers)"; make test 2>&1; } > "$out/tests.log" 2>&1 \
            || status=1
        tail -3 "$out/tests.log"
        ;;
    gputests)
        { header "build/run_tests, GPU tier only"
          AUTOTUNE_TEST_TIER=gpu timeout "${GPU_TESTS_TIMEOUT:-900}" build/run_tests 2>&1
          echo "exit status $?"; } > "$out/gputests.log" 2>&1
        grep -E "FAIL|passed, " "$out/gputests.log" | tail -12
        grep -q "^0 failed\|, 0 failed" "$out/gputests.log" || status=1
        ;;
    trial)
        { header "bench_trial on the default run's database"
          timeout "${TRIAL_TIMEOUT:-120}" build/bench/bench_trial "${TUNE_DB:-$out/default.db}" 2>&1
          echo "exit status $?"; } > "$out/trial.txt" 2>&1 || status=1
        tail -8 "$out/trial.txt"
        ;;
    tune)
        db="${TUNE_DB:-$out/default.db}"
        rm -f "$db" "$db-wal" "$db-shm"
        {
            header "autotune --device 0 (the default tuning run), then gc"
            start=$(date +%s.%N)
            timeout "${TUNE_TIMEOUT:-3600}" build/autotune --device 0 --db "$db" 2>&1
            echo "exit status $?; wall $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s"
            ls -l "$db"*
            build/autotune gc --db "$db" --dry-run 2>&1
            build/autotune gc --db "$db" 2>&1
            ls -l "$db"*
            build/autotune show --db "$db" 2>&1
            build/autotune report --db "$db" -o "$out/report.html" 2>&1
        } > "$out/tune.log" 2>&1 || status=1
        grep -E "^done|exit status|database|gc|before|after" "$out/tune.log" | tail -12
        ;;
    bench)
        BENCH_OUT="$out/bench.txt" BENCH_MATMUL_SHAPES="${BENCH_MATMUL_SHAPES-}" \
            BENCH_DEFAULT_TUNE="${BENCH_DEFAULT_TUNE:-0}" BENCH_ONLY="${BENCH_ONLY-bench_tcgemm}" \
            AUTOTUNE_DB="$out/bench.db" bash bench/run.sh build > "$out/bench.log" 2>&1 || status=1
        grep -E "geomean|x  |FAILED" "$out/bench.txt" | tail -40
        ;;
    *)
        echo "unknown step $step" >&2
        exit 2
        ;;
    esac
done
exit $status
