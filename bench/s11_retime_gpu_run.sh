#!/usr/bin/env bash
# bench/s11_retime_gpu_run.sh: session 11, the sustained re-timing (issue 16), one H200 call.
# Build; the GPU tests of the tuner's real worker and the runtime API; DGEMM 4096^3 and FP64
# bgemm 64^3 x 8192 tuned into fresh databases (their "sustained re-timing" lines say which
# configuration won short and sustained); the re-timed configurations beside cuBLAS in
# alternating paired rounds (bench_dgemm's and bench_bgemm's sweeps) and through the lookup
# (bench_dgemm / bench_bgemm on the tuned database); then the default run into a fresh
# database with what time is left. Every log under $OUT. DEADLINE=seconds (default 285).
set -uo pipefail
OUT="${OUT:-/tmp/out}"
export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib
export LD_LIBRARY_PATH=$PWD/../../.dev/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T0=$(date +%s)
DL=${DEADLINE:-285}
left() { echo $(( DL - ($(date +%s) - T0) )); }
step() { echo "$1 rc $2 $(( $(date +%s) - $3 )) s (elapsed $(( $(date +%s) - T0 )) s)" | tee -a "$OUT/steps.txt"; }
{ date -u; nvidia-smi; nvcc --version; git log --oneline -1 2>/dev/null; } > "$OUT/env.txt" 2>&1
t0=$(date +%s)
timeout 100 make -j16 all build/run_tests build/bench/bench_dgemm build/bench/bench_bgemm \
    > "$OUT/build.log" 2>&1
step build $? $t0
# the re-timed rows of one kernel in db (short order), and their configurations joined by ';'
retimed() {
    python3 - "$1" "$2" "$3" <<'EOF'
import sqlite3, sys
db, kernel, what = sys.argv[1], sys.argv[2], sys.argv[3]
c = sqlite3.connect(db)
rows = c.execute("SELECT r.config, r.time_ms, r.sustained_ms, r.rank_ms FROM result r "
                 "JOIN kernel k ON k.id = r.kernel_id WHERE k.name = ? AND r.status = 'ok' "
                 "ORDER BY r.time_ms LIMIT 6", (kernel,)).fetchall()
if what == "table":
    for cfg, t, s, rk in rows:
        print("  short %.4f ms  sustained %s  rank %s  %s" % (t, "%.4f" % s if s else "-",
              "%.4f" % rk if rk else "-", cfg))
else:
    sel = list(dict.fromkeys([r[0] for r in rows if r[3]] or [r[0] for r in rows[:2]]))
    print(";".join(sel))
EOF
}
t0=$(date +%s)
for t in tuner_gpu api_; do
    echo "## AUTOTUNE_TEST_TIER=gpu build/run_tests $t" >> "$OUT/tests.log"
    AUTOTUNE_SKIP_COMPILE_ALL=1 AUTOTUNE_TEST_TIER=gpu timeout 45 build/run_tests "$t" \
        >> "$OUT/tests.log" 2>&1
    echo "## rc $?" >> "$OUT/tests.log"
done
step gpu_tests 0 $t0
grep -E "passed|FAIL" "$OUT/tests.log"
DB=/tmp/s11.db
rm -f $DB $DB-wal $DB-shm
t0=$(date +%s)
timeout 40 build/autotune --device 0 --db $DB --kernel dgemm --size 4096x4096x4096:f64 \
    > "$OUT/tune_dgemm.log" 2>&1
step tune_dgemm $? $t0
grep -E "^  best|sustained" "$OUT/tune_dgemm.log"
retimed $DB dgemm table | tee "$OUT/retimed_dgemm.txt"
t0=$(date +%s)
timeout 45 build/autotune --device 0 --db $DB --kernel bgemm --size 64x64x64:f64:b8192 \
    --budget 15 > "$OUT/tune_bgemm.log" 2>&1
step tune_bgemm $? $t0
grep -E "^  best|sustained" "$OUT/tune_bgemm.log"
retimed $DB bgemm table | tee "$OUT/retimed_bgemm.txt"
build/autotune show --db $DB > "$OUT/show.log" 2>&1
t0=$(date +%s)
BENCH_DGEMM_SWEEP_ROUNDS=5 BENCH_DGEMM_SWEEP="$(retimed $DB dgemm list)" \
    BENCH_DGEMM_SWEEP_SHAPES="4096x4096x4096" timeout 45 build/bench/bench_dgemm \
    > "$OUT/sweep_dgemm.log" 2>&1
step sweep_dgemm $? $t0
grep -E "^sweep|^  " "$OUT/sweep_dgemm.log" | cut -c1-300
t0=$(date +%s)
BENCH_BGEMM_SWEEP="$(retimed $DB bgemm list)" BENCH_BGEMM_SWEEP_SHAPES="64x64x64:f64:b8192" \
    timeout 35 build/bench/bench_bgemm > "$OUT/sweep_bgemm.log" 2>&1
step sweep_bgemm $? $t0
grep -E "^sweep|^  " "$OUT/sweep_bgemm.log" | cut -c1-300
t0=$(date +%s)
BENCH_BGEMM_TYPES=f64 BENCH_BGEMM_MAX_DIM=64 timeout 25 build/bench/bench_bgemm $DB \
    > "$OUT/bench_bgemm.log" 2>&1
step bench_bgemm $? $t0
grep -E "x[0-9]+ " "$OUT/bench_bgemm.log" | cut -c1-250
cp $DB "$OUT/s11-retime.db" 2>/dev/null
if [ "$(left)" -gt 60 ]; then
    t0=$(date +%s)
    rm -f /tmp/def.db /tmp/def.db-wal /tmp/def.db-shm
    timeout $(( $(left) - 3 )) build/autotune --device 0 --db /tmp/def.db --quiet \
        > "$OUT/default_run.log" 2>&1
    step default_run $? $t0
    grep -E "sustained|^done" "$OUT/default_run.log" | cut -c1-260
fi
step all 0 $T0
